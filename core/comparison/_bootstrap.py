"""The paired bootstrap of a metric's own aggregate, and what stands in when it degenerates.

Both sides are recomputed on the same resampled ids (whole clusters with clusters): through
the metric's vectorised ``paired_bootstrap`` when it has one, else one aggregate per resample.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import attrs
import numpy as np

from .._columns import ScoreColumn
from .._exceptions import ConfigError
from .._metric import Metric, MetricContext
from .._records import ItemScore
from ..aggregate import percentile_interval
from ..stats import _paired as _stats
from ._pairing import _pick, _take
from ._ratio_mean import _noted

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ._one import _Paired


#: Bootstrap resamples of a paired bootstrap.
N_RESAMPLES = 2000
#: Bootstrap resamples when a metric's own aggregate is called once per resample.
N_RESAMPLES_LOOP = 500


#: Why a bootstrap p-value was raised: it fell below what its few differing pairs support.
_FLOORED = "p raised to 2/2^m, m differing pairs"


def _bootstrap(
    p: _Paired, select: NDArray[np.intp] | None, rows: NDArray[np.intp]
) -> dict[str, Any]:
    """Paired bootstrap of a metric's own aggregate over ``select`` (scored pairs: ``rows``)."""
    assert p.metric is not None
    assert p.scores_a is not None
    assert p.scores_b is not None
    metric = p.metric
    ctx = MetricContext(suite_id=p.suite_id, label=p.label, confidence=p.confidence, seed=p.seed)
    resampler = getattr(metric, "paired_bootstrap", None)
    clusters = _pick(p.clusters, rows)
    if resampler is not None:
        # The metric leaves out pairs not scored on both sides itself: no copy of the scores.
        every = np.arange(len(p.scores_a)) if select is None else select
        n_resamples = _paired_n_resamples(metric, p.label, N_RESAMPLES)
        given_a, given_b = _take(p.scores_a, every), _take(p.scores_b, every)
        given_clusters = _pick(p.clusters, every)
        value_a, value_b, samples_a, samples_b = resampler(
            given_a, given_b, ctx, n_resamples=n_resamples, clusters=given_clusters
        )
    else:
        scores_a = cast("Sequence[ItemScore]", _take(p.scores_a, rows))
        scores_b = cast("Sequence[ItemScore]", _take(p.scores_b, rows))
        given_a, given_b, given_clusters = scores_a, scores_b, clusters
        value_a = metric.aggregate(scores_a, attrs.evolve(ctx, model=p.baseline)).value
        value_b = metric.aggregate(scores_b, attrs.evolve(ctx, model=p.candidate)).value
        n_resamples = _paired_n_resamples(metric, p.label, N_RESAMPLES_LOOP)
        if value_a is not None and value_b is not None:
            samples_a, samples_b = _loop_resamples(
                metric, scores_a, scores_b, ctx, n_resamples, clusters
            )
    out: dict[str, Any] = {"value_a": value_a, "value_b": value_b}
    name = "cluster-bootstrap" if clusters is not None else "paired-bootstrap"
    if value_a is None or value_b is None:
        return {**out, "method": name}
    diffs = np.asarray(samples_b, dtype=np.float64) - np.asarray(samples_a, dtype=np.float64)
    diffs = diffs[~np.isnan(diffs)]
    extra = {"n_resamples": float(n_resamples), "seed": float(p.seed)}
    difference = value_b - value_a
    if diffs.size == 0:
        return {**out, "difference": difference, "method": name, "extra": extra}
    own_test = _own_p_value(metric, p.label, given_a, given_b, ctx, given_clusters)
    scale = max(abs(value_a), abs(value_b), float(np.max(np.abs(diffs))))
    if _stats.is_constant(diffs, scale):
        fields = _degenerate(p, rows, clusters, ctx, name, value_a, value_b)
        return {**out, **_with_own_test(fields, own_test), "extra": extra}
    low, high = percentile_interval(diffs, p.confidence)
    raw = _stats.bootstrap_p(diffs)
    # The floor 2 / 2^m binds only for m < 1 - log2(p): count differing pairs that far.
    limit = math.ceil(1.0 - math.log2(raw)) + 1
    n_differing = _differing_pairs(p.scores_a, p.scores_b, rows, limit)
    p_value = _stats.bootstrap_p(diffs, n_differing)
    method = name
    if p_value > raw and own_test is None:  # then the count stopped below its limit: exact
        extra["n_differing"] = float(n_differing)
        method = _noted(name, _FLOORED)
    se = float(diffs.std(ddof=1)) if diffs.size > 1 else 0.0
    fields = {"p_value": p_value, "method": method}
    return {
        **out,
        "difference": difference,
        "ci_low": low,
        "ci_high": high,
        **_with_own_test(fields, own_test),
        "mde": _stats.mde(se, p.confidence) if se > 0 else None,
        "extra": extra,
    }


