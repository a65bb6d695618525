"""``--map choices=COL`` and ``--map confidence=COL`` on the command line.

The two roles are kept in ``metadata`` under their own name, where ``choice``, ``brier`` and
``ece`` read them; a file whose columns are named otherwise needs the mapping.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from itemscore import RunResult, Status
from itemscore.cli import cli

CHOICES = ["Paris", "Berlin", "Madrid", "Rome"]
ROWS = [
    # id, output, gold letter, model's probability of being right
    ("1", "Madrid", "C", 0.9),  # the text of choice C: only the choices say which letter
    ("2", "Paris", "A", 0.8),
    ("3", "Rome", "B", 0.6),
    ("4", "E", "A", 0.3),  # beyond the four choices: no valid answer once they are known
    ("5", "B", "B", 0.7),
]


def _write(folder: Path) -> Path:
    path = folder / "mc.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "response", "gold", "options", "p"])
        for id_, output, gold, p in ROWS:
            writer.writerow([id_, output, gold, json.dumps(CHOICES), p])
    return path


def _score(folder: Path, *args: str) -> tuple[Any, RunResult | None]:
    out = folder / "out"
    base = ["score", str(_write(folder)), "--map", "output=response", "--map", "expected=gold"]
    result = CliRunner().invoke(
        cli, [*base, *args, "--out", str(out), "--report", "json"], catch_exceptions=False
    )
    saved = out / "results.json"
    return result, RunResult.load_json(saved) if saved.is_file() else None


def test_map_choices_reads_the_choices_of_each_row(tmp_path: Path) -> None:
    """With --map choices=options a choice's text is its letter and E is beyond the choices."""
    cli_result, run = _score(tmp_path, "-m", "choice", "--map", "choices=options")
    assert cli_result.exit_code == 0, cli_result.output
    assert run is not None
    # A CSV cell is text: the JSON list, which the metric reads as the choices.
    assert [json.loads(i.metadata["choices"]) for i in run.items] == [CHOICES] * len(ROWS)
    assert "options" not in run.items[0].metadata  # renamed, not copied
    verdicts = [i.scores["choice"] for i in run.items]
    assert [v.extra["answer"] for v in verdicts] == ["C", "A", "D", None, "B"]
    assert [v.status for v in verdicts] == [
        Status.OK,
        Status.OK,
        Status.FAIL,
        Status.FAIL,
        Status.OK,
    ]
    assert run.measurements["default.choice"].value == pytest.approx(3 / 5)


def test_without_map_choices_the_column_is_plain_metadata(tmp_path: Path) -> None:
    """Unmapped, the options column is metadata['options']: no choices, so no texts to match."""
    cli_result, run = _score(tmp_path, "-m", "choice")
    assert cli_result.exit_code == 0, cli_result.output
    assert run is not None
    assert "choices" not in run.items[0].metadata
    assert run.items[0].metadata["options"] == json.dumps(CHOICES)
    verdicts = [i.scores["choice"] for i in run.items]
    assert verdicts[0].status is Status.FAIL  # "Madrid" is no letter without the choices
    assert verdicts[3].extra["answer"] == "E"  # every letter A-Z is allowed without them


def test_map_confidence_feeds_brier_equal_to_scikit_learn(tmp_path: Path) -> None:
    """--map confidence=p: brier is sklearn's brier_score_loss of right/wrong and p."""
    from sklearn.metrics import brier_score_loss

    cli_result, run = _score(
        tmp_path, "-m", "brier", "-m", "choice", "--map", "choices=options", "--map", "confidence=p"
    )
    assert cli_result.exit_code == 0, cli_result.output
    assert run is not None
    assert [float(i.metadata["confidence"]) for i in run.items] == [p for *_, p in ROWS]
    # brier judges the output by its text against the answer key (no letters): only row 5 is
    # right, its output being the letter B itself.
    right = [i.scores["brier"].extra["correct"] for i in run.items]
    assert right == [output == gold for _, output, gold, _ in ROWS]
    expected = brier_score_loss(right, [p for *_, p in ROWS])
    assert run.measurements["default.brier"].value == pytest.approx(expected, abs=1e-12)


def test_without_map_confidence_brier_says_where_it_looked(tmp_path: Path) -> None:
    """Unmapped, p is metadata['p']: brier skips every row, naming the field it read."""
    cli_result, run = _score(tmp_path, "-m", "brier")
    assert run is not None
    scores = [i.scores["brier"] for i in run.items]
    assert {s.status for s in scores} == {Status.SKIP}
    assert scores[0].reason == "no confidence in metadata['confidence']"
    assert cli_result.exit_code == 0


def test_map_to_a_role_the_file_also_has_is_exit_2_at_the_line(tmp_path: Path) -> None:
    """A 'choices' column and another column mapped to choices: one would be lost, so exit 2."""
    path = tmp_path / "both.csv"
    path.write_text('id,output,expected,choices,options\n1,A,A,"[""x""]","[""y""]"\n')
    result = CliRunner().invoke(
        cli, ["score", str(path), "-m", "choice", "--map", "choices=options"]
    )
    assert result.exit_code == 2
    assert "both.csv:1: the file has both a 'choices' column" in result.output
    assert "both a 'choices' column and the column 'options' mapped to 'choices'" in result.output
