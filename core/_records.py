"""The records itemscore passes around: items, per-item scores, estimates and measurements.

Every record is a frozen, slotted attrs class. Cross-field rules are checked when a record is
built, so an invalid record cannot exist: a scored status (ok, fail) carries a finite value,
skip and error carry none.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

import attrs

from ._status import CODE, STATE_NAMES, STATES, Status
from .stats._estimate import EMPTY, Estimate, _freeze_mapping

__all__ = [
    "CODE",
    "EMPTY",
    "STATES",
    "STATE_NAMES",
    "Estimate",
    "ItemResult",
    "ItemScore",
    "Measurement",
    "MetricResult",
    "Status",
]


def _to_status(value: Status | str) -> Status:
    if isinstance(value, Status):
        return value
    try:
        return Status(value)
    except ValueError:
        allowed = ", ".join(repr(s.value) for s in Status)
        raise ValueError(f"`status` ({value!r}) must be one of {allowed}.") from None


def _to_optional_float(value: float | None) -> float | None:
    if value is None or type(value) is float:
        return value
    try:  # numpy scalars are numbers.Real but not int/float subclasses in every version
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(
            f"`value` ({value!r}) must be a number or None, not {type(value).__name__}."
        ) from None


_FROZEN_SCALARS = (str, int, float, bool, type(None), bytes)


def _frozen(value: Any) -> Any:
    """``value`` with every dict, list and set inside turned into a read-only form."""
    if isinstance(value, _FROZEN_SCALARS):
        return value
    if isinstance(value, Mapping):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(value)
    return value


def _freeze_metadata(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """A read-only copy of ``value``.

    No metric can change what later metrics, the reports or the caller see:
    ``item.metadata.pop(...)`` raises, and so becomes that item's error score.
    """
    if not value:
        return EMPTY
    return MappingProxyType(
        {k: v if type(v) in _FROZEN_SCALARS else _frozen(v) for k, v in value.items()}
    )


def _thawed(value: Any) -> Any:
    """A picklable copy of a frozen value (read-only mappings become dicts)."""
    if isinstance(value, Mapping):
        return {k: _thawed(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_thawed(v) for v in value)
    return value


@attrs.frozen(kw_only=True)
class ItemScore:
    """One metric's verdict on one item.

    Build one with the named constructors (:meth:`ok`, :meth:`fail`, :meth:`skip`, :meth:`error`)
    or, inside a metric, with the helpers of :class:`~itemscore.Metric`, which fill in ``metric``.

    Raises:
        ValueError: a scored status without a finite value, or skip/error with a value.
    """

    #: The metric's label in the run (the runner sets it, whatever the metric put there).
    metric: str
    #: The score; ``None`` for skip and error.
    value: float | None = attrs.field(default=None, converter=_to_optional_float)
    #: One of the four states; plain strings are accepted.
    status: Status = attrs.field(converter=_to_status)
    #: Why the item was skipped, or the exception type and message for error.
    reason: str | None = None
    #: Secondary per-item values for auditing (the normalised answer, the extracted label...).
    extra: Mapping[str, Any] = attrs.field(default=EMPTY, converter=_freeze_mapping)

    def __attrs_post_init__(self) -> None:
        value = self.value
        if self.status is Status.OK or self.status is Status.FAIL:
            if value is None or not math.isfinite(value):
                raise ValueError(
                    f"A {self.status.value!r} score needs a finite value, got {value!r} "
                    f"(metric {self.metric!r})."
                )
        elif value is not None:
            raise ValueError(
                f"A {self.status.value!r} score carries no value, got {value!r} "
                f"(metric {self.metric!r}); put secondary numbers in `extra`."
            )

    @property
    def scored(self) -> bool:
        """Whether this score counts in aggregates (status ok or fail)."""
        return self.status.scored

    def __reduce__(self) -> tuple[Any, ...]:
        # Read-only mappings do not pickle: ship plain dicts (workers send scores back).
        extra = _thawed(self.extra) if self.extra else None
        return (_score_from_state, (self.metric, self.value, self.status.value, self.reason, extra))

    @classmethod
    def ok(
        cls, metric: str, value: float = 1.0, *, extra: Mapping[str, Any] | None = None
    ) -> ItemScore:
        """A scored, successful verdict (value 1.0 unless given)."""
        return cls(metric=metric, value=value, status=Status.OK, extra=extra or EMPTY)

    @classmethod
    def fail(
        cls, metric: str, value: float = 0.0, *, extra: Mapping[str, Any] | None = None
    ) -> ItemScore:
        """A scored, unsuccessful verdict (value 0.0 unless given)."""
        return cls(metric=metric, value=value, status=Status.FAIL, extra=extra or EMPTY)

    @classmethod
    def skip(
        cls, metric: str, reason: str | None = None, *, extra: Mapping[str, Any] | None = None
    ) -> ItemScore:
        """The metric does not apply to this item; excluded from every denominator."""
        return cls(metric=metric, status=Status.SKIP, reason=reason, extra=extra or EMPTY)

    @classmethod
    def error(
        cls, metric: str, reason: str, *, extra: Mapping[str, Any] | None = None
    ) -> ItemScore:
        """The metric failed on this item; excluded from every denominator."""
        return cls(metric=metric, status=Status.ERROR, reason=reason, extra=extra or EMPTY)


def _to_expected(value: str | Iterable[str] | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return (value,) if value else None
    if isinstance(value, Mapping):
        raise TypeError(
            "`expected` must be a string, a sequence of strings or None, not a mapping."
        )
    answers = tuple(value)
    for answer in answers:
        if not isinstance(answer, str):
            raise TypeError(
                f"`expected` must hold strings; got {answer!r} ({type(answer).__name__})."
            )
    return answers or None


def _check_optional_str(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise TypeError(
            f"`{attribute.name}` ({value!r}) must be a string or None, not {type(value).__name__}."
        )


def _check_attempt(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and (type(value) is not int or value < 0):
        raise TypeError(f"`attempt` ({value!r}) must be a whole number of at least 0, or None.")


def _check_id(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, str) or not value:
        raise TypeError(f"`id` ({value!r}) must be a non-empty string.")


@attrs.frozen(kw_only=True)
class ItemResult:
    """One model output to score, with its valid answers.

    Raises:
        TypeError: a field of the wrong type.
    """

    #: Unique within a run.
    id: str = attrs.field(validator=_check_id)
    #: The model's answer; ``None`` when the request failed and nothing was answered.
    output: str | None = attrs.field(validator=_check_optional_str)
    #: The valid answers; ``None`` when the row has no answer key (empty becomes ``None``).
    expected: tuple[str, ...] | None = attrs.field(default=None, converter=_to_expected)
    #: The prompt or question, when the metric needs it.
    input: str | None = attrs.field(default=None, validator=_check_optional_str)
    #: Breakdown key, e.g. an MMLU subject.
    group: str | None = attrs.field(default=None, validator=_check_optional_str)
    #: The model that produced the output.
    model: str | None = attrs.field(default=None, validator=_check_optional_str)
    #: Items that are not independent share a cluster (passage, template, conversation):
    #: intervals then use cluster-robust standard errors.
    cluster: str | None = attrs.field(default=None, validator=_check_optional_str)
    #: Which answer to the question this is, when a model answered it several times (epochs,
    #: repeats, samples for pass@k); ``(model, id, attempt)`` is unique in a run.
    attempt: int | None = attrs.field(default=None, validator=_check_attempt)
    #: Any other column: latency, cost, tokens... (a read-only copy of what was given).
    metadata: Mapping[str, Any] = attrs.field(default=EMPTY, converter=_freeze_metadata)
    #: One score per metric label; empty until a run fills it.
    scores: Mapping[str, ItemScore] = attrs.field(default=EMPTY, converter=_freeze_mapping)

    @property
    def has_answer_key(self) -> bool:
        """Whether the item has at least one valid answer."""
        return self.expected is not None

    def with_scores(self, scores: Mapping[str, ItemScore]) -> ItemResult:
        """A copy of this item whose ``scores`` are ``scores``.

        The copy skips re-validation: every other field is taken from an already valid item.
        """
        # Unrolled: this runs once per item per run, and a loop over the fields costs 40% more.
        new = _new(ItemResult)
        _set(new, "id", self.id)
        _set(new, "output", self.output)
        _set(new, "expected", self.expected)
        _set(new, "input", self.input)
        _set(new, "group", self.group)
        _set(new, "model", self.model)
        _set(new, "cluster", self.cluster)
        _set(new, "attempt", self.attempt)
        _set(new, "metadata", self.metadata)
        _set(new, "scores", scores or EMPTY)
        return new

    def __reduce__(self) -> tuple[Any, ...]:
        # Read-only mappings do not pickle: ship plain values, rebuilt without re-validation.
        return (
            _item_from_state,
            (
                self.id,
                self.output,
                self.expected,
                self.input,
                self.group,
                self.model,
                self.cluster,
                self.attempt,
                _thawed(self.metadata) if self.metadata else None,
                dict(self.scores) if self.scores else None,
            ),
        )


def _item_from_state(
    id: str,
    output: str | None,
    expected: tuple[str, ...] | None,
    input: str | None,
    group: str | None,
    model: str | None,
    cluster: str | None,
    attempt: int | None,
    metadata: Mapping[str, Any] | None,
    scores: Mapping[str, ItemScore] | None,
) -> ItemResult:
    """An item from its pickled state (every field was valid when it was pickled)."""
    new = _new(ItemResult)
    _set(new, "id", id)
    _set(new, "output", output)
    _set(new, "expected", expected)
    _set(new, "input", input)
    _set(new, "group", group)
    _set(new, "model", model)
    _set(new, "cluster", cluster)
    _set(new, "attempt", attempt)
    _set(new, "metadata", _freeze_metadata(metadata))
    _set(new, "scores", scores or EMPTY)
    return new


def _score_from_state(
    metric: str,
    value: float | None,
    status: str,
    reason: str | None,
    extra: Mapping[str, Any] | None,
) -> ItemScore:
    """A score from its pickled state (it was valid when it was pickled)."""
    new = _new(ItemScore)
    _set(new, "metric", metric)
    _set(new, "value", value)
    _set(new, "status", Status(status))
    _set(new, "reason", reason)
    _set(new, "extra", extra or EMPTY)
    return new


_new = object.__new__
_set = object.__setattr__


@attrs.frozen(kw_only=True)
class MetricResult:
    """What a corpus metric's ``compute`` returns; build it with ``Metric.result(...)``."""

    #: The headline number, or ``None`` when no row could be scored.
    value: float | None
    #: Row-level scores aligned with the rows (``None``: the row was not scored, i.e. skip).
    per_row: tuple[float | None, ...] | None = None
    #: How many rows counted (default: the rows with a score in ``per_row``).
    n_scored: int | None = None
    #: Secondary numbers by name (precision next to F1...).
    extra: Mapping[str, float] = attrs.field(default=EMPTY, converter=_freeze_mapping)


