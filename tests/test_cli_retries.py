"""``--retries N`` and ``retries:``: the library's ``retries`` setting, from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from itemscore import ConfigError
from itemscore.cli import cli
from itemscore.cli._config import load_config
from itemscore.cli._pipeline import prepare_request

WARNING = "is for shards scored by workers (--workers N or --dask ADDRESS)"


@pytest.fixture(autouse=True)
def _no_tracebacks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Messages are compared whole: no ITEMSCORE_DEBUG traceback before them."""
    monkeypatch.delenv("ITEMSCORE_DEBUG", raising=False)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "d.jsonl"
    lines = [{"id": str(i), "output": "a", "expected": "a" if i % 3 else "b"} for i in range(12)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def saved_settings(folder: Path) -> dict[str, object]:
    settings: dict[str, object] = json.loads((folder / "results.json").read_text())["settings"]
    return settings


def test_the_flag_sets_the_runs_retries(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    outcome = invoke("score", data, "-m", "exact_match", "--workers", "2", "--retries", "3",
                     "--out", out, "--report", "json")  # fmt: skip
    assert outcome.exit_code == 0, outcome.output
    assert (saved_settings(out)["executor"], saved_settings(out)["retries"]) == ("process", 3)
    assert WARNING not in outcome.stderr
    again = tmp_path / "again"
    rescored = invoke("rescore", out / "results.json", "--workers", "2", "--retries", "2",
                      "--out", again, "--report", "json")  # fmt: skip
    assert rescored.exit_code == 0, rescored.output
    assert saved_settings(again)["retries"] == 2


def test_the_yaml_key_sets_the_runs_retries(data: Path, tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(
        f"data: {data.name}\nmetrics: [exact_match]\nworkers: 2\nretries: 1\nout: out\n",
        encoding="utf-8",
    )
    outcome = invoke("run", config, "--report", "json")
    assert outcome.exit_code == 0, outcome.output
    assert saved_settings(tmp_path / "out")["retries"] == 1
    assert prepare_request(load_config(config)).settings["retries"] == 1
    flag_wins = invoke("run", config, "--retries", "4", "--report", "json")
    assert flag_wins.exit_code == 0, flag_wins.output
    assert saved_settings(tmp_path / "out")["retries"] == 4


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("-1", "`retries` (-1) must be an integer >= 0."),
        ("1.5", "`retries` (1.5) must be an integer >= 0."),
        ("true", "`retries` (True) must be an integer >= 0."),
        ("[1]", "`retries` ([1]) must be an integer >= 0."),
    ],
)
def test_a_bad_yaml_value_is_reported_at_its_line(tmp_path: Path, value: str, message: str) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(f"metrics: [exact_match]\nretries: {value}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        prepare_request(load_config(config))
    assert str(caught.value) == f"{config}:2:10: {message}"


def test_a_bad_flag_value_is_exit_2_at_the_flag(data: Path) -> None:
    outcome = invoke("score", data, "-m", "exact_match", "--retries", "-1")
    assert outcome.exit_code == 2
    assert outcome.stderr.strip() == "Error: --retries: `retries` (-1) must be an integer >= 0."
    typo = invoke("score", data, "-m", "exact_match", "--retries", "two")
    assert typo.exit_code == 2
    assert "'two' is not a valid integer" in typo.stderr


def test_retries_without_workers_is_a_visible_warning(data: Path, tmp_path: Path) -> None:
    """Serial retries are taken, as the library takes them, and said to retry nothing.

    The serial executor has no worker to lose, and a shard that raised outside any metric is
    never tried again (docs/executors.md): the setting changes nothing there, and says so.
    """
    outcome = invoke("score", data, "-m", "exact_match", "--retries", "2", "--json")
    assert outcome.exit_code == 0, outcome.output
    assert f"Warning: --retries 2 {WARNING}" in outcome.stderr
    assert json.loads(outcome.stdout)["measurements"]  # the run goes on
    zero = invoke("score", data, "-m", "exact_match", "--retries", "0", "--json")
    assert WARNING not in zero.stderr
    config = tmp_path / "run.yaml"
    config.write_text(f"data: {data.name}\nmetrics: [exact_match]\nretries: 2\n", encoding="utf-8")
    from_yaml = invoke("run", config, "--json")
    assert from_yaml.exit_code == 0, from_yaml.output
    assert f"Warning: {config}:3:10: `retries: 2` {WARNING}" in from_yaml.stderr
    with_workers = invoke("run", config, "--json", "--workers", "2")
    assert WARNING not in with_workers.stderr
    saved = tmp_path / "saved"
    assert invoke("score", data, "-m", "exact_match", "--out", saved, "-q").exit_code == 0
    rescored = invoke("rescore", saved / "results.json", "--retries", "1", "--json")
    assert f"Warning: --retries 1 {WARNING}" in rescored.stderr
