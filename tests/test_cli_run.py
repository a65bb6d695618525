"""Runs that used to go quiet: groups, suites, interval methods, rescore options; verify."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import itemscore

SCRIPT = Path(sys.executable).parent / "itemscore"
GOLDEN = Path(__file__).parent / "golden"


def run_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ITEMSCORE_")}
    return subprocess.run(
        [str(SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        env=environ,
        timeout=120,
        check=False,
    )


def last_stderr_line(code: str, env: dict[str, str] | None = None, timeout: float = 120) -> str:
    """The last line a fresh ``python -c code`` writes to stderr (its finding)."""
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout
    )
    lines = done.stderr.strip().splitlines()
    assert lines, f"no output (exit {done.returncode})"
    return lines[-1]


def rows(path: Path, lines: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture
def subjects(tmp_path: Path) -> Path:
    """Answers with a `subject` column (not `group`)."""
    return rows(
        tmp_path / "subjects.jsonl",
        [
            {"id": str(i), "output": "a", "expected": "a" if i % 3 else "b", "subject": s}
            for i, s in enumerate(["math", "art", "math", "art", "math", "art"])
        ],
    )


def test_by_group_without_groups_names_the_likely_column(subjects: Path) -> None:
    """--by-group with no group column warns and suggests --map group=subject (issue 10.1)."""
    proc = run_cli("score", subjects, "-m", "exact_match", "--by-group")
    assert proc.returncode == 0, proc.stderr
    assert "--by-group shows no groups" in proc.stderr
    assert "--map group=subject" in proc.stderr
    mapped = run_cli("score", subjects, "-m", "exact_match", "--by-group", "--map", "group=subject")
    assert "Warning" not in mapped.stderr
    assert "math" in mapped.stdout


def test_a_near_miss_of_an_installed_suite_is_an_error(subjects: Path) -> None:
    """--suite demo_qaa exits 2 with did-you-mean; an id resembling no suite stays allowed."""
    proc = run_cli("score", subjects, "--suite", "demo_qaa", "-m", "exact_match")
    assert proc.returncode == 2
    assert "No suite is named 'demo_qaa'. Did you mean 'demo_qa'?" in proc.stderr
    plain = run_cli("score", subjects, "--suite", "my_bench", "-m", "exact_match", "--json")
    assert plain.returncode == 0, plain.stderr
    assert json.loads(plain.stdout)["measurements"][0]["key"] == "my_bench.exact_match"


def test_an_interval_method_a_metric_cannot_use_is_a_warning(subjects: Path) -> None:
    """--ci t on a ratio metric: a warning naming the method it used instead."""
    proc = run_cli("score", subjects, "-m", "exact_match", "--ci", "t", "--json")
    assert proc.returncode == 0, proc.stderr
    assert "'exact_match' does not support the interval method 't'" in proc.stderr
    assert json.loads(proc.stdout)["measurements"][0]["ci_method"] == "wilson"


def test_rescore_keeps_saved_options_unless_new_ones_are_given(tmp_path: Path) -> None:
    """rescore -m token_f1 recomputes with the saved remove_articles; new options replace it."""
    data = rows(
        tmp_path / "d.jsonl",
        [{"id": "1", "output": "the cat", "expected": "a cat"}, {"id": "2", "output": "x"}],
    )
    first = run_cli(
        "score", data, "-m", "token_f1:remove_articles=true", "--out", tmp_path / "o", "-q"
    )
    assert first.returncode == 0, first.stderr
    saved = tmp_path / "o" / "results.json"
    kept = run_cli("rescore", saved, "-m", "token_f1", "--json")
    assert kept.returncode == 0, kept.stderr
    assert json.loads(kept.stdout)["measurements"][0]["value"] == 1.0
    changed = run_cli("rescore", saved, "-m", "token_f1:remove_articles=false", "--json")
    assert json.loads(changed.stdout)["measurements"][0]["value"] == 0.5


def test_verify_agrees_then_finds_a_tampered_number(tmp_path: Path) -> None:
    """verify: exit 0 on fresh results; exit 1 naming the number after an edit (issue 10.4)."""
    out = tmp_path / "o"
    data = GOLDEN / "small.jsonl"
    assert run_cli("score", data, "-m", "exact_match", "--out", out, "-q").returncode == 0
    results = out / "results.json"
    good = run_cli("verify", results)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "agree" in good.stdout
    document = json.loads(results.read_text(encoding="utf-8"))
    text = json.dumps(document)
    first = next(iter(itemscore.RunResult.load_json(results).measurements.values()))
    assert first.value is not None
    tampered = text.replace(repr(first.value), repr(first.value / 2), 1)
    assert tampered != text
    results.write_text(tampered, encoding="utf-8")
    bad = run_cli("verify", results)
    assert bad.returncode == 1
    assert "`value` is" in bad.stdout
    as_json = run_cli("verify", results, "--json")
    assert as_json.returncode == 1
    verdict = json.loads(as_json.stdout)
    assert verdict["agree"] is False
    assert verdict["results"] == str(results)
    assert len(verdict["differences"]) == 1
    assert "`value` is" in verdict["differences"][0]
    results.write_text(text, encoding="utf-8")
    fine = run_cli("verify", results, "--json")
    loaded = itemscore.RunResult.load_json(results)
    count = sum(len(ms) for ms in loaded.by_model.values())  # one per model
    assert fine.returncode == 0, fine.stderr
    verdict = json.loads(fine.stdout)
    assert "provenance.duration_s" in verdict.pop("not_checked")
    assert verdict == {
        "results": str(results), "agree": True, "measurements": count, "data_checked": False,
        "data_differs": False, "differences": [],
    }  # fmt: skip


def test_verify_recomputes_every_items_score_and_notes_a_missing_hash(tmp_path: Path) -> None:
    """An items file with one flipped score and its hash removed fails verify (issue 16.18)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = tmp_path / "o"
    assert (
        run_cli("score", GOLDEN / "small.jsonl", "-m", "exact_match", "--out", out).returncode == 0
    )
    # A copy of the set as plain files, the items' first score flipped from ok to fail.
    copy = tmp_path / "copy"
    copy.mkdir()
    table = pq.read_table(out / "items.parquet")
    column = table.column("score:exact_match").combine_chunks()
    states = column.field("status").to_pylist()
    first = states.index(0)
    states[first] = 1
    values = column.field("value").to_pylist()
    values[first] = 0.0
    flipped = pa.StructArray.from_arrays(
        [pa.array(states, pa.int8()), pa.array(values, pa.float64()),
         column.field("reason"), column.field("extra")],
        fields=list(column.type),
    )  # fmt: skip
    index = table.schema.get_field_index("score:exact_match")
    pq.write_table(table.set_column(index, "score:exact_match", flipped), copy / "items.parquet")
    document = json.loads((out / "results.json").read_text(encoding="utf-8"))
    del document["items"]["sha256"]
    (copy / "results.json").write_text(json.dumps(document), encoding="utf-8")
    assert (
        itemscore.RunResult.load_json(copy / "results.json")
        .items[first]
        .scores["exact_match"]
        .status
        is itemscore.Status.FAIL
    )  # the loader takes it: nothing says it was altered
    bad = run_cli("verify", copy / "results.json")
    assert bad.returncode == 1
    ident = table.column("id")[first].as_py()
    assert "records no SHA-256 of its items file 'items.parquet'" in bad.stdout
    assert f"exact_match: 1 item score differs from the recomputation (items {ident!r})" in (
        bad.stdout
    )
    assert f"item {ident!r} is fail with value 0.0 in the file but recomputes to ok" in bad.stdout


