"""Comparison reports: a rich table, comparison.json/.csv/.tex and a forest plot (PNG, SVG).

Every file is built in memory first and then written atomically (a temporary file renamed
into place), so a failure leaves no half-written file behind.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ._compare import Comparison
from .reports import _format

__all__ = [
    "PLOT_COLOURS",
    "PLOT_EXTRA",
    "comparison_csv",
    "comparison_json",
    "comparison_rows",
    "comparison_table",
    "comparison_tex",
    "forest_plot",
    "plot_available",
    "write_comparison",
]

_LABEL_UNSAFE = re.compile(r"[^A-Za-z0-9.-]+")

#: The optional extra that brings matplotlib for the forest plot.
PLOT_EXTRA = "itemscore[plot]"

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


def _name(c: Comparison) -> str:
    """A comparison's metric as tables show it: the label, and a further reducer's name."""
    head = f".{c.metric}["
    at = c.key.rfind(head)
    if at >= 0 and c.key.endswith("]"):
        return f"{c.metric} [{c.key[at + len(head) : -1]}]"
    return c.metric


def _walk(comparisons: Sequence[Comparison]) -> Iterator[tuple[str | None, Comparison]]:
    """Each headline comparison, followed by its group comparisons."""
    for c in comparisons:
        yield None, c
        yield from c.groups.items()


def comparison_rows(comparisons: Sequence[Comparison]) -> list[dict[str, Any]]:
    """One flat row per comparison and per group comparison (``group`` empty for headlines)."""
    rows = []
    for group, c in _walk(comparisons):
        row = {name: getattr(c, name) for name in _COLUMNS if name != "group"}
        row["group"] = group
        rows.append({name: row[name] for name in _COLUMNS})
    return rows


def comparison_json(comparisons: Sequence[Comparison], sources: Sequence[str] = ()) -> str:
    """The text of ``comparison.json``: the sources and every comparison with its groups."""
    document = {
        "schema": "itemscore.comparison",
        "version": 1,
        "sources": list(sources),
        "comparisons": [c.to_dict() for c in comparisons],
    }
    return json.dumps(document, ensure_ascii=False, allow_nan=False, indent=1) + "\n"


def _number(value: Any) -> Any:
    if isinstance(value, float):
        return repr(value)  # the shortest text that reads back as the same float
    return "" if value is None else value


def comparison_csv(comparisons: Sequence[Comparison]) -> str:
    """The text of ``comparison.csv``: :func:`comparison_rows`, floats written exactly."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(_COLUMNS)
    for row in comparison_rows(comparisons):
        writer.writerow([_number(row[name]) for name in _COLUMNS])
    return buffer.getvalue()


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


def _difference_text(c: Comparison) -> str:
    d = _decimals(c)
    interval = _format.format_interval(c.ci_low, c.ci_high, d)
    return f"{_format.format_signed(c.difference, d)} {interval}".strip()


