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
from itemscore import ConfigError, ItemResult, RunResult, Status
from itemscore.inputs._formats import REGISTRY
from itemscore.inputs.eee import read_eee
from itemscore.reports.eee import write

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


# -- 21: a harness-rules run survives Every Eval Ever ------------------------------------------

#: Every real harness log in the tests: inspect_ai's .eval and .json, lm-eval's samples files.
LOGS = sorted(
    [*HARNESS.rglob("*.eval"), *HARNESS.glob("inspect*/*.json"), *HARNESS.rglob("samples_*.jsonl")]
)


def _eee_round_trip(result: RunResult, folder: Path, **options: Any) -> list[ItemResult]:
    write(result, folder / "eee")
    return [
        item
        for samples in sorted((folder / "eee").rglob("*_samples.jsonl"))
        for item in itemscore.read_items(samples, format="eee", **options)
    ]


def _states(result: RunResult) -> dict[tuple[Any, ...], dict[str, str]]:
    return {
        (i.model, i.id, i.attempt): {k: Status(s.status).value for k, s in i.scores.items()}
        for i in result.items
    }


def _numbers(result: RunResult) -> dict[str, Any]:
    return {
        key: (m.value, m.ci_low, m.ci_high, m.n, {Status(s).value: c for s, c in m.counts.items()})
        for model in result.by_model.values()
        for key, m in model.items()
    } | {
        f"{key}[{group}]": (g.value, g.n)
        for model in result.by_model.values()
        for key, m in model.items()
        for group, g in m.groups.items()
    }


def test_every_real_log_is_in_the_round_trip() -> None:
    """The logs below are every harness log the tests keep (a new one joins by itself)."""
    assert len(LOGS) == 17
    assert {log.suffix for log in LOGS} == {".eval", ".json", ".jsonl"}


@pytest.mark.filterwarnings("ignore:.*documents could not be read:UserWarning")
@pytest.mark.parametrize("log", LOGS, ids=lambda p: f"{p.parent.name}/{p.name[:40]}")
def test_harness_rules_survive_every_eval_ever(tmp_path: Path, log: Path) -> None:
    """Harness rules, then EEE, then read back with rules='harness': same numbers and states.

    The reducers pass@2 and min join where the log has attempts (inspect epochs); the run
    before and after holds skips (inspect's errored samples, which it leaves unscored).
    """
    items = itemscore.read_items(log, rules="harness")
    attempts = any(i.attempt is not None for i in items)
    reduce = ["mean", "pass@2", "min"] if attempts else ["mean"]
    metrics = ["exact_match", "accuracy"]
    before = itemscore.score(items, metrics, suite_id="logs", reduce=reduce)
    back = _eee_round_trip(before, tmp_path, rules="harness")
    after = itemscore.score(back, metrics, suite_id="logs", reduce=reduce)
    assert _numbers(after) == _numbers(before)
    assert _states(after) == _states(before)
    assert [i.metadata["harness_rule"] for i in back] == [
        dict(i.metadata["harness_rule"]) for i in before.items
    ]


def test_the_round_trip_keeps_what_itemscores_own_rules_lose(tmp_path: Path) -> None:
    """Skips (inspect's errored sample) stay skips, and task rules stay rules, not fails.

    Without rules='harness' on the way back the items are itemscore's to compare again: the
    errored sample is a failed request, and includes() is no longer containment.
    """
    inspect_b = HARNESS / "inspect" / "capitals_qa_scripted-b.eval"
    contains = HARNESS / "inspect-cases" / "contains_qa_scripted-a.eval"
    for log, value, own in ((inspect_b, 2 / 3, 1 / 2), (contains, 1.0, 5 / 8)):
        items = itemscore.read_items(log, rules="harness")
        before = itemscore.score(items, ["exact_match"], suite_id="c")
        assert before.measurements["c.exact_match"].value == pytest.approx(value)
        back = _eee_round_trip(before, tmp_path / log.stem, rules="harness")
        again = itemscore.score(back, ["exact_match"], suite_id="c")
        assert again.measurements["c.exact_match"].value == pytest.approx(value)
        plain = _eee_round_trip(before, tmp_path / f"{log.stem}-plain")
        by_own = itemscore.score(plain, ["exact_match"], suite_id="c")
        assert by_own.measurements["c.exact_match"].value == pytest.approx(own)
        if log == inspect_b:
            (q4,) = [i for i in back if i.id == "q4"]
            assert (q4.output, q4.metadata["harness_verdict"]) == (None, "unscored")
            assert q4.metadata["harness_rule"]["kind"] == "unscored"
            assert again.items[3].scores["exact_match"].status == "skip"


