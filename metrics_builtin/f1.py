"""``f1``: classification precision, recall and F1 over the gold labels."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, get_args

from itemscore import Estimate, ItemScore, MetricContext, OptionError, ScoreColumn
from itemscore.metrics_builtin._comparison import NormalizedMetric, Verdict, check_labels

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["F1"]

Average = Literal["macro", "micro", "weighted"]
_AVERAGES: tuple[str, ...] = get_args(Average)

#: Bootstrap resamples of the confusion matrix.
N_RESAMPLES = 2000
# Cells drawn per bootstrap block: each block's arrays stay near 16 MB however large the matrix.
_BLOCK_CELLS = 1 << 21

#: What ``_prepare`` makes of an answer key: the normalised valid answers and the first one.
_Prepared = tuple[frozenset[str], str]


class F1(NormalizedMetric[_Prepared]):
    """Classification precision, recall and F1 over the gold labels (macro-averaged by default).

    Each item gets a predicted label (``pred``: the normalised output, or with ``labels`` the
    label extracted from it, normalised; ``None`` for a failed request) and a gold label
    (``gold``: the valid answer it matched, else the first valid answer, normalised). The item
    is ``ok`` (1.0) when they are equal, else ``fail`` (0.0).

    The headline number is computed from the confusion counts of the scored items, as
    scikit-learn's ``precision_recall_fscore_support(y_true, y_pred, labels=<sorted gold
    labels>, average=..., zero_division=0)`` does. The classes are the distinct gold labels;
    a prediction outside them (an answer that matches no label, a failed request) counts only
    as a false negative of its item's gold class. ``Measurement.extra`` has ``precision`` and
    ``recall`` for the chosen ``average``, ``f1_macro``, ``f1_micro``, ``f1_weighted`` and
    ``f1[<label>]`` for every class.

    The interval is a seeded percentile bootstrap (method ``"bootstrap"``, whatever
    ``ci_method`` the run asks for): the cells of the (gold, pred) contingency table are
    resampled multinomially 2000 times with the run's seed, and the F1 recomputed on each
    resample, with the classes of that resample being its gold labels. Its cost depends on the
    number of distinct (gold, pred) pairs, not on the number of items.

    Args:
        average: How per-class F1 scores are combined.
        labels: Class labels. A free-form answer that mentions exactly one of them counts as it.

    Raises:
        ValueError: ``labels`` is an empty list, or ``average`` is not one of its values.
    """

    metric_id = "f1"
    description = (
        "Classification precision, recall, and F1 over the gold labels (macro-averaged by default)."
    )
    aggregation = "ratio"  # unused: aggregate() is F1's own

    def __init__(
        self,
        *,
        average: Average = "macro",
        labels: list[str] | None = None,
        ignore_case: bool = True,
        trim_punctuation: bool = True,
        ignore_punctuation: bool = False,
        nfkc: bool = True,
        count_failed: bool = True,
    ) -> None:
        if average not in _AVERAGES:
            allowed = ", ".join(repr(a) for a in _AVERAGES)
            raise OptionError(
                f"`average` ({average!r}) must be one of {allowed}.",
                metric_id="f1",
                option="average",
                allowed=_AVERAGES,
            )
        checked = check_labels(labels)
        super().__init__(
            ignore_case=ignore_case,
            trim_punctuation=trim_punctuation,
            ignore_punctuation=ignore_punctuation,
            nfkc=nfkc,
            count_failed=count_failed,
        )
        self.average: Average = average
        self.labels: Sequence[str] | None = list(checked) if checked is not None else None
        self._use_labels(checked)

    # -- per item ------------------------------------------------------------------------

    def _prepare(self, expected: tuple[str, ...]) -> _Prepared:
        normalize = self.normalizer
        forms = [normalize(answer) for answer in expected]
        return frozenset(forms), forms[0]

    def _verdict(self, output: str, prepared: _Prepared) -> Verdict:
        forms, first = prepared
        extractor = self.extractor
        label = None if extractor is None else extractor.find(output)
        pred = self.normalizer(output) if label is None else self._label_forms[label]
        if pred in forms:
            return (True, 1.0, {"pred": pred, "gold": pred})
        return (False, 0.0, {"pred": pred, "gold": first})

    def _failed_extra(self, prepared: _Prepared) -> Mapping[str, Any]:
        return {"pred": None, "gold": prepared[1]}

    # -- aggregate -----------------------------------------------------------------------

    def aggregate(self, scores: Sequence[ItemScore], ctx: MetricContext) -> Estimate:
        """F1 over the gold labels from the confusion counts, with a bootstrap interval.

        Raises:
            ValueError: a scored item has no ``gold`` label in its ``extra``.
        """
        import numpy as np  # here, not at import: listing metrics must not load numpy

        from itemscore.aggregate import percentile_interval, resample_counts

        pairs = _pair_counts(scores)
        if not pairs:
            return Estimate(value=None, n=0, confidence=ctx.confidence)
        table = _Cells.from_pairs(pairs)
        point = table.scores(table.counts[np.newaxis, :])
        values = {name: float(array[0]) for name, array in point.items() if name != "per_class"}
        per_class = point["per_class"][0]
        samples = []
        rows = max(1, _BLOCK_CELLS // table.counts.size)
        for block, start in enumerate(range(0, N_RESAMPLES, rows)):
            seed = ctx.seed if block == 0 else _block_seed(ctx.seed, block)
            draws = resample_counts(table.counts, min(rows, N_RESAMPLES - start), seed=seed)
            samples.append(table.f1(draws, self.average))
        low, high = percentile_interval(np.concatenate(samples), ctx.confidence)
        extra = {
            "precision": values[f"precision_{self.average}"],
            "recall": values[f"recall_{self.average}"],
            "f1_macro": values["f1_macro"],
            "f1_micro": values["f1_micro"],
            "f1_weighted": values["f1_weighted"],
        }
        for name, f1 in zip(table.classes, per_class):
            extra[f"f1[{name}]"] = float(f1)
        return Estimate(
            value=values[f"f1_{self.average}"],
            low=low,
            high=high,
            n=int(table.counts.sum()),
            method="bootstrap",
            confidence=ctx.confidence,
            extra=extra,
        )


def _block_seed(seed: int, block: int) -> int:
    """An independent, reproducible seed for bootstrap block ``block`` (> 0) of ``seed``."""
    import numpy as np

    return int(np.random.SeedSequence((seed, block)).generate_state(1)[0])


def _pair_counts(scores: Sequence[ItemScore]) -> dict[tuple[str, str | None], int]:
    """How many scored items have each (gold, pred) pair.

    Scores of equal verdicts are often one shared object, so each distinct object is read once
    and counted by identity: a million classification items cost a few C-level passes.
    """
    if isinstance(scores, ScoreColumn):
        extras = scores.scored_extras()  # no score object is built
    else:
        extras = [score.extra for score in scores if score.status.scored]
    ids = list(map(id, extras))
    distinct = dict(zip(ids, extras))
    pairs: dict[tuple[str, str | None], int] = {}
    for key, count in Counter(ids).items():
        extra = distinct[key]
        gold = extra.get("gold")
        if not isinstance(gold, str):
            raise ValueError(
                f"A scored item has no gold label in its extra ({dict(extra)!r}); f1 "
                "builds its confusion counts from the `gold` and `pred` of every scored item. "
                "Re-score the items with f1."
            )
        pred = extra.get("pred")
        pair = (gold, pred if isinstance(pred, str) else None)
        pairs[pair] = pairs.get(pair, 0) + count
    return pairs


class _Cells:
    """The non-empty cells of the (gold, pred) contingency table, as flat arrays.

    ``gold[j]`` is the class index of cell ``j``'s gold label; ``pred[j]`` the class index of
    its prediction, or ``K`` (one past the last class) for a prediction that is no gold label.
    """

    def __init__(
        self,
        classes: list[str],
        gold: NDArray[np.intp],
        pred: NDArray[np.intp],
        counts: NDArray[np.int64],
    ) -> None:
        import numpy as np

        self.classes = classes
        self.gold = gold
        self.pred = pred
        self.counts = counts
        self.diagonal = np.flatnonzero(gold == pred)
        # Cells ordered by predicted class, cut where the class changes: column sums by
        # np.add.reduceat, for the classes that are predicted at all.
        order = np.argsort(pred, kind="stable")
        is_class = pred[order] < len(classes)
        self._pred_order = order[is_class]
        sorted_pred = pred[self._pred_order]
        starts = np.flatnonzero(np.r_[True, sorted_pred[1:] != sorted_pred[:-1]])
        self._pred_starts = starts if sorted_pred.size else starts[:0]
        self._pred_classes = sorted_pred[self._pred_starts]
        order = np.argsort(gold, kind="stable")
        self._gold_order = order
        sorted_gold = gold[order]
        self._gold_starts = np.flatnonzero(np.r_[True, sorted_gold[1:] != sorted_gold[:-1]])

    @classmethod
    def from_pairs(cls, pairs: Mapping[tuple[str, str | None], int]) -> _Cells:
        """The cells of ``{(gold, pred): count}``; the classes are the sorted gold labels."""
        import numpy as np

        classes = sorted({gold for gold, _ in pairs})
        index = {name: i for i, name in enumerate(classes)}
        other = len(classes)
        gold = np.fromiter((index[g] for g, _ in pairs), dtype=np.intp, count=len(pairs))
        pred = np.fromiter(
            (other if p is None else index.get(p, other) for _, p in pairs),
            dtype=np.intp,
            count=len(pairs),
        )
        counts = np.fromiter(pairs.values(), dtype=np.int64, count=len(pairs))
        return cls(classes, gold, pred, counts)

    def _counts(
        self, draws: NDArray[np.int64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """Per row and class: true positives, predictions and support (``(B, K)`` each).

        A class whose gold label has no item in a row is no class of that row: its
        predictions count nowhere.
        """
        import numpy as np

        rows, k = draws.shape[0], len(self.classes)
        counts = draws.astype(np.float64)
        support = np.add.reduceat(counts[:, self._gold_order], self._gold_starts, axis=1)
        predicted = np.zeros((rows, k))
        if self._pred_classes.size:
            predicted[:, self._pred_classes] = np.add.reduceat(
                counts[:, self._pred_order], self._pred_starts, axis=1
            )
        predicted[support == 0] = 0.0
        tp = np.zeros((rows, k))
        tp[:, self.gold[self.diagonal]] = counts[:, self.diagonal]
        return tp, predicted, support

    def f1(self, draws: NDArray[np.int64], average: str) -> NDArray[np.float64]:
        """The ``average`` F1 of every row of cell counts ``draws`` (shape ``(B, cells)``)."""
        tp, predicted, support = self._counts(draws)
        total = support.sum(axis=1)
        if average == "micro":
            return _divide(2.0 * tp.sum(axis=1), predicted.sum(axis=1) + total)
        f1 = _divide(2.0 * tp, predicted + support)
        if average == "weighted":
            return _divide((f1 * support).sum(axis=1), total)
        return _divide(f1.sum(axis=1), (support > 0).sum(axis=1))

    def scores(self, draws: NDArray[np.int64]) -> dict[str, NDArray[np.float64]]:
        """Precision, recall and F1 (every average, and per class) of every row of ``draws``.

        Classes without items in a row are left out of that row's averages.
        """
        tp, predicted, support = self._counts(draws)
        precision = _divide(tp, predicted)
        recall = _divide(tp, support)
        f1 = _divide(2.0 * tp, predicted + support)
        n_classes = (support > 0).sum(axis=1)
        total = support.sum(axis=1)
        tp_all, predicted_all = tp.sum(axis=1), predicted.sum(axis=1)
        return {
            "per_class": f1,
            "precision_macro": _divide(precision.sum(axis=1), n_classes),
            "recall_macro": _divide(recall.sum(axis=1), n_classes),
            "f1_macro": _divide(f1.sum(axis=1), n_classes),
            "precision_weighted": _divide((precision * support).sum(axis=1), total),
            "recall_weighted": _divide((recall * support).sum(axis=1), total),
            "f1_weighted": _divide((f1 * support).sum(axis=1), total),
            "precision_micro": _divide(tp_all, predicted_all),
            "recall_micro": _divide(tp_all, total),
            "f1_micro": _divide(2.0 * tp_all, predicted_all + total),
        }


def _divide(num: NDArray[np.float64], den: NDArray[Any]) -> NDArray[np.float64]:
    """``num / den`` with 0 where ``den`` is 0 (scikit-learn's ``zero_division=0``)."""
    import numpy as np

    out = np.zeros(np.broadcast_shapes(num.shape, den.shape))
    np.divide(num, den, out=out, where=den != 0)
    return out
