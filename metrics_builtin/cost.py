"""``cost``: what each item cost the system under test, read from its metadata, averaged."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from itemscore import (
    Estimate,
    ItemResult,
    ItemScore,
    Measurement,
    Metric,
    MetricContext,
    OptionError,
    Status,
)
from itemscore.metrics_builtin._value_bootstrap import ValueMeansBootstrap

__all__ = ["Cost", "cost_per_success"]


def _lookup(metadata: Mapping[str, Any], path: Sequence[str]) -> Any:
    value: Any = metadata
    for part in path:
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


class Cost(ValueMeansBootstrap, Metric):
    """The system's own cost per item (dollars, tokens, seconds...), averaged; lower is better.

    The cost is read from the item's metadata field ``field`` (``cost`` by default, a column
    ``cost`` in a data file; a dotted name such as ``usage.cost`` reads a nested mapping). A
    number, or a string holding one, is the item's value (``ok``); an item without the field
    (or NaN) is skipped; anything else, or a negative cost, is that item's ``error``. The
    headline number is the mean with a normal interval (bounded below by 0); the
    measurement's ``extra`` holds ``total``, the sum over scored items. The run derives
    ``<label>_per_success`` from it (total cost / items another metric scored ok, per model
    and group), which every report shows as a row of its own. Comparisons use a vectorised
    paired bootstrap of the two means.

    Args:
        field: The metadata field holding each item's cost; dots read nested mappings.
        success: The metric (label) whose ok items are the successes of `cost_per_success`;
            none: the run's first other metric for which higher is better.
        unit: The unit of the costs, shown next to the numbers ("USD" shows as $0.0012;
            "tokens" as 412 tokens); null for none.
    """

    metric_id = "cost"
    display_name = "Cost"
    description = (
        "Mean per-item cost of the system under test, read from metadata (`cost`); lower is better."
    )
    reproducibility_class = "deterministic"
    required_inputs = ()
    higher_is_better = False
    aggregation = "mean"
    # No upper bound, so no value_bounds (it needs two finite ends): the low end is clipped below.

    def __init__(
        self, *, field: str = "cost", success: str | None = None, unit: str | None = "USD"
    ) -> None:
        path = field.split(".")
        if not field or not all(path):
            raise OptionError(
                f"Metric 'cost': `field` ({field!r}) must name a metadata field, e.g. 'cost' "
                "or 'usage.cost'."
            )
        self.field = field
        self.success = success
        self.unit = unit or None
        self._path = tuple(path)

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        """The item's cost as its value; skip when it has none."""
        value = _lookup(item.metadata, self._path) if item.metadata else None
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return self.skip(f"no cost in metadata[{self.field!r}]")
        if isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                return self.error(f"metadata[{self.field!r}] ({value!r}) is not a number")
            if math.isnan(number):
                return self.skip(f"no cost in metadata[{self.field!r}]")
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            number = float(value)
        else:
            return self.error(
                f"metadata[{self.field!r}] ({value!r}) is not a number but a {type(value).__name__}"
            )
        if not math.isfinite(number) or number < 0:
            return self.error(f"metadata[{self.field!r}] ({value!r}) is not a finite cost >= 0")
        return self.ok(number)

    def aggregate(self, scores: Sequence[ItemScore], ctx: MetricContext) -> Estimate:
        """Mean cost per scored item (normal interval, bounded below by 0), and the total."""
        estimate = super().aggregate(scores, ctx)
        total = math.fsum(s.value for s in scores if s.status is Status.OK and s.value is not None)
        low = None if estimate.low is None else max(estimate.low, 0.0)
        return Estimate(
            value=estimate.value, low=low, high=estimate.high, n=estimate.n,
            method=estimate.method, confidence=estimate.confidence,
            extra={**estimate.extra, "total": total},
        )  # fmt: skip

    def derived_measurements(
        self, own: Measurement, others: Mapping[str, Measurement]
    ) -> Mapping[str, Measurement]:
        """``<label>_per_success``: what one success cost, per model and per group.

        The successes are the ok items of the ``success`` option's metric, or of the run's
        first other metric for which higher is better; none such: nothing is derived. ``n``
        is the number of successes; there is no interval.
        """
        label = self.success
        if label is None:
            label = next((m.metric for m in others.values() if m.higher_is_better), None)
        success = others.get(label) if label is not None else None
        if success is None:
            return {}
        name = f"{own.metric}_per_success"

        def derived(cost: Measurement, hits: Measurement, groups: dict[str, Measurement]) -> Any:
            return Measurement(
                key=f"{own.suite}.{name}", suite=own.suite, metric=name, model=own.model,
                value=cost_per_success(cost, hits), n=hits.counts.get(Status.OK, 0),
                confidence=own.confidence, higher_is_better=False, unit=self.unit,
                display_name=f"{own.display_name or own.metric} per success ({hits.metric})",
                groups=groups,
            )  # fmt: skip

        groups = {
            g: derived(gm, success.groups[g], {})
            for g, gm in own.groups.items()
            if g in success.groups
        }
        return {name: derived(own, success, groups)}


def cost_per_success(cost: Measurement, success: Measurement) -> float | None:
    """Total cost divided by the items ``success`` scored ok, or ``None`` when undefined.

    Args:
        cost: A ``cost`` measurement (its ``extra["total"]``, else mean x n, is the total).
        success: The measurement of the metric whose ok items count as successes, for the
            same model and group.

    Returns:
        The cost of one success; ``None`` with no success or no cost.
    """
    if cost.value is None or cost.error is not None or success.error is not None:
        return None
    successes = success.counts.get(Status.OK, 0)
    if successes == 0:
        return None
    total = cost.extra.get("total")
    if total is None:
        total = cost.value * cost.n
    return float(total) / successes
