"""Runs: plan -> execute shards -> merge columns -> aggregate -> result.

``score``, ``run`` and ``rescore`` check their settings (:class:`RunSettings`) and build or take
a :class:`RunPlan` before any item is scored. The executor scores the item-level metrics shard
by shard (each score isolated, see :mod:`itemscore.executors._shard`) and merges the shards'
columns in item order; corpus metrics (``compute``) run here, once per model over all rows;
then every metric is aggregated once per model and per group.
"""

from __future__ import annotations

import datetime
import math
import platform
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from ._columns import ScoreColumn
from ._exceptions import describe_exception
from ._gc import gc_frozen
from ._items import ScoredItems
from ._metric import Metric, MetricContext
from ._packed import PackedItems, Picked, pack_list
from ._plan import PlannedMetric, RunPlan, plan, plan_metrics
from ._records import EMPTY, Estimate, ItemResult, ItemScore, Measurement, MetricResult, Status
from ._registry import Registry
from ._result import RunResult
from ._settings import RunSettings, check_ci_method, resolve_workers
from ._spec import MetricLike
from ._suite import Suite
from .executors import Executor, get_executor
from .inputs import suite_rows, to_items

__all__ = [
    "SMALL_GROUP",
    "PlannedMetric",
    "check_ci_method",
    "plan_metrics",
    "rescore",
    "run",
    "score",
]

#: ``progress(done, total)``: called as scoring advances (``total`` = items x metrics).
ProgressCallback = Callable[[int, int], None]

#: A group with fewer scored items than this is flagged: ``extra["small_group"] = 1.0``.
SMALL_GROUP = 30

#: Items per scoring chunk of a streamed (packed) run: the item objects alive at a time.
STREAM_CHUNK = 20_000


# -- settings and items ---------------------------------------------------------------------


def _prepare(
    *,
    suite_id: str,
    confidence: float,
    ci_method: str | None,
    seed: int,
    concurrency: int,
    executor: str | Executor,
    workers: int | str | None,
    client: Any,
    retries: int,
) -> tuple[RunSettings, Executor]:
    """The run's typed settings and its executor; every option checked, none ignored."""
    n_workers = resolve_workers(workers)
    engine = get_executor(executor, workers=n_workers, client=client)
    settings = RunSettings(
        suite_id=suite_id,
        confidence=confidence,
        ci_method=ci_method,
        seed=seed,
        concurrency=concurrency,
        executor=engine.name,
        workers=engine.workers if engine.parallel else None,
        retries=retries,
    )
    return settings, engine


def _coerce_items(
    items: Iterable[Any], columns: Mapping[str, str] | None = None
) -> Sequence[ItemResult]:
    """The one place where what the caller passed becomes a list of items.

    ItemResults pass as they are; mappings and DataFrames go through the converter every file
    goes through (:func:`itemscore.inputs.to_items`), which also checks ids per model. Packed
    items (a file read by the command line) were converted and checked as they were read.

    Raises:
        InputError: a row that cannot be an item, or a duplicate id.
    """
    if isinstance(items, PackedItems) and columns is None:
        return items
    return to_items(items, columns)


def _take(items: Sequence[ItemResult], indices: Sequence[int] | None) -> Sequence[ItemResult]:
    return items if indices is None else Picked(items, indices)


