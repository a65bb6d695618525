"""read_items(format="eee"): Every Eval Ever instance files back into items, line by line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import itemscore
from itemscore import InputError
from itemscore.inputs.eee import read_eee
from itemscore.reports.eee import sample_hash, write

HARNESS = Path(__file__).parent / "data" / "harness"
LOG = HARNESS / "inspect" / "capitals_qa_scripted-b.eval"


def records_of(path: Path, **options: Any) -> list[dict[str, Any]]:
    return list(read_eee(path, **options))


@pytest.fixture
def samples(tmp_path: Path) -> Path:
    """The instance file itemscore writes for one real inspect log, two metrics."""
    result = itemscore.score(
        itemscore.read_items(LOG), ["exact_match", "token_f1"], suite_id="capitals"
    )
    write(result, tmp_path / "eee")
    (path,) = (tmp_path / "eee").rglob("*_samples.jsonl")
    return path


def _line(**changes: Any) -> dict[str, Any]:
    line: dict[str, Any] = {
        "schema_version": "0.3.0",
        "evaluation_id": "gsm8k/org/model/1700000000",
        "model_id": "org/model",
        "evaluation_name": "gsm8k",
        "evaluation_result_id": "gsm8k.accuracy",
        "sample_id": "gsm8k_0001",
        "interaction_type": "single_turn",
        "input": {"raw": "What is 2+2?", "reference": ["4"]},
        "output": {"raw": ["4"]},
        "answer_attribution": [],
        "evaluation": {"score": 1.0, "is_correct": True},
    }
    line.update(changes)
    return line


def _file(tmp_path: Path, *lines: Any) -> Path:
    path = tmp_path / "x_samples.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_one_item_per_sample_with_every_metrics_score(samples: Path) -> None:
    """Consecutive lines of one sample (one per metric) are one item; the scores are kept."""
    records = records_of(samples)
    assert [(r["id"], r["model"], r["output"]) for r in records] == [
        ("q1", "scripted/scripted-b", "paris"),
        ("q2", "scripted/scripted-b", ""),
        ("q3", "scripted/scripted-b", "Shakespeare"),
        ("q4", "scripted/scripted-b", None),
    ]
    assert records[1]["expected"] == ["8", "eight"]
    assert set(records[0]["eee_scores"]) == {"capitals.exact_match", "capitals.token_f1"}
    assert records[0]["eee_scores"]["capitals.exact_match"] == {
        "score": 1.0,
        "is_correct": True,
        "status": "ok",
        "reason": None,
    }
    assert records[0]["group"] == "capitals_qa"
    assert records[0]["input_tokens"] == 6


def test_result_keeps_one_evaluation_result(samples: Path) -> None:
    """result= reads only the lines of one evaluation_result_id."""
    records = records_of(samples, result="capitals.token_f1")
    assert [set(r["eee_scores"]) for r in records] == [{"capitals.token_f1"}] * 4
    with pytest.raises(InputError, match=r"no instance lines of evaluation_result_id 'nope'"):
        records_of(samples, result="nope")


def test_a_file_another_tool_wrote_is_read(tmp_path: Path) -> None:
    """An instance line of the schema, not written by itemscore, reads as an item."""
    path = _file(tmp_path, _line(sample_hash="abc", metadata={"subject": "math"}))
    (item,) = itemscore.read_items(path, format="eee")
    assert (item.id, item.model, item.input, item.output, item.expected) == (
        "gsm8k_0001",
        "org/model",
        "What is 2+2?",
        "4",
        ("4",),
    )
    assert item.metadata["subject"] == "math"
    assert item.metadata["sample_hash"] == "abc"  # not sha256: kept, not checked


def test_a_changed_line_fails_its_hash(tmp_path: Path) -> None:
    """A sha256 sample_hash that does not match input and reference is that item's error."""
    good = sample_hash("What is 2+2?", ["4"])
    path = _file(
        tmp_path,
        _line(sample_hash=good),
        _line(sample_id="b", sample_hash=good, input={"raw": "What is 2+3?", "reference": ["4"]}),
    )
    records = records_of(path)
    assert "error" not in records[0]
    assert records[1]["error"] == (
        f"{path}:2: 'sample_hash' does not match the input and reference: the line was changed "
        "after it was written, or hashes another text."
    )
    assert records[1]["id"] == "b"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"input": "x"}, "'input' must be an object"),
        ({"input": {"raw": "x", "reference": "4"}}, "'input.reference' must be a list"),
        ({"output": {"raw": "4"}}, "'output' must be an object whose 'raw' is a list"),
        ({"sample_id": 3}, "'sample_id' must be a text"),
        ({"evaluation": None}, "'evaluation' must be an object"),
    ],
)
def test_a_line_off_the_schema_is_that_items_error(
    tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    """The second line broken: an error record naming file and line; the others read."""
    path = _file(tmp_path, _line(), _line(**change), _line(sample_id="c"))
    records = records_of(path)
    assert len(records) == 3
    assert records[1]["error"].startswith(f"{path}:2: {message}")
    assert records[2]["id"] == "c"


def test_a_file_that_is_not_an_instance_file_is_refused(tmp_path: Path) -> None:
    """A JSON lines file of other rows says what an instance file holds."""
    path = tmp_path / "rows.jsonl"
    path.write_text('{"id": 1, "output": "x"}\n')
    with pytest.raises(InputError, match=r":1: this is not an Every Eval Ever instance file"):
        records_of(path)


def test_broken_json_and_long_lines_are_named(tmp_path: Path) -> None:
    """Bad JSON at FILE:LINE:COLUMN; a line past max_sample_bytes at FILE:LINE."""
    path = _file(tmp_path, _line())
    path.write_text(path.read_text() + "{oops\n")
    with pytest.raises(InputError, match=r":2:2: not valid JSON"):
        records_of(path)
    path.write_text(json.dumps(_line(output={"raw": ["x" * 5000]})) + "\n")
    with pytest.raises(InputError, match=r":1: the line is longer than the bound of 1000"):
        records_of(path, max_sample_bytes=1000)


def test_attempts_come_back(tmp_path: Path) -> None:
    """metadata.attempt is the item's attempt (epochs survive the round trip)."""
    path = _file(
        tmp_path,
        _line(metadata={"attempt": "1"}),
        _line(metadata={"attempt": "2"}),
    )
    records = records_of(path)
    assert [r["attempt"] for r in records] == [1, 2]
    assert len(itemscore.read_items(path, format="eee")) == 2
