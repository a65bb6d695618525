"""Each built-in report writer alone: µs per item at 100k and 1M items, and peak memory.

One run is scored per size with :func:`itemscore.score` (exact_match, token_f1,
answered_rate) on the QA files of ``../shared/bench/gen_data.py`` (made when missing, see
:mod:`bench_reports`); then each writer's ``write(result, path)`` is timed on it, the
formats interleaved and repeated, and the median kept. ``results.json`` is timed with the
``items.parquet`` it refers to already written, so its figure is its own cost. The growth of
each writer's resident memory (``ru_maxrss`` of a forked child that writes only that file)
is shown beside it: a flat writer adds little whatever the size. ``results.xlsx`` is timed
twice on runs above its item limit: with every item (``--report xlsx``) and as the default
set writes it (``results.xlsx ≤5k``: the first :data:`~itemscore.reports.results_xlsx.ITEM_LIMIT`
items).

Sizes from ``ITEMSCORE_BENCH_REPORT_SIZES`` (default ``100k,1m``), repeats from
``ITEMSCORE_BENCH_WRITER_REPEATS`` (default 3). Nothing is asserted.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_reports import METRICS, SIZES, data_file

REPEATS = int(os.environ.get("ITEMSCORE_BENCH_WRITER_REPEATS", "3"))


Writer = tuple[str, str, Callable[..., None], tuple[Any, ...], dict[str, Any]]


def _writers(n_items: int) -> list[Writer]:
    """(shown name, file name, write, extra arguments, keywords) of every built-in writer."""
    from itemscore.reports import BUILTIN, results_xlsx

    out: list[Writer] = []
    for fmt in BUILTIN:
        extra: tuple[Any, ...] = (["items.parquet", "results.json"],) if fmt.name == "json" else ()
        out.append((fmt.filename, fmt.filename, fmt.writer(), extra, {}))
    # items.parquet first: results.json refers to it.
    out.sort(key=lambda entry: entry[0] != "items.parquet")
    limit = results_xlsx.item_limit(explicit=False, n_items=n_items)
    if limit is not None:  # what the default set writes; the line above is --report xlsx
        shown = f"results.xlsx ≤{limit // 1000}k"
        out.append((shown, "default.xlsx", results_xlsx.write, (), {"max_items": limit}))
    return out


def _in_child(
    write: Callable[..., None], args: tuple[Any, ...], keywords: dict[str, Any]
) -> tuple[float, int]:
    """Seconds and peak resident KiB growth of ``write(*args, **keywords)`` in a fork."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover
        os.close(read_end)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        start = time.perf_counter()
        write(*args, **keywords)
        elapsed = time.perf_counter() - start
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        os.write(write_end, f"{elapsed} {grown}".encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        text = pipe.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not text:
        raise SystemExit(f"bench_writers: writing with {write} failed (status {status})")
    seconds, grown = text.split()
    return float(seconds), int(grown)


def per_writer(size: str) -> None:
    import itemscore

    path = data_file(size)
    result = itemscore.score(itemscore.read_items(path), list(METRICS))
    n = len(result.items)
    folder = Path(tempfile.mkdtemp())
    writers = _writers(n)
    times: dict[str, list[float]] = {name: [] for name, *_ in writers}
    memory: dict[str, int] = {}
    try:
        for _ in range(REPEATS):
            for name, filename, write, extra, keywords in writers:
                seconds, grown = _in_child(write, (result, folder / filename, *extra), keywords)
                times[name].append(seconds)
                memory[name] = max(memory.get(name, 0), grown)
        load = os.getloadavg()[0]
        print(f"{path.name}: {n} items, median of {REPEATS}, load {load:.2f}")
        for name, filename, *_ in writers:
            seconds = statistics.median(times[name])
            size_mib = (folder / filename).stat().st_size / 2**20
            print(
                f"  {name:<17} {seconds:7.2f} s  {seconds / n * 1e6:6.2f} µs/item  "
                f"+{memory[name] / 1024:6.0f} MiB peak  {size_mib:6.0f} MiB file"
            )
    finally:
        shutil.rmtree(folder)


def main() -> None:
    for size in SIZES:
        per_writer(size)


if __name__ == "__main__":
    main()
