"""Each default of a run, written once.

``RunSettings``, ``MetricContext`` and the signatures of ``score``, ``run`` and ``rescore`` read
these constants. They sit at the bottom of the package, so that every layer that needs a default
can read it.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_CONFIDENCE",
    "DEFAULT_EXECUTOR",
    "DEFAULT_ITEM_TIMEOUT",
    "DEFAULT_RETRIES",
    "DEFAULT_SEED",
    "DEFAULT_SUITE_ID",
]

#: Prefix of the measurement keys unless the run names a suite.
DEFAULT_SUITE_ID = "default"
#: Confidence level of every interval unless the run says otherwise.
DEFAULT_CONFIDENCE = 0.95
#: Seed of anything random (bootstrap intervals).
DEFAULT_SEED = 0
#: Items an ``async def score_item`` may score at once, per process.
DEFAULT_CONCURRENCY = 16
#: Where shards are scored unless the run says otherwise: this process.
DEFAULT_EXECUTOR = "serial"
#: Tries again of a shard whose worker was lost.
DEFAULT_RETRIES = 1
#: Seconds one metric may take on one item unless the run says otherwise: long enough for any
#: metric that computes (the slowest built-in takes well under a second an item), short enough
#: that a metric stuck on one item costs minutes, not the run. A metric that bounds its own
#: items longer (the LLM judge: its timeout times its attempts, and the waits between them)
#: gets its own bound instead (:func:`itemscore.engine._shard.item_limit`).
DEFAULT_ITEM_TIMEOUT = 300.0
