r"""``results.md``: the measurements as a Markdown table, the way lm-eval prints its results.

One row per model and metric (then its groups, with ``--by-group`` rows indented by ``-``):
suite, model, metric, an arrow for the direction (``↑`` higher is better, ``↓`` lower),
value, interval and n. Numbers follow :mod:`._format`; a bold value is a significant lead
(the same paired tests as every table); an interval whose coverage receipt is below the
floor has a double dagger before it, with its coverage in a note under the table.

Every text from the data (suite id, model, metric label, group, a metric's unit) is kept text
under CommonMark and GFM: ``&``, ``<`` and ``>`` are written as entities, so a name holding
``<img src=x onerror=...>`` is shown, never rendered as HTML; ``[`` and ``]`` are escaped, so
no name makes a link or an image that loads from elsewhere; ``|``, ``\`` and line breaks are
escaped, so a name never opens a new cell or row.
"""

from __future__ import annotations

from pathlib import Path

from .._records import Measurement
from .._result import RunResult
from ..display import _format
from ..display._text import md_table, md_text
from ..summary._summary import (
    BOLD_NOTE,
    COVERAGE_MARK,
    bold_cells,
    confidence_of,
    coverage_advice,
    coverage_note,
    derived_of,
    method_name,
)
from ._files import open_report

__all__ = ["FILENAME", "markdown_table", "md_text", "write"]

#: The file this format writes.
FILENAME = "results.md"


def _row(
    suite: str,
    model: str | None,
    name: str,
    m: Measurement,
    bold: bool,
    marked: bool = False,
    decimals: int | None = None,
) -> list[str]:
    d = _format.decimals_for(m.value, m.ci_low, m.ci_high) if decimals is None else decimals
    shown = _format.format_interval(m.ci_low, m.ci_high, d)
    value = "error" if m.error else _format.format_value(m.value, d, unit=m.unit)
    if bold:
        value = f"**{value}**"
    return [
        md_text(suite),
        md_text("" if model is None else model),
        md_text(name),
        _format.direction_arrow(m.higher_is_better),
        md_text(value),  # the unit is a metric option's text; ** (bold) is left to mean bold
        md_text((COVERAGE_MARK if marked and shown else "") + shown, brackets=False),  # numbers
        md_text(method_name(m.ci_method)),
        f"{m.n:,}",
    ]


def markdown_table(result: RunResult, *, groups: bool = True) -> str:
    """The text of ``results.md``: a header, one row per measurement (and group), a note."""
    level = f"{confidence_of(result) * 100:g}%"
    bold = bold_cells(result)
    rows: list[list[str]] = []
    coverage: list[str] = []
    noted: list[Measurement] = []

    def flagged(m: Measurement, where: str) -> bool:
        note = coverage_note(m, md_text(where))
        if note is not None:
            coverage.append(note)
            noted.append(m)
        return note is not None

    # One precision per metric, whichever model or group a row is of: the Value column never
    # shows 0.49 above 0.813 for one metric.
    places: dict[str, int] = {}
    for ms in result.by_model.values():
        for m in [*ms.values(), *derived_of(ms)]:
            for x in [m, *(m.groups.values() if groups else ())]:
                if x.error is None and x.value is not None:
                    need = _format.decimals_for(x.value, x.ci_low, x.ci_high)
                    places[m.metric] = max(places.get(m.metric, need), need)
    for model, ms in result.by_model.items():
        who = "" if model is None else f" · {model}"
        for m in [*ms.values(), *derived_of(ms)]:
            marked = flagged(m, m.name + who)
            places_of = places.get(m.metric)
            lead = (model, m.metric) in bold
            rows.append(_row(result.suite_id, model, m.name, m, lead, marked, places_of))
            if groups:
                for group, gm in m.groups.items():
                    marked = flagged(gm, f"{m.name}, group {group}{who}")
                    rows.append(_row("", None, f" - {group}", gm, False, marked, places_of))
    notes = ["↑ higher is better, ↓ lower is better."]
    if bold:
        notes.append(BOLD_NOTE.format(level=level).replace("Bold:", "**Bold**:"))
    header = ["Suite", "Model", "Metric", " ", "Value", f"{level} interval", "Method", "n"]
    lines = md_table(header, "---|---|---|:-:|--:|--:|---|--:", rows)
    text = "\n".join(lines) + "\n\n" + " ".join(notes) + "\n"
    advice = coverage_advice(noted)
    return text + "".join(f"\n{note}\n" for note in [*coverage, *([advice] if advice else [])])


def write(result: RunResult, path: Path) -> None:
    """Write ``results.md`` for ``result`` to ``path``."""
    with open_report(path) as handle:
        handle.write(markdown_table(result))