@attrs.frozen
class RunItems:
    """What the driver keeps of a run's items: the items, and per item what aggregating needs.

    Build one with :meth:`of` from a list, or from :class:`~itemscore._packed.PackedItems`
    (a streamed run), whose items are rebuilt chunk by chunk when scored or read.
    """

    #: The items, in order.
    items: Sequence[ItemResult]
    #: Per item: its model; ``None`` when no item has one.
    models: Sequence[str | None] | None
    #: Per item: its group; ``None`` when no item has one.
    groups: Sequence[str | None] | None
    #: Per item: its cluster; ``None`` when no item has one.
    clusters: Sequence[str | None] | None
    #: How many items each scoring chunk has (a streamed run); ``None``: all in one.
    chunk_size: int | None = None

    @classmethod
    def of(cls, items: Sequence[ItemResult]) -> RunItems:
        """The view of ``items`` (a list, or packed items whose fields are kept beside)."""
        if isinstance(items, PackedItems):
            return cls(
                items,
                items.field("model"),
                items.field("group"),
                items.field("cluster"),
                STREAM_CHUNK,
            )
        models = [item.model for item in items]
        groups = [item.group for item in items]
        clusters = [item.cluster for item in items]
        return cls(
            items,
            models if models.count(None) < len(models) else None,
            groups if groups.count(None) < len(groups) else None,
            clusters if clusters.count(None) < len(clusters) else None,
        )

    def __len__(self) -> int:
        return len(self.items)

    def chunks(self) -> Iterator[Sequence[ItemResult]]:
        """The items in consecutive chunks of about :attr:`chunk_size` (one when ``None``)."""
        items = self.items
        if not isinstance(items, PackedItems):
            yield items
            return
        gathered: list[ItemResult] = []
        for chunk in items.chunks():
            if self.chunk_size is None or len(gathered) + len(chunk) <= self.chunk_size:
                gathered += chunk
                continue
            if gathered:
                yield gathered
            gathered = list(chunk)
        if gathered:
            yield gathered

    def model_indices(self) -> dict[str | None, list[int]]:
        """Item indices by model, in order of first appearance."""
        models = self.models
        if models is None or len(set(models)) <= 1:
            return {models[0] if models else None: list(range(len(self.items)))}
        out: dict[str | None, list[int]] = {}
        for index, model in enumerate(models):
            out.setdefault(model, []).append(index)
        return out


# -- corpus metrics -------------------------------------------------------------------------


def _compute(pm: PlannedMetric, items: Sequence[ItemResult]) -> MetricResult:
    """Call a corpus metric over ``items``; its exception propagates to the caller."""
    predictions = [item.output for item in items]
    references = [item.expected for item in items]
    result = pm.metric.compute(predictions, references)
    if not isinstance(result, MetricResult):
        raise TypeError(
            f"compute returned {type(result).__name__}, expected self.result(value, ...)"
        )
    if result.per_row is not None and len(result.per_row) != len(items):
        raise ValueError(
            f"compute returned {len(result.per_row)} per_row scores for {len(items)} rows"
        )
    return result


def _per_row_column(label: str, result: MetricResult, n: int) -> ScoreColumn:
    """A corpus metric's row scores as a column: a number is ok, ``None`` skip, junk error."""
    scores: list[ItemScore] = []
    rows = result.per_row if result.per_row is not None else (None,) * n
    for value in rows:
        if value is None:
            scores.append(ItemScore(metric=label, status=Status.SKIP, reason="not scored"))
        elif (
            isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        ):
            scores.append(ItemScore(metric=label, value=float(value), status=Status.OK))
        else:
            scores.append(
                ItemScore(
                    metric=label,
                    status=Status.ERROR,
                    reason=f"compute gave {value!r} for this row, expected a finite number",
                )
            )
    return ScoreColumn.from_scores(label, scores)


def _score_corpus(
    the_plan: RunPlan, items: Sequence[ItemResult], models: Mapping[str | None, list[int]]
) -> tuple[dict[str, ScoreColumn], dict[tuple[str, str | None], MetricResult | str]]:
    """Run every corpus metric once per model over all its rows, here on the driver.

    Returns:
        The columns by label, and each (label, model)'s result or error text.
    """
    columns: dict[str, ScoreColumn] = {}
    results: dict[tuple[str, str | None], MetricResult | str] = {}
    for pm in the_plan.metrics:
        if not pm.is_corpus:
            continue
        parts: dict[str | None, ScoreColumn] = {}
        for model, indices in models.items():
            subset = Picked(items, indices)
            try:
                result = _compute(pm, subset)
            except Exception as exc:  # noqa: BLE001 - one measurement's error
                reason = describe_exception(exc)
                results[(pm.label, model)] = reason
                parts[model] = ScoreColumn.filled(pm.label, len(subset), Status.ERROR, reason)
            else:
                results[(pm.label, model)] = result
                parts[model] = _per_row_column(pm.label, result, len(subset))
        columns[pm.label] = _scatter(pm.label, len(items), models, parts)
    return columns, results


