"""table.tex for papers: fits one column (estimated always, compiled with pdflatex when present).

The pdflatex tests are skipped where no ``pdflatex`` is installed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import itemscore
from itemscore import ItemResult, RunResult
from itemscore.reports.table_tex import latex_table

PDFLATEX = shutil.which("pdflatex")
needs_pdflatex = pytest.mark.skipif(PDFLATEX is None, reason="pdflatex is not installed")
#: \columnwidth of a one-column article at 10pt (the widest a table may be unscaled).
ONE_COLUMN_PT = 345.0
MODELS = ("gpt-4o-mini-2024", "llama-3.1-70b", "mistral-large")


def four_metrics(models: tuple[str, ...] = MODELS, suite: str = "squad_v1") -> RunResult:
    data = [
        ItemResult(
            id=f"{m}-{i}", model=m, output=("Paris", "Rome", "x")[i % 3], expected=("Paris",)
        )
        for m in models
        for i in range(30)
    ]
    metrics = ["exact_match", "token_f1", "answered_rate", "accuracy"]
    return itemscore.score(data, metrics, suite_id=suite)


def _plain(cell: str) -> tuple[str, float]:
    """A cell's visible characters and their width per character in pt (conservative)."""
    small = r"\scriptsize" in cell
    text = re.sub(r"\\text(bf|it)\{([^}]*)\}", r"\2", cell)
    text = text.replace(r"{\scriptsize ", "").replace("{[}", "[").replace("{]}", "]")
    text = re.sub(r"\\text[a-z]+\{\}", "x", text)
    text = re.sub(r"\\(.)", r"\1", text).replace("{", "").replace("}", "")
    # \small is 9pt and \scriptsize 6pt inside it; 0.55 em covers digits (0.5 em) and text.
    return text.strip(), (6.0 if small else 9.0) * 0.55


def estimated_width(tex: str, tabcolsep: float = 4.0) -> float:
    """The natural width of the tabular in pt, from its cells' characters."""
    body = tex.split(r"\toprule")[1].split(r"\bottomrule")[0]
    widths: dict[int, float] = {}
    for line in body.splitlines():
        if not line.endswith(r"\\"):
            continue
        for column, cell in enumerate(line[: -len(r"\\")].split(" & ")):
            text, per_char = _plain(cell)
            widths[column] = max(widths.get(column, 0.0), len(text) * per_char)
    return sum(widths.values()) + 2 * tabcolsep * len(widths)


def test_four_metrics_fit_one_column_unscaled() -> None:
    """Four metrics and three models fit a one-column article without scaling (estimate)."""
    tex = latex_table(four_metrics())
    assert estimated_width(tex) <= ONE_COLUMN_PT
    # Narrower columns (two-column papers) scale the table down, never overflow.
    assert r"\resizebox{\ifdim\width>\columnwidth\columnwidth\else\width\fi}{!}" in tex


def test_table_names_metrics_methods_and_n() -> None:
    """Display names in the header, then each column's interval method and n."""
    tex = latex_table(four_metrics())
    header, sub_header = tex.split(r"\toprule")[1].strip().splitlines()[:2]
    assert header == r"Model & Exact match & Token F1 & Answered rate & Accuracy \\"
    assert sub_header.count(r"{\scriptsize Wilson, n=30}") == 3
    assert r"{\scriptsize normal, n=30}" in sub_header
    assert r"\caption{Results on squad\_v1:" in tex
    assert r"\label{tab:itemscore-squad-v1}" in tex


def _compile(folder: Path, tex: str, *, twocolumn: bool = False) -> str:
    assert PDFLATEX is not None
    (folder / "table.tex").write_text(tex, encoding="utf-8")
    options = "[twocolumn]" if twocolumn else ""
    (folder / "paper.tex").write_text(
        rf"\documentclass{options}{{article}}"
        "\n\\usepackage[T1]{fontenc}\\usepackage{booktabs}\\usepackage{graphicx}\n"
        r"\let\origresizebox\resizebox"
        r"\renewcommand{\resizebox}[3]{\sbox0{#3}\typeout{NATURAL=\the\wd0}"
        r"\typeout{COLUMN=\the\columnwidth}\origresizebox{#1}{#2}{#3}}"
        "\n\\begin{document}\n\\input{table.tex}\n\\end{document}\n",
        encoding="utf-8",
    )
    proc = subprocess.run(
        [PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "paper.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
    log = (folder / "paper.log").read_text(encoding="latin-1")
    assert proc.returncode == 0, log[-3000:]
    return log


def _pt(log: str, name: str) -> float:
    return float(re.search(rf"{name}=([0-9.]+)pt", log).group(1))  # type: ignore[union-attr]


@needs_pdflatex
def test_pdflatex_compiles_it_within_one_column(tmp_path: Path) -> None:
    """Compiled: no overfull box; unscaled in one column, scaled to fit two columns."""
    tex = latex_table(four_metrics())
    log = _compile(tmp_path, tex)
    assert "Overfull" not in log
    assert _pt(log, "NATURAL") <= _pt(log, "COLUMN")
    narrow = tmp_path / "two"
    narrow.mkdir()
    log = _compile(narrow, tex, twocolumn=True)
    assert "Overfull" not in log


@needs_pdflatex
def test_pdflatex_typesets_hostile_names_as_text(tmp_path: Path) -> None:
    r"""LaTeX specials, a newline and \input in names compile, and nothing is read in."""
    models = ("50% & $x$ #1 _ {a} ~ ^ \\ [b] <c> |d|", "evil\n\n\\input{/etc/passwd}")
    result = four_metrics(models, suite="qa\n\\input{/etc/hostname}%")
    log = _compile(tmp_path, latex_table(result))
    assert "/etc/passwd" not in log.replace("textbackslash", "")
    assert "(/etc/" not in log  # no file was opened
