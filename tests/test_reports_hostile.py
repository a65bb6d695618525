"""Hostile strings through every report writer and the terminal tables (issue 7: 4, 5, 7-9, 15, 16).

Each named test reproduces one hole found by probing; the Hypothesis test at the end keeps
every writer safe for any mix of surrogates, markup, controls, formula prefixes, LaTeX
specials and path separators.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import re
import time
import zipfile
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

import itemscore
from itemscore import ItemResult, ItemScore, ItemscoreError, Metric, MetricContext, RunResult
from itemscore._plugins import plugin_manager
from itemscore._terminal import result_tables
from itemscore.display._csv import guard_cell
from itemscore.hookspecs import hookimpl
from itemscore.reports import BUILTIN_FORMATS, export
from itemscore.reports import results_xlsx as xlsx
from itemscore.reports.report_html import report_html
from itemscore.reports.summary_csv import summary_csv
from itemscore.reports.table_tex import latex_table
from itemscore.summary._summary import summary_rows

openpyxl = pytest.importorskip("openpyxl")


class Signed(Metric):
    """The output's length minus three: values may be negative."""

    metric_id = "test_hostile_signed"
    required_inputs = ("output",)
    aggregation = "mean"

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        assert item.output is not None
        return self.ok(float(len(item.output) - 3))


class Reasoned(Metric):
    """Skips every item with the item's own output as the reason."""

    metric_id = "test_hostile_reason"
    required_inputs = ()

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        return self.skip(f"because {item.output}")


def run(
    model: str = "m", group: str = "g", suite: str = "s", output: str = "x", label: str = "rate"
) -> RunResult:
    data = [
        ItemResult(id="1", model=model, group=group, output=output, expected=("x",)),
        ItemResult(id="2", model=model, group=group, output="yy", expected=("x",)),
        ItemResult(id="3", model="other", group=group, output="x", expected=("x",)),
    ]
    metrics: list[Any] = [{"name": "answered_rate", "label": label}, "exact_match", Reasoned]
    return itemscore.score(data, metrics, suite_id=suite)


# -- 4: LaTeX ---------------------------------------------------------------------------------


def tex_problems(tex: str) -> list[str]:
    """What would let data escape its cell: live commands, comments, broken rows."""
    problems = []
    if "\n\n" in tex:
        problems.append("a blank line")
    for line in tex.splitlines():
        if line.startswith("%"):
            continue
        if re.search(r"(?<!\\)%.", line):  # a % ending a line comments out nothing
            problems.append(f"an unescaped % in {line!r}")
        if re.search(r"\\(input|include|write|def|catcode|immediate|openout)\b", line):
            problems.append(f"a live command in {line!r}")
    body = tex.split(r"\midrule")[1].split(r"\bottomrule")[0].strip().splitlines()
    if not all(line.endswith(r" \\") for line in body):
        problems.append("a row that does not end with \\\\")
    return problems


@pytest.mark.parametrize(
    ("field", "text"),
    [
        ("suite", "qa\n\\input{/etc/passwd}"),
        ("model", "evil\n\n\\input{/etc/passwd}"),
        ("group", "50% & more\r\n"),
        ("label", "rate%\\def\\x{1}"),
        ("model", "[\\input{x}]"),
    ],
    ids=["suite-newline-input", "model-blank-line", "group-percent", "label-def", "bracket"],
)
def test_table_tex_escapes_every_string(field: str, text: str) -> None:
    """No suite id, model, group or label can leave the comment or become a command."""
    tex = latex_table(run(**{field: text}))
    assert tex_problems(tex) == []
    if field == "suite":
        assert tex.splitlines()[0].startswith("% itemscore results for suite qa ")


# -- 5: lone surrogates -----------------------------------------------------------------------


def test_lone_surrogates_never_crash_a_writer(tmp_path: Path) -> None:
    """A lone surrogate in a model, group, output or reason is written visibly by every writer."""
    result = run(model="m\ud800", group="g\udfff", output="a\ud83d")
    written = export(result, tmp_path, list(BUILTIN_FORMATS))
    assert len(written) == len(BUILTIN_FORMATS)
    back = RunResult.load_json(tmp_path / "results.json")
    # items.parquet holds UTF-8, which has no lone surrogates: written as visible escapes.
    assert back.items[0].output == "a\\ud83d"
    assert back.items[0].model == "m\\ud800"
    assert "m\\ud800" in (tmp_path / "summary.csv").read_text(encoding="utf-8")
    assert "m\\textbackslash{}ud800" in (tmp_path / "table.tex").read_text(encoding="utf-8")
    assert "m\\ud800" in (tmp_path / "report.html").read_text(encoding="utf-8")
    book = openpyxl.load_workbook(tmp_path / "results.xlsx")
    assert book["Outputs"]["B2"].value == "m\\ud800"
    text = render_terminal(result)
    assert "m\\ud800" in text


