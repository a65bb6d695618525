"""The comparison section of report.html and of the viewer's comparison of two runs.

It shows what :func:`itemscore.compare` computed, nothing more: per metric and pair of models
the paired difference (candidate minus baseline) with its interval, the p-value and the
adjusted one, the test, the pairs; a forest plot per metric on its own axis, whose caption
names the side each direction favours; and, collapsed, the same per group.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ..comparison import Comparison
from ._html_markup import esc
from ._html_numbers import interval, number, p_value
from ._html_svg import MODEL_COLOURS, Point, forest_plot, strip, strip_span

__all__ = ["comparison_section", "direction_badge"]

_ADJUSTMENTS = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "no"}


def direction_badge(higher_is_better: bool) -> str:
    """The mark beside a metric's name: which way is better."""
    if higher_is_better:
        return '<span class="dir higher" title="higher is better">↑ higher is better</span>'
    return '<span class="dir lower" title="lower is better">↓ lower is better</span>'


def _verdict(c: Comparison) -> str:
    if c.p_adjusted is None:
        return '<span class="meta">no test</span>'
    better = c.better
    if better is None:
        return '<span class="meta">no significant difference</span>'
    return f'<span class="win">{esc(better)} better</span>'


def _sort_head(*names: str, numeric: bool = False) -> str:
    """Header cells whose button sorts the table by that column (``numeric``: by value)."""
    kind = ' data-type="num"' if numeric else ""
    return "".join(
        f'<th{kind}><button class="sort" type="button">{esc(n)}</button></th>' for n in names
    )


#: The header cells of every comparison table after what its rows compare.
_HEAD = (
    _sort_head("baseline value", "candidate value", "difference", numeric=True)
    + "<th>interval</th>"
    + _sort_head("p", "adjusted p", numeric=True)
    + "<th>test</th>"
    + _sort_head("pairs", numeric=True)
    + "<th>verdict</th>"
)


def _num_cell(value: float | None, text: str) -> str:
    v = "" if value is None else repr(float(value))
    return f'<td class="num" data-v="{v}">{text}</td>'


def _row(c: Comparison, first: str, last: str = "", *, pair: bool = True) -> str:
    """A comparison's cells after ``first`` (what it compares), ``last`` appended.

    ``pair``: with the baseline and the candidate (a group table names them once above).
    """
    models = f"<td>{esc(c.baseline)}</td><td>{esc(c.candidate)}</td>" if pair else ""
    return (
        f"<tr>{first}{models}"
        + _num_cell(c.value_a, number(c.value_a, c.ci_low, c.ci_high))
        + _num_cell(c.value_b, number(c.value_b, c.ci_low, c.ci_high))
        + _num_cell(c.difference, _signed(c))
        + f'<td class="num">{interval(c.difference, c.ci_low, c.ci_high)}</td>'
        + _num_cell(c.p_value, p_value(c.p_value))
        + _num_cell(c.p_adjusted, p_value(c.p_adjusted))
        + f"<td>{esc(c.method)}</td>"
        + _num_cell(c.n_pairs, str(c.n_pairs))
        + f"<td>{_verdict(c)}</td>{last}</tr>"
    )


def _signed(c: Comparison) -> str:
    text = number(c.difference, c.ci_low, c.ci_high)
    return text if text.startswith(("-", "—")) else "+" + text


def _groups(c: Comparison, colour: str) -> str:
    """A collapsed, sortable table of a comparison's groups, each with its difference drawn."""
    points = [
        Point(name, colour, g.difference, g.ci_low, g.ci_high, solid=g.significant)
        for name, g in c.groups.items()
    ]
    low, high = strip_span(points, zero=True)
    rows = []
    for point, (name, g) in zip(points, c.groups.items()):
        plot = strip([point], low, high, zero=True)
        first = f'<td data-v="{esc(name)}">{esc(name)}</td>'
        rows.append(_row(g, first, f"<td>{plot}</td>", pair=False))
    return (
        f'<details class="groups"><summary>{esc(c.candidate)} against {esc(c.baseline)} by '
        f"group ({len(c.groups)} groups)</summary>"
        '<div class="scroll"><table class="sortable compare-groups"><thead><tr>'
        + _sort_head("group")
        + _HEAD
        + "<th>difference and interval</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div></details>"
    )


def comparison_section(
    comparisons: Sequence[Comparison],
    *,
    colours: Mapping[str | None, str],
    name_of: Callable[[str], str],
    heading: str = "Comparison",
) -> str:
    """The section: a sortable table of every comparison, then each metric's forest plot.

    Args:
        comparisons: What :func:`itemscore.compare` returned.
        colours: The models' colours (a candidate's dot takes its colour).
        name_of: How a metric label is shown.
        heading: The section's title.
    """
    if not comparisons:
        return ""
    first = comparisons[0]
    level = f"{100 * first.confidence:g}%"
    adjust = _ADJUSTMENTS.get(first.adjustment, first.adjustment)
    out = [
        f'<section id="comparison"><h2>{esc(heading)}</h2>'
        f'<p class="meta">Paired on the items both sides scored (a skip or an error on either '
        f"side leaves the pair out). Difference = candidate \u2212 baseline with its {level} "
        f"interval; p-values {esc(adjust)}-adjusted across the model pairs of a metric (and "
        "across its groups); a verdict and a solid dot: significant after adjustment.</p>"
        '<div class="scroll"><table class="sortable" id="comparisons"><thead><tr>'
        + _sort_head("metric", "baseline", "candidate")
        + _HEAD
        + "</tr></thead><tbody>"
    ]
    by_label: dict[str, list[Comparison]] = {}
    for c in comparisons:
        by_label.setdefault(c.metric, []).append(c)
        arrow = "↑" if c.higher_is_better else "↓"
        first_cell = (
            f'<td data-v="{esc(c.metric)}">{esc(name_of(c.metric))} '
            f'<span class="meta" title="{"higher" if c.higher_is_better else "lower"} is '
            f'better">{arrow}</span></td>'
        )
        out.append(_row(c, first_cell))
    out.append("</tbody></table></div>")
    for label, family in by_label.items():
        higher = family[0].higher_is_better
        points = [
            Point(
                f"{c.candidate} \u2212 {c.baseline}",
                colours.get(c.candidate, MODEL_COLOURS[1]),
                c.difference,
                c.ci_low,
                c.ci_high,
                note="no difference computed",
                solid=c.significant,
            )
            for c in family
        ]
        out.append(
            f'<div class="forest-block" data-label="{esc(label)}"><h3>{esc(name_of(label))} '
            f"{direction_badge(higher)}</h3>"
            + forest_plot(
                points,
                f"{name_of(label)}: difference and interval per pair of models",
                higher_is_better=higher,
                baseline_side="baseline",
            )
        )
        for c in family:
            if c.groups:
                out.append(_groups(c, colours.get(c.candidate, MODEL_COLOURS[1])))
        out.append("</div>")
    out.append("</section>")
    return "".join(out)
