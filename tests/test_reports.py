"""Report files: summary.csv, table.tex, items.jsonl, results.xlsx, plugin formats, atomic export.

The golden files under ``tests/golden/`` pin ``summary.csv`` and ``table.tex`` for a small
hand-written input; run with ``ITEMSCORE_UPDATE_GOLDEN=1`` to rewrite them after a deliberate
change (and review the diff).
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

import itemscore
from itemscore import (
    ConfigError,
    Estimate,
    ItemResult,
    ItemScore,
    Metric,
    MetricContext,
    RunResult,
    hookimpl,
)
from itemscore._plugins import plugin_manager
from itemscore.inputs import read_items
from itemscore.reports import BUILTIN_FORMATS, export, resolve_formats
from itemscore.reports.items_jsonl import iter_lines as items_jsonl
from itemscore.reports.summary_csv import summary_csv
from itemscore.reports.table_tex import latex_escape, latex_table
from itemscore.summary._summary import SUMMARY_COLUMNS, summary_rows

GOLDEN = Path(__file__).parent / "golden"
UPDATE_GOLDEN = os.environ.get("ITEMSCORE_UPDATE_GOLDEN") == "1"
#: The metrics of the golden run; tests/test_cli.py runs the same through the command line.
GOLDEN_METRICS: list[Any] = [
    "exact_match",
    {"name": "exact_match", "label": "em_cased", "ignore_case": False},
    "answered_rate",
]


class Length(Metric):
    """Output length; lower is better."""

    metric_id = "test_reports_length"
    required_inputs = ("output",)
    higher_is_better = False
    aggregation = "mean"

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        assert item.output is not None
        return self.ok(float(len(item.output)))


class BrokenAggregate(Metric):
    """Scores every item, then fails to aggregate."""

    metric_id = "test_reports_broken"
    required_inputs = ()

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        return self.ok()

    def aggregate(self, scores: Sequence[ItemScore], ctx: MetricContext) -> Estimate:
        raise RuntimeError("no aggregate today")


def items(*outputs: tuple[str, str | None, str]) -> list[ItemResult]:
    return [
        ItemResult(id=f"{model}/{i}", model=model, output=output, expected=expected, group="g")
        for i, (model, output, expected) in enumerate(outputs)
    ]


@pytest.fixture
def result() -> RunResult:
    data = items(
        ("a", "x", "x"),
        ("a", "yy", "y"),
        ("b", "x", "x"),
        ("b", "xyz", "x"),
        ("b", None, "x"),
    )
    return itemscore.score(data, [Length, "answered_rate", BrokenAggregate], suite_id="t")


# -- LaTeX -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("&", r"\&"),
        ("%", r"\%"),
        ("$", r"\$"),
        ("#", r"\#"),
        ("_", r"\_"),
        ("{", r"\{"),
        ("}", r"\}"),
        ("~", r"\textasciitilde{}"),
        ("^", r"\textasciicircum{}"),
        ("\\", r"\textbackslash{}"),
        (r"a_b & {c}\d", r"a\_b \& \{c\}\textbackslash{}d"),
        ("plain text", "plain text"),
    ],
    ids=[
        "amp",
        "percent",
        "dollar",
        "hash",
        "underscore",
        "lbrace",
        "rbrace",
        "tilde",
        "caret",
        "backslash",
        "mixed",
        "plain",
    ],
)
def test_latex_escape(text: str, escaped: str) -> None:
    """Each LaTeX special character is escaped once (a backslash is not escaped twice)."""
    assert latex_escape(text) == escaped


def _rows(tex: str) -> dict[str, list[str]]:
    """Table rows by their first cell."""
    out = {}
    body = tex.split(r"\midrule")[1].split(r"\bottomrule")[0]
    for line in body.splitlines():
        if line.endswith(r" \\") and not line.startswith(" & "):
            cells = line[: -len(r" \\")].split(" & ")
            out[cells[0]] = cells[1:]
    return out


def _paired(n: int, right_a: int, right_b: int) -> RunResult:
    """Two models on the same ``n`` ids; the first ``right_x`` answers of each are right."""
    data = [
        ItemResult(id=str(i), model=model, output="x" if i < right else "y", expected="x")
        for model, right in (("a", right_a), ("b", right_b))
        for i in range(n)
    ]
    return itemscore.score(data, ["exact_match", "answered_rate"])


def test_bold_only_for_a_significant_lead() -> None:
    """A lead the paired test finds significant is bold, with a note naming the test."""
    tex = latex_table(_paired(60, 60, 30), transpose=False)
    rows = _rows(tex)
    assert rows["a"][0].startswith(r"\textbf{1.000}")
    assert rows["b"][0].startswith("0.500")
    assert not any(cell.startswith(r"\textbf") for cell in rows["a"][1:] + rows["b"][1:])
    assert "McNemar" in tex


def test_failed_aggregate_shows_error_and_no_bold(result: RunResult) -> None:
    """A measurement whose aggregate raised shows `error` and takes no part in bolding."""
    rows = _rows(latex_table(result, transpose=False))
    assert rows["a"][2] == r"\textit{error}"
    assert rows["b"][2] == r"\textit{error}"


def test_a_higher_value_alone_is_not_bold() -> None:
    """6 of 10 against 5 of 10 is no significant lead: nothing bold; one model: nothing bold."""
    tex = latex_table(_paired(10, 6, 5))
    assert r"\textbf" not in tex
    assert "McNemar" not in tex
    alone = itemscore.score(items(("a", "x", "x")), ["answered_rate"])
    assert r"\textbf" not in latex_table(alone)


def test_table_escapes_labels_and_models() -> None:
    """Metric labels and model names with special characters are escaped."""
    data = [ItemResult(id="1", model="m_1 & 2%", output="x")]
    result = itemscore.score(data, [{"name": "answered_rate", "label": "rate_#1"}])
    tex = latex_table(result)
    assert r"Model & rate\_\#1 \\" in tex
    assert r"m\_1 \& 2\% & " in tex


def test_table_is_booktabs_with_one_column_per_measurement(result: RunResult) -> None:
    """tabular with l + one r per measurement, booktabs rules, one row per model."""
    tex = latex_table(result, transpose=False)
    assert r"\begin{tabular}{lrrr}" in tex
    assert tex.index(r"\begin{table") < tex.index(r"\caption{") < tex.index(r"\label{tab:")
    for rule in (r"\toprule", r"\midrule", r"\bottomrule", r"\end{tabular}"):
        assert rule in tex
    assert list(_rows(tex)) == ["a", "b"]


# -- summary.csv and items.jsonl -------------------------------------------------------------


def test_summary_rows_per_model_measurement_and_group(result: RunResult) -> None:
    """One row per model and measurement, each followed by its macro row and its group rows."""
    rows = summary_rows(result)
    keys = [(r["model"], r["metric"], r["group"], r["aggregation"]) for r in rows]
    assert keys == [
        (model, label, group, aggregation)
        for model in ("a", "b")
        for label in ("test_reports_length", "answered_rate", "test_reports_broken")
        for group, aggregation in (
            ((None, "pooled"), (None, "macro"), ("g", "group"))
            if label != "test_reports_broken"  # a failed aggregate has no macro value
            else ((None, "pooled"), ("g", "group"))
        )
    ]
    broken = next(r for r in rows if r["metric"] == "test_reports_broken")
    assert broken["value"] is None
    assert broken["error_message"] == "RuntimeError: no aggregate today"


def test_summary_csv_reads_back_exactly(result: RunResult) -> None:
    """Floats in summary.csv are written exactly: they read back as the same numbers."""
    table = list(csv.DictReader(io.StringIO(summary_csv(result))))
    assert tuple(table[0]) == SUMMARY_COLUMNS
    measurement = result.by_model["b"]["t.answered_rate"]
    row = next(r for r in table if r["model"] == "b" and r["metric"] == "answered_rate")
    assert float(row["value"]) == measurement.value
    assert float(row["ci_low"]) == measurement.ci_low
    assert float(row["ci_high"]) == measurement.ci_high
    assert (row["n"], row["ok"], row["fail"], row["skip"], row["error"]) == (
        "3",
        "2",
        "1",
        "0",
        "0",
    )


def test_items_jsonl_holds_every_item_and_score(result: RunResult) -> None:
    """One JSON object per item, with one score per metric label."""
    lines = [json.loads(line) for line in items_jsonl(result)]
    assert [line["id"] for line in lines] == [item.id for item in result.items]
    assert set(lines[4]["scores"]) == {
        "test_reports_length",
        "answered_rate",
        "test_reports_broken",
    }
    assert lines[4]["scores"]["test_reports_length"]["status"] == "skip"


# -- golden files ----------------------------------------------------------------------------


def golden_result() -> RunResult:
    data = read_items(GOLDEN / "small.jsonl")
    return itemscore.score(data, GOLDEN_METRICS, suite_id="golden_qa")


@pytest.mark.parametrize(
    ("name", "render"),
    [("small.summary.csv", summary_csv), ("small.table.tex", latex_table)],
    ids=["summary-csv", "table-tex"],
)
def test_golden_reports(name: str, render: Any) -> None:
    """summary.csv and table.tex of the small hand-written input match the golden files."""
    text = render(golden_result())
    path = GOLDEN / name
    if UPDATE_GOLDEN:
        path.write_text(text, encoding="utf-8", newline="")
    assert text == path.read_text(encoding="utf-8")


def test_golden_input_numbers_are_as_counted_by_hand() -> None:
    """The golden numbers rest on counts checked by hand (see the comments in this test)."""
    result = golden_result()
    alpha, beta = result.by_model["alpha"], result.by_model["beta_2 & co"]
    # alpha: q1, q2 (case ignored), q3 right, q4 failed request, q5 has no answer key.
    assert alpha["golden_qa.exact_match"].value == 3 / 4
    assert alpha["golden_qa.em_cased"].value == 2 / 4  # "rome" != "Rome"
    # beta: q1 ("Paris!" trimmed) and q3 right; q2 and q4 wrong; q5 unanswered, no key.
    assert beta["golden_qa.exact_match"].value == 2 / 4
    assert beta["golden_qa.em_cased"].value == 1 / 4  # "h2o" != "H2O"
    assert alpha["golden_qa.answered_rate"].value == beta["golden_qa.answered_rate"].value == 4 / 5


# -- export ----------------------------------------------------------------------------------


def test_export_writes_every_builtin_report(result: RunResult, tmp_path: Path) -> None:
    """Default export: every built-in report, in format order, readable back."""
    out = tmp_path / "new" / "out"
    written = export(result, out, list(BUILTIN_FORMATS))
    assert [p.name for p in written] == list(BUILTIN_FORMATS.values())
    assert sorted(p.name for p in out.iterdir() if p.name != ".itemscore") == sorted(
        BUILTIN_FORMATS.values()
    )
    assert RunResult.load_json(out / "results.json").measurements == result.measurements
    assert (out / "table.tex").read_text(encoding="utf-8") == latex_table(result)


def test_reports_get_ordinary_file_permissions(result: RunResult, tmp_path: Path) -> None:
    """Reports are readable like any file the user creates (not private temporary files)."""
    reference = tmp_path / "reference"
    reference.touch()
    (path,) = export(result, tmp_path / "out", ["csv"])
    assert path.stat().st_mode == reference.stat().st_mode


def test_unknown_format_is_refused_before_writing(result: RunResult, tmp_path: Path) -> None:
    """An unknown format is an error with a suggestion, and no folder is created."""
    out = tmp_path / "out"
    with pytest.raises(ConfigError, match="Did you mean 'tex'"):
        export(result, out, ["csv", "texx"])
    assert not out.exists()


def test_out_dir_that_is_a_file_is_refused(result: RunResult, tmp_path: Path) -> None:
    """--out naming an existing file is a configuration error."""
    target = tmp_path / "taken"
    target.write_text("keep")
    with pytest.raises(ConfigError, match="is an existing file"):
        export(result, target, ["csv"])
    assert target.read_text() == "keep"


def test_failure_mid_export_leaves_no_partial_files(
    result: RunResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When a writer fails after others succeeded, the old set stays and nothing new remains."""
    import itemscore.reports.table_tex as table_tex

    def half_then_fail(result: RunResult, path: Path) -> None:
        path.write_text("\\begin{tabular}")  # a partial file under the temporary name
        raise OSError("disk full")

    existing = tmp_path / "existing"
    export(result, existing, ["csv"])
    old = (existing / "summary.csv").read_text()
    monkeypatch.setattr(table_tex, "write", half_then_fail)
    with pytest.raises(OSError, match="disk full"):
        export(result, existing, ["json", "csv", "tex", "items"])
    assert sorted(p.name for p in existing.iterdir()) == [".itemscore", "summary.csv"]
    assert (existing / "summary.csv").read_text() == old  # the old report is untouched
    assert len(list((existing / ".itemscore").glob("set-*"))) == 1  # the old set only
    fresh = tmp_path / "a" / "b"
    with pytest.raises(OSError, match="disk full"):
        export(result, fresh, ["json", "tex"])
    assert not (tmp_path / "a").exists()  # folders created for the export are removed too


