"""Paired comparison of models: which is better, by how much, and how sure we can be.

:func:`compare` pairs the items of two models by id and, for every metric label both sides
have, computes the difference ``value_b - value_a`` with an interval and a p-value:

- ratio metrics (the default aggregate with ``aggregation = "ratio"``): the exact McNemar test
  on the discordant pairs and Newcombe's hybrid score interval (1998, method 10);
- mean metrics: the paired t interval and test on the per-item differences;
- metrics with their own aggregate (f1, plugins overriding ``aggregate``) and geometric means:
  a seeded paired bootstrap over item ids, both sides recomputed on the same resampled ids
  (vectorised when the metric has ``paired_bootstrap``, as f1 does);
- items with a ``cluster``: cluster-robust standard errors for ratio and mean metrics, a
  cluster bootstrap (whole clusters resampled) for the others.

p-values of several comparisons are adjusted (Holm by default, or Benjamini-Hochberg): the
headline comparisons of one metric across model pairs form one family, the group comparisons
of one metric and one pair another.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

import attrs
import numpy as np

from . import _stats
from ._columns import ScoreColumn
from ._exceptions import ConfigError, describe_exception, did_you_mean, one_of
from ._metric import Metric, MetricContext
from ._records import EMPTY, ItemScore, Measurement
from .aggregate import _check_confidence, percentile_interval

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ._result import RunResult

__all__ = ["Comparison", "compare", "significant_leaders"]

Kind = Literal["ratio", "mean", "bootstrap"]

#: Bootstrap resamples of a paired bootstrap.
N_RESAMPLES = 2000
#: Bootstrap resamples when a metric's own aggregate is called once per resample.
N_RESAMPLES_LOOP = 500


def _freeze(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return value if value else EMPTY


@attrs.frozen(kw_only=True)
class Comparison:
    """One metric compared between two models on the items they share.

    ``difference`` is always ``value_b - value_a`` (candidate minus baseline);
    ``higher_is_better`` says which sign is an improvement.
    """

    #: ``"<suite_id>.<label>"``, the key of the measurements compared.
    key: str
    #: The metric's label.
    metric: str
    #: The baseline model (side a).
    baseline: str | None
    #: The candidate model (side b).
    candidate: str | None
    #: The baseline's value on the paired items.
    value_a: float | None = None
    #: The candidate's value on the paired items.
    value_b: float | None = None
    #: ``value_b - value_a``.
    difference: float | None = None
    #: Lower end of the interval of the difference.
    ci_low: float | None = None
    #: Upper end of the interval of the difference.
    ci_high: float | None = None
    #: Two-sided p-value of "no difference".
    p_value: float | None = None
    #: ``p_value`` adjusted for the other comparisons of its family (see ``adjustment``).
    p_adjusted: float | None = None
    #: How the interval and p-value were computed.
    method: str = "none"
    #: Confidence level of the interval (the run's level).
    confidence: float = 0.95
    #: Pairs scored (ok or fail) on both sides.
    n_pairs: int = 0
    #: Items left out: skip or error on either side, or an id only one side has.
    n_unpaired: int = 0
    #: Smallest true difference the test detects with 80% power at the run's level.
    mde: float | None = None
    #: Whether a larger value is better.
    higher_is_better: bool = True
    #: The multiple-comparison adjustment of ``p_adjusted``: "holm", "bh" or "none".
    adjustment: str = "holm"
    #: One comparison per item group, same shape.
    groups: Mapping[str, Comparison] = attrs.field(default=EMPTY, converter=_freeze)
    #: Secondary numbers: discordant pairs, clusters, design effect, resamples...
    extra: Mapping[str, float] = attrs.field(default=EMPTY, converter=_freeze)

    def _repr_html_(self) -> str:
        """The comparison and its groups as an HTML table, for notebooks."""
        from .reports._notebook import comparison_html

        return comparison_html(self)

    @property
    def significant(self) -> bool:
        """Whether the adjusted p-value is below ``1 - confidence``."""
        return self.p_adjusted is not None and self.p_adjusted < 1.0 - self.confidence

    @property
    def better(self) -> str | None:
        """The model the difference favours when it is significant, else ``None``."""
        if not self.significant or not self.difference:
            return None
        up = self.difference > 0
        return self.candidate if up == self.higher_is_better else self.baseline

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready data (groups nested the same way)."""
        data = {
            field.name: getattr(self, field.name)
            for field in attrs.fields(Comparison)
            if field.name not in ("groups", "extra")
        }
        data["extra"] = dict(self.extra)
        data["groups"] = {name: c.to_dict() for name, c in self.groups.items()}
        return data


