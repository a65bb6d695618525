"""Several harness logs at once, and compare on them (issue 19, items 3 and 4).

``read_items`` takes a list of logs (each file's task its group, ids kept apart as
``TASK/ID``), and ``compare`` pairs the two models of such a result by task and id: from
Python and with ``itemscore compare``. The logs are the real ones of tests/data/harness:
model a ran two tasks whose ids overlap (lm-eval numbers documents 0..N in every task), model
b one of them. The reference test is statsmodels' exact McNemar test on the pairs built here
from the per-item verdicts, keyed by (task, id).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from statsmodels.stats.contingency_tables import mcnemar

import itemscore
from itemscore import RunResult, Status

HARNESS = Path(__file__).parent / "data" / "harness"
SCRIPT = Path(sys.executable).parent / "itemscore"


def _lm_eval(model: str, task: str) -> Path:
    (path,) = (HARNESS / "lm-eval" / "results" / model).glob(f"samples_{task}_*.jsonl")
    return path


LM_EVAL = (
    [_lm_eval("scripted-a", "capitals_gen"), _lm_eval("scripted-a", "science_mc")],
    [_lm_eval("scripted-b", "capitals_gen")],
    ("scripted-a", "scripted-b"),
    "capitals_gen",
)
INSPECT = (
    [HARNESS / "inspect" / f"{task}_scripted-a.eval" for task in ("capitals_qa", "science_mc")],
    [HARNESS / "inspect" / "capitals_qa_scripted-b.eval"],
    ("scripted/scripted-a", "scripted/scripted-b"),
    "capitals_qa",
)
RUNS = pytest.mark.parametrize(
    ("a_logs", "b_logs", "models", "shared"), [LM_EVAL, INSPECT], ids=["lm-eval", "inspect"]
)


def _verdicts(result: RunResult, model: str) -> dict[tuple[str | None, str], bool]:
    """Each item of ``model`` by (task, id as the log wrote it): right or not."""
    out = {}
    for item in result.items:
        if item.model == model:
            task, _, ident = item.id.partition("/")
            assert task == item.group  # the id names its task
            score = item.scores["exact_match"]
            assert score.status in (Status.OK, Status.FAIL)
            out[(item.group, ident)] = score.status == Status.OK
    return out


def _reference(result: RunResult, models: tuple[str, str]) -> tuple[int, float, float]:
    """Pairs by (task, id), the difference of their means and McNemar's exact p-value."""
    a, b = (_verdicts(result, model) for model in models)
    keys = sorted(a.keys() & b.keys())
    table = [[0, 0], [0, 0]]
    for key in keys:
        table[int(not a[key])][int(not b[key])] += 1
    difference = sum(b[k] - a[k] for k in keys) / len(keys)
    return len(keys), difference, float(mcnemar(table, exact=True).pvalue)


@RUNS
def test_read_items_takes_a_list_of_logs(
    a_logs: list[Path], b_logs: list[Path], models: tuple[str, str], shared: str
) -> None:
    items = itemscore.read_items([*a_logs, *b_logs])
    by_model = {model: [item for item in items if item.model == model] for model in models}
    assert {item.model for item in items} == set(models)
    tasks_a = {item.group for item in by_model[models[0]]}
    assert len(tasks_a) == 2
    assert shared in tasks_a
    assert {item.group for item in by_model[models[1]]} == {shared}
    for model_items in by_model.values():
        ids = [item.id for item in model_items]
        assert len(ids) == len(set(ids))  # overlapping ids of two tasks are kept apart
        assert all(item.id.startswith(f"{item.group}/") for item in model_items)
    # Each log's items are those it holds on its own, under TASK/ID.
    for log in [*a_logs, *b_logs]:
        alone = itemscore.read_items(log)
        together = {(i.model, i.id): i for i in items}
        for item in alone:
            other = together[(item.model, f"{item.group}/{item.id}")]
            assert (other.output, other.expected, other.group) == (
                item.output,
                item.expected,
                item.group,
            )


@RUNS
def test_compare_pairs_a_multi_log_result_by_task_and_id(
    a_logs: list[Path], b_logs: list[Path], models: tuple[str, str], shared: str
) -> None:
    result = itemscore.score(itemscore.read_items([*a_logs, *b_logs]), ["exact_match"])
    assert set(result.by_model) == set(models)
    (comparison,) = itemscore.compare(result, baseline=models[0])
    n, difference, p_value = _reference(result, models)
    n_a = sum(1 for item in result.items if item.model == models[0])
    assert (comparison.baseline, comparison.candidate) == models
    assert comparison.n_pairs == n == 4
    assert comparison.n_unpaired == n_a - n  # model a's other task has no partner
    assert comparison.difference == pytest.approx(difference)
    assert comparison.p_value == pytest.approx(p_value)
    assert set(comparison.groups) == {shared}
    assert comparison.groups[shared].n_pairs == n


@RUNS
def test_itemscore_compare_on_a_multi_log_result(
    tmp_path: Path, a_logs: list[Path], b_logs: list[Path], models: tuple[str, str], shared: str
) -> None:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ITEMSCORE_")}

    def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(SCRIPT), *map(str, args)], capture_output=True, text=True, env=environ,
            timeout=120, check=False,
        )  # fmt: skip

    out = tmp_path / "out"
    scored = run(
        "score", *a_logs, *b_logs, "-m", "exact_match", "--out", out, "-q", "--no-user-config"
    )
    assert scored.returncode == 0, scored.stderr
    done = run("compare", out / "results.json", "--baseline", models[0], "--by-group", "--json")
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)
    result = RunResult.load_json(out / "results.json")
    n, difference, p_value = _reference(result, models)
    assert (row["baseline"], row["candidate"]) == models
    assert (row["n_pairs"], row["n_unpaired"]) == (n, 3) == (4, 3)
    assert row["difference"] == pytest.approx(difference)
    assert row["p_value"] == pytest.approx(p_value)
    assert {group: g["n_pairs"] for group, g in row["groups"].items()} == {shared: n}