@pytest.fixture
def without_xlsxwriter(monkeypatch: pytest.MonkeyPatch) -> None:
    """XlsxWriter cannot be imported, and no notice has been given yet in this process."""
    import itemscore.reports as reports

    monkeypatch.setitem(sys.modules, "xlsxwriter", None)
    monkeypatch.setattr(reports, "_noticed", set())


@pytest.mark.usefixtures("without_xlsxwriter")
def test_default_export_skips_xlsx_with_a_notice(result: RunResult, tmp_path: Path) -> None:
    """Without XlsxWriter every other report is written, and the notice says how to install it."""
    notices: list[str] = []
    written = export(result, tmp_path / "one", notice=notices.append)
    names = [p.name for p in written]
    assert "results.xlsx" not in names
    assert [n for n in names if n in BUILTIN_FORMATS.values()] == [
        f
        for f in BUILTIN_FORMATS.values()
        if f not in ("results.xlsx", "items.jsonl", "results.md", "eee", "leaderboard")
    ]
    assert not (tmp_path / "one" / "results.xlsx").exists()
    assert len(notices) == 1
    assert "results.xlsx is not written" in notices[0]
    assert "pip install 'XlsxWriter>=3.1'" in notices[0]
    export(result, tmp_path / "two", notice=notices.append)
    assert len(notices) == 1  # once per process, not once per export


