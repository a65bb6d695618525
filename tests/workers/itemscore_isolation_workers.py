"""Metrics for the isolation tests that worker processes of their own (Dask) must import.

A test module is not importable by name in another interpreter; this folder is put on the
workers' ``PYTHONPATH`` by the tests that need it.
"""

from __future__ import annotations

import os
import time

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


class Slow(Metric):
    """Sleeps ``seconds`` on every item, then scores it ok: a run that is still going.

    Args:
        seconds: How long each item takes.
    """

    metric_id = "slow_test"
    required_inputs = ()

    def __init__(self, seconds: float = 0.05) -> None:
        self.seconds = seconds

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        time.sleep(self.seconds)
        return self.ok()


class Leaks(Metric):
    """Keeps ``megabytes`` of memory for good on every item it scores (a leak).

    Args:
        megabytes: What each item leaks.
    """

    metric_id = "leaks_test"
    required_inputs = ()

    def __init__(self, megabytes: int = 20) -> None:
        self.megabytes = megabytes
        self.kept: list[bytearray] = []

    def __getstate__(self) -> dict[str, object]:
        return {"megabytes": self.megabytes, "kept": []}  # a worker starts with no leak

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        self.kept.append(bytearray(self.megabytes << 20))
        return self.ok()


def command_line(argv: list[str]) -> None:
    """The command line with this module's metrics registered, as an installed plugin's are."""
    import itemscore
    from itemscore.cli import main

    for cls in (KillsOn, Slow, Leaks):
        itemscore.register(cls)
    main(argv)


if __name__ == "__main__":
    import sys

    command_line(sys.argv[1:])
