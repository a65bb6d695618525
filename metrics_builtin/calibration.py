"""``brier`` and ``ece``: how well the confidence a model reports matches how often it is right.

Both read a confidence from ``item.metadata["confidence"]`` (the role ``confidence`` of a data
file; option ``field``):

- a number in [0, 1]: the model's probability that its answer is right. The answer is right
  when the output (or what ``extract`` finds in it) equals a valid answer after normalisation,
  as ``exact_match`` decides;
- a probability per class (multi-class): a mapping ``{label: probability}``, or a list aligned
  with the option ``labels`` or, failing that, with the item's ``choices``. The true class is
  the valid answer (a label, a choice's text or its letter); the output is not read. The
  confidence is the largest probability, and the item is right when its class (the first
  largest) is the true one.

Both are lower-is-better and have bootstrap intervals (the run's seed).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
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
from itemscore.metrics_builtin._extract import Pick, answer_extractor
from itemscore.metrics_builtin._letters import expected_letters, read_choices
from itemscore.text import Normalizer

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["Brier", "Ece"]

#: Bootstrap resamples of the intervals and of paired comparisons.
N_RESAMPLES = 2000
#: How far the probabilities of one item may sum from 1.
_SUM_TOLERANCE = 1e-6


class _Verdict:
    """One item's confidence, correctness and Brier loss."""

    __slots__ = ("brier", "confidence", "correct", "true_class")

    def __init__(
        self, confidence: float, correct: bool, brier: float, true_class: str | None
    ) -> None:
        self.confidence = confidence
        self.correct = correct
        self.brier = brier
        self.true_class = true_class