@pytest.mark.usefixtures("without_xlsxwriter")
def test_skipped_xlsx_notice_goes_to_stderr_by_default(
    result: RunResult, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Never silent: with no notice callback the note is printed on standard error."""
    export(result, tmp_path)
    assert "pip install 'XlsxWriter>=3.1'" in capsys.readouterr().err


@pytest.mark.usefixtures("without_xlsxwriter")
def test_asking_for_xlsx_without_xlsxwriter_is_an_error(result: RunResult, tmp_path: Path) -> None:
    """An explicit request for xlsx fails before anything is written, naming the install."""
    with pytest.raises(ConfigError, match=r"needs XlsxWriter.*pip install 'XlsxWriter>=3\.1'"):
        export(result, tmp_path / "out", ["csv", "xlsx"])
    assert not (tmp_path / "out").exists()
    with pytest.raises(ConfigError, match="XlsxWriter"):
        resolve_formats(["xlsx"])


@pytest.mark.usefixtures("without_xlsxwriter")
def test_cli_report_xlsx_without_xlsxwriter_fails_clearly(tmp_path: Path) -> None:
    """`--report xlsx` without the library: a non-zero exit with the install command."""
    from click.testing import CliRunner

    from itemscore.cli import cli

    data = tmp_path / "d.jsonl"
    data.write_text('{"output": "a", "expected": "a"}\n')
    out = tmp_path / "o"
    args = ["score", str(data), "-m", "exact_match", "--out", str(out), "--report", "xlsx"]
    ran = CliRunner().invoke(cli, args)
    assert ran.exit_code != 0
    assert "pip install 'XlsxWriter>=3.1'" in ran.output
    assert not (out / "results.xlsx").exists()


def test_xlsx_has_summary_and_outputs_sheets(tmp_path: Path) -> None:
    """The workbook has Summary and Outputs sheets; formula-like answers stay text."""
    openpyxl = pytest.importorskip("openpyxl")
    data = [
        ItemResult(id="1", output="=1+1", expected=("2", "two"), model="m"),
        ItemResult(id="2", output=None, expected=("x",), model="m"),
    ]
    result = itemscore.score(data, ["exact_match", "answered_rate"])
    (path,) = export(result, tmp_path, ["xlsx"])
    book = openpyxl.load_workbook(path)
    assert book.sheetnames == ["Summary", "Outputs"]
    summary = list(book["Summary"].values)
    assert summary[0] == SUMMARY_COLUMNS
    assert [row[1] for row in summary[1:]] == ["exact_match", "answered_rate"]
    outputs = list(book["Outputs"].values)
    assert outputs[0][:6] == ("id", "model", "group", "input", "output", "expected")
    assert outputs[1][4] == "=1+1"
    assert book["Outputs"]["E2"].data_type == "s"
    assert outputs[1][5] == "2 | two"
    assert outputs[2][4] is None
    assert outputs[0][6:] == (
        "exact_match",
        "exact_match status",
        "answered_rate",
        "answered_rate status",
    )
    assert outputs[2][6:] == (0.0, "fail", 0.0, "fail")


class TxtFormat:
    """An in-process plugin adding the export format ``txt``."""

    def __init__(self, name: str = "txt") -> None:
        self.name = name

    @hookimpl
    def itemscore_export_formats(self) -> dict[str, Any]:
        def write(result: RunResult, path: Path) -> None:
            path.write_text(f"{len(result.items)} items\n")

        return {self.name: write}


@pytest.fixture
def plugin() -> Iterator[Any]:
    pm = plugin_manager()
    registered: list[Any] = []

    def add(obj: Any) -> None:
        pm.register(obj)
        registered.append(obj)

    yield add
    for obj in registered:
        if pm.is_registered(obj):
            pm.unregister(obj)


def test_plugin_formats_are_written(result: RunResult, tmp_path: Path, plugin: Any) -> None:
    """A format from itemscore_export_formats is written to results.<name>, by default too."""
    plugin(TxtFormat())
    written = export(result, tmp_path, ["csv", "txt"])
    assert [p.name for p in written] == ["summary.csv", "results.txt"]
    assert (tmp_path / "results.txt").read_text() == "5 items\n"
    assert "txt" in [name for name, _, _ in resolve_formats(None)]


def test_plugin_format_may_not_shadow_a_builtin(result: RunResult, plugin: Any) -> None:
    """A plugin claiming a built-in format name is an error naming the plugin."""
    plugin(TxtFormat("json"))
    with pytest.raises(itemscore.ItemscoreError, match="export format 'json', which is built in"):
        resolve_formats(["csv"])
