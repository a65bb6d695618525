"""``score``, ``run`` and ``rescore``: the engine's steps in order, made a ``RunResult``.

Items -> shards on the executor -> score columns -> run table -> measurements. This module
sits above the engine and :class:`~itemscore.RunResult`. ``score``, ``run`` and ``rescore``
check their settings (:class:`~itemscore.RunSettings`) and build or take a
:class:`~itemscore.RunPlan` before any item is scored. The items are cut into shards that the
executor scores (each score isolated, see :mod:`.engine._shard`); the shards' Arrow score
columns are joined in item order into the run's :class:`~.engine._table.RunTable`; corpus
metrics (``compute``) run here, once per model over all rows; then every metric is aggregated
once per model and per group (:mod:`.engine._measure`).
"""

from __future__ import annotations

import datetime
import math
import os
import platform
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from importlib.metadata import version
from typing import Any, TypeGuard, cast

import pyarrow as pa

from ._columns import CODE, ScoreColumn, score_type
from ._defaults import (
    DEFAULT_CONCURRENCY,
    DEFAULT_CONFIDENCE,
    DEFAULT_EXECUTOR,
    DEFAULT_ITEM_TIMEOUT,
    DEFAULT_RETRIES,
    DEFAULT_SEED,
    DEFAULT_SUITE_ID,
)
from ._derived import annotate
from ._exceptions import ConfigError, describe_exception
from ._plan import RunPlan, plan, reduce_of, saved_spec
from ._plugins import plugin_manager
from ._records import ItemResult, MetricResult, Status
from ._reducers import check_attempt_counts, question_sizes, resolve_reducer
from ._registry import Registry
from ._result import RunResult
from ._settings import RunSettings, refused, resolve_workers
from ._spec import MetricLike
from ._suite import Suite
from .engine._dispatch import Lost, Split, Task, run_tasks
from .engine._files import Keep, score_source
from .engine._measure import compute_corpus, measure_all, model_rows
from .engine._table import RunTable
from .engine._tasks import Job, ShardFailed, release_memo, score_items_task
from .executors import Engine, ExecutorSpec, resolve_executor
from .inputs import Source, open_source, suite_rows, to_items
from .inputs._datasets import NAMES, dataset_kind, staged

__all__ = ["ProgressCallback", "prepare_settings", "rescore", "run", "score", "score_list"]

#: ``progress(done, total)``: called as scoring advances (``total`` = items x metrics).
ProgressCallback = Callable[[int, int], None]

#: Items per shard on the serial executor: progress and memory move in steps of this.
SERIAL_SHARD = 50_000
#: Shards per worker on a parallel executor: several, so a slow shard does not hold others.
SHARDS_PER_WORKER = 4
#: At most this many items per shard on a parallel executor.
MAX_SHARD = 20_000
#: Items of a saved run made records at a time when it is scored again (about 100 MB).
RESCORE_BATCH = 100_000


# -- settings -------------------------------------------------------------------------------


def prepare_settings(
    *,
    executor: Any = DEFAULT_EXECUTOR,
    workers: int | str | None = None,
    client: Any = None,
    address: str | None = None,
    session: Any = None,
    reduce: str | Iterable[str] | None = None,
    **settings: Any,
) -> tuple[RunSettings, ExecutorSpec]:
    """The run's typed settings and its executor (not started), every option checked together.

    ``settings`` are :class:`~itemscore.RunSettings` fields; one left out keeps its default
    there (``reduce=None`` too). A refusal names the setting at fault as data
    (``ConfigError.setting``).

    Raises:
        ConfigError: a setting out of range or of the wrong type, or executor options that do
            not apply.
    """
    spec = resolve_executor(
        executor, workers=resolve_workers(workers), client=client, address=address,
        session=session,
    )  # fmt: skip
    if reduce is not None:
        settings["reduce"] = reduce
    run_settings = RunSettings(
        executor=spec.name, workers=spec.workers if spec.parallel else None, **settings
    )
    memory = settings.get("worker_memory")
    if run_settings.worker_memory is not None and not spec.parallel:
        raise refused(
            "worker_memory",
            f"`worker_memory` ({memory!r}) limits worker processes, and the serial executor "
            "scores in this process, which itemscore never limits: pass executor='process' (or "
            "'dask') with it, or leave it out.",
        )
    if run_settings.worker_memory is not None and spec.name in _OWN_MEMORY_LIMITS:
        raise refused(
            "worker_memory",
            f"`worker_memory` ({memory!r}) does not apply to executor={spec.name!r}: its "
            "workers outlive the run and map shared memory, so an address-space limit would "
            f"break them. Use {_OWN_MEMORY_LIMITS[spec.name]} instead, or leave "
            "`worker_memory` out.",
        )
    return run_settings, spec


