"""A run in a notebook: its one-line ``repr`` and its HTML table (``_repr_html_``).

The HTML table is the terminal's: the rows come from :mod:`._result_rows`, the builder the
terminal's tables use, so a notebook shows the same lines, numbers, decimals, marks and
notes as ``itemscore score`` prints (one row per metric, a value and interval per model).
Every text from the data (suite, model, label, error) is escaped.

Kept apart from :mod:`._notebook` (a measurement's and a comparison's tables): the rows read
the bold cells, which run the paired comparisons, whose records import that module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..display._notebook import _STYLE, _text
from ..display._text import printable
from ._rows import Row, interval_text, joined, result_rows, table_notes, value_str
from ._summary import SMALL_GROUP_MARK, TIMES, bold_cells, confidence_of

if TYPE_CHECKING:
    from .._result import RunResult

__all__ = ["PATH_WIDTH", "REPR_WIDTH", "result_html", "result_repr"]

#: The longest a run's ``repr`` is meant to be: it lists its models and metrics by name only
#: while that fits, and counts them otherwise.
REPR_WIDTH = 120
#: The longest the data file's path is shown in a run's ``repr``.
PATH_WIDTH = 48

_LEFT = "text-align:left;padding:0 0.6em"
_RIGHT = "text-align:right;padding:0 0.6em;white-space:nowrap"


def _counted(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def _names(names: list[str]) -> str:
    return ", ".join(printable(name) for name in names)


def _shortened(text: str, room: int) -> str:
    """``text``, or its end after an ellipsis when longer than ``room`` (a path's file name)."""
    return text if len(text) <= room else "\u2026" + text[len(text) - (room - 1) :]


def result_repr(result: RunResult) -> str:
    """One line: suite, models times metrics, items and the data file.

    For instance ``<RunResult qa: 2 models (m1, m2) \u00d7 2 metrics (exact_match, f1),
    200 items, from data/qa.jsonl>``: models and metrics are named while the line stays
    within :data:`REPR_WIDTH` characters, and only counted otherwise; a path longer than
    :data:`PATH_WIDTH` keeps its end, where the file's name is.
    """
    models = [m for m in result.models if m is not None]
    labels = result.labels or sorted({m.metric for m in result.measurements.values()})
    count_models = _counted(len(models), "model")
    count_metrics = _counted(len(labels), "metric")
    data = result.provenance.get("data")
    path = data.get("path") if isinstance(data, dict) else None
    tail = f", {_counted(len(result.items), 'item')}"
    where = "" if not path else f", from {_shortened(printable(str(path)), PATH_WIDTH)}"
    head = f"<RunResult {printable(result.suite_id)}: "
    named_models = f"{count_models} ({_names(models)})" if models else ""
    named_metrics = f"{count_metrics} ({_names(labels)})"
    choices = [
        (named_models, named_metrics),
        (count_models if models else "", named_metrics),
        (count_models if models else "", count_metrics),
    ]
    for shown_models, shown_metrics in choices:
        what = f"{shown_models} {TIMES} {shown_metrics}" if shown_models else shown_metrics
        line = f"{head}{what}{tail}{where}>"
        if len(line) <= REPR_WIDTH:
            break
    return line  # longer only for a suite id that is itself long


def _cell_html(row: Row, index: int) -> str:
    cell = row.cells[index]
    d = row.decimals
    value = _text(value_str(cell, d))
    if cell is not None and cell.bold:
        value = f"<b>{value}</b>"
    interval = interval_text(cell, d)
    return value + (f" {_text(interval)}" if interval else "")


def result_html(result: RunResult, *, by_group: bool = False) -> str:
    """The run's table as the terminal's side-by-side layout shows it, as HTML.

    One row per metric (with ``by_group``, its groups below it; derived measurements such as
    the cost of one success after the metrics), one column per model holding the value and
    its interval, then the interval method, ``n``, and the skip and error counts when any
    item was not scored. Bold marks a significant lead, as in the terminal; its notes
    (bold, ↓, coverage, small groups, failed aggregates) are the table's caption.
    """
    models = list(result.by_model) or [None]
    rows = result_rows(result, models, by_group, bold_cells(result))
    level = f"{confidence_of(result) * 100:g}%"
    named = len(models) > 1 or models[0] is not None
    headers = [("metric", _LEFT)]
    headers += [(_text(m) if named else "value", _RIGHT) for m in models]
    headers += [("method", _LEFT), ("n", _RIGHT)]
    not_scored = any(
        c is not None and c.counts is not None and (c.counts[2] or c.counts[3])
        for r in rows for c in r.cells
    )  # fmt: skip
    if not_scored:
        headers += [("skip", _RIGHT), ("error", _RIGHT)]
    body = []
    for row in rows:
        present = [c for c in row.cells if c is not None]
        name = _text(row.name) + (f" {SMALL_GROUP_MARK}" if row.small else "")
        tds = [(name, _LEFT)]
        tds += [(_cell_html(row, i), _RIGHT) for i in range(len(models))]
        tds.append((_text(joined([c.method for c in present])), _LEFT))
        tds.append((_text(joined([c.n or "" for c in present])), _RIGHT))
        if not_scored:
            for i in (2, 3):
                counts = [str(c.counts[i]) for c in present if c.counts is not None]
                tds.append((joined(counts), _RIGHT))
        dim = " style='color:#777'" if row.kind == "group" else ""
        body.append(f"<tr{dim}>" + "".join(f"<td style='{s}'>{t}</td>" for t, s in tds) + "</tr>")
    head = "".join(f"<th style='{s}'>{t}</th>" for t, s in headers)
    title = _text(f"{result.suite_id} · value [{level} interval]" + (" per model" if named else ""))
    notes = table_notes(result, rows, models=models if named else None)
    caption = title + "".join(
        f"<div><small>{_text(n)}</small></div>" for n in (notes or "").split("\n") if n
    )
    return (
        f"<table style='{_STYLE}'><caption style='text-align:left'>{caption}</caption>"
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )
