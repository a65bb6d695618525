"""Runs: configure metrics, score every item with every metric in isolation, aggregate.

Isolation follows pytest's ``CallInfo.from_call``: each call is made inside ``try``; any
``Exception`` becomes that item's ``error`` score (type, message and a short traceback) and the
run goes on; ``KeyboardInterrupt`` and ``SystemExit`` pass through.
"""

from __future__ import annotations

import inspect
import math
import operator
import threading
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from ._exceptions import ConfigError, InputError, OptionError
from ._items import ScoredItems
from ._metric import Metric, MetricContext
from ._records import EMPTY, Estimate, ItemResult, ItemScore, Measurement, Status
from ._registry import MetricInfo, Registry, default_registry
from ._result import RunResult
from ._spec import MetricLike, MetricSpec
from ._suite import Suite

__all__ = ["PlannedMetric", "plan_metrics", "rescore", "run", "score"]

#: ``progress(done, total)``: called as scoring advances (``total`` = items x metrics).
ProgressCallback = Callable[[int, int], None]

_PROGRESS_EVERY = 2048
_TRACEBACK_FRAMES = 3


@attrs.frozen
class PlannedMetric:
    """A metric configured for one run: its label, the spec it came from, the instance."""

    #: The measurement's label, distinct within the run.
    label: str
    #: The configured instance.
    metric: Metric = attrs.field(eq=False)
    #: The metric's id.
    metric_id: str
    #: The options it was configured with.
    options: Mapping[str, Any]
    #: Where it comes from (``None`` for an instance given directly).
    info: MetricInfo | None = attrs.field(default=None, eq=False)

    def to_config(self) -> dict[str, Any]:
        """The entry of ``RunResult.config["metrics"]``."""
        out: dict[str, Any] = {
            "name": self.metric_id,
            "label": self.label,
            "options": dict(self.options),
        }
        if self.info is not None:
            out["distribution"] = self.info.distribution
            out["version"] = self.info.version
        return out


# -- configuration --------------------------------------------------------------------------


def _plan_one(obj: MetricLike, registry: Registry) -> PlannedMetric:
    if isinstance(obj, Metric):
        label = obj.label
        return PlannedMetric(label, obj, obj.metric_id, {}, None)
    if isinstance(obj, type) and issubclass(obj, Metric):
        return PlannedMetric(obj.metric_id, obj.configure(), obj.metric_id, {}, None)
    spec = MetricSpec.parse(obj)
    info = registry.find(spec.name)
    assert info.cls is not None
    try:
        metric = info.cls.configure(spec.options)
    except OptionError:
        raise
    except Exception as exc:  # a metric's own __init__ check, e.g. labels=[]
        raise OptionError(
            f"Metric {info.id!r} rejected its options {dict(spec.options)!r}: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    label = spec.label or info.cls.metric_id
    return PlannedMetric(label, metric, info.cls.metric_id, dict(spec.options), info)


def plan_metrics(
    metrics: Iterable[MetricLike],
    extra_metrics: Iterable[MetricLike] = (),
    *,
    registry: Registry | None = None,
) -> list[PlannedMetric]:
    """Resolve and configure every metric of a run, checking labels; score nothing.

    ``extra_metrics`` that repeat a bound metric (same label, same metric and options) are
    dropped rather than scored twice.

    Raises:
        UnknownMetricError: a name no installed metric has.
        OptionError: an unknown option or a bad value.
        ConfigError: two metrics with one label, or an extra metric that reuses a bound
            metric's label with other options.
    """
    registry = registry or default_registry()
    planned: list[PlannedMetric] = []
    by_label: dict[str, PlannedMetric] = {}
    for source, objs in (("metrics", metrics), ("extra_metrics", extra_metrics)):
        if isinstance(objs, (str, Mapping)):
            objs = [objs]
        for obj in objs:
            pm = _plan_one(obj, registry)
            other = by_label.get(pm.label)
            if other is not None:
                same = other.metric_id == pm.metric_id and dict(other.options) == dict(pm.options)
                if source == "extra_metrics" and same:
                    continue  # already bound to the suite: not scored twice
                raise ConfigError(
                    f"Two metrics have the label {pm.label!r} ({other.metric_id} "
                    f"{dict(other.options)} and {pm.metric_id} {dict(pm.options)}). Labels "
                    "must be distinct: give one a `label`, e.g. "
                    f"{{'name': {pm.metric_id!r}, 'label': '{pm.label}_2', ...}}."
                )
            by_label[pm.label] = pm
            planned.append(pm)
    if not planned:
        raise ConfigError("No metrics to score: name at least one, e.g. metrics=['exact_match'].")
    return planned


def _check_run_settings(confidence: float, ci_method: str | None, concurrency: int) -> None:
    if not isinstance(confidence, (int, float)) or not 0 < confidence < 1:
        raise ConfigError(f"`confidence` ({confidence!r}) must be in (0, 1).")
    if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
        raise ConfigError(f"`concurrency` ({concurrency!r}) must be a positive integer.")
    if ci_method is not None:
        check_ci_method(ci_method)


def check_ci_method(method: str, name: str = "`ci_method`") -> None:
    """Check that ``method`` is an interval method some aggregation supports.

    Args:
        method: The method asked for.
        name: How the error message names the setting (``--ci`` on the command line).

    Raises:
        ConfigError: no aggregation knows ``method``.
    """
    from . import aggregate
    from ._exceptions import did_you_mean, one_of

    known = dict.fromkeys((*aggregate.RATIO_METHODS, *aggregate.MEAN_METHODS))
    if method not in known:
        raise ConfigError(
            f"{name} ({method!r}) must be one of {one_of(known)}.{did_you_mean(method, known)}"
        )


def _check_items(items: Sequence[Any]) -> None:
    """Every item is an ItemResult, and ids are unique per model.

    Several models answer the same questions, so one id may appear once per model.
    """
    if set(map(type, items)) <= {ItemResult} and len(set(map(_id_of, items))) == len(items):
        return  # the common case, checked in two passes at C speed
    seen: dict[tuple[str | None, str], int] = {}
    for index, item in enumerate(items):
        if not isinstance(item, ItemResult):
            raise InputError(
                f"Item {index} is a {type(item).__name__}, not an ItemResult; "
                "build items with ItemResult(...) or pass rows through a Suite."
            )
        first = seen.setdefault((item.model, item.id), index)
        if first != index:
            whose = f" for model {item.model!r}" if item.model is not None else ""
            raise InputError(
                f"Item id {item.id!r} appears twice{whose} (items {first} and {index}); "
                "ids must be unique per model within a run."
            )


# -- scoring --------------------------------------------------------------------------------


def _error_score(label: str, exc: BaseException) -> ItemScore:
    frames = traceback.format_tb(exc.__traceback__)[-_TRACEBACK_FRAMES:]
    return ItemScore(
        metric=label,
        status=Status.ERROR,
        reason=f"{type(exc).__name__}: {exc}",
        extra={"traceback": "".join(frames)},
    )


def _checked(result: object, label: str) -> ItemScore:
    """The metric's return value as a valid score for ``label``: None is skip, junk is error."""
    if type(result) is ItemScore:
        return result if result.metric == label else attrs.evolve(result, metric=label)
    if result is None:
        return ItemScore(metric=label, status=Status.SKIP, reason="the metric left it unscored")
    if isinstance(result, ItemScore):
        return attrs.evolve(result, metric=label)
    return ItemScore(
        metric=label,
        status=Status.ERROR,
        reason=f"TypeError: score_item returned {type(result).__name__}, "
        "expected ItemScore or None",
    )


def _missing_inputs(
    items: Sequence[ItemResult], required: Sequence[str], label: str
) -> dict[int, ItemScore]:
    """The skip score of every item that lacks a required input, by index.

    An item lacking several is skipped for the first one ``required`` names.
    """
    skipped: dict[int, ItemScore] = {}
    for name in required:
        if name in _ITEM_ATTRS:
            values = list(map(operator.attrgetter(name), items))
            if None not in values:  # the common case: one scan at C speed
                continue
            reason = (
                "no answer key (expected is empty)"
                if name == "expected"
                else f"missing required input: {name}"
            )
        else:
            values = [item.metadata.get(name) for item in items]
            reason = f"missing required input: {name}"
        skip = ItemScore(metric=label, status=Status.SKIP, reason=reason)  # one shared record
        for index, value in enumerate(values):
            if value is None:
                skipped.setdefault(index, skip)
    return skipped


_ITEM_ATTRS = frozenset(a.name for a in attrs.fields(ItemResult))
_id_of = operator.attrgetter("id")
_group_of = operator.attrgetter("group")
_metric_of = operator.attrgetter("metric")
_status_of = operator.attrgetter("status")


class _Scorer:
    """Scores every item with one metric, isolated, in input order."""

    def __init__(
        self,
        planned: PlannedMetric,
        ctx: MetricContext,
        on_scored: Callable[[ItemResult, ItemScore], None] | None,
        tick: Callable[[int], None],
    ) -> None:
        self.metric = planned.metric
        self.label = planned.label
        self.ctx = ctx
        self.on_scored = on_scored
        self.tick = tick

    def run(self, items: Sequence[ItemResult]) -> list[ItemScore]:
        metric, label = self.metric, self.label
        skipped = _missing_inputs(items, metric.required_inputs, label)
        todo = [item for i, item in enumerate(items) if i not in skipped] if skipped else items
        if inspect.iscoroutinefunction(metric.score_item):
            scored = self._run_async(todo)
        elif type(metric).score_items is not Metric.score_items:
            scored = self._run_batch(todo)
        else:
            scored = self._run_each(todo)
        self.tick(len(skipped))
        if skipped:
            rest = iter(scored)
            final = [skipped[i] if i in skipped else next(rest) for i in range(len(items))]
        else:
            final = scored
        if self.on_scored is not None:
            for item, score in zip(items, final):
                self.on_scored(item, score)
        return final

    def _run_each(self, items: Sequence[ItemResult]) -> list[ItemScore]:
        score_item, label, ctx, tick = self.metric.score_item, self.label, self.ctx, self.tick
        out: list[ItemScore] = []
        append = out.append
        for done, item in enumerate(items, 1):
            try:
                result = score_item(item, ctx)
            except Exception as exc:  # noqa: BLE001 - isolation: the item records the error
                append(_error_score(label, exc))
            else:
                # The common case, checked inline: a score already labelled for this run.
                if type(result) is ItemScore and result.metric == label:
                    append(result)
                else:
                    append(_checked(result, label))
            if done % _PROGRESS_EVERY == 0:
                tick(_PROGRESS_EVERY)
        tick(len(items) % _PROGRESS_EVERY)
        return out

    def _run_batch(self, items: Sequence[ItemResult]) -> list[ItemScore]:
        if not items:
            return []
        try:
            batch = list(self.metric.score_items(items, self.ctx))
        except Exception:  # noqa: BLE001 - fall back so that one bad item costs one score
            return self._run_each(items)
        if len(batch) != len(items):
            return self._run_each(items)
        label = self.label
        self.tick(len(items))
        # Checked with C-level passes: batches are large and often share a few score objects.
        if set(map(type, batch)) == {ItemScore} and set(map(_metric_of, batch)) == {label}:
            return batch  # type: ignore[return-value] # every element is a labelled ItemScore
        return [
            r if type(r) is ItemScore and r.metric == label else _checked(r, label) for r in batch
        ]

    def _run_async(self, items: Sequence[ItemResult]) -> list[ItemScore]:
        import asyncio  # only async metrics pay for it at start-up

        metric, label, ctx = self.metric, self.label, self.ctx

        async def score_all() -> list[ItemScore]:
            gate = asyncio.Semaphore(max(1, ctx.concurrency))

            async def one(item: ItemResult) -> ItemScore:
                async with gate:
                    try:
                        result = await metric.score_item(item, ctx)  # type: ignore[misc]
                    except Exception as exc:  # noqa: BLE001 - isolation
                        score = _error_score(label, exc)
                    else:
                        score = _checked(result, label)
                self.tick(1)
                return score

            return list(await asyncio.gather(*(one(item) for item in items)))

        scores: list[ItemScore] = _run_coroutine(score_all)
        return scores


def _run_coroutine(factory: Callable[[], Any]) -> Any:
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


# -- aggregation ----------------------------------------------------------------------------


def _finite_or_none(value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _measure(
    planned: PlannedMetric,
    scores: Sequence[ItemScore],
    groups: Sequence[str | None] | None,
    ctx: MetricContext,
) -> Measurement:
    counts = dict.fromkeys(Status, 0)
    counts.update(Counter(map(_status_of, scores)))
    metric = planned.metric
    common: dict[str, Any] = {
        "key": f"{ctx.suite_id}.{planned.label}",
        "suite": ctx.suite_id,
        "metric": planned.label,
        "model": ctx.model,
        "confidence": ctx.confidence,
        "n": counts[Status.OK] + counts[Status.FAIL],
        "counts": counts,
        "higher_is_better": metric.higher_is_better,
        "reproducibility_class": metric.reproducibility_class,
    }
    by_group: dict[str, Measurement] = {}
    if groups is not None:
        members: dict[str, list[ItemScore]] = {}
        for group, score in zip(groups, scores):
            if group is not None:
                members.setdefault(group, []).append(score)
        for group in sorted(members):
            by_group[group] = _measure(
                planned, members[group], None, attrs.evolve(ctx, group=group)
            )
    try:
        estimate = metric.aggregate(scores, ctx)
        if not isinstance(estimate, Estimate):
            raise TypeError(
                f"aggregate returned {type(estimate).__name__}, expected itemscore.Estimate"
            )
    except Exception as exc:  # noqa: BLE001 - one failed aggregate spoils one measurement
        return Measurement(**common, groups=by_group, error=f"{type(exc).__name__}: {exc}")
    return Measurement(
        **common,
        value=_finite_or_none(estimate.value),
        ci_low=_finite_or_none(estimate.low),
        ci_high=_finite_or_none(estimate.high),
        ci_method=estimate.method,
        extra={k: float(v) for k, v in estimate.extra.items()} if estimate.extra else EMPTY,
        groups=by_group,
    )


def _measure_all(
    planned: Sequence[PlannedMetric],
    items: Sequence[ItemResult],
    scores_by_label: Mapping[str, Sequence[ItemScore]],
    base: MetricContext,
) -> tuple[dict[str, Measurement], dict[str | None, dict[str, Measurement]]]:
    models: dict[str | None, list[int]] = {}
    if len({item.model for item in items}) > 1:
        for index, item in enumerate(items):
            models.setdefault(item.model, []).append(index)
    elif items:
        models[items[0].model] = []  # one model: its items are all the items
    any_group = set(map(_group_of, items)) != {None}

    def measure(indices: Sequence[int] | None, model: str | None) -> dict[str, Measurement]:
        out: dict[str, Measurement] = {}
        subset = items if indices is None else [items[i] for i in indices]
        groups = [item.group for item in subset] if any_group else None
        for pm in planned:
            all_scores = scores_by_label[pm.label]
            scores = all_scores if indices is None else [all_scores[i] for i in indices]
            ctx = attrs.evolve(base, label=pm.label, model=model)
            measurement = _measure(pm, scores, groups, ctx)
            out[measurement.key] = measurement
        return out

    if len(models) <= 1:
        model = next(iter(models), None)
        headline = measure(None, model)
        return headline, {model: headline}
    by_model = {model: measure(indices, model) for model, indices in models.items()}
    return measure(None, None), by_model


# -- the public entry points ----------------------------------------------------------------


def _execute(
    items: Sequence[ItemResult],
    planned: Sequence[PlannedMetric],
    *,
    suite_id: str,
    confidence: float,
    ci_method: str | None,
    seed: int,
    concurrency: int,
    config: dict[str, Any],
    progress: ProgressCallback | None,
    keep_scores: bool = False,
) -> tuple[ScoredItems, dict[str, list[ItemScore]]]:
    from ._plugins import plugin_manager

    pm = plugin_manager()
    pm.hook.itemscore_run_started(suite_id=suite_id, config=config, n_items=len(items))
    # A hook nobody implements must cost nothing per item.
    on_scored: Callable[[ItemResult, ItemScore], None] | None = None
    if pm.hook.itemscore_item_scored.get_hookimpls():
        hook = pm.hook.itemscore_item_scored

        def on_scored(item: ItemResult, score: ItemScore) -> None:
            hook(item=item, score=score)

    total = len(items) * len(planned)
    done = 0

    def tick(count: int) -> None:
        nonlocal done
        if count and progress is not None:
            done += count
            progress(done, total)

    scores_by_label: dict[str, list[ItemScore]] = {}
    for entry in planned:
        entry.metric.bind(entry.label)
        ctx = MetricContext(
            suite_id=suite_id, label=entry.label, confidence=confidence, ci_method=ci_method,
            seed=seed, concurrency=concurrency,
        )  # fmt: skip
        scores_by_label[entry.label] = _Scorer(entry, ctx, on_scored, tick).run(items)

    scored = ScoredItems(items, scores_by_label, keep_scores=keep_scores)
    return scored, scores_by_label


def score(
    items: Iterable[ItemResult],
    metrics: Iterable[MetricLike],
    *,
    suite_id: str = "default",
    extra_metrics: Iterable[MetricLike] = (),
    confidence: float = 0.95,
    ci_method: str | None = None,
    seed: int = 0,
    concurrency: int = 16,
    progress: ProgressCallback | None = None,
    registry: Registry | None = None,
) -> RunResult:
    """Score ``items`` with every metric, one item at a time, and aggregate.

    Args:
        items: The items; ids must be unique per model.
        metrics: Metric names, mappings ``{"name": ..., "label": ..., <options>}``,
            ``MetricSpec``, metric classes or configured instances.
        suite_id: Prefix of the measurement keys (``"<suite_id>.<label>"``).
        extra_metrics: More metrics for this run; repeats of ``metrics`` are dropped.
        confidence: Confidence level of every interval.
        ci_method: Interval method for the measurements that support it (e.g. ``"wilson"``
            for ratios, ``"t"`` or ``"bootstrap"`` for means); ``None``: each metric's default.
        seed: Seed for bootstrap intervals.
        concurrency: How many items an ``async def score_item`` may score at once.
        progress: ``progress(done, total)`` as scoring advances.
        registry: Where to find metrics (default: every installed one).

    Raises:
        ConfigError: a bad configuration, found before any item is scored.
        InputError: an item that is not an ``ItemResult``, or a duplicate id.
    """
    _check_run_settings(confidence, ci_method, concurrency)
    planned = plan_metrics(metrics, extra_metrics, registry=registry)
    items = list(items)
    _check_items(items)
    return _finish(items, planned, suite_id, confidence, ci_method, seed, concurrency, progress)


def _finish(
    items: Sequence[ItemResult],
    planned: Sequence[PlannedMetric],
    suite_id: str,
    confidence: float,
    ci_method: str | None,
    seed: int,
    concurrency: int,
    progress: ProgressCallback | None,
    *,
    base: RunResult | None = None,
) -> RunResult:
    from . import __version__
    from ._plugins import plugin_manager

    config: dict[str, Any] = {
        "suite_id": suite_id,
        "metrics": [p.to_config() for p in planned],
        "confidence": confidence,
        "ci_method": ci_method,
        "seed": seed,
        "itemscore_version": __version__,
    }
    if base is not None:
        new_labels = {p.label for p in planned}
        kept = [m for m in base.config.get("metrics", []) if m.get("label") not in new_labels]
        config["metrics"] = kept + config["metrics"]
    scored_items, scores_by_label = _execute(
        items,
        planned,
        suite_id=suite_id,
        confidence=confidence,
        ci_method=ci_method,
        seed=seed,
        concurrency=concurrency,
        config=config,
        progress=progress,
        keep_scores=base is not None,
    )
    ctx = MetricContext(suite_id=suite_id, confidence=confidence, ci_method=ci_method, seed=seed)
    measurements, by_model = _measure_all(planned, items, scores_by_label, ctx)
    if base is not None:
        measurements = {**base.measurements, **measurements}
        by_model = {model: {**base.by_model.get(model, {}), **ms} for model, ms in by_model.items()}
    result = RunResult(
        items=scored_items, measurements=measurements, by_model=by_model, config=config
    )
    plugin_manager().hook.itemscore_run_finished(result=result)
    return result


def run(
    suite: Suite,
    raw: Iterable[Any] | None = None,
    *,
    extra_metrics: Iterable[MetricLike] = (),
    confidence: float = 0.95,
    ci_method: str | None = None,
    seed: int = 0,
    concurrency: int = 16,
    progress: ProgressCallback | None = None,
    registry: Registry | None = None,
) -> RunResult:
    """Score a suite's items with its bound metrics plus ``extra_metrics``.

    Args:
        suite: The suite; its ``metrics`` are bound to every run.
        raw: The harness's rows, turned into items by ``suite.items(raw)``; ``None``: the
            suite's bundled data.
        extra_metrics: Metrics opted into this run only; repeats of bound ones are dropped.
        confidence: Confidence level of every interval.
        ci_method: Interval method for the measurements that support it.
        seed: Seed for bootstrap intervals.
        concurrency: How many items an ``async def score_item`` may score at once.
        progress: ``progress(done, total)`` as scoring advances.
        registry: Where to find metrics (default: every installed one).

    Raises:
        ConfigError: a bad configuration, found before any item is scored.
        InputError: malformed rows or duplicate ids.
    """
    _check_run_settings(confidence, ci_method, concurrency)
    planned = plan_metrics(suite.metrics, extra_metrics, registry=registry)
    rows = suite.load_data() if raw is None else raw
    items = list(suite.items(rows))
    _check_items(items)
    return _finish(
        items, planned, suite.suite_id, confidence, ci_method, seed, concurrency, progress
    )


def rescore(
    result: RunResult,
    metrics: Iterable[MetricLike] | None = None,
    *,
    confidence: float | None = None,
    ci_method: str | None = None,
    seed: int | None = None,
    concurrency: int = 16,
    progress: ProgressCallback | None = None,
    registry: Registry | None = None,
) -> RunResult:
    """Add or recompute metrics on saved results, without the model.

    Scores and measurements of labels not named are kept as they were. ``metrics=None``
    recomputes every metric of ``result.config``.

    Raises:
        ConfigError: a bad configuration, found before any item is scored.
    """
    config = result.config
    if metrics is None:
        metrics = [
            {"name": m["name"], "label": m["label"], **m.get("options", {})}
            for m in config.get("metrics", [])
        ]
    confidence = config.get("confidence", 0.95) if confidence is None else confidence
    ci_method = config.get("ci_method") if ci_method is None else ci_method
    seed = config.get("seed", 0) if seed is None else seed
    _check_run_settings(confidence, ci_method, concurrency)
    planned = plan_metrics(metrics, registry=registry)
    return _finish(
        result.items,
        planned,
        result.suite_id,
        confidence,
        ci_method,
        seed,
        concurrency,
        progress,
        base=result,
    )
