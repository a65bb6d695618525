r"""``report.html``: one self-contained page (inline CSS, SVG and script; nothing fetched).

Per measurement: the models' values with their intervals as a plot, the four-state counts,
and per-group plots; then a filterable table of the items with their scores and reasons. The
filters can be preset from the address: ``report.html#state=error&metric=f1&q=paris``.

Every text from the data is escaped: in the markup with :func:`html.escape` (after
:func:`~itemscore.reports._text.printable`), and the items travel as JSON inside a
``<script type="application/json">`` block with ``<``, ``>`` and ``&`` written as ``\u``
escapes, so no text can close the block; the script shows them with ``textContent``, never as
markup. A Content-Security-Policy forbids every network request and every script but the
page's own.

The page stays a size a browser opens whatever the run: it holds the first
:data:`MAX_ITEMS` items, each input, output, expected answer and reason at most about
:data:`MAX_TEXT` characters (the middle of a longer one is cut), and says so above the table
when it did either; ``items.parquet``
holds every item whole. The items are read once, in order, and only as far as the page
holds them.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from itertools import islice
from pathlib import Path
from typing import Any

from .._records import ItemResult, Measurement, Status
from .._result import RunResult
from ._files import open_report
from ._rows import STATUS_NAMES, Score, score_rows
from ._summary import (
    MACRO_NAME,
    POOLED_NAME,
    SMALL_GROUP_MARK,
    confidence_of,
    display_name,
    is_small_group,
    labels_of,
    macro_of,
    method_name,
    n_text,
    reducer_name,
    small_group_note,
)
from ._text import printable, visible

__all__ = ["FILENAME", "MAX_ITEMS", "MAX_TEXT", "write"]

#: The file this format writes.
FILENAME = "report.html"
#: At most this many items go into the page's table (all of them are in items.parquet).
MAX_ITEMS = 20_000
#: Inputs, outputs, expected answers and reasons longer than this keep only their first and
#: last halves of it in the page.
MAX_TEXT = 4_000

_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")
_STATE_COLOURS = {"ok": "#2ca02c", "fail": "#d62728", "skip": "#bbbbbb", "error": "#ff7f0e"}
_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)
_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#222}
main{max-width:1100px;margin:0 auto;padding:16px 24px}
h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}
h3{font-size:15px;margin:18px 0 6px}
table{border-collapse:collapse;margin:6px 0}th,td{padding:3px 8px;text-align:left;
vertical-align:top;border-bottom:1px solid #eee}th{background:#eef2f8;position:sticky;top:0}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.meta{color:#555}.note{color:#8a5a00;background:#fff6e0;padding:4px 8px;display:inline-block}
.text{white-space:pre-wrap;word-break:break-word;max-width:320px}
.ok{color:#1a7f1a}.fail{color:#b22222}.skip{color:#777}.error{color:#c06000}
#filters{display:flex;gap:10px;flex-wrap:wrap;margin:8px 0}#filters input{width:260px}
#items td:nth-child(-n+3){white-space:nowrap}
svg text{font:12px system-ui,sans-serif}
"""
_SCRIPT = """
(function(){
var data=JSON.parse(document.getElementById('items-data').textContent);
var labels=data.labels,items=data.items,shown=500;
var q=document.getElementById('q'),fm=document.getElementById('f-model'),
fl=document.getElementById('f-metric'),fs=document.getElementById('f-status');
var body=document.querySelector('#items tbody'),count=document.getElementById('count');
function option(sel,value){var o=document.createElement('option');o.value=value;
o.textContent=value;sel.appendChild(o);}
data.models.forEach(function(m){option(fm,m);});labels.forEach(function(l){option(fl,l);});
['ok','fail','skip','error'].forEach(function(s){option(fs,s);});
function cell(tr,text,cls){var td=document.createElement('td');td.textContent=text;
if(cls)td.className=cls;tr.appendChild(td);return td;}
function render(){
var text=q.value.toLowerCase(),model=fm.value,metric=fl.value,status=fs.value;
while(body.firstChild)body.removeChild(body.firstChild);
var n=0,total=0;
items.forEach(function(it){
if(model&&it.model!==model)return;
if(status){var which=metric?[metric]:labels;
if(!which.some(function(l){return it.scores[l]&&it.scores[l][0]===status;}))return;}
if(text){var hay=[it.id,it.output,it.expected,it.input,it.group,it.model].join(' ');
labels.forEach(function(l){var s=it.scores[l];if(s&&s[2])hay+=' '+s[2];});
if(hay.toLowerCase().indexOf(text)<0)return;}
total++;if(n>=shown)return;n++;
var tr=document.createElement('tr');
cell(tr,it.attempt==null?it.id:it.id+' \u00b7 attempt '+it.attempt);
cell(tr,it.model||'');cell(tr,it.group||'');
cell(tr,it.output===null?'(no output)':it.output,'text');cell(tr,it.expected||'','text');
labels.forEach(function(l){var s=it.scores[l];
if(metric&&l!==metric){return;}
if(!s){cell(tr,'');return;}
var td=cell(tr,(s[1]===null?'':(+s[1]).toFixed(4))+' '+s[0],s[0]);
if(s[2]){var r=document.createElement('div');r.className='text';r.textContent=s[2];
td.appendChild(r);}});
body.appendChild(tr);});
count.textContent=total+' matching item'+(total===1?'':'s')+
(total>n?' (showing the first '+n+')':'');
document.querySelectorAll('#items thead th.metric').forEach(function(th){
th.style.display=(metric&&th.dataset.label!==metric)?'none':'';});}
[q,fm,fl,fs].forEach(function(el){el.addEventListener('input',render);});
var preset=new URLSearchParams(location.hash.slice(1));
if(preset.has('q'))q.value=preset.get('q');
if(preset.has('model'))fm.value=preset.get('model');
if(preset.has('metric'))fl.value=preset.get('metric');
if(preset.has('state'))fs.value=preset.get('state');
render();})();
"""


