"""``process``: a ``ProcessPoolExecutor`` of ``workers`` processes on this machine.

Workers are forked where the platform allows it, so that what the caller defined in
``__main__`` or a notebook is usable in them. A worker that dies (killed, out of memory, a
crash in native code) breaks the pool: the run makes a fresh one and tries the unfinished
shards again (see :mod:`itemscore.engine._dispatch`).
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
from typing import Any

from ._engine import Engine

__all__ = ["open_executor"]


def _context() -> Any:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)


def open_executor(workers: int | None, client: Any) -> Engine:
    """A pool of ``workers`` processes (``None``: the machine's cores)."""
    count = workers or os.cpu_count() or 1

    def make() -> concurrent.futures.Executor:
        return concurrent.futures.ProcessPoolExecutor(count, mp_context=_context())

    def close(pool: concurrent.futures.Executor) -> None:
        pool.shutdown(wait=True, cancel_futures=True)

    return Engine("process", make(), workers=count, parallel=True, renew=make, close=close)
