"""Every Eval Ever in and out, and lm-eval's output folder: the corners where state was lost.

The harness logs are the real ones in tests/data/harness/ (see its README); Every Eval Ever is
itemscore's own output format, so its instance lines are written here by hand where a test
needs a line another tool could have written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import itemscore
from itemscore import ConfigError, ItemResult, RunResult, Status
from itemscore.inputs._formats import REGISTRY
from itemscore.inputs.eee import read_eee
from itemscore.inputs.lm_eval import group_means
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
    verdicts = {"ok": "correct", "fail": "incorrect", "skip": "unscored"}
    assert [i.metadata["harness_verdict"] for i in back] == [
        verdicts[Status(i.scores["exact_match"].status).value] for i in before.items
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


# -- 22: lm-eval's output folder, read as lm-eval wrote it ---------------------------------------

LM_EVAL_CASES = HARNESS / "lm-eval-cases" / "results" / "scripted-a"

#: Writes an lm-eval run of two groups, offline: ``by_task`` (weight_by_size: false) over the
#: multiple-choice tasks ``five`` (5 documents, 2 right) and ``three`` (3, all right), and
#: ``by_size`` (weight_by_size: true) over ``four`` (4, 1 right) and ``two`` (2, both right).
#: The model, registered here, gives each choice the log-likelihood minus its length, so it
#: picks the shorter choice ("no"), which the data make right where it should be.
_LM_EVAL_RUN = r'''
import json, os, sys
from pathlib import Path

out = Path(sys.argv[1])
tasks = out / "tasks"
tasks.mkdir(parents=True)
TASK = """task: {name}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {name}.jsonl
test_split: test
output_type: multiple_choice
doc_to_text: "Question: {{{{question}}}}\\nAnswer:"
doc_to_choice: "{{{{choices}}}}"
doc_to_target: label
metric_list:
  - metric: acc
metadata:
  version: 1.0
"""
GROUP = """group: {name}
task: [{tasks}]
aggregate_metric_list:
  - metric: acc
    weight_by_size: {weight}
metadata:
  version: 1.0