def test_save_json_keeps_lone_surrogates(tmp_path: Path) -> None:
    """RunResult.save_json writes a lone surrogate as its JSON escape and reads it back."""
    result = run(output="a\udc80")
    path = result.save_json(tmp_path / "r.json")
    assert RunResult.load_json(path).items[0].output == "a\udc80"


# -- 7: terminal tables -----------------------------------------------------------------------


def render_terminal(result: RunResult) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=200, force_terminal=True, color_system="standard")
    for table in result_tables(result, by_group=True):
        console.print(table)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("field", "text"),
    [
        ("model", "[/]"),
        ("group", "[bold red]loud[/bold red]"),
        ("label", "[link=https://example.invalid]click[/link]"),
        ("suite", "\x1b[2J\x1b[H"),
        ("model", "\u202eevil"),
    ],
    ids=["close-tag", "style", "link", "clear-screen", "bidi-override"],
)
def test_terminal_shows_markup_and_controls_as_text(field: str, text: str) -> None:
    """Data is never rich markup and never a raw control sequence on the terminal."""
    out = render_terminal(run(**{field: text}))
    assert "\x1b[2J" not in out
    assert "\x1b]8;" not in out  # no hyperlink escape
    assert "\u202e" not in out
    assert "\x1b[1;31m" not in out  # not rendered bold red
    if text.startswith("["):
        assert text in out


# -- 8 and 9: spreadsheets --------------------------------------------------------------------

FORMULAS = ['=HYPERLINK("http://x","y")', "+1+cmd", "-2+3", "@SUM(A1)", "\tx", "\rx"]


def test_xlsx_header_and_data_cells_are_never_formulas(tmp_path: Path) -> None:
    """A label, model or output that starts like a formula is a text cell, header included."""
    result = run(label=FORMULAS[0], model=FORMULAS[1], output=FORMULAS[3])
    (path,) = export(result, tmp_path, ["xlsx"])
    book = openpyxl.load_workbook(path)
    cells = [c for sheet in book for row in sheet.iter_rows() for c in row]
    assert not [c.coordinate for c in cells if c.data_type == "f"]
    header = [c.value for c in book["Outputs"][1]]
    assert FORMULAS[0] in header
    with zipfile.ZipFile(path) as archive:
        assert not any(b"<f>" in archive.read(name) for name in archive.namelist())


@pytest.mark.parametrize("text", FORMULAS, ids=["eq", "plus", "minus", "at", "tab", "cr"])
def test_summary_csv_neutralises_formula_cells(text: str) -> None:
    """Text cells starting with = + - @ tab or CR get a leading quote (OWASP)."""
    table = list(csv.DictReader(io.StringIO(summary_csv(run(model=text)), newline="")))
    models = {row["model"] for row in table}
    assert "'" + text in models
    assert text not in models


def test_summary_csv_keeps_negative_numbers_numbers() -> None:
    """Computed values stay numbers, and a text that is a plain number is left alone."""
    data = [ItemResult(id="1", model="-1", output="a"), ItemResult(id="2", model="-1", output="b")]
    result = itemscore.score(data, [Signed])
    row = next(csv.DictReader(io.StringIO(summary_csv(result))))
    assert float(row["value"]) == -2.0
    assert row["value"] == "-2.0"
    assert row["model"] == "-1"
    assert guard_cell("-1.5e3") == "-1.5e3"
    assert guard_cell("-1.5e3+1") == "'-1.5e3+1"


def _two_models(model: str) -> RunResult:
    data = [
        ItemResult(id=str(i), model=name, output=output, expected=("x",))
        for i in range(5)
        for name, output in ((model, "x"), ("other", "y"))
    ]
    return itemscore.score(data, ["exact_match"])


def _leaderboard_csv(model: str) -> str:
    from itemscore.reports.leaderboard_files import leaderboard_csv

    return leaderboard_csv(itemscore.leaderboard(_two_models(model), "exact_match"))


def _comparison_csv(model: str) -> str:
    from itemscore._compare_out import comparison_csv

    return comparison_csv(itemscore.compare(_two_models(model), metrics=["exact_match"]))


def _arena_csvs(model: str) -> str:
    from itemscore.reports.arena_files import arena_csv, win_rates_csv

    rows = [
        {"id": f"p{i}", "model_a": model, "model_b": "other", "winner": "ab"[i % 2]}
        for i in range(20)
    ]
    board = itemscore.arena(rows, n_resamples=20)
    return arena_csv(board) + win_rates_csv(board)


