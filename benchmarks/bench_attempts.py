"""What reducing attempts costs: 1M attempts (100k questions x 10), 3 metrics, 4 reducers.

The same outputs are scored twice, in alternating order: once as 1M independent items (the run as it
was before attempts), once as 10 attempts at each of 100k questions reduced by ``mean``,
``pass@1``, ``pass@5`` and ``maj@5``. The figure is the median of the paired ratios of the
whole ``score`` call (target: at most 1.2, i.e. at most 20% more), with the time of building
the measurements alone beside it.

Run: ``python benchmarks/bench_attempts.py [QUESTIONS] [ROUNDS]``.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from typing import Any

import numpy as np

import itemscore

METRICS = ["exact_match", "token_f1", "answered_rate"]
REDUCE = ["mean", "pass@1", "pass@5", "maj@5"]
ATTEMPTS = 10


def make_items(questions: int, seed: int = 0) -> tuple[list[Any], list[Any]]:
    """The same outputs as independent items and as attempts: ``(plain, attempts)``.

    Each question has a right answer and two wrong ones; each attempt gives the right one with
    the question's own chance (uniform), else a wrong one, now and then with other case or
    punctuation, and about 2% of the requests fail.
    """
    rng = np.random.default_rng(seed)
    chance = rng.random(questions)
    draws = rng.random((questions, ATTEMPTS))
    wrong = rng.integers(0, 2, (questions, ATTEMPTS))
    styled = rng.random((questions, ATTEMPTS)) < 0.2
    failed = rng.random((questions, ATTEMPTS)) < 0.02
    plain: list[Any] = []
    attempts: list[Any] = []
    for q in range(questions):
        right = f"answer {q % 5000}"
        expected = (right,)
        for j in range(ATTEMPTS):
            if failed[q, j]:
                output = None
            else:
                text = right if draws[q, j] < chance[q] else f"wrong {wrong[q, j]} {q % 997}"
                output = text.upper() + "." if styled[q, j] else text
            plain.append(itemscore.ItemResult(id=f"{q}.{j}", output=output, expected=expected))
            attempts.append(
                itemscore.ItemResult(id=str(q), output=output, expected=expected, attempt=j)
            )
    return plain, attempts


def timed(items: list[Any], reduce: list[str] | None) -> tuple[float, Any]:
    gc.collect()  # the previous run's garbage is not this one's cost
    start = time.perf_counter()
    result = itemscore.score(items, METRICS, reduce=reduce)
    return time.perf_counter() - start, result


def measure_time(result: Any) -> float:
    """Seconds to build the measurements again from the run table (reduction included)."""
    from itemscore._plan import plan
    from itemscore.engine._measure import measure_all

    the_plan = plan(METRICS)
    start = time.perf_counter()
    measure_all(the_plan, result.table, result.settings, {})
    return time.perf_counter() - start


def main(questions: int = 100_000, rounds: int = 3) -> None:
    plain, attempts = make_items(questions)
    print(f"{len(attempts):,} attempts ({questions:,} questions x {ATTEMPTS}), metrics "
          f"{', '.join(METRICS)}, reducers {', '.join(REDUCE)}")  # fmt: skip
    ratios, base_times, reduced_times = [], [], []
    result = None
    for round_ in range(rounds):
        # Alternate which goes first: caches warmed by one run must not favour the other.
        if round_ % 2 == 0:
            base, _ = timed(plain, None)
            reduced, result = timed(attempts, REDUCE)
        else:
            reduced, result = timed(attempts, REDUCE)
            base, _ = timed(plain, None)
        ratios.append(reduced / base)
        base_times.append(base)
        reduced_times.append(reduced)
        print(f"  as items {base:7.2f} s   as attempts, 4 reducers {reduced:7.2f} s   "
              f"ratio {reduced / base:.3f}")  # fmt: skip
    assert result is not None
    measuring = measure_time(result)
    print(
        f"median: as items {statistics.median(base_times):.2f} s, as attempts "
        f"{statistics.median(reduced_times):.2f} s; paired ratio {statistics.median(ratios):.3f} "
        f"(target <= 1.20); building the {len(result.measurements)} measurements alone: "
        f"{measuring:.2f} s"
    )


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    main(*args)
