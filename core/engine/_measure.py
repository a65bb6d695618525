"""Measurements from a run table: one per metric and model, with per-group breakdowns.

Each metric's own ``aggregate`` turns its scores into an :class:`~itemscore.Estimate` (a corpus
metric's ``compute`` result stands for it); this module adds what every measurement shares —
the four counts, the groups, the macro value over groups, clusters, the small-group flag — and
records how the number was made (``Measurement.aggregation``), so that no reader has to
configure the metric again to learn it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np
import pyarrow as pa

from .._columns import ScoreColumn
from .._exceptions import describe_exception
from .._metric import MetricContext, default_aggregate
from .._plan import PlannedMetric, RunPlan
from .._records import Estimate, Measurement, MetricResult, Status
from .._reducers import REDUCER_EXTRA, reducer_key, resolve_reducer
from .._settings import RunSettings
from ._measurement import SMALL_GROUP, aggregation_of, common_fields, failed, macro_extra, made
from ._questions import LabelAttempts, Questions, attempt_extra
from ._table import RunTable
from ._tallies import LabelTally, TallySource, measure_tallied, tally_label

__all__ = ["SMALL_GROUP", "aggregation_of", "compute_corpus", "measure_all"]

#: A corpus metric's result (or the error text of its ``compute``) per (label, model).
CorpusResults = Mapping[tuple[str, "str | None"], "MetricResult | str"]


def compute_corpus(
    pm: PlannedMetric, outputs: Sequence[str | None], expected: Sequence[Any]
) -> MetricResult:
    """Call a corpus metric over all its rows; its exception propagates to the caller."""
    references = [None if e is None else tuple(e) for e in expected]
    result = pm.metric.compute(list(outputs), references)
    if not isinstance(result, MetricResult):
        raise TypeError(
            f"compute returned {type(result).__name__}, expected self.result(value, ...)"
        )
    if result.per_row is not None and len(result.per_row) != len(outputs):
        raise ValueError(
            f"compute returned {len(result.per_row)} per_row scores for {len(outputs)} rows"
        )
    return result


class _CorpusError(Exception):
    """A corpus metric's ``compute`` failed; its text is the measurement's error."""


@attrs.frozen
class _Subset:
    """The rows one measurement is made over, and what it needs of them."""

    rows: Sequence[int] | None  # None: every row of the table
    groups: Sequence[str | None] | None
    clusters: Sequence[str | None] | None


def _pick(values: Sequence[Any] | None, rows: Sequence[int] | None) -> Any:
    if values is None or rows is None:
        return values
    return [values[i] for i in rows]


@attrs.frozen(eq=False)
class _Source:
    """What one measurement of a metric is made over: which table, column, kind and key.

    Without attempts and with the default reducer the source is the run table itself, as it
    always was. Otherwise it is the table of questions with one reducer's question-level
    column; or, for a metric with its own aggregate reduced by ``mean``, the run table's
    attempts with each question a cluster, counted by question.
    """

    #: The measurement's key (``<suite>.<label>``, or with ``[<reducer>]``).
    key: str
    #: The rows measured: the run table, or the table of questions.
    table: RunTable
    #: The score column of ``table`` to measure.
    label: str
    #: Rows of ``table`` by model (``None`` for a plain source: see :meth:`_Sources.keys_of`).
    models: Mapping[str | None, Sequence[int]] | None
    #: Each row's group and cluster (``None``: no row has one).
    groups: Sequence[str | None] | None
    clusters: Sequence[str | None] | None
    #: The default aggregate of this kind instead of the metric's own (``None``: its own).
    kind: str | None = None
    #: The range of the values for that aggregate (shares of right attempts: 0 to 1).
    bounds: tuple[float, float] | None = None
    #: The reducer named in ``extra`` (``None``: none, a run as it always was).
    reducer: str | None = None
    #: The label's attempts, for the attempt numbers in ``extra``.
    attempts: LabelAttempts | None = None
    #: With attempt rows: the question of each row, and the question-level scores that give
    #: ``n`` and ``counts``.
    of_question: Any = None
    question_scores: ScoreColumn | None = None
    #: Set when the whole measurement is an error (a reducer that raised or does not apply).
    error: str | None = None
    #: Whether a corpus metric's results apply (the run table's own rows).
    corpus: bool = False
    #: Whether every scored attempt was decided by a harness rule: the standard error over
    #: questions is then the harness's (``sd / sqrt(n)`` for a ratio too).
    harness: bool = False
    #: Whether the source is the run table itself, measured as every run without attempts.
    plain: bool = False


def measure_all(
    plan: RunPlan,
    table: RunTable,
    settings: RunSettings,
    corpus: CorpusResults,
) -> tuple[dict[str, Measurement], dict[str | None, dict[str, Measurement]]]:
    """Every measurement of a run: pooled, and one dict per model.

    With attempts (items with one ``model`` and ``id`` and several ``attempt``), each
    item-level metric's attempts are first reduced to one score per question by every
    reducer of ``settings.reduce`` (:mod:`itemscore._reducers`), and the question is the unit of the
    measurement: of its ``n``, its counts, its interval, its groups and clusters.

    Returns:
        The headline measurements (pooled over models when there are several) and the
        measurements of each model, in order of the models' first appearance.
    """
    base = MetricContext(
        suite_id=settings.suite_id, confidence=settings.confidence,
        ci_method=settings.ci_method, seed=settings.seed, concurrency=settings.concurrency,
    )  # fmt: skip
    sources = _Sources(plan, table, settings)
    models = sources.model_names()
    wanted = [(model, False) for model in models] if len(models) > 1 else []
    wanted.append((models[0] if len(models) == 1 else None, True))
    by_label: dict[str, list[_Source]] = {}
    tallied: dict[tuple[str, str | None, bool], Measurement] = {}
    for pm in plan.metrics:
        by_label[pm.label] = sources.of(pm)
        for src in by_label[pm.label]:
            for (model, whole), m in _tallied_all(pm, src, sources, base, wanted).items():
                tallied[(src.key, model, whole)] = m

    def measure(model: str | None, whole: bool) -> dict[str, Measurement]:
        out: dict[str, Measurement] = {}
        for pm in plan.metrics:
            for src in by_label[pm.label]:
                found = tallied.get((src.key, model, whole))
                if found is not None:
                    out[found.key] = found
                    continue
                src_models, groups, clusters = sources.keys_of(src)
                rows = None if whole else list(src_models.get(model, ()))
                column = src.table.score(src.label)
                if rows is not None:
                    column = column.take(rows)
                subset = _Subset(rows, _pick(groups, rows), _pick(clusters, rows))
                ctx = attrs.evolve(base, label=pm.label, model=model)
                pooled = whole and len(models) > 1
                result = None if pooled or not src.corpus else corpus.get((pm.label, model))
                m = _measure(pm, src, column, subset, ctx, corpus=result)
                out[m.key] = m
                del column  # a label's scores may be read from the items file: one at a time
        return out

    if len(models) <= 1:
        model = models[0] if models else None
        headline = measure(model, True)
        return headline, {model: headline}
    by_model = {model: measure(model, False) for model in models}
    return measure(None, True), by_model


class _Sources:
    """The measurement sources of each metric of a run (see :class:`_Source`)."""

    def __init__(self, plan: RunPlan, table: RunTable, settings: RunSettings) -> None:
        self.plan = plan
        self.table = table
        self.suite_id = settings.suite_id
        self.specs = [resolve_reducer(name) for name in settings.reduce]
        plain = not table.has("attempt") and [s.name for s in self.specs] == ["mean"]
        self.questions = None if plain else Questions.of(table)
        self._question_table: RunTable | None = None
        self._codings: dict[Any, Any] = {}  # the outputs' answer codes, shared by the labels
        self._keys: Any = None
        self._tally: tuple[str, LabelTally] | None = None  # the last label's, read once

    def model_names(self) -> list[str | None]:
        """The models, in order of first appearance (``[None]`` without models)."""
        if not self.table.has("model"):
            return [None]
        if self.plan.metrics:
            return list(self.label_tally(self.plan.metrics[0].label).models)
        return list(self.models)

    @functools.cached_property
    def models(self) -> Mapping[str | None, Sequence[int]]:
        """The run table's rows by model (read only for measurements made of the rows)."""
        return model_rows(self.table)

    @functools.cached_property
    def groups(self) -> Sequence[str | None] | None:
        return self.table.key("group") if self.table.has("group") else None

    @functools.cached_property
    def clusters(self) -> Sequence[str | None] | None:
        return self.table.key("cluster") if self.table.has("cluster") else None

    def keys_of(self, src: _Source) -> tuple[Mapping[str | None, Sequence[int]], Any, Any]:
        """The rows by model, the groups and the clusters of a source's table."""
        if src.plain:
            return self.models, self.groups, self.clusters
        assert src.models is not None
        return src.models, src.groups, src.clusters

    def label_tally(self, label: str) -> LabelTally:
        """``label``'s scores tallied by model and group (the last label's is kept)."""
        if self._tally is None or self._tally[0] != label:
            self._tally = None
            self._tally = (label, tally_label(self.table, label))
        return self._tally[1]

    def partial_credit(self, label: str) -> bool:
        """Whether a scored value of ``label`` lies strictly between 0 and 1."""
        return self.label_tally(label).partial_credit()

    @property
    def attempts(self) -> bool:
        return self.questions is not None and self.questions.has_attempts

    def _plain(self, pm: PlannedMetric, key: str, reducer: str | None) -> _Source:
        """The run table's own rows, as every run without attempts is measured.

        A right-or-wrong metric with partial credit among its values (a harness's, which a
        harness rule gives: inspect ``f1()``) is measured as their mean, as the harness does.
        """
        kind, bounds = None, None
        if aggregation_of(pm) == "ratio" and self.partial_credit(pm.label):
            kind, bounds = "mean", (0.0, 1.0)
        return _Source(
            key, self.table, pm.label, None, None, None,
            kind=kind, bounds=bounds, reducer=reducer, corpus=True, plain=True,
        )  # fmt: skip

    def _q_table(self) -> RunTable:
        assert self.questions is not None
        if self._question_table is None:
            self._question_table = self.questions.table({})
        return self._question_table

    def _question_keys(self) -> Any:
        """The questions' rows by model, groups and clusters (read once for every source)."""
        if self._keys is None:
            table = self._q_table()
            self._keys = (
                model_rows(table),
                table.key("group") if table.has("group") else None,
                table.key("cluster") if table.has("cluster") else None,
            )
        return self._keys

    def of(self, pm: PlannedMetric) -> list[_Source]:
        """The sources of ``pm``'s measurements: one per reducer, the first the headline's."""
        out: list[_Source] = []
        label_attempts: LabelAttempts | None = None
        for index, spec in enumerate(self.specs):
            key = reducer_key(self.suite_id, pm.label, spec.name, index == 0)
            named = spec.name if (self.attempts or index > 0 or spec.name != "mean") else None
            if self.questions is None or (spec.name == "mean" and not self.attempts):
                out.append(self._plain(pm, key, named))
                continue
            if label_attempts is None:
                label_attempts = LabelAttempts.of(
                    self.questions,
                    self.table,
                    pm.label,
                    binary=pm.metric.aggregation == "ratio" and not self.partial_credit(pm.label),
                    normalizer=getattr(pm.metric, "normalizer", None),
                    codings=self._codings,
                )
            shown = label_attempts if self.attempts else None
            if pm.is_corpus:
                if spec.name != "mean":
                    reason = _corpus_reason(pm, spec.name)
                    out.append(self._failed(pm, key, named, reason, shown))
                elif shown is None:
                    out.append(self._plain(pm, key, named))
                else:
                    # compute sees every attempt as a row; n and the counts are the questions'.
                    clustered = self._clustered(pm, key, named, shown, with_clusters=False)
                    out.append(attrs.evolve(clustered, corpus=True))
                continue
            if spec.name == "mean" and aggregation_of(pm) == "custom":
                out.append(self._clustered(pm, key, named, label_attempts))
                continue
            try:
                reduced, picked = label_attempts.reduce(spec)
            except Exception as exc:  # noqa: BLE001 - a failed reducer spoils one measurement
                reason = f"The reducer {spec.name!r} failed on {pm.label!r}: "
                reason += describe_exception(exc)
                out.append(self._failed(pm, key, named, reason, shown))
                continue
            out.append(self._reduced(pm, key, named, reduced, picked, shown))
        if self.attempts and label_attempts is not None and _by_harness_rule(label_attempts):
            out = [attrs.evolve(source, harness=True) for source in out]
        return out

    def _failed(
        self,
        pm: PlannedMetric,
        key: str,
        reducer: str | None,
        error: str,
        attempts: LabelAttempts | None,
    ) -> _Source:
        """A measurement that is an error as a whole, counted by question with attempts."""
        if attempts is None:
            return attrs.evolve(self._plain(pm, key, reducer), error=error, corpus=False)
        clustered = self._clustered(pm, key, reducer, attempts, with_clusters=False)
        return attrs.evolve(clustered, error=error)

    def _reduced(
        self,
        pm: PlannedMetric,
        key: str,
        reducer: str | None,
        reduced: pa.StructArray,
        picked: bool,
        attempts: LabelAttempts | None,
    ) -> _Source:
        """The questions with ``spec``'s question-level scores."""
        column_name = key
        table = self._q_table().with_scores({column_name: reduced})
        kind: str | None = None
        bounds = pm.metric.value_bounds
        # A picked attempt with partial credit (a harness's) counts its value, not its state.
        if not picked or (aggregation_of(pm) == "ratio" and self.partial_credit(pm.label)):
            kind = _kind_of_values(pm, reduced)
            if kind == "mean" and (
                pm.metric.aggregation == "ratio" or aggregation_of(pm) == "custom"
            ):
                bounds = (0.0, 1.0)  # shares of right attempts
        q_models, q_groups, q_clusters = self._question_keys()
        return _Source(
            key,
            table,
            column_name,
            q_models,
            q_groups,
            q_clusters,
            kind=kind,
            bounds=bounds,
            reducer=reducer,
            attempts=attempts,
        )

    def _clustered(
        self,
        pm: PlannedMetric,
        key: str,
        reducer: str | None,
        attempts: LabelAttempts,
        *,
        with_clusters: bool = True,
    ) -> _Source:
        """A metric with its own aggregate under ``mean``: every attempt, questions as clusters.

        Its aggregate sees every scored attempt (F1 over all answers given), with each
        question a cluster (or the items' own clusters, in which questions nest), so that its
        interval rests on questions; ``n`` and the counts are the questions'.
        """
        assert self.questions is not None
        from .._reducers import resolve_reducer as find

        of_question = self.questions.of_row
        clusters: Sequence[str | None] | None = self.clusters
        if clusters is None and with_clusters:
            clusters = [str(q) for q in of_question.tolist()]
        means = ScoreColumn.of_arrow(pm.label, attempts.reduce(find("mean"))[0])
        return _Source(
            key, self.table, pm.label, self.models, self.groups, clusters,
            reducer=reducer, attempts=attempts, of_question=of_question, question_scores=means,
        )  # fmt: skip


