"""``process``: a ``ProcessPoolExecutor`` of ``workers`` processes on this machine.

Workers are forked where the platform allows it, so that what the caller defined in
``__main__`` or a notebook is usable in them. A worker that dies (killed, out of memory, a
crash in native code) breaks the pool: the run makes a fresh one and tries the unfinished
shards again (see :mod:`itemscore.engine._dispatch`).

A worker ends when the process that started it does, however that ended (``kill -9``
included): a thread in each worker watches its parent, so no worker outlives its run, keeps
scoring for nobody, or holds what the run held.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import signal
import threading
import time
from typing import Any

from ._engine import Engine

__all__ = ["PARENT_POLL", "check_options", "open_executor"]

#: This executor takes no cluster.
CLUSTER = None

#: Seconds between two looks of a worker at its parent: a worker outlives it by at most this.
PARENT_POLL = 0.5


def _context() -> Any:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)


def _watch_parent(parent: int) -> None:
    """End this worker as soon as ``parent`` (the run's process) is gone."""
    while True:
        # An orphan is adopted by another process: its parent id changes.
        if os.getppid() != parent:
            os._exit(1)
        time.sleep(PARENT_POLL)


def _start_worker(parent: int) -> None:
    """Every worker's start: watch the parent; leave termination to the default again.

    A forked worker inherits the handlers of the command line, which turns ``SIGTERM`` into
    an orderly stop of the whole run: in a worker, ``SIGTERM`` ends the worker.
    """
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    threading.Thread(
        target=_watch_parent, args=(parent,), name="itemscore-parent-watch", daemon=True
    ).start()


def _kill(pool: concurrent.futures.Executor) -> None:
    """Stop the pool's workers at once (what they were doing is lost)."""
    stop = getattr(pool, "kill_workers", None)  # Python 3.14's ProcessPoolExecutor
    if stop is not None:
        stop()
        return
    processes = getattr(pool, "_processes", None)
    if isinstance(processes, dict):
        for process in list(processes.values()):
            process.kill()


def check_options(workers: int | None, cluster: Any) -> None:
    """Any number of workers (``None``: the machine's cores); there is no cluster to check."""


def open_executor(workers: int | None, cluster: Any) -> Engine:
    """A pool of ``workers`` processes (``None``: the machine's cores)."""
    count = workers or os.cpu_count() or 1

    def make() -> concurrent.futures.Executor:
        return concurrent.futures.ProcessPoolExecutor(
            count, mp_context=_context(), initializer=_start_worker, initargs=(os.getpid(),)
        )

    def close(pool: concurrent.futures.Executor) -> None:
        pool.shutdown(wait=True, cancel_futures=True)

    return Engine(
        "process", make(), workers=count, parallel=True, renew=make, close=close, kill=_kill
    )