#: Executors whose workers have a memory limit of their own, and how to set it.
_OWN_MEMORY_LIMITS = {
    "ray": "Ray's own memory limit (`ray start --memory`, or the memory monitor)",
    "spark": "Spark's own limit of its Python workers (`spark.executor.pyspark.memory`)",
}


# -- scoring on the executor ----------------------------------------------------------------


def _bounds(n: int, engine: Engine) -> list[tuple[int, int]]:
    """Contiguous ``(start, stop)`` bounds of the shards of ``n`` items."""
    if n == 0:
        return []
    if engine.parallel:
        count = max(1, (engine.workers or 1) * SHARDS_PER_WORKER, math.ceil(n / MAX_SHARD))
    else:
        count = math.ceil(n / SERIAL_SHARD)
    size = math.ceil(n / min(count, n))
    return [(start, min(start + size, n)) for start in range(0, n, size)]


def score_list(
    the_plan: RunPlan,
    items: Sequence[ItemResult] | Iterable[Sequence[ItemResult]],
    settings: RunSettings,
    engine: Engine,
    tick: Callable[[int], None],
    keep_extras: Collection[str] | None = None,
    *,
    batches: bool = False,
) -> dict[str, pa.ChunkedArray]:
    """Score ``items`` with the plan's item-level metrics: one Arrow column per label.

    With ``batches``, ``items`` is an iterable of lists of items, taken one list at a time as
    the workers have room: only the lists being scored are in memory (a saved run's items
    read from its file, a batch at a time).
    """
    labels = [pm.label for pm in the_plan.metrics if not pm.is_corpus]
    if not labels:
        return {}
    deadline = None if settings.deadline is None else time.time() + settings.deadline
    inline = not engine.parallel
    job = Job.of(
        the_plan, settings, portable=not inline, keep_extras=keep_extras, deadline=deadline
    )
    lists = cast("Iterable[Sequence[ItemResult]]", items if batches else [items])
    sizes: list[int] = []  # the rows of each task, in order
    parts: dict[int, dict[str, pa.StructArray]] = {}

    def columns_of(result: Any, n: int) -> dict[str, pa.StructArray]:
        if isinstance(result, (Lost, ShardFailed)):
            return dict.fromkeys(
                labels, ScoreColumn.filled("", n, Status.ERROR, result.reason).arrow
            )
        columns: dict[str, pa.StructArray] = result
        return columns

    def task(batch: Sequence[ItemResult], start: int, stop: int) -> Task:
        def split() -> Split:
            middle = (start + stop) // 2

            def join(first: Any, second: Any) -> dict[str, pa.StructArray]:
                a, b = columns_of(first, middle - start), columns_of(second, stop - middle)
                return {label: pa.concat_arrays([a[label], b[label]]) for label in labels}

            return Split(task(batch, start, middle), task(batch, middle, stop), join)

        first, last = batch[start].id, batch[stop - 1].id
        return Task(
            score_items_task,
            (job, batch[start:stop], tick if inline else None),
            f"item {first!r}" if stop - start == 1 else f"items {first!r} to {last!r}",
            split if stop - start > 1 else None,
        )

    def tasks() -> Iterator[Task]:
        for batch in lists:
            for start, stop in _bounds(len(batch), engine):
                sizes.append(stop - start)
                yield task(batch, start, stop)

    def on_done(index: int, result: Any) -> None:
        parts[index] = columns_of(result, sizes[index])
        if not inline:
            tick(sizes[index] * len(labels))

    try:
        run_tasks(
            engine, tasks(), retries=settings.retries, deadline=settings.deadline, on_done=on_done
        )
    finally:
        release_memo(job.token)
    return {
        label: pa.chunked_array([parts[i][label] for i in range(len(sizes))], score_type())
        for label in labels
    }


