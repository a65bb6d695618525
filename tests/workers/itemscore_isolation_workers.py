"""Metrics for the isolation tests that worker processes of their own (Dask) must import.

A test module is not importable by name in another interpreter; this folder is put on the
workers' ``PYTHONPATH`` by the tests that need it.
"""

from __future__ import annotations

import os

from itemscore import ItemResult, ItemScore, Metric, MetricContext


class KillsOn(Metric):
    """Kills its worker process (``os._exit``) on every item whose id is in ``on``.

    Only outside the process that configured it: a serial run scores every item.

    Args:
        on: Comma-separated ids of the items that kill their worker.
    """

    metric_id = "kills_on_test"
    required_inputs = ()

    def __init__(self, on: str = "") -> None:
        self.on = frozenset(on.split(","))
        self.driver = os.getpid()

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        if item.id in self.on and os.getpid() != self.driver:
            os._exit(13)
        return self.ok()