def _e(text: object) -> str:
    """Text from the data, escaped for HTML markup and SVG."""
    return html.escape(printable(str(text)), quote=True)


def _num(value: float | None, digits: int = 4) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _scale(measurements: Sequence[Measurement]) -> tuple[float, float]:
    """The axis range for some measurements: [0, 1] when they fit it, else their span."""
    points = [
        v
        for m in measurements
        for v in (m.value, m.ci_low, m.ci_high)
        if v is not None and m.error is None
    ]
    if not points:
        return 0.0, 1.0
    low, high = min(points), max(points)
    if low >= 0.0 and high <= 1.0:
        return 0.0, 1.0
    pad = (high - low) * 0.05 or abs(high) * 0.05 or 1.0
    return low - pad, high + pad


def _dot_plot(rows: Sequence[tuple[str, str, Measurement]], title: str) -> str:
    """An SVG: one row per (name, colour, measurement), the value as a dot, its interval a bar."""
    width, left, right, row_h, top = 720, 190, 110, 22, 22
    low, high = _scale([m for _, _, m in rows])
    span = high - low or 1.0
    plot_w = width - left - right

    def x(v: float) -> float:
        return left + (v - low) / span * plot_w

    height = top + row_h * len(rows) + 24
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="{_e(title)}" class="plot">',
        f'<line x1="{left}" y1="{top - 6}" x2="{left}" y2="{height - 20}" stroke="#ccc"/>',
    ]
    for tick in range(5):
        v = low + span * tick / 4
        tx = x(v)
        parts.append(
            f'<line x1="{tx:.1f}" y1="{top - 6}" x2="{tx:.1f}" y2="{height - 20}" '
            'stroke="#eee"/>'
            f'<text x="{tx:.1f}" y="{height - 6}" text-anchor="middle" fill="#666">'
            f"{v:.3g}</text>"
        )
    for index, (name, colour, m) in enumerate(rows):
        y = top + row_h * index + row_h / 2
        parts.append(
            f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{_e(name[:40])}</text>'
        )
        if m.error is not None:
            parts.append(f'<text x="{left + 6}" y="{y + 4:.1f}" fill="#c06000">error</text>')
            continue
        if m.value is None:
            parts.append(f'<text x="{left + 6}" y="{y + 4:.1f}" fill="#777">no value</text>')
            continue
        if m.ci_low is not None and m.ci_high is not None:
            parts.append(
                f'<line x1="{x(m.ci_low):.1f}" y1="{y:.1f}" x2="{x(m.ci_high):.1f}" '
                f'y2="{y:.1f}" stroke="{colour}" stroke-width="2"/>'
            )
        parts.append(
            f'<circle cx="{x(m.value):.1f}" cy="{y:.1f}" r="5" fill="{colour}">'
            f"<title>{_e(name)}: {_num(m.value)} [{_num(m.ci_low)}, {_num(m.ci_high)}]</title>"
            f'</circle><text x="{width - right + 8}" y="{y + 4:.1f}">{_num(m.value)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _state_bar(m: Measurement) -> str:
    """A small stacked bar of the four states."""
    total = sum(m.counts.get(s, 0) for s in Status) or 1
    x, parts = 0.0, ['<svg xmlns="http://www.w3.org/2000/svg" width="160" height="12">']
    for state in Status:
        w = 160 * m.counts.get(state, 0) / total
        if w:
            parts.append(
                f'<rect x="{x:.1f}" y="0" width="{w:.1f}" height="12" '
                f'fill="{_STATE_COLOURS[state.value]}"><title>{state.value}: '
                f"{m.counts.get(state, 0)}</title></rect>"
            )
        x += w
    parts.append("</svg>")
    return "".join(parts)


def _measurement_section(result: RunResult, label: str, colours: dict[Any, str]) -> str:
    rows: list[tuple[str, str, Measurement]] = []
    for model, measurements in result.by_model.items():
        for m in measurements.values():
            if m.metric == label:
                who = model if model is not None else "all items"
                reducer = reducer_name(m)
                if reducer is not None:
                    who = f"{who} · {reducer}"
                rows.append((who, colours[model], m))
    if not rows:
        return ""
    name = display_name(result, label)
    out = [f'<section class="measurement" data-label="{_e(label)}"><h3>{_e(name)}']
    if name != label:
        out.append(f' <span class="meta">({_e(label)})</span>')
    out.append("</h3>")
    out.append(_dot_plot(rows, f"{name}: value and interval per model"))
    out.append(
        '<table class="counts"><thead><tr><th>model</th><th>value</th><th>interval</th>'
        "<th>method</th><th>n</th><th>ok</th><th>fail</th><th>skip</th><th>error</th>"
        "<th>states</th></tr></thead><tbody>"
    )
    for model_name, _, m in rows:
        interval = (
            f"[{_num(m.ci_low)}, {_num(m.ci_high)}]"
            if m.ci_low is not None and m.ci_high is not None
            else ""
        )
        value = "error: " + m.error if m.error is not None else _num(m.value)
        out.append(
            f'<tr><td>{_e(model_name)}</td><td class="num">{_e(value)}</td>'
            f'<td class="num">{interval}</td><td>{_e(method_name(m.ci_method))}</td>'
            f'<td class="num">{_e(n_text(m))}</td>'
            + "".join(f'<td class="num">{m.counts.get(s, 0)}</td>' for s in Status)
            + f"<td>{_state_bar(m)}</td></tr>"
        )
    out.append("</tbody></table>")
    groups: dict[str, list[tuple[str, str, Measurement]]] = {}
    for model_name, colour, m in rows:
        for group, gm in m.groups.items():
            mark = f" {SMALL_GROUP_MARK}" if is_small_group(gm) else ""
            groups.setdefault(group, []).append((f"{group}{mark} · {model_name}", colour, gm))
    if groups:
        out.append(f"<h3>{_e(name)} by group</h3>")
        flat = [row for group in groups for row in groups[group]]
        out.append(_dot_plot(flat, f"{name}: value and interval per group and model"))
        out.append(_group_table(rows))
    out.append("</section>")
    return "".join(out)


def _interval(low: float | None, high: float | None) -> str:
    return f"[{_num(low)}, {_num(high)}]" if low is not None and high is not None else ""


def _group_table(rows: Sequence[tuple[str, str, Measurement]]) -> str:
    """Per model: the pooled (micro) value, the macro value, then each group, small ones marked."""
    out = [
        '<table class="counts groups"><thead><tr><th>model</th><th>aggregate</th><th>value</th>'
        "<th>interval</th><th>n</th></tr></thead><tbody>"
    ]
    flagged = False
    for model_name, _, m in rows:
        if not m.groups:
            continue
        cells: list[tuple[str, float | None, float | None, float | None, str]] = [
            (POOLED_NAME, m.value, m.ci_low, m.ci_high, n_text(m))
        ]
        macro = macro_of(m)
        if macro is not None:
            value, low, high, n_groups = macro
            cells.append((f"{MACRO_NAME} (mean of {n_groups} groups)", value, low, high, ""))
        for group, gm in m.groups.items():
            small = is_small_group(gm)
            flagged = flagged or small
            cells.append((group + (f" {SMALL_GROUP_MARK}" if small else ""), gm.value,
                          gm.ci_low, gm.ci_high, n_text(gm)))  # fmt: skip
        for what, shown, lo, hi, n in cells:
            out.append(
                f'<tr><td>{_e(model_name)}</td><td>{_e(what)}</td><td class="num">{_num(shown)}'
                f'</td><td class="num">{_interval(lo, hi)}</td><td class="num">{n}</td></tr>'
            )
    out.append("</tbody></table>")
    if flagged:
        out.append(f'<p class="meta">{_e(small_group_note())}</p>')
    return "".join(out)


_string = json.encoder.encode_basestring  # JSON string syntax, C accelerated (no ASCII escaping)


def _script_safe(text: str) -> str:
    """JSON text made safe inside ``<script>``: no ``<``, ``>``, ``&`` or line separators."""
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _cut(value: str, cut: list[int]) -> str:
    """A text longer than :data:`MAX_TEXT` as JSON: its two ends, the middle cut (counted)."""
    cut[0] += 1  # the middle goes: a long answer often ends with its point
    half = MAX_TEXT // 2
    return _string(
        visible(f"{value[:half]}…[{len(value) - 2 * half:,} characters cut]…{value[-half:]}")
    )


def _item_json(
    item: ItemResult, scores: list[tuple[str, Score]], names: dict[str, str], cut: list[int]
) -> str:
    """The JSON object of one item in the page's data (before :func:`_script_safe`).

    Inputs, outputs, expected answers and reasons longer than :data:`MAX_TEXT` characters keep
    their first and last ``MAX_TEXT // 2`` with ``…[N characters cut]…`` between; ``cut[0]``
    counts the texts cut.
    """
    limit = MAX_TEXT
    parts = []
    for label, (code, value, reason, _) in scores:
        name = names.get(label)
        if name is None:
            name = names[label] = _string(printable(label))
        shown = "null" if value is None else repr(float(value))  # scores are finite
        why = (
            "null"
            if reason is None
            else _string(visible(reason))
            if len(reason) <= limit
            else _cut(reason, cut)
        )
        parts.append(f'{name}: ["{STATUS_NAMES[code]}", {shown}, {why}]')
    texts = []
    for text in (
        item.input,
        item.output,
        " | ".join(item.expected) if item.expected else None,
    ):
        texts.append(
            "null"
            if text is None
            else _string(visible(text))
            if len(text) <= limit
            else _cut(text, cut)
        )
    model, group = item.model, item.group
    attempt = "" if item.attempt is None else f'"attempt": {item.attempt}, '
    return (
        f'{{"id": {_string(printable(item.id))}, {attempt}'
        f'"model": {"null" if model is None else _string(printable(model))}, '
        f'"group": {"null" if group is None else _string(printable(group))}, '
        f'"input": {texts[0]}, "output": {texts[1]}, "expected": {texts[2]}, '
        f'"scores": {{{", ".join(parts)}}}}}'
    )


def _items_data(result: RunResult, labels: list[str]) -> tuple[str, int]:
    """The page's data as JSON (labels, models, the first :data:`MAX_ITEMS` items), texts cut.

    The items are read once, in order, and only as far as the page holds them.
    """
    names: dict[str, str] = {}
    cut = [0]
    rows = list(islice(score_rows(result), MAX_ITEMS))
    if any(item.attempt is not None for item, _ in rows):
        # Attempts sit under their question: questions in order of appearance, then attempts.
        first: dict[tuple[str | None, str], int] = {}
        for index, (item, _) in enumerate(rows):
            first.setdefault((item.model, item.id), index)
        rows.sort(key=lambda row: (first[(row[0].model, row[0].id)], row[0].attempt or 0))
    items = ", ".join(_item_json(item, scores, names, cut) for item, scores in rows)
    head = json.dumps(
        {
            "labels": [printable(x) for x in labels],
            "models": [printable(m) for m in result.by_model if m is not None],
        },
        ensure_ascii=False,
    )
    return _script_safe(f'{head[:-1]}, "items": [{items}]}}'), cut[0]


def report_html(result: RunResult) -> str:
    """The text of ``report.html``."""
    labels = labels_of(result)
    colours = {model: _COLOURS[i % len(_COLOURS)] for i, model in enumerate(result.by_model)}
    data, n_cut = _items_data(result, labels)
    n_items = len(result.items)
    suite = _e(result.suite_id)
    confidence = confidence_of(result)
    provenance = getattr(result, "provenance", None) or {}
    created = provenance.get("created") if isinstance(provenance, dict) else None
    models = [m for m in result.by_model if m is not None]
    meta = [
        f"{n_items} items",
        f"{len(models)} model{'s' if len(models) != 1 else ''}",
        f"{len(labels)} measurement{'s' if len(labels) != 1 else ''}",
        f"{confidence * 100:g}% intervals",
    ]
    if created:
        meta.append(f"created {_e(created)}")
    parts = [
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>itemscore report: {suite}</title><style>{_CSS}</style></head><body><main>",
        f'<h1>itemscore report: <span id="suite">{suite}</span></h1>',
        f'<p class="meta">{" · ".join(meta)}</p>',
    ]
    if models:
        legend = " ".join(
            f'<span style="color:{colours[m]}">●</span> {_e(m)}' for m in result.by_model if m
        )
        parts.append(f'<p class="legend">{legend}</p>')
    parts.append("<h2>Measurements</h2>")
    parts += [_measurement_section(result, label, colours) for label in labels]
    parts.append("<h2>Items</h2>")
    if n_items > MAX_ITEMS:
        parts.append(
            f'<p class="note" id="truncated">This page holds the first {MAX_ITEMS} of '
            f"{n_items} items; every item is in items.parquet.</p>"
        )
    if n_cut:
        parts.append(
            f'<p class="note" id="cut">{n_cut} text{"s" if n_cut != 1 else ""} longer than '
            f"{MAX_TEXT:,} characters {'are' if n_cut != 1 else 'is'} shown here without "
            "their middle; items.parquet holds every text whole.</p>"
        )
    parts.append(
        '<div id="filters"><input id="q" type="search" placeholder="Filter: id, output, '
        'reason…" aria-label="filter text"><select id="f-model" aria-label="model">'
        '<option value="">every model</option></select><select id="f-metric" '
        'aria-label="metric"><option value="">every metric</option></select>'
        '<select id="f-status" aria-label="state"><option value="">every state</option>'
        '</select><span id="count" class="meta"></span></div>'
    )
    header = "".join(
        f'<th class="metric" data-label="{_e(label)}">{_e(label)}</th>' for label in labels
    )
    parts.append(
        '<table id="items"><thead><tr><th>id</th><th>model</th><th>group</th><th>output</th>'
        f"<th>expected</th>{header}</tr></thead><tbody></tbody></table>"
    )
    parts.append(
        f'<script type="application/json" id="items-data">{data}</script>'
        f"<script>{_SCRIPT}</script></main></body></html>\n"
    )
    return "".join(parts)


def write(result: RunResult, path: Path) -> None:
    """Write ``report.html`` for ``result`` to ``path``."""
    with open_report(path) as handle:
        handle.write(report_html(result))