def _by_harness_rule(attempts: LabelAttempts) -> bool:
    """Whether a harness rule decided every scored attempt (its ``extra`` names the rule)."""
    import pyarrow.compute as pc

    if attempts.rows.size == 0:
        return False
    extras = attempts.column.field("extra").take(pa.array(attempts.rows))
    named = pc.match_substring(extras.fill_null(""), '"rule": "')
    return bool(pc.all(named).as_py())


def _kind_of_values(pm: PlannedMetric, reduced: pa.StructArray) -> str:
    """How question-level values are aggregated.

    As a ratio when each is 0 or 1 (and the metric is right or wrong), else as the metric's
    mean or geometric mean (of shares in [0, 1], for a ratio metric).
    """
    own = pm.metric.aggregation
    if own == "geomean":
        return "geomean"
    if own == "ratio":
        values = reduced.field("value").drop_null().to_numpy(zero_copy_only=False)
        return "ratio" if bool(np.all((values == 0.0) | (values == 1.0))) else "mean"
    return "mean"


def _corpus_reason(pm: PlannedMetric, reducer: str) -> str:
    return (
        f"The reducer {reducer!r} does not apply to {pm.label!r}: a corpus metric scores all "
        "rows at once, so there is no score per question to reduce; its measurement is the "
        "one under 'mean' (every attempt a row)."
    )


