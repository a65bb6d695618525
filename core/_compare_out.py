"""Comparison reports: a rich table, comparison.json/.csv/.tex and a forest plot (PNG, SVG).

Every file is built in memory first and then written atomically (a temporary file renamed
into place), so a failure leaves no half-written file behind.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ._compare import Comparison

__all__ = [
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


def _fixed(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "--"
    text = f"{value:+.{digits}f}"
    return text.replace("-0.000", "0.000").replace("+0.000", "0.000")


def _p(value: float | None) -> str:
    if value is None:
        return "--"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _methods_note(comparisons: Sequence[Comparison]) -> str:
    methods = sorted({c.method for _, c in _walk(comparisons) if c.method != "none"})
    if not comparisons:
        return ""
    first = comparisons[0]
    level = f"{100 * first.confidence:g}%"
    adjust = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "no"}[first.adjustment]
    return (
        f"Difference = candidate - baseline, {level} interval; methods: {', '.join(methods)}; "
        f"{adjust} adjustment across model pairs (and across groups); MDE at 80% power."
    )


def comparison_table(comparisons: Sequence[Comparison], *, groups: bool = False) -> Any:
    """A rich table: metric, baseline, candidate, difference [interval], p, adjusted p, pairs, MDE.

    A difference significant after adjustment is bold; the caption says how it was computed.
    """
    from rich.table import Table

    table = Table(caption=_methods_note(comparisons), caption_justify="left")
    for name in ("metric", "baseline", "candidate", "difference [CI]", "p", "adj. p"):
        table.add_column(
            name,
            justify="right" if name in ("p", "adj. p") else "left",
            no_wrap=name in ("metric", "difference [CI]"),
        )
    table.add_column("pairs", justify="right")
    table.add_column("MDE", justify="right")
    from rich.markup import escape

    for group, c in _walk(comparisons) if groups else ((None, c) for c in comparisons):
        diff = f"{_fixed(c.difference)} [{_fixed(c.ci_low)}, {_fixed(c.ci_high)}]"
        if c.significant:
            diff = f"[bold]{diff}[/bold]"
        pairs = str(c.n_pairs) + (f" (+{c.n_unpaired} left out)" if c.n_unpaired else "")
        table.add_row(
            escape(_name(c)) if group is None else f"  {group}",
            str(c.baseline),
            str(c.candidate),
            diff,
            _p(c.p_value),
            _p(c.p_adjusted),
            pairs,
            "--" if c.mde is None else f"{c.mde:.3f}",
        )
    return table


def comparison_tex(comparisons: Sequence[Comparison], *, digits: int = 3) -> str:
    r"""The text of ``comparison.tex``: a ``table`` environment (needs ``booktabs``).

    Significant differences (adjusted p below the level) are bold; the caption names the tests.
    """
    from .reports.table_tex import latex_escape

    def cell(value: float | None) -> str:
        return "--" if value is None else _fixed(value, digits)

    lines = [
        r"\begin{table}[ht]",
        r"\centering",
        r"\begin{tabular}{lllrrrr}",
        r"\toprule",
        r"Metric & Baseline & Candidate & Difference [interval] & $p$ & adj.\ $p$ & Pairs \\",
        r"\midrule",
    ]
    for group, c in _walk(comparisons):
        name = latex_escape(_name(c) if group is None else f"{_name(c)}: {group}")
        diff = f"{cell(c.difference)} [{cell(c.ci_low)}, {cell(c.ci_high)}]"
        if c.significant:
            diff = rf"\textbf{{{diff}}}"
        lines.append(
            " & ".join(
                [
                    name,
                    latex_escape(str(c.baseline)),
                    latex_escape(str(c.candidate)),
                    diff,
                    latex_escape(_p(c.p_value)),
                    latex_escape(_p(c.p_adjusted)),
                    str(c.n_pairs),
                ]
            )
            + r" \\"
        )
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        rf"\caption{{{latex_escape(_methods_note(comparisons))}}}",
        r"\label{tab:comparison}",
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"


def plot_available() -> bool:
    """Whether matplotlib (the ``plot`` extra) can be imported."""
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None


def forest_plot(comparisons: Sequence[Comparison]) -> dict[str, bytes]:
    """A forest plot of the differences with their intervals, as ``{"png": ..., "svg": ...}``.

    One row per comparison (headlines only), a dot at the difference, a bar for the interval,
    a vertical line at 0. Drawn with matplotlib's Agg backend: no display, nothing downloaded.
    """
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    rows = [c for c in comparisons if c.difference is not None]
    height = 1.2 + 0.4 * max(len(rows), 1)
    fig, ax = plt.subplots(figsize=(7.0, height))
    try:
        for y, c in enumerate(reversed(rows)):
            assert c.difference is not None
            low = c.ci_low if c.ci_low is not None else c.difference
            high = c.ci_high if c.ci_high is not None else c.difference
            color = "#1f77b4" if c.significant else "#7f7f7f"
            ax.plot([low, high], [y, y], color=color, linewidth=2)
            ax.plot([c.difference], [y], "o", color=color)
        ax.axvline(0.0, color="black", linewidth=0.8, linestyle="--")
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels(
            [f"{_name(c)}: {c.candidate} vs {c.baseline}" for c in reversed(rows)], fontsize=8
        )
        level = f"{100 * rows[0].confidence:g}%" if rows else ""
        ax.set_xlabel(f"difference (candidate - baseline), {level} interval")
        if not rows:
            ax.set_title("no comparison has a value")
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
    comparisons: Sequence[Comparison], out_dir: Path, sources: Sequence[str] = ()
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
        "comparison.tex": comparison_tex(comparisons).encode("utf-8"),
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
