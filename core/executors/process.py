"""``process``: shards scored by a pool of worker processes on this machine.

``workers=N`` processes (``"auto"``: the machine's cores) each receive the plan once, then
shards of items; each returns its score columns. A worker that dies (killed, out of memory, a
crash in native code) breaks the pool: the shards that were unfinished are scored again, each
alone in a fresh process, so that only the shard that kills its worker is lost; its items get
``error`` scores reading "worker lost: ...".
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any

from itemscore._columns import ScoreColumn
from itemscore._records import ItemResult

from ._base import Executor, ShardFailure, shard_reason
from ._shard import Tick, score_shard

if TYPE_CHECKING:
    from itemscore._plan import RunPlan
    from itemscore._settings import RunSettings

__all__ = ["ProcessExecutor"]

# What a worker holds between shards: the plan and settings it received once.
_WORKER_STATE: dict[str, Any] = {}


def _init_worker(plan: RunPlan, settings: RunSettings) -> None:
    _WORKER_STATE["plan"] = plan
    _WORKER_STATE["settings"] = settings
    _WORKER_STATE["memo"] = {}  # the metrics' caches, across the shards this worker scores


def _score_in_worker(shard: Sequence[ItemResult]) -> dict[str, ScoreColumn]:
    state = _WORKER_STATE
    columns = score_shard(state["plan"], shard, state["settings"], memo=state["memo"])
    return {label: column.portable() for label, column in columns.items()}


def _context() -> Any:
    # fork keeps what the caller defined in __main__ or a notebook usable in the workers;
    # elsewhere (macOS, Windows) the platform's default.
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)


class ProcessExecutor(Executor):
    """Score shards on ``workers`` processes of this machine.

    Args:
        workers: Worker processes; ``None``: the machine's cores.
    """

    name = "process"

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers or os.cpu_count() or 1
        self._live: ProcessPoolExecutor | None = None

    def _pool(self, workers: int, plan: RunPlan, settings: RunSettings) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            workers, mp_context=_context(), initializer=_init_worker, initargs=(plan, settings)
        )

    def stop(self) -> None:
        """Shut the pool down (it lives from the first shard of a run to its end)."""
        if self._live is not None:
            self._live.shutdown(cancel_futures=True)
            self._live = None

    def _shared_pool(
        self, shards: Sequence[Sequence[ItemResult]], plan: RunPlan, settings: RunSettings
    ) -> ProcessPoolExecutor:
        """The run's pool, started at the first chunk (no more workers than its shards)."""
        if self._live is None:
            self._live = self._pool(min(self.workers or 1, len(shards)), plan, settings)
        return self._live

    def map_shards(
        self,
        plan: RunPlan,
        shards: Sequence[Sequence[ItemResult]],
        settings: RunSettings,
        tick: Tick | None,
    ) -> Iterator[tuple[int, dict[str, ScoreColumn] | ShardFailure]]:
        """Score the shards on the pool; isolate the shards of a worker that died."""
        n_labels = sum(not pm.is_corpus for pm in plan.metrics)
        suspects: list[int] = []
        pool = self._shared_pool(shards, plan, settings)
        futures: dict[Future[dict[str, ScoreColumn]], int] = {
            pool.submit(_score_in_worker, shard): index for index, shard in enumerate(shards)
        }
        for future in as_completed(futures):
            index = futures[future]
            try:
                columns = future.result()
            except BrokenProcessPool:
                suspects.append(index)  # which shard killed the worker is not known yet
                continue
            except Exception as exc:  # noqa: BLE001 - a shard's failure costs its items only
                yield index, ShardFailure(shard_reason(exc, lost=False))
                continue
            if tick is not None:
                tick(len(shards[index]) * n_labels)
            yield index, columns
        if suspects:  # the pool is broken: the next chunk gets a fresh one
            self.stop()
        for index in sorted(suspects):
            yield index, self._alone(plan, shards[index], settings, tick, n_labels)

    def _alone(
        self,
        plan: RunPlan,
        shard: Sequence[ItemResult],
        settings: RunSettings,
        tick: Tick | None,
        n_labels: int,
    ) -> dict[str, ScoreColumn] | ShardFailure:
        """Score one shard in a fresh process of its own: if it dies, the shard is lost."""
        try:
            with self._pool(1, plan, settings) as pool:
                columns = pool.submit(_score_in_worker, shard).result()
        except BrokenProcessPool as exc:
            return ShardFailure(
                shard_reason(exc, lost=True)
                + f" (the process scoring items {shard[0].id!r} to {shard[-1].id!r} "
                "exited without a result)"
            )
        except Exception as exc:  # noqa: BLE001 - a shard's failure costs its items only
            return ShardFailure(shard_reason(exc, lost=False))
        if tick is not None:
            tick(len(shard) * n_labels)
        return columns