@pytest.mark.parametrize("text", FORMULAS, ids=["eq", "plus", "minus", "at", "tab", "cr"])
@pytest.mark.parametrize("written", [_leaderboard_csv, _comparison_csv, _arena_csvs])
def test_every_csv_report_neutralises_a_model_named_like_a_formula(written: Any, text: str) -> None:
    """leaderboard.csv, comparison.csv, arena.csv, win_rates.csv: the rule of summary.csv."""
    cells = {cell for row in csv.reader(io.StringIO(written(text), newline="")) for cell in row}
    assert "'" + text in cells
    assert text not in cells
    assert "other" in cells


# -- 15: plugin format names ------------------------------------------------------------------


class NamedFormat:
    def __init__(self, name: str) -> None:
        self.name = name

    @hookimpl
    def itemscore_export_formats(self) -> dict[str, Any]:
        def write(result: RunResult, path: Path) -> None:
            path.write_text("x")

        return {self.name: write}


@pytest.fixture
def plugin() -> Iterator[Any]:
    pm = plugin_manager()
    registered: list[Any] = []

    def add(obj: Any, name: str) -> None:
        pm.register(obj, name=name)
        registered.append(obj)

    yield add
    for obj in registered:
        if pm.is_registered(obj):
            pm.unregister(obj)


@pytest.mark.parametrize(
    "name",
    ["../escape", "a/b", "..", "a\\b", "nul\0byte", "", "/abs", "new\nline"],
    ids=["dotdot-slash", "slash", "dotdot", "backslash", "nul", "empty", "absolute", "newline"],
)
def test_plugin_format_with_a_path_in_its_name_is_refused(
    name: str, plugin: Any, tmp_path: Path
) -> None:
    """A format name that is not a plain name is an error naming the plugin; nothing is written."""
    plugin(NamedFormat(name), "evil-formats")
    out = tmp_path / "deep" / "out"
    with pytest.raises(ItemscoreError, match="Plugin 'evil-formats'"):
        export(run(), out, ["csv"])
    assert sorted(p.name for p in tmp_path.rglob("*")) == []


# -- 16: Excel's row limit --------------------------------------------------------------------


def test_xlsx_items_continue_on_further_sheets(tmp_path: Path) -> None:
    """Past the row limit, items go on `Outputs (2)`..., each sheet with its header."""
    data = [ItemResult(id=str(i), output="x", expected=("x",)) for i in range(7)]
    result = itemscore.score(data, ["exact_match"])
    path = tmp_path / "r.xlsx"
    xlsx.write(result, path, max_rows=4)  # a header and three items per sheet
    book = openpyxl.load_workbook(path)
    assert book.sheetnames == ["Summary", "Outputs", "Outputs (2)", "Outputs (3)"]
    ids = []
    for name in book.sheetnames[1:]:
        rows = list(book[name].values)
        assert rows[0][0] == "id"
        assert len(rows) <= 4
        ids += [row[0] for row in rows[1:]]
    assert ids == [str(i) for i in range(7)]
    assert xlsx.MAX_ROWS == 1_048_576  # Excel's limit


def test_xlsx_styles_header_freezes_it_and_formats_numbers(tmp_path: Path) -> None:
    """Header cells are bold and filled, the first row is frozen, values have four decimals."""
    (path,) = export(run(), tmp_path, ["xlsx"])
    book = openpyxl.load_workbook(path)
    for sheet in book:
        assert sheet.freeze_panes == "A2"
        assert sheet["A1"].font.b
        assert sheet["A1"].fill.fgColor.rgb == "FFD9E1F2"
    summary = book["Summary"]
    header = [c.value for c in summary[1]]
    value = summary.cell(row=2, column=header.index("value") + 1)
    assert value.number_format == "0.0000"
    assert value.data_type == "n"
    assert value.value == summary_rows(run())[0]["value"]
    assert summary.cell(row=2, column=header.index("n") + 1).number_format == "0"


# -- everything at once -----------------------------------------------------------------------

HOSTILE = st.sampled_from(
    [
        "\ud800",
        "\udfff",
        "[/]",
        "[bold red]",
        "[link=http://x]",
        "\x1b[2J",
        "\x00",
        "\x07",
        "\r\n",
        "\n\n",
        "\t",
        "\u202e",
        "\u2028",
        "\x85",
        "=",
        "+",
        "-",
        "@",
        "%",
        "\\input{/etc/passwd}",
        "&",
        "#",
        "$",
        "_",
        "{",
        "}",
        "~",
        "^",
        "\\",
        "[",
        "]",
        "/",
        "..",
        "</script>",
        "<!--",
        "<img src=x onerror=alert(1)>",
        '"',
        "'",
        "\ufffe",
    ]
)
TEXT = st.lists(st.one_of(HOSTILE, st.text(max_size=3)), min_size=1, max_size=6).map("".join)


