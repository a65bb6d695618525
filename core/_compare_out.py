"""Comparison reports: a rich table, comparison.json/.csv/.tex and a forest plot (PNG, SVG).

Every file is built in memory first and then written atomically (a temporary file renamed
into place), so a failure leaves no half-written file behind.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from .comparison import Comparison
from .display import _format
from .display._csv import csv_text
from .display._figure import figure_files

__all__ = [
    "PLOT_COLOURS",
    "comparison_csv",
    "comparison_json",
    "comparison_rows",
    "comparison_table",
    "comparison_tex",
    "forest_plot",
    "plot_available",
    "write_comparison",
]

_COLUMNS = (
    "key",
    "metric",
    "group",
    "baseline",
    "candidate",
    "value_a",
    "value_b",
    "difference",
    "ci_low",
    "ci_high",
    "p_value",
    "p_adjusted",
    "adjustment",
    "method",
    "confidence",
    "n_pairs",
    "n_unpaired",
    "mde",
    "higher_is_better",
)


def _name(c: Comparison, names: Mapping[str, str] | None = None) -> str:
    """A comparison's metric as shown: its label (or display name), and a further reducer's."""
    shown = (names or {}).get(c.metric) or c.metric
    head = f".{c.metric}["
    at = c.key.rfind(head)
    if at >= 0 and c.key.endswith("]"):
        return f"{shown} [{c.key[at + len(head) : -1]}]"
    return shown


def _walk(
    comparisons: Sequence[Comparison], groups: bool = True
) -> Iterator[tuple[str | None, Comparison]]:
    """Each headline comparison, followed (with ``groups``) by its group comparisons."""
    for c in comparisons:
        yield None, c
        if groups:
            yield from c.groups.items()


def comparison_rows(comparisons: Sequence[Comparison]) -> list[dict[str, Any]]:
    """One flat row per comparison and per group comparison (``group`` empty for headlines)."""
    return [
        {name: group if name == "group" else getattr(c, name) for name in _COLUMNS}
        for group, c in _walk(comparisons)
    ]


def comparison_json(
    comparisons: Sequence[Comparison],
    sources: Sequence[str] = (),
    runs: tuple[str, str] | None = None,
) -> str:
    """The text of ``comparison.json``: the sources and every comparison with its groups.

    ``runs``: the labels of two runs compared, listed as ``labels`` beside ``sources``.
    """
    document: dict[str, Any] = {
        "schema": "itemscore.comparison",
        "version": 1,
        "sources": list(sources),
    }
    if runs is not None:
        document["labels"] = list(runs)
    document["comparisons"] = [c.to_dict() for c in comparisons]
    return json.dumps(document, ensure_ascii=False, allow_nan=False, indent=1) + "\n"


def comparison_csv(comparisons: Sequence[Comparison]) -> str:
    """The text of ``comparison.csv``: :func:`comparison_rows`, floats written exactly."""
    rows = ([row[name] for name in _COLUMNS] for row in comparison_rows(comparisons))
    return csv_text(_COLUMNS, rows)


def _methods_note(comparisons: Sequence[Comparison], *, mde: bool = False) -> str:
    methods = sorted({c.method for _, c in _walk(comparisons) if c.method != "none"})
    if not comparisons:
        return ""
    first = comparisons[0]
    level = f"{100 * first.confidence:g}%"
    adjust = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "no"}[first.adjustment]
    return (
        f"Difference = candidate - baseline, {level} interval; methods: {', '.join(methods)}; "
        f"{adjust} adjustment across model pairs (and across groups)"
        + ("; MDE: the smallest difference detected with 80% power." if mde else ".")
    )


def _decimals(c: Comparison) -> int:
    return _format.decimals_for(c.difference, c.ci_low, c.ci_high)


def comparison_table(
    comparisons: Sequence[Comparison], *, groups: bool = False, width: int = 120
) -> Any:
    """The comparisons for the terminal, in the widest layout that fits ``width`` columns.

    ``wide``: metric, baseline, candidate, difference [interval], p, adjusted p, the side the
    difference favours (``candidate``, ``baseline`` or ``--``), pairs, the items left out (when
    any), MDE. ``narrow``: the pair under the metric, the interval under the difference, the
    adjusted p, the side, pairs. Narrower still: one block of lines per comparison. Numbers
    follow :mod:`itemscore.display._format` and are never cut. A difference significant after
    adjustment is bold; the caption says how it was computed and marks the metrics where
    lower is better.
    """
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from ._terminal import _table, _width_of, safe_text

    lower = sorted({c.metric for c in comparisons if not c.higher_is_better})

    def caption_of(mde: bool) -> str:
        """The note under a layout: MDE is explained only where its column is shown."""
        note = _methods_note(comparisons, mde=mde)
        return note + (f" Lower is better (↓) for {', '.join(lower)}." if lower else "")

    shown = list(_walk(comparisons, groups))
    left_out = any(c.n_unpaired for _, c in shown)

    def name_of(group: str | None, c: Comparison) -> str:
        name = _name(c) + ("" if c.higher_is_better else " ↓")
        return name if group is None else f"  {group}"

    def diff_of(c: Comparison, below: bool) -> Text:
        d = _decimals(c)
        text = Text(_format.format_signed(c.difference, d), style="bold" if c.significant else "")
        interval = _format.format_interval(c.ci_low, c.ci_high, d)
        if interval:
            text.append(("\n" if below else " ") + interval)
        return text

    def table_of(columns: list[tuple[str, str]], mde: bool) -> Table:
        table = _table(None, None, columns)
        table.caption = safe_text(caption_of(mde))
        return table

    wide = table_of(
        [("metric", "left"), ("baseline", "left"), ("candidate", "left"),
         ("difference [interval]", "right"), ("p", "right"), ("adj. p", "right"),
         ("better", "left"), ("pairs", "right"),
         *([("left out", "right")] if left_out else []), ("MDE", "right")],
        mde=True,
    )  # fmt: skip
    narrow = table_of(
        [("metric", "left"), ("difference", "right"), ("adj. p", "right"), ("better", "left"),
         ("pairs", "right")],
        mde=False,
    )  # fmt: skip
    for group, c in shown:
        p, adjusted = (_format.format_p(x, none="--") for x in (c.p_value, c.p_adjusted))
        mde = "--" if c.mde is None else _format.fixed(c.mde, _decimals(c))
        wide.add_row(
            safe_text(name_of(group, c)), safe_text(str(c.baseline)), safe_text(str(c.candidate)),
            diff_of(c, False), p, adjusted, _side(c), str(c.n_pairs),
            *([str(c.n_unpaired)] if left_out else []), mde,
        )  # fmt: skip
        pair = safe_text(name_of(group, c))
        pair.append(f"\n{c.candidate} vs {c.baseline}", style="dim")
        narrow.add_row(pair, diff_of(c, True), adjusted, _side(c), str(c.n_pairs))
    for table in (wide, narrow):
        if _width_of(table) <= width:
            return table
    lines: list[Any] = []
    for group, c in shown:
        lines.append(safe_text(f"{name_of(group, c)}: {c.candidate} vs {c.baseline}"))
        line = Text("    ")
        line.append_text(diff_of(c, False))
        adjusted = _format.format_p(c.p_adjusted, none="--")
        line.append(f"  adj. p {adjusted}  better: {_side(c)}  pairs {c.n_pairs}")
        lines.append(line)
    lines.append(safe_text(caption_of(mde=False)))
    return Group(*lines)


def _side(c: Comparison) -> str:
    """Which side the difference favours: ``candidate``, ``baseline``, or ``--`` (neither)."""
    if c.better is None:
        return "--"
    return "candidate" if c.better == c.candidate else "baseline"


def _same_model(c: Comparison, runs: tuple[str, str] | None) -> str | None:
    """The model of ``c`` when it is one model of two runs (``model @ a``, ``model @ b``)."""
    if runs is None or c.baseline is None or c.candidate is None:
        return None
    tail_a, tail_b = f" @ {runs[0]}", f" @ {runs[1]}"
    if c.baseline.endswith(tail_a) and c.candidate.endswith(tail_b):
        model = c.baseline[: -len(tail_a)]
        if c.candidate[: -len(tail_b)] == model:
            return model
    return None


def _pair(c: Comparison, runs: tuple[str, str] | None) -> str:
    """``candidate vs baseline``; one model of two runs as ``model: run b vs run a``."""
    model = _same_model(c, runs)
    if model is not None and runs is not None:
        return f"{model}: {runs[1]} vs {runs[0]}"
    return f"{c.candidate} vs {c.baseline}"


#: A hyphen-minus before a number, where a paper wants a minus sign.
_MINUS = re.compile(r"(?<![0-9A-Za-z])-(?=[0-9.])")


def _tex_number(text: str) -> str:
    """A number's text as LaTeX: specials escaped, its minus a real minus (``$-$``)."""
    from .reports.table_tex import latex_escape

    return _MINUS.sub("$-$", latex_escape(text))