def _score_corpus(
    the_plan: RunPlan, table: RunTable
) -> tuple[dict[str, pa.StructArray], dict[tuple[str, str | None], MetricResult | str]]:
    """Run every corpus metric once per model over all its rows, here on the driver."""
    columns: dict[str, pa.StructArray] = {}
    results: dict[tuple[str, str | None], MetricResult | str] = {}
    models = model_rows(table)
    for pm in the_plan.metrics:
        if not pm.is_corpus:
            continue
        scores: list[Any] = [None] * len(table)
        for model, rows in models.items():
            outputs, expected = table.item_fields(("output", "expected"), rows)
            try:
                result = compute_corpus(pm, outputs, expected)
            except Exception as exc:  # noqa: BLE001 - one measurement's error
                reason = describe_exception(exc)
                results[(pm.label, model)] = reason
                for row in rows:
                    scores[row] = (Status.ERROR, None, reason)
                continue
            results[(pm.label, model)] = result
            per_row = result.per_row if result.per_row is not None else (None,) * len(rows)
            for row, value in zip(rows, per_row):
                scores[row] = _row_score(value)
        columns[pm.label] = _corpus_column(scores)
    return columns, results


def _row_score(value: Any) -> tuple[Status, float | None, str | None]:
    """A corpus metric's row score: a number is ok, ``None`` skip, anything else an error."""
    if value is None:
        return (Status.SKIP, None, "not scored")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return (Status.OK, float(value), None)
    return (
        Status.ERROR,
        None,
        f"compute gave {value!r} for this row, expected a finite number",
    )


def _corpus_column(scores: Sequence[tuple[Status, float | None, str | None]]) -> pa.StructArray:
    return pa.StructArray.from_arrays(
        [
            pa.array([CODE[s[0]] for s in scores], pa.int8()),
            pa.array([s[1] for s in scores], pa.float64()),
            pa.array([s[2] for s in scores], pa.string()),
            pa.nulls(len(scores), pa.string()),
        ],
        fields=list(score_type()),
    )


# -- the run --------------------------------------------------------------------------------


