r"""``table.tex``: a LaTeX table for papers that fits a column of a two-column article unscaled.

Each cell holds the value, with its interval below in small type; under each header, the
interval method and, when every model has the same, the number of scored items n. Numbers are
written by :mod:`._format` (digits from the interval's width, shared down a column). The
layout is chosen by rule from the widths of its cells (estimated in points, checked with
pdflatex in the tests):

1. models as rows, metrics as columns, in a ``table`` when it fits a two-column article's
   ``\columnwidth`` (:data:`COLUMN_PT`);
2. else the same numbers transposed (metrics as rows, models as columns) when that fits;
3. else the narrower of the two in a ``table*``, across both columns (:data:`TEXT_PT`).

Headers of several words are stacked one word a line. Nothing is ever scaled: no
``\resizebox``, so the type keeps the size of the paper's. The caption is one sentence; a note
under the table says what the cells hold, what bold means and which groups are small. The
label is derived from the run (suite, models, metrics and data), so two tables in one paper
never share one. The table needs ``\usepackage{booktabs}`` only.

Every string from the data (suite id, model, group, label) is escaped with
:func:`latex_escape` after :func:`~itemscore.display._text.one_line`: no text can end the
comment, run a command, or end a table row. With ``groups=True``, each model's row is
followed by one row per group.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

from .._records import Measurement
from .._result import RunResult
from ..display import _format
from ..display._text import one_line
from ..summary._summary import (
    BOLD_NOTE,
    MACRO_NAME,
    POOLED_NAME,
    RANGE,
    TIMES,
    bold_cells,
    confidence_of,
    display_name,
    find,
    is_small_group,
    labels_of,
    macro_of,
    method_name,
    n_text,
    reducer_name,
)
from ._files import open_report

__all__ = [
    "CHAR_PT",
    "COLUMN_PT",
    "FILENAME",
    "TABCOLSEP",
    "TEXT_PT",
    "estimate_width",
    "latex_escape",
    "latex_table",
    "run_label",
    "scriptsize",
    "stack_lines",
    "table_label",
    "tex_table",
    "tex_text",
    "write",
]

#: The narrowest ``\columnwidth`` of common two-column styles, in pt (ACL's 219.1; article's
#: two-column 10pt is 229.5 on letter paper, 221 on A4): a ``table`` must fit it.
COLUMN_PT = 219.0
#: The narrowest ``\textwidth`` a ``table*`` may meet: a one-column article's (345 pt; a
#: two-column one has 452 or more), where ``table*`` is a plain ``table``.
TEXT_PT = 345.0
#: ``\tabcolsep`` set by the table.
TABCOLSEP = 4.0
#: Width of one character in pt: 0.53 em of ``\small`` (9 pt) and of ``\scriptsize`` (7 pt),
#: a little more than Computer Modern's digits (0.5 em) and than its letters and brackets take
#: on average (checked against pdflatex's widths in the tests).
CHAR_PT = {"small": 9.0 * 0.53, "script": 7.0 * 0.53}

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


def _cell_lines(cell: str) -> list[tuple[str, str]]:
    """A cell's lines as (size, visible text): what its width is estimated from."""
    lines = []
    for part in re.split(r"\\\\(?![a-z])", cell):
        size = "script" if r"\scriptsize" in part else "small"
        text = re.sub(r"\\text(bf|it)\{([^}]*)\}", r"\2", part)
        text = text.replace(r"\scriptsize", "").replace("{[}", "[").replace("{]}", "]")
        text = re.sub(r"\\(begin|end)\{tabular\}(\[[bt]\])?(\{@\{\}[lcr]@\{\}\})?", "", text)
        text = re.sub(r"\\text[a-z]+\{\}", "x", text)
        text = re.sub(r"\\(.)", r"\1", text).replace("{", "").replace("}", "")
        lines.append((size, text.strip()))
    return lines


def _width(cell: str) -> float:
    return max((len(t) * CHAR_PT[size] for size, t in _cell_lines(cell)), default=0.0)


def estimate_width(rows: list[list[str]]) -> float:
    """The natural width in pt of a tabular of ``rows`` (cells as LaTeX), generously."""
    widths: dict[int, float] = {}
    for row in rows:
        for column, cell in enumerate(row):
            widths[column] = max(widths.get(column, 0.0), _width(cell))
    return sum(widths.values()) + 2 * TABCOLSEP * len(widths)


