"""The ``Metric`` base class that built-in and third-party metrics subclass."""

from __future__ import annotations

import functools
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast

import attrs

from ._defaults import DEFAULT_CONCURRENCY, DEFAULT_CONFIDENCE, DEFAULT_SEED, DEFAULT_SUITE_ID
from ._exceptions import ConfigError, one_of
from ._options import OptionInfo, check_options, option_infos
from ._records import EMPTY, Estimate, ItemResult, ItemScore, Measurement, MetricResult, Status

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["Metric", "MetricContext", "default_aggregate"]

Aggregation = Literal["ratio", "mean", "geomean"]
_AGGREGATIONS = ("ratio", "mean", "geomean")
_REPRODUCIBILITY = ("deterministic", "judge-based")
_METRIC_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")


@attrs.frozen(kw_only=True)
class MetricContext:
    """What a metric knows about the run while it scores or aggregates."""

    #: The suite id; measurement keys are ``"<suite_id>.<label>"``.
    suite_id: str = DEFAULT_SUITE_ID
    #: The metric's label in this run.
    label: str = ""
    #: The model being aggregated (``None`` while scoring or when items carry none).
    model: str | None = None
    #: The group being aggregated (``None`` for the headline number).
    group: str | None = None
    #: Confidence level for intervals.
    confidence: float = DEFAULT_CONFIDENCE
    #: Interval method asked for by the run (``None``: the metric's default).
    ci_method: str | None = None
    #: Seed for anything random (bootstrap intervals).
    seed: int = DEFAULT_SEED
    #: Concurrency limit for ``async def score_item``.
    concurrency: int = DEFAULT_CONCURRENCY
    #: While aggregating: each score's ``ItemResult.cluster``, aligned with the scores given to
    #: ``aggregate`` (``None`` while scoring, or when no item carries a cluster).
    clusters: Sequence[str | None] | None = attrs.field(default=None, eq=False)
    #: While scoring: memoised normalisers shared by the metrics of one shard whose
    #: normalisers are equal (see :meth:`normalizer`); ``None`` when no two metrics share one.
    shared_normalizers: Mapping[Any, Callable[[str], str]] | None = attrs.field(
        default=None, eq=False, repr=False
    )
    #: While scoring: a scratch dict that lives as long as the run in this process, across its
    #: shards and chunks (``None``: none is kept). A metric may keep a bounded cache there,
    #: under its :attr:`label`; a large file comes in chunks, and a cache made per call would
    #: start empty for each.
    memo: dict[str, Any] | None = attrs.field(default=None, eq=False, repr=False)

    def normalizer(self, normalizer: Callable[[str], str]) -> Callable[[str], str]:
        """The run's shared version of ``normalizer``, or ``normalizer`` itself.

        Metrics of one run whose normalisers are equal (e.g. ``exact_match`` and ``f1`` with
        their defaults) get one memoised callable per shard, so each output is normalised once
        for all of them. Call it once per batch in ``score_items``.
        """
        shared = self.shared_normalizers
        if not shared:
            return normalizer
        try:
            return shared.get(normalizer, normalizer)
        except TypeError:  # an unhashable callable is nobody's shared normaliser
            return normalizer


