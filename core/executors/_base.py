"""The executor protocol: how a run's items are split into shards, scored and merged.

An executor turns (plan, items, settings) into one score column per metric label; a large run
comes as consecutive chunks of items (:meth:`Executor.execute_chunks`), scored one after the
other with the executor started once. The base
class does what every executor shares: it splits each chunk into contiguous shards, asks the
subclass to score them (:meth:`Executor.map_shards`), tries lost shards again as often as
``RunSettings.retries`` says, gives the items of a shard that still failed an ``error`` score
naming the cause, and concatenates the shards' columns in item order.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, ClassVar

import attrs

from itemscore._columns import ScoreColumn
from itemscore._exceptions import describe_exception
from itemscore._records import ItemResult, Status

from ._shard import Tick

if TYPE_CHECKING:
    from itemscore._plan import RunPlan
    from itemscore._settings import RunSettings

__all__ = ["Executor", "ShardFailure", "shard_reason"]


@attrs.frozen
class ShardFailure:
    """A shard that produced no scores: its worker was lost, or it raised outside any metric."""

    #: Why, as the items' error reason will say it ("worker lost: ...", "shard failed: ...").
    reason: str


class Executor:
    """Base class of the executors: subclass it and write :meth:`map_shards`.

    Attributes:
        name: The executor's name in ``RunSettings.executor``.
        parallel: Whether shards leave this process (the plan must then pickle).
    """

    name: ClassVar[str] = "custom"
    parallel: ClassVar[bool] = True
    #: How many shards per worker: several, so a slow shard does not hold the others back.
    shards_per_worker: ClassVar[int] = 4

    #: Worker processes (``None``: the executor's default).
    workers: int | None = None

    def execute(
        self,
        plan: RunPlan,
        items: Sequence[ItemResult],
        settings: RunSettings,
        tick: Tick | None = None,
    ) -> dict[str, ScoreColumn]:
        """Score ``items`` with the item-level metrics of ``plan``: one column per label.

        Shards whose worker was lost or that raised outside any metric are tried again up to
        ``settings.retries`` times; after that their items get ``error`` scores naming the
        cause, and the run goes on.
        """
        for _chunk, columns in self.execute_chunks(plan, [items], settings, tick):
            return columns
        raise AssertionError("execute_chunks yields one result per chunk")  # pragma: no cover

    def execute_chunks(
        self,
        plan: RunPlan,
        chunks: Iterable[Sequence[ItemResult]],
        settings: RunSettings,
        tick: Tick | None = None,
    ) -> Iterator[tuple[Sequence[ItemResult], dict[str, ScoreColumn]]]:
        """Score a run chunk by chunk: ``(chunk, its columns)`` as each chunk is done.

        The executor is started once for all chunks (one pool, one cluster) and stopped when
        the last chunk is done or the caller stops early. Each chunk is split into shards and
        scored as :meth:`execute` describes; only one chunk of items is needed at a time.
        """
        labels = [pm.label for pm in plan.metrics if not pm.is_corpus]
        if not labels:  # only corpus metrics: nothing to start
            for chunk in chunks:
                yield chunk, {}
            return
        self.start(plan, settings)
        try:
            for chunk in chunks:
                yield chunk, self._score_chunk(plan, labels, chunk, settings, tick)
        finally:
            self.stop()

    def _score_chunk(
        self,
        plan: RunPlan,
        labels: Sequence[str],
        items: Sequence[ItemResult],
        settings: RunSettings,
        tick: Tick | None,
    ) -> dict[str, ScoreColumn]:
        bounds = self.split(len(items))
        outcomes: dict[int, dict[str, ScoreColumn] | ShardFailure] = {}
        pending = list(range(len(bounds)))
        for _attempt in range(settings.retries + 1):
            shards = [items[bounds[i][0] : bounds[i][1]] for i in pending]
            for index, outcome in self.map_shards(plan, shards, settings, tick):
                outcomes[pending[index]] = outcome
            pending = [i for i in pending if isinstance(outcomes.get(i), ShardFailure)]
            if not pending:
                break
        merged: dict[str, ScoreColumn] = {}
        for label in labels:
            parts = []
            for index, (start, stop) in enumerate(bounds):
                outcome = outcomes[index]
                if isinstance(outcome, ShardFailure):
                    parts.append(
                        ScoreColumn.filled(label, stop - start, Status.ERROR, outcome.reason)
                    )
                else:
                    parts.append(outcome[label])
            merged[label] = ScoreColumn.concat(label, parts)
        return merged

    def split(self, n: int) -> list[tuple[int, int]]:
        """Contiguous ``(start, stop)`` bounds of the shards of ``n`` items."""
        workers = self.workers or 1
        count = max(1, min(n, workers * self.shards_per_worker)) if self.parallel else 1
        size = math.ceil(n / count) if n else 0
        return [(start, min(start + size, n)) for start in range(0, n, size)] if n else [(0, 0)]

    def start(self, plan: RunPlan, settings: RunSettings) -> None:
        """Set up before the first shard (start workers...); the default does nothing."""

    def stop(self) -> None:
        """Tear down after the last shard, also after a failure; the default does nothing."""

    def map_shards(
        self,
        plan: RunPlan,
        shards: Sequence[Sequence[ItemResult]],
        settings: RunSettings,
        tick: Tick | None,
    ) -> Iterator[tuple[int, dict[str, ScoreColumn] | ShardFailure]]:
        """Score every shard; yield ``(index into shards, outcome)`` as each one finishes.

        Use :func:`itemscore.executors.score_shard` in the worker. An exception of the shard
        itself (not of a metric: those are isolated inside) is yielded as a
        :class:`ShardFailure`, never raised.
        """
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} workers={self.workers!r}>"


def shard_reason(exc: BaseException, lost: bool) -> str:
    """The error reason of a failed shard's items."""
    what = "worker lost" if lost else "shard failed"
    return f"{what}: {describe_exception(exc)}"
