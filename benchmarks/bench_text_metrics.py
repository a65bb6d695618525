"""bleu and rouge through ``itemscore.score`` against their reference implementations alone.

0. ``bleu`` on 100k sentence pairs (defaults: 13a tokenizer, 1000 bootstrap resamples for the
   interval) against ``sacrebleu.corpus_bleu`` on the same sentences (no interval).
1. ``rouge`` (rougeL, then rouge1) on 20k pairs against ``rouge_score.RougeScorer`` in a loop
   (``score`` of each pair).
2. A paired bootstrap of 1,000 resamples of BLEU on 10k sentences (``Bleu.paired_bootstrap``,
   what ``compare`` calls), and sacrebleu's paired bootstrap test (``Bleu.paired_bs``) on the
   same scores.

Each comparison runs both sides in one process, alternating, and prints the medians of the
runs. Run directly (``python benchmarks/bench_text_metrics.py``) or through
``benchmarks/run.py``. Needs the ``text`` extra (sacrebleu, rouge-score).
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from itemscore import ItemResult, MetricContext, plan, score

SEED = 20261201
VOCABULARY = (
    "the a cat dog sat on mat house river bank went to see it was very big small red blue "
    "quickly slowly man woman child home today yesterday said that and but not never always "
    "city north south king queen war peace empire bridge museum garden palace island"
)
WORDS = VOCABULARY.split()


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(8, 35))]
    return " ".join(words).capitalize() + rng.choice([".", "!", "?", ","])


def _pairs(n: int, seed: int) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    refs = [_sentence(rng) for _ in range(n)]
    hyps = []
    for ref in refs:
        words = ref.split()
        out = [w if rng.random() > 0.35 else rng.choice(WORDS) for w in words]
        hyps.append(" ".join(out))
    return refs, hyps


def _items(hyps: list[str], refs: list[str]) -> list[ItemResult]:
    return [ItemResult(id=str(i), output=h, expected=r) for i, (h, r) in enumerate(zip(hyps, refs))]


def _timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _paired(
    name_a: str, a: Callable[[], Any], name_b: str, b: Callable[[], Any], runs: int
) -> None:
    times_a, times_b = [], []
    for _ in range(runs):
        times_a.append(_timed(a))
        times_b.append(_timed(b))
    median_a, median_b = statistics.median(times_a), statistics.median(times_b)
    print(f"  {name_a:44} {median_a:8.2f} s  (runs: {', '.join(f'{t:.2f}' for t in times_a)})")
    print(f"  {name_b:44} {median_b:8.2f} s  (runs: {', '.join(f'{t:.2f}' for t in times_b)})")
    print(f"  ratio {median_a / median_b:.2f}x")


def bench_bleu(n: int = 100_000, runs: int = 3) -> None:
    import sacrebleu

    refs, hyps = _pairs(n, SEED)
    items = _items(hyps, refs)
    check = score(items[:2000], ["bleu"]).measurements["default.bleu"].value
    assert check == sacrebleu.corpus_bleu(hyps[:2000], [refs[:2000]]).score
    print(f"bleu on {n:,} sentence pairs")
    _paired(
        "itemscore.score(items, ['bleu'])",
        lambda: score(items, ["bleu"]),
        "sacrebleu.corpus_bleu(hyps, [refs])",
        lambda: sacrebleu.corpus_bleu(hyps, [refs]),
        runs,
    )


def bench_rouge(n: int = 20_000, runs: int = 3, rouge_type: str = "rougeL") -> None:
    from rouge_score import rouge_scorer

    refs, hyps = _pairs(n, SEED + 1)
    items = _items(hyps, refs)
    spec = {"name": "rouge", "rouge_type": rouge_type}

    def loop() -> list[float]:
        scorer = rouge_scorer.RougeScorer([rouge_type])
        return [scorer.score(r, h)[rouge_type].fmeasure for r, h in zip(refs, hyps)]

    print(f"rouge ({rouge_type}) on {n:,} pairs")
    _paired(
        f"itemscore.score(items, [rouge {rouge_type}])",
        lambda: score(items, [spec]),
        f"RougeScorer(['{rouge_type}']).score in a loop",
        loop,
        runs,
    )


def bench_paired_bootstrap(n: int = 10_000, runs: int = 3) -> None:
    refs, hyps_a = _pairs(n, SEED + 2)
    _, hyps_b = _pairs(n, SEED + 3)
    spec = {"name": "bleu", "n_bootstrap": 1}
    a = [i.scores["bleu"] for i in score(_items(hyps_a, refs), [spec]).items]
    b = [i.scores["bleu"] for i in score(_items(hyps_b, refs), [spec]).items]
    metric: Any = plan([spec]).metrics[0].metric
    ctx = MetricContext(seed=12345)
    print(f"paired bootstrap, 1,000 resamples, BLEU on {n:,} sentences")
    _paired(
        "Bleu.paired_bootstrap (what compare calls)",
        lambda: metric.paired_bootstrap(a, b, ctx, n_resamples=1000),
        "Bleu.paired_bs (sacrebleu's --paired-bs)",
        lambda: metric.paired_bs(a, b, ctx, n_resamples=1000),
        runs,
    )


def main() -> None:
    """Run the benchmarks and print their figures."""
    bench_paired_bootstrap()
    bench_rouge(rouge_type="rougeL")
    bench_rouge(rouge_type="rouge1")
    bench_bleu()


if __name__ == "__main__":
    main()