def _scatter(
    label: str,
    n: int,
    models: Mapping[str | None, list[int]],
    parts: Mapping[str | None, ScoreColumn],
) -> ScoreColumn:
    """One column over all items from one column per model."""
    if len(models) == 1:
        return next(iter(parts.values()))
    scores: list[ItemScore | None] = [None] * n
    for model, indices in models.items():
        for index, score in zip(indices, parts[model]):
            scores[index] = score
    return ScoreColumn.from_scores(label, scores)  # type: ignore[arg-type] # all filled


# -- aggregation ----------------------------------------------------------------------------


def _finite_or_none(value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _estimate(
    pm: PlannedMetric,
    scores: ScoreColumn,
    subset: Sequence[ItemResult],
    ctx: MetricContext,
    corpus: MetricResult | str | None,
) -> Estimate:
    """The metric's estimate for these scores: its aggregate, or a corpus metric's result."""
    if not pm.is_corpus:
        estimate = pm.metric.aggregate(scores, ctx)
        if not isinstance(estimate, Estimate):
            raise TypeError(
                f"aggregate returned {type(estimate).__name__}, expected itemscore.Estimate"
            )
        return estimate
    if corpus is None:  # a group, or several models pooled: compute over those rows
        corpus = _compute(pm, subset)
    if isinstance(corpus, str):
        raise _CorpusError(corpus)
    n = corpus.n_scored if corpus.n_scored is not None else scores.counts()[Status.OK]
    return Estimate(value=corpus.value, n=n, confidence=ctx.confidence, extra=corpus.extra)


class _CorpusError(Exception):
    """A corpus metric's ``compute`` failed; its text is the measurement's error."""


def _measure(
    pm: PlannedMetric,
    scores: ScoreColumn,
    subset: Sequence[ItemResult],
    ctx: MetricContext,
    *,
    groups: Sequence[str | None] | None,
    clusters: Sequence[str | None] | None,
    corpus: MetricResult | str | None = None,
) -> Measurement:
    counts = scores.counts()
    metric = pm.metric
    common: dict[str, Any] = {
        "key": f"{ctx.suite_id}.{pm.label}",
        "suite": ctx.suite_id,
        "metric": pm.label,
        "model": ctx.model,
        "confidence": ctx.confidence,
        "n": counts[Status.OK] + counts[Status.FAIL],
        "counts": counts,
        "higher_is_better": metric.higher_is_better,
        "reproducibility_class": metric.reproducibility_class,
    }
    by_group: dict[str, Measurement] = {}
    if groups is not None:
        members: dict[str, list[int]] = {}
        for index, group in enumerate(groups):
            if group is not None:
                members.setdefault(group, []).append(index)
        for group in sorted(members):
            indices = members[group]
            by_group[group] = _measure(
                pm,
                scores.take(indices),
                Picked(subset, indices),
                attrs.evolve(ctx, group=group),
                groups=None,
                clusters=None if clusters is None else [clusters[i] for i in indices],
            )
    try:
        estimate = _estimate(pm, scores, subset, attrs.evolve(ctx, clusters=clusters), corpus)
        value = None if estimate.value is None else float(estimate.value)
        if value is not None and not math.isfinite(value):
            raise ValueError(f"aggregate returned a non-finite value ({value!r})")
    except _CorpusError as exc:
        return Measurement(**common, groups=by_group, error=str(exc))
    except Exception as exc:  # noqa: BLE001 - one failed aggregate spoils one measurement
        return Measurement(**common, groups=by_group, error=describe_exception(exc))
    extra = {k: float(v) for k, v in estimate.extra.items()} if estimate.extra else {}
    if by_group:
        assert groups is not None
        extra.update(_macro(pm, scores, groups, by_group, ctx.confidence))
    elif ctx.group is not None and common["n"] < SMALL_GROUP:
        extra["small_group"] = 1.0
    return Measurement(
        **common,
        value=value,
        ci_low=_finite_or_none(estimate.low),
        ci_high=_finite_or_none(estimate.high),
        ci_method=estimate.method,
        extra=extra or EMPTY,
        groups=by_group,
    )


def _macro(
    pm: PlannedMetric,
    scores: ScoreColumn,
    groups: Sequence[str | None],
    by_group: Mapping[str, Measurement],
    confidence: float,
) -> dict[str, float]:
    """The macro value (unweighted mean over groups) with its interval, for ``extra``.

    Metrics with the default ratio or mean aggregate: :func:`itemscore.aggregate.macro_mean`
    of the scored values (0/1 for a ratio), groups as fixed strata. Metrics with their own
    aggregate: the mean of the groups' values, with ``se = sqrt(sum(se_g^2)) / G`` where
    ``se_g = (high_g - low_g) / (2z)`` from each group's own interval (groups are disjoint, so
    independent); no interval when a group has none. With an interval, the key
    ``macro_ci_method[METHOD] = 1.0`` names its method (``extra`` holds floats only):
    ``macro-normal`` or ``macro-wilson`` (``macro_mean``), or ``macro-from-group-intervals``.
    """
    from statistics import NormalDist

    from . import aggregate

    metric = pm.metric
    own = type(metric).aggregate is not Metric.aggregate or pm.is_corpus
    if not own and metric.aggregation in ("ratio", "mean"):
        values: Sequence[float]
        if metric.aggregation == "ratio":
            values, scored_groups = scores.scored_outcomes(groups)
            bounds: tuple[float, float] | None = (0.0, 1.0)
        else:
            values, scored_groups = scores.scored_values(), scores.scored_clusters(groups)
            bounds = metric.value_bounds
        estimate = aggregate.macro_mean(values, scored_groups, confidence=confidence, bounds=bounds)
        if estimate.value is None:
            return {}
        out = {"macro": estimate.value, "macro_groups": float(estimate.extra["n_groups"])}
        if estimate.low is not None and estimate.high is not None:
            out["macro_low"], out["macro_high"] = estimate.low, estimate.high
            out[f"macro_ci_method[{estimate.method}]"] = 1.0
        return out
    found = [g for g in by_group.values() if g.value is not None]
    if not found:
        return {}
    out = {
        "macro": math.fsum(g.value for g in found if g.value is not None) / len(found),
        "macro_groups": float(len(found)),
    }
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    halves = [
        (g.ci_high - g.ci_low) / 2 for g in found if g.ci_low is not None and g.ci_high is not None
    ]
    if len(halves) == len(found):
        se = math.sqrt(math.fsum((h / z) ** 2 for h in halves)) / len(found)
        out["macro_low"], out["macro_high"] = out["macro"] - z * se, out["macro"] + z * se
        out["macro_ci_method[macro-from-group-intervals]"] = 1.0
    return out


def _measure_all(
    the_plan: RunPlan,
    run_items: RunItems,
    columns: Mapping[str, ScoreColumn],
    settings: RunSettings,
    models: Mapping[str | None, list[int]],
    corpus: Mapping[tuple[str, str | None], MetricResult | str],
) -> tuple[dict[str, Measurement], dict[str | None, dict[str, Measurement]]]:
    items, all_groups, all_clusters = run_items.items, run_items.groups, run_items.clusters
    base = MetricContext(
        suite_id=settings.suite_id, confidence=settings.confidence,
        ci_method=settings.ci_method, seed=settings.seed, concurrency=settings.concurrency,
    )  # fmt: skip

    def pick(values: Sequence[str | None] | None, indices: Sequence[int] | None) -> Any:
        if values is None or indices is None:
            return values
        return [values[i] for i in indices]

    def measure(indices: Sequence[int] | None, model: str | None) -> dict[str, Measurement]:
        subset = _take(items, indices)
        groups, clusters = pick(all_groups, indices), pick(all_clusters, indices)
        out: dict[str, Measurement] = {}
        for pm in the_plan.metrics:
            column = columns[pm.label] if indices is None else columns[pm.label].take(indices)
            ctx = attrs.evolve(base, label=pm.label, model=model)
            pooled = indices is None and len(models) > 1
            result = None if pooled else corpus.get((pm.label, model))
            m = _measure(pm, column, subset, ctx, groups=groups, clusters=clusters, corpus=result)
            out[m.key] = m
        return out

    if len(models) <= 1:
        model = next(iter(models), None)
        headline = measure(None, model)
        return headline, {model: headline}
    by_model = {model: measure(indices, model) for model, indices in models.items()}
    return measure(None, None), by_model


# -- the run --------------------------------------------------------------------------------


#: ``on_chunk(items, columns)``: called as each chunk of a run is scored, in item order.
ChunkCallback = Callable[[Sequence[ItemResult], Mapping[str, ScoreColumn]], None]


def _run_plan(
    items: Sequence[ItemResult] | RunItems,
    the_plan: RunPlan,
    settings: RunSettings,
    engine: Executor,
    progress: ProgressCallback | None,
    *,
    base: RunResult | None = None,
    on_chunk: ChunkCallback | None = None,
) -> RunResult:
    """Plan -> execute shards -> merge columns -> aggregate -> result.

    ``items`` may be packed (:class:`RunItems` over :class:`~itemscore._packed.PackedItems`):
    the executor then gets them chunk by chunk, and only one chunk of item objects is alive
    at a time. ``on_chunk`` sees each chunk with its item-level columns as soon as it is
    scored (reports written as the run goes).
    """
    from . import __version__
    from ._plugins import plugin_manager

    run_items = items if isinstance(items, RunItems) else RunItems.of(items)
    created = datetime.datetime.now(datetime.timezone.utc)
    started = time.perf_counter()
    if engine.parallel:
        the_plan.check_picklable(settings.executor)
    metric_configs: list[Mapping[str, Any]] = list(the_plan.to_config())
    if base is not None:
        new_labels = set(the_plan.labels)
        kept = [m for m in base.metric_configs if m.get("label") not in new_labels]
        metric_configs = kept + metric_configs
    config = {**settings.to_dict(), "metrics": metric_configs, "itemscore_version": __version__}
    hooks = plugin_manager().hook
    n_items = len(run_items)
    hooks.itemscore_run_started(suite_id=settings.suite_id, config=config, n_items=n_items)
    # Nobody listening costs nothing.
    scored_hook = (
        hooks.itemscore_item_scored if hooks.itemscore_item_scored.get_hookimpls() else None
    )

    # Execute the shards, chunk by chunk; the executor merges each chunk's columns in order.
    total = n_items * len(the_plan)
    done = 0

    def tick(count: int) -> None:
        nonlocal done
        if count and progress is not None:
            done += count
            progress(done, total)

    parts: dict[str, list[ScoreColumn]] = {}
    streamed = run_items.chunk_size is not None
    with gc_frozen():
        for chunk, chunk_columns in engine.execute_chunks(
            the_plan, run_items.chunks(), settings, tick
        ):
            if streamed:  # per-item audit data kept compressed
                chunk_columns = {
                    label: ScoreColumn(
                        label, c.states, c.values, c.reasons, pack_list(c.extras)
                    ) if c.extras is not None else c
                    for label, c in chunk_columns.items()
                }  # fmt: skip
            for label, column in chunk_columns.items():
                parts.setdefault(label, []).append(column)
            if on_chunk is not None:
                on_chunk(chunk, chunk_columns)
            if scored_hook is not None:
                for column in chunk_columns.values():
                    for item, item_score in zip(chunk, column):
                        scored_hook(item=item, score=item_score)
        columns = {label: ScoreColumn.concat(label, part) for label, part in parts.items()}
        models = run_items.model_indices()
        corpus_columns, corpus = _score_corpus(the_plan, run_items.items, models)
    columns.update(corpus_columns)
    tick(n_items * len(corpus_columns))
    ordered = {label: columns[label] for label in the_plan.labels}
    if scored_hook is not None:
        for label in corpus_columns:
            for item, item_score in zip(run_items.items, ordered[label]):
                scored_hook(item=item, score=item_score)

    # Aggregate once, per model and per group.
    with gc_frozen():
        measurements, by_model = _measure_all(
            the_plan, run_items, ordered, settings, models, corpus
        )
    packages = the_plan.packages()
    if base is not None:
        measurements = {**base.measurements, **measurements}
        by_model = {model: {**base.by_model.get(model, {}), **ms} for model, ms in by_model.items()}
        packages = {**base.provenance.get("packages", {}), **packages}
    provenance = {
        "created": created.isoformat(timespec="seconds").replace("+00:00", "Z"),
        "duration_s": round(time.perf_counter() - started, 6),
        "itemscore_version": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": packages,
    }
    if base is not None:
        provenance = {**base.provenance, **provenance}
    result = RunResult(
        items=ScoredItems(run_items.items, ordered, keep_scores=base is not None),
        measurements=measurements,
        by_model=by_model,
        settings=settings,
        metric_configs=metric_configs,
        provenance=provenance,
    )
    hooks.itemscore_run_finished(result=result)
    return result


# -- the public entry points ----------------------------------------------------------------


def score(
    items: Iterable[Any],
    metrics: Iterable[MetricLike] | RunPlan,
    *,
    suite_id: str = "default",
    extra_metrics: Iterable[MetricLike] = (),
    columns: Mapping[str, str] | None = None,
    confidence: float = 0.95,
    ci_method: str | None = None,
    seed: int = 0,
    concurrency: int = 16,
    executor: str | Executor = "serial",
    workers: int | str | None = None,
    client: Any = None,
    retries: int = 0,
    progress: ProgressCallback | None = None,
    registry: Registry | None = None,
) -> RunResult:
    """Score ``items`` with every metric, each item isolated, and aggregate.

    Args:
        items: ItemResults, mappings keyed by column, or a pandas DataFrame (rows follow the
            rules of files: NaN means missing, other columns go to metadata); ids must be
            unique per model.
        metrics: A :func:`~itemscore.plan`, or metric names, mappings
            ``{"name": ..., "label": ..., <options>}``, ``MetricSpec``, metric classes or
            configured instances.
        suite_id: Prefix of the measurement keys (``"<suite_id>.<label>"``).
        extra_metrics: More metrics for this run; repeats of ``metrics`` are dropped.
        columns: Role -> column name for rows whose columns are not named like the roles.
        confidence: Confidence level of every interval.
        ci_method: Interval method for the measurements that support it (e.g. ``"wilson"``
            for ratios, ``"t"`` or ``"bootstrap"`` for means); ``None``: each metric's default.
        seed: Seed for bootstrap intervals.
        concurrency: How many items an ``async def score_item`` may score at once.
        executor: ``"serial"`` (this process), ``"process"`` (a process pool), ``"dask"``
            (a Dask cluster) or an ``Executor`` object. Results are the same whatever runs them.
        workers: Worker processes of ``"process"``/``"dask"`` (``"auto"``: the cores).
        client: A ``distributed.Client`` for ``executor="dask"``; without one a local cluster
            of ``workers`` processes is started and closed.
        retries: How often a shard whose worker was lost is tried again.
        progress: ``progress(done, total)`` as scoring advances.
        registry: Where to find metrics (default: every installed one).

    Raises:
        ConfigError: a bad configuration, found before any item is scored (an executor
            option that does not apply, a metric that cannot be sent to workers...).
        InputError: a row that cannot be an item, or a duplicate id.
    """
    return _score(
        items, metrics, suite_id=suite_id, extra_metrics=extra_metrics, columns=columns,
        confidence=confidence, ci_method=ci_method, seed=seed, concurrency=concurrency,
        executor=executor, workers=workers, client=client, retries=retries, progress=progress,
        registry=registry,
    )  # fmt: skip


def _score(
    items: Iterable[Any],
    metrics: Iterable[MetricLike] | RunPlan,
    *,
    suite_id: str = "default",
    extra_metrics: Iterable[MetricLike] = (),
    columns: Mapping[str, str] | None = None,
    confidence: float = 0.95,
    ci_method: str | None = None,
    seed: int = 0,
    concurrency: int = 16,
    executor: str | Executor = "serial",
    workers: int | str | None = None,
    client: Any = None,
    retries: int = 0,
    progress: ProgressCallback | None = None,
    registry: Registry | None = None,
    on_chunk: ChunkCallback | None = None,
) -> RunResult:
    """:func:`score`, with ``on_chunk`` (see :func:`_run_plan`) for the command line."""
    settings, engine = _prepare(
        suite_id=suite_id, confidence=confidence, ci_method=ci_method, seed=seed,
        concurrency=concurrency, executor=executor, workers=workers, client=client,
        retries=retries,
    )  # fmt: skip
    the_plan = plan(metrics, extra_metrics, registry=registry)
    items = _coerce_items(items, columns)
    return _run_plan(items, the_plan, settings, engine, progress, on_chunk=on_chunk)


def run(
    suite: Suite,
    raw: Iterable[Any] | None = None,
    *,
    extra_metrics: Iterable[MetricLike] = (),
    columns: Mapping[str, str] | None = None,
    confidence: float = 0.95,
    ci_method: str | None = None,
    seed: int = 0,
    concurrency: int = 16,
    executor: str | Executor = "serial",
    workers: int | str | None = None,
    client: Any = None,
    retries: int = 0,
    progress: ProgressCallback | None = None,
    registry: Registry | None = None,
) -> RunResult:
    """Score a suite's items with its bound metrics plus ``extra_metrics``.

    Args:
        suite: The suite; its ``metrics`` are bound to every run.
        raw: The harness's rows, turned into items by ``suite.items(raw)``; ``None``: the
            suite's bundled data.
        extra_metrics: Metrics opted into this run only (or a plan of them); repeats of bound
            ones are dropped.
        columns: Role -> column name; with it (or a DataFrame as ``raw``) the rows are turned
            into items by that mapping before ``suite.items`` sees them.
        confidence: Confidence level of every interval.
        ci_method: Interval method for the measurements that support it.
        seed: Seed for bootstrap intervals.
        concurrency: How many items an ``async def score_item`` may score at once.
        executor: ``"serial"``, ``"process"``, ``"dask"`` or an ``Executor`` object.
        workers: Worker processes of ``"process"``/``"dask"`` (``"auto"``: the cores).
        client: A ``distributed.Client`` for ``executor="dask"``.
        retries: How often a shard whose worker was lost is tried again.
        progress: ``progress(done, total)`` as scoring advances.
        registry: Where to find metrics (default: every installed one).

    Raises:
        ConfigError: a bad configuration, found before any item is scored.
        InputError: malformed rows or duplicate ids.
    """
    settings, engine = _prepare(
        suite_id=suite.suite_id, confidence=confidence, ci_method=ci_method, seed=seed,
        concurrency=concurrency, executor=executor, workers=workers, client=client,
        retries=retries,
    )  # fmt: skip
    if isinstance(extra_metrics, RunPlan):
        extra_metrics = extra_metrics.metrics  # configured already: used as they are
    the_plan = plan(suite.metrics, extra_metrics, registry=registry)
    rows = suite.load_data() if raw is None else raw
    items = _coerce_items(suite.items(suite_rows(rows, columns)))
    return _run_plan(items, the_plan, settings, engine, progress)


def rescore(
    result: RunResult,
    metrics: Iterable[MetricLike] | RunPlan | None = None,
    *,
    confidence: float | None = None,
    ci_method: str | None = None,
    seed: int | None = None,
    concurrency: int = 16,
    executor: str | Executor = "serial",
    workers: int | str | None = None,
    client: Any = None,
    retries: int = 0,
    progress: ProgressCallback | None = None,
    registry: Registry | None = None,
) -> RunResult:
    """Add or recompute metrics on saved results, without the model.

    Scores and measurements of labels not named are kept as they were. ``metrics=None``
    recomputes every metric of the result. ``confidence``, ``ci_method`` and ``seed`` default
    to the result's own settings.

    Raises:
        ConfigError: a bad configuration, found before any item is scored.
    """
    old = result.settings
    settings, engine = _prepare(
        suite_id=old.suite_id,
        confidence=old.confidence if confidence is None else confidence,
        ci_method=old.ci_method if ci_method is None else ci_method,
        seed=old.seed if seed is None else seed,
        concurrency=concurrency, executor=executor, workers=workers, client=client,
        retries=retries,
    )  # fmt: skip
    if metrics is None:
        metrics = [
            {"name": m["name"], "label": m["label"], **m.get("options", {})}
            for m in result.metric_configs
        ]
    the_plan = plan(metrics, registry=registry)
    return _run_plan(result.items, the_plan, settings, engine, progress, base=result)
