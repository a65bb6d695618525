"""What several reports share: the summary rows, the metric display names, which cells are bold."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._records import STATE_NAMES, STATES, Measurement
from ..display._format import method_name

if TYPE_CHECKING:  # annotations only: a run's notebook table reads this module
    from .._result import RunResult

__all__ = [
    "BOLD_NOTE",
    "COVERAGE_MARK",
    "MACRO_NAME",
    "POOLED_NAME",
    "SMALL_GROUP_MARK",
    "SUMMARY_COLUMNS",
    "bold_cells",
    "confidence_of",
    "coverage_advice",
    "coverage_note",
    "coverage_notes",
    "derived_of",
    "display_name",
    "find",
    "is_small_group",
    "labels_of",
    "macro_of",
    "method_name",
    "n_text",
    "reducer_name",
    "small_group_note",
    "summary_columns",
    "summary_rows",
]

#: The columns of ``summary.csv`` and of the Summary sheet, in order.
SUMMARY_COLUMNS: tuple[str, ...] = (
    "suite",
    "metric",
    "model",
    "group",
    "value",
    "ci_low",
    "ci_high",
    "ci_method",
    "confidence",
    "n",
    *STATE_NAMES,
    "error_message",
    "aggregation",
    "small_group",
)

#: How tables label the value over all items of a grouped measurement. Not "micro": that
#: word is F1's, whose value over all items is a macro average over labels.
POOLED_NAME = "all items"
#: How tables label the unweighted mean over a measurement's groups.
MACRO_NAME = "mean of groups"
#: The mark tables put after the name of a group with few scored items.
SMALL_GROUP_MARK = "†"


#: The mark tables put before an interval whose coverage receipt is below the floor.
COVERAGE_MARK = "\u2021"
#: Where the docs explain the receipt a flagged interval failed.
COVERAGE_DOCS = "docs/aggregation.md#the-receipt-in-extra"


def coverage_note(m: Measurement, where: str) -> str | None:
    """The note under a table for a row whose interval covers less than it says, or ``None``.

    :func:`itemscore.aggregate.coverage_flag` decides (exact receipts when the worst coverage
    for a truth inside the interval is more than a point below the nominal level, simulated
    ones only when their Monte Carlo upper end is); ``where`` names the row (and model).
    """
    from ..aggregate import coverage_flag

    flag = coverage_flag(m)
    if flag is None:
        return None
    return (
        f"{COVERAGE_MARK} {where}: {flag} at its n, for a nominal "
        f"{m.confidence * 100:g}%: see {COVERAGE_DOCS}."
    )


def coverage_notes(entries: Sequence[tuple[str, Measurement]]) -> list[str]:
    """The notes for the rows ``(where, measurement)`` of one table: one line for them all.

    One flagged row gets :func:`coverage_note`; several share a line that says once what
    the mark means and then lists each row with its coverage. Either is followed by one
    line of :func:`coverage_advice`.
    """
    from ..aggregate import coverage_floor, coverage_shortfall

    flagged = [(where, m) for where, m in entries if coverage_shortfall(m) is not None]
    advice = coverage_advice([m for _, m in flagged])
    if len(flagged) < 2:
        notes = [note for where, m in flagged if (note := coverage_note(m, where))]
        return notes + ([advice] if notes and advice else [])
    levels = sorted({m.confidence for _, m in flagged}, reverse=True)
    floors = " or ".join(f"{100 * coverage_floor(level):g}%" for level in levels)
    nominal = " or ".join(f"{100 * level:g}%" for level in levels)
    rows = "; ".join(f"{where} {coverage_shortfall(m)}" for where, m in flagged)
    return [
        f"{COVERAGE_MARK} The interval covers less than {floors} at its n, for a nominal {nominal} "
        f"(see {COVERAGE_DOCS}): {rows}.",
        *([advice] if advice else []),
    ]


def coverage_advice(flagged: Sequence[Measurement]) -> str | None:
    """One line of what to do about the flagged intervals ``flagged`` (``None``: none).

    More items help every kind. A proportion's exact receipt is cleared by Clopper-Pearson,
    which never covers less than its level; a simulated one (a mean) by ``auto`` where it
    was not the method yet (Student t below 30 values, BCa near a bound), else by nothing
    but more items.
    """
    if not flagged:
        return None
    ways = ["more items"]
    if any("coverage_min" in m.extra for m in flagged):
        ways.append("for ratios --ci clopper-pearson, which never covers less than its level")
    means = [m for m in flagged if "coverage_min" not in m.extra]
    if any("auto" not in m.ci_method for m in means):
        ways.append("for means --ci auto (t below 30 values, BCa near a bound)")
    return f"What helps: {'; '.join(ways)}."


#: The columns ``summary.csv`` and the Summary sheet add for a run with attempts.
ATTEMPT_COLUMNS: tuple[str, ...] = ("reducer", "attempts", "n_attempts")


def reducer_name(m: Measurement) -> str | None:
    """The reducer of a measurement of a run with attempts (or of a further reducer)."""
    from .._reducers import reducer_of

    return reducer_of(m.extra)


#: Between questions and attempts in ``n`` (a multiplication sign), and between the fewest
#: and most attempts per question (an en dash).
TIMES, RANGE = "\u00d7", "\u2013"


def attempts_text(m: Measurement) -> str | None:
    """Attempts per question: ``"3"``, ``"1-3"`` (an en dash) when they vary, else ``None``."""
    low, high = m.extra.get("attempts_min"), m.extra.get("attempts_max")
    if low is None or high is None:
        return None
    return f"{low:g}" if low == high else f"{low:g}{RANGE}{high:g}"


def n_text(m: Measurement) -> str:
    """A measurement's n for tables: ``"1,200"``, ``"5 x 3"`` (questions times attempts)."""
    attempts = attempts_text(m)
    return f"{m.n:,}" if attempts is None else f"{m.n:,} {TIMES} {attempts}"


