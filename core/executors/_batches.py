"""What the Ray and Spark executors share: a task as a one-row Arrow batch, run by a worker.

Ray Data and Spark run functions over Arrow record batches, not calls: each task submitted is
pickled into the one cell of a one-row batch (column :data:`CALL`); the worker's batch
function (:func:`run_batch`) unpickles and runs it and answers a one-row batch whose cell
(column :data:`RESULT`) holds the pickled outcome — the task's value, or the exception it
raised. Back on the driver :func:`unpack` returns the value or raises that same exception,
so a task's own error (a malformed file a worker read, a metric its worker cannot import)
reaches the run as it would from a process pool, while a failure of the engine around the
task (a worker that died) stays the engine's exception: the run counts it a lost worker.

:class:`BatchExecutor` turns that into a ``concurrent.futures.Executor``: each task is one
job of the engine, launched from a driver-side thread, one thread per task running at once.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import pickle
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pyarrow as pa

from itemscore._exceptions import describe_exception

__all__ = [
    "CALL",
    "RESULT",
    "BatchExecutor",
    "pack",
    "run_batch",
    "run_batches",
    "unpack",
    "unwarned",
]

T = TypeVar("T")

#: The column of a task's batch that holds the pickled call ``(fn, args)``.
CALL = "call"
#: The column of the answer that holds the pickled outcome ``(True, value)``/``(False, exc)``.
RESULT = "result"
#: The answer's schema (Spark's ``"result binary"``).
RESULT_SCHEMA = pa.schema([(RESULT, pa.binary())])


#: Held while warnings are silenced: their filters are the process's, not a thread's.
_UNWARNED = threading.Lock()


@contextlib.contextmanager
def unwarned(category: type[Warning], module: str) -> Iterator[None]:
    """Silence ``category`` warnings from ``module`` (the engine's) while a job is built.

    Jobs are built by several threads at once: the lock keeps one thread from restoring the
    filters another is still inside of.
    """
    with _UNWARNED, warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=category, module=module)
        yield


class TaskOutcomeError(RuntimeError):
    """A task's exception that could not be pickled back, said in words."""


def pack(fn: Callable[..., Any], args: tuple[Any, ...]) -> bytes:
    """The call ``fn(*args)`` as the bytes of one :data:`CALL` cell."""
    return pickle.dumps((fn, args), protocol=pickle.HIGHEST_PROTOCOL)


def _run(blob: bytes) -> bytes:
    """Run one pickled call; its outcome pickled, an exception included."""
    try:
        fn, args = pickle.loads(blob)
        outcome: tuple[bool, Any] = (True, fn(*args))
    except BaseException as exc:  # noqa: BLE001 - sent back, raised on the driver
        outcome = (False, exc)
    try:
        return pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # noqa: BLE001 - an exception (or value) that does not pickle
        what = outcome[1] if not outcome[0] else exc
        error = TaskOutcomeError(describe_exception(what, one_line=True))
        return pickle.dumps((False, error), protocol=pickle.HIGHEST_PROTOCOL)


def run_batch(batch: pa.RecordBatch | pa.Table) -> pa.RecordBatch:
    """A batch of calls in, the batch of their outcomes out (the workers' function)."""
    outcomes = [_run(blob) for blob in batch.column(CALL).to_pylist()]
    return pa.RecordBatch.from_arrays([pa.array(outcomes, pa.binary())], schema=RESULT_SCHEMA)


def run_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """:func:`run_batch` over each batch (Spark's ``mapInArrow`` function)."""
    for batch in batches:
        yield run_batch(batch)


def unpack(blob: bytes) -> Any:
    """The value of a task's outcome, or the exception it raised, raised here.

    Raises:
        BaseException: the exception the task raised on its worker.
    """
    ok, value = pickle.loads(blob)
    if not ok:
        raise value
    return value


class BatchExecutor(concurrent.futures.Executor):
    """Tasks as jobs of an engine, each launched from a thread of this process.

    Args:
        run: Runs the one-row batch of a pickled call on the engine's workers and returns the
            :data:`RESULT` cell of its answer; it blocks until then.
        threads: How many tasks run at once.
        name: Names the threads (``itemscore-ray``).
    """

    def __init__(self, run: Callable[[bytes], bytes], threads: int, name: str) -> None:
        self._run = run
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max(1, threads), thread_name_prefix=f"itemscore-{name}"
        )

    def submit(
        self, fn: Callable[..., T], /, *args: Any, **kwargs: Any
    ) -> concurrent.futures.Future[T]:
        """Send ``fn(*args)`` to the engine; the future holds its value or its exception."""
        if kwargs:
            raise TypeError("tasks are called with positional arguments only")
        blob = pack(fn, args)
        return self._pool.submit(self._call, blob)

    def _call(self, blob: bytes) -> Any:
        return unpack(self._run(blob))

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop taking tasks; with ``cancel_futures``, the ones not started never start."""
        self._pool.shutdown(wait=wait, cancel_futures=cancel_futures)
