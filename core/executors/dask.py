"""``dask``: shards scored as tasks on a Dask cluster (extra ``itemscore[dask]``).

Pass a ``distributed.Client`` as ``client=`` to use a running cluster; without one, a local
cluster of ``workers`` processes (one thread each) is started for the run and closed after it.
The plan is sent to every worker once; each shard is one task returning its score columns.
A task whose worker died (``KilledWorker``, after Dask's own attempts) is a lost shard: its
items get ``error`` scores reading "worker lost: ...".
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from itemscore._columns import ScoreColumn
from itemscore._exceptions import ConfigError
from itemscore._records import ItemResult

from ._base import Executor, ShardFailure, shard_reason
from ._shard import Tick, score_shard

if TYPE_CHECKING:
    from itemscore._plan import RunPlan
    from itemscore._settings import RunSettings

__all__ = ["DaskExecutor"]


def _score_task(
    plan: RunPlan, shard: Sequence[ItemResult], settings: RunSettings
) -> dict[str, ScoreColumn]:
    columns = score_shard(plan, shard, settings)
    return {label: column.portable() for label, column in columns.items()}


def _import_distributed() -> Any:
    try:
        import distributed
    except ModuleNotFoundError as exc:
        raise ConfigError(
            "executor='dask' needs the `distributed` package: pip install 'itemscore[dask]'."
        ) from exc
    return distributed


class DaskExecutor(Executor):
    """Score shards as tasks on a Dask cluster.

    Args:
        workers: Processes of the local cluster started when no ``client`` is given
            (``None``: the machine's cores). Must be left out with a ``client``: the
            cluster behind a client has the workers it has.
        client: A ``distributed.Client`` of a running cluster.
    """

    name = "dask"

    def __init__(self, workers: int | None = None, client: Any = None) -> None:
        if client is not None and workers is not None:
            raise ConfigError(
                f"`workers` ({workers!r}) does not apply with a Dask `client`: the cluster "
                "behind the client has the workers it has. Leave `workers` out, or leave "
                "`client` out to start a local cluster of that many processes."
            )
        _import_distributed()
        self.client = client
        self.workers = workers or (None if client is not None else os.cpu_count() or 1)
        self._own: tuple[Any, Any] | None = None
        self._plan: Any = None  # the plan, sent to every worker once per run

    def start(self, plan: RunPlan, settings: RunSettings) -> None:
        """Start a local cluster when no client was given."""
        if self.client is not None:
            if self.workers is None:
                self.workers = max(1, len(self.client.scheduler_info().get("workers", {})))
            return
        distributed = _import_distributed()
        cluster = distributed.LocalCluster(
            n_workers=self.workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            # A free port on this machine only: the default, 8787, is often taken.
            dashboard_address="127.0.0.1:0",
        )
        self._own = (cluster, distributed.Client(cluster))

    def stop(self) -> None:
        """Close the local cluster this executor started (a given client stays open)."""
        if self._plan is not None:
            client = self.client if self._own is None else self._own[1]
            client.cancel([self._plan])
            self._plan = None
        if self._own is not None:
            cluster, client = self._own
            self._own = None
            client.close()
            cluster.close()

    def map_shards(
        self,
        plan: RunPlan,
        shards: Sequence[Sequence[ItemResult]],
        settings: RunSettings,
        tick: Tick | None,
    ) -> Iterator[tuple[int, dict[str, ScoreColumn] | ShardFailure]]:
        """Submit one task per shard; yield outcomes as tasks finish."""
        distributed = _import_distributed()
        client = self.client if self._own is None else self._own[1]
        n_labels = sum(not pm.is_corpus for pm in plan.metrics)
        if self._plan is None:
            self._plan = client.scatter(plan, broadcast=True, hash=False)
        plan_future = self._plan
        data = client.scatter([list(shard) for shard in shards], hash=False)
        futures = {
            client.submit(_score_task, plan_future, part, settings, pure=False): index
            for index, part in enumerate(data)
        }
        try:
            for future in distributed.as_completed(list(futures)):
                index = futures[future]
                try:
                    columns = future.result()
                except distributed.KilledWorker as exc:
                    yield index, ShardFailure(shard_reason(exc, lost=True))
                    continue
                except Exception as exc:  # noqa: BLE001 - a shard's failure costs its items only
                    yield index, ShardFailure(shard_reason(exc, lost=False))
                    continue
                if tick is not None:
                    tick(len(shards[index]) * n_labels)
                yield index, columns
        finally:
            client.cancel([*futures, *data])