def model_rows(table: RunTable) -> dict[str | None, Sequence[int]]:
    """Row positions by model, in order of first appearance (one entry without models).

    One model's rows are a ``range``: a list of ten million positions would hold more
    memory than the run's score columns.
    """
    if not table.has("model"):
        return {None: range(len(table))}
    out: dict[str | None, list[int]] = {}
    for index, model in enumerate(table.key("model")):
        out.setdefault(model, []).append(index)
    if len(out) == 1:
        return {next(iter(out)): range(len(table))}
    return dict(out)


def _estimate(
    pm: PlannedMetric,
    src: _Source,
    scores: ScoreColumn,
    rows: Sequence[int] | None,
    ctx: MetricContext,
    corpus: MetricResult | str | None,
) -> Estimate:
    """The estimate for these scores.

    The metric's aggregate (or the default one of the source's kind), or a corpus metric's
    result.
    """
    if src.kind is not None:
        return default_aggregate(scores, ctx, src.kind, src.bounds)
    if not pm.is_corpus:
        estimate = pm.metric.aggregate(scores, ctx)
        if not isinstance(estimate, Estimate):
            raise TypeError(
                f"aggregate returned {type(estimate).__name__}, expected itemscore.Estimate"
            )
        return estimate
    if corpus is None:  # a group, or several models pooled: compute over those rows
        outputs, expected = src.table.item_fields(("output", "expected"), rows)
        corpus = compute_corpus(pm, outputs, expected)
    if isinstance(corpus, str):
        raise _CorpusError(corpus)
    n = corpus.n_scored if corpus.n_scored is not None else scores.counts()[Status.OK]
    return Estimate(value=corpus.value, n=n, confidence=ctx.confidence, extra=corpus.extra)


