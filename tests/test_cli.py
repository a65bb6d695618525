"""The command line: the -m grammar, configuration files, and every command end to end.

End-to-end tests run the installed ``itemscore`` console script (found next to the Python
running the tests) in a subprocess; the error cases run concurrently to keep the suite fast.
In-process tests (click's runner) cover the remaining branches.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import itemscore
from itemscore import ConfigError, MetricSpec, OptionError, UnknownMetricError
from itemscore.cli import cli, main
from itemscore.cli._config import load_config
from itemscore.cli._grammar import parse_metric_spec, yaml_value
from itemscore.cli._pipeline import prepare_request

SCRIPT = Path(sys.executable).parent / "itemscore"
GOLDEN = Path(__file__).parent / "golden"
GOLDEN_ARGS = [
    "-m",
    "exact_match",
    "-m",
    "exact_match@em_cased:ignore_case=false",
    "-m",
    "answered_rate",
    "--suite",
    "golden_qa",
]


def run_cli(
    *args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the installed console script."""
    environ = {k: v for k, v in os.environ.items() if k not in ("ITEMSCORE_DEBUG", "CI")}
    environ.update(env or {})
    return subprocess.run(
        [str(SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environ,
        timeout=120,
        check=False,
    )


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


# -- the -m grammar --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("exact_match", MetricSpec("exact_match")),
        ("answered-rate", MetricSpec("answered-rate")),
        ("exact_match@em_strict", MetricSpec("exact_match", "em_strict")),
        (
            "exact_match@em_strict:ignore_case=false",
            MetricSpec("exact_match", "em_strict", {"ignore_case": False}),
        ),
        (
            "f1:average=weighted,labels=[positive,negative]",
            MetricSpec("f1", None, {"average": "weighted", "labels": ["positive", "negative"]}),
        ),
        (
            "m:a=3,b=0.5,c=1e-3,d=null",
            MetricSpec("m", None, {"a": 3, "b": 0.5, "c": 0.001, "d": None}),
        ),
        (
            "m:a=yes,b=no,c=on,d=2024-01-01",
            MetricSpec("m", None, {"a": "yes", "b": "no", "c": "on", "d": "2024-01-01"}),
        ),
        ("m:s='a, b',t=\"x]\"", MetricSpec("m", None, {"s": "a, b", "t": "x]"})),
        ("m:s=don't,t=#x", MetricSpec("m", None, {"s": "don't", "t": "#x"})),
        ("m:o={k: [1, 2]}", MetricSpec("m", None, {"o": {"k": [1, 2]}})),
        ("m: a = 1 , b = [x, y] ", MetricSpec("m", None, {"a": 1, "b": ["x", "y"]})),
    ],
    ids=[
        "name",
        "entry-point-name",
        "label",
        "label-and-option",
        "list",
        "numbers-null",
        "yaml12-words",
        "quoted-commas",
        "apostrophe-hash",
        "mapping",
        "spaces",
    ],
)
def test_metric_spec_grammar(text: str, spec: MetricSpec) -> None:
    """NAME[@LABEL][:KEY=VALUE,...] with YAML 1.2 values; commas in brackets or quotes stay."""
    assert parse_metric_spec(text) == spec


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "the metric name is missing"),
        ("@x", "the metric name is missing"),
        ("9lives", "'9lives' is not a metric name"),
        ("f1@", "the label '' must be"),
        ("f1@a b", "the label 'a b' must be"),
        ("f1:", "nothing follows ':'"),
        ("f1:average", "the option 'average' has no '=' and value"),
        ("f1:average=", "the option 'average' has no value"),
        ("f1:a=1,,b=2", "an option is empty"),
        ("f1:a=1,", "an option is empty"),
        ("f1:a=1,a=2", "the option 'a' is given twice"),
        ("f1:1a=2", "'1a' is not an option name"),
        ("f1:labels=[a,b", "a '[' or '{' is not closed"),
        ("f1:labels=a]", "there is a ']' without its opening bracket"),
        ("f1:s='open", "a ' quote is not closed"),
        ("f1:x=*nothing", "the value of 'x'"),
    ],
    ids=[
        "empty",
        "label-only",
        "bad-name",
        "empty-label",
        "space-label",
        "empty-options",
        "no-equals",
        "no-value",
        "double-comma",
        "trailing-comma",
        "twice",
        "bad-key",
        "unclosed-bracket",
        "stray-bracket",
        "unclosed-quote",
        "bad-yaml",
    ],
)
def test_malformed_metric_specs(text: str, why: str) -> None:
    """A malformed -m value is one sentence quoting it, saying what is wrong, showing the form."""
    with pytest.raises(ConfigError) as info:
        parse_metric_spec(text)
    message = str(info.value)
    assert message.startswith(f"-m {text!r}: {why}")
    assert "NAME[@LABEL][:KEY=VALUE,...]" in message


