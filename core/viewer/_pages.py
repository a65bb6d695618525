"""The viewer's own pages: the list of runs, two runs compared, the views across verdicts.

- the list: every run with its headline measurements (metric label and value per model) and
  provenance, and forms to compare two runs or list the items that changed between them;
- a comparison of two runs (:func:`compare_page`);
- the items that changed between two runs (:func:`changed_page`) and the questions a run's
  models disagree on (:func:`disagree_page`), paged with links;
- messages.

They hold no script (their policy allows none) and link only to the viewer's own addresses;
every text from the data (folder names, suites, models, provenance, items) is escaped.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any

from .._records import ItemResult
from .._result import RunResult
from ..comparison import Comparison
from ..reports._html_compare import comparison_section
from ..reports._html_data import cut_middle
from ..reports._html_markup import esc, head, policy
from ..reports._html_numbers import number
from ..reports._html_script import CSS
from ..reports._html_svg import model_colours
from ..summary._summary import display_name
from ._runs import Headline, RunInfo
from ._views import CHANGES, Changed, Disagreement, Question

__all__ = [
    "PAGE_POLICY",
    "changed_page",
    "compare_page",
    "disagree_page",
    "index_page",
    "message_page",
    "run_address",
]

#: The policy of these pages: no script, forms sent only to the viewer.
PAGE_POLICY = policy(script=None, forms=True)
#: Characters of an item's text these pages show (the middle of a longer one is cut).
SHOWN_TEXT = 1200
#: How each kind of change is named.
CHANGE_NAMES = {
    "": "every change",
    "ok-fail": "ok → fail",
    "fail-ok": "fail → ok",
    "other": "other",
}
_CSS = (
    CSS
    + """