def _stack(text: str, align: str = "c") -> str:
    """Words stacked one per line in a cell (a header narrower than its words side by side)."""
    words = text.split(" ")
    if len(words) < 2:
        return text
    return rf"\begin{{tabular}}[b]{{@{{}}{align}@{{}}}}" + r" \\ ".join(words) + r"\end{tabular}"


def scriptsize(text: str) -> str:
    """``text`` in small type (an interval under its value); nothing for no text."""
    return rf"{{\scriptsize {text}}}" if text else ""


def _value(m: Measurement, decimals: int, bold: bool) -> str:
    if m.error is not None:
        return r"\textit{error}"
    if m.value is None:
        return "--"
    text = latex_escape(_format.format_value(m.value, decimals, unit=m.unit))
    return rf"\textbf{{{text}}}" if bold else text


def _n_tex(m: Measurement) -> str:
    r"""n for the table: ``5$\times$3`` (questions times attempts) with attempts."""
    return tex_text(n_text(m)).replace(f" {TIMES} ", r"$\times$").replace(RANGE, "--")


def _columns(result: RunResult) -> list[tuple[str, str, str | None]]:
    """The table's columns: ``(label, key, reducer)`` per measurement, in first-seen order."""
    out: dict[str, tuple[str, str, str | None]] = {}
    for measurements in result.by_model.values():
        for m in measurements.values():
            out.setdefault(m.key, (m.metric, m.key, reducer_name(m)))
    return list(out.values())


def _interval(m: Measurement | None, decimals: int, with_n: bool) -> str:
    if m is None or m.error is not None:
        return ""
    text = _format.format_interval(m.ci_low, m.ci_high, decimals, brackets=("{[}", "{]}"))
    if with_n:
        text = f"{text} n={_n_tex(m)}".strip()
    return scriptsize(text)


def _macro(m: Measurement | None, decimals: int) -> str:
    macro = None if m is None or m.error is not None else macro_of(m)
    if macro is None:
        return ""
    value, low, high, _ = macro
    interval = _format.format_interval(low, high, decimals, brackets=("{[}", "{]}"))
    return stack_lines([_format.fixed(value, decimals), scriptsize(interval)])


def run_label(result: RunResult) -> str:
    """``tab:itemscore-<suite>-<6 hex digits>``, from the suite, the models and the metrics.

    The same run gives the same label from the command line and from Python; two tables of
    one paper that show different models or metrics get different ones.
    """
    parts = [result.suite_id, *map(str, result.by_model), *labels_of(result)]
    return table_label("", result.suite_id, "results", parts)


def table_label(kind: str, name: str, default: str, parts: Sequence[str], sep: str = "\x1f") -> str:
    """``tab:itemscore-<kind><name>-<6 hex digits of parts>``, ``name`` made label-safe."""
    tag = hashlib.sha256(sep.join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:6]
    return f"tab:itemscore-{kind}{_LABEL_UNSAFE.sub('-', name).strip('-') or default}-{tag}"


