"""What a run records from each metric about its measurements: name, unit, derived numbers.

Reports never configure a metric to learn how to show it: after measuring, the run stamps each
measurement (and its groups) with the metric's ``display_name`` and ``unit`` and records what
the metric derives from it (:meth:`~itemscore.Metric.derived_measurements`, e.g. the cost of
one success) in ``Measurement.derived``. results.json keeps all three.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from ._exceptions import describe_exception
from ._metric import Metric
from ._records import Measurement

__all__ = ["annotate"]


def _stamped(m: Measurement, display_name: str | None, unit: str | None) -> Measurement:
    groups = {g: _stamped(gm, display_name, unit) for g, gm in m.groups.items()}
    return attrs.evolve(m, display_name=display_name, unit=unit, groups=groups)


def _derive(metric: Metric, own: Measurement, ms: Mapping[str, Measurement]) -> Measurement:
    others = {o.metric: o for o in ms.values() if o.metric != own.metric}
    try:
        derived = dict(metric.derived_measurements(own, others))
        for label, d in derived.items():
            if not isinstance(d, Measurement):
                raise TypeError(
                    f"derived_measurements returned {type(d).__name__} for {label!r}, "
                    "expected itemscore.Measurement"
                )
    except Exception as exc:  # noqa: BLE001 - a failed derivation spoils its own row only
        label = f"{own.metric}_derived"
        derived = {
            label: Measurement(
                key=f"{own.suite}.{label}",
                suite=own.suite,
                metric=label,
                model=own.model,
                error=describe_exception(exc),
            )
        }
    return attrs.evolve(own, derived=derived) if derived else own


def annotate(
    metrics: Mapping[str, tuple[Metric, str]], measurements: Mapping[str, Measurement]
) -> dict[str, Measurement]:
    """``measurements`` (one model's, or pooled) stamped and with their derived numbers.

    Args:
        metrics: By label, the configured metric and its id; labels not in it (measurements
            kept from an earlier run) are left as they are.
        measurements: The measurements by key.
    """
    stamped: dict[str, Measurement] = {}
    for key, m in measurements.items():
        found = metrics.get(m.metric)
        if found is None:
            stamped[key] = m
            continue
        metric, metric_id = found
        name = metric.display_name if m.metric == metric_id else m.metric
        stamped[key] = _stamped(m, name if name != m.metric else None, metric.unit)
    out = dict(stamped)
    for key, m in stamped.items():
        found = metrics.get(m.metric)
        if found is not None and m.error is None:
            out[key] = _derive(found[0], m, stamped)
    return out