def test_yaml_values_follow_yaml_1_2() -> None:
    """true/false are booleans but yes/no stay text; 010 is not octal; '~' is null."""
    assert yaml_value("true") is True
    assert yaml_value("no") == "no"
    assert yaml_value("010") == "010"
    assert yaml_value("-7") == -7
    assert yaml_value(".5") == 0.5
    assert yaml_value("~") is None
    assert yaml_value("[a, 'b, c']") == ["a", "b, c"]


# -- configuration files ---------------------------------------------------------------------


def test_config_file_is_read_with_paths_relative_to_it(tmp_path: Path) -> None:
    """Every key is read; data and out are relative to the configuration file's folder."""
    write(tmp_path / "cfg" / "data.jsonl", '{"output": "x"}\n')
    config = write(
        tmp_path / "cfg" / "run.yaml",
        """\
        suite: qa
        data: data.jsonl
        format: jsonl
        columns: {output: output, expected: gold}
        answer_delimiter: "|"
        null_output: "<none>"
        metrics:
          - exact_match
          - name: exact_match
            label: em_strict
            ignore_case: false
          - token_f1@tf:remove_articles=true
        extra_metrics: [answered_rate]
        ci_method: wilson
        confidence: 0.9
        seed: 3
        out: results
        reports: [csv, tex]
        """,
    )
    plan = load_config(config)
    assert plan.data == tmp_path / "cfg" / "data.jsonl"
    assert plan.out == tmp_path / "cfg" / "results"
    assert [entry.spec for entry in plan.metrics] == [
        MetricSpec("exact_match"),
        MetricSpec("exact_match", "em_strict", {"ignore_case": False}),
        MetricSpec("token_f1", "tf", {"remove_articles": True}),
    ]
    assert [entry.spec for entry in plan.extra_metrics] == [MetricSpec("answered_rate")]
    assert (plan.suite, plan.format, plan.columns) == (
        "qa",
        "jsonl",
        {"output": "output", "expected": "gold"},
    )
    assert (plan.answer_delimiter, plan.null_output) == ("|", "<none>")
    assert (plan.ci_method, plan.confidence, plan.seed, plan.reports) == (
        "wilson",
        0.9,
        3,
        ["csv", "tex"],
    )


@pytest.mark.parametrize(
    ("text", "where", "error", "message"),
    [
        (
            "data: d.jsonl\nmetircs: [exact_match]\n",
            "2:1",
            ConfigError,
            "unknown key 'metircs'. Did you mean 'metrics'?",
        ),
        (
            "metrics: [f1]\nmetrics: [exact_match]\n",
            "2:1",
            ConfigError,
            "the key `metrics` is given twice (first on line 1)",
        ),
        (
            "metrics:\n  - exact_match\n  - name: f1\n    averge: macro\n",
            "4:5",
            OptionError,
            "has no option `averge`. Did you mean 'average'?",
        ),
        (
            "metrics:\n  - name: f1\n    average: mean\n",
            "3:5",
            OptionError,
            "`average` ('mean') must be one of",
        ),
        (
            "metrics:\n  - exact_match\n  - name: exact_matc\n",
            "3:11",
            UnknownMetricError,
            "No metric is named 'exact_matc'",
        ),
        (
            "metrics:\n  - exact_match\n  - exact_match:ignore_case=false\n",
            "3:5",
            ConfigError,
            "Two metrics have the label 'exact_match'",
        ),
        ("metrics: [exact_match]\nextra_metrics: [exact_match]\n", None, None, None),
        ("metrics:\n  - 3\n", "2:5", ConfigError, "must be a metric name or a mapping"),
        ("columns:\n  outptu: x\n", "2:3", ConfigError, "'outptu' is not a column role"),
        ("columns: [output]\n", "1:10", ConfigError, "`columns` must map roles"),
        ("data: missing.jsonl\n", "1:7", ConfigError, "which is not a file"),
        ("format: jsnol\n", "1:9", ConfigError, "`format` ('jsnol') must be one of"),
        ("confidence: 95\n", "1:13", ConfigError, "`confidence` (95) must be in (0, 1)"),
        ("seed: yes\n", "1:7", ConfigError, "`seed` ('yes') must be an integer"),
        ("ci_method: wilsn\n", "1:12", ConfigError, "Did you mean 'wilson'?"),
        ("reports: [csv, texx]\n", "1:16", ConfigError, "the report format 'texx' is not known"),
        ("suite: [a]\n", "1:8", ConfigError, "`suite` must be a non-empty text, not a list"),
        ("metrics: [exact_match\n", "2:1", ConfigError, "not valid YAML"),
        ("- exact_match\n", "1:1", ConfigError, "the configuration must be a mapping"),
        ("", "1:1", ConfigError, "the configuration is empty"),
    ],
    ids=[
        "unknown-key",
        "duplicate-key",
        "unknown-option",
        "bad-choice",
        "unknown-metric",
        "label-clash",
        "extra-duplicate-ok",
        "entry-type",
        "unknown-role",
        "columns-type",
        "missing-data",
        "bad-format",
        "confidence",
        "seed",
        "ci-method",
        "report",
        "suite-type",
        "bad-yaml",
        "not-mapping",
        "empty",
    ],
)
def test_config_errors_name_line_and_column(
    tmp_path: Path, text: str, where: str | None, error: type[Exception] | None, message: str | None
) -> None:
    """Each configuration error is raised before any scoring, at the line and column at fault.

    The file's shape is checked when it is read; its values by the library, when the run is
    prepared, and reported at the place the value was written.
    """
    config = write(tmp_path / "run.yaml", text)
    if error is None:
        prepare_request(load_config(config))  # an extra metric equal to a bound one is dropped
        return
    with pytest.raises(error) as info:
        prepare_request(load_config(config))
    assert str(info.value).startswith(f"{config}:{where}: ")
    assert message is not None
    assert message in str(info.value)