def summary_columns(result: RunResult) -> tuple[str, ...]:
    """The columns of ``summary.csv`` and of the Summary sheet.

    :data:`SUMMARY_COLUMNS`, and for a run with attempts (or further reducers) the reducer,
    the attempts per question and the scored attempts of each row.
    """
    if any(reducer_name(m) is not None for ms in result.by_model.values() for m in ms.values()):
        return SUMMARY_COLUMNS + ATTEMPT_COLUMNS
    return SUMMARY_COLUMNS


def is_small_group(m: Measurement) -> bool:
    """Whether a group measurement has fewer scored items than the runner's threshold."""
    return bool(m.extra.get("small_group"))


def macro_of(m: Measurement) -> tuple[float, float | None, float | None, int] | None:
    """A grouped measurement's macro value, interval and number of groups, or ``None``.

    The runner puts them in ``extra`` (``macro``, ``macro_low``, ``macro_high``,
    ``macro_groups``); the interval is ``None`` when it has none.
    """
    if not m.groups or m.extra.get("macro") is None:
        return None
    low, high = m.extra.get("macro_low"), m.extra.get("macro_high")
    groups = int(m.extra.get("macro_groups", len(m.groups)))
    return m.extra["macro"], low, high, groups


def small_group_note() -> str:
    """The note under a table with flagged groups: what the mark means, with the threshold."""
    from ..engine._measure import SMALL_GROUP

    return (
        f"{SMALL_GROUP_MARK} fewer than {SMALL_GROUP} scored items in the group: its value and "
        "interval rest on few items."
    )


def _macro_row(m: Measurement) -> dict[str, Any] | None:
    macro = macro_of(m)
    if macro is None:
        return None
    value, low, high, _ = macro
    return {**dict.fromkeys(SUMMARY_COLUMNS + ATTEMPT_COLUMNS), "suite": m.suite,
            "metric": m.metric, "model": m.model, "value": value, "ci_low": low,
            "ci_high": high, "confidence": m.confidence, "n": m.n, "aggregation": "macro",
            "reducer": reducer_name(m)}  # fmt: skip


