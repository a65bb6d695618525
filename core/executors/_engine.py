"""``Engine``: a started executor, and what the run may do when it breaks."""

from __future__ import annotations

import concurrent.futures
import importlib
from collections.abc import Callable
from typing import Any

import attrs

from itemscore._exceptions import ConfigError

__all__ = ["Cluster", "Engine", "needed"]


def needed(executor: str, module: str, what: str, *names: str, extra: str | None = None) -> Any:
    """``module``, imported; missing, an error saying what ``executor`` needs and how to get it.

    ``names`` and ``extra`` are what :func:`~itemscore._extras.install_hint` installs.

    Raises:
        ConfigError: ``module`` (or a package it needs) is not installed.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        from itemscore._extras import install_hint

        raise ConfigError(
            f"executor={executor!r} needs {what}: {install_hint(*names, extra=extra)}."
        ) from exc


@attrs.frozen
class Cluster:
    """How a run names an executor's cluster: the ``score`` keyword, and a command-line flag.

    An executor module that takes a cluster sets its ``CLUSTER`` to one.
    """

    #: The keyword of ``score`` (and ``run``, ``rescore``) that takes it.
    keyword: str
    #: How messages name it: "score on the {noun}".
    noun: str
    #: The help of the command line's flag ``--NAME ADDRESS`` (and the configuration key
    #: ``NAME:``, ``NAME`` the executor's) that names it by its address; ``None``: no flag.
    flag_help: str | None = None


class Engine:
    """A started executor for one run.

    Args:
        name: The executor's name, as ``RunSettings.executor`` records it.
        executor: Where tasks are submitted.
        workers: How many tasks run at once (``None``: unknown).
        parallel: Whether tasks leave this process.
        renew: Makes a fresh executor after this one broke (a process pool whose worker
            died); ``None``: it cannot be renewed (the caller's executor, a cluster).
        close: Shuts down what the run started; ``None``: nothing to shut down (the caller's).
        kill: Stops the workers at once, what they do lost (a run past its deadline, or
            interrupted); ``None``: they cannot be stopped from here.
    """

    def __init__(
        self,
        name: str,
        executor: concurrent.futures.Executor,
        *,
        workers: int | None,
        parallel: bool,
        renew: Callable[[], concurrent.futures.Executor] | None = None,
        close: Callable[[concurrent.futures.Executor], None] | None = None,
        kill: Callable[[concurrent.futures.Executor], None] | None = None,
    ) -> None:
        self.name = name
        self.executor = executor
        self.workers = workers
        self.parallel = parallel
        self._renew = renew
        self._close = close
        self._kill = kill

    @property
    def renewable(self) -> bool:
        """Whether a broken executor can be replaced by a fresh one."""
        return self._renew is not None

    def renew(self) -> None:
        """Replace a broken executor by a fresh one (the broken one is shut down)."""
        assert self._renew is not None
        old, self.executor = self.executor, self._renew()
        if self._close is not None:
            self._close(old)

    def kill(self) -> None:
        """Stop the workers the run started at once, if it can (see ``kill``)."""
        if self._kill is not None:
            self._kill(self.executor)

    def close(self, *, abort: bool = False) -> None:
        """Shut down what the run started (a caller's executor is left running).

        Args:
            abort: The run is ending early (an error, an interrupt): stop the workers
                first instead of waiting for the tasks they run.
        """
        if abort and self._close is not None:
            self.kill()
        if self._close is not None:
            self._close(self.executor)
            self._close = None

    def __repr__(self) -> str:
        return f"<Engine {self.name!r} workers={self.workers!r}>"