# -- end to end: error cases ------------------------------------------------------------------

ERROR_CASES: dict[str, tuple[dict[str, str | bytes], list[str], str]] = {
    "malformed-json-line": (
        {"data.jsonl": '{"id": "a", "output": "x"}\n{"id": "b", "output": }\n'},
        ["score", "data.jsonl", "-m", "answered_rate"],
        "data.jsonl:2:23: not valid JSON",
    ),
    "bad-csv-quoting": (
        {"data.csv": 'id,output\n1,"a"b\n'},
        ["score", "data.csv", "-m", "answered_rate"],
        "data.csv:2: bad CSV quoting",
    ),
    "invalid-utf8": (
        {"data.csv": b"id,output\n1,caf\xe9\n"},
        ["score", "data.csv", "-m", "answered_rate"],
        "data.csv:2:6: the file is not valid UTF-8",
    ),
    "missing-mapped-column": (
        {"data.csv": "id,response\n1,x\n"},
        ["score", "data.csv", "-m", "answered_rate", "--map", "output=respons"],
        "data.csv:1: the file has no column 'respons'",
    ),
    "wrong-type": (
        {"data.jsonl": '{"id": "a", "output": {"text": "x"}}\n'},
        ["score", "data.jsonl", "-m", "answered_rate"],
        "data.jsonl:1:13: 'output' must be text, a number or null, not an object",
    ),
    "duplicate-ids": (
        {"data.jsonl": '{"id": "a", "output": "x"}\n{"id": "a", "output": "y"}\n'},
        ["score", "data.jsonl", "-m", "answered_rate"],
        "data.jsonl:2:2: the id 'a' appears twice (first at line 1)",
    ),
    "unknown-metric": (
        {"data.jsonl": '{"output": "x"}\n'},
        ["score", "data.jsonl", "-m", "exact_matc"],
        "-m 'exact_matc': No metric is named 'exact_matc'. Did you mean 'exact_match'?",
    ),
    "unknown-option": (
        {"data.jsonl": '{"output": "x"}\n'},
        ["score", "data.jsonl", "-m", "exact_match:ignore_cas=true"],
        "has no option `ignore_cas`. Did you mean 'ignore_case'?",
    ),
    "malformed-spec": (
        {"data.jsonl": '{"output": "x"}\n'},
        ["score", "data.jsonl", "-m", "f1:labels=[a,b"],
        "-m 'f1:labels=[a,b': a '[' or '{' is not closed",
    ),
    "unknown-yaml-key": (
        {
            "data.jsonl": '{"output": "x"}\n',
            "run.yaml": "data: data.jsonl\nmetircs: [f1]\nout: out\n",
        },
        ["run", "run.yaml"],
        "run.yaml:2:1: unknown key 'metircs'. Did you mean 'metrics'?",
    ),
    "no-answer-key": (
        {"data.jsonl": '{"output": "x"}\n'},
        ["score", "data.jsonl", "-m", "exact_match"],
        "data.jsonl: no row has an answer key",
    ),
    "not-a-results-file": (
        {"results.json": '{"schema": "other"}'},
        ["rescore", "results.json", "-m", "answered_rate"],
        "results.json is not an itemscore results file",
    ),
    "unknown-metric-show": (
        {},
        ["metrics", "show", "f11"],
        "No metric is named 'f11'. Did you mean 'f1'?",
    ),
}


