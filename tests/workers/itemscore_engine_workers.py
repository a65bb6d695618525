"""Metrics for the Ray and Spark tests that those engines' worker processes must import.

A test module is not importable by name in another interpreter; this folder is put on the
workers' ``PYTHONPATH`` by the tests that need it.
"""

from __future__ import annotations

from itemscore import ItemResult, ItemScore, Metric, MetricContext


class RaisesOn(Metric):
    """Raises on every item whose id is in ``on``; scores the others ok.

    Args:
        on: Comma-separated ids of the items it raises on.
    """

    metric_id = "raises_on_test"
    required_inputs = ()

    def __init__(self, on: str = "") -> None:
        self.on = frozenset(on.split(","))

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        if item.id in self.on:
            raise ValueError(f"cannot score {item.id}")
        return self.ok()
