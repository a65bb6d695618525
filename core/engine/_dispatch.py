"""Running a run's tasks on an executor: in a bounded window, lost workers tried again.

Every task is a function and its arguments that a worker can run (they pickle: the plan, the
settings, and the task's items or the part of a file it reads). :func:`run_tasks` submits
them to the run's executor with at most a few per worker in flight, hands each result to the
caller as it arrives, and deals with what can go wrong around a task rather than inside it:

- a worker that dies (``BrokenProcessPool``; Dask's ``KilledWorker`` or a cancelled future):
  the task is *lost*. A broken process pool is replaced by a fresh one; the tasks that were in
  flight are tried again one at a time, so that only the one that kills its worker is lost
  again; a task lost more than ``retries`` times becomes :class:`Lost` ("worker lost: ...")
  and the run goes on. Nothing is kept on a worker between tasks, so any worker can take any
  task again. A pool that broke between two submits refuses the next one: that task waits,
  unrun, until the pool is renewed.
- ``deadline`` passes: the tasks not done become :class:`Lost` ("the run's deadline ...") and
  the workers of a pool the run started are stopped.
- an :class:`~itemscore.ItemscoreError` from a task (a malformed data file a worker read),
  ``KeyboardInterrupt`` or ``SystemExit``: the other tasks are cancelled and it is raised here.

Exceptions of metrics never get here: they are isolated inside the task (see ``_shard``).
"""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import BrokenExecutor, Future
from typing import Any

import attrs

from .._exceptions import ItemscoreError, describe_exception
from ..executors import Engine

__all__ = ["Lost", "Task", "run_tasks"]

#: Fresh pools that may break in a row before taking any task, before the run gives up.
_IDLE_RENEWALS = 3


@attrs.frozen
class Task:
    """One unit of work for a worker."""

    #: A module-level function (workers import it by name).
    fn: Callable[..., Any]
    #: Its arguments.
    args: tuple[Any, ...]
    #: What it covers, for messages ("items 'q1' to 'q9'", "data.jsonl bytes 0-1048576").
    where: str


@attrs.frozen
class Lost:
    """A task that produced nothing: its worker was lost, or the run's deadline passed."""

    #: Why, as its items' error reason says it.
    reason: str


def run_tasks(
    engine: Engine,
    tasks: Iterable[Task],
    *,
    retries: int,
    deadline: float | None,
    on_done: Callable[[int, Any], None],
) -> None:
    """Run ``tasks`` on ``engine``; call ``on_done(index, result or Lost)`` as each ends.

    ``tasks`` is taken one at a time, as the window has room: an iterator may still be
    finding its next task (planning a file's parts) while the workers run the first ones.

    Raises:
        ItemscoreError: a task raised one, or ``tasks`` did (the others are cancelled first).
    """
    started = time.monotonic()
    window = max(1, (engine.workers or 1) * 2) if engine.parallel else 1
    coming = iter(tasks)
    taken: list[Task] = []  # the tasks taken from ``coming``, by index
    attempts: list[int] = []
    queue: list[int] = []  # taken, not yet submitted (a submit the broken pool refused)
    alone: list[int] = []  # tasks that were in flight when a pool broke: tried one at a time
    running: dict[Future[Any], int] = {}
    idle_renewals = 0  # pools renewed in a row with nothing in flight, none taking a task

    def remaining() -> float | None:
        return None if deadline is None else max(0.0, deadline - (time.monotonic() - started))

    def submit(waiting: list[int], at: int) -> bool:
        """Submit the task at ``waiting[at]``; ``False``: the pool broke meanwhile.

        A worker may die between the wait and the next submit: the task goes back where it
        was, unrun; the tasks in flight then report the break (or, none in flight, the pool
        is renewed here).
        """
        nonlocal idle_renewals
        index = waiting.pop(at)
        task = taken[index]
        try:
            running[engine.executor.submit(task.fn, *task.args)] = index
        except BrokenExecutor:
            if not engine.renewable or idle_renewals >= _IDLE_RENEWALS:
                raise
            waiting.insert(at if at >= 0 else len(waiting), index)
            if not running:
                idle_renewals += 1
                engine.renew()
            return False
        idle_renewals = 0
        return True

    def take() -> bool:
        """Have a task in ``queue``, taking the next one when it is empty; ``False``: none."""
        if not queue:
            task = next(coming, None)
            if task is None:
                return False
            queue.append(len(taken))
            taken.append(task)
            attempts.append(0)
        return True

    def fill() -> None:
        while len(running) < window and take() and submit(queue, -1):
            pass

    def lost(index: int, reason: str, *, counted: bool) -> None:
        # A task in flight beside others when a pool broke may be innocent: it is tried
        # again alone before it counts as lost.
        attempts[index] += counted
        if attempts[index] > retries:
            on_done(index, Lost(f"worker lost: {reason} ({taken[index].where})"))
        else:
            alone.append(index)

    try:
        while alone or running or take():
            if not running:
                if alone:  # one suspect at a time: if it breaks the pool again, it is the one
                    submit(alone, 0)
                else:
                    fill()
                if not running:
                    continue  # the pool was broken, and is renewed: submit again
            done, _ = concurrent.futures.wait(
                running, timeout=remaining(), return_when=concurrent.futures.FIRST_COMPLETED
            )
            broken = False
            together = len(running) > 1 and engine.renewable
            for future in done:
                index = running.pop(future)
                try:
                    result = future.result()
                except SystemExit as exc:  # a metric's exit, maybe from a worker: its code kept
                    raise SystemExit(exc.args[0] if exc.args else exc.code) from None
                except (KeyboardInterrupt, ItemscoreError):
                    raise
                except BrokenExecutor as exc:
                    broken = True
                    reason = describe_exception(exc, one_line=True)
                    lost(index, reason, counted=not together)
                    continue
                except BaseException as exc:  # noqa: BLE001 - the worker, not the task, failed
                    lost(index, describe_exception(exc, one_line=True), counted=True)
                    continue
                on_done(index, result)
            if broken:
                for future, index in list(running.items()):  # these broke with the pool too
                    running.pop(future)
                    lost(index, "the pool broke while it ran", counted=not together)
                if engine.renewable:
                    engine.renew()
            elif not alone:
                fill()
            if remaining() == 0.0 and (running or alone or take()):
                rest = list(coming)  # never to run: lost, as the ones taken
                queue.extend(range(len(taken), len(taken) + len(rest)))
                taken.extend(rest)
                _expire(engine, running, queue, alone, taken, deadline, on_done)
                return
    except BaseException:
        for future in running:
            future.cancel()
        raise


def _expire(
    engine: Engine,
    running: dict[Future[Any], int],
    queue: list[int],
    alone: list[int],
    tasks: Sequence[Task],
    deadline: float | None,
    on_done: Callable[[int, Any], None],
) -> None:
    """The deadline passed: stop the workers the run started, every task not done is lost."""
    for future, index in list(running.items()):
        if future.done() and not future.cancelled() and future.exception() is None:
            on_done(index, future.result())  # finished just in time
            del running[future]
        else:
            future.cancel()
    stop = getattr(engine.executor, "kill_workers", None)  # Python 3.14's ProcessPoolExecutor
    processes = getattr(engine.executor, "_processes", None)
    if engine.renewable:
        if stop is not None:
            stop()
        elif isinstance(processes, dict):
            for process in list(processes.values()):
                process.kill()
        engine.renew()
    reason = f"the run's deadline of {deadline:g} s passed before this shard was scored"
    for index in sorted([*running.values(), *queue, *alone]):
        on_done(index, Lost(f"{reason} ({tasks[index].where})"))
    running.clear()
