r"""``report.html``: one self-contained page (inline CSS, SVG and script; nothing fetched).

The page shows, in order:

- the run: suite, counts, interval level, its provenance, the legend of the models' and the
  states' colours;
- per measurement: its name and which way is better, the models' values with their
  intervals as a plot on an axis scaled to them (an interval whose coverage receipt is below
  the floor marked with a double dagger and its coverage noted), the four-state counts, a
  reliability diagram when the measurement holds bins (``bin[b].count``… in its ``extra``), and its
  groups, collapsed when there are many, as one sortable table with a column per model;
- rows the metrics derive from their measurements (cost per success, a judge-corrected
  score) with their intervals when they have one, and their groups;
- with several models, the leaderboard (:mod:`._html_leaderboard`): per metric a leaderboard
  can rank, the models best first with their values, intervals, rank ranges drawn as bars on
  an axis of ranks, and tie groups as shaded bands (the boards of
  :func:`~.leaderboard_files.run_boards`, made once per result);
- with several models, the comparison (:mod:`._html_compare`): :func:`itemscore.compare`'s
  paired differences, intervals, adjusted p-values and tests, and a forest plot per metric;
- the items, paged, sortable and filterable by text, state, metric and model, with their
  input, output and expected answer (:mod:`._html_script`). The filters can be preset from
  the address: ``report.html#state=error&metric=f1&q=paris``.

Every text from the data is escaped: in the markup with :func:`html.escape` (after
:func:`~itemscore.display._text.printable`), and the items travel as JSON inside a
``<script type="application/json">`` block with ``<``, ``>`` and ``&`` written as ``\u``
escapes, so no text can close the block; the script shows them with ``textContent``, never as
markup. A Content-Security-Policy forbids every network request and every script but the
page's own, allowed by its hash.

The page stays a size a browser opens whatever the run: it holds the first
:data:`MAX_ITEMS` items, each input, output, expected answer and reason at most about
:data:`MAX_TEXT` characters (the middle of a longer one is cut), and says so above the table
when it did either; ``items.parquet`` holds every item whole, and ``itemscore view`` serves
the same page with every item, paged from there. The items are read once, in order, and only
as far as the page holds them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from .._exceptions import ConfigError
from .._records import Measurement, Status
from .._result import RunResult
from ..summary._summary import (
    COVERAGE_MARK,
    MACRO_NAME,
    POOLED_NAME,
    SMALL_GROUP_MARK,
    confidence_of,
    coverage_advice,
    coverage_note,
    derived_of,
    display_name,
    is_small_group,
    labels_of,
    macro_of,
    method_name,
    n_text,
    reducer_name,
    small_group_note,
)
from ._files import open_report
from ._html_compare import comparison_section, direction_badge
from ._html_data import items_pieces
from ._html_leaderboard import leaderboard_section
from ._html_markup import esc, head, policy
from ._html_numbers import column_decimals, interval, number
from ._html_script import CSS, SCRIPT
from ._html_svg import (
    STATE_COLOURS,
    Bin,
    Point,
    dot_plot,
    model_colours,
    reliability_diagram,
    state_bar,
    strip,
    strip_span,
)
from .leaderboard_files import run_boards

__all__ = ["FILENAME", "MAX_ITEMS", "MAX_TEXT", "OPEN_GROUPS", "report_html", "write"]

#: The file this format writes.
FILENAME = "report.html"
#: At most this many items go into the page's table (all of them are in items.parquet).
MAX_ITEMS = 20_000
#: Inputs, outputs, expected answers and reasons longer than this keep only their first and
#: last halves of it in the page.
MAX_TEXT = 4_000
#: A measurement's groups are shown open up to this many; more are collapsed.
OPEN_GROUPS = 12
#: The page sizes of the items table.
PAGE_SIZES = (25, 50, 100, 250)

_Row = tuple[str, str, Measurement]  # (model name, colour, measurement)
#: A reliability bin's fields besides its count, as ``bin[b].<field>`` in ``extra``.
_BIN_FLOATS = ("lower", "upper", "confidence", "accuracy")


def _name(model: str | None) -> str:
    return model if model is not None else "all items"


def _counts(m: Measurement) -> dict[str, int]:
    return {state.value: m.counts.get(state, 0) for state in Status}


def _bounds(m: Measurement) -> tuple[float, float] | None:
    """What the axis of a measurement may never pass: [0, 1] for a ratio."""
    return (0.0, 1.0) if m.aggregation == "ratio" else None


def _point(name: str, colour: str, m: Measurement) -> Point:
    if m.error is not None:
        return Point(name, colour, None, note="error")
    if m.value is None:
        return Point(name, colour, None, note="no value")
    return Point(name, colour, m.value, m.ci_low, m.ci_high)


def _swatch(colour: str, state: bool = False) -> str:
    kind = "swatch state" if state else "swatch"
    return f'<span class="{kind}" style="background:{colour}"></span>'


def _num_cell(value: float | int | None, text: str) -> str:
    v = "" if value is None else repr(float(value))
    return f'<td class="num" data-v="{v}">{esc(text)}</td>'


def _triple(m: Measurement) -> tuple[float | None, float | None, float | None]:
    """What decides a cell's decimals: the value and its interval (none for an error)."""
    return (None, None, None) if m.error is not None else (m.value, m.ci_low, m.ci_high)


