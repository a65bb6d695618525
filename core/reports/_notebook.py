"""HTML for notebooks (``_repr_html_``): a run, a measurement, a comparison, as small tables.

Jupyter shows what ``_repr_html_`` returns in place of the ``repr``. Every text from the data
(model, label, group, error) is escaped, and numbers follow :mod:`._format` as everywhere.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

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
    from .._compare import Comparison
    from .._records import Measurement
    from .._result import RunResult

__all__ = ["comparison_html", "measurement_html", "result_html"]

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


_HEADER = ("metric", "model", "value", "interval", "method", "n", "ok", "fail", "skip", "error")


def _row(m: Measurement, name: str, bold: bool = False) -> list[str]:
    d = decimals_for(m.value, m.ci_low, m.ci_high)
    value = "error" if m.error else format_value(m.value, d, unit=m.unit)
    value = f"<b>{_text(value)}</b>" if bold else _text(value)
    counts = [str(m.counts.get(s, 0)) for s in ("ok", "fail", "skip", "error")]  # type: ignore[call-overload]
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


def result_html(result: RunResult, bold: set[tuple[str | None, str]] | frozenset[Any]) -> str:
    """Every model's measurements, ``bold`` where a model's lead is significant."""
    rows = []
    for model, ms in result.by_model.items():
        for m in ms.values():
            rows.append(_row(m, m.name, (model, m.metric) in bold))
        rows += [_row(d, d.name) for m in ms.values() for d in m.derived.values()]
    n_items = len(result.items)
    caption = _text(f"{result.suite_id}: {n_items} items, {len(result.by_model)} model(s)")
    if bold:
        caption += "; bold: a significant lead (paired test, Holm-adjusted)"
    return _table(_HEADER, rows, caption)


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
