"""``rouge``: ROUGE-1/2/L/Lsum of each output, through Google's ``rouge-score``, averaged."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from itemscore import (
    Estimate,
    ItemResult,
    ItemScore,
    Metric,
    MetricContext,
    OptionError,
    ScoreColumn,
)
from itemscore.metrics_builtin._comparison import FAILED_REASON, NO_ANSWER_KEY
from itemscore.metrics_builtin._extract import NO_ANSWER_FOUND, Pick, answer_extractor

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["Rouge"]

RougeType = Literal["rouge1", "rouge2", "rougeL", "rougeLsum"]
Measure = Literal["fmeasure", "precision", "recall"]
_MEASURES: tuple[Measure, ...] = ("precision", "recall", "fmeasure")
#: Resamples of the paired bootstrap in ``compare``.
N_PAIRED = 2000


def _import_rouge_scorer() -> Any:
    try:
        from rouge_score import rouge_scorer
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            "The rouge metric needs rouge-score (the `text` extra), which is not installed.",
            name="rouge_score",
        ) from exc
    return rouge_scorer


class Rouge(Metric):
    """ROUGE of each output against its best valid answer, as Google's ``rouge-score`` scores it.

    Each item's value is ``RougeScorer([rouge_type], use_stemmer=...)``'s ``measure`` (F by
    default) for the output: ``score(answer, output)``, or with several valid answers
    ``score_multi`` (the answer with the best F). ``extra`` holds ``precision``, ``recall`` and
    ``fmeasure``. Every answered item is ``ok`` (ROUGE is partial credit); a failed request is
    ``fail`` with 0.0 (``skip`` with ``count_failed=False``). rouge-score's tokenizer keeps only
    ASCII letters and digits (lower-cased): text in other scripts scores 0. ``rougeLsum`` reads
    newlines as sentence breaks, as rouge-score does.

    The headline number is the mean of the values over scored items. The interval is
    rouge-score's ``BootstrapAggregator`` (``n_samples`` resamples by numpy's legacy
    ``RandomState`` seeded with the run's seed, percentiles at the run's level): the same
    figures it gives after ``numpy.random.seed(seed)``. ``Measurement.extra`` has the means of
    ``precision``, ``recall``, ``fmeasure`` and the aggregator's ``<measure>_low``,
    ``<measure>_mid`` (the median of the resampled means, what tables made with rouge-score
    report as the score) and ``<measure>_high`` of each. Scale 0-1, as rouge-score's.
    ``rouge1``/``rouge2`` and ``rougeL`` count n-grams and find the longest common subsequence
    themselves (rouge-score's tokens and formulas, the same floats);
    ``rougeLsum`` is rouge-score's own ``score``.

    Requires the ``text`` extra (rouge-score).

    Args:
        rouge_type: `rouge1`, `rouge2` (n-gram overlap), `rougeL` (longest common
            subsequence) or `rougeLsum` (LCS over newline-separated sentences).
        use_stemmer: Apply the Porter stemmer to words of more than three letters.
        measure: Which of precision, recall and F-measure is each item's value.
        n_samples: Resamples of rouge-score's bootstrap aggregator (the interval).
        count_failed: Score failed requests as 0. `false` leaves them out.
        extract: Score only the answer found in the output: a regex (its group is the
            answer), or a preset `answer_is`, `boxed`, `last_number`; an output without one
            is `fail` with the reason "no answer found".
        extract_pick: Which match of `extract` counts, `first` or `last`; none: `first` for a
            regex, `last` for a preset.
    """

    metric_id = "rouge"
    display_name = "ROUGE"
    description = (
        "ROUGE-1/2/L/Lsum precision, recall or F of each output (Google's rouge-score), "
        "averaged; needs the text extra."
    )
    required_inputs = ("expected",)
    reproducibility_class = "deterministic"
    higher_is_better = True
    aggregation = "mean"
    value_bounds = (0.0, 1.0)

    def __init__(
        self,
        *,
        rouge_type: RougeType = "rougeL",
        use_stemmer: bool = False,
        measure: Measure = "fmeasure",
        n_samples: int = 1000,
        count_failed: bool = True,
        extract: str | None = None,
        extract_pick: Pick | None = None,
    ) -> None:
        if n_samples < 1:
            raise OptionError(
                f"Metric 'rouge': `n_samples` ({n_samples}) must be at least 1.",
                metric_id="rouge",
                option="n_samples",
            )
        self.rouge_type: RougeType = rouge_type
        self.use_stemmer = use_stemmer
        self.measure: Measure = measure
        self.n_samples = n_samples
        self.count_failed = count_failed
        self.extract = extract
        self.extract_pick = extract_pick
        self.answer_extractor = answer_extractor("rouge", extract, extract_pick)
        self._scorer: Any = None
        self._get_scorer()  # rouge-score installed: said before any item is scored

    def _get_scorer(self) -> Any:
        if self._scorer is None:
            module = _import_rouge_scorer()
            self._scorer = module.RougeScorer([self.rouge_type], use_stemmer=self.use_stemmer)
        return self._scorer

    def _own_scorer(self) -> Callable[[str, str], tuple[float, float, float]]:
        """``score(target, prediction)`` of rouge1/rouge2/rougeL: rouge-score's numbers, faster.

        The tokens are rouge-score's (its ``DefaultTokenizer``; a target's tokens are kept for
        the next item with the same target), and precision, recall and F are computed from the
        same integer counts with the same formulas as its ``_score_ngrams`` and ``_score_lcs``:
        n-grams are counted with one ``Counter`` of zipped tokens, and the length of the longest
        common subsequence is found bit-parallel (:func:`_lcs_length`) instead of by filling
        rouge-score's ``n x m`` table in Python.
        """
        from rouge_score import scoring, tokenizers

        tokenize: Callable[[str], list[str]]
        if self.use_stemmer:
            tokenize = tokenizers.DefaultTokenizer(True).tokenize
        else:
            # rouge-score lower-cases, turns every run of characters other than a-z and 0-9
            # into a space and splits on spaces: its tokens are the runs of a-z and 0-9.
            find_tokens = re.compile(r"[a-z0-9]+").findall

            def tokenize(text: str) -> list[str]:
                return find_tokens(text.lower())

        fmeasure = scoring.fmeasure
        targets: dict[str, list[str]] = {}

        def target_tokens(text: str) -> list[str]:
            tokens = targets.get(text)
            if tokens is None:
                if len(targets) >= 4096:
                    targets.clear()
                tokens = targets[text] = tokenize(text)
            return tokens

        if self.rouge_type == "rougeL":

            def score(target: str, prediction: str) -> tuple[float, float, float]:
                t, p = target_tokens(target), tokenize(prediction)
                if not t or not p:
                    return (0.0, 0.0, 0.0)
                lcs = _lcs_length(t, p)
                precision, recall = lcs / len(p), lcs / len(t)
                return (precision, recall, float(fmeasure(precision, recall)))

            return score

        n = int(self.rouge_type[5:])

        def score_n(target: str, prediction: str) -> tuple[float, float, float]:
            t, p = _ngrams(target_tokens(target), n), _ngrams(tokenize(prediction), n)
            overlap = sum(min(count, p[gram]) for gram, count in t.items())
            precision = overlap / max(sum(p.values()), 1)
            recall = overlap / max(sum(t.values()), 1)
            return (precision, recall, float(fmeasure(precision, recall)))

        return score_n

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_scorer"] = None
        return state

    # -- scoring ---------------------------------------------------------------------------

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore | None:
        """ROUGE of one output against its best valid answer."""
        return self.score_items([item], ctx)[0]

    def score_items(self, items: Sequence[ItemResult], ctx: MetricContext) -> ScoreColumn:
        """ROUGE of each output, one ``RougeScorer`` call per item."""
        scorer = self._get_scorer()
        rouge_type, measure, extractor = self.rouge_type, self.measure, self.answer_extractor
        if rouge_type != "rougeLsum":
            score_own = self._own_scorer()

            def best(targets: Sequence[str], prediction: str) -> tuple[float, float, float]:
                # score_multi's choice: the first target of highest F (numpy's argmax).
                found = [score_own(t, prediction) for t in targets]
                return max(found, key=lambda s: s[2]) if len(found) > 1 else found[0]

        else:
            score_one, score_multi = scorer.score, scorer.score_multi

            def best(targets: Sequence[str], prediction: str) -> tuple[float, float, float]:
                if len(targets) == 1:
                    s = score_one(targets[0], prediction)[rouge_type]
                else:
                    s = score_multi(list(targets), prediction)[rouge_type]
                return (float(s.precision), float(s.recall), float(s.fmeasure))

        column = _MEASURES.index(measure)
        states = bytearray()
        values: list[float | None] = []
        reasons: list[str | None] = []
        extras: list[Mapping[str, Any] | None] = []
        failed_extra: dict[str, Any] = {"precision": 0.0, "recall": 0.0, "fmeasure": 0.0}
        extra: Mapping[str, Any] | None
        for item in items:
            expected, output = item.expected, item.output
            reason: str | None = None
            if not expected:
                state, value, extra, reason = ScoreColumn.SKIP, None, None, NO_ANSWER_KEY
            elif output is None:
                if self.count_failed:
                    state, value, extra = ScoreColumn.FAIL, 0.0, failed_extra
                else:
                    state, value, extra, reason = ScoreColumn.SKIP, None, None, FAILED_REASON
            else:
                answer = output if extractor is None else extractor(output)
                if answer is None:
                    state, value, reason = ScoreColumn.FAIL, 0.0, NO_ANSWER_FOUND
                    extra = {**failed_extra, "extracted": None}
                else:
                    found = best(expected, answer)
                    found_extra: dict[str, Any] = dict(zip(_MEASURES, found))
                    if extractor is not None:
                        found_extra["extracted"] = answer
                    extra = found_extra
                    state, value = ScoreColumn.OK, found[column]
            states.append(state)
            values.append(value)
            reasons.append(reason)
            extras.append(extra)
        return ScoreColumn(
            self.label,
            states,
            values,
            reasons if any(r is not None for r in reasons) else None,
            extras,
        )

    # -- aggregation -----------------------------------------------------------------------

    def _matrix(self, scores: Sequence[ItemScore]) -> tuple[NDArray[np.float64], list[int]]:
        """(precision, recall, fmeasure) of each scored item, and the items' positions."""
        import numpy as np

        rows: list[tuple[float, float, float]] = []
        positions: list[int] = []
        for index, s in enumerate(scores):
            if not s.status.scored:
                continue
            extra = s.extra
            if not all(m in extra for m in _MEASURES):
                raise ValueError(
                    f"The rouge score of item {index} has no precision, recall and fmeasure in "
                    "its `extra`: it was not made by this metric; rescore the results."
                )
            rows.append((extra["precision"], extra["recall"], extra["fmeasure"]))
            positions.append(index)
        return np.asarray(rows, dtype=np.float64).reshape(-1, 3), positions

    def aggregate(self, scores: Sequence[ItemScore], ctx: MetricContext) -> Estimate:
        """Mean ROUGE, rouge-score's bootstrap aggregator's interval; paired bootstrap in compare.

        With ``ctx.clusters``, the interval is a cluster-robust one (``cluster_mean``) and the
        aggregator's figures are left out: it knows nothing of clusters.
        """
        import numpy as np

        from itemscore import aggregate

        matrix, positions = self._matrix(scores)
        n = matrix.shape[0]
        if n == 0:
            return Estimate(value=None, n=0, confidence=ctx.confidence)
        column = _MEASURES.index(self.measure)
        # One measure at a time: numpy's pairwise sum of a contiguous column, as np.mean(values).
        means = [float(np.ascontiguousarray(matrix[:, j]).mean()) for j in range(3)]
        extra: dict[str, float] = dict(zip(_MEASURES, means))
        clusters = ctx.clusters
        if clusters is not None and any(clusters[i] is not None for i in positions):
            estimate = aggregate.cluster_mean(
                matrix[:, column].tolist(),
                [clusters[i] for i in positions],
                confidence=ctx.confidence,
                bounds=(0.0, 1.0),
            )
            return Estimate(
                value=float(means[column]), low=estimate.low, high=estimate.high, n=n,
                method=estimate.method, confidence=ctx.confidence,
                extra={**estimate.extra, **extra},
            )  # fmt: skip
        low_mid_high = _bootstrap_aggregate(matrix, self.n_samples, ctx.seed, ctx.confidence)
        for m, (low, mid, high) in zip(_MEASURES, low_mid_high.T.tolist()):
            extra[f"{m}_low"], extra[f"{m}_mid"], extra[f"{m}_high"] = low, mid, high
        low, _, high = low_mid_high[:, column].tolist()
        return Estimate(
            value=float(means[column]),
            low=float(low),
            high=float(high),
            n=n,
            method="bootstrap",
            confidence=ctx.confidence,
            extra=extra,
        )

    def paired_bootstrap(
        self,
        scores_a: Sequence[ItemScore | None],
        scores_b: Sequence[ItemScore | None],
        ctx: MetricContext,
        *,
        n_resamples: int = N_PAIRED,
        clusters: Sequence[str | None] | None = None,
    ) -> tuple[float | None, float | None, NDArray[np.float64], NDArray[np.float64]]:
        """Both sides' mean on the pairs scored on both, and on the same resamples of them."""
        from itemscore.metrics_builtin._paired_means import paired_means

        measure = self.measure

        def value(score: ItemScore) -> float:
            return float(score.extra[measure])

        return paired_means(scores_a, scores_b, value, n_resamples, ctx.seed, clusters)


