"""Running a run's tasks on an executor: in a bounded window, lost workers tried again.

Every task is a function and its arguments that a worker can run (they pickle: the plan, the
settings, and the task's items or the part of a file it reads). :func:`run_tasks` submits
them to the run's executor with at most a few per worker in flight, hands each result to the
caller as it arrives, and deals with what can go wrong around a task rather than inside it:

- a worker that dies (``BrokenProcessPool``; Dask's ``KilledWorker`` or a cancelled future):
  the task is *lost*. A broken process pool is replaced by a fresh one; the tasks that were in
  flight are tried again one at a time, so that only the one that kills its worker is lost
  again; a task lost more than ``retries`` times is cut in two (:attr:`Task.split`) and each
  half tried alone, and so on, until the item that kills its worker is alone: only that item
  becomes :class:`Lost` ("worker lost: ... (item 'q7')") and the run goes on. A task that
  cannot be cut becomes :class:`Lost` as a whole. Nothing is kept on a worker between tasks,
  so any worker can take any task again. A pool that broke between two submits refuses the
  next one: that task waits, unrun, until the pool is renewed.
- ``deadline`` passes: the tasks not done become :class:`Lost` ("the run's deadline ...") and
  the workers of a pool the run started are stopped.
- an :class:`~itemscore.ItemscoreError` from a task (a malformed data file a worker read),
  ``KeyboardInterrupt`` or ``SystemExit``: the other tasks are cancelled and it is raised here.

Exceptions of metrics never get here: they are isolated inside the task (see ``_shard``).
"""

from __future__ import annotations

import concurrent.futures
import itertools
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import BrokenExecutor, Future
from typing import Any

import attrs

from .._exceptions import ItemscoreError, describe_exception
from ..executors import Engine

__all__ = ["Lost", "Split", "Task", "run_tasks"]

#: Fresh pools that may break in a row before taking any task, before the run gives up.
_IDLE_RENEWALS = 3
#: Tasks a run may cut in two, at most: a cut costs a worker's death, and when every item
#: kills its worker (a worker that cannot start) cutting down to each item would cost one
#: death per item. One killer item in a part of a million takes 20 cuts.
BISECTIONS = 200
#: A half's result not there yet.
_PENDING = object()


@attrs.frozen
class Task:
    """One unit of work for a worker."""

    #: A module-level function (workers import it by name).
    fn: Callable[..., Any]
    #: Its arguments.
    args: tuple[Any, ...]
    #: What it covers, for messages ("items 'q1' to 'q9'", "data.jsonl bytes 0-1048576").
    where: str
    #: Cuts the task in two, to find the item that kills its worker; ``None``: it cannot be
    #: cut (one item, or a task that is no shard of items).
    split: Callable[[], Split] | None = attrs.field(default=None, eq=False)