@pytest.fixture(scope="module")
def error_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Any]]:
    """Run every error case once, concurrently; each test below checks one of them."""

    def one(name: str) -> tuple[Path, Any]:
        files, args, _ = ERROR_CASES[name]
        folder = tmp_path_factory.mktemp(name)
        for file, content in files.items():
            write(folder / file, content)
        extra = ["--out", "out"] if args[0] in ("score", "rescore") else []
        return folder, run_cli(*args, *extra, cwd=folder)

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(zip(ERROR_CASES, pool.map(one, ERROR_CASES)))


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_bad_input_exits_2_with_one_message(case: str, error_runs: dict[str, Any]) -> None:
    """Exit code 2, one line on stderr naming the place at fault, no traceback, nothing written."""
    folder, proc = error_runs[case]
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("Error: ")
    assert ERROR_CASES[case][2] in lines[0]
    assert "Traceback" not in proc.stderr
    assert not (folder / "out").exists()


# -- end to end: the commands ------------------------------------------------------------------


@pytest.fixture(scope="module")
def fake_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder for PYTHONPATH with an installed distribution holding broken and failing plugins."""
    site = tmp_path_factory.mktemp("site")
    info = site / "itemscore_cli_fake-1.0.dist-info"
    write(info / "METADATA", "Metadata-Version: 2.1\nName: itemscore-cli-fake\nVersion: 1.0\n")
    write(
        info / "entry_points.txt",
        """\
        [itemscore.metrics]
        cli-fake-broken = itemscore_cli_fake_missing:Nothing

        [itemscore.plugins]
        cli-fake-boom = itemscore_cli_fake_boom
        cli-fake-broken-plugin = itemscore_cli_fake_missing_plugin
        """,
    )
    write(
        site / "itemscore_cli_fake_boom.py",
        """\
        from itemscore import hookimpl


        @hookimpl
        def itemscore_export_formats():
            def write(result, path):
                path.write_text("partial")
                raise RuntimeError("the boom format failed")

            return {"boom": write}
        """,
    )
    return site


def test_metrics_json_lists_broken_plugins_and_exits_0(fake_site: Path) -> None:
    """`metrics --json` lists every metric and each broken plugin with its error; exit 0."""
    proc = run_cli("metrics", "--json", env={"PYTHONPATH": str(fake_site)})
    assert proc.returncode == 0, proc.stderr
    entries = {e["entry_point"]: e for e in json.loads(proc.stdout)}
    for key in ("id", "entry_point", "distribution", "version", "description", "status", "error"):
        assert all(key in e for e in entries.values())
    assert entries["answered-rate"]["id"] == "answered_rate"
    assert entries["answered-rate"]["distribution"] == "itemscore"
    assert entries["answered-rate"]["version"] == itemscore.__version__
    assert entries["answered-rate"]["status"] == "ok"
    broken = entries["cli-fake-broken"]
    assert (broken["status"], broken["distribution"]) == ("broken", "itemscore-cli-fake")
    assert "itemscore_cli_fake_missing" in broken["error"]
    assert entries["cli-fake-broken-plugin"]["status"] == "broken"


def test_metrics_table_shows_broken_plugins(fake_site: Path) -> None:
    """The `metrics` table shows installed metrics, then the broken plugins and why."""
    proc = run_cli("metrics", env={"PYTHONPATH": str(fake_site)})
    assert proc.returncode == 0, proc.stderr
    installed, broken = proc.stdout.split("Broken plugins")
    assert "answered_rate" in installed
    assert "itemscore_cli_fake_missing" in broken
    assert "cli-fake-broken-plugin" in broken


def test_metrics_show_lists_options() -> None:
    """`metrics show f1` gives the description, answer-key need, aggregation and options."""
    proc = run_cli("metrics", "show", "f1")
    assert proc.returncode == 0, proc.stderr
    assert "needs answer key  yes" in proc.stdout
    option = next(line for line in proc.stdout.splitlines() if line.strip().startswith("average"))
    assert "macro" in option


def test_score_writes_golden_reports_and_json(tmp_path: Path) -> None:
    """`score --out --json`: reports match the golden files; stdout holds the measurements."""
    proc = run_cli(
        "score", GOLDEN / "small.jsonl", *GOLDEN_ARGS, "--out", tmp_path / "out", "--json"
    )
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out"
    for name in ("summary.csv", "table.tex"):
        golden = (GOLDEN / f"small.{name}").read_text(encoding="utf-8")
        assert (out / name).read_text(encoding="utf-8") == golden
    assert {"results.json", "items.parquet"} <= {p.name for p in out.iterdir()}
    summary = json.loads(proc.stdout)
    values = {(m["model"], m["metric"]): m["value"] for m in summary["measurements"]}
    assert values[("alpha", "answered_rate")] == 4 / 5  # one failed request among five rows
    assert values[("beta_2 & co", "em_cased")] == 1 / 4
    assert summary["suite"] == "golden_qa"
    reports = sorted(p.name for p in out.iterdir() if not p.name.startswith("."))
    assert sorted(Path(f).name for f in summary["files"]) == reports


def test_rescore_adds_a_metric_to_saved_results(tmp_path: Path) -> None:
    """`rescore results.json -m` adds a metric and keeps the saved ones."""
    saved = tmp_path / "first"
    assert (
        run_cli(
            "score", GOLDEN / "small.jsonl", "-m", "answered_rate", "--out", saved, "-q"
        ).returncode
        == 0
    )
    proc = run_cli(
        "rescore", saved / "results.json", "-m", "exact_match", "--out", tmp_path / "again"
    )
    assert proc.returncode == 0, proc.stderr
    again = itemscore.RunResult.load_json(tmp_path / "again" / "results.json")
    assert again.labels == ["answered_rate", "exact_match"]
    assert again.by_model["alpha"]["default.exact_match"].value == 3 / 4
    assert "exact_match" in proc.stdout
    assert "answered_rate" in proc.stdout


def test_run_reads_a_config_relative_to_its_folder(tmp_path: Path) -> None:
    """`run CONFIG`: data and out are found relative to the configuration file, not the cwd."""
    folder = tmp_path / "project"
    write(
        folder / "outputs.csv", "qid,response,gold\n1,Paris,Paris|paris city\n2,,Rome\n3,<null>,x\n"
    )
    write(
        folder / "run.yaml",
        """\
        suite: capitals
        data: outputs.csv
        columns: {id: qid, output: response, expected: gold}
        answer_delimiter: "|"
        null_output: "<null>"
        metrics: [exact_match, answered_rate]
        out: results
        reports: [json, csv]
        """,
    )
    proc = run_cli("run", folder / "run.yaml", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    values = {m["metric"]: m for m in json.loads(proc.stdout)["measurements"]}
    # Row 2 answered "" (wrong), row 3 failed: exact_match 1/3, answered_rate 2/3.
    assert values["exact_match"]["value"] == 1 / 3
    assert values["answered_rate"]["value"] == 2 / 3
    assert values["exact_match"]["key"] == "capitals.exact_match"
    written = sorted(p.name for p in (folder / "results").iterdir() if not p.name.startswith("."))
    assert written == ["results.json", "summary.csv"]


def test_demo_needs_no_arguments() -> None:
    """`itemscore demo` scores both bundled suites and prints their models side by side."""
    proc = run_cli("demo")
    assert proc.returncode == 0, proc.stderr
    for title in ("demo_qa · value [95% interval] per model", "demo_sentiment · value"):
        assert title in proc.stdout
    header = next(line for line in proc.stdout.splitlines() if "model-a" in line)
    assert "model-b" in header
    assert "token_f1" in proc.stdout
    assert "accuracy" in proc.stdout


def test_python_dash_m_runs_the_same_command_line() -> None:
    """`python -m itemscore` is the console script."""
    proc = subprocess.run(
        [sys.executable, "-m", "itemscore", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"itemscore, version {itemscore.__version__}"


def test_unexpected_failure_exits_1_and_leaves_nothing(fake_site: Path, tmp_path: Path) -> None:
    """A failing report writer: exit 1, one line (traceback only with --debug), no files.

    The broken hook plugin of the same distribution is one warning line before it.
    """
    env = {"PYTHONPATH": str(fake_site)}
    args = [GOLDEN / "small.jsonl", "-m", "answered_rate", "--out", tmp_path / "out"]
    proc = run_cli("score", *args, env=env)
    assert proc.returncode == 1
    warning, error = proc.stderr.strip().splitlines()
    assert warning.startswith("Warning: the plugin 'cli-fake-broken-plugin' of distribution ")
    assert "No module named 'itemscore_cli_fake_missing_plugin'" in warning
    assert error == (
        "Error: RuntimeError: the boom format failed (run with --debug or ITEMSCORE_DEBUG=1 "
        "for the traceback)"
    )
    assert not (tmp_path / "out").exists()
    debug = run_cli("--debug", "score", *args, env=env)
    assert debug.returncode == 1
    assert "Traceback (most recent call last)" in debug.stderr
    assert debug.stderr.strip().endswith("Error: RuntimeError: the boom format failed")


# -- in process: the remaining branches --------------------------------------------------------


def invoke(args: Sequence[str | Path]) -> Any:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_score_merges_config_and_command_line(tmp_path: Path) -> None:
    """-m adds to the config's metrics; command-line options win over config values."""
    data = write(tmp_path / "d.jsonl", '{"output": "a", "expected": "a"}\n{"output": null}\n')
    config = write(
        tmp_path / "c.yaml", "metrics: [exact_match]\nconfidence: 0.8\nci_method: wilson\n"
    )
    result = invoke(
        ["score", data, "--config", config, "-m", "answered_rate", "--confidence", "0.9", "--json"]
    )
    assert result.exit_code == 0, result.output
    measurements = json.loads(result.stdout)["measurements"]
    assert [m["metric"] for m in measurements] == ["exact_match", "answered_rate"]
    assert {m["confidence"] for m in measurements} == {0.9}
    assert {m["ci_method"] for m in measurements} == {"wilson"}


