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
from itemscore._compare_out import comparison_tex
from itemscore.reports.table_tex import COLUMN_PT, TEXT_PT, latex_table, run_label

PDFLATEX = shutil.which("pdflatex")
needs_pdflatex = pytest.mark.skipif(
    PDFLATEX is None or shutil.which("kpsewhich") is None,
    reason="pdflatex (texlive-latex-base, texlive-latex-recommended) is not installed: the "
    "Makefile's .venv/.texlive layer installs it as root",
)
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


def test_four_metrics_fit_one_column_unscaled() -> None:
    """Four metrics and three models: no scaling, and a layout whose estimate fits its float."""
    tex = latex_table(four_metrics())
    assert r"\resizebox" not in tex
    assert "graphicx" not in tex
    env = "table*" if r"\begin{table*}" in tex else "table"
    estimate = float(re.search(r"estimated (\d+)pt wide", tex).group(1))  # type: ignore[union-attr]
    assert estimate <= (COLUMN_PT if env == "table" else TEXT_PT)


def test_a_small_table_is_one_column_models_as_rows() -> None:
    """Two short model names and two metrics: a plain ``table``, models as rows.

    Four metrics no longer fit that way: the same numbers are transposed (metrics as rows).
    """
    data = [ItemResult(id=str(i), model=m, output="a", expected="a") for m in "ab" for i in "123"]
    tex = latex_table(itemscore.score(data, ["exact_match", "answered_rate"], suite_id="qa"))
    assert r"\begin{table}[htbp]" in tex
    assert "Layout: models as rows" in tex
    tex = latex_table(four_metrics(("a", "b"), suite="qa"))
    assert r"\begin{table}[htbp]" in tex
    assert "Layout: metrics as rows" in tex


def test_table_names_metrics_methods_and_n() -> None:
    """Display names in the header (words stacked), then each column's interval method and n."""
    tex = latex_table(four_metrics(("a", "b")))
    body = tex.split(r"\toprule")[1]
    assert r"Exact \\ match" in body
    assert r"Token \\ F1" in body
    assert body.count(r"{\scriptsize Wilson} \\ {\scriptsize n=30}") == 3
    assert r"{\scriptsize normal} \\ {\scriptsize n=30}" in body


def test_caption_is_one_sentence_and_the_label_comes_from_the_run() -> None:
    """One sentence of caption, a note under the table, a label that differs between runs."""
    tex = latex_table(four_metrics())
    caption = next(line for line in tex.splitlines() if line.startswith(r"\caption"))
    assert caption == r"\caption{Results on squad\_v1.}"
    assert r"\footnotesize\raggedright Note: Each value has its 95\% confidence interval" in tex
    label = run_label(four_metrics())
    assert label.startswith("tab:itemscore-squad-v1-")
    assert rf"\label{{{label}}}" in tex
    assert run_label(four_metrics(MODELS[:2])) != label


def test_the_caption_of_the_unnamed_suite_says_what_the_table_holds() -> None:
    """No suite id given: the caption names the metrics and the models, not "default"."""
    caption = next(
        line
        for line in latex_table(four_metrics(suite="default")).splitlines()
        if "caption" in line
    )
    assert caption == (
        r"\caption{Exact match, Token F1, Answered rate and Accuracy of gpt-4o-mini-2024, "
        r"llama-3.1-70b and mistral-large.}"
    )


def test_group_rows_on_request() -> None:
    """``groups=True`` adds each group's row (with its n) and the mean over groups."""
    data = [
        ItemResult(id=str(i), model=m, group=("algebra", "history")[i % 2], output="a",
                   expected="a" if i % 3 else "b")
        for m in ("a", "b") for i in range(40)
    ]  # fmt: skip
    result = itemscore.score(data, ["exact_match"], suite_id="g")
    plain, grouped = latex_table(result), latex_table(result, groups=True)
    assert "algebra" not in plain
    assert r"\quad algebra" in grouped
    assert r"\quad mean of groups" in grouped
    assert "n=20" in grouped


