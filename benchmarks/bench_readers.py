"""Reading the 1M-line QA file into canonical Arrow batches, against a ``json.loads`` loop.

On ``benchmarks/data/qa-SIZE.jsonl`` (``../shared/bench/gen_data.py``, made when missing;
``ITEMSCORE_BENCH_READERS_SIZE``, default ``1m``), in one process, paired and alternating:

1. ``json.loads`` of every line, nothing kept: the floor of any Python reader;
2. ``open_source`` -> ``read_part(source.whole()).batches()`` -> the whole-source checks
   (unique ids, an answer key, any rows): what a run reads. Target: at most 2x (1);
3. the same through the row path only (pyarrow's JSON reader off), for information: what a
   file whose columns mix types costs;
4. ``batch_to_items`` over every batch of the file: microseconds per item (target: 1.5), next
   to a plain loop that sets each item's slots from the columns as lists (the reference).

Each figure is the median of ``ITEMSCORE_BENCH_READERS_ROUNDS`` rounds (default 5), with the
spread (lowest and highest) and the ratio of each pair, in wall time and in CPU time (the
process's own, steadier on a shared machine). Nothing is asserted: machines are noisy.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _data import qa_file

SIZE = os.environ.get("ITEMSCORE_BENCH_READERS_SIZE", "1m")
ROUNDS = int(os.environ.get("ITEMSCORE_BENCH_READERS_ROUNDS", "5"))


def loads_loop(path: Path) -> int:
    """``json.loads`` every line of the file; keep nothing."""
    loads = json.loads
    n = 0
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            loads(line)
            n += 1
    return n


def read_batches(path: Path) -> int:
    """Read the file into canonical batches, with every whole-source check."""
    from itemscore.inputs import open_source, read_part

    n = 0
    with open_source(path) as source:
        reader = read_part(source.whole())
        for batch in reader.batches():
            n += batch.num_rows
        checks = source.checks()
        checks.add(reader.keys())
        checks.finish(needing=["exact_match"])
    return n


def read_rows_only(path: Path) -> int:
    """The same, with pyarrow's JSON reader switched off: every line by ``json``."""
    from itemscore.inputs import jsonl

    jsonl.ARROW = False
    try:
        return read_batches(path)
    finally:
        jsonl.ARROW = True


def _spread(values: list[float]) -> str:
    return f"median {statistics.median(values):.2f} (min {min(values):.2f}, max {max(values):.2f})"


def _paired(fns: dict[str, Callable[[], Any]], rounds: int) -> dict[str, list[tuple[float, float]]]:
    """``(wall, CPU)`` seconds of each function, ``rounds`` times, alternating."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            gc.collect()
            wall, cpu = time.perf_counter(), time.process_time()
            fn()
            times[name].append((time.perf_counter() - wall, time.process_time() - cpu))
    return times


def bench_read(path: Path) -> None:
    fns = {
        "json.loads loop": lambda: loads_loop(path),
        "batches + checks": lambda: read_batches(path),
        "row path only": lambda: read_rows_only(path),
    }
    fns["json.loads loop"]()  # the file into the page cache
    times = _paired(fns, ROUNDS)
    base = times["json.loads loop"]
    for name, values in times.items():
        print(
            f"{name:>17}: wall {_spread([w for w, _ in values])} s; "
            f"CPU {_spread([c for _, c in values])} s"
        )
    for name in ("batches + checks", "row path only"):
        for kind, at in (("wall", 0), ("CPU", 1)):
            ratios = [t[at] / b[at] for t, b in zip(times[name], base)]
            print(
                f"{name:>17} / json.loads ({kind}): median {statistics.median(ratios):.2f}x "
                f"(min {min(ratios):.2f}, max {max(ratios):.2f})"
            )
    print("  (target for batches + checks: at most 2x)")


def plain_items(batch: Any) -> list[Any]:
    """A reference: the batch's columns as lists, then one Python loop setting each item's
    slots unchecked (how unpickling, and the packed items before, built items)."""
    from itemscore import ItemResult
    from itemscore._records import EMPTY, _freeze_metadata

    names = batch.schema.names
    columns = [
        batch.column(name).to_pylist() if name in names else [None] * batch.num_rows
        for name in ("id", "output", "expected", "input", "group", "model", "cluster", "attempt")
    ]
    metadata = (
        batch.column("metadata").to_pylist() if "metadata" in names else [None] * len(columns[0])
    )
    new, put = object.__new__, object.__setattr__
    out = []
    for (ident, output, expected, text, group, model, cluster, attempt), meta in zip(
        zip(*columns), metadata
    ):
        item = new(ItemResult)
        put(item, "id", ident)
        put(item, "output", output)
        put(item, "expected", None if expected is None else tuple(expected))
        put(item, "input", text)
        put(item, "group", group)
        put(item, "model", model)
        put(item, "cluster", cluster)
        put(item, "attempt", attempt)
        put(item, "metadata", _freeze_metadata(meta) if meta else EMPTY)
        put(item, "scores", EMPTY)
        out.append(item)
    return out


def bench_items(path: Path) -> None:
    from itemscore._schema import batch_to_items
    from itemscore.inputs import open_source, read_part

    with open_source(path) as source:
        batches = list(read_part(source.whole()).batches())
    n = sum(batch.num_rows for batch in batches)
    for paused in (False, True):
        per_item: dict[str, list[float]] = {"batch_to_items": [], "plain loop": []}
        for _ in range(ROUNDS):
            for name, build in (("batch_to_items", batch_to_items), ("plain loop", plain_items)):
                gc.collect()
                if paused:
                    gc.disable()  # as iter_items does while it builds records
                start = time.process_time()
                for batch in batches:
                    build(batch)  # each batch's items dropped, as a run drops them
                per_item[name].append((time.process_time() - start) / n * 1e6)
                gc.enable()
        how = "collector paused" if paused else "collector on"
        ratios = [a / b for a, b in zip(per_item["batch_to_items"], per_item["plain loop"])]
        print(
            f"batch_to_items ({how}, CPU): {_spread(per_item['batch_to_items'])} µs per item "
            f"over {n:,} items ({len(batches)} batches; target <= 1.5); a plain loop "
            f"{_spread(per_item['plain loop'])} µs; ratio median {statistics.median(ratios):.2f}"
        )


def main() -> None:
    path = qa_file(SIZE)
    print(f"file: {path.name}, {path.stat().st_size / 2**20:.0f} MiB, {ROUNDS} rounds")
    bench_read(path)
    bench_items(path)


if __name__ == "__main__":
    main()
