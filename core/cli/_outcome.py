"""What a finished run says about itself on stderr: its errors, and options that did nothing.

:func:`error_summary` reads the measurements' counts and the run table's state and reason
columns, so a run that kept no items (the command line without ``--out``) says it too. A
metric that scored no item because every item it did not skip errored makes the command exit
1 (the reports are still written); so does a measurement whose aggregate raised.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

import attrs
import numpy as np

from itemscore._records import Status
from itemscore.display._text import one_line
from itemscore.engine._questions import question_error_reasons

if TYPE_CHECKING:
    from itemscore._records import Measurement
    from itemscore._result import RunResult

__all__ = ["ErrorSummary", "MetricErrors", "error_summary", "seed_unused"]

#: How many of a metric's most frequent error reasons are shown.
SHOWN_REASONS = 3
#: Each reason is cut to this many characters (the report set's items hold it whole).
REASON_CHARS = 160


@attrs.frozen
class MetricErrors:
    """The errors of one metric (for one model)."""

    #: The metric's label.
    label: str
    #: The model, or ``None`` for items without one.
    model: str | None
    #: Items in the error state.
    errors: int
    #: Items in any state.
    items: int
    #: The most frequent reasons with their counts, most frequent first.
    reasons: tuple[tuple[str, int], ...]
    #: How many distinct reasons there are.
    distinct: int
    #: Whether nothing was scored (no ok, no fail) because of the errors.
    nothing_scored: bool
    #: What is counted: ``"item"``, or ``"question"`` in a run with attempts.
    unit: str = "item"

    def _counted(self, count: int) -> str:
        """``count`` with the unit: ``1 item``, ``5 questions``."""
        return f"{count} {self.unit}{'' if count == 1 else 's'}"

    def line(self, several_models: bool) -> str:
        """One line for stderr: ``label: 6 of 6 items error — reason (1 distinct reason)``."""
        name = f"{self.label} · {self.model}" if several_models and self.model else self.label
        several = len(self.reasons) > 1
        shown = "; ".join(
            f"{_cut(reason)}" + (f" ({self._counted(count)})" if several else "")
            for reason, count in self.reasons
        )
        plural = "" if self.distinct == 1 else "s"
        noun = self._counted(self.items).split(" ", 1)[1]
        prefix = "Error" if self.nothing_scored else "Warning"
        more = ""
        if self.distinct > len(self.reasons):
            more = "; every item's reason is in the report set's items.parquet"
        return one_line(
            f"{prefix}: {name}: {self.errors} of {self.items} {noun} error — {shown or '?'} "
            f"({self.distinct} distinct reason{plural}{more})."
        )


@attrs.frozen
class ErrorSummary:
    """Every metric with errors, and the measurements whose aggregate raised."""

    #: One entry per metric (and model) with at least one item in error.
    metrics: tuple[MetricErrors, ...] = ()
    #: ``(label, model, error)`` of each measurement whose aggregate raised.
    aggregates: tuple[tuple[str, str | None, str], ...] = ()
    #: Whether the run has several models (lines then name the model).
    several_models: bool = False

    @property
    def failed(self) -> bool:
        """Whether the command should exit 1: a metric scored nothing, or an aggregate raised."""
        return bool(self.aggregates) or any(m.nothing_scored for m in self.metrics)

    def lines(self) -> list[str]:
        """The lines to print on stderr (none for a run without errors)."""
        out = [m.line(self.several_models) for m in self.metrics]
        for label, model, error in self.aggregates:
            name = f"{label} · {model}" if self.several_models and model else label
            out.append(one_line(f"Error: {name}: its aggregate failed: {error}"))
        failed = sorted({m.label for m in self.metrics if m.nothing_scored})
        if failed:
            names = ", ".join(failed)
            out.append(
                one_line(
                    f"Error: {names} scored no item: every item not skipped errored. The "
                    "reports were written; the exit code is 1."
                )
            )
        elif self.aggregates:
            out.append("Error: the reports were written; the exit code is 1.")
        return out


def _cut(reason: str) -> str:
    reason = " ".join(reason.split())
    return reason if len(reason) <= REASON_CHARS else reason[: REASON_CHARS - 1] + "…"


def _measurements(result: RunResult) -> Iterable[tuple[str | None, Measurement]]:
    for model, measurements in result.by_model.items():
        for measurement in measurements.values():
            yield model, measurement


def error_summary(result: RunResult) -> ErrorSummary:
    """The errors of ``result``, per metric and model, with their most frequent reasons."""
    seen: dict[tuple[str | None, str], Measurement] = {}
    aggregates: list[tuple[str, str | None, str]] = []
    for model, measurement in _measurements(result):
        key = (model, measurement.metric)
        if key in seen:
            continue  # a further reducer's measurement of the same label: counted once
        seen[key] = measurement
        if measurement.error:
            aggregates.append((measurement.metric, model, measurement.error))
    erring = {key: m for key, m in seen.items() if m.counts.get(Status.ERROR, 0) > 0}
    several = len(result.by_model) > 1
    if not erring:
        return ErrorSummary((), tuple(aggregates), several)
    reasons: dict[tuple[str | None, str], Counter[str]] = {key: Counter() for key in erring}
    table = result.table  # its columns: no item is built to count reasons
    models = table.key("model") if several else None
    only_model = next(iter(result.by_model))
    questions = False
    for label in {label for _, label in erring}:
        # With attempts the counts are of questions, whose reasons the reduced scores hold.
        found = question_error_reasons(result, label)
        if found is not None:
            questions = True
        else:
            label_reasons = table.reasons(label)
            found = [
                (models[i] if models is not None else None, label_reasons[i] or "no reason given")
                for i in np.flatnonzero(table.codes(label) == 3).tolist()
            ]
        for model, reason in found:
            counter = reasons.get((model if several else only_model, label))
            if counter is not None:
                counter[reason] += 1
    metrics = []
    for (model, label), measurement in erring.items():
        counts = measurement.counts
        scored = counts.get(Status.OK, 0) + counts.get(Status.FAIL, 0)
        counter = reasons[(model, label)]
        metrics.append(
            MetricErrors(
                label=label,
                model=model,
                errors=counts.get(Status.ERROR, 0),
                items=sum(counts.values()),
                reasons=tuple(counter.most_common(SHOWN_REASONS)),
                distinct=len(counter),
                nothing_scored=scored == 0,
                unit="question" if questions else "item",
            )
        )
    return ErrorSummary(tuple(metrics), tuple(aggregates), several)


def _uses_bootstrap(measurement: Measurement) -> bool:
    if "bootstrap" in measurement.ci_method:
        return True
    if any("bootstrap" in key for key in measurement.extra):
        return True
    return any(_uses_bootstrap(group) for group in measurement.groups.values())


def seed_unused(result: RunResult) -> bool:
    """Whether no number of ``result`` depends on its seed.

    itemscore draws random numbers only for bootstrap intervals and for the paired bootstrap
    of metrics with their own aggregate (the significance marks of table.tex and
    report.html); a run with neither gives the same numbers whatever the seed.
    """
    from itemscore._metric import Metric
    from itemscore._plan import plan
    from itemscore._spec import MetricSpec

    if any(_uses_bootstrap(m) for _, m in _measurements(result)):
        return False
    try:
        specs = [
            MetricSpec(entry["name"], entry.get("label"), entry.get("options", {}))
            for entry in result.config.get("metrics", [])
        ]
        planned = plan(specs)
    except Exception:  # noqa: BLE001 - cannot tell: say nothing rather than something wrong
        return False
    return all(type(pm.metric).aggregate is Metric.aggregate for pm in planned.metrics)
