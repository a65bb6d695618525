"""Writing every report: ``itemscore score --out`` against the same command without ``--out``.

On the QA files of ``../shared/bench/gen_data.py`` (100k and 1M lines, written to
``benchmarks/data/``, git-ignored, made when missing):

1. ``itemscore score FILE -m exact_match -m token_f1 -m answered_rate -q`` with and without
   ``--out DIR`` (every built-in report), alternated in fresh processes: the median ratio,
   the seconds per 100k lines (linear when equal across sizes), and the peak memory of each
   command (its largest resident set, child processes included) against the file's size;
2. in one process on the 100k run, each report format written alone (seconds and µs per item).

Sizes from ``ITEMSCORE_BENCH_REPORT_SIZES`` (default ``100k,1m``). Nothing is asserted.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _data import qa_file

SIZES = os.environ.get("ITEMSCORE_BENCH_REPORT_SIZES", "100k,1m").split(",")
METRICS = ("exact_match", "token_f1", "answered_rate")


def data_file(size: str) -> Path:
    return qa_file(size)


def timed(command: list[str]) -> tuple[float, int]:
    """Seconds and peak resident bytes of ``command`` (the largest of it and its children)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"bench_reports: {command} exited with {process.returncode}")
    return elapsed, usage.ru_maxrss * 1024  # kibibytes on Linux


def cli_ratio(path: Path, repeats: int) -> None:
    script = str(Path(sys.executable).parent / "itemscore")
    base = [script, "score", str(path), *(a for m in METRICS for a in ("-m", m)), "-q"]
    plain, with_out = [], []
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(repeats):
            plain.append(timed(base))
            with_out.append(timed([*base, "--out", folder]))
        size = sum(f.stat().st_size for f in Path(folder).glob("*") if f.exists())
    ratios = [b[0] / a[0] for a, b in zip(plain, with_out)]
    file_size = path.stat().st_size
    lines = sum(1 for _ in path.open("rb"))
    a = statistics.median(t for t, _ in plain)
    b = statistics.median(t for t, _ in with_out)
    print(
        f"{path.name}: without --out {a:.1f} s, with --out {b:.1f} s, ratio "
        f"{statistics.median(ratios):.2f}x (median of {repeats}; reports {size / 2**20:.0f} MiB)"
    )
    print(f"  per 100k lines: {a / lines * 1e5:.2f} s without, {b / lines * 1e5:.2f} s with --out")
    for name, runs in (("without --out", plain), ("with --out", with_out)):
        peak = max(p for _, p in runs)
        print(
            f"  peak memory {name}: {peak / 2**20:.0f} MiB = {peak / file_size:.2f}x the "
            f"file ({file_size / 2**20:.0f} MiB)"
        )


def per_format(path: Path) -> None:
    import itemscore
    from itemscore.reports import BUILTIN, export

    items = itemscore.read_items(path)
    result = itemscore.score(items, list(METRICS))
    list(result.items)  # build the item records once, as the first report would
    n = len(items)
    folder = Path(tempfile.mkdtemp())
    try:
        for fmt in BUILTIN:
            names = ["items", "json"] if fmt.name == "json" else [fmt.name]
            start = time.perf_counter()
            export(result, folder / fmt.name, names)
            elapsed = time.perf_counter() - start
            note = " (with items.parquet, which it refers to)" if fmt.name == "json" else ""
            print(f"  {fmt.filename:<13} {elapsed:6.2f} s  {elapsed / n * 1e6:5.1f} µs/item{note}")
    finally:
        shutil.rmtree(folder)


def main() -> None:
    for size in SIZES:
        path = data_file(size)
        cli_ratio(path, repeats=3 if size != "1m" else 1)
    print("each format alone, in one process, 100k items:")
    per_format(data_file("100k"))


if __name__ == "__main__":
    main()
