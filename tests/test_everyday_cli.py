"""Everyday command-line use: install hints, narrow terminals, small messages, Markdown on stdout.

Each test runs the command a user types (click's runner in-process, or the console script in a
subprocess where a real pipe or terminal width matters).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from click.testing import CliRunner

from itemscore.cli import cli

ROOT = Path(__file__).parents[1]
SCRIPT = Path(sys.executable).parent / "itemscore"


def run_script(
    *args: str | Path, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the installed console script with ``stdin`` piped in."""
    environ = {k: v for k, v in os.environ.items() if k not in ("ITEMSCORE_DEBUG", "CI")}
    environ.update(env or {})
    return subprocess.run(
        [str(SCRIPT), *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        env=environ,
        timeout=120,
        check=False,
    )


def _rows(n: int, models: tuple[str, ...] = ()) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for i in range(n):
        for model in models or (None,):
            row: dict[str, object] = {"id": i, "output": "a" if i % 3 else "b", "expected": "a"}
            if model is not None:
                row["model"] = model
            rows.append(row)
    return rows


def jsonl(path: Path, n: int = 30, models: tuple[str, ...] = ()) -> Path:
    """A JSON lines file of ``n`` items (two in three right), per model when given."""
    path.write_text("".join(json.dumps(r) + "\n" for r in _rows(n, models)), encoding="utf-8")
    return path


# -- install hints name what pip can install ---------------------------------------------------


def _extra_requirements(extra: str) -> list[str]:
    """The installed itemscore's requirements of ``extra``, as its metadata writes them."""
    found = []
    for line in metadata.requires("itemscore") or []:
        requirement, _, marker = line.partition(";")
        if f'extra == "{extra}"' in marker:
            found.append(requirement.strip())
    return found


@pytest.mark.parametrize(
    ("package", "extra"),
    [
        ("XlsxWriter", "xlsx"),
        ("xlsxwriter", "xlsx"),
        ("rouge_score", "text"),
        ("sacrebleu", "text"),
        ("httpx", "judge"),
        ("distributed", "dask"),
        ("matplotlib", "plot"),
        ("pandas", "pandas"),
        ("fsspec", "remote"),
    ],
)
def test_install_hint_names_the_requirement_the_metadata_declares(package: str, extra: str) -> None:
    """The hint is the dependency with the version the extra asks for, read from the metadata."""
    from itemscore._extras import install_hint, requirement

    normal = re.sub(r"[-_.]+", "-", package).lower()
    declared = [
        r
        for r in _extra_requirements(extra)
        if re.sub(r"[-_.]+", "-", r).lower().startswith(normal)
    ]
    assert len(declared) == 1
    assert requirement(package) == declared[0]
    assert install_hint(package) == f"pip install '{declared[0]}'"


def test_install_hint_of_a_whole_extra_and_of_an_unknown_one() -> None:
    """An extra gives every requirement; an extra the metadata lacks gives the clone's command."""
    from itemscore._extras import install_hint

    judge = " ".join(f"'{r}'" for r in _extra_requirements("judge"))
    assert install_hint(extra="judge") == f"pip install {judge}"
    assert install_hint("s3fs") == "pip install s3fs"  # no requirement of itemscore: as named
    assert install_hint(extra="nothing") == (
        "pip install '.[nothing]' (in the folder of a clone of itemscore)"
    )


def test_report_xlsx_without_xlsxwriter_names_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`score F -m exact_match --out O --report xlsx` says `pip install 'XlsxWriter>=3.1'`."""
    monkeypatch.setitem(sys.modules, "xlsxwriter", None)
    data = jsonl(tmp_path / "d.jsonl")
    args = ["score", str(data), "-m", "exact_match", "--out", str(tmp_path / "o")]
    ran = CliRunner().invoke(cli, [*args, "--report", "xlsx"])
    assert ran.exit_code == 2
    wanted = _extra_requirements("xlsx")[0]
    assert f"Install it with: pip install '{wanted}'" in ran.output
    assert "itemscore[" not in ran.output


@pytest.mark.parametrize(("metric", "module"), [("bleu", "sacrebleu"), ("rouge", "rouge_score")])
def test_a_metric_without_its_dependency_names_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, metric: str, module: str
) -> None:
    """`itemscore score F -m bleu` without sacrebleu: exit 2, the pip command of the package."""
    for name in [m for m in list(sys.modules) if m.split(".")[0] == module]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, module, None)
    ran = CliRunner().invoke(cli, ["score", str(jsonl(tmp_path / "d.jsonl")), "-m", metric])
    assert ran.exit_code == 2
    from itemscore._extras import requirement

    assert f"Install it with: pip install '{requirement(module)}'" in ran.output
    assert "itemscore[" not in ran.output


def test_no_message_or_page_says_pip_install_itemscore_extra() -> None:
    """No source file or page says `pip install 'itemscore[...]'`: no index publishes it."""
    pattern = re.compile(r"pip install ['\"]?itemscore\[")
    said = []
    for folder in ("core", "metrics_builtin", "docs"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".py", ".md") and path.name != "_extras.py":
                for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                    if pattern.search(line) and "finds nothing" not in line:
                        said.append(f"{path.relative_to(ROOT)}:{number}")
    assert said == []


# -- narrow terminals: wrap between words, never cut -------------------------------------------


def _words_missing(output: str, texts: list[str]) -> list[str]:
    """The words of ``texts`` that ``output`` does not show whole (cut, split or dropped)."""
    shown = set(output.split())
    return sorted({word for text in texts for word in text.split() if word not in shown})


@pytest.mark.parametrize("columns", [60, 80])
def test_plugins_on_a_narrow_terminal_cuts_no_cell(columns: int) -> None:
    """`COLUMNS=80 itemscore plugins`: every kind, name and package whole, no `…`."""
    runner = CliRunner()
    listed = json.loads(runner.invoke(cli, ["plugins", "--json"]).output)
    ran = runner.invoke(cli, ["plugins"], env={"COLUMNS": str(columns)})
    assert ran.exit_code == 0, ran.output
    assert "…" not in ran.output
    assert max(map(len, ran.output.splitlines())) <= columns
    fields = ("kind", "entry_point", "id", "distribution", "version", "status")
    assert _words_missing(ran.output, [str(e[f]) for e in listed for f in fields if e[f]]) == []


@pytest.mark.parametrize("columns", [60, 80])
@pytest.mark.parametrize("name", ["exact_match", "llm_judge"])
def test_metrics_show_on_a_narrow_terminal_splits_no_word(columns: int, name: str) -> None:
    """`COLUMNS=60 itemscore metrics show exact_match`: descriptions wrap between words."""
    runner = CliRunner()
    detail = json.loads(runner.invoke(cli, ["metrics", "show", name, "--json"]).output)
    ran = runner.invoke(cli, ["metrics", "show", name], env={"COLUMNS": str(columns)})
    assert ran.exit_code == 0, ran.output
    assert "…" not in ran.output
    assert max(map(len, ran.output.splitlines())) <= columns
    texts = [detail["description"]]
    for option in detail["options"]:
        texts += [option["name"], option["type"], option["default_text"], option["description"]]
    assert _words_missing(ran.output, texts) == []


@pytest.mark.parametrize("columns", [60, 80])
def test_the_metrics_list_on_a_narrow_terminal_splits_no_word(columns: int) -> None:
    """`COLUMNS=60 itemscore metrics`: ids, packages and descriptions whole."""
    runner = CliRunner()
    listed = json.loads(runner.invoke(cli, ["metrics", "--json"]).output)
    ran = runner.invoke(cli, ["metrics"], env={"COLUMNS": str(columns)})
    assert "…" not in ran.output
    texts = [str(e[f]) for e in listed for f in ("id", "description", "distribution") if e[f]]
    assert _words_missing(ran.output, texts) == []


# -- small things that mislead -------------------------------------------------------------------


def _meta_line(report: Path) -> str:
    """The line under report.html's title: items, models, measurements, intervals."""
    found = re.search(r'<p class="meta">([^<]*intervals[^<]*)</p>', report.read_text("utf-8"))
    assert found is not None
    return found.group(1)


def test_report_html_counts_no_models_where_there_is_no_model_column(tmp_path: Path) -> None:
    """`itemscore score F --out O` on items without a model: "1,200 items", no "0 models"."""
    data = jsonl(tmp_path / "d.jsonl", n=1200)
    out = tmp_path / "o"
    ran = CliRunner().invoke(cli, ["score", str(data), "-m", "exact_match", "--out", str(out)])
    assert ran.exit_code == 0, ran.output
    meta = _meta_line(out / "report.html")
    assert meta.startswith("1,200 items · 1 measurement · 95% intervals")
    assert "model" not in meta


def test_report_html_counts_models_and_groups_thousands(tmp_path: Path) -> None:
    """With a model column the models are counted; every count has thousands separators."""
    data = jsonl(tmp_path / "d.jsonl", n=1100, models=("a", "b"))
    out = tmp_path / "o"
    ran = CliRunner().invoke(cli, ["score", str(data), "-m", "exact_match", "--out", str(out)])
    assert ran.exit_code == 0, ran.output
    assert _meta_line(out / "report.html").startswith("2,200 items · 2 models · 1 measurement")
    page = (out / "report.html").read_text("utf-8")
    table = page[page.index('<table class="counts">') :]
    cells = re.findall(r'<td class="num">([^<]*)</td>', table[: table.index("</table>")])
    assert cells.count("1,100") >= 2  # n of each model
    assert "1100" not in cells


def test_terminal_counts_have_thousands_separators(tmp_path: Path) -> None:
    """`itemscore score F -m exact_match` on 1,200 items prints n 1,200 and ok 800."""
    data = jsonl(tmp_path / "d.jsonl", n=1200)
    ran = CliRunner().invoke(cli, ["score", str(data), "-m", "exact_match"])
    assert ran.exit_code == 0, ran.output
    row = next(line for line in ran.output.splitlines() if "exact_match" in line)
    assert row.split()[-5:] == ["1,200", "800", "400", "0", "0"]


def _uneven(path: Path) -> Path:
    """600 items of model `big` and 30 of `small`: intervals needing 3 and 2 decimals."""
    rows = [
        {"id": i, "model": "big", "output": "ab"[i % 3 == 0], "expected": "a"} for i in range(600)
    ]
    rows += [
        {"id": i, "model": "small", "output": "ab"[i % 3 == 0], "expected": "a"} for i in range(30)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_report_html_writes_one_precision_per_column(tmp_path: Path) -> None:
    """A metric's value column holds one precision: `0.667` for both models, never `0.67`."""
    from itemscore import read_items, score
    from itemscore.reports._html_numbers import number

    data = _uneven(tmp_path / "d.jsonl")
    result = score(read_items(data), ["exact_match"])
    small = result.by_model["small"]["default.exact_match"]
    assert number(small.value, small.ci_low, small.ci_high) == "0.67"  # alone: 2 decimals
    out = tmp_path / "o"
    CliRunner().invoke(cli, ["score", str(data), "-m", "exact_match", "--out", str(out)])
    page = (out / "report.html").read_text("utf-8")
    table = page[page.index('<table class="counts">') :]
    table = table[: table.index("</table>")]
    values = re.findall(r'<td class="num">(0\.\d+)</td>', table)
    intervals = re.findall(r"\[(0\.\d+), (0\.\d+)\]", table)
    assert values == ["0.667", "0.667"]
    assert len(intervals) == 2
    assert {len(x) for pair in intervals for x in pair} == {5}


def test_group_rows_share_their_metrics_decimals_on_the_terminal(tmp_path: Path) -> None:
    """`score F -m exact_match --by-group`: a small group's row reads 0.660, not 0.66."""
    rows = [{"id": i, "group": "big" if i < 600 else "small", "output": "ab"[i % 3 == 0],
             "expected": "a"} for i in range(700)]  # fmt: skip
    data = tmp_path / "g.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    ran = CliRunner().invoke(cli, ["score", str(data), "-m", "exact_match", "--by-group"])
    assert ran.exit_code == 0, ran.output
    values = re.findall(r"\s(0\.\d+)\s+\S?\[(0\.\d+), (0\.\d+)\]", ran.output)
    assert len(values) == 4  # all items, the mean of groups, big, small
    assert {len(x) for triple in values for x in triple} == {5}


def test_standard_input_is_read_as_a_pipe(tmp_path: Path) -> None:
    """`cat f | itemscore score - -m exact_match`: the table, and `<stdin>` in results.json."""
    text = jsonl(tmp_path / "d.jsonl", n=30).read_text("utf-8")
    out = tmp_path / "o"
    ran = run_script("score", "-", "-m", "exact_match", "--out", out, stdin=text)
    assert ran.returncode == 0, ran.stderr
    assert "no such file" not in ran.stderr
    row = next(line for line in ran.stdout.splitlines() if "exact_match" in line)
    assert row.split()[:2] == ["exact_match", "0.67"]
    assert row.split()[-5:] == ["30", "20", "10", "0", "0"]
    saved = json.loads((out / "results.json").read_text("utf-8"))
    assert saved["provenance"]["data"]["path"] == "<stdin>"


@pytest.mark.parametrize(
    ("text", "args", "expected"),
    [
        pytest.param("id,output,expected\n1,a,a\n2,b,a\n", [], "0.50", id="csv-sniffed"),
        pytest.param('[{"output": "a", "expected": "a"}]', [], "1.00", id="json-sniffed"),
        pytest.param("id\toutput\texpected\n1\ta\ta\n", ["--format", "tsv"], "1.00", id="given"),
    ],
)
def test_standard_input_format_is_sniffed_or_given(
    text: str, args: list[str], expected: str
) -> None:
    """Standard input has no extension: its first bytes tell the format, or --format does."""
    ran = run_script("score", "-", "-m", "exact_match", *args, stdin=text)
    assert ran.returncode == 0, ran.stderr
    assert expected in ran.stdout


def test_standard_input_keeps_the_bound_of_a_pipe() -> None:
    """A line past max_line_bytes on standard input is the pipe's error, naming `<stdin>`."""
    line = json.dumps({"output": "a" * 5000, "expected": "a"}) + "\n"
    ran = run_script(
        "score", "-", "-m", "exact_match", "--read-option", "max_line_bytes=1000", stdin=line
    )
    assert ran.returncode == 2
    assert ran.stderr.startswith("Error: <stdin>:1")
    assert "max_line_bytes" in ran.stderr


def test_standard_input_errors_name_it_and_refuse_a_terminal(tmp_path: Path) -> None:
    """Errors say `<stdin>:LINE`; `-` with other files, or from no pipe, is exit 2."""
    ran = run_script("score", "-", "-m", "exact_match", stdin='{"outpt": "a"}\n')
    assert ran.returncode == 2
    assert ran.stderr.startswith("Error: <stdin>:1:1: the row has no 'output' key")
    data = jsonl(tmp_path / "d.jsonl")
    ran = run_script("score", "-", data, "-m", "exact_match", stdin="")
    assert ran.returncode == 2
    assert "must be the only data argument" in ran.stderr
    ran = CliRunner().invoke(cli, ["score", "-", "-m", "exact_match"])  # a runner's stdin
    assert ran.exit_code == 2


def test_format_csv_on_json_lines_says_what_the_file_looks_like(tmp_path: Path) -> None:
    """`itemscore score f.jsonl --format csv`: the file looks like JSON lines; use jsonl."""
    data = jsonl(tmp_path / "f.jsonl")
    ran = CliRunner().invoke(cli, ["score", str(data), "-m", "exact_match", "--format", "csv"])
    assert ran.exit_code == 2
    assert "looks like JSON lines, not CSV" in ran.output
    assert "Use --format jsonl" in ran.output
    assert "the columns" not in ran.output
    assert '"output": "b"' not in ran.output


@pytest.mark.parametrize(
    ("typed", "meant"), [("scor", "score"), ("comapre", "compare"), ("plugin", "plugins")]
)
def test_a_mistyped_command_gets_a_did_you_mean(typed: str, meant: str) -> None:
    """`itemscore scor`: exit 2, "Did you mean 'score'?", and the list of commands."""
    ran = CliRunner().invoke(cli, [typed])
    assert ran.exit_code == 2
    assert f"No such command {typed!r}. Did you mean {meant!r}?" in ran.output
    assert "leaderboard" in ran.output  # a lazily loaded command is listed too


def test_the_bold_note_shows_only_where_bold_can_be_seen(tmp_path: Path) -> None:
    """Piped, no "Bold:" note (bold is invisible); on a styled terminal, the bold and its note."""
    rows = [{"id": i, "model": m, "output": "a" if (m == "b" or i % 2) else "x", "expected": "a"}
            for i in range(200) for m in ("a", "b")]  # fmt: skip
    data = tmp_path / "m.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    args = ["score", str(data), "-m", "exact_match"]
    piped = run_script(*args)
    assert piped.returncode == 0, piped.stderr
    assert "Bold:" not in piped.stdout
    assert "\x1b[" not in piped.stdout
    styled = run_script(*args, env={"FORCE_COLOR": "1"})
    assert "Bold:" in styled.stdout
    assert "\x1b[1m" in styled.stdout  # the lead itself is bold


def test_out_help_says_the_reports_are_links_into_a_hidden_folder() -> None:
    """`itemscore score --help` explains the .itemscore/ folder the --out links point into."""
    ran = CliRunner().invoke(cli, ["score", "--help"])
    text = " ".join(ran.output.split())
    assert "links into its hidden .itemscore/ folder" in text
    assert "cp -a" in text
    readme = " ".join((ROOT / "README.md").read_text("utf-8").split())
    assert "symbolic links into the hidden folder `report/.itemscore/`" in readme


# -- the Markdown table on stdout, as lm_eval prints its results ---------------------------------


def _md_rows(text: str) -> list[list[str]]:
    """The cells of each table line of ``text`` (lines starting with ``|``)."""
    return [line[1:-1].split("|") for line in text.splitlines() if line.startswith("|")]


def test_print_md_prints_the_markdown_table_on_stdout(tmp_path: Path) -> None:
    """`itemscore score F -m exact_match --print md`: results.md's table, on stdout only."""
    data = jsonl(tmp_path / "d.jsonl", n=300, models=("a", "b"))
    out = tmp_path / "o"
    args = ["score", str(data), "-m", "exact_match", "-m", "token_f1", "--out", str(out)]
    ran = run_script(*args, "--print", "md", "--report", "md")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == (out / "results.md").read_text("utf-8")
    rows = _md_rows(ran.stdout)
    assert rows[0] == ["Suite", "Model", "Metric", " ", "Value", "95% interval", "Method", "n"]
    assert all(len(row) == len(rows[0]) for row in rows)  # a GFM table: no cell more or less
    assert [row[1:3] for row in rows[2:]] == [
        ["a", "Exact match"], ["a", "Token F1"], ["b", "Exact match"], ["b", "Token F1"]
    ]  # fmt: skip
    assert "Wrote" in ran.stderr
    assert "Wrote" not in ran.stdout


def test_print_md_writes_one_precision_per_metric(tmp_path: Path) -> None:
    """The Value column shows one metric with one precision, whatever each model's n."""
    data = _uneven(tmp_path / "d.jsonl")
    ran = CliRunner().invoke(cli, ["score", str(data), "-m", "exact_match", "--print", "md"])
    assert ran.exit_code == 0, ran.output
    values = [row[4] for row in _md_rows(ran.output)[2:]]
    assert values == ["0.667", "0.667"]


def test_print_md_with_json_or_quiet_is_a_usage_error(tmp_path: Path) -> None:
    """`--print md --json` asks for two things on stdout: exit 2 naming both."""
    data = jsonl(tmp_path / "d.jsonl")
    for other in ("--json", "--quiet"):
        ran = CliRunner().invoke(
            cli, ["score", str(data), "-m", "exact_match", "--print", "md", other]
        )
        assert ran.exit_code == 2
        assert f"--print md and {other}" in ran.output


def test_print_md_by_group_adds_the_group_rows(tmp_path: Path) -> None:
    """With --by-group, a row per group under its measurement, as results.md has."""
    rows = [{"id": i, "group": "gh"[i % 2], "output": "a", "expected": "a"} for i in range(20)]
    data = tmp_path / "g.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    args = ["score", str(data), "-m", "exact_match", "--print", "md"]
    flat = CliRunner().invoke(cli, args)
    grouped = CliRunner().invoke(cli, [*args, "--by-group"])
    assert [r[2] for r in _md_rows(flat.output)[2:]] == ["Exact match"]
    assert [r[2] for r in _md_rows(grouped.output)[2:]] == ["Exact match", " - g", " - h"]


def test_print_is_documented_apart_from_the_input_format() -> None:
    """`score --help` names --print md and says --format is the data's format."""
    ran = CliRunner().invoke(cli, ["score", "--help"])
    text = " ".join(ran.output.split())
    assert "--print [table|md]" in text
    assert "Not --format, which names the format of the data read." in text