def _questions_of(src: _Source, scores: ScoreColumn, rows: Sequence[int] | None) -> Any:
    """The scored questions of a subset (indices into the questions), and its counts."""
    if src.of_question is None:
        codes = np.frombuffer(bytes(scores.states), dtype=np.int8)
        picked = np.arange(len(codes)) if rows is None else np.asarray(rows, dtype=np.intp)
        return picked[codes <= 1], None
    assert src.question_scores is not None
    of_row = src.of_question if rows is None else src.of_question[np.asarray(rows, np.intp)]
    questions = np.unique(of_row)
    column = src.question_scores.take(questions.tolist())
    codes = np.frombuffer(bytes(column.states), dtype=np.int8)
    return questions[codes <= 1], column.counts()


def _measure(
    pm: PlannedMetric,
    src: _Source,
    scores: ScoreColumn,
    subset: _Subset,
    ctx: MetricContext,
    *,
    corpus: MetricResult | str | None = None,
) -> Measurement:
    counts = scores.counts()
    questions = None
    if src.attempts is not None or src.of_question is not None:
        questions, question_counts = _questions_of(src, scores, subset.rows)
        if question_counts is not None:
            counts = question_counts
    common = common_fields(pm, src.key, src.kind, ctx, counts)
    named = {REDUCER_EXTRA.format(src.reducer): 1.0} if src.reducer is not None else {}
    if src.attempts is not None and questions is not None:
        named.update(attempt_extra(src.attempts, questions, ctx.confidence))
    if src.error is not None:
        return failed(common, src.error, named)
    by_group: dict[str, Measurement] = {}
    if subset.groups is not None:
        members: dict[str, list[int]] = {}
        for index, group in enumerate(subset.groups):
            if group is not None:
                members.setdefault(group, []).append(index)
        for group in sorted(members):
            indices = members[group]
            rows = indices if subset.rows is None else [subset.rows[i] for i in indices]
            by_group[group] = _measure(
                pm,
                src,
                scores.take(indices),
                _Subset(rows, None, _pick(subset.clusters, indices)),
                attrs.evolve(ctx, group=group),
            )
    try:
        estimate = _estimate(
            pm, src, scores, subset.rows, attrs.evolve(ctx, clusters=subset.clusters), corpus
        )
        value = None if estimate.value is None else float(estimate.value)
        if value is not None and not math.isfinite(value):
            raise ValueError(f"aggregate returned a non-finite value ({value!r})")
    except _CorpusError as exc:
        return failed(common, str(exc), named, by_group)
    except Exception as exc:  # noqa: BLE001 - one failed aggregate spoils one measurement
        return failed(common, describe_exception(exc), named, by_group)
    extra = {k: float(v) for k, v in estimate.extra.items()} if estimate.extra else {}
    if src.attempts is not None and "se_cluster" not in extra:
        extra.update(_question_se(common["aggregation"], scores, value, src.harness))
    extra.update(_receipt(pm, scores, estimate, ctx.seed))
    if by_group:
        assert subset.groups is not None
        extra.update(_macro(pm, src, scores, subset.groups, by_group, ctx.confidence))
    return made(common, estimate, value, extra, by_group, named, ctx.group)