def _grid(
    result: RunResult, groups: bool
) -> tuple[list[list[str]], list[str], set[tuple[str | None, str]], list[str]]:
    """Rows of the models-as-rows table (header, sub-header, body), bold cells, small groups."""
    models = list(result.by_model)
    columns = _columns(result)
    keys = [key for _, key, _ in columns]
    labels = list(dict.fromkeys(label for label, _, _ in columns))
    by_key = {key: label for label, key, _ in columns}
    bold = bold_cells(result)
    header = [r"Model"]
    for label, _, reducer in columns:
        name = tex_text(display_name(result, label))
        header.append(_stack(name if reducer is None else f"{name} [{tex_text(reducer)}]"))
    sub_header = [""]
    uniform_n: dict[str, bool] = {}
    decimals: dict[str, int] = {}
    for key in keys:
        present = [m for m in (result.by_model[x].get(key) for x in models) if m is not None]
        methods = sorted({method_name(m.ci_method) for m in present})
        ns = {_n_tex(m) for m in present}
        uniform_n[key] = len(ns) == 1
        decimals[key] = _format.shared_decimals((m.value, m.ci_low, m.ci_high) for m in present)
        lines = [tex_text("/".join(methods))]
        if uniform_n[key]:
            lines.append(f"n={next(iter(ns))}")
        sub_header.append(stack_lines([scriptsize(x) for x in lines], "c"))
    body: list[list[str]] = []
    small: list[str] = []
    for model in models:
        name = tex_text(model) if model is not None else r"\textit{all items}"
        found = [result.by_model[model].get(key) for key in keys]
        values = [name]
        intervals = [""]
        macros = [""]
        for key, m in zip(keys, found):
            d = decimals[key]
            first = key == f"{result.suite_id}.{by_key[key]}"  # not a further reducer's
            values.append("" if m is None else _value(m, d, first and (model, by_key[key]) in bold))
            intervals.append(_interval(m, d, not uniform_n[key]))
            macros.append(_macro(m, d) if groups else "")
        body.append(values)
        if any(intervals):
            body.append(intervals)
        if any(macros):
            body.append([r"\quad " + MACRO_NAME, *macros[1:]])
        if not groups:
            continue
        for m in found:
            if m is not None:
                flagged = (g for g, gm in m.groups.items() if is_small_group(gm))
                small.extend(g for g in flagged if g not in small)
        names = sorted({g for m in found if m is not None for g in m.groups})
        for group in names:
            gms = [None if m is None else m.groups.get(group) for m in found]
            row = [r"\quad " + tex_text(group)]
            below = [""]
            for gm in gms:
                d = 3 if gm is None else _format.decimals_for(gm.value, gm.ci_low, gm.ci_high)
                row.append("" if gm is None else _value(gm, d, False))
                below.append(_interval(gm, d, True))
            body.append(row)
            body.append(below)
    return [header, sub_header, *body], labels, bold, small


def _transposed(rows: list[list[str]]) -> list[list[str]]:
    """Metrics as rows: each model's value and interval lines stacked in one cell."""
    header, sub_header, *body = rows
    # Group the body into blocks: a model's value row and the small-type rows under it.
    blocks: list[list[list[str]]] = []
    for row in body:
        if row[0] or not blocks:
            blocks.append([row])
        else:
            blocks[-1].append(row)
    out = [[r"Metric", *(_stack(b[0][0]) for b in blocks)]]
    for column in range(1, len(header)):
        cells = [stack_lines([r[column] for r in block]) for block in blocks]
        out.append([stack_lines([header[column], sub_header[column]], "l"), *cells])
    return out


def stack_lines(lines: list[str], align: str = "r") -> str:
    """The non-empty ``lines`` stacked in one cell (one line as it is)."""
    lines = [x for x in lines if x]
    if len(lines) < 2:
        return lines[0] if lines else ""
    return rf"\begin{{tabular}}[t]{{@{{}}{align}@{{}}}}" + r" \\ ".join(lines) + r"\end{tabular}"