"""
for name, n, right in (("five", 5, 2), ("three", 3, 3), ("four", 4, 1), ("two", 2, 2)):
    (tasks / f"{name}.yaml").write_text(TASK.format(name=name))
    with (tasks / f"{name}.jsonl").open("w") as f:
        for i in range(n):
            row = {"question": f"{name} {i}?", "choices": ["no", "maybe"], "label": int(i >= right)}
            f.write(json.dumps(row) + "\n")
GROUPS = [("by_task", "five, three", "false"), ("by_size", "four, two", "true")]
for name, members, weight in GROUPS:
    (tasks / f"{name}.yaml").write_text(GROUP.format(name=name, tasks=members, weight=weight))

from lm_eval.api.model import LM
from lm_eval.api.registry import register_model


@register_model("shortest")
class Shortest(LM):
    def __init__(self, **kwargs):
        super().__init__()

    def loglikelihood(self, requests, disable_tqdm=False):
        return [(-float(len(r.arguments[1])), False) for r in requests]

    def generate_until(self, requests, disable_tqdm=False):
        raise NotImplementedError

    def loglikelihood_rolling(self, requests, disable_tqdm=False):
        raise NotImplementedError


from lm_eval.__main__ import cli_evaluate

os.chdir(tasks)
sys.argv = [
    "lm_eval", "run", "--model", "shortest", "--model_args", "pretrained=shortest",
    "--tasks", "by_task,by_size", "--include_path", str(tasks),
    "--log_samples", "--output_path", str(out / "results"),
]
cli_evaluate()
'''


@pytest.fixture(scope="module")
def lm_eval_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder lm-eval writes for one model (``results/<model>/``), made by lm-eval now."""
    pytest.importorskip("lm_eval")
    out = tmp_path_factory.mktemp("lm-eval-run")
    home = out / "hf"
    env = os.environ | {
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(home),
        "HF_DATASETS_CACHE": str(home / "datasets"),
    }
    done = subprocess.run(
        [sys.executable, "-c", _LM_EVAL_RUN, str(out / "run")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (folder,) = (out / "run" / "results").iterdir()
    assert len(list(folder.glob("samples_*.jsonl"))) == 4
    assert len(list(folder.glob("results_*.json"))) == 1
    return folder


@pytest.mark.parametrize("format", [None, "lm-eval"])
def test_the_real_output_folder_reads_as_lm_eval_wrote_it(format: str | None) -> None:
    """A folder of samples files and the run's results_*.json: the samples, ids by task."""
    with pytest.warns(UserWarning, match="1 of 18 documents could not be read"):
        items = itemscore.read_items(LM_EVAL_CASES, format=format)
    assert sorted({i.group for i in items}) == [
        "colours_choice_gen",
        "fruit_mc",
        "repeat_gen",
        "strict_gen",
    ]
    assert len({i.id for i in items}) == 18  # ids name their task: fruit_mc/0
    assert {i.model for i in items} == {"scripted-a"}
    fruit = [i for i in items if i.group == "fruit_mc"]
    assert {(i.metadata["task_group"], i.metadata["group_metric"]) for i in fruit} == {
        ("fruit_group", "acc,none")
    }
    # colours_choice_gen is in the group, but has no acc: it counts in no value of the group
    colours = [i for i in items if i.group == "colours_choice_gen"]
    assert {i.metadata.get("group_weight") for i in colours} == {None}


def test_a_group_is_lm_evals_weighted_mean(lm_eval_run: Path) -> None:
    """The group values are lm-eval's, to 1e-12: its aggregation, and its results file.

    by_task weighs its tasks equally (0.4 and 1.0: 0.7), where the items pooled give 5/8.
    """
    from lm_eval.api.metrics import aggregate_subtask_metrics

    (results_file,) = lm_eval_run.glob("results_*.json")
    logged = json.loads(results_file.read_text())
    items = itemscore.read_items(lm_eval_run, rules="harness")
    assert len(items) == 14
    result = itemscore.score(items, ["accuracy", "exact_match"], suite_id="lm")
    for label in ("accuracy", "exact_match"):
        means = group_means(result, label)
        assert list(means) == ["shortest"]
        for group, weight_by_size in (("by_task", False), ("by_size", True)):
            tasks = logged["group_subtasks"][group]
            values = [logged["results"][t]["acc,none"] for t in tasks]
            sizes = [logged["results"][t]["sample_len"] for t in tasks]
            theirs = aggregate_subtask_metrics(values, sizes, weight_by_size)
            assert means["shortest"][group] == pytest.approx(theirs, abs=1e-12)
            assert means["shortest"][group] == pytest.approx(
                logged["groups"][group]["acc,none"], abs=1e-12
            )
    assert group_means(result, "accuracy")["shortest"]["by_task"] == pytest.approx(0.7, abs=1e-12)
    pooled = itemscore.score(
        [i for i in items if i.metadata["task_group"] == "by_task"], ["accuracy"], suite_id="lm"
    )
    assert pooled.measurements["lm.accuracy"].value == pytest.approx(0.625, abs=1e-12)


def test_the_folder_scores_from_its_path(lm_eval_run: Path) -> None:
    """score(folder) and `itemscore score FOLDER` read it too, without --format."""
    result = itemscore.score(str(lm_eval_run), ["accuracy"], suite_id="lm")
    measurement = result.measurements["lm.accuracy"]
    assert (measurement.n, measurement.value) == (14, pytest.approx(8 / 14, abs=1e-12))
    done = subprocess.run(
        [sys.executable, "-m", "itemscore", "score", str(lm_eval_run), "-m", "accuracy"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_a_results_file_is_left_out_only_beside_samples(tmp_path: Path) -> None:
    """A results_*.json without samples beside it is a data file like any other."""
    from itemscore.inputs._sniff import lm_eval_results

    found = [
        ("a/results_2026-11-30T23-40-36.903617.json", "json"),
        ("a/samples_x_2026-11-30T23-40-36.903617.jsonl", "lm-eval"),
        ("b/results_2026-11-30T23-40-36.903617.json", "json"),
        ("b/rows.jsonl", "jsonl"),
    ]
    assert lm_eval_results(found) == {"a/results_2026-11-30T23-40-36.903617.json"}