def _interval_cell(m: Measurement, note: str | None, decimals: int | None = None) -> str:
    """An interval's cell, marked when its coverage receipt is below the floor (``note``)."""
    shown = interval(m.value, m.ci_low, m.ci_high, decimals)
    if note is None or not shown:
        return f'<td class="num">{shown}</td>'
    return (
        f'<td class="num undercovers" title="{esc(note)}">'
        f'<span class="mark">{COVERAGE_MARK}</span>{shown}</td>'
    )


def _notes(notes: Sequence[str | None], flagged: Sequence[Measurement]) -> str:
    """The coverage notes under a table, one paragraph each, then what helps (if any)."""
    advice = coverage_advice(flagged)
    shown = [n for n in notes if n] + ([advice] if advice else [])
    return "".join(f'<p class="meta coverage-note">{esc(n)}</p>' for n in shown)


def _counts_table(rows: Sequence[_Row], name: str) -> str:
    out = [
        '<div class="scroll"><table class="counts"><thead><tr><th>model</th><th>value</th>'
        "<th>interval</th><th>method</th><th>n</th><th>ok</th><th>fail</th><th>skip</th>"
        "<th>error</th><th>states</th></tr></thead><tbody>"
    ]
    notes = []
    flagged: list[Measurement] = []
    d = column_decimals(_triple(m) for _, _, m in rows)  # one precision for the column
    for model_name, colour, m in rows:
        value = (
            "error: " + m.error if m.error is not None else number(m.value, m.ci_low, m.ci_high, d)
        )
        note = coverage_note(m, f"{name} · {model_name}")
        notes.append(note)
        if note is not None:
            flagged.append(m)
        out.append(
            f'<tr><td>{_swatch(colour)}{esc(model_name)}</td><td class="num">{esc(value)}</td>'
            f"{_interval_cell(m, note, d)}"
            f"<td>{esc(method_name(m.ci_method))}</td>"
            f'<td class="num">{esc(n_text(m))}</td>'
            + "".join(f'<td class="num">{m.counts.get(s, 0):,}</td>' for s in Status)
            + f"<td>{state_bar(_counts(m))}</td></tr>"
        )
    out.append("</tbody></table></div>")
    out.append(_notes(notes, flagged))
    return "".join(out)


def _bins(m: Measurement) -> list[Bin]:
    """The reliability diagram's bins a measurement holds in its ``extra`` (none: empty)."""
    bins: list[Bin] = []
    while f"bin[{len(bins)}].count" in m.extra:
        prefix = f"bin[{len(bins)}]."
        found = {name: m.extra.get(prefix + name) for name in _BIN_FLOATS}
        floats = {name: None if v is None else float(v) for name, v in found.items()}
        bins.append(Bin(count=int(m.extra[prefix + "count"]), **floats))
    return bins


