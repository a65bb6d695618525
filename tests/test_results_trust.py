"""Saved results are trusted only as far as they are checked: gate, compare, verify, reading.

Every fixture is a real report set (``itemscore score ... --out DIR``) on small data, then
edited the way a hand or a broken copy would: another metric under one label, a per-item
score no metric gives, a number of results.json changed, an items file that holds far more
rows than the results declare.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from itemscore import MetricMismatchError, RunResult, compare
from itemscore._gate import gate
from itemscore.cli import cli

#: Items of one model: half answered exactly, half with the answer inside a sentence, so
#: that ``exact_match`` and ``includes`` disagree on every second item.
N_ITEMS = 200


def _data(folder: Path) -> Path:
    path = folder / "answers.jsonl"
    rows = [
        {"id": f"q{i}", "model": "m", "expected": "yes",
         "output": "yes" if i % 2 == 0 else "the answer is yes"}
        for i in range(N_ITEMS)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """``scored(name, *specs)``: the results.json of a report set scored with ``-m`` specs."""
    root = tmp_path_factory.mktemp("trust")
    data = _data(root)
    made: dict[tuple[str, ...], Path] = {}

    def make(name: str, *specs: str) -> Path:
        key = (name, *specs)
        if key not in made:
            args: list[str | Path] = ["score", data, "--out", root / name, "-q"]
            for spec in specs:
                args += ["-m", spec]
            run = invoke(*args)
            assert run.exit_code == 0, run.output
            made[key] = root / name / "results.json"
        return made[key]

    return make


# -- 3. one label, two metrics ---------------------------------------------------------------


def test_gate_refuses_a_label_that_names_another_metric(scored: Callable[..., Path]) -> None:
    """exact_match against includes@exact_match: exit 2 naming both metrics, no verdict."""
    base = scored("em", "exact_match")
    other = scored("inc", "includes@exact_match")
    run = invoke("gate", base, other, "--metric", "exact_match", "--margin", "0.05")
    assert run.exit_code == 2, run.output
    assert f"'exact_match' is metric 'exact_match' in {base} but 'includes' in {other}" in (
        run.output
    )
    assert "not worse" not in run.output


def test_gate_refuses_a_label_with_other_options(scored: Callable[..., Path]) -> None:
    """Same metric, another option value: exit 2 naming the option and both values."""
    base = scored("em", "exact_match")
    other = scored("em-cased", "exact_match:ignore_case=false")
    run = invoke("gate", base, other, "--metric", "exact_match", "--margin", "0.05")
    assert run.exit_code == 2, run.output
    assert f"`ignore_case` is True in {base} and False in {other}" in run.output


def test_options_written_out_at_their_defaults_are_the_same_metric(
    scored: Callable[..., Path],
) -> None:
    """``exact_match`` and ``exact_match:ignore_case=true`` pair: the gate gives a verdict."""
    base = scored("em", "exact_match")
    other = scored("em-default", "exact_match:ignore_case=true")
    run = invoke("gate", base, other, "--metric", "exact_match", "--margin", "0.05", "--json")
    assert run.exit_code in (0, 3), run.output
    assert json.loads(run.output)["gain"] == 0.0


def test_compare_refuses_a_label_that_names_another_metric(scored: Callable[..., Path]) -> None:
    """compare: exit 2 on the command line; MetricMismatchError (a ValueError) in Python."""
    base = scored("em", "exact_match")
    other = scored("inc", "includes@exact_match")
    run = invoke("compare", base, other)
    assert run.exit_code == 2, run.output
    assert "'includes'" in run.output
    with pytest.raises(MetricMismatchError) as caught:
        compare(RunResult.load_json(base), RunResult.load_json(other))
    assert isinstance(caught.value, ValueError)
    assert caught.value.label == "exact_match"
    assert (caught.value.baseline or {}).get("name") == "exact_match"
    assert (caught.value.candidate or {}).get("name") == "includes"
    with pytest.raises(MetricMismatchError):
        gate(RunResult.load_json(base), RunResult.load_json(other), metric="exact_match",
             margin=0.05)  # fmt: skip


def test_compare_pairs_the_labels_that_agree(scored: Callable[..., Path]) -> None:
    """Naming only the labels whose metrics agree compares them; the others are refused."""
    base = scored("em2", "exact_match", "answered_rate")
    other = scored("inc2", "includes@exact_match", "answered_rate")
    assert invoke("compare", base, other).exit_code == 2
    run = invoke("compare", base, other, "-m", "answered_rate", "--json")
    assert run.exit_code == 0, run.output
    assert [c["metric"] for c in json.loads(run.output)] == ["answered_rate"]