class _Tags(HTMLParser):
    """Every start tag of a page, with its attribute names."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, [name for name, _ in attrs]))


#: The elements report.html is made of; anything else came from the data.
PAGE_TAGS = {
    "html", "head", "meta", "title", "style", "body", "main", "h1", "h2", "h3", "p", "span",
    "section", "svg", "line", "text", "circle", "rect", "table", "thead", "tbody", "tr", "th",
    "td", "div", "input", "select", "option", "script", "details", "summary", "button", "code",
    "h4", "polyline",
}  # fmt: skip


def html_problems(page: str) -> list[str]:
    """Markup the data could have injected into report.html."""
    parser = _Tags()
    parser.feed(page)
    problems = [f"<{tag}>" for tag, _ in parser.tags if tag not in PAGE_TAGS]
    problems += [f"{tag} {a}" for tag, attrs in parser.tags for a in attrs if a.startswith("on")]
    if [tag for tag, _ in parser.tags].count("script") != 2:
        problems.append("a script element from the data")
    return problems


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(model=TEXT, group=TEXT, suite=TEXT, output=TEXT, label=TEXT)
def test_hostile_strings_through_every_writer(
    model: str, group: str, suite: str, output: str, label: str, tmp_path_factory: Any
) -> None:
    """Any hostile mix: every writer succeeds, stays well-formed, and keeps data inert."""
    try:
        result = run(model=model, group=group, suite=suite, output=output, label=label)
    except itemscore.ConfigError:
        return  # a label the run refuses never reaches a report
    out = tmp_path_factory.mktemp("out")
    written = export(result, out, list(BUILTIN_FORMATS))
    assert len(written) == len(BUILTIN_FORMATS)
    back = RunResult.load_json(out / "results.json")
    assert len(back.items) == len(result.items)
    for line in (out / "items.jsonl").read_text(encoding="utf-8").split("\n")[:-1]:
        json.loads(line)
    assert tex_problems((out / "table.tex").read_text(encoding="utf-8")) == []
    summary = (out / "summary.csv").read_text(encoding="utf-8")
    for row in csv.reader(io.StringIO(summary, newline="")):
        for cell in row:
            assert not cell.startswith(("=", "+", "@", "\t", "\r")) or cell[:1] == "'"
    book = openpyxl.load_workbook(out / "results.xlsx")
    assert not [c for sheet in book for r in sheet.iter_rows() for c in r if c.data_type == "f"]
    assert html_problems(report_html(result)) == []
    text = render_terminal(result)
    assert "\x1b[2J" not in text
    assert "\x00" not in text
    assert "\x1b]8;" not in text


def test_xlsx_is_the_same_bytes_for_the_same_run(tmp_path: Path) -> None:
    """No clock time inside the archive: the same run gives byte-identical workbooks."""
    result = run()
    xlsx.write(result, tmp_path / "a.xlsx")
    time.sleep(1.1)  # a timestamp taken from the clock would now differ
    xlsx.write(result, tmp_path / "b.xlsx")
    assert (tmp_path / "a.xlsx").read_bytes() == (tmp_path / "b.xlsx").read_bytes()
    with zipfile.ZipFile(tmp_path / "a.xlsx") as archive:
        assert {info.date_time[0] for info in archive.infolist()} == {1980}
        core = archive.read("docProps/core.xml").decode()
    assert "<dcterms:created" in core
    assert str(datetime.date.today().year) not in core


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(st.one_of(st.none(), TEXT), min_size=5, max_size=5),
    metadata=st.dictionaries(
        TEXT, st.one_of(st.none(), TEXT, st.floats(allow_nan=True), st.integers(), st.booleans())
    ),
)
def test_items_jsonl_lines_are_the_items_json_form(
    texts: list[str | None], metadata: dict[str, Any]
) -> None:
    """Each fast-built line parses to exactly what item_to_dict gives (the slow, plain form)."""
    from itemscore._serialize import item_to_dict, json_safe
    from itemscore.reports.items_jsonl import item_line

    output, input_, group, model, cluster = texts
    item = ItemResult(
        id="x", output=output, expected=None if output is None else (output, "b"),
        input=input_, group=group, model=model, cluster=cluster, metadata=metadata,
        scores={
            "a": ItemScore.ok("a", 0.25, extra={"k": output, "n": 1.5}),
            "b": ItemScore.skip("b", reason=output),
        },
    )  # fmt: skip
    expected = json.loads(json.dumps(json_safe(item_to_dict(item)), ensure_ascii=False))
    assert json.loads(item_line(item)) == expected
