"""How a command-line process allocates: the settings it picks when the user named none.

Arrow's pool is set once, at the start of a process of its own (the console script), so that every
buffer of the run, and every worker started from it, allocates the same way. From Python,
nothing is changed: the caller's process is the caller's.

- **Arrow's pool**: the system allocator. Arrow's default (mimalloc) keeps what a run freed;
  with the system allocator the 1M-line run peaks 55-65 MB (15%) lower, at the same speed.
- **pandas, unless asked for**: pyarrow imports pandas, when it is installed, the first time it
  asks whether a value is a pandas object (every ``pa.array`` of a list, every compute call
  with a Python number asks), and remembers the answer. That is 0.5 s and 50 MB in the driver
  and in each worker, for a question whose answer is always no here: the command line hands
  pyarrow no pandas object. So before a run, :func:`arrow_without_pandas` lets pyarrow ask once
  with pandas hidden. What needs pandas still gets it (``Table.to_pandas`` imports it when
  called, and a metric may import it), and pyarrow's nanosecond times do not depend on it,
  because the readers cast them first.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
from collections.abc import Sequence
from types import ModuleType

__all__ = [
    "ARROW_POOL_ENV",
    "arrow_without_pandas",
    "settle",
]

#: The environment variable by which pyarrow picks its default memory pool.
ARROW_POOL_ENV = "ARROW_DEFAULT_MEMORY_POOL"
_settled: list[bool] = []  # one entry once settle() ran: the process is the command line's


def settle() -> None:
    """Pick Arrow's pool of a command-line process (before pyarrow is imported), unless named."""
    _settled.append(True)
    os.environ.setdefault(ARROW_POOL_ENV, "system")


class _NoPandas(importlib.abc.MetaPathFinder):
    """A finder under which ``import pandas`` fails, for the moment it is installed."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname == "pandas":
            raise ImportError("pandas is hidden while pyarrow looks for it")
        return None


def arrow_without_pandas() -> None:
    """In a command-line process, let pyarrow look for pandas once, with pandas hidden.

    Called before a run reads its data (and so before any worker starts, which inherits the
    answer). Nothing happens in a caller's process, or when pandas is already imported.

    Kept because it pays: without it, ``itemscore score`` of the 1M-line QA file with three
    metrics peaks at 303 MB instead of 270 MB (+12%), and at 334 MB instead of 301 MB with
    every report (+11%), at the same speed (two alternating pairs).
    """
    if not _settled or "pandas" in sys.modules:
        return
    hidden = _NoPandas()
    sys.meta_path.insert(0, hidden)
    try:
        import pyarrow as pa

        pa.array([0])  # pyarrow's first look for pandas: it remembers "none"
    finally:
        sys.meta_path.remove(hidden)
