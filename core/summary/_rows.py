"""The rows of a run's result table, as the terminal and a notebook show them.

One builder decides what a result table holds: which lines (metrics, the mean of groups,
groups, derived measurements), what each cell shows (value, interval, method, n, counts) and
the notes under the table. The terminal (:mod:`itemscore._terminal`) lays the rows out with
rich; a notebook (:mod:`._notebook_run`) as HTML. Neither builds rows of its own, so both
show the same numbers with the same decimals and marks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from .._records import STATES, Measurement
from ..display._format import format_interval, format_value, shared_decimals
from ..display._text import printable
from ._summary import (
    BOLD_NOTE,
    COVERAGE_MARK,
    MACRO_NAME,
    POOLED_NAME,
    TIMES,
    confidence_of,
    coverage_notes,
    derived_of,
    is_small_group,
    macro_of,
    method_name,
    n_text,
    reducer_name,
    small_group_note,
)

if TYPE_CHECKING:
    from .._result import RunResult

__all__ = [
    "Cell",
    "Row",
    "block_decimals",
    "cell_of",
    "interval_text",
    "joined",
    "result_rows",
    "table_notes",
    "value_str",
]


@attrs.frozen
class Cell:
    """One measurement as a table shows it."""

    value: float | None
    low: float | None
    high: float | None
    method: str
    n: str | None  # "40", or "40 x 3" (questions times attempts)
    counts: tuple[int, int, int, int] | None  # ok, fail, skip, error
    unit: str | None = None
    bold: bool = False
    error: str | None = None
    #: The measurement itself when its coverage receipt is below the floor (a flagged row).
    undercovers: Measurement | None = None


@attrs.frozen
class Row:
    """One line of a result table: a name and one cell per model (``None``: no measurement)."""

    name: str
    kind: str  # "metric", "macro", "group", "derived"
    cells: tuple[Cell | None, ...]
    small: bool = False
    label: str = ""  # the measurement's label (a group row: its measurement's)

    @property
    def decimals(self) -> int:
        return shared_decimals((c.value, c.low, c.high) for c in self.cells if c)


def block_decimals(rows: Sequence[Row]) -> list[int]:
    """Each row's decimals, shared by a measurement's row and the group rows under it.

    A column then shows one metric with one precision (``0.660`` under ``0.666``, never
    ``0.66``), while a metric on another scale keeps its own.
    """
    blocks: list[list[int]] = []
    for row in rows:
        if row.kind in ("metric", "derived") or not blocks:
            blocks.append([])
        blocks[-1].append(row.decimals)
    return [max(block) for block in blocks for _ in block]


def cell_of(m: Measurement, bold: bool = False) -> Cell:
    """The cell of one measurement (``bold``: a significant lead)."""
    from ..aggregate import coverage_flag

    counts = tuple(m.counts.get(s, 0) for s in STATES)
    derived = m.ci_method == "none" and not any(counts)
    return Cell(
        value=m.value, low=m.ci_low, high=m.ci_high, method=method_name(m.ci_method),
        n=n_text(m), counts=None if derived else counts,  # type: ignore[arg-type]
        unit=m.unit, bold=bold, error=m.error,
        undercovers=m if coverage_flag(m) is not None else None,
    )  # fmt: skip


def result_rows(
    result: RunResult,
    models: Sequence[str | None],
    by_group: bool,
    bold: set[tuple[str | None, str]],
) -> list[Row]:
    """Every line of the tables of ``models``: metrics, then derived measurements."""
    per_model = [result.by_model.get(model, {}) for model in models]
    rows: list[Row] = []

    def add(label: str, found: list[Measurement | None], kind: str) -> None:
        grouped = by_group and any(m is not None and m.groups for m in found)
        reducer = next((reducer_name(m) for m in found if m is not None), None)
        name = label + (f" [{reducer}]" if reducer is not None else "")
        name += f" · {POOLED_NAME}" if grouped else ""
        if any(m is not None and not m.higher_is_better for m in found):
            name += " ↓"
        cells = tuple(
            None if m is None else cell_of(m, (model, m.metric) in bold and reducer is None)
            for model, m in zip(models, found)
        )
        rows.append(Row(name, kind, cells, label=label))
        if not grouped:
            return
        macros = [None if m is None or m.error else macro_of(m) for m in found]
        if any(macros):
            n_groups = max(x[3] for x in macros if x is not None)
            rows.append(Row(f"  {MACRO_NAME} ({n_groups})", "macro", tuple(
                None if x is None else Cell(x[0], x[1], x[2], "", None, None,
                                            unit=next(m.unit for m in found if m is not None))
                for x in macros
            )))  # fmt: skip
        names = sorted({g for m in found if m is not None for g in m.groups})
        for group in names:
            gms = [None if m is None else m.groups.get(group) for m in found]
            small = any(g is not None and is_small_group(g) for g in gms)
            cells = tuple(None if g is None else cell_of(g) for g in gms)
            rows.append(Row(f"  {group}", "group", cells, small, label=f"{label}, group {group}"))

    keys: dict[str, str] = {}  # every measurement's key (a reducer's own), first seen first
    for ms in per_model:
        for key, m in ms.items():
            keys.setdefault(key, m.metric)
    for key, label in keys.items():
        add(label, [ms.get(key) for ms in per_model], "metric")
    derived: dict[str, list[Measurement | None]] = {}
    for i, ms in enumerate(per_model):
        for d in derived_of(ms):
            derived.setdefault(d.metric, [None] * len(models))[i] = d
    for found in derived.values():
        head = next(d for d in found if d is not None)
        add(head.name, found, "derived")
    return rows


def value_str(cell: Cell | None, decimals: int) -> str:
    """The value as a table shows it: ``error`` when the aggregate failed, empty for no cell."""
    if cell is None:
        return ""
    if cell.error is not None:
        return "error"
    return format_value(cell.value, decimals, unit=cell.unit)


def interval_text(cell: Cell | None, decimals: int) -> str:
    """The interval; the coverage mark before it when flagged, so right edges stay aligned."""
    if cell is None:
        return ""
    text = format_interval(cell.low, cell.high, decimals)
    return f"{COVERAGE_MARK}{text}" if text and cell.undercovers is not None else text


def joined(values: Sequence[str]) -> str:
    """One value when every model has it, else each model's, joined by ``/``."""
    shown = [v for v in values if v != ""]
    if not shown:
        return ""
    return shown[0] if len(set(shown)) == 1 else "/".join(values)