def comparison_table(
    comparisons: Sequence[Comparison], *, groups: bool = False, width: int = 120
) -> Any:
    """The comparisons for the terminal, in the widest layout that fits ``width`` columns.

    ``wide``: metric, baseline, candidate, difference [interval], p, adjusted p, the side the
    difference favours (``candidate``, ``baseline`` or ``--``), pairs, the items left out (when
    any), MDE. ``narrow``: the pair under the metric, the interval under the difference, the
    adjusted p, the side, pairs. Narrower still: one block of lines per comparison. Numbers
    follow :mod:`itemscore.reports._format` and are never cut. A difference significant after
    adjustment is bold; the caption says how it was computed and marks the metrics where
    lower is better.
    """
    from rich import box
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from ._terminal import _width_of, safe_text

    lower = sorted({c.metric for c in comparisons if not c.higher_is_better})
    caption = _methods_note(comparisons, mde=True)
    if lower:
        caption += f" Lower is better (↓) for {', '.join(lower)}."
    shown = list(_walk(comparisons) if groups else ((None, c) for c in comparisons))
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

    def table_of(columns: list[tuple[str, str]]) -> Table:
        table = Table(caption=safe_text(caption), caption_justify="left", box=box.SIMPLE_HEAD)
        for name, justify in columns:
            table.add_column(Text(name), justify=justify, no_wrap=True)  # type: ignore[arg-type]
        return table

    wide = table_of(
        [("metric", "left"), ("baseline", "left"), ("candidate", "left"),
         ("difference [interval]", "right"), ("p", "right"), ("adj. p", "right"),
         ("better", "left"), ("pairs", "right"),
         *([("left out", "right")] if left_out else []), ("MDE", "right")]
    )  # fmt: skip
    narrow = table_of(
        [("metric", "left"), ("difference", "right"), ("adj. p", "right"), ("better", "left"),
         ("pairs", "right")]
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
    lines.append(safe_text(caption))
    return Group(*lines)


def _side(c: Comparison) -> str:
    """Which side the difference favours: ``candidate``, ``baseline``, or ``--`` (neither)."""
    if c.better is None:
        return "--"
    return "candidate" if c.better == c.candidate else "baseline"


def comparison_tex(
    comparisons: Sequence[Comparison], *, groups: bool = False, suite: str | None = None
) -> str:
    r"""The text of ``comparison.tex``: a booktabs table that fits a column unscaled.

    Like ``table.tex`` (:mod:`itemscore.reports.table_tex`): the wide layout (baseline and
    candidate in columns of their own, the interval beside the difference) when it fits a
    two-column article's ``\columnwidth``; else the narrow one (the pair under the metric, the
    interval under the difference, one p-value column); else the narrower in a ``table*``.
    Significant differences (adjusted p below the level) are bold; a note under the table
    names the tests. The label is derived from what is compared. ``groups``: add one row per
    group comparison.
    """
    import hashlib

    from .reports.table_tex import COLUMN_PT, TEXT_PT, estimate_width, latex_escape, tex_text

    def small(text: str) -> str:
        return rf"{{\scriptsize {text}}}" if text else ""

    def stack(lines: list[str], align: str) -> str:
        lines = [x for x in lines if x]
        if len(lines) < 2:
            return lines[0] if lines else ""
        return (
            rf"\begin{{tabular}}[t]{{@{{}}{align}@{{}}}}" + r" \\ ".join(lines) + r"\end{tabular}"
        )

    wide: list[list[str]] = [
        ["Metric", "Baseline", "Candidate", "Difference [interval]", "$p$", r"adj.\ $p$", "Pairs"]
    ]
    narrow: list[list[str]] = [
        ["Metric", r"\begin{tabular}[b]{@{}r@{}}Difference \\ {[}interval{]}\end{tabular}",
         r"adj.\ $p$", "Pairs"]
    ]  # fmt: skip
    for group, c in _walk(comparisons) if groups else ((None, c) for c in comparisons):
        name = tex_text(_name(c) if group is None else f"{_name(c)}: {group}")
        d = _decimals(c)
        diff = latex_escape(_format.format_signed(c.difference, d, none="--"))
        if c.significant:
            diff = rf"\textbf{{{diff}}}"
        interval = latex_escape(_format.format_interval(c.ci_low, c.ci_high, d))
        p, adjusted = (
            latex_escape(_format.format_p(x, none="--")) for x in (c.p_value, c.p_adjusted)
        )
        baseline, candidate = tex_text(str(c.baseline)), tex_text(str(c.candidate))
        wide.append(
            [name, baseline, candidate, f"{diff} {interval}".strip(), p, adjusted, str(c.n_pairs)]
        )
        narrow.append(
            [
                stack([name, small(f"{candidate} vs {baseline}")], "l"),
                stack([diff, small(interval)], "r"),
                adjusted,
                str(c.n_pairs),
            ]
        )
    w_wide, w_narrow = estimate_width(wide), estimate_width(narrow)
    if w_wide <= COLUMN_PT:
        rows, env, width = wide, "table", w_wide
    elif w_narrow <= COLUMN_PT:
        rows, env, width = narrow, "table", w_narrow
    else:
        rows, env, width = (wide, "table*", w_wide) if w_wide <= TEXT_PT else (
            narrow, "table*", w_narrow
        )  # fmt: skip
    note = _methods_note(comparisons)
    if comparisons:
        note += " Bold: significant after the adjustment."
    lower = sorted({c.metric for c in comparisons if not c.higher_is_better})
    if lower:
        note += f" Lower is better for {', '.join(lower)}."
    keys = [f"{c.key}\x1f{c.baseline}\x1f{c.candidate}" for c in comparisons]
    tag = hashlib.sha256("\x1e".join(keys).encode("utf-8", "surrogatepass")).hexdigest()[:6]
    where = (
        suite
        if suite is not None
        else (comparisons[0].key.rsplit(".", 1)[0] if comparisons else "")
    )
    label = "tab:itemscore-comparison-" + (_LABEL_UNSAFE.sub("-", where).strip("-") or "runs")
    on = f" on {tex_text(where)}" if where else ""
    spec = "l" * (3 if rows is wide else 1) + "r" * (len(rows[0]) - (3 if rows is wide else 1))
    lines = [
        r"% itemscore comparison: difference = candidate - baseline with its interval.",
        rf"% Needs \usepackage{{booktabs}}. Layout: {'wide' if rows is wide else 'narrow'} in a "
        f"{env} (estimated {width:.0f}pt wide).",
        rf"\begin{{{env}}}[htbp]",
        r"\centering",
        r"\small",
        r"\setlength{\tabcolsep}{4pt}",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(rows[0]) + r" \\",
        r"\midrule",
        *(" & ".join(r) + r" \\" for r in rows[1:]),
        r"\bottomrule",
        r"\end{tabular}",
        r"\par\smallskip",
        r"\parbox{\linewidth}{\footnotesize\raggedright Note: " + latex_escape(note) + "}",
        rf"\caption{{Paired differences between models{on}.}}",
        rf"\label{{{label}-{tag}}}",
        rf"\end{{{env}}}",
    ]
    return "\n".join(lines) + "\n"


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


def forest_plot(comparisons: Sequence[Comparison]) -> dict[str, bytes]:
    """A forest plot of the differences, one panel per metric, as ``{"png": ..., "svg": ...}``.

    Each metric gets its own x axis, scaled to its own differences and labelled with which way
    is better; one row per model pair, a dot at the difference and a bar for its interval,
    a dashed line at 0; colours say whether the candidate is significantly better, worse, or
    neither (a legend names them). Drawn with matplotlib's Agg backend: no display, nothing
    downloaded.
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
            ax.set_yticklabels(
                [f"{c.candidate} vs {c.baseline}" for c in reversed(mine)], fontsize=8
            )
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
        out = {}
        for fmt in ("png", "svg"):
            buffer = io.BytesIO()
            # No timestamps or random ids in the files: the same data gives the same bytes.
            metadata: dict[str, Any] = {"Software": None} if fmt == "png" else {"Date": None}
            fig.savefig(buffer, format=fmt, dpi=120, metadata=metadata)
            out[fmt] = buffer.getvalue()
        return out
    finally:
        plt.close(fig)


def write_comparison(
    comparisons: Sequence[Comparison],
    out_dir: Path,
    sources: Sequence[str] = (),
    *,
    groups: bool = False,
) -> list[Path]:
    """Write comparison.json, .csv, .tex and (with matplotlib) .png and .svg into ``out_dir``.

    Everything is rendered before the first file is written, and each file is written
    atomically.

    Returns:
        The paths written.
    """
    files = {
        "comparison.json": comparison_json(comparisons, sources).encode("utf-8"),
        "comparison.csv": comparison_csv(comparisons).encode("utf-8"),
        "comparison.tex": comparison_tex(comparisons, groups=groups).encode("utf-8"),
    }
    if plot_available():
        for fmt, data in forest_plot(comparisons).items():
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
