"""Executors: how a run's shards of items are scored (serial, a process pool, Dask).

One module per executor, registered here and nowhere else: to add one, write a module with an
:class:`Executor` subclass and add its name to :data:`EXECUTORS`.
"""

from __future__ import annotations

import importlib
from typing import Any

from itemscore._exceptions import ConfigError, did_you_mean, one_of

from ._base import Executor, ShardFailure
from ._shard import score_shard

__all__ = ["EXECUTORS", "Executor", "ShardFailure", "get_executor", "score_shard"]

#: Every built-in executor: name -> ``"module:Class"``, imported only when used.
EXECUTORS: dict[str, str] = {
    "serial": "itemscore.executors.serial:SerialExecutor",
    "process": "itemscore.executors.process:ProcessExecutor",
    "dask": "itemscore.executors.dask:DaskExecutor",
}


def get_executor(
    executor: str | Executor, *, workers: int | None = None, client: Any = None
) -> Executor:
    """The executor named ``executor``, configured; an executor object is returned as is.

    Options that do not apply to the executor are an error, never silently ignored.

    Raises:
        ConfigError: an unknown name, or ``workers``/``client`` where they do not apply.
    """
    if isinstance(executor, Executor):
        if workers is not None or client is not None:
            raise ConfigError(
                f"`workers` and `client` configure the built-in executors; the executor object "
                f"{executor!r} is already configured. Leave them out."
            )
        return executor
    if not isinstance(executor, str) or executor not in EXECUTORS:
        raise ConfigError(
            f"`executor` ({executor!r}) must be one of {one_of(EXECUTORS)} or an Executor "
            f"object.{did_you_mean(str(executor), EXECUTORS)}"
        )
    if client is not None and executor != "dask":
        raise ConfigError(
            f"`client` applies only to executor='dask', not to {executor!r}: pass "
            "executor='dask' to score on the client's cluster."
        )
    if executor == "serial":
        if workers is not None:
            raise ConfigError(
                f"`workers` ({workers!r}) does not apply to the serial executor, which scores "
                "in this process: pass executor='process' (or 'dask') to use workers."
            )
        kwargs: dict[str, Any] = {}
    elif executor == "process":
        kwargs = {"workers": workers}
    else:
        kwargs = {"workers": workers, "client": client}
    module, _, cls = EXECUTORS[executor].partition(":")
    factory = getattr(importlib.import_module(module), cls)
    made: Executor = factory(**kwargs)
    return made
