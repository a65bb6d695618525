"""The viewer's own pages: the list of runs, the comparison of two runs, and messages.

They hold no script (their policy allows none) and link only to the viewer's own addresses;
every text from the data (folder names, suites, models, provenance) is escaped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._compare import Comparison
from .._result import RunResult
from ..reports._html_compare import comparison_section
from ..reports._html_markup import esc, head, policy
from ..reports._html_script import CSS
from ..reports._html_svg import model_colours
from ..reports._summary import display_name
from ._runs import RunInfo

__all__ = ["PAGE_POLICY", "compare_page", "index_page", "message_page", "run_address"]

#: The policy of these pages: no script, forms sent only to the viewer.
PAGE_POLICY = policy(script=None, forms=True)


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


def index_page(infos: Sequence[RunInfo], folders: Sequence[str]) -> str:
    """Every run with its provenance, a link to its report, and a form to compare two."""
    rows = []
    for info in infos:
        run = info.run
        if info.error is not None:
            rows.append(
                f'<tr><td>{esc(run.name)}</td><td colspan="9"><span class="error-note">'
                f"{esc(info.error)}</span></td></tr>"
            )
            continue
        rows.append(
            f'<tr><td><a href="{run_address(run.token)}">{esc(run.name)}</a></td>'
            f"<td>{esc(info.suite)}</td><td>{esc(', '.join(info.models) or '—')}</td>"
            f"<td>{esc(', '.join(info.labels))}</td>"
            f'<td class="num">{"" if info.n_items is None else info.n_items}</td>'
            + _provenance_cells(info.provenance)
            + "</tr>"
        )
    usable = [i for i in infos if i.error is None]
    options = "".join(
        f'<option value="{esc(i.run.token)}">{esc(i.run.name)} · {esc(i.suite)}</option>'
        for i in usable
    )
    second = "".join(
        f'<option value="{esc(i.run.token)}"{" selected" if n == 1 else ""}>'
        f"{esc(i.run.name)} · {esc(i.suite)}</option>"
        for n, i in enumerate(usable)
    )
    form = (
        '<h2>Compare two runs</h2><p class="meta">The models of the two runs are compared '
        "on the items they share, as <code>itemscore compare A B</code> does; runs on "
        "different data are refused.</p>"
        '<form method="get" action="/compare" id="compare-form"><label>baseline '
        f'<select name="a" id="pick-a">{options}</select></label> <label>candidate '
        f'<select name="b" id="pick-b">{second}</select></label> '
        '<button type="submit">Compare</button></form>'
        if len(usable) >= 2
        else ""
    )
    return (
        head("itemscore view", CSS, PAGE_POLICY)
        + "<h1>itemscore view</h1>"
        + f'<p class="meta">{len(infos)} run{"s" if len(infos) != 1 else ""} in '
        + esc(", ".join(folders))
        + ". Open a run to see its report; every item is read from its items.parquet.</p>"
        + '<div class="scroll"><table class="runs" id="runs"><thead><tr><th>run</th>'
        "<th>suite</th><th>models</th><th>metrics</th><th>items</th><th>created</th>"
        "<th>took</th><th>itemscore</th><th>python</th><th>data</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div>"
        + form
        + "</main></body></html>\n"
    )


def _side(role: str, info: RunInfo) -> str:
    return (
        f'<tr><td>{role}</td><td><a href="{run_address(info.run.token)}">{esc(info.run.name)}'
        f"</a></td><td>{esc(info.suite)}</td><td>{esc(', '.join(info.models) or '—')}</td>"
        + _provenance_cells(info.provenance)
        + "</tr>"
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
        head("itemscore view: comparison", CSS, PAGE_POLICY)
        + '<p class="meta"><a href="/">← every run</a></p><h1>Comparing two runs</h1>'
        '<div class="scroll"><table class="runs"><thead><tr><th></th><th>run</th>'
        "<th>suite</th><th>models</th><th>created</th><th>took</th><th>itemscore</th>"
        "<th>python</th><th>data</th></tr></thead><tbody>"
        + _side("baseline", a)
        + _side("candidate", b)
        + "</tbody></table></div>"
        + body
        + "</main></body></html>\n"
    )


def message_page(title: str, message: str) -> str:
    """A page that says what went wrong, with a link back to the list."""
    return (
        head(f"itemscore view: {title}", CSS, PAGE_POLICY)
        + f'<p class="meta"><a href="/">← every run</a></p><h1>{esc(title)}</h1>'
        + f'<p class="error-note" id="message">{esc(message)}</p></main></body></html>\n'
    )
