"""Scoring one shard: every item-level metric of a plan over some items, each item isolated.

This is what runs in every worker, and in this process for the serial executor: given the
plan and a shard of items, one :class:`~itemscore.ScoreColumn` per metric label, in item order.

Isolation follows pytest's ``CallInfo.from_call``, named once in :class:`Guard`: every call of
a metric is made inside it; any ``Exception`` becomes that item's ``error`` score (type,
message and a short traceback) and the shard goes on; ``KeyboardInterrupt`` passes through,
and so does ``SystemExit`` — after a message on standard error that names the metric and the
item, so a run never ends without saying why. A wrong return type is an error too; ``None``
is skip. A batch (``score_items``) that raises, returns the wrong number of results or runs
out of time is scored again item by item, so one bad item costs one score.

With ``RunSettings.item_timeout`` (300 s unless the run says otherwise, see
:func:`item_limit`), an item whose call does not return in time becomes an
``error`` ("timed out after N s"): enforced with ``SIGALRM`` in a main thread (the serial
executor, process workers) and by raising into the scoring thread elsewhere (Dask workers),
both of which need the metric to be running Python code; a metric stuck inside native code
is stopped only by the run's ``deadline``.
"""

from __future__ import annotations

import contextlib
import ctypes
import inspect
import operator
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from .._columns import SKIP, ScoreColumn
from .._defaults import DEFAULT_ITEM_TIMEOUT
from .._exceptions import describe_exception
from .._metric import Metric, MetricContext
from .._records import ItemResult, ItemScore, Status

if TYPE_CHECKING:
    from .._plan import PlannedMetric, RunPlan
    from .._settings import RunSettings

__all__ = [
    "NO_ANSWER_KEY",
    "DeadlinePassed",
    "Guard",
    "ItemTimeout",
    "Tick",
    "error_score",
    "item_limit",
    "run_coroutine",
    "score_metric",
    "score_shard",
]

#: ``tick(count)``: called as items are scored, with how many were done since the last call.
Tick = Callable[[int], None]

_PROGRESS_EVERY = 2048
_TRACEBACK_FRAMES = 3
_ITEM_ATTRS = frozenset(a.name for a in attrs.fields(ItemResult))
NO_ANSWER_KEY = "no answer key (expected is empty)"
UNSCORED = "the metric left it unscored"


class ItemTimeout(Exception):
    """A metric's call on one item (or one batch) ran out of its time."""


class DeadlinePassed(ItemTimeout):
    """The run's deadline passed while (or before) a metric scored an item."""


def _no_tick(count: int) -> None:
    """Progress nobody listens to."""


# -- the isolation pattern ------------------------------------------------------------------


class Guard:
    """How every call of a metric is made: isolated, timed, and an exit named.

    ``guard(fn, *args)`` returns ``fn``'s result, or the :class:`~itemscore.ItemScore` of the
    ``error`` it raised. One guard serves one metric over one shard.

    Args:
        label: The metric's label (error scores carry it).
        limit: Seconds a call may take (``None``: no limit).
        deadline: When the run must end (``time.time()``); no call runs past it.
    """

    __slots__ = ("_timer", "deadline", "label", "limit")

    def __init__(
        self, label: str, limit: float | None = None, deadline: float | None = None
    ) -> None:
        self.label = label
        self.limit = limit
        self.deadline = deadline
        self._timer = _timer_for(limit if deadline is None else 0.0)

    def __call__(self, fn: Callable[..., Any], *args: Any, limit: float | None = None) -> Any:
        try:
            if self._timer is None:
                return fn(*args)
            seconds = self.limit if limit is None else limit
            if self.deadline is not None:
                left = self.deadline - time.time()
                if left <= 0:
                    raise DeadlinePassed("the run's deadline passed before this item was scored")
                if seconds is None or left < seconds:
                    with self._timer.within(left, DeadlinePassed):
                        return fn(*args)
            with self._timer.within(seconds):
                return fn(*args)
        except Exception as exc:  # noqa: BLE001 - isolation: the item records the error
            return error_score(self.label, exc)
        except SystemExit as exc:
            item = next((a for a in args if isinstance(a, ItemResult)), None)
            what = f"item {item.id!r}" if item is not None else "a batch of items"
            print(
                f"itemscore: metric {self.label!r} called sys.exit({exc.code!r}) while scoring "
                f"{what}; the run stops here.",
                file=sys.stderr,
            )
            raise

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        """Arm the guard's timer for the calls made inside (installs a signal handler once)."""
        if self._timer is None:
            yield
            return
        with self._timer.installed():
            yield


def _timer_for(limit: float | None) -> _Timer | None:
    if limit is None:
        return None
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
        return _AlarmTimer()
    return _ThreadTimer()


