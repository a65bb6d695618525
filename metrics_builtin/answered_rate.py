"""``answered_rate``: the share of items the model answered at all."""

from __future__ import annotations

from collections.abc import Sequence

from itemscore import ItemResult, ItemScore, Metric, MetricContext


class AnsweredRate(Metric):
    """Share of items with a non-null output; needs no answer key.

    A model can be accurate on what it answers yet answer little: this is the other half.
    """

    metric_id = "answered_rate"
    description = "Share of items the model answered (a non-null output); needs no answer key."
    required_inputs = ()
    aggregation = "ratio"

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        """Ok when the request produced an output (even an empty one), fail when it failed."""
        return self.ok() if item.output is not None else self.fail()

    def score_items(self, items: Sequence[ItemResult], ctx: MetricContext) -> list[ItemScore]:
        """The same verdicts for many items, without a call per item."""
        ok, fail = self.ok(), self.fail()
        return [ok if item.output is not None else fail for item in items]
