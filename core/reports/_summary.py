"""What several reports share: the summary rows, the metric display names, which cells are bold."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._records import Measurement, Status
from .._result import RunResult

__all__ = [
    "BOLD_NOTE",
    "SUMMARY_COLUMNS",
    "bold_cells",
    "confidence_of",
    "display_name",
    "find",
    "labels_of",
    "method_name",
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
    "ok",
    "fail",
    "skip",
    "error",
    "error_message",
)

#: How tables name the built-in metrics; any other label is shown as written.
_DISPLAY_NAMES: dict[str, str] = {
    "exact_match": "Exact match",
    "accuracy": "Accuracy",
    "f1": "F1",
    "token_f1": "Token F1",
    "answered_rate": "Answered rate",
    "cost": "Cost",
    "llm_judge": "LLM judge",
}

#: How tables name the interval methods.
_METHOD_NAMES: dict[str, str] = {
    "wilson": "Wilson",
    "clopper-pearson": "Clopper-Pearson",
    "normal": "normal",
    "t": "t",
    "bootstrap": "bootstrap",
    "none": "no interval",
}


def _summary_row(m: Measurement, group: str | None) -> dict[str, Any]:
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
        "ok": m.counts.get(Status.OK, 0),
        "fail": m.counts.get(Status.FAIL, 0),
        "skip": m.counts.get(Status.SKIP, 0),
        "error": m.counts.get(Status.ERROR, 0),
        "error_message": m.error,
    }


def summary_rows(result: RunResult) -> list[dict[str, Any]]:
    """One row per model and measurement, each followed by one row per group.

    The keys are :data:`SUMMARY_COLUMNS`; missing values are ``None``.
    """
    # Imported here: the metric module imports itemscore, which imports the reports.
    from ..metrics_builtin.cost import cost_per_success_rows

    per_success = cost_per_success_rows(result)
    rows: list[dict[str, Any]] = []
    for model, measurements in result.by_model.items():
        for m in measurements.values():
            rows.append(_summary_row(m, None))
            for group, gm in m.groups.items():
                rows.append(_summary_row(gm, group))
        for c in (c for c in per_success if c.model == model):  # n: the successes
            rows.append({**dict.fromkeys(SUMMARY_COLUMNS), "suite": result.suite_id,
                         "metric": c.label, "model": c.model, "group": c.group, "value": c.value,
                         "ci_method": "none", "confidence": confidence_of(result),
                         "n": c.successes})  # fmt: skip
    return rows


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
    """How tables name a measurement: ``Exact match`` for ``exact_match``; labels as written.

    A label that is a built-in metric's id (the metric used once, unlabelled) gets that
    metric's display name; a label the user chose is shown as chosen.
    """
    for entry in result.config.get("metrics", []):
        if isinstance(entry, Mapping) and entry.get("label") == label:
            if entry.get("name") == label and label in _DISPLAY_NAMES:
                return _DISPLAY_NAMES[label]
            return label
    return _DISPLAY_NAMES.get(label, label)


def method_name(method: str) -> str:
    """How tables name an interval method: ``Wilson``, ``t``, ``bootstrap``..."""
    return _METHOD_NAMES.get(method, method)


def _best_rows(values: Sequence[float | None], higher_is_better: bool, digits: int) -> set[int]:
    """Rows holding the best value as displayed (ties all win); none with fewer than two."""
    shown = [(i, round(v, digits)) for i, v in enumerate(values) if v is not None]
    if len(shown) < 2:
        return set()
    best = max(v for _, v in shown) if higher_is_better else min(v for _, v in shown)
    return {i for i, v in shown if v == best}


def bold_cells(result: RunResult, *, digits: int = 3) -> set[tuple[str | None, str]]:
    """The ``(model, label)`` cells that tables set in bold: significant leads only.

    A model's value is bold where its lead over every other model is significant by the
    paired test of :func:`itemscore.compare` (exact McNemar for ratios, paired t for means,
    paired bootstrap for metrics with their own aggregate), Holm-adjusted over its
    comparisons, at the run's level: see :func:`itemscore._compare.significant_leaders`.
    A higher number alone is never bold; with one model nothing is. ``digits`` is unused
    (kept for the callers).

    This is the one place that decides bolding: every table asks it.
    """
    if len(result.by_model) < 2:
        return set()
    from .._compare import significant_leaders

    return {(model, label) for label, model in significant_leaders(result).items()}


#: The note under a table with bold cells: which test decided them.
BOLD_NOTE = (
    "Bold: the model's lead over every other model is significant at the {level} level by a "
    "paired test on the shared items (exact McNemar for ratios, paired t for means, paired "
    "bootstrap otherwise; Holm-adjusted)."
)
