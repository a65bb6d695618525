"""Every executor gives the serial run's results to the bit, at a size where parts matter.

A 200k-line file (``benchmarks/data/executors-200k.jsonl``, made from the 1M-line QA file):
25,000 questions, two models, four attempts each, seven groups, clusters of eight questions;
the second model answers half its attempts with another question's answer. It is scored on the
command line with three metrics and two reducers (``mean``, ``pass@2``) by ``serial``,
``process``, ``dask``, ``ray`` and ``spark``, two workers each, every report written. For each
executor the section prints its wall time (start-up included) and whether every value of
results.json (``measurements``, ``by_model``) and every item and score of ``items.parquet``
(one file or a folder of parts) equals the serial run's. An executor whose extra is not
installed is left out, and says so.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _data import DATA, qa_file

ITEMSCORE = str(Path(sys.executable).with_name("itemscore"))
EXECUTORS = ("serial", "process", "dask", "ray", "spark")
EXTRAS = {"dask": "distributed", "ray": "ray", "spark": "pyspark"}
COMMAND = [
    "-m", "exact_match", "-m", "token_f1", "-m", "answered_rate",
    "--reduce", "mean,pass@2", "-q",
]  # fmt: skip
#: The parts of results.json that must not depend on who scored (settings name the executor).
SAME = ("measurements", "by_model")
QUESTIONS = 25_000


def executors_file() -> Path:
    """The 200k-line file of two models, four attempts, groups and clusters (made once)."""
    path = DATA / "executors-200k.jsonl"
    if path.exists():
        return path
    rows: list[dict[str, Any]] = []
    with open(qa_file("1m"), encoding="utf-8") as handle:
        for line in handle:
            rows.append(json.loads(line))
            if len(rows) == QUESTIONS:
                break
    with open(path.with_suffix(".tmp"), "w", encoding="utf-8") as out:
        for q, row in enumerate(rows):
            for model in ("a", "b"):
                for attempt in (1, 2, 3, 4):
                    output = row["output"]
                    if model == "b" and attempt % 2 == 0:
                        output = rows[(q * 7 + attempt) % QUESTIONS]["output"]
                    item = {
                        "id": row["id"],
                        "model": model,
                        "attempt": attempt,
                        "input": row["input"],
                        "output": output,
                        "expected": row.get("expected"),
                        "group": f"g{q % 7}",
                        "cluster": f"doc{q // 8}",
                    }
                    out.write(json.dumps(item, ensure_ascii=False) + "\n")
    path.with_suffix(".tmp").rename(path)
    return path


def _installed(executor: str) -> bool:
    module = EXTRAS.get(executor)
    if module is None:
        return True
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _score(path: Path, executor: str, out: Path) -> float:
    start = time.perf_counter()
    workers = [] if executor == "serial" else ["--workers", "2"]
    done = subprocess.run(
        [ITEMSCORE, "score", str(path), *COMMAND, "--executor", executor, *workers,
         "--out", str(out)],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"{executor} failed: {done.stderr[-2000:]}")
    return time.perf_counter() - start


def _saved(out: Path) -> tuple[dict[str, str], Any]:
    import pyarrow.parquet as pq

    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))
    values = {key: json.dumps(saved[key], sort_keys=True) for key in SAME}
    items = pq.read_table(out / "items.parquet")
    if not any(name.startswith("score:") for name in items.column_names):
        raise SystemExit(f"{out / 'items.parquet'} holds no score column")
    return values, items


def main() -> None:
    path = executors_file()
    print(f"{path.name}: {path.stat().st_size / 2**20:.0f} MiB, {QUESTIONS * 8:,} lines")
    with tempfile.TemporaryDirectory(prefix="itemscore-executors-") as folder:
        reference: tuple[dict[str, str], Any] | None = None
        for executor in EXECUTORS:
            if not _installed(executor):
                print(f"  {executor:8} left out: pip install 'itemscore[{executor}]'")
                continue
            out = Path(folder) / executor
            seconds = _score(path, executor, out)
            values, scores = _saved(out)
            if reference is None:
                reference = (values, scores)
                print(f"  {executor:8} {seconds:6.1f} s  (the reference)")
                continue
            differ = [key for key in SAME if values[key] != reference[0][key]]
            if not scores.equals(reference[1]):
                differ.append("items.parquet")
            verdict = "identical to the bit" if not differ else f"DIFFERS in {', '.join(differ)}"
            print(f"  {executor:8} {seconds:6.1f} s  {verdict}")


if __name__ == "__main__":
    main()