# --------------------------------------------------------------------------- reading results


class _Columns:
    """A result's run table as compare reads it: ids, models, groups, clusters, scores."""

    def __init__(self, result: RunResult) -> None:
        table = result.table
        self.table = table
        self.result = result
        self.n = len(table)
        self.ids: list[str] = table.key("id")
        self.groups: list[str | None] | None = table.key("group") if table.has("group") else None
        self.clusters: list[str | None] | None = (
            table.key("cluster") if table.has("cluster") else None
        )

    def scores(self, label: str) -> ScoreColumn:
        return self.table.score(label)

    def codes(self, label: str) -> NDArray[np.int8]:
        """Status codes of ``label`` per item: 0 ok, 1 fail, 2 skip, 3 error."""
        return self.table.codes(label)

    def values(self, label: str) -> NDArray[np.float64]:
        """Values of ``label`` per item (NaN where none)."""
        return self.table.values(label)

    def rows_of(self, model: str | None, several: bool) -> NDArray[np.intp]:
        """Positions of ``model``'s items (all of them when the run has one model)."""
        if not several:
            return np.arange(self.n)
        models = self.table.key("model")
        return np.flatnonzero(np.fromiter((m == model for m in models), bool, self.n))

    def contents(self) -> tuple[list[str | None], list[Any]]:
        """Each item's ``input`` and ``expected``: what makes two items with one id the same."""
        inputs, expected = self.table.item_fields(("input", "expected"))
        return inputs, [None if e is None else tuple(e) for e in expected]


def _settings(result: RunResult) -> tuple[float, int, str]:
    settings = result.settings
    return float(settings.confidence), int(settings.seed), str(settings.suite_id)


def _measurements_of(result: RunResult, label: str) -> list[Measurement]:
    return [m for ms in result.by_model.values() for m in ms.values() if m.metric == label]


def _kind_of(result: RunResult, label: str) -> Kind:
    """The test a label's comparison uses, from how its measurements were made."""
    found = _measurements_of(result, label)
    aggregation = found[0].aggregation if found else "custom"
    if aggregation in ("ratio", "mean"):
        return cast("Kind", aggregation)
    return "bootstrap"


def _metric_for(result: RunResult, label: str, *, required: bool) -> Metric | None:
    """The configured metric of ``label``: needed to resample a metric's own aggregate.

    Raises:
        ConfigError: ``required`` and the metric cannot be configured here (not installed).
    """
    for entry in result.config.get("metrics", []):
        if entry.get("label") != label:
            continue
        spec = {"name": entry["name"], "label": label, **entry.get("options", {})}
        try:
            from ._plan import plan_metrics

            planned = plan_metrics([spec])
        except Exception as exc:
            if not required:
                return None
            raise ConfigError(
                f"Comparing {label!r} needs its metric {entry['name']!r}, whose own aggregate is "
                f"recomputed on resampled items, but it cannot be configured here "
                f"({describe_exception(exc)}). Install the package that provides it, or leave "
                "the label out with `metrics=`."
            ) from exc
        metric = planned[0].metric
        metric.bind(label)
        return metric
    if required:
        raise ConfigError(
            f"The results name no metric for the label {label!r}, so its own aggregate cannot "
            "be recomputed on resampled items; leave the label out with `metrics=`."
        )
    return None


# --------------------------------------------------------------------------- one comparison


@attrs.define
class _Paired:
    """The paired items of one metric and one pair of models (index arrays into each side)."""

    label: str
    key: str
    kind: Kind
    metric: Metric | None
    baseline: str | None
    candidate: str | None
    codes_a: NDArray[np.int8]
    codes_b: NDArray[np.int8]
    values_a: NDArray[np.float64] | None
    values_b: NDArray[np.float64] | None
    scores_a: Sequence[ItemScore | None] | None
    scores_b: Sequence[ItemScore | None] | None
    groups: list[str | None] | None
    clusters: list[str | None] | None
    n_only: int
    confidence: float
    seed: int
    suite_id: str
    higher_is_better: bool