def test_suite_with_bound_metrics_adds_them(tmp_path: Path) -> None:
    """--suite naming an installed suite uses its id and bound metrics; -m adds more."""
    data = write(tmp_path / "d.jsonl", '{"output": "a", "expected": "a"}\n')
    result = invoke(["score", data, "--suite", "demo-qa", "-m", "answered_rate", "--json"])
    assert result.exit_code == 0, result.output
    keys = [m["key"] for m in json.loads(result.stdout)["measurements"]]
    assert keys == ["demo_qa.exact_match", "demo_qa.token_f1", "demo_qa.answered_rate"]


def test_quiet_prints_nothing(tmp_path: Path) -> None:
    """--quiet: no table, no note; the reports are still written."""
    data = write(tmp_path / "d.jsonl", '{"output": "a"}\n')
    result = invoke(
        ["score", data, "-m", "answered_rate", "-q", "--out", tmp_path / "o", "--report", "csv"]
    )
    assert result.exit_code == 0
    assert result.stdout == ""
    assert (tmp_path / "o" / "summary.csv").is_file()


def test_extra_metrics_and_by_group(tmp_path: Path) -> None:
    """--extra-metrics takes comma-separated names; --by-group adds group rows to the table."""
    data = write(tmp_path / "d.jsonl", '{"output": "a", "expected": "a", "group": "g1"}\n')
    result = invoke(["score", data, "--extra-metrics", "exact_match,answered_rate", "--by-group"])
    assert result.exit_code == 0, result.output
    assert "exact_match" in result.stdout
    assert "answered_rate" in result.stdout
    assert "g1" in result.stdout