class _Calibration(Metric):
    """Shared reading of confidences and correctness.

    Args:
        field: The metadata field holding the confidence (a probability, or one per class).
        labels: The classes of a list of probabilities, in its order; none: the item's
            `choices`.
        ignore_case: Compare case-insensitively.
        trim_punctuation: Strip punctuation and quotes from the start and end.
        ignore_punctuation: Remove all punctuation, including inside the text.
        nfkc: Apply Unicode NFKC, so full-width characters equal their ASCII forms.
        count_failed: Score failed requests as wrong. `false` leaves them out.
        extract: Judge only the answer found in the output: a regex (its group is the
            answer), or a preset `answer_is`, `boxed`, `last_number`; an output without one
            is wrong.
        extract_pick: Which match of `extract` counts, `first` or `last`; none: `first` for a
            regex, `last` for a preset.
    """

    required_inputs = ("expected",)
    reproducibility_class = "deterministic"
    higher_is_better = False
    aggregation = "mean"

    def _setup(
        self,
        *,
        field: str,
        labels: Sequence[str] | None,
        ignore_case: bool,
        trim_punctuation: bool,
        ignore_punctuation: bool,
        nfkc: bool,
        count_failed: bool,
        extract: str | None,
        extract_pick: Pick | None,
    ) -> None:
        if not field:
            raise OptionError(
                f"Metric {self.metric_id!r}: `field` ({field!r}) must name a metadata field, "
                "e.g. 'confidence'.",
                metric_id=self.metric_id,
                option="field",
            )
        if labels is not None and len(set(labels)) != len(labels):
            raise OptionError(
                f"Metric {self.metric_id!r}: `labels` ({list(labels)!r}) repeats a label.",
                metric_id=self.metric_id,
                option="labels",
            )
        self.field = field
        self.labels = None if labels is None else list(labels)
        self.ignore_case = ignore_case
        self.trim_punctuation = trim_punctuation
        self.ignore_punctuation = ignore_punctuation
        self.nfkc = nfkc
        self.count_failed = count_failed
        self.extract = extract
        self.extract_pick = extract_pick
        self.answer_extractor = answer_extractor(self.metric_id, extract, extract_pick)
        self.normalizer = Normalizer(
            nfkc=nfkc,
            ignore_case=ignore_case,
            trim_punctuation=trim_punctuation,
            ignore_punctuation=ignore_punctuation,
        )

    # -- one item ----------------------------------------------------------------------------

    def _probability(self, value: Any, where: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ValueError(
                f"{where} ({value!r}) is not a probability but a {type(value).__name__}."
            )
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"{where} ({value!r}) is not a number.") from None
        if not 0.0 <= number <= 1.0:
            raise ValueError(f"{where} ({value!r}) is not a probability in [0, 1].")
        return number

    def _binary(self, item: ItemResult, confidence: float) -> _Verdict | None:
        expected = item.expected or ()
        output = item.output
        if output is None:
            if not self.count_failed:
                return None
            correct = False
        else:
            extractor = self.answer_extractor
            answer = output if extractor is None else extractor(output)
            normalize = self.normalizer
            correct = answer is not None and normalize(answer) in {normalize(e) for e in expected}
        miss = confidence - (1.0 if correct else 0.0)
        return _Verdict(confidence, correct, miss * miss, None)

    def _classes(self, item: ItemResult, value: Any) -> tuple[list[str], list[float]]:
        where = f"metadata[{self.field!r}]"
        if isinstance(value, Mapping):
            names = self.labels if self.labels is not None else [str(k) for k in value]
            unknown = [k for k in value if str(k) not in names]
            if unknown:
                raise ValueError(f"{where} names {unknown!r}, which are not among `labels`.")
            return names, [
                self._probability(value.get(name, 0.0), f"{where}[{name!r}]") for name in names
            ]
        names = self.labels if self.labels is not None else list(read_choices(item.metadata) or ())
        if not names:
            raise ValueError(
                f"{where} is a list of probabilities, but neither `labels` nor the item's "
                "choices say which class each is: give labels=[...], a `choices` column, or a "
                "mapping {label: probability}."
            )
        if len(value) != len(names):
            raise ValueError(
                f"{where} holds {len(value)} probabilities for {len(names)} classes ({names!r})."
            )
        return names, [self._probability(p, f"{where}[{i}]") for i, p in enumerate(value)]

    def _multiclass(self, item: ItemResult, value: Any) -> _Verdict:
        import numpy as np

        names, probabilities = self._classes(item, value)
        total = math.fsum(probabilities)
        if abs(total - 1.0) > _SUM_TOLERANCE:
            raise ValueError(
                f"The probabilities of metadata[{self.field!r}] sum to {total!r}, not 1."
            )
        expected = item.expected or ()
        normalize = self.normalizer
        forms = {normalize(name): i for i, name in enumerate(names)}
        true = next((forms[normalize(e)] for e in expected if normalize(e) in forms), None)
        if true is None and self.labels is None:
            letters = expected_letters(expected, names, 0)
            true = next(iter(letters)) if len(letters) == 1 else None
        if true is None:
            raise ValueError(f"The answer key {list(expected)!r} is none of the classes {names!r}.")
        p = np.asarray(probabilities, dtype=np.float64)
        onehot = np.zeros_like(p)
        onehot[true] = 1.0
        brier = float(np.sum((onehot - p) ** 2))
        if p.size == 2:
            brier *= 0.5  # scikit-learn's scale_by_half="auto": binary Brier lies in [0, 1]
        top = int(np.argmax(p))
        return _Verdict(float(p[top]), top == true, brier, names[true])

    def _judge(self, item: ItemResult) -> _Verdict | str:
        """The item's verdict, or the reason it is skipped. Raises for a malformed one."""
        if not item.expected:
            return NO_ANSWER_KEY
        value = item.metadata.get(self.field) if item.metadata else None
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return f"no confidence in metadata[{self.field!r}]"
        if isinstance(value, (Mapping, list, tuple)):
            return self._multiclass(item, value)
        verdict = self._binary(item, self._probability(value, f"metadata[{self.field!r}]"))
        return FAILED_REASON if verdict is None else verdict

    def _value(self, verdict: _Verdict) -> float:
        raise NotImplementedError

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        """The item's confidence and correctness in ``extra``; ok when right, else fail."""
        verdict = self._judge(item)
        if isinstance(verdict, str):
            return self.skip(verdict)
        extra: dict[str, Any] = {"confidence": verdict.confidence, "correct": verdict.correct}
        if verdict.true_class is not None:
            extra["true_class"] = verdict.true_class
        value = self._value(verdict)
        return self.ok(value, extra=extra) if verdict.correct else self.fail(value, extra=extra)

    # -- resampling --------------------------------------------------------------------------

    @staticmethod
    def _scored_extras(
        scores: Sequence[ItemScore | None],
    ) -> tuple[list[int], list[Mapping[str, Any]]]:
        positions, extras = [], []
        for index, s in enumerate(scores):
            if s is None or not s.status.scored:
                continue
            if "confidence" not in s.extra or "correct" not in s.extra:
                raise ValueError(
                    f"The score of item {index} has no confidence and correctness in its "
                    "`extra`: it was not made by this metric; rescore the results."
                )
            positions.append(index)
            extras.append(s.extra)
        return positions, extras


