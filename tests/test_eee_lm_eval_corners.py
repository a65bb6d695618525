"""Every Eval Ever in and out, and lm-eval's output folder: the corners where state was lost.

The harness logs are the real ones in tests/data/harness/ (see its README); Every Eval Ever is
itemscore's own output format, so its instance lines are written here by hand where a test
needs a line another tool could have written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import itemscore
from itemscore.inputs.eee import read_eee

HARNESS = Path(__file__).parent / "data" / "harness"


def _line(**changes: Any) -> dict[str, Any]:
    """One instance line of schema 0.3.0, as any tool may write it."""
    line: dict[str, Any] = {
        "schema_version": "0.3.0",
        "evaluation_id": "sums/org/model/1700000000",
        "model_id": "org/model",
        "evaluation_name": "sums",
        "evaluation_result_id": "sums.accuracy",
        "sample_id": "s1",
        "interaction_type": "single_turn",
        "input": {"raw": "What is 2+2?", "reference": ["4"]},
        "output": {"raw": ["4"]},
        "answer_attribution": [],
        "evaluation": {"score": 1.0, "is_correct": True},
    }
    line.update(changes)
    return line


def _file(folder: Path, *lines: dict[str, Any]) -> Path:
    path = folder / "x_samples.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


# -- 6: a line's metadata never decides a state --------------------------------------------------


def test_a_metadata_error_key_is_data_not_an_error_state(tmp_path: Path) -> None:
    """metadata {"error": "x"} keeps a right answer right: it is kept as metadata.error."""
    path = _file(tmp_path, _line(metadata={"error": "x", "id": "other", "subject": "math"}))
    (record,) = read_eee(path)
    assert "error" not in record
    assert (record["metadata.error"], record["metadata.id"]) == ("x", "other")
    assert (record["id"], record["subject"]) == ("s1", "math")
    items = itemscore.read_items(path, format="eee")
    result = itemscore.score(items, ["exact_match"], suite_id="sums")
    assert result.items[0].scores["exact_match"].status == "ok"
    measurement = result.measurements["sums.exact_match"]
    assert (measurement.value, measurement.n) == (1.0, 1)


def test_the_schemas_error_field_is_an_error_state_naming_file_and_line(tmp_path: Path) -> None:
    """A sample whose every line carries the schema's error is an error item, at FILE:LINE."""
    path = _file(
        tmp_path,
        _line(),
        _line(sample_id="s2", output={"raw": []}, error="timeout"),
        _line(sample_id="s2", evaluation_result_id="sums.f1", output={"raw": []}, error="timeout"),
        # one metric's error is its line's, not the sample's
        _line(sample_id="s3", error="the metric raised"),
        _line(sample_id="s3", evaluation_result_id="sums.f1"),
    )
    records = list(read_eee(path))
    assert [r["id"] for r in records] == ["s1", "s2", "s3"]
    assert records[1]["error"] == f"{path}:2: timeout"
    assert records[1]["eee_error"] == "timeout"
    assert "error" not in records[2]
    with pytest.warns(UserWarning, match="1 of 3 documents could not be read"):
        items = itemscore.read_items(path, format="eee")
    result = itemscore.score(items, ["exact_match"], suite_id="sums")
    states = {
        i.id: (i.scores["exact_match"].status, i.scores["exact_match"].reason) for i in result.items
    }
    assert states["s2"] == ("error", f"{path}:2: timeout")
    assert states["s1"][0] == states["s3"][0] == "ok"