def test_no_metrics_is_a_usage_error(tmp_path: Path) -> None:
    """Scoring without any metric says how to name one."""
    data = write(tmp_path / "d.jsonl", '{"output": "a"}\n')
    result = CliRunner().invoke(cli, ["score", str(data)])
    assert result.exit_code == 2
    assert "name one with -m NAME" in result.stderr


def test_run_without_data_is_an_error(tmp_path: Path) -> None:
    """A configuration for `run` must name its data."""
    config = write(tmp_path / "c.yaml", "metrics: [answered_rate]\n")
    result = CliRunner().invoke(cli, ["run", str(config)])
    assert result.exit_code == 2
    assert "has no `data` key" in result.stderr


def test_rescore_without_metrics_recomputes_all(tmp_path: Path) -> None:
    """`rescore` alone recomputes every saved metric, e.g. at another confidence level."""
    data = write(tmp_path / "d.jsonl", '{"output": "a"}\n{"output": null}\n')
    assert (
        invoke(["score", data, "-m", "answered_rate", "-q", "--out", tmp_path / "o"]).exit_code == 0
    )
    result = invoke(["rescore", tmp_path / "o" / "results.json", "--confidence", "0.5", "--json"])
    (measurement,) = json.loads(result.stdout)["measurements"]
    assert (measurement["value"], measurement["confidence"]) == (0.5, 0.5)


