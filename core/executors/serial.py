"""``serial``: every shard in this process, one after another (the default).

Async metrics still score many items at once (``RunSettings.concurrency``), on an event loop
of their own.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from typing import Any, TypeVar

from itemscore._exceptions import ConfigError

from ._engine import Engine

__all__ = ["InlineExecutor", "check_options", "open_executor"]

#: This executor takes no cluster.
CLUSTER = None

T = TypeVar("T")


class InlineExecutor(concurrent.futures.Executor):
    """A ``concurrent.futures.Executor`` that runs each task when it is submitted, here."""

    def submit(
        self, fn: Callable[..., T], /, *args: Any, **kwargs: Any
    ) -> concurrent.futures.Future[T]:
        """Run ``fn`` now; its result or exception is in the returned, finished future."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001 - delivered through the future, as pools do
            future.set_exception(exc)
        return future


def check_options(workers: int | None, cluster: Any) -> None:
    """The serial executor takes no workers.

    Raises:
        ConfigError: ``workers`` is given.
    """
    if workers is not None:
        raise ConfigError(
            f"`workers` ({workers!r}) does not apply to the serial executor, which scores in "
            "this process: pass executor='process' (or 'dask', 'ray', 'spark') to use workers."
        )


def open_executor(workers: int | None, cluster: Any) -> Engine:
    """The in-process executor."""
    return Engine("serial", InlineExecutor(), workers=None, parallel=False)
