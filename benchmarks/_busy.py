"""A metric that costs about a millisecond of CPU per item, for the executor benchmarks.

It lives in a module of its own so that worker processes (the process pool, Dask) can import it.
"""

from __future__ import annotations

import hashlib
import time

from itemscore import ItemResult, ItemScore, Metric, MetricContext


def _work(text: str, rounds: int) -> bytes:
    digest = text.encode()
    for _ in range(rounds):
        digest = hashlib.sha256(digest).digest()
    return digest


class Busy(Metric):
    """Ok when a long hash chain of the output starts with an even byte (deterministic).

    Args:
        rounds: SHA-256 rounds per item (calibrate with :func:`calibrate`).
    """

    metric_id = "busy"
    required_inputs = ()

    def __init__(self, rounds: int = 1000) -> None:
        self.rounds = rounds

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        digest = _work(item.output or "", self.rounds)
        return self.ok() if digest[0] % 2 == 0 else self.fail()


def calibrate(target_s: float = 1e-3) -> int:
    """Rounds of the hash chain that take about ``target_s`` seconds here."""
    rounds = 1000
    start = time.perf_counter()
    for i in range(20):
        _work(str(i), rounds)
    per = (time.perf_counter() - start) / 20
    return max(1, round(rounds * target_s / per))
