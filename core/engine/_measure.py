"""Measurements from a run table: one per metric and model, with per-group breakdowns.

Each metric's own ``aggregate`` turns its scores into an :class:`~itemscore.Estimate` (a corpus
metric's ``compute`` result stands for it); this module adds what every measurement shares —
the four counts, the groups, the macro value over groups, clusters, the small-group flag — and
records how the number was made (``Measurement.aggregation``), so that no reader has to
configure the metric again to learn it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from .._columns import ScoreColumn
from .._exceptions import describe_exception
from .._metric import Metric, MetricContext
from .._plan import PlannedMetric, RunPlan
from .._records import EMPTY, Estimate, Measurement, MetricResult, Status
from .._settings import RunSettings
from ._table import RunTable

__all__ = ["SMALL_GROUP", "aggregation_of", "compute_corpus", "measure_all"]

#: A group with fewer scored items than this is flagged: ``extra["small_group"] = 1.0``.
SMALL_GROUP = 30

#: A corpus metric's result (or the error text of its ``compute``) per (label, model).
CorpusResults = Mapping[tuple[str, "str | None"], "MetricResult | str"]


def aggregation_of(pm: PlannedMetric) -> str:
    """How ``pm``'s measurement is made: ``ratio``, ``mean``, ``geomean`` or ``custom``."""
    metric = pm.metric
    if pm.is_corpus or type(metric).aggregate is not Metric.aggregate:
        return "custom"
    return metric.aggregation


def compute_corpus(
    pm: PlannedMetric, outputs: Sequence[str | None], expected: Sequence[Any]
) -> MetricResult:
    """Call a corpus metric over all its rows; its exception propagates to the caller."""
    references = [None if e is None else tuple(e) for e in expected]
    result = pm.metric.compute(list(outputs), references)
    if not isinstance(result, MetricResult):
        raise TypeError(
            f"compute returned {type(result).__name__}, expected self.result(value, ...)"
        )
    if result.per_row is not None and len(result.per_row) != len(outputs):
        raise ValueError(
            f"compute returned {len(result.per_row)} per_row scores for {len(outputs)} rows"
        )
    return result


