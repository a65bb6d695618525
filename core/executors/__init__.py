"""Executors: where a run's shards are scored — any ``concurrent.futures.Executor``.

``executor=`` takes a name or an executor object:

- ``"serial"``: in this process, one shard after another (the default);
- ``"process"``: a ``ProcessPoolExecutor`` of ``workers`` processes on this machine;
- ``"dask"``: the executor of a Dask ``distributed.Client`` — the one given as ``client=``
  (or one connected for the run when ``client=`` is a scheduler's address), or a local
  cluster of ``workers`` processes started for the run and closed after it;
- ``"ray"``: Ray Data jobs over Arrow batches, on the cluster named by ``address=`` (or
  ``RAY_ADDRESS``, or the one this process is connected to), or on a local Ray of ``workers``
  CPUs started for the run and shut down after it;
- ``"spark"``: Spark jobs (``mapInArrow``) on the ``SparkSession`` given as ``session=`` (or
  the one active here), or on a local session of ``workers`` cores made for the run and
  stopped after it;
- any ``concurrent.futures.Executor`` instance: the MPI, thread or process pool the caller
  runs (itemscore submits tasks to it and never shuts it down).

A name is checked when the run is configured (:func:`resolve_executor`); the executor itself
starts only when scoring starts (:meth:`ExecutorSpec.open`). One module per built-in executor,
registered in :data:`EXECUTORS`: to add one, write a module with an ``open_executor(workers,
given) -> Engine`` function (``given``: the caller's client, address or session, or ``None``)
and add a line here. Ray and Spark run functions over Arrow batches rather than calls: their
modules put each task in a one-row batch (:mod:`._batches`).
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
    "ray": "itemscore.executors.ray",
    "spark": "itemscore.executors.spark",
}
#: Each option that names a cluster -> the executor it configures, and what it names.
_CLUSTER_OPTIONS = {
    "client": ("dask", "client's cluster"),
    "address": ("ray", "Ray cluster"),
    "session": ("spark", "session"),
}


@attrs.frozen
class ExecutorSpec:
    """An executor checked but not started: its name and options, or the caller's object."""

    #: The name ``RunSettings.executor`` records (``"serial"``, ``"process"``, ``"dask"``, or
    #: the class name of a caller's executor).
    name: str
    #: Worker processes asked for (``None``: the executor's default).
    workers: int | None = None
    #: A Dask client given by the caller, or its scheduler's address.
    client: Any = attrs.field(default=None, eq=False)
    #: The address of a Ray cluster given by the caller.
    address: str | None = None
    #: A Spark session given by the caller.
    session: Any = attrs.field(default=None, eq=False)
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
        handle = {"dask": self.client, "ray": self.address, "spark": self.session}.get(self.name)
        engine: Engine = module.open_executor(self.workers, handle)
        return engine


def resolve_executor(
    executor: str | concurrent.futures.Executor,
    *,
    workers: int | None = None,
    client: Any = None,
    address: str | None = None,
    session: Any = None,
) -> ExecutorSpec:
    """Check an ``executor=`` argument and its options; nothing is started.

    Options that do not apply to the executor are an error, never silently ignored.

    Raises:
        ConfigError: an unknown name, a missing package, or ``workers``, ``client``,
            ``address`` or ``session`` where they do not apply.
    """
    options = {"client": client, "address": address, "session": session}
    if isinstance(executor, concurrent.futures.Executor):
        for option, value in options.items():
            if value is not None:
                owner = _CLUSTER_OPTIONS[option][0]
                raise ConfigError(
                    f"`{option}` configures executor={owner!r}; the executor object "
                    f"{executor!r} is already configured. Leave `{option}` out."
                )
        workers = workers if workers is not None else getattr(executor, "_max_workers", None)
        return ExecutorSpec(type(executor).__name__, workers, given=executor)
    if not isinstance(executor, str) or executor not in EXECUTORS:
        raise ConfigError(
            f"`executor` ({executor!r}) must be one of {one_of(EXECUTORS)} or a "
            f"concurrent.futures.Executor object.{did_you_mean(str(executor), EXECUTORS)}"
        )
    for option, value in options.items():
        owner, noun = _CLUSTER_OPTIONS[option]
        if value is not None and executor != owner:
            raise ConfigError(
                f"`{option}` applies only to executor={owner!r}, not to {executor!r}: pass "
                f"executor={owner!r} to score on the {noun}."
            )
    if executor == "serial" and workers is not None:
        raise ConfigError(
            f"`workers` ({workers!r}) does not apply to the serial executor, which scores in "
            "this process: pass executor='process' (or 'dask', 'ray', 'spark') to use workers."
        )
    if executor == "dask":
        from .dask import check_dask

        check_dask(workers, client)
    elif executor == "ray":
        from .ray import check_ray

        check_ray(workers, address)
    elif executor == "spark":
        from .spark import check_spark

        check_spark(workers, session)
    return ExecutorSpec(executor, workers, client=client, address=address, session=session)