def _run_plan(
    source: RunTable | Source,
    the_plan: RunPlan,
    settings: RunSettings,
    spec: ExecutorSpec,
    progress: ProgressCallback | None,
    *,
    base: RunResult | None = None,
    keep: Keep | None = None,
    reading: Callable[[int], None] | None = None,
    answer_column: str = "expected",
    limit: int | None = None,
) -> RunResult:
    """Score ``source``'s items with ``the_plan`` and build the result.

    ``source`` is a table whose items are to be scored (its scores, with ``base``, are the
    ones a rescore keeps), or a data source read by the executor's workers
    (:mod:`.engine._files`): then ``keep`` says what the result keeps of its items (default: all of
    them, in memory), ``reading`` follows the rows read, and the whole-source checks run
    before anything is scored.
    """
    itemscore_version = version("itemscore")
    created = datetime.datetime.now(datetime.timezone.utc)
    started = time.perf_counter()
    if spec.parallel:
        the_plan.check_picklable(settings.executor)
    metric_configs: list[Mapping[str, Any]] = list(the_plan.to_config())
    if base is not None:
        new_labels = set(the_plan.labels)
        kept = [m for m in base.metric_configs if m.get("label") not in new_labels]
        metric_configs = kept + metric_configs
    config = {
        **settings.to_dict(),
        "metrics": metric_configs,
        "itemscore_version": version("itemscore"),
    }
    hooks = plugin_manager().hook
    total = 0
    done = 0

    def begin(n_items: int) -> None:
        nonlocal total
        total = n_items * len(the_plan)
        hooks.itemscore_run_started(suite_id=settings.suite_id, config=config, n_items=n_items)

    def tick(count: int) -> None:
        nonlocal done
        if count and progress is not None:
            done += count
            progress(done, total)

    scored_hook = hooks.itemscore_item_scored
    listening = bool(scored_hook.get_hookimpls())
    data: dict[str, Any] | None = None
    # A rescore that keeps the saved reducers recomputes what was saved, errors and all.
    if isinstance(source, RunTable) and (base is None or settings.reduce != base.settings.reduce):
        keys = source.keys
        check_attempt_counts(len(keys), lambda: question_sizes(keys), settings.reduce)
    engine = spec.open()
    try:
        if isinstance(source, Source):
            keep = keep or Keep("memory")
            if keep.mode == "none" and (
                listening or any(pm.is_corpus for pm in the_plan) or _reads_answers(settings)
            ):
                keep = Keep("memory")  # the hook, corpus metrics and majority read the items
            needing = [pm.label for pm in the_plan.metrics if pm.metric.needs_answer_key]
            ran = score_source(
                the_plan, source, settings, engine, tick, keep=keep, needing=needing,
                answer_column=answer_column, reading=reading, started=begin, limit=limit,
            )  # fmt: skip
            table = ran.table
            data = {"path": source.name, "sha256": ran.sha256, "rows": ran.n_rows}
            if limit is not None:  # the hash is of the bytes read, the first rows' only
                data["limit"] = limit
        else:
            begin(len(source))
            if source.items is None:
                raise ValueError("the run table keeps no items to score")
            listed = source.items.listed
            if listed is not None:
                columns = score_list(the_plan, listed, settings, engine, tick)
            else:  # a batch at a time, never every item as a record
                lists = source.items.item_lists(RESCORE_BATCH)
                columns = score_list(the_plan, lists, settings, engine, tick, batches=True)
            table = source.with_scores(columns)
    except BaseException:
        # An error or an interrupt (Ctrl-C, SIGTERM on the command line): the workers are
        # stopped, not waited for — a metric may take minutes on its item.
        engine.close(abort=True)
        raise
    engine.close()
    n_items = len(table)
    corpus_columns, corpus = _score_corpus(the_plan, table)
    table = table.with_scores(corpus_columns)
    tick(n_items * len(corpus_columns))
    order = [m["label"] for m in metric_configs]
    table = table.select([label for label in order if label in table.scores])
    if listening:  # nobody listening costs nothing
        labels = set(the_plan.labels)
        for item in table.rows():
            bare = item.with_scores({})  # the hook is given the item and each score apart
            for label, score in item.scores.items():
                if label in labels:
                    scored_hook(item=bare, score=score)

    measurements, by_model = measure_all(the_plan, table, settings, corpus)
    packages = the_plan.packages()
    if base is not None:
        # A label recomputed keeps none of its old measurements (under other reducers).
        labels = set(the_plan.labels)

        def others(old: Mapping[str, Any]) -> dict[str, Any]:
            return {k: m for k, m in old.items() if m.metric not in labels}

        measurements = {**others(base.measurements), **measurements}
        by_model = {
            model: {**others(base.by_model.get(model, {})), **ms} for model, ms in by_model.items()
        }
        packages = {**base.provenance.get("packages", {}), **packages}
    # How each metric's measurements are named and shown, and what it derives from them.
    planned = {pm.label: (pm.metric, pm.metric_id) for pm in the_plan.metrics}
    measurements = annotate(planned, measurements)
    by_model = {model: annotate(planned, ms) for model, ms in by_model.items()}
    provenance = {
        "created": created.isoformat(timespec="seconds").replace("+00:00", "Z"),
        "duration_s": round(time.perf_counter() - started, 6),
        "itemscore_version": itemscore_version,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": packages,
    }
    if base is not None:
        provenance = {**base.provenance, **provenance}
    if data is not None:
        provenance["data"] = data
    result = RunResult(
        items=table.scored_items(),
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
    items: Iterable[Any] | str | os.PathLike[str],
    metrics: Iterable[MetricLike] | RunPlan,
    *,
    suite_id: str = DEFAULT_SUITE_ID,
    extra_metrics: Iterable[MetricLike] = (),
    columns: Mapping[str, str] | None = None,
    format: str | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
    ci_method: str | None = None,
    seed: int = DEFAULT_SEED,
    concurrency: int = DEFAULT_CONCURRENCY,
    executor: Any = DEFAULT_EXECUTOR,
    workers: int | str | None = None,
    client: Any = None,
    address: str | None = None,
    session: Any = None,
    retries: int = DEFAULT_RETRIES,
    item_timeout: float | str | None = DEFAULT_ITEM_TIMEOUT,
    deadline: float | None = None,
    worker_memory: int | str | None = None,
    reduce: str | Iterable[str] | None = None,
    progress: ProgressCallback | None = None,
    registry: Registry | None = None,
) -> RunResult:
    """Score ``items`` with every metric, each item isolated, and aggregate.

    Args:
        items: ItemResults, mappings keyed by column, or a pandas DataFrame (rows follow the
            rules of files: NaN means missing, other columns go to metadata); ids must be
            unique per model (and attempt). Or a data file, a glob, a folder or a list of
            files: the executor's workers then read it, each its own part, and every
            whole-file check runs before any item is scored. Or a Ray Dataset or a Spark
            DataFrame of a local Ray or Spark: its engine writes it as Parquet parts into a
            private folder, read as files are, and removed after the run.
        metrics: A :func:`~itemscore.plan`, or metric names, mappings
            ``{"name": ..., "label": ..., <options>}``, ``MetricSpec``, metric classes or
            configured instances.
        suite_id: Prefix of the measurement keys (``"<suite_id>.<label>"``).
        extra_metrics: More metrics for this run; repeats of ``metrics`` are dropped.
        columns: Role -> column name for rows whose columns are not named like the roles.
        format: The files' format (one of ``itemscore.inputs.FORMATS``); ``None``: from
            their extensions. Only with files.
        confidence: Confidence level of every interval.
        ci_method: Interval method for the measurements that support it (e.g. ``"wilson"``
            for ratios, ``"t"`` or ``"bootstrap"`` for means); ``None``: each metric's default.
        seed: Seed for bootstrap intervals.
        concurrency: How many items an ``async def score_item`` may score at once.
        executor: ``"serial"`` (this process), ``"process"`` (a process pool), ``"dask"``
            (a Dask cluster), ``"ray"`` (Ray Data), ``"spark"`` (a Spark session) or any
            ``concurrent.futures.Executor``. Results are the same whatever runs them.
        workers: Worker processes of ``"process"``/``"dask"``, CPUs of a local Ray, cores of
            a local Spark (``"auto"``: the cores).
        client: A ``distributed.Client`` for ``executor="dask"``, or its scheduler's address
            (``"tcp://HOST:8786"``: connected for the run, and closed after); without one a
            local cluster of ``workers`` processes is started and closed.
        address: The Ray cluster of ``executor="ray"``, as ``ray.init`` takes it
            (``"auto"``, ``"ray://HOST:10001"``); without one (and no ``RAY_ADDRESS``) a
            local Ray is started and shut down.
        session: A ``SparkSession`` for ``executor="spark"``, left running; without one
            (and none active) a local session is made and stopped.
        retries: How often a shard whose worker was lost is tried again (default once).
        item_timeout: Seconds a metric may take on one item before it is an ``error``
            (default 300; a metric that bounds its own items longer, as the LLM judge
            does, gets its bound); ``None`` or ``0``: no limit.
        deadline: Seconds the whole run may take; shards not done by then are errors.
        worker_memory: Bytes (or ``"2G"``, ``"512M"``) of address space each worker
            process may use; past it a metric's allocation fails and its item is an
            ``error``. Not for the serial executor's process. ``None``: no limit.
        reduce: How each question's attempts (items with one ``model`` and ``id`` and
            several ``attempt``) are reduced to one score: a reducer name or a list of them
            (``["mean", "pass@5"]``); the first gives ``<suite>.<label>``, each further one
            ``<suite>.<label>[<reducer>]``. ``None``: the plan's, else ``"mean"``.
        progress: ``progress(done, total)`` as scoring advances.
        registry: Where to find metrics (default: every installed one).

    Raises:
        ConfigError: a bad configuration, found before any item is scored (an executor
            option that does not apply, a metric that cannot be sent to workers...).
        InputError: a row that cannot be an item, or a duplicate id.
    """
    settings, spec = prepare_settings(
        suite_id=suite_id, confidence=confidence, ci_method=ci_method, seed=seed,
        concurrency=concurrency, executor=executor, workers=workers, client=client,
        address=address, session=session, retries=retries, item_timeout=item_timeout,
        deadline=deadline,
        worker_memory=worker_memory,
        reduce=reduce_of(reduce, metrics),
    )  # fmt: skip
    the_plan = plan(metrics, extra_metrics, registry=registry)
    expected = (columns or {}).get("expected", "expected")
    kind = dataset_kind(items)
    if kind is not None:  # written as Parquet parts by the engine's workers, read by ours
        if format is not None:
            raise ConfigError(
                f"`format` ({format!r}) applies to files; a {NAMES[kind]} is read as it is. "
                "Leave `format` out."
            )
        with (
            staged(items, kind) as folder,
            open_source(folder, "parquet", columns=columns, name=NAMES[kind]) as opened,
        ):
            return _run_plan(opened, the_plan, settings, spec, progress, answer_column=expected)
    if is_paths(items):
        with open_source(items, format, columns=columns) as opened:
            return _run_plan(opened, the_plan, settings, spec, progress, answer_column=expected)
    if format is not None:
        raise ConfigError(
            f"`format` ({format!r}) applies to files; the items given are not a path. Leave "
            "`format` out, or pass the path of the file."
        )
    source = RunTable.of_items(to_items(cast("Iterable[Any]", items), columns))
    return _run_plan(source, the_plan, settings, spec, progress)