def _paired_n_resamples(metric: Metric, label: str, default: int) -> int:
    """The resamples the metric asks its paired bootstrap for (``paired_n_resamples``).

    A metric whose figures should reproduce another tool's (sacrebleu's ``--paired-bs-n``)
    says how many resamples that tool draws.

    Raises:
        ConfigError: the attribute is there but is not a positive integer.
    """
    asked = getattr(metric, "paired_n_resamples", None)
    if asked is None:
        return default
    if isinstance(asked, bool) or not isinstance(asked, int) or asked < 1:
        raise ConfigError(
            f"The metric of {label!r} ({type(metric).__qualname__}) sets `paired_n_resamples` "
            f"to {asked!r}, which must be a positive integer (the resamples of its paired "
            "bootstrap); fix the metric, or remove the attribute to use the default "
            f"({default})."
        )
    return asked


def _own_p_value(
    metric: Metric,
    label: str,
    scores_a: Sequence[ItemScore | None],
    scores_b: Sequence[ItemScore | None],
    ctx: MetricContext,
    clusters: Sequence[str | None] | None,
) -> tuple[float, str] | None:
    """The metric's own paired test (``paired_p_value``): its p-value and name, or ``None``.

    Called with the arguments its paired bootstrap got. ``None`` when the metric has no such
    test or its test gives no p-value (then the bootstrap's p-value stands).

    Raises:
        ConfigError: the test returns something other than ``(p-value or None, name)``.
    """
    test = getattr(metric, "paired_p_value", None)
    if test is None:
        return None
    answer = test(scores_a, scores_b, ctx, clusters=clusters)
    ok = isinstance(answer, tuple) and len(answer) == 2 and isinstance(answer[1], str)
    if ok and answer[0] is not None:
        value = answer[0]
        ok = not isinstance(value, bool) and isinstance(value, (int, float))
        ok = ok and 0.0 <= float(value) <= 1.0
    if not ok or not answer[1].strip():
        raise ConfigError(
            f"The metric of {label!r} ({type(metric).__qualname__}): `paired_p_value` returned "
            f"{answer!r}; it must return a pair (p-value in [0, 1] or None, the test's name)."
        )
    if answer[0] is None:
        return None
    return float(answer[0]), str(answer[1]).strip()


def _with_own_test(fields: dict[str, Any], own: tuple[float, str] | None) -> dict[str, Any]:
    """``fields`` with the metric's own test's p-value and its name appended to the method."""
    if own is None:
        return fields
    return {**fields, "p_value": own[0], "method": f"{fields['method']}, {own[1]}"}


def _degenerate(
    p: _Paired,
    rows: NDArray[np.intp],
    clusters: list[str | None] | None,
    ctx: MetricContext,
    name: str,
    value_a: float,
    value_b: float,
) -> dict[str, Any]:
    """A bootstrap whose every resample gives one difference: it measures no spread.

    Its percentile interval has zero width and its p-value is ``2 / (B + 1)`` whatever the
    data: neither may be reported. The test becomes the exact sign test on the per-item
    differences, by cluster when there are clusters (when every pair has a value on both
    sides; otherwise there is no test, ``p = None``), and the interval square-and-adds each
    side's own interval on the paired items (:func:`_stats.mover`), which for a metric that
    collapses like this is its Wilson bound (F1 of items that are all right).
    """
    assert p.metric is not None
    assert p.scores_a is not None
    assert p.scores_b is not None
    scores_a = cast("Sequence[ItemScore]", _take(p.scores_a, rows))
    scores_b = cast("Sequence[ItemScore]", _take(p.scores_b, rows))
    values_a = [s.value for s in scores_a]
    values_b = [s.value for s in scores_b]
    p_value: float | None = None
    test = "no exact test"
    if None not in values_a and None not in values_b:
        codes = None if clusters is None else _stats.cluster_codes(clusters)[0]
        p_value = _stats.sign_test(
            *_stats.sign_counts(
                np.asarray(values_a, dtype=np.float64),
                np.asarray(values_b, dtype=np.float64),
                codes,
            )
        )
        test = "cluster-sign-test" if clusters is not None else "sign-test"
    own = attrs.evolve(ctx, clusters=clusters)
    side_a = p.metric.aggregate(scores_a, attrs.evolve(own, model=p.baseline))
    side_b = p.metric.aggregate(scores_b, attrs.evolve(own, model=p.candidate))
    difference = value_b - value_a
    low: float | None = None
    high: float | None = None
    interval = "no interval"
    if None not in (side_a.low, side_a.high, side_b.low, side_b.high):
        low, high = _stats.mover(
            difference,
            (value_a, cast("float", side_a.low), cast("float", side_a.high)),
            (value_b, cast("float", side_b.low), cast("float", side_b.high)),
        )
        low, high = min(low, difference), max(high, difference)
        interval = "mover"
    return {
        "difference": difference,
        "ci_low": low,
        "ci_high": high,
        "p_value": p_value,
        "method": f"{test}, {interval} ({name} degenerate: every resample gives one difference)",
        "mde": None,
    }