def _tallied_all(
    pm: PlannedMetric,
    src: _Source,
    sources: _Sources,
    base: MetricContext,
    wanted: Sequence[tuple[str | None, bool]],
) -> dict[tuple[str | None, bool], Measurement]:
    """The measurements of a plain ratio or mean source made from its label's tally.

    Each (model, whole) of ``wanted`` (``whole``: every model pooled, or the run's one model).
    Empty when the source needs its values themselves: a metric with its own aggregate, a
    corpus metric, clusters, attempts, or values that are not finite or lie outside the bounds
    (whose error message names the value and its position).
    """
    kind = src.kind or aggregation_of(pm)
    if (
        not src.plain
        or src.error is not None
        or pm.is_corpus
        or kind not in ("ratio", "mean")
        or sources.table.has("cluster")
    ):
        return {}
    tally = sources.label_tally(src.label)
    bounds = src.bounds if src.kind is not None else pm.metric.value_bounds
    if not tally.finite or (kind == "mean" and bounds is not None and tally.outside(bounds)):
        return {}
    found = TallySource(src.key, kind, bounds, src.reducer)
    return measure_tallied(pm, tally, found, base, wanted)


def _question_se(
    kind: str, scores: ScoreColumn, value: float | None, harness: bool = False
) -> dict[str, float]:
    """The standard error over questions (``se``) and the questions' standard deviation (``sd``).

    Only a ratio or a mean of question-level scores has one: a ratio's binomial
    ``sqrt(p (1 - p) / n)``, a mean's ``sd / sqrt(n)`` (inspect's ``stderr``), ``sd`` the sample
    standard deviation (``ddof=1``) of the question values (1 and 0 for a ratio). Attempts a
    harness rule decided (``harness``) get the harness's ``sd / sqrt(n)`` for a ratio too:
    inspect's ``stderr`` divides by ``n - 1`` whatever the reducer. Readers of the measurement
    (the Every Eval Ever report) take it from there: the item scores are attempts.
    """
    if kind == "ratio":
        counts = scores.counts()
        n = counts[Status.OK] + counts[Status.FAIL]
        if n < 2:
            return {}
        p = counts[Status.OK] / n if value is None else value
        sd = math.sqrt(p * (1 - p) * n / (n - 1))
        return {"se": sd / math.sqrt(n) if harness else math.sqrt(p * (1 - p) / n), "sd": sd}
    if kind != "mean":
        return {}
    values = np.asarray(scores.scored_values(), dtype=np.float64)
    if values.size < 2:
        return {}
    sd = float(np.std(values, ddof=1))
    return {"se": sd / math.sqrt(values.size), "sd": sd}