def test_metrics_show_json() -> None:
    """`metrics show NAME --json` gives the options with types, defaults and choices."""
    result = invoke(["metrics", "show", "f1", "--json"])
    data = json.loads(result.stdout)
    options = {o["name"]: o for o in data["options"]}
    assert data["id"] == "f1"
    assert data["needs_answer_key"] is True
    assert options["average"]["default"] == "macro"
    assert options["average"]["choices"] == ["macro", "micro", "weighted"]
    assert options["labels"]["default"] is None


def test_demo_json_and_reports(tmp_path: Path) -> None:
    """`demo --json --out` prints both suites' measurements and writes each suite's reports."""
    result = invoke(["demo", "--json", "--out", tmp_path])
    suites = json.loads(result.stdout)
    assert [s["suite"] for s in suites] == ["demo_qa", "demo_sentiment"]
    assert (tmp_path / "demo_qa" / "table.tex").is_file()
    assert (tmp_path / "demo_sentiment" / "summary.csv").is_file()


def test_main_reports_unexpected_errors_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """main(): an unexpected exception is one line and exit code 1."""
    import itemscore._run as runner

    def boom(*args: Any, **kwargs: Any) -> None:
        raise KeyError("lost")

    monkeypatch.setattr(runner, "score_opened", boom)
    monkeypatch.delenv("ITEMSCORE_DEBUG", raising=False)
    data = write(tmp_path / "d.jsonl", '{"output": "a"}\n')
    with pytest.raises(SystemExit) as info:
        main(["score", str(data), "-m", "answered_rate"])
    assert info.value.code == 1
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "Error: KeyError: 'lost' (run with --debug or ITEMSCORE_DEBUG=1 for the traceback)"
    ]
    monkeypatch.setenv("ITEMSCORE_DEBUG", "1")
    with pytest.raises(SystemExit):
        main(["score", str(data), "-m", "answered_rate"])
    assert "Traceback" in capsys.readouterr().err


def test_metrics_table_in_process_lists_broken_hook_plugins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A broken `itemscore.plugins` entry gets a Broken plugins table even when metrics load."""
    from importlib import metadata

    from itemscore._entrypoints import EntryPointRef
    from itemscore._plugins import BrokenPlugin, plugin_manager

    ep = metadata.EntryPoint(name="hooky", value="nowhere_hooky", group="itemscore.plugins")
    broken = BrokenPlugin(EntryPointRef(ep, "hooky-dist", "0.1"), "ModuleNotFoundError: nope")
    monkeypatch.setattr(plugin_manager(), "broken", [broken])
    result = invoke(["metrics"])
    assert result.exit_code == 0
    installed, broken_part = result.stdout.split("Broken plugins")
    assert "exact_match" in installed
    assert "hooky" in broken_part
    assert "ModuleNotFoundError: nope" in broken_part
    listed = json.loads(invoke(["metrics", "--json"]).stdout)
    assert listed[-1]["entry_point"] == "hooky"
    assert listed[-1]["status"] == "broken"


def test_unknown_suite_is_just_an_id(tmp_path: Path) -> None:
    """--suite naming no installed suite only prefixes the measurement keys."""
    data = write(tmp_path / "d.jsonl", '{"output": "a"}\n')
    result = invoke(["score", data, "--suite", "my_bench", "-m", "answered_rate", "--json"])
    assert json.loads(result.stdout)["measurements"][0]["key"] == "my_bench.answered_rate"


def test_label_clash_between_config_and_command_line(tmp_path: Path) -> None:
    """A -m metric reusing a config metric's label (other options) is refused, naming both."""
    data = write(tmp_path / "d.jsonl", '{"output": "a", "expected": "a"}\n')
    config = write(tmp_path / "c.yaml", "metrics: [exact_match]\n")
    result = CliRunner().invoke(
        cli, ["score", str(data), "--config", str(config), "-m", "exact_match:ignore_case=false"]
    )
    assert result.exit_code == 2
    assert "Two metrics have the label 'exact_match'" in result.stderr
    assert "-m 'exact_match:ignore_case=false'" in result.stderr