def _compare_one(p: _Paired, select: NDArray[np.intp] | None) -> Comparison:
    codes_a = p.codes_a if select is None else p.codes_a[select]
    codes_b = p.codes_b if select is None else p.codes_b[select]
    valid = (codes_a < 2) & (codes_b < 2)
    rows = np.flatnonzero(valid)
    rows_full = select[rows] if select is not None else rows
    n = int(rows.size)
    n_unpaired = int(codes_a.size - n) + (p.n_only if select is None else 0)
    common: dict[str, Any] = {
        "key": p.key,
        "metric": p.label,
        "baseline": p.baseline,
        "candidate": p.candidate,
        "confidence": p.confidence,
        "n_pairs": n,
        "n_unpaired": n_unpaired,
        "higher_is_better": p.higher_is_better,
    }
    if n == 0:
        return Comparison(**common, method="none")
    clusters = None if p.kind == "bootstrap" else _pick(p.clusters, rows_full)
    if p.kind == "ratio":
        fields = _ratio(codes_a[rows] == 0, codes_b[rows] == 0, clusters, p.confidence)
    elif p.kind == "mean":
        assert p.values_a is not None
        assert p.values_b is not None
        bounds = None if p.metric is None else p.metric.value_bounds
        fields = _mean(p.values_a[rows_full], p.values_b[rows_full], clusters, p.confidence, bounds)
    else:
        fields = _bootstrap(p, select, rows_full)
    return Comparison(**common, **fields)


#: Why a comparison with clusters fell back, appended to its method in parentheses.
_ONE_CLUSTER = "1 cluster: items taken as independent"
_NO_SPREAD = "no spread between clusters"
#: Why a bootstrap p-value was raised: it fell below what its few differing pairs support.
_FLOORED = "p raised to 2/2^m, m differing pairs"


def _noted(method: str, note: str | None) -> str:
    """``method`` with the fallback it took, if any, in parentheses."""
    return method if note is None else f"{method} ({note})"


def _ratio(
    ok_a: NDArray[np.bool_],
    ok_b: NDArray[np.bool_],
    clusters: list[str | None] | None,
    confidence: float,
) -> dict[str, Any]:
    n = ok_a.size
    both = int(np.count_nonzero(ok_a & ok_b))
    only_a = int(np.count_nonzero(ok_a & ~ok_b))
    only_b = int(np.count_nonzero(ok_b & ~ok_a))
    neither = n - both - only_a - only_b
    value_a, value_b = (both + only_a) / n, (both + only_b) / n
    extra = {"only_baseline": float(only_a), "only_candidate": float(only_b)}
    note = None
    if clusters is not None:
        diffs = ok_b.astype(np.float64) - ok_a.astype(np.float64)
        clustered, note = _clustered(
            diffs, clusters, confidence, values=(value_a, value_b), bounds=(0.0, 1.0), scale=1.0
        )
        if clustered is not None:
            extra.update(clustered.pop("extra"))
            return {"value_a": value_a, "value_b": value_b, **clustered, "extra": extra}
    theta, low, high = _stats.newcombe_paired(both, only_b, only_a, neither, confidence)
    return {
        "value_a": value_a,
        "value_b": value_b,
        "difference": theta,
        "ci_low": low,
        "ci_high": high,
        "p_value": _stats.mcnemar_exact(only_a, only_b),
        "method": _noted("mcnemar-exact, newcombe-10", note),
        "mde": _stats.mcnemar_mde(n, only_a + only_b, confidence),
        "extra": extra,
    }