def score_opened(
    source: Source,
    metrics: Iterable[MetricLike] | RunPlan,
    *,
    keep: Keep,
    reading: Callable[[int], None] | None = None,
    answer_column: str = "expected",
    limit: int | None = None,
    suite_id: str = DEFAULT_SUITE_ID,
    progress: ProgressCallback | None = None,
    **settings: Any,
) -> RunResult:
    """:func:`score` of an opened source, keeping of its items what ``keep`` says.

    The command line's way in: without reports it keeps no item (``Keep("none")``), with
    them it writes ``items.parquet`` of the new report set as the run goes. ``settings`` are
    :func:`score`'s (confidence, ci_method, seed, executor, workers, client, address,
    session, retries...).
    ``limit``: read only the first rows of the source (a quick look; recorded in provenance).

    Raises:
        ConfigError: a bad configuration, found before any item is scored.
        InputError: a malformed source, or one that fails a whole-source check.
    """
    run_settings, spec = prepare_settings(suite_id=suite_id, **settings)
    the_plan = plan(metrics)
    return _run_plan(
        source, the_plan, run_settings, spec, progress, keep=keep, reading=reading,
        answer_column=answer_column, limit=limit,
    )  # fmt: skip


def is_paths(items: Any) -> TypeGuard[str | os.PathLike[str] | Sequence[str | os.PathLike[str]]]:
    """Whether ``items`` names files (a path, a glob, a folder, or a list of them)."""
    if isinstance(items, (str, os.PathLike)):
        return True
    if isinstance(items, (list, tuple)) and items:
        return all(isinstance(item, (str, os.PathLike)) for item in items)
    return False