class Metric:
    """Base class of every metric: subclass it, set the class attributes, write ``score_item``.

    Options are the keyword arguments of ``__init__`` that have a default and a type hint;
    document them in an ``Args:`` section of the class docstring. They are checked when the
    run is configured, before any item is scored.
    """

    #: Unique id, used in configs and measurement keys.
    metric_id: ClassVar[str]
    #: One sentence, shown by ``itemscore metrics``.
    description: ClassVar[str] = ""
    #: "deterministic" or "judge-based".
    reproducibility_class: ClassVar[str] = "deterministic"
    #: Item fields that must be present (not None, not empty); an item missing one is skipped.
    required_inputs: ClassVar[tuple[str, ...]] = ("output",)
    #: Whether a larger value is better.
    higher_is_better: ClassVar[bool] = True
    #: The default aggregate: "ratio" of ok among ok + fail, "mean" or "geomean" of values.
    aggregation: ClassVar[Aggregation] = "ratio"
    #: The range every value lies in, e.g. ``(0.0, 1.0)``: the default mean's interval is
    #: clipped to it, so a normal interval near 1 never reaches past 1. ``None``: unbounded.
    value_bounds: ClassVar[tuple[float, float] | None] = None
    #: How tables name the metric (``"Exact match"``); defaults to :attr:`metric_id`. A label
    #: the user chose is shown as chosen.
    display_name: ClassVar[str]
    #: The unit of the values (``"USD"``, ``"tokens"``, ``"s"``), shown next to the numbers;
    #: ``None`` for a pure number. An instance may set it from its options.
    unit: str | None = None
    #: For ``async def score_item``: how many items this metric scores at once (a metric
    #: calling a rate-limited service sets it from its options). ``None``: the run's
    #: ``concurrency``.
    max_concurrency: int | None = None
    #: Seconds one item may take by this metric's own limits (a judge: its timeout times its
    #: attempts, and the waits between them). A run's *default* ``item_timeout`` is raised to
    #: it, so the default never cuts short what the metric bounds itself; a limit the user set
    #: is kept. ``None``: the metric sets no bound of its own.
    item_time_bound: float | None = None

    # Set by ``bind`` (notebooks and tests); a run never binds: the label comes from the
    # context, and the runner labels every score it records.
    _label: str | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        metric_id = cls.__dict__.get("metric_id")
        if metric_id is not None and (
            not isinstance(metric_id, str) or not _METRIC_ID.match(metric_id)
        ):
            raise ConfigError(
                f"{cls.__qualname__}.metric_id ({metric_id!r}) must be a non-empty name of "
                "letters, digits, '_', '-' or '.'."
            )
        if metric_id is not None and not cls.__dict__.get("display_name"):
            cls.display_name = metric_id
        elif not isinstance(getattr(cls, "display_name", ""), str):
            raise ConfigError(
                f"{cls.__qualname__}.display_name ({cls.display_name!r}) must be a string."
            )
        if cls.aggregation not in _AGGREGATIONS:
            raise ConfigError(
                f"{cls.__qualname__}.aggregation ({cls.aggregation!r}) must be one of "
                f"{one_of(_AGGREGATIONS)}."
            )
        if cls.reproducibility_class not in _REPRODUCIBILITY:
            raise ConfigError(
                f"{cls.__qualname__}.reproducibility_class ({cls.reproducibility_class!r}) "
                "must be one of 'deterministic', 'judge-based'."
            )
        if isinstance(cls.required_inputs, str):  # type: ignore[unreachable]
            raise ConfigError(
                f"{cls.__qualname__}.required_inputs must be a tuple of field names, "
                f"e.g. ({cls.required_inputs!r},), not a string."
            )

    # -- options ---------------------------------------------------------------------------

    @classmethod
    def options(cls) -> dict[str, OptionInfo]:
        """The metric's options, by name, read from ``__init__``."""
        return option_infos(cls)

    @classmethod
    def configure(cls, options: Mapping[str, Any] | None = None) -> Self:
        """Build an instance after checking ``options`` against the ``__init__`` signature.

        Raises:
            OptionError: an unknown option or a value of the wrong type.
        """
        metric_id = getattr(cls, "metric_id", cls.__qualname__)
        values = check_options(metric_id, cls.options(), options or {})
        return cls(**values)

    @property
    def needs_answer_key(self) -> bool:
        """Whether the metric needs ``expected`` (it is among ``required_inputs``)."""
        return "expected" in self.required_inputs

    # -- the label and the score helpers ---------------------------------------------------

    @property
    def label(self) -> str:
        """The metric's label in the current run (its id until a run binds it)."""
        return self._label if self._label is not None else self.metric_id

    def bind(self, label: str) -> None:
        """Give the metric a label outside a run (runs label scores themselves)."""
        self._label = label

    def ok(self, value: float = 1.0, *, extra: Mapping[str, Any] | None = None) -> ItemScore:
        """A scored, successful verdict for this metric."""
        if value == 1.0 and not extra:
            return _shared(self.label, Status.OK)  # the common case: one frozen record
        return ItemScore(metric=self.label, value=value, status=Status.OK, extra=extra or EMPTY)

    def fail(self, value: float = 0.0, *, extra: Mapping[str, Any] | None = None) -> ItemScore:
        """A scored, unsuccessful verdict for this metric."""
        if value == 0.0 and not extra:
            return _shared(self.label, Status.FAIL)
        return ItemScore(metric=self.label, value=value, status=Status.FAIL, extra=extra or EMPTY)

    def skip(
        self, reason: str | None = None, *, extra: Mapping[str, Any] | None = None
    ) -> ItemScore:
        """The metric does not apply to this item."""
        return ItemScore(metric=self.label, status=Status.SKIP, reason=reason, extra=extra or EMPTY)

    def error(self, reason: str, *, extra: Mapping[str, Any] | None = None) -> ItemScore:
        """The metric could not score this item."""
        return ItemScore(
            metric=self.label, status=Status.ERROR, reason=reason, extra=extra or EMPTY
        )

    # -- scoring ---------------------------------------------------------------------------

    def score_item(
        self, item: ItemResult, ctx: MetricContext
    ) -> ItemScore | Awaitable[ItemScore | None] | None:
        """Score one item; return ``None`` to leave it unscored (recorded as skip).

        May be ``async def`` (the return type admits both). Anything it raises becomes this
        item's ``error`` score.
        """
        raise NotImplementedError(f"{type(self).__qualname__} must implement score_item().")

    def score_items(
        self, items: Sequence[ItemResult], ctx: MetricContext
    ) -> Sequence[ItemScore | None]:
        """Score many items at once; override for speed.

        Must return one result per item, in order. When it raises (or returns the wrong
        number of results), the runner scores those items one by one with ``score_item``.
        """
        return [cast("ItemScore | None", self.score_item(item, ctx)) for item in items]

    # -- corpus metrics --------------------------------------------------------------------

    #: Set ``compute`` instead of ``score_item`` for a metric that needs every row at once.
    compute: Any = None

    @property
    def is_corpus(self) -> bool:
        """Whether the metric defines ``compute(predictions, references)`` (a corpus metric).

        A corpus metric gets every row of one model at once: ``predictions`` (one output per
        row, ``None`` where the request failed) and ``references`` (the valid answers per row,
        ``None`` where the row has no answer key). It returns :meth:`result`; ``per_row``
        becomes the item scores (``None``: skip), ``value`` and ``extra`` the measurement.
        Under a parallel executor it runs once on the driver over all rows.
        """
        return callable(self.compute)

    def result(
        self,
        value: float | None,
        *,
        per_row: Sequence[float | None] | None = None,
        n_scored: int | None = None,
        extra: Mapping[str, float] | None = None,
    ) -> MetricResult:
        """What ``compute`` returns: the headline value, row-level scores and extras."""
        return MetricResult(
            value=value,
            per_row=tuple(per_row) if per_row is not None else None,
            n_scored=n_scored,
            extra=extra or EMPTY,
        )

    # -- aggregation -----------------------------------------------------------------------

    def aggregate(self, scores: Sequence[ItemScore], ctx: MetricContext) -> Estimate:
        """Turn this metric's per-item scores (all four states) into one estimate.

        The default follows ``aggregation``: the ratio of ok among ok + fail with a Wilson
        interval, or the mean (normal interval) or geometric mean of the scored values. Skip
        and error are excluded from every denominator.
        """
        return default_aggregate(scores, ctx, self.aggregation, self.value_bounds)

    def derived_measurements(
        self, own: Measurement, others: Mapping[str, Measurement]
    ) -> Mapping[str, Measurement]:
        """Numbers derived from this metric's measurement and the run's others; none by default.

        Called once per model after every measurement of the run is made; what it returns is
        recorded in ``own.derived`` (and so in results.json), and every report shows it as a
        row of its own, without knowing the metric. ``cost`` derives the cost of one success
        this way.

        Args:
            own: This metric's measurement (one model, with its groups).
            others: The run's other measurements of the same model, by label, in run order.

        Returns:
            Derived measurements by label (``ci_method="none"`` when they have no interval).
        """
        return {}

    def __repr__(self) -> str:
        return f"<{type(self).__qualname__} {getattr(self, 'metric_id', '?')!r}>"