def _clustered(
    diffs: NDArray[np.float64],
    clusters: list[str | None],
    confidence: float,
    *,
    values: tuple[float, float],
    bounds: tuple[float, float] | None,
    scale: float,
) -> tuple[dict[str, Any] | None, str | None]:
    """Cluster-robust paired t on the differences, or why it cannot be estimated.

    Returns the comparison's fields, or ``None`` and the fallback the caller's iid test must
    name (one cluster: no between-cluster variance at all). When every cluster has the same
    mean difference (``se = 0``, rounding noise included) the clusters are still the sample:
    the cluster sign test (every cluster one way: ``p = 2 / 2^G``) and, for values in
    ``bounds``, the Wilson bounds of both sides' ``values`` as shares of that range over ``G``
    trials at the t(G-1) quantile, combined by square-and-add. ``scale``: the size of the
    values the differences came from, for telling a zero mean from rounding.
    """
    from .aggregate import _cluster_se, _t_bounds

    codes, n_clusters = _stats.cluster_codes(clusters)
    n = diffs.size
    if n_clusters < 2:
        return None, _ONE_CLUSTER
    mean = float(diffs.mean())
    se = _cluster_se(diffs, mean, codes, n_clusters)
    t_low, t_high = _t_bounds(n_clusters - 1, confidence)
    naive = float(diffs.std(ddof=1)) / math.sqrt(n) if n > 1 else 0.0
    extra = {
        "n_clusters": float(n_clusters),
        "se_cluster": se,
        "design_effect": (se / naive) ** 2 if se > 0 and naive > 0 else n / n_clusters,
    }
    width = None if bounds is None else bounds[1] - bounds[0]
    if se > 0.0:
        low, high = mean + t_low * se, mean + t_high * se
        if width is not None:
            low, high = max(low, -width), min(high, width)
        fields = {
            "difference": mean,
            "ci_low": low,
            "ci_high": high,
            "p_value": _stats.t_two_sided_p(mean / se, n_clusters - 1),
            "method": "cluster-paired-t",
            "mde": _stats.mde(se, confidence, n_clusters - 1),
            "extra": extra,
        }
        return fields, None
    zero = _stats.is_constant(np.array([0.0, mean]), scale)
    low = high = mean
    method = "cluster-sign-test"
    if bounds is not None and width is not None:
        share_a, share_b = ((v - bounds[0]) / width for v in values)
        share_low, share_high = _stats.wilson_difference(
            share_a, share_b, float(n_clusters), confidence, z=t_high
        )
        low, high = min(share_low * width, mean), max(share_high * width, mean)
        method = "cluster-sign-test, cluster-wilson-bound"
    fields = {
        "difference": mean,
        "ci_low": low,
        "ci_high": high,
        "p_value": 1.0 if zero else _stats.sign_test(n_clusters, 0),
        "method": _noted(method, _NO_SPREAD),
        "mde": None,
        "extra": extra,
    }
    return fields, None


def _mean(
    values_a: NDArray[np.float64],
    values_b: NDArray[np.float64],
    clusters: list[str | None] | None,
    confidence: float,
    bounds: tuple[float, float] | None,
) -> dict[str, Any]:
    n = values_a.size
    value_a, value_b = float(values_a.mean()), float(values_b.mean())
    diffs = values_b - values_a
    # Differences are as exact as the values they came from: spreads within their rounding
    # are no spread ((a + 0.1) - a is not the same float for every a).
    scale = max(float(np.max(np.abs(values_a))), float(np.max(np.abs(values_b))))
    out: dict[str, Any] = {"value_a": value_a, "value_b": value_b}
    note = None
    if clusters is not None:
        clustered, note = _clustered(
            diffs, clusters, confidence, values=(value_a, value_b), bounds=bounds, scale=scale
        )
        if clustered is not None:
            return {**out, **clustered}
    width = None if bounds is None else bounds[1] - bounds[0]
    if n > 1 and not _stats.is_constant(diffs, scale):
        mean, se, low, high, p = _stats.paired_t(diffs, confidence)
        if width is not None:
            low, high = max(low, -width), min(high, width)
        return {
            **out,
            "difference": mean,
            "ci_low": low,
            "ci_high": high,
            "p_value": p,
            "method": _noted("paired-t", note),
            "mde": _stats.mde(se, confidence, n - 1),
        }
    # Every pair differs by the same amount (or one pair): no spread to estimate. The sign
    # test is exact; a bounded metric gets Newcombe's square-and-add of the Wilson bounds.
    d = float(diffs.mean())
    zero = _stats.is_constant(np.array([0.0, d]), scale)
    low = high = d
    method = "sign-test"
    if bounds is not None and width is not None:
        share_a, share_b = ((v - bounds[0]) / width for v in (value_a, value_b))
        share_low, share_high = _stats.wilson_difference(share_a, share_b, n, confidence)
        low, high = min(share_low * width, d), max(share_high * width, d)
        method = "sign-test, newcombe-wilson-bound"
    return {
        **out,
        "difference": d,
        "ci_low": low,
        "ci_high": high,
        "p_value": 1.0 if zero else _stats.sign_test(n, 0),
        "method": _noted(method, note),
        "mde": None,
    }


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
    clusters = None if p.clusters is None else _pick(p.clusters, rows)
    if resampler is not None:
        # The metric leaves out pairs not scored on both sides itself: no copy of the scores.
        every = np.arange(len(p.scores_a)) if select is None else select
        n_resamples = N_RESAMPLES
        value_a, value_b, samples_a, samples_b = resampler(
            _take(p.scores_a, every),
            _take(p.scores_b, every),
            ctx,
            n_resamples=n_resamples,
            clusters=None if p.clusters is None else _pick(p.clusters, every),
        )
    else:
        scores_a = cast("Sequence[ItemScore]", _take(p.scores_a, rows))
        scores_b = cast("Sequence[ItemScore]", _take(p.scores_b, rows))
        value_a = metric.aggregate(scores_a, attrs.evolve(ctx, model=p.baseline)).value
        value_b = metric.aggregate(scores_b, attrs.evolve(ctx, model=p.candidate)).value
        n_resamples = N_RESAMPLES_LOOP
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
    scale = max(abs(value_a), abs(value_b), float(np.max(np.abs(diffs))))
    if _stats.is_constant(diffs, scale):
        return {
            **out,
            **_degenerate(p, rows, clusters, ctx, name, value_a, value_b),
            "extra": extra,
        }
    low, high = percentile_interval(diffs, p.confidence)
    raw = _stats.bootstrap_p(diffs)
    # The floor 2 / 2^m binds only for m < 1 - log2(p): count differing pairs that far.
    limit = math.ceil(1.0 - math.log2(raw)) + 1
    n_differing = _differing_pairs(p.scores_a, p.scores_b, rows, limit)
    p_value = _stats.bootstrap_p(diffs, n_differing)
    method = name
    if p_value > raw:  # then the count stopped below its limit: it is exact
        extra["n_differing"] = float(n_differing)
        method = _noted(name, _FLOORED)
    se = float(diffs.std(ddof=1)) if diffs.size > 1 else 0.0
    return {
        **out,
        "difference": difference,
        "ci_low": low,
        "ci_high": high,
        "p_value": p_value,
        "method": method,
        "mde": _stats.mde(se, p.confidence) if se > 0 else None,
        "extra": extra,
    }


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
    head, rows = rows[:_HEAD], rows[_HEAD:]
    count = 0
    for i in head.tolist():
        a, b = scores_a[i], scores_b[i]
        if a is None or b is None or (a.status, a.value, a.extra) != (b.status, b.value, b.extra):
            count += 1
            if count >= limit:
                return count
    if isinstance(scores_a, ScoreColumn) and isinstance(scores_b, ScoreColumn):
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
        return min(count, limit)
    for i in rows.tolist():
        a, b = scores_a[i], scores_b[i]
        if a is None or b is None or (a.status, a.value, a.extra) != (b.status, b.value, b.extra):
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