def run(
    suite: Suite,
    raw: Iterable[Any] | None = None,
    *,
    extra_metrics: Iterable[MetricLike] = (),
    columns: Mapping[str, str] | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
    ci_method: str | None = None,
    seed: int = DEFAULT_SEED,
    concurrency: int = DEFAULT_CONCURRENCY,
    executor: Any = DEFAULT_EXECUTOR,
    workers: int | str | None = None,
    client: Any = None,
    address: str | None = None,
    session: Any = None,
    retries: int = DEFAULT_RETRIES,
    item_timeout: float | str | None = DEFAULT_ITEM_TIMEOUT,
    deadline: float | None = None,
    worker_memory: int | str | None = None,
    reduce: str | Iterable[str] | None = None,
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
        executor: ``"serial"``, ``"process"``, ``"dask"``, ``"ray"``, ``"spark"`` or a
            ``concurrent.futures.Executor``.
        workers: Worker processes of ``"process"``/``"dask"``, CPUs of a local Ray, cores of
            a local Spark (``"auto"``: the cores).
        client: A ``distributed.Client`` for ``executor="dask"``, or its scheduler's address.
        address: The Ray cluster of ``executor="ray"`` (see :func:`score`).
        session: The ``SparkSession`` of ``executor="spark"`` (see :func:`score`).
        retries: How often a shard whose worker was lost is tried again (default once).
        item_timeout: Seconds a metric may take on one item before it is an ``error``
            (default 300; a metric that bounds its own items longer, as the LLM judge
            does, gets its bound); ``None`` or ``0``: no limit.
        deadline: Seconds the whole run may take; shards not done by then are errors.
        worker_memory: Bytes (or ``"2G"``, ``"512M"``) of address space each worker
            process may use; past it a metric's allocation fails and its item is an
            ``error``. Not for the serial executor's process. ``None``: no limit.
        reduce: How each question's attempts are reduced (see :func:`score`).
        progress: ``progress(done, total)`` as scoring advances.
        registry: Where to find metrics (default: every installed one).

    Raises:
        ConfigError: a bad configuration, found before any item is scored.
        InputError: malformed rows or duplicate ids.
    """
    settings, spec = prepare_settings(
        suite_id=suite.suite_id, confidence=confidence, ci_method=ci_method, seed=seed,
        concurrency=concurrency, executor=executor, workers=workers, client=client,
        address=address, session=session, retries=retries, item_timeout=item_timeout,
        deadline=deadline,
        worker_memory=worker_memory,
        reduce=reduce_of(reduce, extra_metrics),
    )  # fmt: skip
    if isinstance(extra_metrics, RunPlan):
        extra_metrics = extra_metrics.metrics  # configured already: used as they are
    the_plan = plan(suite.metrics, extra_metrics, registry=registry)
    rows = suite.load_data() if raw is None else raw
    items = to_items(suite.items(suite_rows(rows, columns)))
    return _run_plan(RunTable.of_items(items), the_plan, settings, spec, progress)


def rescore(
    result: RunResult,
    metrics: Iterable[MetricLike] | RunPlan | None = None,
    *,
    confidence: float | None = None,
    ci_method: str | None = None,
    seed: int | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    executor: Any = DEFAULT_EXECUTOR,
    workers: int | str | None = None,
    client: Any = None,
    address: str | None = None,
    session: Any = None,
    retries: int = DEFAULT_RETRIES,
    item_timeout: float | str | None = DEFAULT_ITEM_TIMEOUT,
    deadline: float | None = None,
    worker_memory: int | str | None = None,
    reduce: str | Iterable[str] | None = None,
    progress: ProgressCallback | None = None,
    registry: Registry | None = None,
) -> RunResult:
    """Add or recompute metrics on saved results, without the model.

    Scores and measurements of labels not named are kept as they were. ``metrics=None``
    recomputes every metric of the result. ``confidence``, ``ci_method``, ``seed`` and
    ``reduce`` default to the result's own settings.

    Raises:
        ConfigError: a bad configuration, found before any item is scored.
    """
    old = result.settings
    settings, spec = prepare_settings(
        suite_id=old.suite_id,
        confidence=old.confidence if confidence is None else confidence,
        ci_method=old.ci_method if ci_method is None else ci_method,
        seed=old.seed if seed is None else seed,
        concurrency=concurrency, executor=executor, workers=workers, client=client,
        address=address, session=session, retries=retries, item_timeout=item_timeout,
        deadline=deadline,
        worker_memory=worker_memory,
        reduce=reduce_of(reduce, metrics) or old.reduce,
    )  # fmt: skip
    if metrics is None:
        metrics = [saved_spec(m) for m in result.metric_configs]
    the_plan = plan(metrics, registry=registry)
    the_plan.check_secrets_given()  # saved options hold `***` where a secret was
    return _run_plan(result.table, the_plan, settings, spec, progress, base=result)


def _reads_answers(settings: RunSettings) -> bool:
    """Whether a reducer of the run reads the attempts' outputs (``majority`` does)."""
    return any(resolve_reducer(name).reads_answers for name in settings.reduce)
