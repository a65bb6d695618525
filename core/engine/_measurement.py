"""One measurement's record: the fields every measurement has, and its making from an estimate.

Shared by the measurements made of a label's rows (:mod:`._measure`) and of its tally
(:mod:`._tallies`), so that both record the same fields the same way.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .._metric import Metric, MetricContext
from .._plan import PlannedMetric
from .._records import EMPTY, Estimate, Measurement, Status

__all__ = ["SMALL_GROUP", "aggregation_of", "common_fields", "failed", "macro_extra", "made"]

#: A group with fewer scored items than this is flagged: ``extra["small_group"] = 1.0``.
SMALL_GROUP = 30


def aggregation_of(pm: PlannedMetric) -> str:
    """How ``pm``'s measurement is made: ``ratio``, ``mean``, ``geomean`` or ``custom``."""
    metric = pm.metric
    if pm.is_corpus or type(metric).aggregate is not Metric.aggregate:
        return "custom"
    return metric.aggregation


def common_fields(
    pm: PlannedMetric, key: str, kind: str | None, ctx: MetricContext, counts: Mapping[Status, int]
) -> dict[str, Any]:
    """What every measurement records, whether it has a value or an error.

    ``kind``: the default aggregate it is made with instead of the metric's (``None``: the
    metric's own way).
    """
    metric = pm.metric
    return {
        "key": key,
        "suite": ctx.suite_id,
        "metric": pm.label,
        "model": ctx.model,
        "confidence": ctx.confidence,
        "n": counts[Status.OK] + counts[Status.FAIL],
        "counts": counts,
        "higher_is_better": metric.higher_is_better,
        "reproducibility_class": metric.reproducibility_class,
        "aggregation": kind or aggregation_of(pm),
    }


def made(
    common: Mapping[str, Any],
    estimate: Estimate,
    value: float | None,
    extra: dict[str, float],
    groups: Mapping[str, Measurement],
    named: Mapping[str, float],
    group: str | None,
) -> Measurement:
    """The measurement of an estimate, its interval's ends finite or ``None``.

    ``extra`` gets the small-group flag when ``group`` (the measurement's own group) has
    fewer than :data:`SMALL_GROUP` scored items, then ``named`` (the reducer's keys).
    """
    if group is not None and common["n"] < SMALL_GROUP:
        extra["small_group"] = 1.0
    extra.update(named)
    return Measurement(
        **common,
        value=value,
        ci_low=_finite_or_none(estimate.low),
        ci_high=_finite_or_none(estimate.high),
        ci_method=estimate.method,
        extra=extra or EMPTY,
        groups=groups,
    )


def failed(
    common: Mapping[str, Any],
    error: str,
    named: Mapping[str, float],
    groups: Mapping[str, Measurement] = EMPTY,
) -> Measurement:
    """A measurement that is an error (``named``: the reducer's keys, its only ``extra``)."""
    return Measurement(**common, groups=groups, error=error, extra=named or EMPTY)


def _finite_or_none(value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def macro_extra(estimate: Estimate) -> dict[str, float]:
    """The macro value and its interval as ``extra`` keys (see ``_measure._macro``)."""
    if estimate.value is None:
        return {}
    out = {"macro": estimate.value, "macro_groups": float(estimate.extra["n_groups"])}
    if estimate.low is not None and estimate.high is not None:
        out["macro_low"], out["macro_high"] = estimate.low, estimate.high
        out[f"macro_ci_method[{estimate.method}]"] = 1.0
    return out