def _reliability(rows: Sequence[_Row], name: str) -> str:
    series = [(model, colour, _bins(m)) for model, colour, m in rows]
    series = [s for s in series if s[2]]
    if not series:
        return ""
    table = [
        '<details class="bins"><summary>Bins</summary><div class="scroll"><table><thead><tr>'
        "<th>model</th><th>bin</th><th>confidences</th><th>items</th><th>mean confidence</th>"
        "<th>accuracy</th><th>gap</th></tr></thead><tbody>"
    ]
    for model, _, bins in series:
        for index, b in enumerate(bins):
            span = (
                f"{b.lower:.3g} &ndash; {b.upper:.3g}"
                if b.lower is not None and b.upper is not None
                else ""
            )
            gap = (
                abs(b.accuracy - b.confidence)
                if b.accuracy is not None and b.confidence is not None
                else None
            )
            table.append(
                f'<tr><td>{esc(model)}</td><td class="num">{index}</td><td>{span}</td>'
                f'<td class="num">{b.count:,}</td><td class="num">{number(b.confidence)}</td>'
                f'<td class="num">{number(b.accuracy)}</td><td class="num">{number(gap)}</td></tr>'
            )
    table.append("</tbody></table></div></details>")
    return (
        f'<div class="reliability"><h4>{esc(name)}: reliability diagram '
        + " ".join(
            f'<span class="meta">{_swatch(colour)}{esc(model)}</span>'
            for model, colour, _ in series
        )
        + "</h4>"
        + reliability_diagram(series, f"{name}: accuracy against confidence per bin")
        + "".join(table)
        + "</div>"
    )


def _groups(rows: Sequence[_Row], name: str) -> str:
    """One sortable table of a measurement's groups, a column per model, collapsed if many."""
    names = list(dict.fromkeys(g for _, _, m in rows for g in m.groups))
    if not names:
        return ""
    points = [_point(n, c, gm) for n, c, m in rows for gm in m.groups.values()]
    points += [_point(n, c, m) for n, c, m in rows]
    low, high = strip_span(points, _bounds(rows[0][2]))
    head_cells = "".join(
        f'<th data-type="num"><button class="sort" type="button">{_swatch(colour)}'
        f'{esc(model)}</button></th><th>interval</th><th data-type="num"><button class="sort" '
        'type="button">n</button></th>'
        for model, colour, _ in rows
    )
    out = [
        f'<details class="groups"{" open" if len(names) <= OPEN_GROUPS else ""}>'
        f"<summary>{esc(name)} by group: {len(names)} group{'s' if len(names) != 1 else ''}"
        "</summary>"
        '<div class="scroll"><table class="sortable groups"><thead><tr>'
        '<th><button class="sort" type="button">group</button></th>'
        f"{head_cells}<th>values and intervals</th></tr></thead>"
    ]

    notes: list[str | None] = []
    noted: list[Measurement] = []
    # One precision per model's column: its pooled row, its mean of groups, its groups.
    decimals = []
    for _, _, m in rows:
        macro = macro_of(m)
        column = [_triple(m), *(_triple(g) for g in m.groups.values())]
        decimals.append(column_decimals(column + ([macro[:3]] if macro else [])))

    def cells(ms: Sequence[Measurement | None], group: str | None = None) -> str:
        text = ""
        for (model, _, _), m, d in zip(rows, ms, decimals):
            if m is None:
                text += '<td class="num" data-v="">—</td><td></td><td class="num" data-v=""></td>'
                continue
            shown = "error" if m.error is not None else number(m.value, m.ci_low, m.ci_high, d)
            where = name if group is None else f"{name}, group {group}"
            note = coverage_note(m, f"{where} · {model}")
            if group is not None:  # the pooled row's note is under the table above
                notes.append(note)
                if note is not None:
                    noted.append(m)
            text += (
                _num_cell(m.value if m.error is None else None, shown)
                + _interval_cell(m, note, d)
                + _num_cell(m.n, n_text(m))
            )
        return text

    def plot(ms: Sequence[Measurement | None]) -> str:
        drawn = [
            _point(model, colour, m) for (model, colour, _), m in zip(rows, ms) if m is not None
        ]
        return f"<td>{strip(drawn, low, high)}</td>"

    pooled = [m for _, _, m in rows]
    out.append(
        f'<tbody class="fixed"><tr><td>{esc(POOLED_NAME)}</td>{cells(pooled)}{plot(pooled)}</tr>'
    )
    macros = [macro_of(m) for m in pooled]
    if any(macros):
        text = ""
        for macro, d in zip(macros, decimals):
            if macro is None:
                text += '<td class="num">—</td><td></td><td></td>'
                continue
            value, mlow, mhigh, _ = macro
            text += (
                f'<td class="num">{number(value, mlow, mhigh, d)}</td>'
                f'<td class="num">{interval(value, mlow, mhigh, d)}</td><td></td>'
            )
        n_groups = max(m[3] for m in macros if m is not None)
        out.append(
            f"<tr><td>{esc(MACRO_NAME)} (mean of {n_groups} groups)</td>{text}<td></td></tr>"
        )
    out.append("</tbody><tbody>")
    flagged = False
    for group in names:
        ms = [m.groups.get(group) for _, _, m in rows]
        small = any(gm is not None and is_small_group(gm) for gm in ms)
        flagged = flagged or small
        shown = group + (f" {SMALL_GROUP_MARK}" if small else "")
        out.append(
            f'<tr><td data-v="{esc(group)}">{esc(shown)}</td>{cells(ms, group)}{plot(ms)}</tr>'
        )
    out.append("</tbody></table></div>")
    if flagged:
        out.append(f'<p class="meta">{esc(small_group_note())}</p>')
    out.append(_notes(notes, noted))
    out.append("</details>")
    return "".join(out)