.scores div{white-space:nowrap}.scores .model{color:#555}
.view td.text div{white-space:pre-wrap;word-break:break-word;max-width:300px;max-height:9em;
overflow:auto}
.view td.reason{color:#555;font-size:12px}
.choices a,.choices b{margin-right:10px}
form.pick{margin:6px 0}
"""
)


def run_address(token: str) -> str:
    """The address of a run's report."""
    return f"/run/{token}/"


def _provenance_cells(provenance: Mapping[str, Any]) -> str:
    def get(key: str) -> str:
        value = provenance.get(key)
        return "" if value is None else str(value)

    duration = provenance.get("duration_s")
    took = f"{duration:.2f} s" if isinstance(duration, (int, float)) else ""
    data = provenance.get("data")
    source = ""
    if isinstance(data, Mapping):
        name = data.get("path") or data.get("file") or ""
        digest = str(data.get("sha256") or "")[:12]
        source = f"{name} {digest}".strip()
    return (
        f'<td>{esc(get("created"))}</td><td class="num">{esc(took)}</td>'
        f"<td>{esc(get('itemscore_version'))}</td><td>{esc(get('python'))}</td>"
        f"<td>{esc(source)}</td>"
    )


def _address(path: str, **query: Any) -> str:
    """A viewer address with its query (empty fields left out), escaped for an attribute."""
    fields = {k: str(v) for k, v in query.items() if v not in (None, "")}
    return esc(path + ("?" + urllib.parse.urlencode(fields) if fields else ""))


def _scores_cell(scores: Sequence[Headline]) -> str:
    """The headline measurements: one line per model, ``label value`` per metric."""
    lines: dict[str | None, list[str]] = {}
    for h in scores:
        lines.setdefault(h.model, []).append(
            f'{esc(h.label)} <span class="num" data-v="{"" if h.value is None else h.value!r}">'
            f"{esc(number(h.value, h.low, h.high))}</span>"
        )
    out = []
    for model, parts in lines.items():
        name = "" if model is None else f'<span class="model">{esc(model)}:</span> '
        out.append(f"<div>{name}{' · '.join(parts)}</div>")
    return f'<td class="scores">{"".join(out) or "—"}</td>'


def _views_cell(info: RunInfo) -> str:
    if len(info.models) < 2:
        return "<td></td>"
    return f'<td><a href="{_address("/disagree", run=info.run.token)}">models disagree</a></td>'


def _two_runs_forms(usable: Sequence[RunInfo]) -> str:
    """The forms that take two runs: compare them, or list the items that changed."""
    if len(usable) < 2:
        return ""

    def options(second: bool, suffix: str) -> str:
        return "".join(
            f'<option value="{esc(i.run.token)}"{" selected" if second and n == 1 else ""}>'
            f"{esc(i.run.name)} · {esc(i.suite)}{suffix}</option>"
            for n, i in enumerate(usable)
        )

    labels: list[str] = []
    for info in usable:
        labels += [label for label in info.labels if label not in labels]
    metrics = "".join(f'<option value="{esc(label)}">{esc(label)}</option>' for label in labels)
    return (
        '<h2>Compare two runs</h2><p class="meta">The models of the two runs are compared '
        "on the items they share, as <code>itemscore compare A B</code> does; runs on "
        "different data are refused.</p>"
        '<form method="get" action="/compare" id="compare-form"><label>baseline '
        f'<select name="a" id="pick-a">{options(False, "")}</select></label> <label>candidate '
        f'<select name="b" id="pick-b">{options(True, "")}</select></label> '
        '<button type="submit">Compare</button></form>'
        '<h2>Items that changed between two runs</h2><p class="meta">The items of the two '
        "runs are paired by id (and model, when both runs have the same models); listed are "
        "those whose state or value for the metric differs: ok → fail, fail → ok and the "
        "rest, in the first run's order.</p>"
        '<form method="get" action="/changed" id="changed-form"><label>first run '
        f'<select name="a" id="changed-a">{options(False, "")}</select></label> '
        f'<label>second run <select name="b" id="changed-b">{options(True, "")}</select>'
        f'</label> <label>metric <select name="metric" id="changed-metric">{metrics}'
        '</select></label> <button type="submit">List the changes</button></form>'
    )


def index_page(infos: Sequence[RunInfo], folders: Sequence[str]) -> str:
    """Every run with its scores and provenance, a link to its report, and forms for two."""
    rows = []
    for info in infos:
        run = info.run
        if info.error is not None:
            rows.append(
                f'<tr><td>{esc(run.name)}</td><td colspan="11"><span class="error-note">'
                f"{esc(info.error)}</span></td></tr>"
            )
            continue
        rows.append(
            f'<tr><td><a href="{run_address(run.token)}">{esc(run.name)}</a></td>'
            f"<td>{esc(info.suite)}</td><td>{esc(', '.join(info.models) or '—')}</td>"
            + _scores_cell(info.scores)
            + f'<td class="num">{"" if info.n_items is None else f"{info.n_items:,}"}</td>'
            + _views_cell(info)
            + _provenance_cells(info.provenance)
            + "</tr>"
        )
    usable = [i for i in infos if i.error is None]
    return (
        head("itemscore view", _CSS, PAGE_POLICY)
        + "<h1>itemscore view</h1>"
        + f'<p class="meta">{len(infos)} run{"s" if len(infos) != 1 else ""} in '
        + esc(", ".join(folders))
        + ". Open a run to see its report; every item is read from its items.parquet. The "
        "scores are each model's measurements, as results.json records them.</p>"
        + '<div class="scroll"><table class="runs" id="runs"><thead><tr><th>run</th>'
        "<th>suite</th><th>models</th><th>scores</th><th>items</th><th>views</th>"
        "<th>created</th><th>took</th><th>itemscore</th><th>python</th><th>data</th></tr>"
        "</thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div>"
        + _two_runs_forms(usable)
        + "</main></body></html>\n"
    )


def _top(title: str, css: str = CSS) -> str:
    """A page's head and the link back to the list of runs."""
    return head(title, css, PAGE_POLICY) + '<p class="meta"><a href="/">← every run</a></p>'


def _sides(*sides: tuple[str, RunInfo]) -> str:
    """The runs a page is about, one row each: its role, name, suite, models, provenance."""
    rows = "".join(
        f'<tr><td>{role}</td><td><a href="{run_address(info.run.token)}">{esc(info.run.name)}'
        f"</a></td><td>{esc(info.suite)}</td><td>{esc(', '.join(info.models) or '—')}</td>"
        + _provenance_cells(info.provenance)
        + "</tr>"
        for role, info in sides
    )
    return (
        '<div class="scroll"><table class="runs"><thead><tr><th></th><th>run</th>'
        "<th>suite</th><th>models</th><th>created</th><th>took</th><th>itemscore</th>"
        f"<th>python</th><th>data</th></tr></thead><tbody>{rows}</tbody></table></div>"
    )


def compare_page(
    a: RunInfo,
    b: RunInfo,
    result_a: RunResult,
    comparisons: Sequence[Comparison] | None,
    refusal: str | None,
) -> str:
    """Two runs compared: the runs, then the comparison section (or why compare refused)."""
    names: list[str | None] = []
    for c in comparisons or ():
        names += [n for n in (c.baseline, c.candidate) if n not in names]
    body = (
        f'<p class="error-note" id="refused">These runs cannot be compared: {esc(refusal)}</p>'
        if refusal is not None
        else comparison_section(
            comparisons or (),
            colours=model_colours(names),
            name_of=lambda label: display_name(result_a, label),
        )
        or '<p class="meta">The two runs share no metric label to compare.</p>'
    )
    return (
        _top("itemscore view: comparison")
        + "<h1>Comparing two runs</h1>"
        + _sides(("baseline", a), ("candidate", b))
        + body
        + "</main></body></html>\n"
    )


def message_page(title: str, message: str) -> str:
    """A page that says what went wrong, with a link back to the list."""
    return (
        _top(f"itemscore view: {title}")
        + f"<h1>{esc(title)}</h1>"
        + f'<p class="error-note" id="message">{esc(message)}</p></main></body></html>\n'
    )


def _cut(text: str | None) -> str:
    """A text as these pages show it: its two ends when long, the middle cut (and said)."""
    return "" if text is None else cut_middle(text, SHOWN_TEXT)


def _text_cell(text: str | None, missing: str = "") -> str:
    return f'<td class="text"><div>{esc(_cut(text)) if text is not None else missing}</div></td>'


def _verdict(item: ItemResult, label: str) -> str:
    """An item's score of ``label``: its state and value, as a cell's markup (the reason below)."""
    found = item.scores.get(label)
    if found is None:
        return "—"
    value, reason, state = found.value, found.reason, found.status.value
    # Four significant digits, as the report's items table shows a value (toPrecision(4)).
    shown = "" if value is None else f'<span class="num">{float(value):.4g}</span> '
    why = f'<div class="reason">{esc(_cut(reason))}</div>' if reason else ""
    return f'{shown}<span class="{state}">{state}</span>{why}'


def _pager(path: str, query: Mapping[str, Any], offset: int, limit: int, total: int) -> str:
    """``a to b of n`` with links to the first, previous, next and last pages."""
    last = max(0, (total - 1) // limit * limit)
    links = []
    for text, to, enabled in (
        ("« first", 0, offset > 0),
        ("&lsaquo; previous", max(0, offset - limit), offset > 0),
        ("next &rsaquo;", offset + limit, offset + limit < total),
        ("last »", last, offset + limit < total),
    ):
        if enabled:
            address = _address(path, **query, offset=to or None, limit=limit)
            links.append(f'<a href="{address}" class="page-link">{text}</a>')
        else:
            links.append(f'<span class="meta">{text}</span>')
    shown = f"{offset + 1:,}&ndash;{min(total, offset + limit):,} of {total:,}" if total else "none"
    return (
        f'<div class="pager">{"".join(links[:2])}<span class="meta range">{shown}</span>'
        f"{''.join(links[2:])}</div>"
    )


def _choices(
    path: str,
    query: Mapping[str, Any],
    key: str,
    options: Mapping[str, str],
    current: str,
    title: str,
) -> str:
    """Links that change one field of the address (the current one in bold), after ``title``."""
    out = [f'<span class="meta">{esc(title)}:</span> ']
    for value, text in options.items():
        if value == current:
            out.append(f"<b>{esc(text)}</b>")
        else:
            out.append(f'<a href="{_address(path, **{**query, key: value})}">{esc(text)}</a>')
    return f'<p class="choices" id="{esc(key)}-choices">{"".join(out)}</p>'


def changed_page(
    a: RunInfo,
    b: RunInfo,
    label: str,
    labels: Sequence[str],
    query: Mapping[str, Any],
    changed: Changed,
    rows: Sequence[tuple[int, ItemResult, int, ItemResult]],
    offset: int,
    limit: int,
) -> str:
    """The items whose verdict on ``label`` changed from run ``a`` to run ``b``, one page."""
    change = str(query.get("change") or "")
    counts = changed.counts
    total = len(changed.pairs)
    every = sum(counts.values())
    paired = " and ".join(changed.keys)
    summary = (
        f'<p class="meta" id="summary">{changed.shared:,} items are in both runs (paired by '
        f"{esc(paired)}); the state or value of <b>{esc(label)}</b> differs for "
        f"{every:,}: {counts['ok-fail']:,} ok → fail, {counts['fail-ok']:,} fail → ok, "
        f"{counts['other']:,} otherwise."
        + (f" {changed.only_a:,} items are only in the first run." if changed.only_a else "")
        + (f" {changed.only_b:,} items are only in the second run." if changed.only_b else "")
        + "</p>"
    )
    kinds = {"": f"every change ({every:,})"}
    kinds.update({k: f"{CHANGE_NAMES[k]} ({counts[k]:,})" for k in CHANGES})
    base = {k: v for k, v in query.items() if k not in ("offset", "limit")}
    body = []
    for pos_a, item, pos_b, item_b in rows:
        differs = item_b.input != item.input
        body.append(
            f'<tr><td class="num">{pos_a + 1}</td><td>{esc(item.id)}'
            + ("" if item.attempt is None else f" · attempt {item.attempt}")
            + f"</td><td>{esc(item.model or '')}</td>"
            + _text_cell(item.input)
            + _text_cell(" | ".join(item.expected) if item.expected else None)
            + f'<td class="score">{_verdict(item, label)}</td>'
            + _text_cell(item.output, "(no output)")
            + f'<td class="score">{_verdict(item_b, label)}</td>'
            + _text_cell(item_b.output, "(no output)")
            + f'<td class="num">{pos_b + 1}</td>'
            + ('<td class="error">the input differs</td>' if differs else "<td></td>")
            + "</tr>"
        )
    table = (
        '<div class="scroll"><table class="view" id="changed"><thead><tr><th>#</th>'
        "<th>id</th><th>model</th><th>input</th><th>expected</th>"
        f"<th>first run: {esc(label)}</th><th>first run: output</th>"
        f"<th>second run: {esc(label)}</th><th>second run: output</th><th>#&nbsp;second</th>"
        "<th></th></tr></thead><tbody>" + "".join(body) + "</tbody></table></div>"
    )
    return (
        _top("itemscore view: items that changed", _CSS)
        + "<h1>Items that changed between two runs</h1>"
        + _sides(("first", a), ("second", b))
        + _choices("/changed", base, "metric", {x: x for x in labels}, label, "metric")
        + summary
        + _choices("/changed", base, "change", kinds, change, "show")
        + _pager("/changed", base, offset, limit, total)
        + table
        + _pager("/changed", base, offset, limit, total)
        + "</main></body></html>\n"
    )


def disagree_page(
    info: RunInfo,
    label: str,
    labels: Sequence[str],
    query: Mapping[str, Any],
    found: Disagreement,
    questions: Sequence[tuple[Question, Mapping[str, ItemResult]]],
    models: Sequence[str],
    offset: int,
    limit: int,
) -> str:
    """The questions on which the run's models give ``label`` different states, one page."""
    total = found.questions.num_rows
    base = {k: v for k, v in query.items() if k not in ("offset", "limit")}
    oks = ", ".join(f"{esc(m)} {n:,}" for m, n in found.ok_by_model.items())
    summary = (
        f'<p class="meta" id="summary">{total:,} of the {found.compared:,} questions that two '
        f"models or more answered get different states on <b>{esc(label)}</b> "
        f"(ok in them: {oks}). A state is the verdict of a metric that says right or wrong; "
        "for other metrics ok only says that a value was given.</p>"
    )
    body = []
    for question, by_model in questions:
        item = next(iter(by_model.values()), None)
        cells = []
        for model in models:
            row = by_model.get(model)
            if row is None:
                cells.append('<td class="score">—</td><td class="text"><div></div></td>')
                continue
            cells.append(f'<td class="score">{_verdict(row, label)}</td>')
            cells.append(_text_cell(row.output, "(no output)"))
        body.append(
            f'<tr><td class="num">{min(question.positions.values(), default=0) + 1}</td>'
            f"<td>{esc(question.id)}"
            + ("" if question.attempt is None else f" · attempt {question.attempt}")
            + "</td>"
            + _text_cell(item.input if item else None)
            + _text_cell(" | ".join(item.expected) if item and item.expected else None)
            + "".join(cells)
            + "</tr>"
        )
    heads = "".join(f"<th>{esc(m)}: {esc(label)}</th><th>{esc(m)}: output</th>" for m in models)
    table = (
        '<div class="scroll"><table class="view" id="disagree"><thead><tr><th>#</th>'
        f"<th>id</th><th>input</th><th>expected</th>{heads}</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table></div>"
    )
    return (
        _top("itemscore view: models disagree", _CSS)
        + f'<h1>Where the models disagree: <a href="{run_address(info.run.token)}">'
        f"{esc(info.run.name)}</a></h1>"
        + _choices("/disagree", base, "metric", {x: x for x in labels}, label, "metric")
        + summary
        + _pager("/disagree", base, offset, limit, total)
        + table
        + _pager("/disagree", base, offset, limit, total)
        + "</main></body></html>\n"
    )
