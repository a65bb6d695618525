"""compare refuses pairs that are not the same items, sides with no pair and a lone model.

Each refusal is tested through the library (``ConfigError``) and the command line (exit 2, a
message naming the files, the problem and the fix), and ``--allow-different-inputs``
(``allow_different_inputs=True``) is shown to pair by id anyway.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from itemscore import ConfigError, ItemResult, RunResult, compare, score
from itemscore.cli._compare_commands import compare_command

IDS = [f"q{i}" for i in range(6)]
CORRECT = [True, True, False, True, False, True]


def _run(
    *,
    ids: list[str] = IDS,
    question: str = "question",
    answer: str = "answer",
    models: tuple[str, ...] = ("m",),
) -> RunResult:
    items = [
        ItemResult(
            id=item_id,
            input=f"{question} {item_id}",
            output=answer if ok else "wrong",
            expected=answer,
            model=model,
        )
        for model in models
        for item_id, ok in zip(ids, CORRECT)
    ]
    return score(items, ["exact_match"], suite_id="t")


def _save(result: RunResult, folder: Path) -> Path:
    folder.mkdir()
    return result.save_json(folder / "results.json")


def _invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(compare_command, [str(a) for a in args], catch_exceptions=False)


# --------------------------------------------------------------------------- library


@pytest.mark.parametrize(
    "other",
    [
        pytest.param({"question": "another question"}, id="input"),
        pytest.param({"answer": "another answer"}, id="expected"),
    ],
)
def test_pairs_with_different_content_are_refused(other: dict[str, str]) -> None:
    """One id, different input or answer key: ConfigError naming ids and the override."""
    with pytest.raises(ConfigError) as caught:
        compare(_run(), _run(**other))
    message = str(caught.value)
    assert "6 paired items with one id hold a different input or answer key" in message
    assert "'q0', 'q1', 'q2', 'q3', 'q4', ..." in message
    assert "allow_different_inputs=True" in message


def test_allow_different_inputs_pairs_by_id() -> None:
    """allow_different_inputs=True pairs the six ids and compares them."""
    (c,) = compare(_run(), _run(question="another question"), allow_different_inputs=True)
    assert (c.n_pairs, c.n_unpaired, c.difference) == (6, 0, 0.0)


def test_sides_sharing_no_id_are_refused() -> None:
    """No id on both sides: ConfigError saying there is no pair and what to compare."""
    other = _run(ids=[f"r{i}" for i in range(6)])
    with pytest.raises(ConfigError, match="share no id, so there is no pair to compare"):
        compare(_run(), other)
    # The override is about content, never about pairs that do not exist.
    with pytest.raises(ConfigError, match="share no id"):
        compare(_run(), other, allow_different_inputs=True)


def test_one_model_alone_is_refused() -> None:
    """One run of one model: nothing to compare within it, and the two ways to fix it."""
    with pytest.raises(ConfigError) as caught:
        compare(_run())
    message = str(caught.value)
    assert "The run has one model, so there is nothing to compare within it" in message
    assert "give a second run" in message
    assert "score several models in one run" in message


# --------------------------------------------------------------------------- command line


def test_cli_refuses_different_content_and_names_the_option(tmp_path: Path) -> None:
    """Exit 2, the files, the problem and --allow-different-inputs; nothing is written."""
    first = _save(_run(), tmp_path / "a")
    second = _save(_run(answer="another answer"), tmp_path / "b")
    out = _invoke(first, second, "--out", tmp_path / "cmp")
    assert out.exit_code == 2, out.output
    assert f"{first}, {second}:" in out.output
    assert "hold a different input or answer key" in out.output
    assert "--allow-different-inputs" in out.output
    assert not (tmp_path / "cmp").exists()


def test_cli_allow_different_inputs_pairs_by_id(tmp_path: Path) -> None:
    """--allow-different-inputs: exit 0 and the six ids paired."""
    first = _save(_run(), tmp_path / "a")
    second = _save(_run(question="another question"), tmp_path / "b")
    out = _invoke(first, second, "--allow-different-inputs", "--json")
    assert out.exit_code == 0, out.output
    (row,) = json.loads(out.output)
    assert (row["n_pairs"], row["n_unpaired"]) == (6, 0)


def test_cli_refuses_sides_sharing_no_id(tmp_path: Path) -> None:
    """Exit 2 naming both files and saying no id is shared."""
    first = _save(_run(), tmp_path / "a")
    second = _save(_run(ids=[f"r{i}" for i in range(6)]), tmp_path / "b")
    out = _invoke(first, second)
    assert out.exit_code == 2, out.output
    assert f"{first}, {second}:" in out.output
    assert "share no id, so there is no pair to compare" in out.output
    assert "compare runs over the same questions" in out.output


def test_cli_refuses_one_model_alone(tmp_path: Path) -> None:
    """Exit 2 naming the file and the two fixes (a second run, several models)."""
    only = _save(_run(), tmp_path / "a")
    out = _invoke(only)
    assert out.exit_code == 2, out.output
    assert f"{only}: The run has one model, so there is nothing to compare" in out.output
    assert "give a second run to compare against" in out.output


def test_cli_two_models_of_one_run_compare(tmp_path: Path) -> None:
    """The same checks let a well-formed run of two models through (exit 0, six pairs)."""
    both = _save(_run(models=("m", "n")), tmp_path / "a")
    out = _invoke(both, "--json")
    assert out.exit_code == 0, out.output
    (row,) = json.loads(out.output)
    assert (row["baseline"], row["candidate"], row["n_pairs"]) == ("m", "n", 6)