def _finite_or_none(value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


class _CorpusError(Exception):
    """A corpus metric's ``compute`` failed; its text is the measurement's error."""


@attrs.frozen
class _Subset:
    """The rows one measurement is made over, and what it needs of them."""

    rows: Sequence[int] | None  # None: every row of the table
    groups: Sequence[str | None] | None
    clusters: Sequence[str | None] | None


def _pick(values: Sequence[Any] | None, rows: Sequence[int] | None) -> Any:
    if values is None or rows is None:
        return values
    return [values[i] for i in rows]


def measure_all(
    plan: RunPlan,
    table: RunTable,
    settings: RunSettings,
    corpus: CorpusResults,
) -> tuple[dict[str, Measurement], dict[str | None, dict[str, Measurement]]]:
    """Every measurement of a run: pooled, and one dict per model.

    Returns:
        The headline measurements (pooled over models when there are several) and the
        measurements of each model, in order of the models' first appearance.
    """
    models = model_rows(table)
    groups = table.key("group") if table.has("group") else None
    clusters = table.key("cluster") if table.has("cluster") else None
    base = MetricContext(
        suite_id=settings.suite_id, confidence=settings.confidence,
        ci_method=settings.ci_method, seed=settings.seed, concurrency=settings.concurrency,
    )  # fmt: skip

    def measure(rows: Sequence[int] | None, model: str | None) -> dict[str, Measurement]:
        subset = _Subset(rows, _pick(groups, rows), _pick(clusters, rows))
        out: dict[str, Measurement] = {}
        for pm in plan.metrics:
            column = table.score(pm.label)
            if rows is not None:
                column = column.take(rows)
            ctx = attrs.evolve(base, label=pm.label, model=model)
            pooled = rows is None and len(models) > 1
            result = None if pooled else corpus.get((pm.label, model))
            m = _measure(pm, column, table, subset, ctx, corpus=result)
            out[m.key] = m
        return out

    if len(models) <= 1:
        model = next(iter(models), None)
        headline = measure(None, model)
        return headline, {model: headline}
    by_model = {model: measure(rows, model) for model, rows in models.items()}
    return measure(None, None), by_model


def model_rows(table: RunTable) -> dict[str | None, list[int]]:
    """Row positions by model, in order of first appearance (one entry without models)."""
    if not table.has("model"):
        return {None: list(range(len(table)))}
    out: dict[str | None, list[int]] = {}
    for index, model in enumerate(table.key("model")):
        out.setdefault(model, []).append(index)
    if len(out) == 1:
        return {next(iter(out)): list(range(len(table)))}
    return out


def _estimate(
    pm: PlannedMetric,
    scores: ScoreColumn,
    table: RunTable,
    rows: Sequence[int] | None,
    ctx: MetricContext,
    corpus: MetricResult | str | None,
) -> Estimate:
    """The metric's estimate for these scores: its aggregate, or a corpus metric's result."""
    if not pm.is_corpus:
        estimate = pm.metric.aggregate(scores, ctx)
        if not isinstance(estimate, Estimate):
            raise TypeError(
                f"aggregate returned {type(estimate).__name__}, expected itemscore.Estimate"
            )
        return estimate
    if corpus is None:  # a group, or several models pooled: compute over those rows
        outputs, expected = table.item_fields(("output", "expected"), rows)
        corpus = compute_corpus(pm, outputs, expected)
    if isinstance(corpus, str):
        raise _CorpusError(corpus)
    n = corpus.n_scored if corpus.n_scored is not None else scores.counts()[Status.OK]
    return Estimate(value=corpus.value, n=n, confidence=ctx.confidence, extra=corpus.extra)


def _measure(
    pm: PlannedMetric,
    scores: ScoreColumn,
    table: RunTable,
    subset: _Subset,
    ctx: MetricContext,
    *,
    corpus: MetricResult | str | None = None,
) -> Measurement:
    counts = scores.counts()
    metric = pm.metric
    common: dict[str, Any] = {
        "key": f"{ctx.suite_id}.{pm.label}",
        "suite": ctx.suite_id,
        "metric": pm.label,
        "model": ctx.model,
        "confidence": ctx.confidence,
        "n": counts[Status.OK] + counts[Status.FAIL],
        "counts": counts,
        "higher_is_better": metric.higher_is_better,
        "reproducibility_class": metric.reproducibility_class,
        "aggregation": aggregation_of(pm),
    }
    by_group: dict[str, Measurement] = {}
    if subset.groups is not None:
        members: dict[str, list[int]] = {}
        for index, group in enumerate(subset.groups):
            if group is not None:
                members.setdefault(group, []).append(index)
        for group in sorted(members):
            indices = members[group]
            rows = indices if subset.rows is None else [subset.rows[i] for i in indices]
            by_group[group] = _measure(
                pm,
                scores.take(indices),
                table,
                _Subset(rows, None, _pick(subset.clusters, indices)),
                attrs.evolve(ctx, group=group),
            )
    try:
        estimate = _estimate(
            pm, scores, table, subset.rows, attrs.evolve(ctx, clusters=subset.clusters), corpus
        )
        value = None if estimate.value is None else float(estimate.value)
        if value is not None and not math.isfinite(value):
            raise ValueError(f"aggregate returned a non-finite value ({value!r})")
    except _CorpusError as exc:
        return Measurement(**common, groups=by_group, error=str(exc))
    except Exception as exc:  # noqa: BLE001 - one failed aggregate spoils one measurement
        return Measurement(**common, groups=by_group, error=describe_exception(exc))
    extra = {k: float(v) for k, v in estimate.extra.items()} if estimate.extra else {}
    if by_group:
        assert subset.groups is not None
        extra.update(_macro(pm, scores, subset.groups, by_group, ctx.confidence))
    elif ctx.group is not None and common["n"] < SMALL_GROUP:
        extra["small_group"] = 1.0
    return Measurement(
        **common,
        value=value,
        ci_low=_finite_or_none(estimate.low),
        ci_high=_finite_or_none(estimate.high),
        ci_method=estimate.method,
        extra=extra or EMPTY,
        groups=by_group,
    )


def _macro(
    pm: PlannedMetric,
    scores: ScoreColumn,
    groups: Sequence[str | None],
    by_group: Mapping[str, Measurement],
    confidence: float,
) -> dict[str, float]:
    """The macro value (unweighted mean over groups) with its interval, for ``extra``.

    Metrics with the default ratio or mean aggregate: :func:`itemscore.aggregate.macro_mean`
    of the scored values (0/1 for a ratio), groups as fixed strata. Metrics with their own
    aggregate: the mean of the groups' values, with ``se = sqrt(sum(se_g^2)) / G`` where
    ``se_g = (high_g - low_g) / (2z)`` from each group's own interval (groups are disjoint, so
    independent); no interval when a group has none. With an interval, the key
    ``macro_ci_method[METHOD] = 1.0`` names its method (``extra`` holds floats only):
    ``macro-normal`` or ``macro-wilson`` (``macro_mean``), or ``macro-from-group-intervals``.
    """
    from statistics import NormalDist

    from .. import aggregate

    metric = pm.metric
    kind = aggregation_of(pm)
    if kind in ("ratio", "mean"):
        values: Sequence[float]
        if kind == "ratio":
            values, scored_groups = scores.scored_outcomes(groups)
            bounds: tuple[float, float] | None = (0.0, 1.0)
        else:
            values, scored_groups = scores.scored_values(), scores.scored_clusters(groups)
            bounds = metric.value_bounds
        estimate = aggregate.macro_mean(values, scored_groups, confidence=confidence, bounds=bounds)
        if estimate.value is None:
            return {}
        out = {"macro": estimate.value, "macro_groups": float(estimate.extra["n_groups"])}
        if estimate.low is not None and estimate.high is not None:
            out["macro_low"], out["macro_high"] = estimate.low, estimate.high
            out[f"macro_ci_method[{estimate.method}]"] = 1.0
        return out
    found = [g for g in by_group.values() if g.value is not None]
    if not found:
        return {}
    out = {
        "macro": math.fsum(g.value for g in found if g.value is not None) / len(found),
        "macro_groups": float(len(found)),
    }
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    halves = [
        (g.ci_high - g.ci_low) / 2 for g in found if g.ci_low is not None and g.ci_high is not None
    ]
    if len(halves) == len(found):
        se = math.sqrt(math.fsum((h / z) ** 2 for h in halves)) / len(found)
        low, high = out["macro"] - z * se, out["macro"] + z * se
        if metric.value_bounds is not None:  # F1 of every group near 1 never reaches past 1
            low, high = max(low, metric.value_bounds[0]), min(high, metric.value_bounds[1])
        out["macro_low"], out["macro_high"] = low, high
        out["macro_ci_method[macro-from-group-intervals]"] = 1.0
    return out
