"""``f1``: classification precision, recall and F1 over the gold labels."""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, get_args

from itemscore import Estimate, ItemScore, MetricContext, OptionError, ScoreColumn
from itemscore.metrics_builtin._comparison import NormalizedMetric, Verdict, check_labels
from itemscore.metrics_builtin._extract import Pick

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
    display_name = "F1"
    value_bounds = (0.0, 1.0)

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
        extract: str | None = None,
        extract_pick: Pick | None = None,
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
            extract=extract,
            extract_pick=extract_pick,
        )
        self.average: Average = average
        self.labels: Sequence[str] | None = list(checked) if checked is not None else None
        self._use_labels(checked)

    # -- per item ------------------------------------------------------------------------

    def _prepare(self, expected: tuple[str, ...]) -> _Prepared:
        normalize = self.normalizer
        forms = [normalize(answer) for answer in expected]
        return frozenset(forms), forms[0]

    def _verdict(
        self, output: str, prepared: _Prepared, normalize: Callable[[str], str]
    ) -> Verdict:
        forms, first = prepared
        extractor = self.extractor
        label = None if extractor is None else extractor.find(output)
        pred = normalize(output) if label is None else self._label_forms[label]
        if pred in forms:
            return (True, 1.0, {"pred": pred, "gold": pred})
        return (False, 0.0, {"pred": pred, "gold": first})

    def _failed_extra(self, prepared: _Prepared) -> Mapping[str, Any]:
        return {"pred": None, "gold": prepared[1]}

    # -- aggregate -----------------------------------------------------------------------

    def aggregate(self, scores: Sequence[ItemScore], ctx: MetricContext) -> Estimate:
        """F1 over the gold labels from the confusion counts, with a bootstrap interval.

        With ``ctx.clusters`` (items that come in clusters), whole clusters are resampled.
        A bootstrap that collapses to one point (one item, or every item right) says nothing
        about the spread: the interval is then the Wilson bound of the F1 over ``n`` trials
        (over the clusters, when there are clusters), never a zero-width ``[1, 1]``.

        Raises:
            ValueError: a scored item has no ``gold`` label in its ``extra``.
        """
        import numpy as np

        from itemscore.aggregate import percentile_interval, resample_counts, wilson_bound

        clusters = getattr(ctx, "clusters", None)
        if clusters is not None and all(c is None for c in clusters):
            clusters = None
        if clusters is None:
            pairs = _pair_counts(scores)
        else:
            item_pairs = _item_pairs(scores)
            pairs = {}
            for pair in item_pairs:
                if pair is not None:
                    pairs[pair] = pairs.get(pair, 0) + 1
        if not pairs:
            return Estimate(value=None, n=0, confidence=ctx.confidence)
        table = _Cells.from_pairs(pairs)
        point = table.scores(table.counts[np.newaxis, :])
        values = {name: float(array[0]) for name, array in point.items() if name != "per_class"}
        per_class = point["per_class"][0]
        method = "bootstrap"
        if clusters is None:
            samples = []
            rows = max(1, _BLOCK_CELLS // table.counts.size)
            for block, start in enumerate(range(0, N_RESAMPLES, rows)):
                seed = ctx.seed if block == 0 else _block_seed(ctx.seed, block)
                draws = resample_counts(table.counts, min(rows, N_RESAMPLES - start), seed=seed)
                samples.append(table.f1(draws, self.average))
            trials = float(table.counts.sum())
        else:
            cell_of = {pair: j for j, pair in enumerate(pairs)}
            per_cluster, n_clusters = _cluster_cells(
                [None if p is None else cell_of[p] for p in item_pairs], clusters, len(pairs)
            )
            samples = [
                table.f1(draws, self.average)
                for draws in _cluster_draws(per_cluster, N_RESAMPLES, ctx.seed)
            ]
            trials = float(n_clusters)
            method = "cluster-bootstrap"
        low, high = percentile_interval(np.concatenate(samples), ctx.confidence)
        value = values[f"f1_{self.average}"]
        if low is None or high is None or high - low <= 0.0:
            bound = wilson_bound(value, trials, confidence=ctx.confidence)
            low, high, method = bound.low, bound.high, "wilson"
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
            value=value,
            low=low,
            high=high,
            n=int(table.counts.sum()),
            method=method,
            confidence=ctx.confidence,
            extra=extra,
        )

    def paired_bootstrap(
        self,
        scores_a: Sequence[ItemScore],
        scores_b: Sequence[ItemScore],
        ctx: MetricContext,
        *,
        n_resamples: int = N_RESAMPLES,
        clusters: Sequence[str | None] | None = None,
    ) -> tuple[float | None, float | None, NDArray[np.float64], NDArray[np.float64]]:
        """F1 of both sides on the pairs scored on both, and on the same bootstrap resamples.

        ``scores_a[i]`` and ``scores_b[i]`` score the same item; a pair where either side is
        not scored (skip, error) is left out. Each pair falls in one cell of the joint table
        (its (gold, pred) on side a, its (gold, pred) on side b); the joint cell counts are
        resampled (multinomially, or by whole clusters with ``clusters``) and each side's F1
        recomputed from the margins of every resample. The cost grows with the number of
        joint cells and clusters, not with the number of items.

        Returns:
            ``(f1_a, f1_b, samples_a, samples_b)``, the samples ``n_resamples`` long.
        """
        import numpy as np

        codes_a, pairs_a = _pair_codes(scores_a)
        codes_b, pairs_b = _pair_codes(scores_b)
        valid = (codes_a >= 0) & (codes_b >= 0)
        width = max(len(pairs_b), 1)
        joint = codes_a[valid] * width + codes_b[valid]
        full = np.bincount(joint, minlength=max(len(pairs_a), 1) * width)
        cells = np.flatnonzero(full)
        if cells.size == 0:
            empty = np.full(n_resamples, np.nan)
            return None, None, empty, empty.copy()
        counts = full[cells]
        sides = []
        for side_cells, pairs in ((cells // width, pairs_a), (cells % width, pairs_b)):
            used, position = np.unique(side_cells, return_inverse=True)
            table = _Cells.from_pairs({pairs[int(c)]: 1 for c in used})
            # Each joint cell adds to one cell of this side: its margins are sums over runs
            # of joint cells (an integer matrix product cost seconds with many cells).
            order = np.argsort(position, kind="stable")
            starts = np.searchsorted(position[order], np.arange(used.size))
            sides.append((table, order, starts))
        (table_a, order_a, starts_a), (table_b, order_b, starts_b) = sides

        def margins(draws: Any, order: Any, starts: Any) -> Any:
            return np.add.reduceat(draws[:, order], starts, axis=1)

        value_a = float(
            table_a.f1(margins(counts[np.newaxis, :], order_a, starts_a), self.average)[0]
        )
        value_b = float(
            table_b.f1(margins(counts[np.newaxis, :], order_b, starts_b), self.average)[0]
        )
        if clusters is None:
            blocks = _multinomial_draws(counts, n_resamples, ctx.seed)
        else:
            lookup = np.full(full.size, -1, dtype=np.intp)
            lookup[cells] = np.arange(cells.size)
            names = [c for c, ok in zip(clusters, valid.tolist()) if ok]
            per_cluster, _ = _cluster_cells(lookup[joint].tolist(), names, cells.size)
            blocks = _cluster_draws(per_cluster, n_resamples, ctx.seed)
        out_a, out_b = [], []
        for draws in blocks:
            out_a.append(table_a.f1(margins(draws, order_a, starts_a), self.average))
            out_b.append(table_b.f1(margins(draws, order_b, starts_b), self.average))
        return value_a, value_b, np.concatenate(out_a), np.concatenate(out_b)


def _multinomial_draws(
    counts: NDArray[np.int64], n_resamples: int, seed: int
) -> list[NDArray[np.int64]]:
    """Multinomial resamples of cell counts, in blocks of bounded memory."""
    from itemscore.aggregate import resample_counts

    rows = max(1, _BLOCK_CELLS // counts.size)
    return [
        resample_counts(
            counts,
            min(rows, n_resamples - start),
            seed=seed if block == 0 else _block_seed(seed, block),
        )
        for block, start in enumerate(range(0, n_resamples, rows))
    ]


def _cluster_cells(
    cells: Sequence[int | None], clusters: Sequence[str | None], n_cells: int
) -> tuple[NDArray[np.int64], int]:
    """Cell counts per cluster, ``(clusters, cells)``; an item without a cluster is its own."""
    import numpy as np

    index: dict[str, int] = {}
    codes = []
    singles = 0
    for name in clusters:
        if name is None:
            codes.append(-1 - singles)
            singles += 1
        else:
            codes.append(index.setdefault(name, len(index)))
    n_clusters = len(index) + singles
    table = np.zeros((n_clusters, n_cells), dtype=np.int64)
    for code, cell in zip(codes, cells):
        if cell is not None:
            table[code if code >= 0 else len(index) - 1 - code, cell] += 1
    return table, n_clusters


def _cluster_draws(
    per_cluster: NDArray[np.int64], n_resamples: int, seed: int
) -> list[NDArray[np.int64]]:
    """Cell counts of resamples that draw whole clusters with replacement, in blocks."""
    import numpy as np

    n_clusters = per_cluster.shape[0]
    rows = max(1, _BLOCK_CELLS // max(n_clusters, per_cluster.shape[1]))
    uniform = np.full(n_clusters, 1.0 / n_clusters)
    out = []
    for block, start in enumerate(range(0, n_resamples, rows)):
        rng = np.random.default_rng(seed if block == 0 else _block_seed(seed, block))
        weights = rng.multinomial(n_clusters, uniform, size=min(rows, n_resamples - start))
        out.append(np.asarray(weights @ per_cluster, dtype=np.int64))
    return out


_UNSCORED: Mapping[str, Any] = {"gold": None, "pred": None}
_gold_pred = operator.itemgetter("gold", "pred")


def _pair_codes(
    scores: Sequence[ItemScore | None],
) -> tuple[NDArray[np.int64], list[tuple[str, str | None]]]:
    """One code per item for its (gold, pred), -1 when it is not scored; and the pairs.

    Reads a column's states and extras without building score objects; mapping each extra
    to its (gold, pred) and each pair to its code are C-level passes.
    """
    import numpy as np

    if isinstance(scores, ScoreColumn):
        scored = np.frombuffer(bytes(scores.states), dtype=np.uint8) <= 1
        extras: Sequence[Mapping[str, Any] | None] = (
            scores.extras if scores.extras is not None else [None] * len(scores)
        )
    else:
        scored = np.fromiter(
            (s is not None and s.status.scored for s in scores), dtype=bool, count=len(scores)
        )
        extras = [None if s is None else s.extra for s in scores]
    # Equal verdicts often share one extra mapping: read each distinct mapping once.
    ids = list(map(id, extras))
    distinct = dict(zip(ids, extras))
    unique = [_UNSCORED if e is None else e for e in distinct.values()]
    try:
        keys = list(map(_gold_pred, unique))
    except (KeyError, TypeError):
        keys = [(e.get("gold"), e.get("pred")) for e in unique]
    index = {key: i for i, key in enumerate(dict.fromkeys(keys))}
    code_of = dict(zip(distinct, map(index.__getitem__, keys)))
    codes = np.fromiter(map(code_of.__getitem__, ids), dtype=np.int64, count=len(ids))
    bad = [i for key, i in index.items() if not isinstance(key[0], str)]
    if bad and bool(np.isin(codes[scored], bad).any()):
        raise ValueError(
            "A scored item has no gold label in its extra; f1 builds its confusion counts "
            "from the `gold` and `pred` of every scored item. Re-score the items with f1."
        )
    codes[~scored] = -1
    pairs = [(str(g), p if isinstance(p, str) else None) for g, p in index]
    return codes, pairs


def _item_pairs(scores: Sequence[ItemScore | None]) -> list[tuple[str, str | None] | None]:
    """Each item's (gold, pred), or ``None`` when it is not scored.

    Equal verdicts often share one ``extra`` mapping: each distinct mapping is read once.
    """
    unscored: Mapping[str, Any] = {}
    if isinstance(scores, ScoreColumn):
        extras = scores.extras if scores.extras is not None else [None] * len(scores)
        entries = [
            (e if e is not None else _NO_EXTRA) if s <= 1 else unscored
            for s, e in zip(scores.states, extras)
        ]
    else:
        entries = [
            unscored if score is None or not score.status.scored else score.extra
            for score in scores
        ]
    ids = list(map(id, entries))
    distinct = dict(zip(ids, entries))
    pair_of: dict[int, tuple[str, str | None] | None] = {}
    for key, extra in distinct.items():
        if extra is unscored:
            pair_of[key] = None
            continue
        gold = extra.get("gold")
        if not isinstance(gold, str):
            raise ValueError(
                f"A scored item has no gold label in its extra ({dict(extra)!r}); f1 "
                "builds its confusion counts from the `gold` and `pred` of every scored item. "
                "Re-score the items with f1."
            )
        pred = extra.get("pred")
        pair_of[key] = (gold, pred if isinstance(pred, str) else None)
    return list(map(pair_of.__getitem__, ids))


_NO_EXTRA: Mapping[str, Any] = {}


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
