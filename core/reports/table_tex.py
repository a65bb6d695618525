r"""``table.tex``: a LaTeX ``table`` for papers: models as rows, measurements as columns.

Each cell holds the value, with its interval below in small type; under each header, the
interval method and, when every model has the same, the number of scored items n. Every
string from the data (suite id, model, group, label) is escaped with :func:`latex_escape`
after :func:`~itemscore.reports._text.one_line`: no text can end the comment, run a command,
or end a table row. The table needs ``\usepackage{booktabs}`` and ``\usepackage{graphicx}``;
it is scaled down to ``\columnwidth`` only when wider.

A grouped measurement's cell holds its pooled (micro) value, over all its items at once; a
third line gives its macro value (the unweighted mean over the groups) with its interval, and
the caption names the groups with fewer scored items than the runner's threshold.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from .._records import Measurement
from .._result import RunResult
from ._files import open_report
from ._summary import (
    BOLD_NOTE,
    MACRO_NAME,
    POOLED_NAME,
    RANGE,
    TIMES,
    bold_cells,
    confidence_of,
    display_name,
    is_small_group,
    macro_of,
    method_name,
    n_text,
    reducer_name,
)
from ._text import one_line

__all__ = ["FILENAME", "latex_escape", "latex_table", "tex_text", "write"]

#: The file this format writes.
FILENAME = "table.tex"

_LATEX_SPECIAL = {
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "\\": r"\textbackslash{}",
    # Not commands, but "[" after "\\" would be read as the row's optional spacing, and
    # "<", ">", "|" print as other glyphs in LaTeX's default font encoding.
    "[": "{[}",
    "]": "{]}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}
_LATEX_TABLE = str.maketrans(_LATEX_SPECIAL)
_LABEL_UNSAFE = re.compile(r"[^A-Za-z0-9.-]+")


def latex_escape(text: str) -> str:
    r"""``text`` with LaTeX's special characters escaped: ``& % $ # _ { } ~ ^ \ [ ] < > |``.

    Example:
        >>> latex_escape("f1_macro & 5%")
        'f1\\_macro \\& 5\\%'
    """
    return text.translate(_LATEX_TABLE)


def tex_text(text: str) -> str:
    r"""Any text from the data as safe LaTeX: on one line, controls visible, specials escaped.

    Example:
        >>> tex_text("qa\n\\input{/etc/passwd}")
        'qa \\textbackslash{}input\\{/etc/passwd\\}'
    """
    return latex_escape(one_line(text))


def _fixed(value: float, digits: int) -> str:
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text  # no "-0.000"


def _small(text: str) -> str:
    return rf"{{\scriptsize {text}}}"


def _interval(low: float | None, high: float | None, digits: int) -> str:
    if low is None or high is None:
        return ""
    return f"{{[}}{_fixed(low, digits)}, {_fixed(high, digits)}{{]}}"


def _macro_cell(m: Measurement | None, digits: int) -> str:
    macro = None if m is None or m.error is not None else macro_of(m)
    if macro is None:
        return ""
    value, low, high, _ = macro
    return _small(f"{MACRO_NAME} {_fixed(value, digits)} {_interval(low, high, digits)}".strip())


def _group_notes(result: RunResult, grouped: bool) -> str:
    """The caption's sentences on groups: what the values are, which groups are small."""
    if not grouped:
        return ""
    text = (
        f" Values are {POOLED_NAME}, over all items of a measurement at once; {MACRO_NAME}: "
        "the unweighted mean over its groups, with its interval."
    )
    small: list[str] = []
    for measurements in result.by_model.values():
        for m in measurements.values():
            small.extend(g for g, gm in m.groups.items() if is_small_group(gm) and g not in small)
    if small:
        from ..engine._measure import SMALL_GROUP

        names = ", ".join(tex_text(g) for g in small)
        text += (
            f" Groups with fewer than {SMALL_GROUP} scored items, whose values rest on few "
            f"items: {names}."
        )
    return text


def _columns(result: RunResult) -> list[tuple[str, str, str | None]]:
    """The table's columns: ``(label, key, reducer)`` per measurement, in first-seen order."""
    out: dict[str, tuple[str, str, str | None]] = {}
    for measurements in result.by_model.values():
        for m in measurements.values():
            out.setdefault(m.key, (m.metric, m.key, reducer_name(m)))
    return list(out.values())