def _resamples(
    n: int, n_resamples: int, seed: int, clusters: Sequence[str | None] | None
) -> Iterator[NDArray[np.intp]]:
    """Item indices of each bootstrap resample (whole clusters drawn with ``clusters``)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    if clusters is None or all(c is None for c in clusters):
        for _ in range(n_resamples):
            yield rng.integers(0, n, size=n)
        return
    members: dict[Any, list[int]] = {}
    for i, c in enumerate(clusters):
        members.setdefault(c if c is not None else (i,), []).append(i)
    groups = [np.asarray(m, dtype=np.intp) for m in members.values()]
    for _ in range(n_resamples):
        drawn = rng.integers(0, len(groups), size=len(groups))
        yield np.concatenate([groups[g] for g in drawn.tolist()])


class Brier(_Calibration):
    """Brier score: the mean squared error of the reported probabilities; lower is better.

    Binary (one confidence per item): ``(confidence - right)^2``, averaged: scikit-learn's
    ``brier_score_loss(right, confidence)``. Multi-class: the squared error summed over the
    classes, ``sum_k (p_k - [k is true])^2``, averaged; halved for two classes, as
    scikit-learn's default ``scale_by_half="auto"`` does. Each item's value is its loss, ``ok``
    when its answer is right and ``fail`` when not; ``extra`` holds ``confidence``,
    ``correct`` (and ``true_class`` for class probabilities). An item without a confidence is
    skipped; a confidence outside [0, 1] or probabilities not summing to 1 are its ``error``.
    The interval is the percentile bootstrap of the mean (2000 resamples, the run's seed), or
    with clusters the cluster-robust one.
    """

    metric_id = "brier"
    display_name = "Brier score"
    description = (
        "Brier score of the confidence in metadata (`confidence`): mean squared error of the "
        "reported probabilities; lower is better."
    )

    def __init__(
        self,
        *,
        field: str = "confidence",
        labels: list[str] | None = None,
        ignore_case: bool = True,
        trim_punctuation: bool = True,
        ignore_punctuation: bool = False,
        nfkc: bool = True,
        count_failed: bool = True,
        extract: str | None = None,
        extract_pick: Pick | None = None,
    ) -> None:
        self._setup(
            field=field, labels=labels, ignore_case=ignore_case,
            trim_punctuation=trim_punctuation, ignore_punctuation=ignore_punctuation,
            nfkc=nfkc, count_failed=count_failed, extract=extract, extract_pick=extract_pick,
        )  # fmt: skip

    def _value(self, verdict: _Verdict) -> float:
        return verdict.brier

    def aggregate(self, scores: Sequence[ItemScore], ctx: MetricContext) -> Estimate:
        """Mean Brier loss (scikit-learn's), bootstrap interval; paired bootstrap in compare."""
        import numpy as np

        from itemscore import aggregate

        column = scores if isinstance(scores, ScoreColumn) else ScoreColumn.from_scores("", scores)
        values = np.asarray(column.scored_values(), dtype=np.float64)
        if values.size == 0:
            return Estimate(value=None, n=0, confidence=ctx.confidence)
        upper = 2.0 if values.max() > 1.0 else 1.0
        clusters = ctx.clusters
        if clusters is not None and any(c is not None for c in clusters):
            estimate = aggregate.cluster_mean(
                values.tolist(), column.scored_clusters(clusters),
                confidence=ctx.confidence, bounds=(0.0, upper),
            )  # fmt: skip
        else:
            estimate = aggregate.mean(
                values, method="bootstrap", confidence=ctx.confidence, seed=ctx.seed,
                n_resamples=N_RESAMPLES, bounds=(0.0, upper),
            )  # fmt: skip
        # np.mean, as scikit-learn's np.average takes it, whatever the interval's own sum.
        return Estimate(
            value=float(np.mean(values)), low=estimate.low, high=estimate.high, n=estimate.n,
            method=estimate.method, confidence=ctx.confidence, extra=estimate.extra,
        )  # fmt: skip

    def paired_bootstrap(
        self,
        scores_a: Sequence[ItemScore | None],
        scores_b: Sequence[ItemScore | None],
        ctx: MetricContext,
        *,
        n_resamples: int = N_RESAMPLES,
        clusters: Sequence[str | None] | None = None,
    ) -> tuple[float | None, float | None, NDArray[np.float64], NDArray[np.float64]]:
        """Both sides' mean loss on the pairs scored on both, and on the same resamples."""
        from itemscore.metrics_builtin._paired_means import paired_means

        def value(score: ItemScore) -> float:
            return float(score.value or 0.0)

        return paired_means(scores_a, scores_b, value, n_resamples, ctx.seed, clusters)


class Ece(_Calibration):
    """Expected calibration error: the gap between confidence and accuracy, bin by bin.

    Items are put in ``bins`` bins by confidence: ``binning="width"`` (default) cuts [0, 1]
    into equal widths, bin ``m`` holding the confidences in ``(m/B, (m+1)/B]`` (0 in the first,
    edges from ``numpy.linspace(0, 1, B + 1)``); ``"mass"`` sorts the items by confidence
    (stable: ties keep their order) and cuts them into ``B`` runs of sizes differing by at most
    one (``numpy.array_split``). ECE is ``sum_b (n_b / n) |accuracy_b - mean confidence_b|``
    over the non-empty bins (Guo et al., 2017). Each item is ``ok`` (1.0) when its answer is
    right, else ``fail`` (0.0); ``extra`` holds ``confidence`` and ``correct``.

    ``Measurement.extra`` holds the reliability diagram: for each bin ``b`` (0-based),
    ``bin[b].count``, ``bin[b].lower`` and ``bin[b].upper`` (its edges; for mass bins the
    smallest and largest confidence in it), and for a non-empty bin ``bin[b].confidence``
    (mean confidence) and ``bin[b].accuracy``; also ``mce`` (the largest gap of a non-empty
    bin), ``accuracy`` and ``mean_confidence``. The interval is the percentile bootstrap of
    the ECE (2000 resamples of the items, or of whole clusters, the run's seed; resampled
    items keep their draw order among equal confidences).

    Args:
        bins: The number of bins.
        binning: `width`: equal-width bins over [0, 1]; `mass`: bins of equal item counts.
    """

    metric_id = "ece"
    display_name = "ECE"
    description = (
        "Expected calibration error of the confidence in metadata (`confidence`), equal-width "
        "or equal-mass bins; lower is better."
    )

    def __init__(
        self,
        *,
        bins: int = 10,
        binning: Literal["width", "mass"] = "width",
        field: str = "confidence",
        labels: list[str] | None = None,
        ignore_case: bool = True,
        trim_punctuation: bool = True,
        ignore_punctuation: bool = False,
        nfkc: bool = True,
        count_failed: bool = True,
        extract: str | None = None,
        extract_pick: Pick | None = None,
    ) -> None:
        if bins < 1:
            raise OptionError(
                f"Metric 'ece': `bins` ({bins}) must be at least 1.", metric_id="ece", option="bins"
            )
        self.bins = bins
        self.binning = binning
        self._setup(
            field=field, labels=labels, ignore_case=ignore_case,
            trim_punctuation=trim_punctuation, ignore_punctuation=ignore_punctuation,
            nfkc=nfkc, count_failed=count_failed, extract=extract, extract_pick=extract_pick,
        )  # fmt: skip

    def _value(self, verdict: _Verdict) -> float:
        return 1.0 if verdict.correct else 0.0

    def _bin_of(self, confidence: NDArray[np.float64]) -> list[NDArray[np.intp]]:
        """The item positions of each bin."""
        import numpy as np

        if self.binning == "mass":
            order = np.argsort(confidence, kind="stable")
            return list(np.array_split(order, self.bins))
        edges = np.linspace(0.0, 1.0, self.bins + 1)
        index = np.searchsorted(edges[1:-1], confidence, side="left")
        order = np.argsort(index, kind="stable")
        counts = np.bincount(index, minlength=self.bins)
        return list(np.split(order, np.cumsum(counts)[:-1]))

    def _ece(self, confidence: NDArray[np.float64], correct: NDArray[np.float64]) -> float:
        import numpy as np

        n = confidence.size
        if self.binning == "width":
            # Per-bin sums by bincount: the same gaps as the bins' means, without sorting.
            edges = np.linspace(0.0, 1.0, self.bins + 1)
            index = np.searchsorted(edges[1:-1], confidence, side="left")
            gaps = np.abs(
                np.bincount(index, weights=correct, minlength=self.bins)
                - np.bincount(index, weights=confidence, minlength=self.bins)
            )
            return float(gaps.sum() / n)
        total = 0.0
        for members in self._bin_of(confidence):
            if members.size:
                gap = abs(float(np.mean(correct[members])) - float(np.mean(confidence[members])))
                total += members.size / n * gap
        return total

    def _diagram(
        self, confidence: NDArray[np.float64], correct: NDArray[np.float64]
    ) -> dict[str, float]:
        import numpy as np

        extra: dict[str, float] = {}
        edges = np.linspace(0.0, 1.0, self.bins + 1)
        gaps = []
        for b, members in enumerate(self._bin_of(confidence)):
            extra[f"bin[{b}].count"] = float(members.size)
            if self.binning == "width":
                extra[f"bin[{b}].lower"], extra[f"bin[{b}].upper"] = edges[b], edges[b + 1]
            elif members.size:
                extra[f"bin[{b}].lower"] = float(confidence[members].min())
                extra[f"bin[{b}].upper"] = float(confidence[members].max())
            if members.size:
                mean_confidence = float(np.mean(confidence[members]))
                accuracy = float(np.mean(correct[members]))
                extra[f"bin[{b}].confidence"] = mean_confidence
                extra[f"bin[{b}].accuracy"] = accuracy
                gaps.append(abs(accuracy - mean_confidence))
        extra["mce"] = max(gaps)
        extra["accuracy"] = float(np.mean(correct))
        extra["mean_confidence"] = float(np.mean(confidence))
        return extra

    def _arrays(
        self, scores: Sequence[ItemScore | None]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], list[int]]:
        import numpy as np

        positions, extras = self._scored_extras(scores)
        confidence = np.fromiter((e["confidence"] for e in extras), np.float64, len(extras))
        correct = np.fromiter((bool(e["correct"]) for e in extras), np.float64, len(extras))
        return confidence, correct, positions

    def aggregate(self, scores: Sequence[ItemScore], ctx: MetricContext) -> Estimate:
        """Binned calibration gap, bootstrap interval, reliability diagram; paired bootstrap."""
        import numpy as np

        from itemscore.aggregate import percentile_interval

        confidence, correct, positions = self._arrays(scores)
        n = confidence.size
        if n == 0:
            return Estimate(value=None, n=0, confidence=ctx.confidence)
        clusters = None if ctx.clusters is None else [ctx.clusters[i] for i in positions]
        samples = np.fromiter(
            (
                self._ece(confidence[idx], correct[idx])
                for idx in _resamples(n, N_RESAMPLES, ctx.seed, clusters)
            ),
            np.float64,
            N_RESAMPLES,
        )
        low, high = percentile_interval(samples, ctx.confidence)
        clustered = clusters is not None and any(c is not None for c in clusters)
        return Estimate(
            value=self._ece(confidence, correct),
            low=low,
            high=high,
            n=n,
            method="cluster-bootstrap" if clustered else "bootstrap",
            confidence=ctx.confidence,
            extra=self._diagram(confidence, correct),
        )

    def paired_bootstrap(
        self,
        scores_a: Sequence[ItemScore | None],
        scores_b: Sequence[ItemScore | None],
        ctx: MetricContext,
        *,
        n_resamples: int = N_RESAMPLES,
        clusters: Sequence[str | None] | None = None,
    ) -> tuple[float | None, float | None, NDArray[np.float64], NDArray[np.float64]]:
        """Both sides' ECE on the pairs scored on both, and on the same resampled pairs."""
        import numpy as np

        conf_a, right_a, pos_a = self._arrays(scores_a)
        conf_b, right_b, pos_b = self._arrays(scores_b)
        where_b = {p: i for i, p in enumerate(pos_b)}
        pairs = [(i, where_b[p]) for i, p in enumerate(pos_a) if p in where_b]
        if not pairs:
            empty = np.full(n_resamples, np.nan)
            return None, None, empty, empty.copy()
        ia = np.asarray([i for i, _ in pairs], dtype=np.intp)
        ib = np.asarray([j for _, j in pairs], dtype=np.intp)
        conf_a, right_a, conf_b, right_b = conf_a[ia], right_a[ia], conf_b[ib], right_b[ib]
        picked = None if clusters is None else [clusters[pos_a[i]] for i in ia.tolist()]
        out_a = np.empty(n_resamples)
        out_b = np.empty(n_resamples)
        for row, idx in enumerate(_resamples(ia.size, n_resamples, ctx.seed, picked)):
            out_a[row] = self._ece(conf_a[idx], right_a[idx])
            out_b[row] = self._ece(conf_b[idx], right_b[idx])
        return self._ece(conf_a, right_a), self._ece(conf_b, right_b), out_a, out_b
