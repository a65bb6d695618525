"""Everyday runs: too few attempts for a reducer, the coverage flag's level, the progress bars."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from itemscore import ConfigError, ItemResult, rescore, score
from itemscore.cli import cli


def write_attempts(path: Path, attempts: list[int], *, models: tuple[str, ...] = ()) -> Path:
    """A JSON lines file of questions ``q0, q1, ...`` with ``attempts[q]`` attempts each."""
    rows = [
        {"id": f"q{q}", "attempt": j, "output": "a" if (q + j) % 3 else "b", "expected": "a"}
        | ({"model": model} if model else {})
        for model in models or (None,)
        for q, n in enumerate(attempts)
        for j in range(n)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def invoke(*args: str) -> tuple[int, str, str]:
    """The command line's exit code, stdout and stderr."""
    run = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return run.exit_code, run.stdout, run.stderr


# -- item 2: a reducer that needs more attempts than the data has --------------------------------


def test_pass_at_8_on_five_attempts_says_the_cause_once_and_exits_2(tmp_path: Path) -> None:
    """pass@8 over 200 questions of 5 attempts: one sentence with the counts, exit 2, no table."""
    data = write_attempts(tmp_path / "att.jsonl", [5] * 200)
    code, out, err = invoke("score", str(data), "-m", "exact_match", "--reduce", "pass@8")
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith(
        "Error: --reduce: pass@8 needs at least 8 attempts per question; these have 5."
    )
    assert "pass@5" in err  # the largest K the data allows
    assert "distinct reason" not in err


def test_pass_at_2_on_a_file_without_attempts_says_to_map_the_column(tmp_path: Path) -> None:
    """No attempt column: the message says so and names --map attempt=COLUMN."""
    data = tmp_path / "plain.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": str(i), "output": "a", "expected": "a"}) + "\n" for i in range(9)
        ),
        encoding="utf-8",
    )
    code, _, err = invoke("score", str(data), "-m", "exact_match", "--reduce", "pass@2")
    assert code == 2
    assert "pass@2 needs at least 2 attempts per question" in err
    assert "no attempt column" in err
    assert "--map attempt=COLUMN" in err


@pytest.mark.parametrize("reducer", ["pass^6", "maj@6", "at_least:6"])
def test_every_reducer_with_k_is_refused_when_no_question_has_k_attempts(
    tmp_path: Path, reducer: str
) -> None:
    """pass^K, maj@K and at_least:K follow the same rule as pass@K; the config names its line."""
    data = write_attempts(tmp_path / "att.jsonl", [3, 4, 5])
    config = tmp_path / "run.yaml"
    config.write_text(
        f"data: {data.name}\nmetrics: [exact_match]\nreduce: [mean, '{reducer}']\n",
        encoding="utf-8",
    )
    code, _, err = invoke("run", str(config))
    assert code == 2
    assert "run.yaml:3:" in err
    assert f"{reducer} needs at least 6 attempts per question; these have 3 to 5." in err


def test_the_library_refuses_before_scoring_and_rescore_keeps_what_was_saved() -> None:
    """score() raises ConfigError (setting 'reduce'); rescore with the saved reducers does not."""
    items = [ItemResult(id=f"q{q}", output="a", expected="a", attempt=j) for q in range(4)
             for j in range(2)]  # fmt: skip
    with pytest.raises(ConfigError, match=r"pass@3 needs at least 3 attempts") as caught:
        score(items, ["exact_match"], reduce="pass@3")
    assert caught.value.setting == "reduce"
    result = score(items, ["exact_match"], reduce="pass@2")
    with pytest.raises(ConfigError, match=r"these have 2"):
        rescore(result, reduce="pass@4")
    assert rescore(result).measurements["default.exact_match"].value == 1.0


def test_some_questions_short_stay_errors_and_the_summary_names_the_reason(
    tmp_path: Path,
) -> None:
    """Questions with 3 or 4 attempts of pass@5 are errors; stderr names why, by question."""
    data = write_attempts(tmp_path / "mixed.jsonl", [3] * 5 + [4] * 3 + [8] * 12, models=("a", "b"))
    code, out, err = invoke("score", str(data), "-m", "exact_match", "--reduce", "pass@5")
    assert code == 0
    assert "exact_match [pass@5]" in out
    lines = err.splitlines()
    assert lines == [
        f"Warning: exact_match · {model}: 8 of 20 questions error — pass@5 needs at least 5 "
        "scored attempts; this question has 3 (5 questions); pass@5 needs at least 5 scored "
        "attempts; this question has 4 (3 questions) (2 distinct reasons)."
        for model in ("a", "b")
    ]
