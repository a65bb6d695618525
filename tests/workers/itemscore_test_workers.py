"""Metrics for the executor tests that worker processes of their own (Dask) must import.

A test module is not importable by name in another interpreter; this folder is put on the
workers' ``PYTHONPATH`` by the tests that need it.
"""

from __future__ import annotations

import os

from itemscore import ItemResult, ItemScore, Metric, MetricContext


class KillsItsWorkerOnce(Metric):
    """The first worker process to score an item exits at once, mid-shard.

    Args:
        marker: A file that only the first worker to see it creates.
    """

    metric_id = "kills_its_worker_once_test"
    required_inputs = ()

    def __init__(self, marker: str = "") -> None:
        self.marker = marker
        self.driver = os.getpid()

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        if os.getpid() != self.driver:
            try:
                fd = os.open(self.marker, os.O_CREAT | os.O_EXCL)
            except FileExistsError:
                pass
            else:
                os.close(fd)
                os._exit(13)
        return self.ok()