def _measurement_section(result: RunResult, label: str, colours: Mapping[Any, str]) -> str:
    rows: list[_Row] = []
    for model, measurements in result.by_model.items():
        for m in measurements.values():
            if m.metric == label:
                reducer = reducer_name(m)
                who = _name(model) if reducer is None else f"{_name(model)} · {reducer}"
                rows.append((who, colours[model], m))
    if not rows:
        return ""
    name = display_name(result, label)
    higher = rows[0][2].higher_is_better
    out = [f'<section class="measurement" data-label="{esc(label)}"><h3>{esc(name)}']
    if name != label:
        out.append(f' <span class="meta">({esc(label)})</span>')
    out.append(f"{direction_badge(higher)}</h3>")
    out.append(
        dot_plot(
            [_point(n, c, m) for n, c, m in rows],
            f"{name}: value and interval per model",
            higher_is_better=higher,
            bounds=_bounds(rows[0][2]),
        )
    )
    out.append(_counts_table(rows, name))
    out.append(_reliability(rows, name))
    out.append(_groups(rows, name))
    out.append("</section>")
    return "".join(out)


def _derived_sections(result: RunResult, labels: Sequence[str], colours: Mapping[Any, str]) -> str:
    """Rows the metrics derived from their measurements, per model, then per group.

    What a row is comes from the metric that derived it (its display name); the interval and
    method columns appear when a row has an interval. A derived row named ``<label>_...``
    shows which way is better as that label does.
    """
    found: dict[str, list[tuple[str | None, Measurement]]] = {}
    by_model = list(result.by_model.values())
    for model, ms in result.by_model.items():
        for d in derived_of(ms):
            if d.metric not in labels:
                found.setdefault(d.metric, []).append((model, d))
    out = []
    for metric, rows in found.items():
        source = next((lb for lb in labels if metric.startswith(f"{lb}_")), None)
        higher = next(
            (m.higher_is_better for ms in by_model for m in ms.values() if m.metric == source), None
        )
        badge = direction_badge(higher) if higher is not None else ""
        name = rows[0][1].name
        title = metric.replace("_", " ").capitalize() if name == metric else name
        spread = any(d.ci_low is not None and d.ci_high is not None for _, d in rows)
        said = "" if spread else "; no interval"
        heads = "<th>interval</th><th>method</th>" if spread else ""
        out.append(
            f'<section class="measurement derived" data-label="{esc(metric)}">'
            f'<h3>{esc(title)} <span class="meta">({esc(metric)})</span>{badge}</h3>'
            f'<p class="meta">Derived from the measurements above by their metric{said}.</p>'
            '<div class="scroll"><table class="counts"><thead><tr><th>model</th><th>value</th>'
            f"{heads}<th>n</th></tr></thead><tbody>"
        )

        def spread_cells(d: Measurement, places: int | None, spread: bool = spread) -> str:
            if not spread:
                return ""
            return (
                f'<td class="num">{interval(d.value, d.ci_low, d.ci_high, places)}</td>'
                f"<td>{esc(method_name(d.ci_method))}</td>"
            )

        places = column_decimals(_triple(d) for _, d in rows)  # one precision per column
        for model, d in rows:
            colour = colours.get(model, STATE_COLOURS["skip"])
            out.append(
                f"<tr><td>{_swatch(colour)}{esc(_name(model))}</td>"
                f'<td class="num">{number(d.value, d.ci_low, d.ci_high, places)}</td>'
                f'{spread_cells(d, places)}<td class="num">{d.n:,}</td></tr>'
            )
        out.append("</tbody></table></div>")
        grouped = [(model, g, gd) for model, d in rows for g, gd in d.groups.items()]
        if grouped:
            out.append(
                f'<details class="groups"><summary>{esc(metric)} by group</summary>'
                '<div class="scroll"><table class="sortable groups"><thead><tr>'
                '<th><button class="sort" type="button">group</button></th>'
                '<th><button class="sort" type="button">model</button></th>'
                '<th data-type="num"><button class="sort" type="button">value</button></th>'
                f"{heads}"
                '<th data-type="num"><button class="sort" type="button">n</button></th>'
                "</tr></thead><tbody>"
            )
            places = column_decimals(_triple(gd) for _, _, gd in grouped)
            for model, g, gd in grouped:
                out.append(
                    f"<tr><td>{esc(g)}</td><td>{esc(_name(model))}</td>"
                    + _num_cell(gd.value, number(gd.value, gd.ci_low, gd.ci_high, places))
                    + spread_cells(gd, places)
                    + _num_cell(gd.n, f"{gd.n:,}")
                    + "</tr>"
                )
            out.append("</tbody></table></div></details>")
        out.append("</section>")
    return "".join(out)