def latex_table(result: RunResult, *, groups: bool = False, transpose: bool | None = None) -> str:
    r"""The text of ``table.tex``: a booktabs table, its caption, a note and a label.

    In each column the cells :func:`~itemscore.summary._summary.bold_cells` names are bold.
    A measurement without a value shows ``--``; one whose aggregate failed shows ``error``.

    Args:
        result: The run.
        groups: Add one row per group under each model (never transposed).
        transpose: ``False``: models as rows, ``True``: metrics as rows, whatever the widths;
            ``None``: by the rule above.
    """
    rows, labels, bold, small = _grid(result, groups)
    wide = estimate_width(rows)
    transposed = None if groups else _transposed(rows)
    tall = estimate_width(transposed) if transposed is not None else float("inf")
    if transpose is not None:
        chosen = transposed if transpose and transposed is not None else rows
        env = "table" if estimate_width(chosen) <= COLUMN_PT else "table*"
    elif wide <= COLUMN_PT:
        chosen, env = rows, "table"
    elif transposed is not None and tall <= COLUMN_PT:
        chosen, env = transposed, "table"
    else:
        chosen = rows if wide <= tall or transposed is None else transposed
        env = "table*"
    is_transposed = chosen is transposed
    confidence = confidence_of(result)
    level = f"{confidence * 100:g}\\%"
    suite = tex_text(result.suite_id)
    grouped = any(m.groups for ms in result.by_model.values() for m in ms.values())
    note = [
        f"Each value has its {level} confidence interval below it"
        + ("; under each metric" if not is_transposed else "; beside each metric")
        + ", the interval method and n, the number of scored items."
    ]
    if bold:
        note.append(tex_text(BOLD_NOTE.format(level=f"{confidence * 100:g}%")))
    if grouped and not groups:
        note.append(f"Values are over {POOLED_NAME}.")
    if grouped and groups:
        note.append(
            f"Values are over {POOLED_NAME}; {MACRO_NAME}: the unweighted mean over the groups, "
            "with its interval."
        )
    if small:
        from ..engine._measure import SMALL_GROUP

        names = ", ".join(tex_text(g) for g in small)
        note.append(
            f"Groups with fewer than {SMALL_GROUP} scored items, whose values rest on few "
            f"items: {names}."
        )
    lower = [tex_text(display_name(result, x)) for x in labels if not _higher(result, x)]
    if lower:
        note.append(f"Lower is better for {', '.join(lower)}.")
    columns = len(chosen[0])
    spec = "l" + "r" * (columns - 1)
    comments = [
        f"% itemscore results for suite {suite}: value with its {confidence * 100:g}% interval "
        "below; bold: a significant lead (paired test).",
        r"% Needs \usepackage{booktabs}. Layout: "
        + ("metrics as rows" if is_transposed else "models as rows")
        + f" in a {env} (estimated {estimate_width(chosen):.0f}pt wide).",
    ]
    lines = [" & ".join(r) + r" \\" for r in chosen]
    head = 1 if is_transposed else 2
    caption = _caption(result, labels)
    return tex_table(comments, env, spec, lines, head, " ".join(note), caption, run_label(result))


def tex_table(
    comments: list[str],
    env: str,
    spec: str,
    rows: list[str],
    head: int,
    note: str,
    caption: str,
    label: str,
    *,
    place: str = "htbp",
    scaled: bool = False,
) -> str:
    r"""A booktabs ``env`` of ``rows`` (the first ``head`` the header), note, caption, label.

    ``scaled``: the tabular in ``\resizebox{\columnwidth}`` (package graphicx), for the one
    table that cannot fit its column otherwise.
    """
    tabular = [
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        *rows[:head],
        r"\midrule",
        *rows[head:],
        r"\bottomrule",
        r"\end{tabular}",
    ]
    if scaled:
        tabular = [r"\resizebox{\columnwidth}{!}{%", *tabular[:-1], r"\end{tabular}}"]
    return "\n".join(
        [
            *comments,
            rf"\begin{{{env}}}[{place}]",
            r"\centering",
            r"\small",
            rf"\setlength{{\tabcolsep}}{{{TABCOLSEP:g}pt}}",
            *tabular,
            r"\par\smallskip",
            r"\parbox{\linewidth}{\footnotesize\raggedright Note: " + note + "}",
            rf"\caption{{{caption}}}",
            rf"\label{{{label}}}",
            rf"\end{{{env}}}",
            "",
        ]
    )


def _caption(result: RunResult, labels: list[str]) -> str:
    """The caption: the suite's results, or, for the unnamed suite, what the table holds."""
    if result.suite_id != "default":
        return f"Results on {tex_text(result.suite_id)}."
    models = [m for m in result.by_model if m is not None]
    what = _series([display_name(result, x) for x in labels])
    return tex_text(f"{what} of {_series(models)}." if models else f"{what}.")


def _series(names: list[str], most: int = 4) -> str:
    """``a, b and c``; past ``most`` names, the first ones and how many more."""
    if len(names) > most:
        return f"{', '.join(names[: most - 1])} and {len(names) - most + 1} more"
    return " and ".join([", ".join(names[:-1]), names[-1]]) if len(names) > 1 else "".join(names)


def _higher(result: RunResult, label: str) -> bool:
    for ms in result.by_model.values():
        m = find(ms, label)
        if m is not None:
            return m.higher_is_better
    return True


def write(result: RunResult, path: Path) -> None:
    """Write ``table.tex`` for ``result`` to ``path``.

    With the group rows when the run was asked for them (``--by-group``, recorded as
    ``provenance["by_group"]``).
    """
    groups = bool(result.provenance.get("by_group")) if result.provenance else False
    with open_report(path) as handle:
        handle.write(latex_table(result, groups=groups))