# --------------------------------------------------------------------------- pairing


def _align(ids_a: list[str], ids_b: list[str]) -> tuple[NDArray[np.intp], NDArray[np.intp], int]:
    """Positions in a and in b of the ids both have, and how many ids only one side has."""
    if ids_a == ids_b:
        index = np.arange(len(ids_a))
        return index, index, 0
    where_b = {item_id: i for i, item_id in enumerate(ids_b)}
    pos_b = np.fromiter((where_b.get(i, -1) for i in ids_a), dtype=np.intp, count=len(ids_a))
    found = pos_b >= 0
    ia = np.flatnonzero(found)
    ib = pos_b[found]
    return ia, ib, (len(ids_a) - ia.size) + (len(ids_b) - ib.size)


def _check_adjust(adjust: object) -> str:
    if isinstance(adjust, str) and adjust in _stats.ADJUSTMENTS:
        return adjust
    hint = did_you_mean(adjust, _stats.ADJUSTMENTS) if isinstance(adjust, str) else ""
    raise ConfigError(f"`adjust` ({adjust!r}) must be one of {one_of(_stats.ADJUSTMENTS)}.{hint}")


def _model_names(result: RunResult) -> list[str | None]:
    return list(result.by_model) or [None]


def compare(
    result: RunResult,
    other: RunResult | str | None = None,
    *,
    baseline: str | None = None,
    metrics: Sequence[str] | None = None,
    adjust: str = "holm",
    confidence: float | None = None,
    seed: int | None = None,
    allow_different_inputs: bool = False,
) -> list[Comparison]:
    """Compare models on the items they share, metric by metric.

    - ``compare(result)``: every pair of models of one run (the earlier one is the baseline);
      ``compare(result, "model-a")`` or ``compare(result, baseline="model-a")``: every model
      against ``model-a``.
    - ``compare(result_a, result_b)``: two runs (two saved results, or one model before and
      after a change); models of the same name are compared, or the only model of each.

    Items pair by id (and by model inside one result). A pair where either side is skip or
    error is left out and counted in ``n_unpaired``, as is an id only one side has.

    Args:
        result: A run, or the baseline run.
        other: The candidate run, or the baseline model's name.
        baseline: The baseline model (one run only).
        metrics: Labels to compare (default: every label both sides have).
        adjust: Multiple-comparison adjustment: "holm" (default), "bh" or "none".
        confidence: Confidence level (default: the run's).
        seed: Seed of the bootstraps (default: the run's).
        allow_different_inputs: Pair items by id even when their ``input`` or ``expected``
            differ between the sides (by default that is an error: different data).

    Returns:
        One :class:`Comparison` per metric label and pair of models, in the order of the
        labels, with per-group comparisons in ``groups``.

    Raises:
        ConfigError: an unknown model or label, a bad ``adjust`` or ``confidence``; one model
            and nothing to compare it with; sides that share no item, or whose items with one
            id differ (unless ``allow_different_inputs``); a metric whose own aggregate must be
            recomputed but is not installed.
    """
    return _comparisons(
        result, other, baseline=baseline, metrics=metrics, adjust=adjust,
        confidence=confidence, seed=seed, allow_different_inputs=allow_different_inputs,
        with_groups=True,
    )  # fmt: skip