def test_debug_shows_the_cause_of_bad_input(tmp_path: Path) -> None:
    """With --debug, even a configuration error prints its traceback before the message."""
    data = write(tmp_path / "d.jsonl", '{"output": "a"}\n')
    result = CliRunner().invoke(cli, ["--debug", "score", str(data), "-m", "nope_metric"])
    assert result.exit_code == 2
    assert "Traceback" in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("Error: -m 'nope_metric'")


def test_run_out_option_overrides_the_config(tmp_path: Path) -> None:
    """`run CONFIG --out DIR` writes to DIR instead of the config's `out`."""
    write(tmp_path / "d.jsonl", '{"output": "a"}\n')
    config = write(tmp_path / "c.yaml", "data: d.jsonl\nmetrics: [answered_rate]\nout: there\n")
    result = invoke(["run", config, "--out", tmp_path / "here", "--report", "csv"])
    assert result.exit_code == 0
    assert (tmp_path / "here" / "summary.csv").is_file()
    assert not (tmp_path / "there").exists()


def test_rescore_checks_the_interval_method(tmp_path: Path) -> None:
    """A misspelt --ci is refused before the results are read."""
    result = CliRunner().invoke(cli, ["rescore", str(GOLDEN / "small.jsonl"), "--ci", "wilsn"])
    assert result.exit_code == 2
    assert "--ci: `ci_method` ('wilsn') must be one of" in result.stderr


def test_demo_tables_and_reports(tmp_path: Path) -> None:
    """`demo --out` prints each suite's description and tables and writes the reports."""
    result = invoke(["demo", "--by-group", "--out", tmp_path])
    assert "demo_sentiment: Product reviews" in result.stdout
    assert "kitchen" in result.stdout
    assert f"Wrote the reports to {tmp_path}" in result.stderr


def test_module_entry_point(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`python -m itemscore` runs main()."""
    import runpy

    monkeypatch.setattr(sys, "argv", ["itemscore", "--version"])
    with pytest.raises(SystemExit) as info:
        runpy.run_module("itemscore", run_name="__main__")
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"itemscore, version {itemscore.__version__}"


def test_limit_reads_the_first_rows_and_says_so(tmp_path: Path) -> None:
    """--limit N scores the first N rows, says so on stderr and in results.json's provenance."""
    import json as _json

    data = tmp_path / "big.jsonl"
    data.write_text(
        "".join(f'{{"id": "{i}", "output": "a", "expected": "a"}}\n' for i in range(5000)),
        encoding="utf-8",
    )
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli, ["score", str(data), "-m", "exact_match", "--limit", "7", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "--limit 7: read only the first 7 rows" in result.stderr
    saved = _json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert saved["provenance"]["data"]["rows"] == 7
    assert saved["provenance"]["data"]["limit"] == 7
    assert saved["measurements"][0]["n"] == 7
    bad = CliRunner().invoke(cli, ["score", str(data), "-m", "exact_match", "--limit", "0"])
    assert bad.exit_code == 2


def test_several_harness_logs_are_one_source_with_ids_kept_apart_by_task(tmp_path: Path) -> None:
    """A folder of inspect logs of two tasks and two models: one run, ids TASK/ID (19.3)."""
    import shutil

    logs = Path(__file__).parent / "data" / "harness" / "inspect"
    folder = tmp_path / "logs"
    folder.mkdir()
    for log in logs.glob("*.json"):
        shutil.copy(log, folder / log.name)
    proc = run_cli("score", folder, "-m", "exact_match", "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    models = {m["model"] for m in summary["measurements"]}
    assert models == {"scripted/scripted-a", "scripted/scripted-b"}
    out = tmp_path / "out"
    files = sorted(folder.glob("*.json"))
    assert run_cli("score", *files, "-m", "exact_match", "--out", out, "-q").returncode == 0
    items = list(itemscore.RunResult.load_json(out / "results.json").items)
    assert {(item.model, item.group) for item in items} == {
        ("scripted/scripted-a", "capitals_qa"),
        ("scripted/scripted-a", "science_mc"),
        ("scripted/scripted-b", "capitals_qa"),
    }
    assert {item.id.split("/", 1)[0] for item in items} == {item.group for item in items}
    assert len({(item.model, item.id) for item in items}) == len(items)


def test_a_missing_data_file_is_exit_2_naming_it(tmp_path: Path) -> None:
    proc = run_cli("score", tmp_path / "nope.jsonl", "-m", "exact_match")
    assert proc.returncode == 2
    assert "nope.jsonl: no such file or folder" in proc.stderr