def _compile(folder: Path, tex: str, *, twocolumn: bool = False) -> str:
    assert PDFLATEX is not None
    folder.mkdir(exist_ok=True)
    (folder / "table.tex").write_text(tex, encoding="utf-8")
    options = "[twocolumn]" if twocolumn else ""
    tabular = tex[tex.index(r"\begin{tabular}{") : tex.rindex(r"\end{tabular}") + 13]
    (folder / "paper.tex").write_text(
        rf"\documentclass{options}{{article}}"
        "\n\\usepackage[T1]{fontenc}\\usepackage{booktabs,graphicx}\n\\begin{document}\n"
        r"\sbox0{\small\setlength{\tabcolsep}{4pt}" + tabular + "}"
        r"\typeout{NATURAL=\the\wd0}\typeout{COLUMN=\the\columnwidth}"
        r"\typeout{TEXT=\the\textwidth}"
        "\n\\input{table.tex}\n\\end{document}\n",
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


def _grouped_two_models() -> RunResult:
    data = [
        ItemResult(id=str(i), model=m, group=f"subject_{i % 6}", output="Paris",
                   expected="Paris" if i % 4 else "Rome", metadata={"cost": 0.0004 * (1 + k)})
        for k, m in enumerate(("gpt-4o-mini-2024", "llama-3.1-70b"))
        for i in range(120)
    ]  # fmt: skip
    return itemscore.score(data, ["exact_match", "f1", "cost"], suite_id="mmlu")


def _three_models() -> RunResult:
    data = [
        ItemResult(id=str(i), model=m, output=("Paris", "Rome")[(i + k) % (2 + k) == 0],
                   expected="Paris")
        for k, m in enumerate(MODELS)
        for i in range(60)
    ]  # fmt: skip
    return itemscore.score(data, ["exact_match", "token_f1", "answered_rate"], suite_id="qa")


CASES = {
    "four-metrics": lambda: latex_table(four_metrics()),
    "two-models": lambda: latex_table(four_metrics(MODELS[:2])),
    "with-cost": lambda: latex_table(_grouped_two_models()),
    "by-group": lambda: latex_table(_grouped_two_models(), groups=True),
    "comparison": lambda: comparison_tex(itemscore.compare(_grouped_two_models())),
    "comparison-groups": lambda: comparison_tex(
        itemscore.compare(_grouped_two_models()), groups=True
    ),
    "comparison-three": lambda: comparison_tex(itemscore.compare(_three_models())),
}


@needs_pdflatex
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("twocolumn", [False, True], ids=["one-column", "two-column"])
def test_pdflatex_compiles_without_an_overfull_box(
    tmp_path: Path, case: str, twocolumn: bool
) -> None:
    """Compiled in one- and two-column articles: no overfull box, and the estimate is generous."""
    tex = CASES[case]()
    log = _compile(tmp_path / "paper", tex, twocolumn=twocolumn)
    assert "Overfull" not in log
    natural = _pt(log, "NATURAL")
    estimate = float(re.search(r"estimated (\d+)pt wide", tex).group(1))  # type: ignore[union-attr]
    assert natural <= estimate + 1
    room = _pt(log, "COLUMN") if r"\begin{table}" in tex else _pt(log, "TEXT")
    assert natural <= room or r"\resizebox{\columnwidth}" in tex  # else scaled to the column


@needs_pdflatex
def test_pdflatex_typesets_hostile_names_as_text(tmp_path: Path) -> None:
    r"""LaTeX specials, a newline and \input in names compile, and nothing is read in."""
    models = ("50% & $x$ #1 _ {a} ~ ^ \\ [b] <c> |d|", "evil\n\n\\input{/etc/passwd}")
    result = four_metrics(models, suite="qa\n\\input{/etc/hostname}%")
    log = _compile(tmp_path, latex_table(result))
    assert "/etc/passwd" not in log.replace("textbackslash", "")
    assert "(/etc/" not in log  # no file was opened


def test_by_group_on_the_command_line_adds_the_group_rows(tmp_path: Path) -> None:
    """`score --by-group --out` writes table.tex with one row per group; without it, none."""
    from click.testing import CliRunner

    from itemscore.cli import cli

    data = tmp_path / "d.jsonl"
    data.write_text(
        "".join(
            f'{{"id": "{i}", "output": "a", "expected": "a", "group": "g{i % 2}"}}\n'
            for i in range(8)
        ),
        encoding="utf-8",
    )
    for flag, shown in (("--by-group", True), (None, False)):
        out = tmp_path / f"out-{shown}"
        args = ["score", str(data), "-m", "exact_match", "--out", str(out), "--report", "tex"]
        result = CliRunner().invoke(cli, [*args, *([flag] if flag else [])])
        assert result.exit_code == 0, result.output
        assert (r"\quad g0" in (out / "table.tex").read_text(encoding="utf-8")) is shown
