"""``answered_rate``: the share of items the model answered at all."""

from __future__ import annotations

from collections.abc import Sequence

from itemscore import ItemResult, ItemScore, Metric, MetricContext, ScoreColumn


class AnsweredRate(Metric):
    """Share of items with a non-null output; needs no answer key.

    A model can be accurate on what it answers yet answer little: this is the other half.
    """

    metric_id = "answered_rate"
    display_name = "Answered rate"
    description = "Share of items the model answered (a non-null output); needs no answer key."
    required_inputs = ()
    aggregation = "ratio"

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        """Ok when the request produced an output (even an empty one), fail when it failed."""
        return self.ok() if item.output is not None else self.fail()

    def score_items(self, items: Sequence[ItemResult], ctx: MetricContext) -> ScoreColumn:
        """The same verdicts for many items, as one column: no call and no object per item."""
        answered = [item.output is not None for item in items]
        states = bytes([ScoreColumn.OK if a else ScoreColumn.FAIL for a in answered])
        values: list[float | None] = [1.0 if a else 0.0 for a in answered]
        return ScoreColumn(self.label, states, values)
