"""``cost``: what each item cost the system under test, read from its metadata, averaged."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

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

if TYPE_CHECKING:  # the run result and its serialisation load with a run, not with the listing
    from itemscore import RunResult

__all__ = ["Cost", "CostPerSuccess", "cost_per_success", "cost_per_success_rows"]


def _lookup(metadata: Mapping[str, Any], path: Sequence[str]) -> Any:
    value: Any = metadata
    for part in path:
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


class Cost(Metric):
    """The system's own cost per item (dollars, tokens, seconds...), averaged; lower is better.

    The cost is read from the item's metadata field ``field`` (``cost`` by default, a column
    ``cost`` in a data file; a dotted name such as ``usage.cost`` reads a nested mapping). A
    number, or a string holding one, is the item's value (``ok``); an item without the field
    (or NaN) is skipped; anything else, or a negative cost, is that item's ``error``. The
    headline number is the mean with a normal interval (bounded below by 0); the
    measurement's ``extra`` holds ``total``, the sum over scored items, from which reports
    compute ``cost_per_success`` (total cost / items another metric scored ok).

    Args:
        field: The metadata field holding each item's cost; dots read nested mappings.
        success: The metric (label) whose ok items are the successes of `cost_per_success`
            in reports; none: the run's first other metric.
    """

    metric_id = "cost"
    description = (
        "Mean per-item cost of the system under test, read from metadata (`cost`); lower is better."
    )
    reproducibility_class = "deterministic"
    required_inputs = ()
    higher_is_better = False
    aggregation = "mean"
    # No upper bound, so no value_bounds (it needs two finite ends): the low end is clipped below.

    def __init__(self, *, field: str = "cost", success: str | None = None) -> None:
        path = field.split(".")
        if not field or not all(path):
            raise OptionError(
                f"Metric 'cost': `field` ({field!r}) must name a metadata field, e.g. 'cost' "
                "or 'usage.cost'."
            )
        self.field = field
        self.success = success
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


@attrs.frozen(kw_only=True)
class CostPerSuccess:
    """What one success cost, for one cost measurement, model and group (a report row)."""

    #: ``"<cost label>_per_success"``: how reports name the row.
    label: str
    #: The cost measurement's label.
    cost: str
    #: The label of the metric whose ok items are the successes.
    success: str
    #: The model (``None`` for items without one).
    model: str | None
    #: The group (``None`` for the headline).
    group: str | None
    #: Total cost / successes; ``None`` without a success.
    value: float | None
    #: The success metric's ok items.
    successes: int


def _pairs(result: RunResult) -> list[tuple[str, str]]:
    """(cost label, success label) for every ``cost`` metric of the run that has a partner."""
    entries = [m for m in result.config.get("metrics", []) if isinstance(m, Mapping)]
    costs = [m for m in entries if m.get("name") == "cost"]
    cost_labels = {m.get("label") for m in costs}
    others = [m.get("label") for m in entries if m.get("label") not in cost_labels]
    pairs = []
    for m in costs:
        success = (m.get("options") or {}).get("success") or next(iter(others), None)
        if isinstance(success, str) and isinstance(m.get("label"), str):
            pairs.append((m["label"], success))
    return pairs


def cost_per_success_rows(result: RunResult) -> list[CostPerSuccess]:
    """``cost_per_success`` for every cost metric of ``result``, per model, then per group.

    The successes are the ok items of the cost metric's ``success`` option, or of the run's
    first metric that is not a cost. Empty when the run has no cost metric, or no other one.
    """
    rows: list[CostPerSuccess] = []
    for cost_label, success_label in _pairs(result):
        for model, measurements in result.by_model.items():
            by_label = {m.metric: m for m in measurements.values()}
            cost, success = by_label.get(cost_label), by_label.get(success_label)
            if cost is None or success is None:
                continue
            pairs = [(None, cost, success)] + [
                (group, gm, success.groups[group])
                for group, gm in cost.groups.items()
                if group in success.groups
            ]
            for group, c, s in pairs:
                rows.append(
                    CostPerSuccess(
                        label=f"{cost_label}_per_success",
                        cost=cost_label,
                        success=success_label,
                        model=model,
                        group=group,
                        value=cost_per_success(c, s),
                        successes=s.counts.get(Status.OK, 0),
                    )
                )
    return rows