def _to_counts(value: Mapping[Status | str, int]) -> Mapping[Status, int]:
    counts = dict.fromkeys(Status, 0)
    for status, count in value.items():
        counts[_to_status(status)] = int(count)
    return MappingProxyType(counts)


@attrs.frozen(kw_only=True)
class Measurement:
    """One aggregated number: one metric, one model, with per-group breakdowns."""

    #: ``"<suite_id>.<label>"``.
    key: str
    #: The suite id.
    suite: str
    #: The metric's label in the run.
    metric: str
    #: The model, or ``None`` for items without one (or pooled over models).
    model: str | None = None
    #: The headline number; ``None`` when nothing was scored or the aggregate failed.
    value: float | None = None
    #: Lower end of the interval.
    ci_low: float | None = None
    #: Upper end of the interval.
    ci_high: float | None = None
    #: How the interval was computed.
    ci_method: str = "none"
    #: Confidence level of the interval.
    confidence: float = 0.95
    #: Scored items (ok + fail).
    n: int = 0
    #: Items in each of the four states.
    counts: Mapping[Status, int] = attrs.field(factory=dict, converter=_to_counts)
    #: Whether a larger value is better.
    higher_is_better: bool = True
    #: "deterministic" or "judge-based".
    reproducibility_class: str = "deterministic"
    #: How the value was made: ``"ratio"`` (share of ok among scored items), ``"mean"`` or
    #: ``"geomean"`` (of the scored values: the default aggregates), or ``"custom"`` (the
    #: metric's own aggregate or a corpus metric's ``compute``). Comparisons choose their
    #: test from it.
    aggregation: str = attrs.field(
        default="custom", validator=attrs.validators.in_(("ratio", "mean", "geomean", "custom"))
    )
    #: Secondary numbers (precision next to F1, ``f1[positive]``...). The runner adds: on a
    #: measurement with groups, ``macro`` (unweighted mean over the groups), ``macro_low``,
    #: ``macro_high`` (its interval) and ``macro_groups``; on a group measurement with fewer
    #: than 30 scored items, ``small_group = 1.0`` (tables may flag it); with clusters,
    #: ``n_clusters``, ``se_cluster`` and ``design_effect``.
    extra: Mapping[str, float] = attrs.field(default=EMPTY, converter=_freeze_mapping)
    #: One measurement per distinct item group, same shape.
    groups: Mapping[str, Measurement] = attrs.field(default=EMPTY, converter=_freeze_mapping)
    #: Set when the metric's aggregate raised: the exception type and message.
    error: str | None = None
    #: How tables name the measurement: the metric's ``display_name`` when its label is its
    #: id, the label as written otherwise (``None``: the label).
    display_name: str | None = None
    #: The unit of the value (``"USD"`` for a cost in dollars), ``None`` for a pure number.
    unit: str | None = None
    #: Numbers the metric derives from this measurement and the run's others, as
    #: measurements of their own (the cost of one success, by ``cost``), by label; see
    #: :meth:`itemscore.Metric.derived_measurements`.
    derived: Mapping[str, Measurement] = attrs.field(default=EMPTY, converter=_freeze_mapping)

    @property
    def name(self) -> str:
        """The name tables show: :attr:`display_name`, else the label."""
        return self.display_name or self.metric

    def __repr__(self) -> str:
        """One line: key, model, value and interval, n (the fields: ``attrs.asdict``)."""
        from .display._notebook import measurement_repr

        return measurement_repr(self)

    def _repr_html_(self) -> str:
        """The measurement as an HTML table, for notebooks."""
        from .display._notebook import measurement_html

        text: str = measurement_html(self)
        return text