def table_notes(
    result: RunResult,
    rows: Sequence[Row],
    *,
    methods: bool = False,
    models: Sequence[str | None] | None = None,
) -> str | None:
    """The notes under a table; ``models``: the model of each cell, when cells are models."""
    notes = []
    if methods:  # the layout has no method column: say it once per metric
        used: dict[str, list[str]] = {}
        for r in rows:
            if r.kind == "metric":
                for c in r.cells:
                    name = r.name.removesuffix(" ↓")
                    if c is not None and c.method and name not in used.setdefault(c.method, []):
                        used[c.method].append(name)
        if used:
            said = "; ".join(f"{m}: {', '.join(names)}" for m, names in used.items())
            notes.append(f"Interval methods: {said}.")
    if any(c is not None and c.bold for r in rows for c in r.cells):
        notes.append(BOLD_NOTE.format(level=f"{confidence_of(result) * 100:g}%"))
    if any(c is not None and c.n is not None and TIMES in c.n for r in rows for c in r.cells):
        notes.append(f"n: questions {TIMES} attempts; [reducer]: how attempts were reduced.")
    if any(r.name.endswith(" ↓") for r in rows):
        notes.append("↓ lower is better.")
    if any(r.small for r in rows):
        notes.append(small_group_note())
    undercovering = []
    for r in rows:
        for i, c in enumerate(r.cells):
            if c is not None and c.undercovers is not None:
                model = None if models is None else models[i]
                where = r.label + ("" if model is None else f" · {model}")
                undercovering.append((printable(where), c.undercovers))
    notes += coverage_notes(undercovering)
    for r in rows:
        for c in r.cells:
            if c is not None and c.error is not None:
                notes.append(f"{r.name.strip()}: the aggregate failed: {printable(c.error)}")
    return "\n".join(notes) or None
