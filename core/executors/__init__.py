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
found by its name: to add one, write a module here with ``check_options(workers, cluster)``
(raise :class:`~itemscore.ConfigError` for options that do not apply), ``open_executor(workers,
cluster) -> Engine`` (``cluster``: the caller's client, address or session, or ``None``) and
``CLUSTER``: ``None``, or a :class:`Cluster` that gives it its ``score`` keyword, its
command-line flag and its configuration key. Its file name is its name (``--executor NAME``).
Ray and Spark run functions over Arrow batches rather than calls: their modules put each task
in a one-row batch (:mod:`._batches`).
"""

from __future__ import annotations

import concurrent.futures
import importlib
import pkgutil
from typing import Any

import attrs

from itemscore._exceptions import ConfigError, did_you_mean, one_of

from ._engine import Cluster, Engine

__all__ = [
    "EXECUTORS",
    "Cluster",
    "Engine",
    "Executor",
    "ExecutorSpec",
    "cluster_flags",
    "resolve_executor",
]


@attrs.frozen
class Executor:
    """A built-in executor: its module, and how a run names its cluster (if it has one)."""

    #: The module: ``check_options(workers, cluster)`` and ``open_executor(workers, cluster)``.
    module: str
    #: How a run names its cluster; ``None``: it has none.
    cluster: Cluster | None = None


def _found() -> dict[str, Executor]:
    """Every module of this folder whose name does not start with ``_``, by name.

    In the order messages list them: ``serial`` (the default), the others of this machine,
    then those that run on a cluster, each by name.
    """
    names = [m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")]
    found = {}
    for name in names:
        module = importlib.import_module(f"{__name__}.{name}")
        found[name] = Executor(module.__name__, module.CLUSTER)
    order = sorted(found, key=lambda n: (found[n].cluster is not None, n != "serial", n))
    return {name: found[name] for name in order}


#: Every built-in executor, by name; the command line's flags and configuration keys that
#: name a cluster are made from it.
EXECUTORS: dict[str, Executor] = _found()
#: Each keyword that names a cluster -> the executor it belongs to.
_OWNERS = {e.cluster.keyword: name for name, e in EXECUTORS.items() if e.cluster is not None}


def cluster_flags() -> dict[str, Cluster]:
    """The executors whose cluster the command line names by address (``--dask ADDRESS``)."""
    return {
        name: entry.cluster
        for name, entry in EXECUTORS.items()
        if entry.cluster is not None and entry.cluster.flag_help is not None
    }


@attrs.frozen
class ExecutorSpec:
    """An executor checked but not started: its name and options, or the caller's object."""

    #: The name ``RunSettings.executor`` records (``"serial"``, ``"process"``, ``"dask"``, or
    #: the class name of a caller's executor).
    name: str
    #: Worker processes asked for (``None``: the executor's default).
    workers: int | None = None
    #: The cluster given by the caller (a Dask client or its address, a Ray address, a Spark
    #: session), under the executor's keyword.
    cluster: Any = attrs.field(default=None, eq=False)
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
        module = importlib.import_module(EXECUTORS[self.name].module)
        engine: Engine = module.open_executor(self.workers, self.cluster)
        return engine


def resolve_executor(
    executor: str | concurrent.futures.Executor,
    *,
    workers: int | None = None,
    **clusters: Any,
) -> ExecutorSpec:
    """Check an ``executor=`` argument and its options; nothing is started.

    ``clusters`` are the keywords that name a cluster (``client``, ``address``,
    ``session``: see :data:`EXECUTORS`). Options that do not apply to the executor are an
    error, never silently ignored.

    Raises:
        ConfigError: an unknown name, a missing package, or ``workers`` or a cluster where
            they do not apply.
        TypeError: a keyword that names no executor's cluster.
    """
    unknown = [keyword for keyword in clusters if keyword not in _OWNERS]
    if unknown:
        raise TypeError(f"resolve_executor() got an unexpected keyword argument {unknown[0]!r}")
    given = {keyword: value for keyword, value in clusters.items() if value is not None}
    if isinstance(executor, concurrent.futures.Executor):
        for option in given:
            raise ConfigError(
                f"`{option}` configures executor={_OWNERS[option]!r}; the executor object "
                f"{executor!r} is already configured. Leave `{option}` out."
            )
        workers = workers if workers is not None else getattr(executor, "_max_workers", None)
        return ExecutorSpec(type(executor).__name__, workers, given=executor)
    if not isinstance(executor, str) or executor not in EXECUTORS:
        raise ConfigError(
            f"`executor` ({executor!r}) must be one of {one_of(EXECUTORS)} or a "
            f"concurrent.futures.Executor object.{did_you_mean(str(executor), EXECUTORS)}"
        )
    for option in given:
        owner = _OWNERS[option]
        if executor != owner:
            noun = EXECUTORS[owner].cluster.noun  # type: ignore[union-attr]
            raise ConfigError(
                f"`{option}` applies only to executor={owner!r}, not to {executor!r}: pass "
                f"executor={owner!r} to score on the {noun}."
            )
    entry = EXECUTORS[executor]
    cluster = None if entry.cluster is None else given.get(entry.cluster.keyword)
    importlib.import_module(entry.module).check_options(workers, cluster)
    return ExecutorSpec(executor, workers, cluster=cluster)