@pytest.mark.skipif(
    not hasattr(itemscore.RunResult, "with_provenance"),
    reason="results record the data hash once RunResult.with_provenance exists",
)
def test_verify_checks_the_data_hash(tmp_path: Path) -> None:
    """verify --data: exit 0 with the scored file, 1 with another."""
    out = tmp_path / "o"
    data = GOLDEN / "small.jsonl"
    assert run_cli("score", data, "-m", "exact_match", "--out", out, "-q").returncode == 0
    results = out / "results.json"
    good = run_cli("verify", results, "--data", data)
    assert good.returncode == 0, good.stdout + good.stderr
    other = rows(tmp_path / "other.jsonl", [{"id": "1", "output": "x"}])
    wrong_data = run_cli("verify", results, "--data", other)
    assert wrong_data.returncode == 1
    assert "is not the file the results were computed from" in wrong_data.stdout


def test_bad_settings_exit_2_naming_the_flag(subjects: Path) -> None:
    """--confidence and --seed are checked by the library, reported at the flag."""
    proc = run_cli("score", subjects, "-m", "exact_match", "--confidence", "95")
    assert proc.returncode == 2
    assert "Error: --confidence: `confidence` (95.0) must be in (0, 1)." in proc.stderr


def test_each_metric_is_configured_once_per_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """score with a config file and -m: one configure call per metric (issue 8.6; was 3 each)."""
    from click.testing import CliRunner

    from itemscore import Metric
    from itemscore.cli import cli

    calls: list[str] = []
    original = Metric.configure.__func__  # type: ignore[attr-defined]

    def counting(cls: type[Metric], options: Any = None) -> Metric:
        calls.append(cls.metric_id)
        return original(cls, options)  # type: ignore[no-any-return]

    monkeypatch.setattr(Metric, "configure", classmethod(counting))
    data = rows(tmp_path / "d.jsonl", [{"id": "1", "output": "a", "expected": "a"}])
    config = tmp_path / "c.yaml"
    config.write_text("metrics: [exact_match]\n", encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["score", str(data), "--config", str(config), "-m", "token_f1", "--json"]
    )
    assert result.exit_code == 0, result.output
    assert sorted(calls) == ["exact_match", "token_f1"]