def _and(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _caption(
    comparisons: Sequence[Comparison],
    where: str,
    runs: tuple[str, str] | None,
    names: Mapping[str, str] | None,
) -> str:
    """The caption: what is compared on how many items, and the suite unless ``default``.

    E.g. ``Exact match: model-b against model-a on 989 shared items.``
    """
    if not comparisons:
        return "Paired differences between models" + (f" on {where}" if where else "") + "."
    metrics = list(dict.fromkeys(_name(c, names) for c in comparisons))
    models = list(dict.fromkeys(_same_model(c, runs) for c in comparisons))
    if runs is not None and None not in models:  # the same models in two runs
        shown = _and([str(m) for m in models]) if len(models) <= 3 else f"{len(models)} models"
        who = f"{runs[1]} against {runs[0]} for {shown}"
    else:
        pairs = list(dict.fromkeys(f"{c.candidate} against {c.baseline}" for c in comparisons))
        who = _and(pairs) if len(pairs) <= 2 else f"{len(pairs)} pairs of models"
    counts = sorted({c.n_pairs for c in comparisons})
    n = f"{counts[0]:,}" if len(counts) == 1 else f"{counts[0]:,} to {counts[-1]:,}"
    suite = f" of {where}" if where and where != "default" else ""
    return f"{_and(metrics)}: {who} on {n} shared items{suite}."


def comparison_tex(
    comparisons: Sequence[Comparison],
    *,
    groups: bool = False,
    suite: str | None = None,
    runs: tuple[str, str] | None = None,
    names: Mapping[str, str] | None = None,
) -> str:
    r"""The text of ``comparison.tex``: a booktabs ``table`` that fits one column.

    Like ``table.tex`` (:mod:`itemscore.reports.table_tex`): the wide layout (baseline and
    candidate in columns of their own, the interval beside the difference) when it fits a
    two-column article's ``\columnwidth``; else the narrow one (the pair under the metric, the
    interval under the difference, one p-value column), then with the pair on two lines; else
    the narrow one scaled to ``\columnwidth`` (``\resizebox``, package graphicx). Always a
    ``table`` placed at the top (``[t]``): a ``table*`` floats to the next page of a
    two-column paper. Significant differences (adjusted p below the level) are bold; minus
    signs are real minus signs; a note under the table names the tests; the caption says
    what is compared on how many items. The label is derived from what is compared.

    Args:
        comparisons: What :func:`itemscore.compare` returned.
        groups: Add one row per group comparison.
        suite: The suite id (default: read from the keys); named in the caption unless it
            is ``default``.
        runs: The labels of two runs compared (``compare(..., labels=)``): one model of both
            is then shown as ``model: run b vs run a``.
        names: Display names of the metric labels (``{"exact_match": "Exact match"}``).
    """
    from .reports.table_tex import (
        COLUMN_PT,
        estimate_width,
        latex_escape,
        scriptsize,
        stack_lines,
        table_label,
        tex_table,
        tex_text,
    )

    wide: list[list[str]] = [
        ["Metric", "Baseline", "Candidate", "Difference [interval]", "$p$", r"adj.\ $p$", "Pairs"]
    ]
    narrow_head = [
        "Metric", r"\begin{tabular}[b]{@{}r@{}}Difference \\ {[}interval{]}\end{tabular}",
        r"adj.\ $p$", "Pairs",
    ]  # fmt: skip
    narrow: list[list[str]] = [narrow_head]
    stacked: list[list[str]] = [narrow_head]
    for group, c in _walk(comparisons, groups):
        shown = _name(c, names)
        name = tex_text(shown if group is None else f"{shown}: {group}")
        d = _decimals(c)
        diff = _tex_number(_format.format_signed(c.difference, d, none="--"))
        if c.significant:
            diff = rf"\textbf{{{diff}}}"
        interval = _tex_number(_format.format_interval(c.ci_low, c.ci_high, d))
        p, adjusted = (
            _tex_number(_format.format_p(x, none="--")) for x in (c.p_value, c.p_adjusted)
        )
        baseline, candidate = tex_text(str(c.baseline)), tex_text(str(c.candidate))
        wide.append(
            [name, baseline, candidate, f"{diff} {interval}".strip(), p, adjusted, str(c.n_pairs)]
        )
        numbers = [stack_lines([diff, scriptsize(interval)], "r"), adjusted, str(c.n_pairs)]
        pair = _pair(c, runs)
        narrow.append([stack_lines([name, scriptsize(tex_text(pair))], "l"), *numbers])
        first, _, rest = pair.partition(" vs ")
        lines = (
            [scriptsize(tex_text(first)), scriptsize(tex_text(f"vs {rest}"))] if rest else [pair]
        )
        stacked.append([stack_lines([name, *lines], "l"), *numbers])
    layouts = [("wide", wide), ("narrow", narrow), ("narrow, the pair on two lines", stacked)]
    fitting = [(what, rows) for what, rows in layouts if estimate_width(rows) <= COLUMN_PT]
    layout, rows = fitting[0] if fitting else ("narrow, scaled to the column", stacked)
    scaled = not fitting
    note = latex_escape(_methods_note(comparisons)).replace(
        "candidate - baseline", "candidate $-$ baseline"
    )
    if comparisons:
        note += " Bold: significant after the adjustment."
    lower = sorted({_name(c, names) for c in comparisons if not c.higher_is_better})
    if lower:
        note += f" Lower is better for {latex_escape(', '.join(lower))}."
    keys = [f"{c.key}\x1f{c.baseline}\x1f{c.candidate}" for c in comparisons]
    where = (
        suite
        if suite is not None
        else (comparisons[0].key.rsplit(".", 1)[0] if comparisons else "")
    )
    label = table_label("comparison-", where, "runs", keys, sep="\x1e")
    left = 3 if rows is wide else 1
    spec = "l" * left + "r" * (len(rows[0]) - left)
    comments = [
        r"% itemscore comparison: difference = candidate - baseline with its interval.",
        rf"% Needs \usepackage{{{'booktabs,graphicx' if scaled else 'booktabs'}}}. Layout: "
        f"{layout} in a table (estimated {estimate_width(rows):.0f}pt wide).",
    ]
    caption = tex_text(_caption(comparisons, where, runs, names))
    lines = [" & ".join(r) + r" \\" for r in rows]
    return tex_table(
        comments, "table", spec, lines, 1, note, caption, label, place="t", scaled=scaled
    )


def plot_available() -> bool:
    """Whether matplotlib (the ``plot`` extra) can be imported."""
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None


#: Forest-plot colours (Okabe-Ito, colour-blind safe): the candidate significantly better,
#: significantly worse, or no significant difference.
PLOT_COLOURS = {"better": "#009E73", "worse": "#D55E00", "unclear": "#7f7f7f"}


def _verdict(c: Comparison) -> str:
    if c.better is None:
        return "unclear"
    return "better" if c.better == c.candidate else "worse"


def forest_plot(
    comparisons: Sequence[Comparison], runs: tuple[str, str] | None = None
) -> dict[str, bytes]:
    """A forest plot of the differences, one panel per metric, as ``{"png": ..., "svg": ...}``.

    Each metric gets its own x axis, scaled to its own differences and labelled with which way
    is better; one row per model pair, a dot at the difference and a bar for its interval,
    a dashed line at 0; colours say whether the candidate is significantly better, worse, or
    neither (a legend names them). ``runs``: the labels of two runs compared, so that one
    model of both reads ``model: run b vs run a``. Drawn with matplotlib's Agg backend: no
    display, nothing downloaded.
    """
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    rows = [c for c in comparisons if c.difference is not None]
    metrics = list(dict.fromkeys(_name(c) for c in rows)) or [""]
    heights = [max(1, sum(_name(c) == m for c in rows)) for m in metrics]
    fig, axes = plt.subplots(
        len(metrics), 1, figsize=(7.0, 1.3 + 0.45 * sum(heights) + 0.55 * len(metrics)),
        gridspec_kw={"height_ratios": heights}, squeeze=False,
    )  # fmt: skip
    try:
        for ax, metric in zip(axes[:, 0], metrics):
            mine = [c for c in rows if _name(c) == metric]
            for y, c in enumerate(reversed(mine)):
                assert c.difference is not None
                low = c.ci_low if c.ci_low is not None else c.difference
                high = c.ci_high if c.ci_high is not None else c.difference
                color = PLOT_COLOURS[_verdict(c)]
                ax.plot([low, high], [y, y], color=color, linewidth=2)
                ax.plot([c.difference], [y], "o", color=color)
            ax.axvline(0.0, color="black", linewidth=0.8, linestyle="--")
            ax.tick_params(axis="x", labelsize=7)
            ax.set_yticks(range(len(mine)))
            ax.set_yticklabels([_pair(c, runs) for c in reversed(mine)], fontsize=8)
            if mine:
                higher = mine[0].higher_is_better
                arrow = "→" if higher else "←"
                ax.set_xlabel(
                    f"{metric}: difference (candidate - baseline); {arrow} candidate better "
                    f"({_format.direction(higher)})",
                    fontsize=8,
                )
                ax.set_ylim(-0.6, len(mine) - 0.4)
        if rows:
            level = f"{100 * rows[0].confidence:g}%"
            handles = [
                Line2D([], [], color=PLOT_COLOURS[k], marker="o", label=text)
                for k, text in (
                    ("better", "candidate significantly better"),
                    ("worse", "candidate significantly worse"),
                    ("unclear", "no significant difference"),
                )
            ]
            fig.legend(
                handles=handles, loc="upper center", ncol=3, fontsize=7, frameon=False,
                title=f"{level} intervals of paired differences", title_fontsize=8,
            )  # fmt: skip
            fig.tight_layout(rect=(0, 0, 1, 0.9))
        else:
            axes[0, 0].set_title("no comparison has a value")
            fig.tight_layout()
        return figure_files(fig, "itemscore-comparison")
    finally:
        plt.close(fig)


def write_comparison(
    comparisons: Sequence[Comparison],
    out_dir: Path,
    sources: Sequence[str] = (),
    *,
    groups: bool = False,
    runs: tuple[str, str] | None = None,
    names: Mapping[str, str] | None = None,
) -> list[Path]:
    """Write comparison.json, .csv, .tex and (with matplotlib) .png and .svg into ``out_dir``.

    Everything is rendered before the first file is written, and each file is written
    atomically; the paths written are returned. ``runs`` (the labels of two runs) and
    ``names`` (display names of the metric labels) are as in :func:`comparison_tex`.
    """
    files = {
        "comparison.json": comparison_json(comparisons, sources, runs).encode("utf-8"),
        "comparison.csv": comparison_csv(comparisons).encode("utf-8"),
        "comparison.tex": comparison_tex(comparisons, groups=groups, runs=runs, names=names).encode(
            "utf-8"
        ),
    }
    if plot_available():
        for fmt, data in forest_plot(comparisons, runs).items():
            files[f"comparison.{fmt}"] = data
    return [_atomic_write_bytes(out_dir / name, data) for name, data in files.items()]


def _atomic_write_bytes(path: Path, data: bytes) -> Path:
    """Write through a temporary file in the same folder, then rename; mode as ``open`` gives."""
    import os
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        mask = os.umask(0o022)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