#: Pairs compared one by one before :func:`_differing_pairs` compares whole columns.
_HEAD = 512


def _differing_pairs(
    scores_a: Sequence[ItemScore | None],
    scores_b: Sequence[ItemScore | None],
    rows: NDArray[np.intp],
    limit: int,
) -> int:
    """How many of the pairs at ``rows`` differ in state, value or ``extra``, up to ``limit``.

    Models that differ often reach ``limit`` within the first few hundred pairs, compared
    score by score. Past those, score columns are compared column by column (states and
    values as arrays, extras only where those agree), without building a score per item.
    """

    def one_by_one(rows: NDArray[np.intp], count: int) -> int:
        for i in rows.tolist():
            if count >= limit:
                break
            a, b = scores_a[i], scores_b[i]
            if (
                a is None
                or b is None
                or (a.status, a.value, a.extra) != (b.status, b.value, b.extra)
            ):
                count += 1
        return count

    count = one_by_one(rows[:_HEAD], 0)
    rows = rows[_HEAD:]
    if count >= limit or not isinstance(scores_a, ScoreColumn):
        return one_by_one(rows, count)
    if not isinstance(scores_b, ScoreColumn):
        return one_by_one(rows, count)
    picked = rows.tolist()
    states_a = np.frombuffer(bytes(scores_a.states), dtype=np.uint8)[rows]
    states_b = np.frombuffer(bytes(scores_b.states), dtype=np.uint8)[rows]
    get_a, get_b = scores_a.values.__getitem__, scores_b.values.__getitem__
    values_a = np.array([math.nan if v is None else v for v in map(get_a, picked)])
    values_b = np.array([math.nan if v is None else v for v in map(get_b, picked)])
    differ = (states_a != states_b) | ~(
        (values_a == values_b) | (np.isnan(values_a) & np.isnan(values_b))
    )
    count += int(np.count_nonzero(differ))
    extras_a, extras_b = scores_a.extras, scores_b.extras
    if count >= limit or (extras_a is None and extras_b is None):
        return min(count, limit)
    for i in rows[~differ].tolist():
        if (None if extras_a is None else extras_a[i]) != (
            None if extras_b is None else extras_b[i]
        ):
            count += 1
            if count >= limit:
                break
    return count


def resample_weights(
    n: int, n_resamples: int, seed: int, clusters: Sequence[str | None] | None = None
) -> NDArray[np.int64]:
    """Bootstrap weights: how often each item appears in each resample, ``(B, n)``.

    Items are drawn with replacement; with ``clusters``, whole clusters are drawn (an item
    whose cluster is None is a cluster of its own) and every item of a drawn cluster counts.
    """
    rng = np.random.default_rng(seed)
    if clusters is None:
        return np.asarray(rng.multinomial(n, np.full(n, 1.0 / n), size=n_resamples))
    codes, n_clusters = _stats.cluster_codes(clusters)
    draws = rng.multinomial(n_clusters, np.full(n_clusters, 1.0 / n_clusters), size=n_resamples)
    return np.asarray(draws[:, codes])


def _loop_resamples(
    metric: Metric,
    scores_a: Sequence[ItemScore],
    scores_b: Sequence[ItemScore],
    ctx: MetricContext,
    n_resamples: int,
    clusters: list[str | None] | None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Both sides' own aggregate on the same resampled ids, one call per resample."""
    n = len(scores_a)
    out_a = np.full(n_resamples, np.nan)
    out_b = np.full(n_resamples, np.nan)
    block = max(1, (1 << 20) // max(n, 1))
    for start in range(0, n_resamples, block):
        stop = min(start + block, n_resamples)
        weights = resample_weights(n, stop - start, ctx.seed + start, clusters)
        for row, counts in enumerate(weights, start):
            index = np.repeat(np.arange(n), counts).tolist()
            a = metric.aggregate(_resampled(scores_a, index), ctx).value
            b = metric.aggregate(_resampled(scores_b, index), ctx).value
            out_a[row] = math.nan if a is None else a
            out_b[row] = math.nan if b is None else b
    return out_a, out_b


def _resampled(scores: Sequence[ItemScore], index: list[int]) -> Sequence[ItemScore]:
    """The scores at ``index``: a score column stays a column (no record built per item)."""
    if isinstance(scores, ScoreColumn):
        return scores.take(index)
    return [scores[i] for i in index]