def _comparisons(
    result: RunResult,
    other: RunResult | str | None,
    *,
    baseline: str | None,
    metrics: Sequence[str] | None,
    adjust: str,
    confidence: float | None,
    seed: int | None,
    allow_different_inputs: bool,
    with_groups: bool,
) -> list[Comparison]:
    """:func:`compare`; ``with_groups=False`` leaves the group comparisons out (bold cells)."""
    adjust = _check_adjust(adjust)
    if isinstance(other, str):
        if baseline is not None and baseline != other:
            raise ConfigError(
                f"The baseline is given twice ({other!r} and {baseline!r}); give it once."
            )
        baseline, other = other, None
    run_confidence, run_seed, suite_id = _settings(result)
    level = run_confidence if confidence is None else _check_confidence(confidence)
    seed = run_seed if seed is None else seed

    col_a = _Columns(result)
    col_b = col_a if other is None else _Columns(other)
    models_a = _model_names(result)
    pairs: list[tuple[str | None, str | None, str | None, str | None]] = []
    if other is None:
        if len(models_a) < 2:
            raise ConfigError(
                f"The run has {'one model' if models_a != [None] else 'no model names'}, so "
                "there is nothing to compare within it: give a second run to compare against "
                "(compare(result_a, result_b)), or score several models in one run (the role "
                "`model`)."
            )
        if baseline is not None and baseline not in models_a:
            names = [m for m in models_a if m is not None]
            raise ConfigError(
                f"`baseline` ({baseline!r}) is no model of the run; its models are "
                f"{one_of(names)}.{did_you_mean(baseline, names)}"
            )
        if baseline is not None:
            pairs = [(baseline, m, baseline, m) for m in models_a if m != baseline]
        else:
            pairs = [(a, b, a, b) for i, a in enumerate(models_a) for b in models_a[i + 1 :]]
    else:
        if baseline is not None:
            raise ConfigError(
                "`baseline` applies to the models of one run; with two runs the first is the "
                "baseline."
            )
        models_b = _model_names(other)
        shared = [m for m in models_a if m in models_b]
        if len(models_a) == 1 and len(models_b) == 1:
            shared = []
            ma, mb = models_a[0], models_b[0]
            na, nb = (ma, mb) if ma != mb else (_tag(ma, "a"), _tag(mb, "b"))
            pairs = [(ma, mb, na, nb)]
        elif not shared:
            raise ConfigError(
                f"The two runs share no model (first: {one_of(models_a)}; second: "
                f"{one_of(models_b)}); compare runs of one model each, or of the same models."
            )
        else:
            pairs = [(m, m, _tag(m, "a"), _tag(m, "b")) for m in shared]

    labels_a = _labels(result)
    labels_b = set(_labels(other)) if other is not None else set(labels_a)
    labels = [label for label in labels_a if label in labels_b]
    if metrics is not None:
        unknown = [m for m in metrics if m not in labels]
        if unknown:
            raise ConfigError(
                f"`metrics` names {one_of(unknown)}, which {'is' if len(unknown) == 1 else 'are'}"
                f" not a label of both runs; the shared labels are {one_of(labels)}."
                f"{did_you_mean(unknown[0], labels)}"
            )
        labels = [label for label in labels if label in metrics]

    several_a = len(models_a) > 1
    several_b = len(_model_names(other)) > 1 if other is not None else several_a
    aligned = []
    for model_a, model_b, name_a, name_b in pairs:
        rows_a = col_a.rows_of(model_a, several_a)
        rows_b = col_b.rows_of(model_b, several_b)
        ids_a = [col_a.ids[i] for i in rows_a.tolist()] if several_a else col_a.ids
        ids_b = [col_b.ids[i] for i in rows_b.tolist()] if several_b else col_b.ids
        ia, ib, n_only = _align(ids_a, ids_b)
        ra, rb = rows_a[ia], rows_b[ib]
        aligned.append((name_a, name_b, ra, rb, n_only, _pick(col_a.groups, ra)))
    if labels and all(ra.size == 0 for _, _, ra, _, _, _ in aligned):
        raise ConfigError(
            "The items of the two sides share no id, so there is no pair to compare: compare "
            "runs over the same questions (items pair by id"
            + (", and by model within a run)." if other is None else ").")
        )
    if not allow_different_inputs:
        _check_same_items(col_a, col_b, aligned)
    out: list[Comparison] = []
    for label in labels:
        kind = _kind_of(result, label)
        # A mean's interval is clipped to its metric's value bounds when the metric is here.
        metric = (
            None if kind == "ratio" else _metric_for(result, label, required=kind == "bootstrap")
        )
        higher = _higher_is_better(result, label)
        family: list[Comparison] = []
        for name_a, name_b, ra, rb, n_only, groups in aligned:
            paired = _Paired(
                label=label,
                key=f"{suite_id}.{label}",
                kind=kind,
                metric=metric,
                baseline=name_a,
                candidate=name_b,
                codes_a=col_a.codes(label)[ra],
                codes_b=col_b.codes(label)[rb],
                values_a=col_a.values(label)[ra] if kind == "mean" else None,
                values_b=col_b.values(label)[rb] if kind == "mean" else None,
                scores_a=_take(col_a.scores(label), ra) if kind == "bootstrap" else None,
                scores_b=_take(col_b.scores(label), rb) if kind == "bootstrap" else None,
                groups=groups,
                clusters=_pick(col_a.clusters, ra),
                n_only=n_only,
                confidence=level,
                seed=seed,
                suite_id=suite_id,
                higher_is_better=higher,
            )
            headline = _compare_one(paired, None)
            if with_groups:
                headline = attrs.evolve(headline, groups=_by_group(paired, adjust))
            family.append(headline)
        out.extend(_adjusted(family, adjust))
    return out