def _comparison(result: RunResult, colours: Mapping[Any, str]) -> str:
    """The comparison section of a run with several models (a note when compare refuses)."""
    from ..comparison import compare

    try:
        comparisons = compare(result)
    except ConfigError as exc:
        return (
            '<section id="comparison"><h2>Comparison</h2><p class="error-note">The models '
            f"cannot be compared: {esc(exc)}</p></section>"
        )
    return comparison_section(comparisons, colours=colours, name_of=partial(display_name, result))


def _provenance(result: RunResult) -> str:
    provenance = result.provenance if isinstance(result.provenance, Mapping) else {}
    rows: list[tuple[str, str]] = []
    for key, value in provenance.items():
        if isinstance(value, Mapping):
            text = ", ".join(f"{k} {v}" if not isinstance(v, Mapping) else str(k)
                             for k, v in value.items())  # fmt: skip
        else:
            text = str(value)
        rows.append((str(key), text))
    rows.append(("seed", str(result.settings.seed)))
    body = "".join(f"<tr><td>{esc(k)}</td><td>{esc(v)}</td></tr>" for k, v in rows)
    return (
        '<details class="provenance"><summary>Provenance</summary><table><tbody>'
        f"{body}</tbody></table></details>"
    )


def _legend(result: RunResult, colours: Mapping[Any, str]) -> str:
    models = [m for m in result.by_model if m is not None]
    parts = ['<div class="legend" id="legend">']
    if models:
        parts.append('<span class="meta">Models:</span>')
        parts += [f"<span>{_swatch(colours[m])}{esc(m)}</span>" for m in models]
    parts.append('<span class="meta">States:</span>')
    parts += [
        f"<span>{_swatch(colour, state=True)}{state}</span>"
        for state, colour in STATE_COLOURS.items()
    ]
    parts.append('<span class="meta">Plots: a dot is the value, its bar the interval.</span></div>')
    return "".join(parts)


def _items_section(labels: Sequence[str], n_items: int, held: int, n_cut: int, live: bool) -> str:
    parts = ['<h2 id="items-heading">Items</h2>']
    if held < n_items:
        if live:
            parts.append(
                f'<p class="note" id="truncated">The viewer reads the {n_items:,} items from '
                "items.parquet as you page, sort and filter.</p>"
            )
        else:
            parts.append(
                f'<p class="note" id="truncated">This page holds the first {held:,} of '
                f"{n_items:,} items; every item is in items.parquet. To page through all of "
                "them, open the report set with <code>itemscore view</code>.</p>"
            )
    if n_cut:
        parts.append(
            f'<p class="note" id="cut">{n_cut:,} text{"s" if n_cut != 1 else ""} longer than '
            f"{MAX_TEXT:,} characters {'are' if n_cut != 1 else 'is'} shown here without "
            "their middle; items.parquet holds every text whole.</p>"
        )
    sizes = "".join(
        f'<option value="{s}"{" selected" if s == 50 else ""}>{s} per page</option>'
        for s in PAGE_SIZES
    )
    parts.append(
        '<div id="filters"><input id="q" type="search" placeholder="Filter: id, input, output, '
        'reason…" aria-label="filter text"><select id="f-model" aria-label="model">'
        '<option value="">every model</option></select><select id="f-metric" '
        'aria-label="metric"><option value="">every metric</option></select>'
        '<select id="f-status" aria-label="state"><option value="">every state</option>'
        f'</select><select id="f-size" aria-label="items per page">{sizes}</select>'
        '<span id="count" class="meta"></span></div>'
    )
    pager = (
        '<div class="pager"><button type="button" id="p-first" aria-label="first page">«'
        '</button><button type="button" id="p-prev" aria-label="previous page">&lsaquo;</button>'
        '<span id="page" class="meta"></span><button type="button" id="p-next" '
        'aria-label="next page">&rsaquo;</button><button type="button" id="p-last" '
        'aria-label="last page">»</button></div>'
    )
    parts.append(pager)

    def sortable(key: str, text: str, css: str = "") -> str:
        extra = f' class="{css}" data-label="{esc(text)}"' if css else ""
        return (
            f'<th data-sort="{esc(key)}"{extra}><button class="sort" type="button">{esc(text)}'
            "</button></th>"
        )

    header = "".join(sortable(f"metric:{label}", label, "metric") for label in labels)
    parts.append(
        '<div class="scroll"><table id="items"><thead><tr>'
        + sortable("", "#")
        + sortable("id", "id")
        + sortable("model", "model")
        + sortable("group", "group")
        + f"<th>input</th><th>output</th><th>expected</th>{header}</tr></thead>"
        "<tbody></tbody></table></div>"
    )
    return "".join(parts)


