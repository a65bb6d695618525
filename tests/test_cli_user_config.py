"""The user's defaults file (~/.config/itemscore/config.yaml, XDG_CONFIG_HOME honoured)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from itemscore.cli import cli


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An XDG config folder of its own, and a data file."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("ITEMSCORE_NO_USER_CONFIG", raising=False)
    (tmp_path / "xdg" / "itemscore").mkdir(parents=True)
    rows = "".join(f'{{"id": "{i}", "output": "a", "expected": "{"ab"[i % 3 == 0]}"}}\n'
                   for i in range(30))  # fmt: skip
    (tmp_path / "d.jsonl").write_text(rows, encoding="utf-8")
    return tmp_path


def defaults(home: Path, text: str) -> Path:
    path = home / "xdg" / "itemscore" / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def confidence(home: Path, *args: str) -> float:
    out = CliRunner().invoke(cli, ["score", str(home / "d.jsonl"), "-m", "exact_match",
                                   "--json", *args])  # fmt: skip
    assert out.exit_code == 0, out.output
    return float(json.loads(out.stdout)["measurements"][0]["confidence"])


def test_defaults_apply_and_the_command_line_wins(home: Path) -> None:
    """A default is used when nothing else says; the command line's option wins."""
    defaults(home, "confidence: 0.9\n")
    assert confidence(home) == 0.9
    assert confidence(home, "--confidence", "0.8") == 0.8


def test_a_configuration_file_wins_over_the_defaults(home: Path) -> None:
    """`run CONFIG`: the configuration's own setting wins over the defaults file."""
    defaults(home, "confidence: 0.9\nseed: 3\n")
    config = home / "run.yaml"
    config.write_text("data: d.jsonl\nmetrics: [exact_match]\nconfidence: 0.8\n")
    out = CliRunner().invoke(cli, ["run", str(config), "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["measurements"][0]["confidence"] == 0.8


def test_ignored_by_flag_or_environment(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--no-user-config and ITEMSCORE_NO_USER_CONFIG=1 leave the file out."""
    defaults(home, "confidence: 0.9\n")
    assert confidence(home, "--no-user-config") == 0.95
    monkeypatch.setenv("ITEMSCORE_NO_USER_CONFIG", "1")
    assert confidence(home) == 0.95


def test_an_unknown_key_is_an_error_with_did_you_mean(home: Path) -> None:
    """Every key is checked: a typo names the file, line and column, and the fix; exit 2."""
    path = defaults(home, "seed: 1\nconfdence: 0.9\n")
    out = CliRunner().invoke(cli, ["score", str(home / "d.jsonl"), "-m", "exact_match"])
    assert out.exit_code == 2
    assert f"{path}:2:1: unknown key 'confdence'. Did you mean 'confidence'?" in out.output
    assert "--no-user-config" in out.output
    defaults(home, "metrics: [f1]\n")  # a run's setting, not a default
    out = CliRunner().invoke(cli, ["score", str(home / "d.jsonl"), "-m", "exact_match"])
    assert out.exit_code == 2
    assert "unknown key 'metrics'" in out.output


def test_verbose_and_help_say_where_defaults_came_from(home: Path) -> None:
    """--verbose names each default taken and its line; --help names the file."""
    path = defaults(home, "confidence: 0.9\nseed: 4\n")
    out = CliRunner().invoke(
        cli, ["score", str(home / "d.jsonl"), "-m", "exact_match", "-v", "--seed", "5"]
    )
    assert out.exit_code == 0, out.output
    assert f"Defaults from {path}: confidence ({path}:1:13)." in out.stderr
    assert "seed (" not in out.stderr  # the command line's --seed won
    assert "changed nothing" in out.stderr  # ... and it is the command line's, so it is said
    shown = CliRunner().invoke(cli, ["score", "--help"], terminal_width=200)
    assert f"Defaults: {path} (found)" in shown.output