@pytest.mark.parametrize("rules", ["itemscore", "harness"])
def test_an_error_stays_an_error(tmp_path: Path, rules: str) -> None:
    """A document lm-eval's reader could not read is an error again, its line named.

    fruit_mc's document 2 has a target out of range: an error item under itemscore's rules.
    """
    log = next(p for p in LOGS if p.name.startswith("samples_fruit_mc"))
    with pytest.warns(UserWarning, match="1 of 6 documents could not be read"):
        items = itemscore.read_items(log)
    before = itemscore.score(items, ["exact_match", "token_f1"], suite_id="fruit")
    (bad,) = [i for i in before.items if i.scores["exact_match"].status == "error"]
    with pytest.warns(UserWarning, match="1 of 6 documents could not be read"):
        back = _eee_round_trip(before, tmp_path, rules=rules)
    again = itemscore.score(back, ["exact_match", "token_f1"], suite_id="fruit")
    assert _states(again) == _states(before)
    assert _numbers(again) == _numbers(before)
    (samples,) = (tmp_path / "eee").rglob("*_samples.jsonl")
    reason = again.items[int(bad.id)].scores["token_f1"].reason
    assert reason is not None
    assert reason.startswith(f"{samples}:5: ")  # two lines a sample: its first
    assert reason.endswith(str(bad.scores["exact_match"].reason))


def test_rules_harness_on_another_tools_file_is_its_own_verdict(tmp_path: Path) -> None:
    """No rule written: the line's evaluation.is_correct decides; lines that disagree, an error."""
    path = _file(
        tmp_path,
        _line(output={"raw": ["four"]}),  # right by the file's own verdict
        _line(sample_id="s2", evaluation={"score": 0.0, "is_correct": False}),
        _line(sample_id="s3"),
        _line(
            sample_id="s3",
            evaluation_result_id="sums.f1",
            evaluation={"score": 0.5, "is_correct": False},
        ),
    )
    records = list(read_eee(path, rules="harness"))
    assert records[0]["harness_rule"] == {
        "harness": "eee",
        "scorer": "sums.accuracy",
        "kind": "logged",
        "value": True,
    }
    assert records[2]["error"] == (
        f"{path}:4: the lines of sample 's3' record different verdicts (evaluation.is_correct): "
        "'sums.accuracy' (True) and 'sums.f1' (False); read one evaluation result with result=, "
        "or leave out rules='harness'."
    )
    with pytest.warns(UserWarning, match="1 of 3 documents"):
        items = itemscore.read_items(path, format="eee", rules="harness")
    result = itemscore.score(items, ["exact_match"], suite_id="sums")
    assert [Status(i.scores["exact_match"].status).value for i in result.items] == [
        "ok",
        "fail",
        "error",
    ]
    one = itemscore.read_items(path, format="eee", rules="harness", result="sums.f1")
    assert [i.metadata["harness_rule"]["value"] for i in one] == [False]


def test_rules_is_an_eee_option_checked_when_called(tmp_path: Path) -> None:
    """rules= is accepted by the EEE reader, and a wrong value names the choices."""
    path = _file(tmp_path, _line())
    assert "rules" in REGISTRY["eee"].options()
    with pytest.raises(ConfigError, match=r"`rules` \('harnes'\) must be one of .*'harness'"):
        read_eee(path, rules="harnes")  # type: ignore[arg-type]