def report_html(
    result: RunResult,
    *,
    source: Mapping[str, Any] | None = None,
    max_items: int | None = None,
    back: str | None = None,
) -> str:
    """The text of ``report.html``.

    Args:
        result: The run.
        source: Where the page may ask for the items it does not hold: ``{"items": URL}``
            of the viewer that serves it (the policy then allows that server); ``None`` for
            the file, which asks nothing of anyone.
        max_items: The items the page holds (default :data:`MAX_ITEMS`).
        back: The address of the viewer's list of runs, linked at the top (viewer only).
    """
    return "".join(_page_parts(result, source=source, max_items=max_items, back=back))


def _page_parts(
    result: RunResult,
    *,
    source: Mapping[str, Any] | None,
    max_items: int | None,
    back: str | None,
) -> list[str]:
    """The page's text in pieces, in order (see :func:`report_html`)."""
    labels = labels_of(result)
    colours = model_colours(list(result.by_model))
    n_items = len(result.items)
    held_limit = MAX_ITEMS if max_items is None else max_items
    models = [m for m in result.by_model if m is not None]
    data, held, n_cut = items_pieces(
        result.table.rows(),
        labels=labels,
        models=models,
        total=n_items,
        graded={m.metric for m in result.measurements.values() if m.aggregation == "ratio"},
        max_items=held_limit,
        limit=MAX_TEXT,
        source=source,
    )
    suite = esc(result.suite_id)
    confidence = confidence_of(result)
    created = result.provenance.get("created") if isinstance(result.provenance, Mapping) else None
    meta = [
        f"{n_items:,} item{'s' if n_items != 1 else ''}",
        # Items without a model column have no model to count: "0 models" would mislead.
        *([f"{len(models)} model{'s' if len(models) != 1 else ''}"] if models else []),
        f"{len(labels)} measurement{'s' if len(labels) != 1 else ''}",
        f"{confidence * 100:g}% intervals",
    ]
    if created:
        meta.append(f"created {esc(created)}")
    csp = policy(script=SCRIPT, connect=source is not None)
    parts = [head(f"itemscore report: {result.suite_id}", CSS, csp)]
    if back is not None:
        parts.append(f'<p class="meta"><a href="{esc(back)}">← every run</a></p>')
    parts += [
        f'<h1>itemscore report: <span id="suite">{suite}</span></h1>',
        f'<p class="meta">{" · ".join(meta)}</p>',
        _provenance(result),
        _legend(result, colours),
        "<h2>Measurements</h2>",
    ]
    parts += [_measurement_section(result, label, colours) for label in labels]
    parts.append(_derived_sections(result, labels, colours))
    if len(models) >= 2:  # the leaderboard and the comparison of the models
        made = run_boards(result)
        name_of = partial(display_name, result)
        parts.append(
            leaderboard_section(made.boards, made.skipped, colours=colours, name_of=name_of)
        )
        parts.append(_comparison(result, colours))
    parts.append(_items_section(labels, n_items, held, n_cut, live=source is not None))
    parts.append('<script type="application/json" id="items-data">')
    parts += data
    parts.append(f"</script><script>{SCRIPT}</script></main></body></html>\n")
    return parts


def write(result: RunResult, path: Path) -> None:
    """Write ``report.html`` for ``result`` to ``path``, piece by piece (never one text)."""
    with open_report(path) as handle:
        handle.writelines(_page_parts(result, source=None, max_items=None, back=None))
