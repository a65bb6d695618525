"""``dask``: shards as tasks of a Dask cluster (the ``dask`` extra).

Pass a ``distributed.Client`` as ``client=`` to use a running cluster; without one, a local
cluster of ``workers`` processes (one thread each) is started for the run and closed after it.
Tasks go through the client's ``concurrent.futures`` executor (``Client.get_executor``); each
carries what it needs (its items, or the part of a file it reads), so nothing is left on a
worker that may die: a task whose worker was lost (``KilledWorker``) is tried again by the
run, and cut in two when it keeps killing its worker (see :mod:`itemscore.engine._dispatch`).
On a local cluster the run starts, Dask gives a task up at its first lost worker; on a
caller's cluster, after its own ``distributed.scheduler.allowed-failures``.
"""

from __future__ import annotations

import os
from typing import Any

from itemscore._exceptions import ConfigError

from ._engine import Engine

__all__ = ["check_dask", "open_executor"]


def _import_distributed() -> Any:
    try:
        import distributed
    except ModuleNotFoundError as exc:
        from itemscore._extras import install_hint

        raise ConfigError(
            f"executor='dask' needs the `distributed` package: {install_hint('distributed')}."
        ) from exc
    return distributed


def check_dask(workers: int | None, client: Any) -> None:
    """Check the Dask options before anything starts.

    Raises:
        ConfigError: ``distributed`` is missing, or ``workers`` given with a ``client``.
    """
    _import_distributed()
    if client is not None and workers is not None:
        raise ConfigError(
            f"`workers` ({workers!r}) does not apply with a Dask `client`: the cluster behind "
            "the client has the workers it has. Leave `workers` out, or leave `client` out to "
            "start a local cluster of that many processes."
        )


def open_executor(workers: int | None, client: Any) -> Engine:
    """The executor of ``client``, or of a local cluster of ``workers`` processes."""
    distributed = _import_distributed()
    if client is not None:
        count = max(1, len(client.scheduler_info().get("workers", {})))
        return Engine("dask", client.get_executor(pure=False), workers=count, parallel=True)
    count = workers or os.cpu_count() or 1
    cluster = distributed.LocalCluster(
        n_workers=count,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        # A free port on this machine only: the default, 8787, is often taken.
        dashboard_address="127.0.0.1:0",
        # The run tries a lost task again itself, and cuts one that keeps killing its worker
        # in two to find the item that does: Dask trying it on three more workers first
        # would cost three more deaths (a restart each) for every cut.
        scheduler_kwargs={"allowed_failures": 0},
    )
    own = distributed.Client(cluster)

    def close(executor: Any) -> None:
        own.close()
        cluster.close()

    return Engine("dask", own.get_executor(pure=False), workers=count, parallel=True, close=close)