def _pick(column: list[str | None] | None, rows: NDArray[np.intp]) -> list[str | None] | None:
    """``column`` at ``rows``; ``None`` when it holds nothing but ``None``."""
    if column is None:
        return None
    picked = column if _is_whole(rows, len(column)) else [column[i] for i in rows.tolist()]
    return None if picked.count(None) == len(picked) else picked


def _is_whole(rows: NDArray[np.intp], n: int) -> bool:
    return rows.size == n and (n == 0 or (rows[0] == 0 and bool(np.all(np.diff(rows) == 1))))


def _tag(model: str | None, side: str) -> str:
    return f"{model} ({side})" if model is not None else side


def _take(column: Sequence[ItemScore | None], rows: NDArray[np.intp]) -> Sequence[ItemScore | None]:
    whole = _is_whole(rows, len(column))
    if isinstance(column, ScoreColumn):
        return column if whole else column.take(rows.tolist())
    if whole:
        return list(column)
    return [column[i] for i in rows.tolist()]


def _labels(result: RunResult) -> list[str]:
    labels = list(result.labels)
    if labels:
        return labels
    seen: dict[str, None] = {}
    for measurements in result.by_model.values():
        for m in measurements.values():
            seen.setdefault(m.metric, None)
    return list(seen)


def _check_same_items(col_a: _Columns, col_b: _Columns, aligned: Sequence[Any]) -> None:
    """Paired items must be the same item: equal ``input`` and ``expected`` on both sides.

    Raises:
        ConfigError: some pairs hold different questions or answer keys (the first few named).
    """
    inputs_a, expected_a = col_a.contents()
    inputs_b, expected_b = (inputs_a, expected_a) if col_b is col_a else col_b.contents()
    differ: list[str] = []
    n_differ = 0
    for _, _, ra, rb, _, _ in aligned:
        for i, j in zip(ra.tolist(), rb.tolist()):
            # An item without an answer key on one side is skipped there, never scored
            # against a different key: only two keys can disagree.
            key_a, key_b = expected_a[i], expected_b[j]
            if inputs_a[i] != inputs_b[j] or (
                key_a is not None and key_b is not None and key_a != key_b
            ):
                n_differ += 1
                if len(differ) < 5 and col_a.ids[i] not in differ:
                    differ.append(col_a.ids[i])
    if n_differ:
        shown = ", ".join(repr(i) for i in differ)
        raise ConfigError(
            f"{n_differ} paired item{'s' if n_differ != 1 else ''} with one id "
            f"{'hold' if n_differ != 1 else 'holds'} a different input or answer key on the "
            f"two sides (ids {shown}{', ...' if n_differ > len(differ) else ''}): these are not "
            "the same questions, and pairing them would compare different data. Check that "
            "both runs scored the same benchmark; pass allow_different_inputs=True "
            "(--allow-different-inputs) to pair by id anyway."
        )


