"""Reading a large JSON lines file: peak memory and time, all at once and streamed.

On the 1M-line QA file of ``../shared/bench/gen_data.py`` (written to ``benchmarks/data/``,
git-ignored, made when missing), each measured in a fresh process:

1. ``json.loads`` of every line into a list: the floor a user's own loop pays;
2. ``itemscore.read_items``: every item in memory at the end;
3. ``itemscore.inputs.iter_items``: chunks of 10,000 items, each dropped after use.

Peak memory is the process's maximum resident set size (``ru_maxrss``), less that of a process
that only imported itemscore. Nothing is asserted: machines are noisy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from _data import qa_file

SIZE = os.environ.get("ITEMSCORE_BENCH_INPUT_SIZE", "1m")

_PROBE = """
import json, resource, sys, time
import itemscore
from itemscore.inputs import iter_items
path, how = sys.argv[1], sys.argv[2]
start = time.perf_counter()
n = 0
if how == "json.loads":
    with open(path, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    n = len(rows)
elif how == "read_items":
    items = itemscore.read_items(path)
    n = len(items)
elif how == "iter_items":
    for chunk in iter_items(path):
        n += len(chunk)
elapsed = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"n": n, "seconds": elapsed, "peak_mib": peak}))
"""


def data_file() -> Path:
    return qa_file(SIZE)


def probe(path: Path, how: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, str(path), how],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result: dict[str, float] = json.loads(out)
    return result


def main() -> None:
    path = data_file()
    size_mib = path.stat().st_size / 2**20
    base = probe(path, "none")["peak_mib"]
    print(f"file: {path.name}, {size_mib:.0f} MiB; a process importing itemscore: {base:.0f} MiB")
    for how in ("json.loads", "read_items", "iter_items"):
        got = probe(path, how)
        extra = got["peak_mib"] - base
        print(
            f"{how:>11}: {got['n']:,.0f} rows in {got['seconds']:.1f} s, peak "
            f"{got['peak_mib']:.0f} MiB (+{extra:.0f} MiB, {extra / size_mib:.2f}x the file)"
        )


if __name__ == "__main__":
    main()
