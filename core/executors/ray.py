"""``ray``: shards as Ray Data jobs over Arrow batches (the ``ray`` extra).

``address=`` names a running cluster, as ``ray.init`` reads it (``"auto"``,
``"ray://HOST:10001"`` for Ray Client, ``"HOST:6379"``); without one, ``RAY_ADDRESS`` names
it, as for any Ray program. With neither, a local Ray of ``workers`` CPUs is started for the
run (on 127.0.0.1, no dashboard, its workers' output kept out of this terminal) and shut
down after it. When this process is connected already (the caller ran ``ray.init``), the run
scores on that cluster and leaves the connection as it was; a connection the run opened is
closed after it, the cluster left running.

Each task is one Ray Data job: a one-row dataset whose cell holds the pickled call,
``map_batches`` over Arrow batches of one row (:func:`itemscore.executors._batches.run_batch`),
its one-row answer taken back here. Measured on a 2-core machine (Ray 2.60, local): a task
costs about 0.05 s this way, against 0.002 s as a ``ray.remote`` task — small beside a shard
of thousands of items, and it runs where Ray Data runs, under its resource limits. Up to
``workers`` jobs run at once, each launched from a thread of this process. A job is tried
once (``max_retries=0``): a task whose worker died is tried again by the run itself, and cut
in two when it keeps killing its worker (see :mod:`itemscore.engine._dispatch`) — Ray's own
retries would rerun the killer first.

A local Ray the run started is shut down at the end of the run, whatever stops it; tasks on
a caller's cluster cannot be stopped from here (Ray Data has no way to cancel a running job
from another thread): they end on their own.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import pyarrow as pa

from itemscore._exceptions import ConfigError, describe_exception

from ._batches import CALL, RESULT, BatchExecutor, run_batch, unwarned
from ._engine import Cluster, Engine, needed

__all__ = ["check_options", "open_executor"]

#: How a run names the cluster it scores on.
CLUSTER = Cluster(
    "address", "Ray cluster", "Score on a Ray cluster (auto, ray://HOST:10001, HOST:6379)."
)

#: Ray's loggers the run keeps to errors while it scores (one INFO line per job otherwise).
_LOGGERS = ("ray", "ray.data")


def _import_ray() -> Any:
    needed("ray", "ray.data", "Ray with Ray Data", extra="ray")
    import ray

    return ray


def _cluster(address: str | None) -> str | None:
    """The cluster a run connects to: ``address``, else ``RAY_ADDRESS``; ``None``: local."""
    target = address if address is not None else os.environ.get("RAY_ADDRESS") or None
    return None if target == "local" else target


def check_options(workers: int | None, address: Any) -> None:
    """Check the Ray options before anything starts.

    Raises:
        ConfigError: Ray is missing, ``address`` is no text, or ``workers`` is given for a
            cluster (a given address, ``RAY_ADDRESS``, or a connection already open).
    """
    ray = _import_ray()
    if address is not None and (not isinstance(address, str) or not address.strip()):
        raise ConfigError(
            f"`address` ({address!r}) must name a Ray cluster as ray.init takes it: 'auto', "
            "'ray://HOST:10001' or 'HOST:6379'. Leave it out to start a local Ray."
        )
    if ray.is_initialized():
        if address is not None:
            raise ConfigError(
                f"`address` ({address!r}) does not apply: this process is connected to a Ray "
                "cluster already (ray.init was called), and the run scores there. Leave "
                "`address` out, or call ray.shutdown() first."
            )
        if workers is not None:
            raise ConfigError(
                f"`workers` ({workers!r}) does not apply: this process is connected to a Ray "
                "cluster already (ray.init was called), which has the CPUs it has. Leave "
                "`workers` out."
            )
        return
    target = _cluster(address)
    if target is not None and workers is not None:
        named = "`address`" if address is not None else "RAY_ADDRESS"
        raise ConfigError(
            f"`workers` ({workers!r}) does not apply with a Ray cluster ({named} is "
            f"{target!r}): the cluster has the CPUs it has. Leave `workers` out, or leave "
            f"{named} out to start a local Ray of that many CPUs."
        )


def _score(batch: pa.Table) -> pa.Table:
    """Ray Data's batch function: the task of the one row, its outcome as one row."""
    return pa.Table.from_batches([run_batch(batch)])


def _job(ray: Any) -> Any:
    def run(blob: bytes) -> bytes:
        calls = ray.data.from_arrow(pa.table({CALL: pa.array([blob], pa.binary())}))
        # Ray Data retries a task whose worker died without end by default, and names no
        # parameter for it but `max_retries` among the remote arguments it now deprecates.
        with unwarned(DeprecationWarning, "itemscore"):
            answer = calls.map_batches(
                _score, batch_format="pyarrow", batch_size=1, zero_copy_batch=True, max_retries=0
            )
        rows = answer.take_all()
        result: bytes = rows[0][RESULT]
        return result

    return run


def _restore(levels: list[tuple[logging.Logger, int]]) -> None:
    for logger, level in levels:
        logger.setLevel(level)


def _quiet() -> list[tuple[logging.Logger, int]]:
    """Quiet Ray's loggers for the run; their levels before, to restore."""
    before = []
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        before.append((logger, logger.level))
        logger.setLevel(logging.ERROR)
    return before


def _connect(ray: Any, workers: int | None, address: str | None) -> bool:
    """Connect this process to its Ray; whether the run opened the connection (to close)."""
    if ray.is_initialized():
        return False  # the caller's connection: used, left open
    target = _cluster(address)
    if target is None:
        ray.init(
            num_cpus=workers or os.cpu_count() or 1,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.ERROR,
            _node_ip_address="127.0.0.1",
        )
        return True
    try:
        ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
    except Exception as exc:  # noqa: BLE001 - ray.init's errors vary with the address
        raise ConfigError(
            f"No Ray cluster answers at {target!r} ({describe_exception(exc, one_line=True)}). "
            "Start one (`ray start --head`), or check the address and that this machine can "
            "reach it."
        ) from None
    return True


def open_executor(workers: int | None, address: Any) -> Engine:
    """Ray Data on the cluster named by ``address`` (or connected), or on a local Ray."""
    ray = _import_ray()
    levels = _quiet()  # from the start: a local Ray says a line or two as it starts
    try:
        opened = _connect(ray, workers, address)
    except BaseException:
        _restore(levels)
        raise
    count = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    with unwarned(DeprecationWarning, "ray"):  # Ray Data's context warns of its own fields
        context = ray.data.DataContext.get_current()
    bars = context.enable_progress_bars
    context.enable_progress_bars = False  # the run shows its own progress

    def close(executor: Any) -> None:
        executor.shutdown(wait=not opened, cancel_futures=True)
        context.enable_progress_bars = bars
        if opened:
            ray.shutdown()
        _restore(levels)

    return Engine(
        "ray", BatchExecutor(_job(ray), count, "ray"), workers=count, parallel=True, close=close
    )