def _higher_is_better(result: RunResult, label: str) -> bool:
    for measurements in result.by_model.values():
        for m in measurements.values():
            if m.metric == label:
                return m.higher_is_better
    return True


def _by_group(paired: _Paired, adjust: str) -> dict[str, Comparison]:
    if paired.groups is None:
        return {}
    members: dict[str, list[int]] = {}
    for index, group in enumerate(paired.groups):
        if group is not None:
            members.setdefault(group, []).append(index)
    if not members:
        return {}
    names = sorted(members)
    comparisons = [_compare_one(paired, np.asarray(members[name], dtype=np.intp)) for name in names]
    return dict(zip(names, _adjusted(comparisons, adjust)))


def _adjusted(family: list[Comparison], adjust: str) -> list[Comparison]:
    """``family`` with ``p_adjusted`` filled in by ``adjust`` over the p-values it has."""
    tested = [i for i, c in enumerate(family) if c.p_value is not None]
    adjusted = _stats.adjust_pvalues([cast("float", family[i].p_value) for i in tested], adjust)
    out = [attrs.evolve(c, adjustment=adjust) for c in family]
    for i, value in zip(tested, adjusted.tolist()):
        out[i] = attrs.evolve(out[i], p_adjusted=value)
    return out


# --------------------------------------------------------------------------- bold cells


def significant_leaders(result: RunResult) -> dict[str, str]:
    """Per metric label, the model whose lead over every other model is significant.

    The leader is the model with the best value (by ``higher_is_better``); it is returned only
    when its paired comparison against every other model has a Holm-adjusted p-value below
    ``1 - confidence`` (the run's level) and favours it. With one model the result is empty.
    """
    models = [m for m in result.by_model if m is not None]
    if len(models) < 2:
        return {}
    leaders: dict[str, str] = {}
    by_label: dict[str, list[Comparison]] = {}
    try:
        comparisons = _comparisons(
            result, None, baseline=None, metrics=None, adjust="holm", confidence=None,
            seed=None, allow_different_inputs=False, with_groups=False,
        )  # fmt: skip
    except ConfigError:  # models with nothing to pair, or a metric not installed: no bold
        return {}
    for c in comparisons:
        by_label.setdefault(c.metric, []).append(c)
    for label, comparisons in by_label.items():
        best = _best_model(result, label, models)
        if best is None:
            continue
        against = [c for c in comparisons if best in (c.baseline, c.candidate)]
        if len(against) != len(models) - 1:
            continue
        # A p-value that underflowed to 0.0 is the strongest evidence, not a missing one.
        p_values = [1.0 if c.p_value is None else c.p_value for c in against]
        adjusted = _stats.adjust_pvalues(p_values, "holm")
        alpha = 1.0 - against[0].confidence
        if all(
            p < alpha and c.difference is not None and c.difference != 0 and _favours(c, best)
            for c, p in zip(against, adjusted.tolist())
        ):
            leaders[label] = best
    return leaders


def _favours(c: Comparison, model: str) -> bool:
    assert c.difference is not None
    up = c.difference > 0
    winner = c.candidate if up == c.higher_is_better else c.baseline
    return winner == model


def _best_model(result: RunResult, label: str, models: list[str]) -> str | None:
    values: dict[str, float] = {}
    higher = True
    for model in models:
        for m in result.by_model.get(model, {}).values():
            if m.metric == label and m.value is not None:
                values[model] = m.value
                higher = m.higher_is_better
    if len(values) < 2:
        return None
    return (max if higher else min)(values, key=values.__getitem__)