def _n_tex(m: Measurement) -> str:
    r"""n for the table: ``5$\times$3`` (questions times attempts) with attempts."""
    return tex_text(n_text(m)).replace(f" {TIMES} ", r"$\times$").replace(RANGE, "--")


def find_key(measurements: Mapping[str, Measurement], key: str) -> Measurement | None:
    """One model's measurement of ``key``, or ``None``."""
    return measurements.get(key)


def latex_table(result: RunResult, *, digits: int = 3) -> str:
    r"""The text of ``table.tex``: a booktabs table in a ``table`` float with caption and label.

    In each column the cells :func:`~itemscore.reports._summary.bold_cells` names are bold.
    A measurement without a value shows ``--``; one whose aggregate failed shows ``error``.
    """
    models = list(result.by_model)
    columns = _columns(result)
    labels = [key for _, key, _ in columns]
    bold = {
        (model, f"{result.suite_id}.{label}") for model, label in bold_cells(result, digits=digits)
    }
    confidence = confidence_of(result)
    header = ["Model"]
    for label, _, reducer in columns:
        name = tex_text(display_name(result, label))
        header.append(name if reducer is None else f"{name} [{tex_text(reducer)}]")
    sub_header = [""]
    uniform_n: dict[str, bool] = {}
    for label in labels:
        found = [find_key(result.by_model[model], label) for model in models]
        present = [m for m in found if m is not None]
        methods = sorted({method_name(m.ci_method) for m in present})
        ns = {_n_tex(m) for m in present}
        uniform_n[label] = len(ns) == 1
        text = tex_text("/".join(methods))
        if uniform_n[label]:
            text += f", n={next(iter(ns))}"
        sub_header.append(_small(text))
    body: list[str] = []
    grouped = False
    for model in models:
        values = [tex_text(model) if model is not None else r"\textit{all items}"]
        intervals = [""]
        macros = [""]
        for label in labels:
            m = find_key(result.by_model[model], label)
            macros.append(_macro_cell(m, digits))
            if m is None:
                values.append("")
                intervals.append("")
                continue
            if m.error is not None:
                values.append(r"\textit{error}")
                intervals.append("")
                continue
            if m.value is None:
                values.append("--")
            else:
                text = _fixed(m.value, digits)
                values.append(rf"\textbf{{{text}}}" if (model, label) in bold else text)
            below = _interval(m.ci_low, m.ci_high, digits)
            if not uniform_n[label]:
                below = f"{below} n={_n_tex(m)}".strip()
            intervals.append(_small(below) if below else "")
        body.append(" & ".join(values) + r" \\")
        if any(intervals):
            body.append(" & ".join(intervals) + r" \\")
        if any(macros):
            grouped = True
            body.append(" & ".join(macros) + r" \\")
    suite = tex_text(result.suite_id)
    label = "tab:itemscore-" + (_LABEL_UNSAFE.sub("-", result.suite_id).strip("-") or "results")
    lines = [
        f"% itemscore results for suite {suite}: value with its "
        f"{confidence * 100:g}% interval below; bold: a significant lead (paired test).",
        r"% Needs \usepackage{booktabs} and \usepackage{graphicx}.",
        r"\begin{table}[htbp]",
        r"\centering",
        rf"\caption{{Results on {suite}: each value with its {confidence * 100:g}\% "
        r"confidence interval below it; under each metric, the interval method and n, the "
        r"number of scored items."
        + (" " + tex_text(BOLD_NOTE.format(level=f"{confidence * 100:g}%")) if bold else "")
        + _group_notes(result, grouped)
        + "}",
        rf"\label{{{label}}}",
        r"\small",
        r"\setlength{\tabcolsep}{4pt}",
        r"\resizebox{\ifdim\width>\columnwidth\columnwidth\else\width\fi}{!}{%",
        r"\begin{tabular}{l" + "r" * len(labels) + "}",
        r"\toprule",
        " & ".join(header) + r" \\",
        " & ".join(sub_header) + r" \\",
        r"\midrule",
        *body,
        r"\bottomrule",
        r"\end{tabular}}",
        r"\end{table}",
        "",
    ]
    return "\n".join(lines)


def write(result: RunResult, path: Path) -> None:
    """Write ``table.tex`` for ``result`` to ``path``."""
    with open_report(path) as handle:
        handle.write(latex_table(result))