class _Timer:
    def installed(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def within(
        self, seconds: float | None, expired: type[ItemTimeout] = ItemTimeout
    ) -> contextlib.AbstractContextManager[None]:
        raise NotImplementedError


def _timed_out(seconds: float, expired: type[ItemTimeout] = ItemTimeout) -> ItemTimeout:
    if expired is DeadlinePassed:
        return DeadlinePassed("the run's deadline passed while this item was scored")
    return ItemTimeout(f"timed out after {seconds:g} s (item_timeout)")


class _AlarmTimer(_Timer):
    """A time limit by ``SIGALRM``: the handler raises inside the metric's call."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.expired: type[ItemTimeout] = ItemTimeout

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        def on_alarm(signum: int, frame: Any) -> None:
            raise _timed_out(self.seconds, self.expired)

        previous = signal.signal(signal.SIGALRM, on_alarm)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    @contextlib.contextmanager
    def within(
        self, seconds: float | None, expired: type[ItemTimeout] = ItemTimeout
    ) -> Iterator[None]:
        if seconds is None:
            yield
            return
        self.seconds, self.expired = seconds, expired
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)


class _ThreadTimer(_Timer):
    """A time limit outside the main thread: the exception is raised into the calling thread.

    One watching thread serves every call of the guard (a thread per call would cost more
    than most metrics' items): a call sets its end under a lock, the watcher looks at it at
    least every :data:`_WATCH_POLL` seconds, and a call that ended first receives an
    exception raised too late to land inside it (:func:`_receive_late`).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._call: tuple[int, float, int] | None = None  # (thread, end, call number)
        self._fired = -1  # the call number an exception was raised for
        self._calls = 0

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        stop = threading.Event()
        watcher = threading.Thread(
            target=self._watch, args=(stop,), name="itemscore-item-timeout", daemon=True
        )
        watcher.start()
        try:
            yield
        finally:
            stop.set()
            watcher.join()

    def _watch(self, stop: threading.Event) -> None:
        wait = _WATCH_POLL
        while not stop.wait(wait):
            wait = _WATCH_POLL
            with self._lock:
                if self._call is None:
                    continue
                thread, end, number = self._call
                left = end - time.monotonic()
                if left > 0:
                    wait = min(left, _WATCH_POLL)
                    continue
                self._call = None
                self._fired = number
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(thread), ctypes.py_object(ItemTimeout)
                )

    @contextlib.contextmanager
    def within(
        self, seconds: float | None, expired: type[ItemTimeout] = ItemTimeout
    ) -> Iterator[None]:
        if seconds is None:
            yield
            return
        with self._lock:
            self._calls += 1
            number = self._calls
            self._call = (threading.get_ident(), time.monotonic() + seconds, number)
        caught = False
        try:
            yield
        except ItemTimeout:
            caught = True
            raise _timed_out(seconds, expired) from None
        finally:
            with self._lock:
                self._call = None
                late = self._fired == number and not caught
                if self._fired == number:
                    self._fired = -1
            if late:
                _receive_late()


def _receive_late() -> None:
    """Let an exception raised just as its call ended land here, not in the caller's next line.

    A pending exception cannot be taken back safely: clearing it through
    ``PyThreadState_SetAsyncExc(thread, NULL)`` leaves CPython 3.11's eval breaker set, and
    under a trace function (coverage, debuggers) the thread then spins at its next call. A
    loop's backward jump delivers it; one the metric caught and swallowed is waited for no
    longer than :data:`_LATE_WAIT`.
    """
    until = time.monotonic() + _LATE_WAIT
    with contextlib.suppress(ItemTimeout):
        while time.monotonic() < until:
            pass


#: Seconds a call that ended as its time ran out waits for the exception raised into it.
_LATE_WAIT = 0.1

#: Seconds between two looks of the watching thread at the call it times.
_WATCH_POLL = 0.05


def error_score(label: str, exc: BaseException) -> ItemScore:
    """The error score of an exception, described as everywhere else, and a short traceback."""
    frames = traceback.format_tb(exc.__traceback__)[-_TRACEBACK_FRAMES:]
    return ItemScore(
        metric=label,
        status=Status.ERROR,
        reason=describe_exception(exc),
        extra={"traceback": "".join(frames)},
    )


def _checked(result: object, label: str) -> ItemScore:
    """The metric's return value as a valid score: None is skip, junk is error."""
    if isinstance(result, ItemScore):
        return result
    if result is None:
        return ItemScore(metric=label, status=Status.SKIP, reason=UNSCORED)
    return ItemScore(
        metric=label,
        status=Status.ERROR,
        reason=f"TypeError: score_item returned {type(result).__name__}, "
        "expected ItemScore or None",
    )


# -- one shard ------------------------------------------------------------------------------


def score_shard(
    plan: RunPlan,
    items: Sequence[ItemResult],
    settings: RunSettings,
    tick: Tick | None = None,
    memo: dict[str, Any] | None = None,
    deadline: float | None = None,
) -> dict[str, ScoreColumn]:
    """Score ``items`` with every item-level metric of ``plan``, each item isolated.

    Corpus metrics (``compute``) are left out: the driver runs them once over all rows.

    Args:
        plan: The run's configured metrics.
        items: The shard's items.
        settings: The run's settings.
        tick: Called as items are scored (progress).
        memo: What lives across the shards of one run in this process (the metrics' caches,
            :attr:`MetricContext.memo`); ``None``: nothing outlives the shard.
        deadline: When the run must end (``time.time()``): items not scored by then are
            errors.

    Returns:
        One column per label, aligned with ``items``.
    """
    tick = tick or _no_tick
    # One memo for each normaliser two metrics share: each output normalised once.
    kept = {} if memo is None else memo
    if _NORMALIZERS not in kept:
        kept[_NORMALIZERS] = {n: _memoised(n) for n in plan.equal_normalizers()} or None
    shared = kept[_NORMALIZERS]
    out: dict[str, ScoreColumn] = {}
    for pm in plan.metrics:
        if pm.is_corpus:
            continue
        ctx = MetricContext(
            suite_id=settings.suite_id, label=pm.label, confidence=settings.confidence,
            ci_method=settings.ci_method, seed=settings.seed, concurrency=settings.concurrency,
            shared_normalizers=shared, memo=memo,
        )  # fmt: skip
        limit = item_limit(pm.metric, settings.item_timeout)
        out[pm.label] = score_metric(pm, items, ctx, tick, limit, deadline)
    return out


def item_limit(metric: Metric, item_timeout: float | None) -> float | None:
    """The seconds ``metric`` may take on one item in a run whose setting is ``item_timeout``.

    The default limit (:data:`~itemscore._settings.DEFAULT_ITEM_TIMEOUT`) gives way to a
    longer bound the metric sets its own items (:attr:`~itemscore.Metric.item_time_bound`):
    the judge's retries are not cut short by a limit nobody asked for. Any other limit is
    the user's, and holds.
    """
    if item_timeout is None or item_timeout != DEFAULT_ITEM_TIMEOUT:
        return item_timeout
    bound = getattr(metric, "item_time_bound", None)
    if isinstance(bound, (int, float)) and not isinstance(bound, bool) and bound > item_timeout:
        return float(bound)
    return item_timeout


#: The key of the shared normalisers in a run's memo (labels are metric ids: no clash).
_NORMALIZERS = " normalizers"
#: A shared normaliser remembers at most this many texts (it lives as long as the run).
MEMO_LIMIT = 1 << 16


def _memoised(normalizer: Callable[[str], str]) -> Callable[[str], str]:
    """``normalizer`` with a memo: a text normalised before is looked up, not normalised."""
    memo: dict[str, str] = {}
    get = memo.get

    def normalize(text: str) -> str:
        found = get(text)
        if found is None:
            found = normalizer(text)
            if len(memo) < MEMO_LIMIT:
                memo[text] = found
        return found

    return normalize


def score_metric(
    pm: PlannedMetric,
    items: Sequence[ItemResult],
    ctx: MetricContext,
    tick: Tick,
    limit: float | None = None,
    deadline: float | None = None,
) -> ScoreColumn:
    """One metric's column for ``items``: skips for missing inputs, the rest scored."""
    metric, label = pm.metric, pm.label
    skipped = _missing_inputs(items, metric.required_inputs)
    todo = [item for i, item in enumerate(items) if i not in skipped] if skipped else items
    guard = Guard(label, limit, deadline)
    if not todo:
        part = ScoreColumn(label, b"", [])
    elif inspect.iscoroutinefunction(metric.score_item):
        part = ScoreColumn.from_scores(label, _run_async(metric, todo, ctx, tick, limit))
    else:
        with guard.active():
            if type(metric).score_items is not Metric.score_items:
                part = _run_batch(metric, guard, todo, ctx, tick)
            else:
                part = ScoreColumn.from_scores(label, _run_each(metric, guard, todo, ctx, tick))
    tick(len(skipped))
    return _with_skips(part, len(items), skipped) if skipped else part


def _missing_inputs(items: Sequence[ItemResult], required: Sequence[str]) -> dict[int, str]:
    """The skip reason of every item that lacks a required input, by index.

    An item lacking several is skipped for the first one ``required`` names.
    """
    skipped: dict[int, str] = {}
    for name in required:
        if name in _ITEM_ATTRS:
            values = list(map(operator.attrgetter(name), items))
            if None not in values:  # the common case: one scan at C speed
                continue
            reason = NO_ANSWER_KEY if name == "expected" else f"missing required input: {name}"
        else:
            values = [item.metadata.get(name) for item in items]
            reason = f"missing required input: {name}"
        for index, value in enumerate(values):
            if value is None:
                skipped.setdefault(index, reason)
    return skipped


def _with_skips(part: ScoreColumn, n: int, skipped: dict[int, str]) -> ScoreColumn:
    """``part`` (the scores of the items not skipped) with the skips put back in place.

    Skips are sparse, so the scored runs between them are copied as slices.
    """
    states = bytearray()
    values: list[float | None] = []
    reasons: list[str | None] = []
    extras: list[Any] | None = None if part.extras is None else []
    src = prev = 0
    for index in sorted(skipped):
        end = src + index - prev
        states += part.states[src:end]
        values += part.values[src:end]
        reasons += part.reasons[src:end] if part.reasons is not None else [None] * (end - src)
        if extras is not None:
            extras += part.extras[src:end]  # type: ignore[index] # not None with extras
            extras.append(None)
        states.append(SKIP)
        values.append(None)
        reasons.append(skipped[index])
        src, prev = end, index + 1
    states += part.states[src:]
    values += part.values[src:]
    reasons += part.reasons[src:] if part.reasons is not None else [None] * (len(part) - src)
    if extras is not None:
        extras += part.extras[src:]  # type: ignore[index] # not None with extras
    assert len(states) == n
    return ScoreColumn(part.label, states, values, reasons, extras)


def _run_each(
    metric: Metric, guard: Guard, items: Sequence[ItemResult], ctx: MetricContext, tick: Tick
) -> list[ItemScore]:
    score_item, label = metric.score_item, guard.label
    out: list[ItemScore] = []
    append = out.append
    for done, item in enumerate(items, 1):
        result = guard(score_item, item, ctx)
        append(result if type(result) is ItemScore else _checked(result, label))
        if done % _PROGRESS_EVERY == 0:
            tick(_PROGRESS_EVERY)
    tick(len(items) % _PROGRESS_EVERY)
    return out


def _run_batch(
    metric: Metric, guard: Guard, items: Sequence[ItemResult], ctx: MetricContext, tick: Tick
) -> ScoreColumn:
    label = guard.label
    limit = None if guard.limit is None else guard.limit * len(items)
    batch = guard(metric.score_items, items, ctx, limit=limit)
    if not isinstance(batch, (ItemScore, ScoreColumn)):
        batch = list(batch)
    if isinstance(batch, ItemScore) or len(batch) != len(items):
        # The batch raised, ran out of time or gave another number of results: item by item.
        return ScoreColumn.from_scores(label, _run_each(metric, guard, items, ctx, tick))
    tick(len(items))
    if isinstance(batch, ScoreColumn):
        batch.label = label
        return batch
    # Checked with a C-level pass: batches are large and often share a few score objects.
    if set(map(type, batch)) != {ItemScore}:
        batch = [r if type(r) is ItemScore else _checked(r, label) for r in batch]
    return ScoreColumn.from_scores(label, batch)


def _run_async(
    metric: Metric,
    items: Sequence[ItemResult],
    ctx: MetricContext,
    tick: Tick,
    limit: float | None,
) -> list[ItemScore]:
    import asyncio  # only async metrics pay for it at start-up

    label = ctx.label
    guard = Guard(label)

    async def score_all() -> list[ItemScore]:
        gate = asyncio.Semaphore(max(1, metric.max_concurrency or ctx.concurrency))

        async def one(item: ItemResult) -> ItemScore:
            async with gate:
                try:
                    result = await _within(metric.score_item(item, ctx), limit)
                except Exception as exc:  # noqa: BLE001 - isolation
                    score = error_score(label, exc)
                except SystemExit:
                    guard(_reraise, sys.exc_info()[1], item)
                    raise
                else:
                    score = _checked(result, label)
            tick(1)
            return score

        return list(await asyncio.gather(*(one(item) for item in items)))

    scores: list[ItemScore] = run_coroutine(score_all)
    return scores


async def _within(call: Any, limit: float | None) -> Any:
    """Await ``call``; past ``limit`` seconds it is cancelled and :class:`ItemTimeout` raised.

    A ``TimeoutError`` the metric raises itself stays its own.
    """
    import asyncio

    if limit is None:
        return await call
    task = asyncio.ensure_future(call)
    done, _ = await asyncio.wait({task}, timeout=limit)
    if not done:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        raise _timed_out(limit)
    return task.result()


def _reraise(exc: BaseException | None, item: ItemResult) -> None:
    """Raise ``exc`` again inside a guard, so that an exit is named like everywhere else."""
    assert exc is not None
    raise exc


def run_coroutine(factory: Callable[[], Any]) -> Any:
    """Run a coroutine to completion, also when called from inside a running event loop."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(factory())
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(factory())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name="itemscore-async")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
