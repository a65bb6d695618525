"""``--read-option KEY=VALUE`` and ``read_options:`` reach the harness-log readers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(sys.executable).parent / "itemscore"
HARNESS = Path(__file__).parent / "data" / "harness"
GEN_A = next((HARNESS / "lm-eval" / "results" / "scripted-a").glob("samples_capitals_gen_*.jsonl"))
QA_A = HARNESS / "inspect" / "capitals_qa_scripted-a.eval"


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


def exact_match(*args: str | Path) -> float:
    done = run_cli("score", *args, "-m", "exact_match", "--json")
    assert done.returncode == 0, done.stderr
    (measurement,) = json.loads(done.stdout)["measurements"]
    value: float = measurement["value"]
    return value


def test_an_lm_eval_filter_is_chosen_on_the_command_line() -> None:
    """strict-match extracts 3 of 4 answers; the raw responses are whole sentences."""
    assert exact_match(GEN_A, "--format", "lm-eval") == 0.75
    assert exact_match(GEN_A, "--format", "lm-eval", "--read-option", "filter=raw") == 0.0


def test_inspect_completions_are_read_with_output_completion() -> None:
    assert exact_match(QA_A) == 0.75
    assert exact_match(QA_A, "--read-option", "output=completion") == 0.0


def test_read_options_in_a_configuration_file(tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(
        f"data: {json.dumps(str(QA_A))}\nmetrics: [exact_match]\n"
        "read_options:\n  output: completion\n",
        encoding="utf-8",
    )
    done = run_cli("run", config, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["measurements"][0]["value"] == 0.0


def test_an_unknown_option_is_exit_2_naming_the_valid_ones() -> None:
    done = run_cli("score", QA_A, "-m", "exact_match", "--read-option", "scorr=match")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "Error: --read-option: The inspect reader has no option 'scorr'; its options are "
        "'output', 'scorer'. Did you mean 'scorer'?"
    )
    assert done.stdout == ""


def test_an_unknown_option_in_yaml_is_named_at_its_line(tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(
        f"data: {json.dumps(str(GEN_A))}\nformat: lm-eval\nmetrics: [exact_match]\n"
        "read_options:\n  filtre: raw\n",
        encoding="utf-8",
    )
    done = run_cli("run", config)
    assert done.returncode == 2
    assert done.stderr.startswith(f"Error: {config}:5:3: The lm-eval reader has no option")
    assert "its options are 'output', 'filter', 'model'. Did you mean 'filter'?" in done.stderr


def test_a_read_option_without_a_value_is_a_usage_error() -> None:
    done = run_cli("score", QA_A, "-m", "exact_match", "--read-option", "scorer")
    assert done.returncode == 2
    assert "'scorer' is not KEY=VALUE" in done.stderr


def test_a_format_without_options_says_it_takes_none(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "a", "output": "x", "expected": "x"}\n', encoding="utf-8")
    done = run_cli("score", data, "-m", "exact_match", "--read-option", "scorer=match")
    assert done.returncode == 2
    assert "The jsonl reader has no option 'scorer'; it takes none." in done.stderr
