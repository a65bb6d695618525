"""A measurement and a comparison in a notebook: a one-line ``repr`` and a small HTML table.

Jupyter shows what ``_repr_html_`` returns in place of the ``repr``; the ``repr`` is what a
terminal, a log or a list of them shows. Every text from the data (model, label, group,
error) is escaped in the HTML and shown printable in the ``repr``, and numbers follow
:mod:`._format` as everywhere. A run's own are in :mod:`._notebook_run`.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from .._status import STATE_NAMES, STATES

# Only the formatting and escaping modules: the records this renders import this module.
from ._format import (
    decimals_for,
    direction,
    format_interval,
    format_p,
    format_signed,
    format_value,
    method_name,
)
from ._text import printable

if TYPE_CHECKING:
    from .._records import Measurement
    from ..comparison import Comparison

__all__ = ["comparison_html", "comparison_repr", "measurement_html", "measurement_repr"]

_STYLE = "border-collapse:collapse;font-variant-numeric:tabular-nums"


def _text(value: object) -> str:
    return html.escape(printable(str(value)))


def _table(header: Sequence[str], rows: Iterable[Sequence[str]], caption: str = "") -> str:
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    cap = f"<caption style='text-align:left'>{caption}</caption>" if caption else ""
    return (
        f"<table style='{_STYLE}'>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )


_HEADER = ("metric", "model", "value", "interval", "method", "n", *STATE_NAMES)


def _row(m: Measurement, name: str, bold: bool = False) -> list[str]:
    d = decimals_for(m.value, m.ci_low, m.ci_high)
    value = "error" if m.error else format_value(m.value, d, unit=m.unit)
    value = f"<b>{_text(value)}</b>" if bold else _text(value)
    counts = [str(m.counts.get(s, 0)) for s in STATES]
    return [
        _text(name) + ("" if m.higher_is_better else " ↓"),
        _text("" if m.model is None else m.model),
        value,
        _text(format_interval(m.ci_low, m.ci_high, d)),
        _text(method_name(m.ci_method)),
        str(m.n),
        *counts,
    ]


def measurement_html(m: Measurement) -> str:
    """One measurement, then one row per group and per derived measurement."""
    rows = [_row(m, m.name)]
    rows += [_row(g, f"  {name}") for name, g in m.groups.items()]
    rows += [_row(d, d.name) for d in m.derived.values()]
    note = f"{direction(m.higher_is_better)}; {m.confidence * 100:g}% interval"
    if m.error:
        note += f"; the aggregate failed: {_text(m.error)}"
    return _table(_HEADER, rows, _text(f"{m.key}: ") + note)


def comparison_html(c: Comparison) -> str:
    """One comparison and its groups: difference, interval, p, adjusted p, pairs."""
    header = ("metric", "baseline", "candidate", "difference", "interval", "p", "adj. p", "pairs")

    def row(name: str, x: Comparison) -> list[str]:
        d = decimals_for(x.difference, x.ci_low, x.ci_high)
        diff = _text(format_signed(x.difference, d))
        return [
            _text(name), _text(x.baseline), _text(x.candidate),
            f"<b>{diff}</b>" if x.significant else diff,
            _text(format_interval(x.ci_low, x.ci_high, d)),
            _text(format_p(x.p_value)), _text(format_p(x.p_adjusted)),
            str(x.n_pairs),
        ]  # fmt: skip

    rows = [row(c.metric, c), *(row(f"  {g}", x) for g, x in c.groups.items())]
    caption = (
        f"difference = candidate - baseline ({direction(c.higher_is_better)}); "
        f"{c.confidence * 100:g}% interval; {_text(c.method)}"
    )
    return _table(header, rows, caption)


def _where(model: str | None) -> str:
    return "" if model is None else f" ({printable(model)})"


def measurement_repr(m: Measurement) -> str:
    """One line: ``<Measurement qa.exact_match (m1): 0.58 [0.51, 0.65] Wilson, n=200>``.

    The value and interval as tables write them; the number of groups and derived
    measurements when there are any; the aggregate's failure instead of a value.
    """
    head = f"<Measurement {printable(m.key)}{_where(m.model)}: "
    if m.error:
        return f"{head}error ({printable(m.error)[:60]}), n={m.n}>"
    d = decimals_for(m.value, m.ci_low, m.ci_high)
    shown = format_value(m.value, d, unit=m.unit)
    interval = format_interval(m.ci_low, m.ci_high, d)
    if interval:
        shown += f" {interval} {method_name(m.ci_method)}"
    more = [f"n={m.n}"]
    if m.groups:
        more.append(f"{len(m.groups)} group" + ("" if len(m.groups) == 1 else "s"))
    if m.derived:
        more.append(f"{len(m.derived)} derived")
    if not m.higher_is_better:
        more.append("lower is better")
    return f"{head}{shown}, {', '.join(more)}>"


def comparison_repr(c: Comparison) -> str:
    """One line: ``<Comparison qa.exact_match m2 - m1: +0.16 [+0.02, +0.29], p=0.0328 ...>``.

    The difference (candidate minus baseline) and its interval, the adjusted p-value, the
    pairs, and whether the difference is significant.
    """
    d = decimals_for(c.difference, c.ci_low, c.ci_high)
    diff = format_signed(c.difference, d)
    interval = ""
    if c.ci_low is not None and c.ci_high is not None:
        interval = f" [{format_signed(c.ci_low, d)}, {format_signed(c.ci_high, d)}]"
    verdict = "significant" if c.significant else "not significant"
    sides = f"{printable(str(c.candidate))} - {printable(str(c.baseline))}"
    return (
        f"<Comparison {printable(c.key)} {sides}: "
        f"{diff}{interval}, adj. p={format_p(c.p_adjusted)}, {c.n_pairs} pairs, {verdict}>"
    )