def test_workers_and_dask_give_the_serial_numbers(tmp_path: Path) -> None:
    """--workers 2 and --dask ADDRESS score as one process does (issue 8.2, command side)."""
    data = rows(
        tmp_path / "d.jsonl",
        [{"id": str(i), "output": "a b" if i % 3 else "c", "expected": "a b"} for i in range(40)],
    )
    args = ["score", data, "-m", "exact_match", "-m", "token_f1", "--json"]
    serial = run_cli(*args)
    assert serial.returncode == 0, serial.stderr
    expected = json.loads(serial.stdout)["measurements"]
    pooled = run_cli(*args, "--workers", "2")
    assert pooled.returncode == 0, pooled.stderr
    assert json.loads(pooled.stdout)["measurements"] == expected
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",  # a free port: the default 8787 may be taken
    ) as cluster:
        on_dask = run_cli(*args, "--dask", cluster.scheduler_address)
    assert on_dask.returncode == 0, on_dask.stderr
    assert json.loads(on_dask.stdout)["measurements"] == expected
    both = run_cli(*args, "--workers", "2", "--dask", "tcp://127.0.0.1:1")
    assert both.returncode == 2
    assert "choose --workers" in both.stderr


def test_a_file_read_in_parts_by_workers_gives_the_serial_items_file(tmp_path: Path) -> None:
    """Workers reading their own parts write the serial run's items.parquet, to the bit.

    Its rows in order (the workers' parts read as one table), its measurements, and every
    column chunk of every part zstd-compressed (issue 17.3, 17.4).
    """
    import pyarrow.parquet as pq

    lines = []
    for i in range(3_000):  # past the parts of two workers, with blank lines between them
        row: dict[str, object] = {
            "model": f"m{i % 2}",
            "output": f"a {i % 7}",
            "group": f"g{i % 3}",
        }
        row["expected"] = ["a 1", "a 2"] if i % 5 else f"a {i % 7}"
        if i % 11 == 0:
            row["output"] = None
        lines.append(row)
    data = rows(tmp_path / "d.jsonl", lines)
    data.write_text(data.read_text(encoding="utf-8").replace("}\n", "}\n\n", 40), encoding="utf-8")
    args = ["score", data, "-m", "exact_match", "-m", "token_f1", "-m", "answered_rate", "-q"]
    assert run_cli(*args, "--out", tmp_path / "serial").returncode == 0
    pooled = run_cli(*args, "--workers", "2", "--out", tmp_path / "pooled")
    assert pooled.returncode == 0, pooled.stderr
    serial_items = pq.read_table(tmp_path / "serial" / "items.parquet")
    assert serial_items.num_rows == 3_000
    assert pq.read_table(tmp_path / "pooled" / "items.parquet").equals(serial_items)
    results = [
        json.loads((tmp_path / d / "results.json").read_text()) for d in ("serial", "pooled")
    ]
    assert results[0]["measurements"] == results[1]["measurements"]
    parts = sorted((tmp_path / "pooled" / "items.parquet").iterdir())  # written by the workers
    assert len(parts) > 1
    for part in parts:
        meta = pq.ParquetFile(part).metadata
        assert meta.num_row_groups >= 1
        chunks = [
            meta.row_group(g).column(c)
            for g in range(meta.num_row_groups)
            for c in range(meta.num_columns)
        ]
        assert {chunk.compression for chunk in chunks} == {"ZSTD"}


