"""The framework's own cost: ``score(items, ["answered_rate"])`` against a plain loop."""

from __future__ import annotations

import time
from collections.abc import Callable

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


def main() -> None:
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