def default_aggregate(
    scores: Sequence[ItemScore],
    ctx: MetricContext,
    aggregation: str,
    bounds: tuple[float, float] | None,
) -> Estimate:
    """The default aggregate of ``scores`` as ``aggregation`` says, values within ``bounds``.

    What :meth:`Metric.aggregate` does for a metric that does not override it; a run that
    reduces attempts to shares (a ratio metric's attempts averaged per question) calls it
    with ``"mean"`` and the bounds ``(0, 1)``.
    """
    from . import aggregate
    from ._columns import ScoreColumn
    from .stats._intervals import names

    column = scores if isinstance(scores, ScoreColumn) else ScoreColumn.from_scores("", scores)
    clusters = ctx.clusters
    if clusters is not None and all(c is None for c in clusters):
        clusters = None
    if aggregation == "ratio":
        method = _method_for(ctx.ci_method, names("ratio"), "wilson")
        if clusters is not None:
            successes, scored_clusters = column.scored_outcomes(clusters)
            return aggregate.cluster_ratio(
                successes, scored_clusters, method=method, confidence=ctx.confidence
            )
        counts = column.counts()
        ok, fail = counts[Status.OK], counts[Status.FAIL]
        return aggregate.ratio(ok, ok + fail, method=method, confidence=ctx.confidence)
    values = column.scored_values()
    method = _method_for(ctx.ci_method, names("mean"), "normal")
    if aggregation == "mean" and clusters is not None:
        scored_clusters = column.scored_clusters(clusters)
        return aggregate.cluster_mean(
            values, scored_clusters, confidence=ctx.confidence, bounds=bounds
        )
    if aggregation == "mean":
        estimate = aggregate.mean(
            values, method=method, confidence=ctx.confidence, seed=ctx.seed, bounds=bounds
        )
    else:
        geo_method = method if method in names("geomean") else "normal"
        estimate = aggregate.geomean(values, method=geo_method, confidence=ctx.confidence)
    return _clipped(estimate, bounds)


def _clipped(estimate: Estimate, bounds: tuple[float, float] | None) -> Estimate:
    """``estimate`` with its interval clipped to ``bounds``."""
    if bounds is None or estimate.low is None or estimate.high is None:
        return estimate
    lowest, highest = bounds
    return attrs.evolve(estimate, low=max(estimate.low, lowest), high=min(estimate.high, highest))


@functools.lru_cache(maxsize=256)
def _shared(label: str, status: Status) -> ItemScore:
    """The one ok (1.0) or fail (0.0) record of a label: frozen, so it can be shared."""
    return ItemScore(metric=label, value=1.0 if status is Status.OK else 0.0, status=status)


def _method_for(asked: str | None, supported: Sequence[str], default: str) -> str:
    """The run's interval method when this aggregation supports it, else the default."""
    return asked if asked is not None and asked in supported else default
