"""Scoring one shard: every item-level metric of a plan over a run of items, in isolation.

This is what every executor runs, in this process or in a worker: given the plan and a shard
of items, return one :class:`~itemscore._columns.ScoreColumn` per metric label, in item order.

Isolation follows pytest's ``CallInfo.from_call``: each call is made inside ``try``; any
``Exception`` becomes that item's ``error`` score (type, message and a short traceback) and the
shard goes on; ``KeyboardInterrupt`` and ``SystemExit`` pass through. A wrong return type is an
error too; ``None`` is skip. A batch (``score_items``) that raises or returns the wrong number of
results is scored again item by item, so one bad item costs one score.
"""

from __future__ import annotations

import inspect
import operator
import threading
import traceback
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from itemscore._columns import SKIP, ScoreColumn
from itemscore._exceptions import describe_exception
from itemscore._metric import Metric, MetricContext
from itemscore._records import ItemResult, ItemScore, Status

if TYPE_CHECKING:
    from itemscore._plan import PlannedMetric, RunPlan
    from itemscore._settings import RunSettings

__all__ = ["Tick", "error_score", "score_shard"]

#: ``tick(count)``: called as items are scored, with how many were done since the last call.
Tick = Callable[[int], None]

_PROGRESS_EVERY = 2048
_TRACEBACK_FRAMES = 3
_ITEM_ATTRS = frozenset(a.name for a in attrs.fields(ItemResult))
NO_ANSWER_KEY = "no answer key (expected is empty)"
UNSCORED = "the metric left it unscored"


def _no_tick(count: int) -> None:
    """Progress nobody listens to."""


def score_shard(
    plan: RunPlan,
    items: Sequence[ItemResult],
    settings: RunSettings,
    tick: Tick | None = None,
    memo: dict[str, Any] | None = None,
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

    Returns:
        One column per label, aligned with ``items``.
    """
    tick = tick or _no_tick
    # One memo for each normaliser two metrics share: each output normalised once.
    if memo is None:
        shared = {n: _memoised(n) for n in plan.equal_normalizers()} or None
    else:
        if _NORMALIZERS not in memo:
            memo[_NORMALIZERS] = {n: _memoised(n) for n in plan.equal_normalizers()} or None
        shared = memo[_NORMALIZERS]
    out: dict[str, ScoreColumn] = {}
    for pm in plan.metrics:
        if pm.is_corpus:
            continue
        ctx = MetricContext(
            suite_id=settings.suite_id, label=pm.label, confidence=settings.confidence,
            ci_method=settings.ci_method, seed=settings.seed, concurrency=settings.concurrency,
            shared_normalizers=shared, memo=memo,
        )  # fmt: skip
        out[pm.label] = score_metric(pm, items, ctx, tick)
    return out


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
    pm: PlannedMetric, items: Sequence[ItemResult], ctx: MetricContext, tick: Tick
) -> ScoreColumn:
    """One metric's column for ``items``: skips for missing inputs, the rest scored."""
    metric, label = pm.metric, pm.label
    skipped = _missing_inputs(items, metric.required_inputs)
    todo = [item for i, item in enumerate(items) if i not in skipped] if skipped else items
    if not todo:
        part = ScoreColumn(label, b"", [])
    elif inspect.iscoroutinefunction(metric.score_item):
        part = ScoreColumn.from_scores(label, _run_async(metric, todo, ctx, tick))
    elif type(metric).score_items is not Metric.score_items:
        part = _run_batch(metric, label, todo, ctx, tick)
    else:
        part = ScoreColumn.from_scores(label, _run_each(metric, todo, ctx, tick))
    tick(len(skipped))
    return _with_skips(part, len(items), skipped) if skipped else part


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
    metric: Metric, items: Sequence[ItemResult], ctx: MetricContext, tick: Tick
) -> list[ItemScore]:
    score_item, label = metric.score_item, ctx.label
    out: list[ItemScore] = []
    append = out.append
    for done, item in enumerate(items, 1):
        try:
            result = score_item(item, ctx)
        except Exception as exc:  # noqa: BLE001 - isolation: the item records the error
            append(error_score(label, exc))
        else:
            append(result if type(result) is ItemScore else _checked(result, label))
        if done % _PROGRESS_EVERY == 0:
            tick(_PROGRESS_EVERY)
    tick(len(items) % _PROGRESS_EVERY)
    return out


def _run_batch(
    metric: Metric, label: str, items: Sequence[ItemResult], ctx: MetricContext, tick: Tick
) -> ScoreColumn:
    try:
        batch = metric.score_items(items, ctx)
    except Exception:  # noqa: BLE001 - fall back so that one bad item costs one score
        return ScoreColumn.from_scores(label, _run_each(metric, items, ctx, tick))
    if isinstance(batch, ScoreColumn):
        if len(batch) != len(items):
            return ScoreColumn.from_scores(label, _run_each(metric, items, ctx, tick))
        tick(len(items))
        batch.label = label
        return batch
    batch = list(batch)
    if len(batch) != len(items):
        return ScoreColumn.from_scores(label, _run_each(metric, items, ctx, tick))
    tick(len(items))
    # Checked with a C-level pass: batches are large and often share a few score objects.
    if set(map(type, batch)) != {ItemScore}:
        batch = [r if type(r) is ItemScore else _checked(r, label) for r in batch]
    return ScoreColumn.from_scores(label, batch)  # type: ignore[arg-type] # checked above


def _run_async(
    metric: Metric, items: Sequence[ItemResult], ctx: MetricContext, tick: Tick
) -> list[ItemScore]:
    import asyncio  # only async metrics pay for it at start-up

    label = ctx.label

    async def score_all() -> list[ItemScore]:
        gate = asyncio.Semaphore(max(1, metric.max_concurrency or ctx.concurrency))

        async def one(item: ItemResult) -> ItemScore:
            async with gate:
                try:
                    result = await metric.score_item(item, ctx)  # type: ignore[misc]
                except Exception as exc:  # noqa: BLE001 - isolation
                    score = error_score(label, exc)
                else:
                    score = _checked(result, label)
            tick(1)
            return score

        return list(await asyncio.gather(*(one(item) for item in items)))

    scores: list[ItemScore] = run_coroutine(score_all)
    return scores


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
