"""The framework's own cost, and what the executors buy.

1. ``score(items, ["answered_rate"])`` against a plain loop.
2. A metric costing about 1 ms of CPU per item on 20k items: the process pool with 2 workers
   against 1 worker (target: at least 1.7x faster), and a 2-worker Dask ``LocalCluster``
   against the 2-process pool (target: within 1.3x), as paired medians. Every run must give
   the numbers of a plain loop over the items.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import itemscore

N_ITEMS = 100_000


def best_of(fn: Callable[[], object], repeat: int = 5) -> float:
    """The fastest of ``repeat`` runs, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def make_items(n: int = N_ITEMS) -> list[itemscore.ItemResult]:
    """Items with every seventh request failed."""
    return [
        itemscore.ItemResult(id=str(i), output=None if i % 7 == 0 else f"answer {i}")
        for i in range(n)
    ]


N_BUSY = 20_000


def _median_times(fns: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(ts) for name, ts in times.items()}


def bench_executors(rounds: int = 3) -> None:
    """1 ms/item on 20k items: 1 vs 2 process workers, and Dask vs the process pool."""
    here = str(Path(__file__).resolve().parent)
    # Dask's workers are fresh processes: they import the metric's module from here.
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))
    from _busy import Busy, _work, calibrate

    metric = Busy(rounds=calibrate())
    items = [itemscore.ItemResult(id=str(i), output=f"item {i}") for i in range(N_BUSY)]
    the_plan = itemscore.plan([metric])
    plain_ok = sum(_work(item.output or "", metric.rounds)[0] % 2 == 0 for item in items)
    want = plain_ok / len(items)
    runs: dict[str, Callable[[], Any]] = {
        "process x1": lambda: itemscore.score(items, the_plan, executor="process", workers=1),
        "process x2": lambda: itemscore.score(items, the_plan, executor="process", workers=2),
    }
    try:
        import distributed

        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address="127.0.0.1:0"
        )
        client = distributed.Client(cluster)
        # A running cluster, as a Dask user would have: startup is not part of a run.
        runs["dask x2"] = lambda: itemscore.score(items, the_plan, executor="dask", client=client)
    except ModuleNotFoundError:
        cluster = client = None
    try:
        for name, fn in runs.items():
            got = fn().measurements["default.busy"].value
            if got != want:
                raise AssertionError(f"{name}: {got!r} != plain loop {want!r}")
        times = _median_times(runs, rounds)
    finally:
        if client is not None:
            client.close()
            cluster.close()
    print(f"busy metric ({metric.rounds} SHA-256 rounds, ~1 ms/item) on {N_BUSY:,} items")
    for name, t in times.items():
        print(f"  {name:12s} {t:7.2f} s  {t / N_BUSY * 1e3:6.3f} ms/item")
    print(
        f"  2 workers vs 1: {times['process x1'] / times['process x2']:.2f}x faster "
        "(target >= 1.7x)"
    )
    if "dask x2" in times:
        print(
            f"  Dask LocalCluster x2 vs process x2: {times['dask x2'] / times['process x2']:.2f}x "
            "(target <= 1.3x)"
        )
    print(f"  (medians of {rounds} alternating rounds; cores here: {os.cpu_count()})")


def main() -> None:
    bench_answered_rate()
    if "--no-executors" not in sys.argv:
        bench_executors()


def bench_answered_rate() -> None:
    items = make_items()

    def plain() -> tuple[float, list[bool]]:
        # The same facts a run records: a per-item verdict and the share.
        verdicts = [item.output is not None for item in items]
        return sum(verdicts) / len(verdicts), verdicts

    def framework() -> float | None:
        result = itemscore.score(items, ["answered_rate"])
        return result.measurements["default.answered_rate"].value

    def framework_and_read() -> int:
        result = itemscore.score(items, ["answered_rate"])
        return sum(item.scores["answered_rate"].status == "ok" for item in result.items)

    share, _ = plain()
    assert framework() == share, "the two loops disagree"
    t_plain, t_score = best_of(plain), best_of(framework)
    t_read = best_of(framework_and_read)
    print(f"answered_rate over {N_ITEMS:,} items (best of 5)")
    print(f"  plain loop          {t_plain * 1e3:8.1f} ms  {t_plain / N_ITEMS * 1e6:6.2f} µs/item")
    print(f"  itemscore.score     {t_score * 1e3:8.1f} ms  {t_score / N_ITEMS * 1e6:6.2f} µs/item")
    print(f"  ratio               {t_score / t_plain:8.1f}x")
    print(
        f"  score + read items  {t_read * 1e3:8.1f} ms  {t_read / N_ITEMS * 1e6:6.2f} µs/item"
        f"  ({t_read / t_plain:.1f}x)"
    )
    print(
        "  (score checks every item and its id, isolates every call, validates each result,\n"
        "   counts the four states and computes a Wilson interval; the plain loop builds a\n"
        "   bool per item. Item records carrying the scores are built when first read.)"
    )


if __name__ == "__main__":
    main()