def _summary_row(m: Measurement, group: str | None) -> dict[str, Any]:
    aggregation: str | None = "group" if group is not None else "pooled" if m.groups else None
    small = int(is_small_group(m)) if group is not None else None
    return {
        "suite": m.suite,
        "metric": m.metric,
        "model": m.model,
        "group": group,
        "value": m.value,
        "ci_low": m.ci_low,
        "ci_high": m.ci_high,
        "ci_method": m.ci_method,
        "confidence": m.confidence,
        "n": m.n,
        **{state.value: m.counts.get(state, 0) for state in STATES},
        "error_message": m.error,
        "aggregation": aggregation,
        "small_group": small,
        "reducer": reducer_name(m),
        "attempts": attempts_text(m),
        "n_attempts": int(m.extra["n_attempts"]) if "n_attempts" in m.extra else None,
    }


def summary_rows(result: RunResult) -> list[dict[str, Any]]:
    """One row per model and measurement, each followed by its macro row and one row per group.

    The keys are :data:`SUMMARY_COLUMNS`; missing values are ``None``. ``aggregation`` says
    what a row of a grouped measurement holds: ``all items`` (every item at once), ``macro``
    (the unweighted mean over its groups, with its interval; ``n`` is the one over all
    items) or ``group``; ``small_group`` is 1 on a group row with fewer scored items than
    the threshold (30), 0 on the other group rows. A model's derived measurements (the cost
    of one success) follow its measurements, ``aggregation`` ``derived``.
    """
    rows: list[dict[str, Any]] = []
    for measurements in result.by_model.values():
        for m in measurements.values():
            rows.append(_summary_row(m, None))
            macro = _macro_row(m)
            if macro is not None:
                rows.append(macro)
            for group, gm in m.groups.items():
                rows.append(_summary_row(gm, group))
        for d in derived_of(measurements):
            rows.append({**_summary_row(d, None), "aggregation": "derived"})
            for group, gd in d.groups.items():
                rows.append({**_summary_row(gd, group), "aggregation": "derived"})
    return rows


def derived_of(measurements: Mapping[str, Measurement]) -> list[Measurement]:
    """The derived measurements of one model's measurements, in order (see ``derived``)."""
    return [d for m in measurements.values() for d in m.derived.values()]


def labels_of(result: RunResult) -> list[str]:
    """The measurement labels of every model, in first-seen order."""
    labels: list[str] = []
    for measurements in result.by_model.values():
        for m in measurements.values():
            if m.metric not in labels:
                labels.append(m.metric)
    return labels


def find(measurements: Mapping[str, Measurement], label: str) -> Measurement | None:
    """The measurement of ``label`` among one model's, or ``None``."""
    for m in measurements.values():
        if m.metric == label:
            return m
    return None


def confidence_of(result: RunResult) -> float:
    """The run's confidence level (0.95 when the configuration does not say)."""
    settings = getattr(result, "settings", None)
    value = getattr(settings, "confidence", None)
    if value is None:
        value = result.config.get("confidence", 0.95)
    return float(value)


def display_name(result: RunResult, label: str) -> str:
    """How tables name a measurement: its recorded ``display_name``, else the label."""
    for measurements in result.by_model.values():
        for m in measurements.values():
            if m.metric == label:
                return m.name
    return label


def bold_cells(result: RunResult) -> set[tuple[str | None, str]]:
    """The ``(model, label)`` cells that tables set in bold: significant leads only.

    A model's value is bold where its lead over every other model is significant by the
    paired test of :func:`itemscore.compare` (exact McNemar for ratios, paired t for means,
    paired bootstrap for metrics with their own aggregate), Holm-adjusted over its
    comparisons, at the run's level: see :func:`itemscore.comparison.significant_leaders`.
    A higher number alone is never bold; with one model nothing is.

    This is the one place that decides bolding: every table asks it.
    """
    if len(result.by_model) < 2:
        return set()
    # Every table of a run asks (terminal, table.tex, report.html...): decided once per result.
    cells: frozenset[tuple[str | None, str]] | None = result._derived.get("bold")
    if cells is None:
        from ..comparison import significant_leaders

        leaders = significant_leaders(result)
        cells = result._derived["bold"] = frozenset((m, label) for label, m in leaders.items())
    return set(cells)


#: The note under a table with bold cells: which test decided them.
BOLD_NOTE = (
    "Bold: the model's lead over every other model is significant at the {level} level by a "
    "paired test on the shared items (exact McNemar for ratios, paired t for means, paired "
    "bootstrap otherwise; Holm-adjusted)."
)
