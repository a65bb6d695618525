"""Executors: where a run's shards are scored — any ``concurrent.futures.Executor``.

``executor=`` takes a name or an executor object:

- ``"serial"``: in this process, one shard after another (the default);
- ``"process"``: a ``ProcessPoolExecutor`` of ``workers`` processes on this machine;
- ``"dask"``: the executor of a Dask ``distributed.Client`` — the one given as ``client=``,
  or a local cluster of ``workers`` processes started for the run and closed after it;
- any ``concurrent.futures.Executor`` instance: the Ray, MPI or thread pool the caller runs
  (itemscore submits tasks to it and never shuts it down).

A name is checked when the run is configured (:func:`resolve_executor`); the executor itself
starts only when scoring starts (:meth:`ExecutorSpec.open`). One module per built-in executor,
registered in :data:`EXECUTORS`: to add one, write a module with an ``open_executor(workers,
client) -> Engine`` function and add a line here.
"""

from __future__ import annotations

import concurrent.futures
import importlib
from typing import Any

import attrs

from itemscore._exceptions import ConfigError, did_you_mean, one_of

from ._engine import Engine

__all__ = ["EXECUTORS", "Engine", "ExecutorSpec", "resolve_executor"]

#: Every built-in executor: name -> its module (each has ``open_executor(workers, client)``).
EXECUTORS: dict[str, str] = {
    "serial": "itemscore.executors.serial",
    "process": "itemscore.executors.process",
    "dask": "itemscore.executors.dask",
}


@attrs.frozen
class ExecutorSpec:
    """An executor checked but not started: its name and options, or the caller's object."""

    #: The name ``RunSettings.executor`` records (``"serial"``, ``"process"``, ``"dask"``, or
    #: the class name of a caller's executor).
    name: str
    #: Worker processes asked for (``None``: the executor's default).
    workers: int | None = None
    #: A Dask client given by the caller.
    client: Any = attrs.field(default=None, eq=False)
    #: An executor object given by the caller.
    given: concurrent.futures.Executor | None = attrs.field(default=None, eq=False)

    @property
    def parallel(self) -> bool:
        """Whether shards leave this process (the plan must then pickle)."""
        return self.name != "serial"

    def open(self) -> Engine:
        """Start the executor (a pool, a local cluster): the run closes it when it ends."""
        if self.given is not None:
            return Engine(self.name, self.given, workers=self.workers, parallel=True)
        module = importlib.import_module(EXECUTORS[self.name])
        engine: Engine = module.open_executor(self.workers, self.client)
        return engine


def resolve_executor(
    executor: str | concurrent.futures.Executor,
    *,
    workers: int | None = None,
    client: Any = None,
) -> ExecutorSpec:
    """Check an ``executor=`` argument and its options; nothing is started.

    Options that do not apply to the executor are an error, never silently ignored.

    Raises:
        ConfigError: an unknown name, or ``workers``/``client`` where they do not apply.
    """
    if isinstance(executor, concurrent.futures.Executor):
        if client is not None:
            raise ConfigError(
                f"`client` configures executor='dask'; the executor object {executor!r} is "
                "already configured. Leave `client` out."
            )
        workers = workers if workers is not None else getattr(executor, "_max_workers", None)
        return ExecutorSpec(type(executor).__name__, workers, given=executor)
    if not isinstance(executor, str) or executor not in EXECUTORS:
        raise ConfigError(
            f"`executor` ({executor!r}) must be one of {one_of(EXECUTORS)} or a "
            f"concurrent.futures.Executor object.{did_you_mean(str(executor), EXECUTORS)}"
        )
    if client is not None and executor != "dask":
        raise ConfigError(
            f"`client` applies only to executor='dask', not to {executor!r}: pass "
            "executor='dask' to score on the client's cluster."
        )
    if executor == "serial" and workers is not None:
        raise ConfigError(
            f"`workers` ({workers!r}) does not apply to the serial executor, which scores in "
            "this process: pass executor='process' (or 'dask') to use workers."
        )
    if executor == "dask":
        from .dask import check_dask

        check_dask(workers, client)
    return ExecutorSpec(executor, workers, client=client)
