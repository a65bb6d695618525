"""The bold decision of the tables against the scoring of the same run, per metric kind.

Issue 21's target: deciding which values are bold (a significant lead by the paired test of
``compare``) takes at most the time of scoring the run. Two models answer the same
``ITEMSCORE_BENCH_BOLD_ITEMS`` questions (default 20,000), right at different rates: free-text
answers, and the same questions as a three-class task for f1. For each metric —
``exact_match`` (a ratio: exact McNemar), ``token_f1`` (a mean: paired t), ``cost`` (a
vectorised paired bootstrap of its values), ``f1`` (its own aggregate: a paired bootstrap),
``bleu`` (sacrebleu's paired bootstrap and approximate randomisation, with the ``text``
extra) — the run is scored with ``itemscore.score`` and its bold cells decided on the fresh
result (``bold_cells``, what every table asks). Medians of three rounds, and their ratio.
"""

from __future__ import annotations

import os
import random
import statistics
import time
from typing import Any

from itemscore import ItemResult, score
from itemscore.summary._summary import bold_cells

WORDS = tuple(f"w{i}" for i in range(40))  # a vocabulary: which words does not matter


def items(n: int) -> list[ItemResult]:
    """Two models, ``n`` shared questions; the second is right less often and costs more."""
    rng = random.Random(20261201)
    out = []
    for i in range(n):
        reference = " ".join(rng.choices(WORDS, k=8))
        label = ("positive", "negative", "neutral")[i % 3]
        for model, right in (("a", 0.8), ("b", 0.7)):
            hit = rng.random() < right
            output = reference if hit else " ".join(rng.choices(WORDS, k=8))
            metadata: dict[str, Any] = {"cost": rng.uniform(0.001, 0.002) * (1 + (model == "b"))}
            out.append(
                ItemResult(
                    id=f"q{i}",
                    model=model,
                    output=output,
                    expected=(reference,),
                    metadata={**metadata, "label": label, "said": label if hit else "neutral"},
                )
            )
    return out


def labelled(data: list[ItemResult]) -> list[ItemResult]:
    """The same questions as a three-class task (what f1 scores): labels said and expected."""
    return [
        ItemResult(
            id=i.id, model=i.model, output=i.metadata["said"], expected=(i.metadata["label"],)
        )
        for i in data
    ]


def measure(data: list[ItemResult], metric: Any, rounds: int = 3) -> tuple[float, float]:
    """Median seconds of scoring and of deciding the bold cells on the scored result."""
    scoring, bolding = [], []
    for _ in range(rounds):
        start = time.perf_counter()
        result = score(data, [metric])
        scoring.append(time.perf_counter() - start)
        start = time.perf_counter()
        bold_cells(result)
        bolding.append(time.perf_counter() - start)
    return statistics.median(scoring), statistics.median(bolding)


def main() -> None:
    n = int(os.environ.get("ITEMSCORE_BENCH_BOLD_ITEMS", "20000"))
    data = items(n)
    metrics: list[Any] = ["exact_match", "token_f1", "cost", {"name": "f1"}]
    try:
        import sacrebleu  # noqa: F401
    except ImportError:
        print("  (bleu left out: the text extra is not installed)")
    else:
        metrics.append("bleu")
    print(f"bold cells against scoring, 2 models x {n:,} questions (target: at most 1x)")
    for metric in metrics:
        name = metric if isinstance(metric, str) else metric["name"]
        scoring, bolding = measure(labelled(data) if name == "f1" else data, metric)
        print(
            f"  {name:12} scoring {scoring:6.2f} s   bold {bolding:6.2f} s   "
            f"ratio {bolding / scoring:.2f}x"
        )


if __name__ == "__main__":
    main()