@attrs.frozen
class Split:
    """A task cut in two: its halves, in order, and how their results make the task's."""

    #: The first half.
    first: Task
    #: The second half.
    second: Task
    #: ``join(first's result, second's result)``: the task's result; either may be
    #: :class:`Lost` (an item that kills its worker).
    join: Callable[[Any, Any], Any]


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
    settle: bool = False,
) -> None:
    """Run ``tasks`` on ``engine``; call ``on_done(index, result or Lost)`` as each ends.

    ``tasks`` is taken one at a time, as the window has room: an iterator may still be
    finding its next task (planning a file's parts) while the workers run the first ones.
    A task cut in two (its worker died on it) ends when both halves have: ``on_done`` gets
    the result its :class:`Split` joins, under the task's own index.

    With ``settle``, a run that stops on an error waits for the tasks already running to end
    before it raises: they may still be writing where the caller is about to clean up (the
    read pass's spool folder).

    Raises:
        ItemscoreError: a task raised one, or ``tasks`` did (the others are cancelled first).
    """
    started = time.monotonic()
    window = max(1, (engine.workers or 1) * 2) if engine.parallel else 1
    coming = iter(tasks)
    # Every task run, by slot: the caller's tasks and the halves of those cut in two.
    taken: list[Task | None] = []
    attempts: list[int] = []
    index_of: dict[int, int] = {}  # slot of a caller's task -> its index for ``on_done``
    half_of: dict[int, tuple[int, int]] = {}  # slot of a half -> (slot it is half of, 0 or 1)
    halves: dict[int, tuple[Split, list[Any]]] = {}  # slot cut in two -> its cut, results
    queue: list[int] = []  # taken, not yet submitted (a submit the broken pool refused)
    alone: list[int] = []  # tasks that were in flight when a pool broke: tried one at a time
    running: dict[Future[Any], int] = {}
    idle_renewals = 0  # pools renewed in a row with nothing in flight, none taking a task
    cuts = 0
    numbers = itertools.count()

    def remaining() -> float | None:
        return None if deadline is None else max(0.0, deadline - (time.monotonic() - started))

    def slot_for(task: Task, tries: int = 0) -> int:
        taken.append(task)
        attempts.append(tries)
        return len(taken) - 1

    def top(task: Task) -> None:
        """Take one of the caller's tasks: its index is the count taken before it."""
        slot = slot_for(task)
        index_of[slot] = next(numbers)
        queue.append(slot)

    def finish(slot: int, result: Any) -> None:
        """A task ended: tell the caller, or its cut when it is a half."""
        while slot in half_of:
            taken[slot] = None  # a task done lets its arguments go (a shard's items)
            whole, which = half_of.pop(slot)
            cut, results = halves[whole]
            results[which] = result
            if any(r is _PENDING for r in results):
                return
            del halves[whole]
            slot, result = whole, cut.join(*results)
        taken[slot] = None
        on_done(index_of.pop(slot), result)

    def submit(waiting: list[int], at: int) -> bool:
        """Submit the task at ``waiting[at]``; ``False``: the pool broke meanwhile.

        A worker may die between the wait and the next submit: the task goes back where it
        was, unrun; the tasks in flight then report the break (or, none in flight, the pool
        is renewed here).
        """
        nonlocal idle_renewals
        slot = waiting.pop(at)
        task = taken[slot]
        assert task is not None
        try:
            running[engine.executor.submit(task.fn, *task.args)] = slot
        except BrokenExecutor:
            if not engine.renewable or idle_renewals >= _IDLE_RENEWALS:
                raise
            waiting.insert(at if at >= 0 else len(waiting), slot)
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
            top(task)
        return True

    def fill() -> None:
        while len(running) < window and take() and submit(queue, -1):
            pass

    def lost(slot: int, reason: str, *, counted: bool) -> None:
        # A task in flight beside others when a pool broke may be innocent: it is tried
        # again alone before it counts as lost. One lost too often is cut in two, and each
        # half tried alone: one item that kills its worker costs that item only.
        nonlocal cuts
        attempts[slot] += counted
        task = taken[slot]
        assert task is not None
        if attempts[slot] <= retries:
            alone.append(slot)
        elif task.split is not None and cuts < BISECTIONS:
            cuts += 1
            cut = task.split()
            halves[slot] = (cut, [_PENDING, _PENDING])
            for which, half in enumerate((cut.first, cut.second)):
                # A half of a task that kept dying is suspect already: its first death cuts it.
                half_slot = slot_for(half, retries)
                half_of[half_slot] = (slot, which)
                alone.append(half_slot)
        else:
            finish(slot, Lost(f"worker lost: {reason} ({task.where})"))

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
                slot = running.pop(future)
                try:
                    result = future.result()
                except SystemExit as exc:  # a metric's exit, maybe from a worker: its code kept
                    raise SystemExit(exc.args[0] if exc.args else exc.code) from None
                except (KeyboardInterrupt, ItemscoreError):
                    raise
                except BrokenExecutor as exc:
                    broken = True
                    reason = describe_exception(exc, one_line=True)
                    lost(slot, reason, counted=not together)
                    continue
                except BaseException as exc:  # noqa: BLE001 - the worker, not the task, failed
                    lost(slot, describe_exception(exc, one_line=True), counted=True)
                    continue
                finish(slot, result)
            if broken:
                for future, slot in list(running.items()):  # these broke with the pool too
                    running.pop(future)
                    lost(slot, "the pool broke while it ran", counted=not together)
                if engine.renewable:
                    engine.renew()
            elif not alone:
                fill()
            if remaining() == 0.0 and (running or alone or take()):
                for task in coming:  # never to run: lost, as the ones taken
                    top(task)
                _expire(engine, running, queue, alone, taken, deadline, finish)
                return
    except BaseException:
        for future in running:
            future.cancel()
        if settle:
            concurrent.futures.wait([future for future in running if not future.cancelled()])
        raise


def _expire(
    engine: Engine,
    running: dict[Future[Any], int],
    queue: list[int],
    alone: list[int],
    tasks: Sequence[Task | None],
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
    if engine.renewable:
        engine.kill()
        engine.renew()
    reason = f"the run's deadline of {deadline:g} s passed before this shard was scored"
    for index in sorted([*running.values(), *queue, *alone]):
        task = tasks[index]
        assert task is not None  # not done
        on_done(index, Lost(f"{reason} ({task.where})"))
    running.clear()
