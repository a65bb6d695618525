"""``serial``: every shard in this process, one metric after another (the default).

Async metrics still score many items at once (``RunSettings.concurrency``), on an event loop
of their own.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from itemscore._columns import ScoreColumn
from itemscore._records import ItemResult

from ._base import Executor, ShardFailure, shard_reason
from ._shard import Tick, score_shard

if TYPE_CHECKING:
    from itemscore._plan import RunPlan
    from itemscore._settings import RunSettings

__all__ = ["SerialExecutor"]


class SerialExecutor(Executor):
    """Score all items in this process, as one shard."""

    name = "serial"
    parallel = False
    _memo: dict[str, Any] | None = None

    def start(self, plan: RunPlan, settings: RunSettings) -> None:
        """A fresh memo for the metrics' caches, kept across the run's chunks."""
        self._memo = {}

    def stop(self) -> None:
        """Drop the run's memo."""
        self._memo = None

    def map_shards(
        self,
        plan: RunPlan,
        shards: Sequence[Sequence[ItemResult]],
        settings: RunSettings,
        tick: Tick | None,
    ) -> Iterator[tuple[int, dict[str, ScoreColumn] | ShardFailure]]:
        """Score each shard here, in order."""
        for index, shard in enumerate(shards):
            try:
                columns = score_shard(plan, shard, settings, tick, self._memo)
            except Exception as exc:  # noqa: BLE001 - a shard's failure costs its items only
                yield index, ShardFailure(shard_reason(exc, lost=False))
            else:
                yield index, columns