def _receipt(
    pm: PlannedMetric, scores: ScoreColumn, estimate: Estimate, seed: int
) -> dict[str, float]:
    """The coverage receipt of the estimate's interval (``extra["coverage"]`` and its kin).

    A custom aggregate gets one only when its interval is :func:`~itemscore.aggregate.ratio`'s
    for its value and n (the receipt checks that itself).
    """
    from .. import aggregate

    kind = aggregation_of(pm)
    if kind in ("ratio", "custom"):
        return aggregate.coverage_receipt(estimate, kind="ratio")
    return aggregate.coverage_receipt(
        estimate, kind=kind, values=scores.scored_values(), bounds=pm.metric.value_bounds,
        seed=seed,
    )  # fmt: skip


def _macro(
    pm: PlannedMetric,
    src: _Source,
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

    from .. import aggregate

    kind = src.kind or aggregation_of(pm)
    if kind in ("ratio", "mean"):
        values: Sequence[float] | np.ndarray[Any, np.dtype[np.float64]]
        if kind == "ratio":
            values, scored_groups = scores.scored_outcomes(groups)
            bounds: tuple[float, float] | None = (0.0, 1.0)
        else:
            values, scored_groups = scores.scored_values(), scores.scored_clusters(groups)
            bounds = src.bounds if src.kind is not None else pm.metric.value_bounds
        estimate = aggregate.macro_mean(values, scored_groups, confidence=confidence, bounds=bounds)
        return macro_extra(estimate)
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
        low, high = out["macro"] - z * se, out["macro"] + z * se
        bounds = pm.metric.value_bounds
        if bounds is not None:  # F1 of every group near 1 never reaches past 1
            low, high = max(low, bounds[0]), min(high, bounds[1])
        out["macro_low"], out["macro_high"] = low, high
        out["macro_ci_method[macro-from-group-intervals]"] = 1.0
    return out