def test_time_limits_from_the_command_line_are_checked_and_recorded(tmp_path: Path) -> None:
    """--item-timeout and --deadline reach the run's settings; a bad one names its flag."""
    out = tmp_path / "o"
    data = GOLDEN / "small.jsonl"
    proc = run_cli(
        "score", data, "-m", "exact_match", "--item-timeout", "5", "--deadline", "600",
        "--out", out, "-q",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    settings = itemscore.RunResult.load_json(out / "results.json").settings
    assert (settings.item_timeout, settings.deadline) == (5.0, 600.0)
    bad = run_cli("score", data, "-m", "exact_match", "--deadline", "-1")
    assert bad.returncode == 2
    assert "--deadline" in bad.stderr
    assert "must be a number of seconds above 0" in bad.stderr


@pytest.mark.parametrize(("named", "used"), [(None, "system"), ("jemalloc", "jemalloc")])
def test_the_command_line_reads_with_the_system_allocator_unless_one_is_named(
    named: str | None, used: str
) -> None:
    """Arrow's pool is the system allocator in a command-line process; a named one is kept."""
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    if named is not None:
        env["ARROW_DEFAULT_MEMORY_POOL"] = named
    code = (
        "import sys\n"
        "from itemscore.cli._app import main\n"
        "try:\n    main(['metrics', '--json'])\nexcept SystemExit:\n    pass\n"
        "import pyarrow as pa\n"
        "print(pa.default_memory_pool().backend_name, file=sys.stderr)\n"
    )
    assert last_stderr_line(code, env) == used


@pytest.mark.parametrize("command", ["score", "rescore"])
def test_a_command_line_run_leaves_pandas_unimported_until_asked(
    tmp_path: Path, command: str
) -> None:
    """pyarrow looks for pandas with it hidden: no import in the run, to_pandas still works."""
    pytest.importorskip("pandas")
    data = rows(
        tmp_path / "d.jsonl", [{"id": str(i), "output": "a", "expected": "a"} for i in range(5)]
    )
    out = tmp_path / "out"
    if command == "rescore":
        assert run_cli("score", data, "-m", "exact_match", "--out", out).returncode == 0
        args = ["rescore", str(out / "results.json"), "-m", "token_f1"]
    else:
        args = ["score", str(data), "-m", "exact_match", "-m", "token_f1", "--workers", "2"]
    code = (
        "import sys\n"
        "from itemscore.cli._app import main\n"
        f"try:\n    main({args!r})\nexcept SystemExit as done:\n    assert done.code == 0\n"
        "imported = 'pandas' in sys.modules\n"
        "import pyarrow as pa\n"
        "pa.array([1, 2]); pa.compute.equal(pa.array([1]), 1)\n"
        "after = 'pandas' in sys.modules\n"
        "frame = pa.table({'a': [1]}).to_pandas()\n"
        "print(imported, after, type(frame).__name__, file=sys.stderr)\n"
    )
    assert last_stderr_line(code, timeout=300) == "False False DataFrame"


def test_pandas_is_left_to_pyarrow_in_a_callers_process() -> None:
    """From Python (no console script), pyarrow's own look for pandas is not touched."""
    pytest.importorskip("pandas")
    code = (
        "import sys\n"
        "import pyarrow as pa\n"
        "from itemscore.cli._memory import arrow_without_pandas\n"
        "arrow_without_pandas()\n"
        "pa.array([0])\n"
        "print('pandas' in sys.modules, file=sys.stderr)\n"
    )
    assert last_stderr_line(code) == "True"