def _bootstrap_aggregate(
    matrix: NDArray[np.float64], n_samples: int, seed: int, confidence: float
) -> NDArray[np.float64]:
    """rouge-score's ``BootstrapAggregator._bootstrap_resample``, with its generator seeded.

    It draws ``np.random.choice(n, size=n)`` from numpy's global generator once per resample
    and takes ``np.mean(sample, axis=0)`` of the ``(n, 3)`` sample; a ``RandomState(seed)``
    draws the same indices, here in blocks, and the means of the gathered ``(rows, n, 3)``
    block are summed by numpy in the same order, so every mean is the same float. Returns
    the ``(low, mid, high)`` rows of its percentiles, one column per measure.
    """
    import numpy as np

    rng = np.random.RandomState(seed)
    n = matrix.shape[0]
    means = np.zeros((n_samples, matrix.shape[1]))
    rows = max(1, (1 << 20) // n)
    for start in range(0, n_samples, rows):
        stop = min(start + rows, n_samples)
        idx = rng.randint(0, n, size=(stop - start, n))
        means[start:stop] = matrix[idx].mean(axis=1)
    delta = (1 - confidence) / 2
    return np.asarray(np.percentile(means, 100 * np.array([delta, 0.5, 1 - delta]), axis=0))


def _ngrams(tokens: list[str], n: int) -> Counter[Any]:
    """The n-grams of ``tokens`` with their counts (``rouge_scorer._create_ngrams``'s counts)."""
    if n == 1:
        return Counter(tokens)
    return Counter(zip(*(tokens[i:] for i in range(n))))


def _lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """The length of the longest common subsequence of two token lists (bit-parallel).

    Allison and Dix (1986), as Hyyrö (2004) writes it: one bit per token of ``a``, one step of
    integer arithmetic per token of ``b``; the zero bits left are the LCS length.
    """
    masks: dict[str, int] = {}
    for i, token in enumerate(a):
        masks[token] = masks.get(token, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for token in b:
        u = v & masks.get(token, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - v.bit_count()
