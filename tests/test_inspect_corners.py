"""inspect_ai corners: logs inspect_ai writes here, in the test, read and scored by itemscore.

Each log comes from a real ``inspect_ai.eval`` run, offline: the ``mockllm/model`` provider
with scripted outputs (its token count is a word count, since mockllm's own downloads a
tiktoken encoding). The references are read from the log with inspect_ai's own
``read_eval_log``: each sample's score and the results' metrics, never with itemscore's reader.
"""

from __future__ import annotations

import gc
import json
import math
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

import itemscore
from itemscore.inputs.inspect_log import read_inspect
from itemscore.integrations.harness_rules import credit, verdict

inspect_ai = pytest.importorskip("inspect_ai")

from inspect_ai import Epochs, Task, eval  # noqa: E402 - after the skip
from inspect_ai.dataset import MemoryDataset, Sample  # noqa: E402
from inspect_ai.log import EvalLog, read_eval_log  # noqa: E402
from inspect_ai.model import ModelOutput, get_model  # noqa: E402
from inspect_ai.scorer import at_least, f1, includes, match  # noqa: E402
from inspect_ai.solver import generate  # noqa: E402

# inspect_ai's own dependencies warn about their own use of each other; not ours to fix.
pytestmark = [
    pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
]

#: One scripted question: (id, question, target, the model's answer per epoch).
Row = tuple[str, str, str, Sequence[str]]


def _scripted(rows: Sequence[Row]) -> Callable[..., Any]:
    """mockllm's output function: each question's answers, epoch after epoch."""
    calls: dict[str, int] = {}

    def output(messages: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
        prompt = messages[-1].text
        for ident, question, _, answers in rows:
            if question in prompt:
                calls[ident] = calls.get(ident, 0) + 1
                text = answers[(calls[ident] - 1) % len(answers)]
                return ModelOutput.from_content(model="mockllm", content=text)
        raise AssertionError(prompt)

    return output


async def _words(text: str) -> int:
    return len(text.split())


def run_eval(
    folder: Path,
    name: str,
    rows: Sequence[Row],
    scorer: Any,
    *,
    log_format: str = "eval",
    epochs: Any = 1,
    **options: Any,
) -> EvalLog:
    """Run ``inspect_ai.eval`` on mockllm and return the log inspect wrote, read back whole."""
    model = get_model("mockllm/model", custom_outputs=_scripted(rows), memoize=False)
    model.api.count_text_tokens = _words  # type: ignore[method-assign] # offline
    task = Task(
        name=name,
        dataset=MemoryDataset([Sample(id=i, input=q, target=t) for i, q, t, _ in rows]),
        solver=generate(),
        scorer=scorer,
        epochs=epochs,
    )
    (log,) = eval(
        task, model=model, log_dir=str(folder), log_format=log_format, display="none", **options
    )
    gc.collect()  # inspect leaves streams for the collector: let their warnings fall here
    assert log.status == "success", log.error
    return read_eval_log(log.location)


def inspect_verdicts(log: EvalLog, scorer: str) -> dict[str, float]:
    """inspect's value of each sample for ``scorer`` (C 1, I 0, a number as it is)."""
    assert log.samples is not None
    out = {}
    for sample in log.samples:
        value = sample.scores[scorer].value if sample.scores else None
        out[str(sample.id)] = {"C": 1.0, "I": 0.0}.get(value, value)  # type: ignore[arg-type]
    return out


def itemscore_values(result: itemscore.RunResult, label: str) -> dict[str, float | None]:
    """itemscore's value of each item for ``label`` (``None`` where it is not scored)."""
    return {item.id: item.scores[label].value for item in result.items}


def headline(result: itemscore.RunResult, label: str) -> float | None:
    (measurement,) = [m for m in result.measurements.values() if m.metric == label]
    return measurement.value


def logged_metric(log: EvalLog, scorer: str, metric: str) -> float:
    """The value of ``metric`` in the log's results for ``scorer``, as inspect computed it."""
    assert log.results is not None
    (score,) = [s for s in log.results.scores if s.name == scorer]
    return score.metrics[metric].value


# -- 18: two scorers of one type ---------------------------------------------------------------

#: Answers whose verdicts turn on case and on where the target stands.
TWINS: list[Row] = [
    ("a", "Name the capital of Italy.", "Rome", ["Rome, I think"]),
    ("b", "What colour is the sky?", "blue", ["The sky is Blue"]),
    ("c", "What is six times seven?", "42", ["I say 42"]),
    ("d", "Name the capital of France.", "Paris", ["paris is the capital"]),
    ("e", "What is the symbol for gold?", "Au", ["gold"]),
    ("f", "How many legs has a spider?", "eight", ["EIGHT legs"]),
]


@pytest.fixture(scope="module", params=["eval", "json"])
def twins(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> EvalLog:
    """Two ``match()`` and two ``includes()`` scorers, each pair with other options."""
    scorers = [
        match(location="any", ignore_case=False),
        match(location="begin"),
        includes(ignore_case=False),
        includes(),
    ]
    folder = tmp_path_factory.mktemp("twins")
    return run_eval(folder, "twins", TWINS, scorers, log_format=request.param)


def test_inspect_names_the_second_scorer_of_a_type_with_a_number(twins: EvalLog) -> None:
    """The premise: the header lists both as 'match'; samples and results say match1."""
    assert twins.results is not None
    assert twins.samples is not None
    assert [s.name for s in twins.eval.scorers or []] == ["match", "match", "includes", "includes"]
    names = ["match", "match1", "includes", "includes1"]
    assert [s.name for s in twins.results.scores] == names
    assert all(list(s.scores or {}) == names for s in twins.samples)
    # The options differ, so each scorer's verdicts differ from its twin's somewhere.
    assert inspect_verdicts(twins, "match") != inspect_verdicts(twins, "match1")
    assert inspect_verdicts(twins, "includes") != inspect_verdicts(twins, "includes1")


@pytest.mark.parametrize("scorer", ["match", "match1", "includes", "includes1"])
def test_each_scorer_is_read_with_its_own_options(twins: EvalLog, scorer: str) -> None:
    """Every scorer, the second of a type too: inspect's verdicts and headline, 0 mismatches."""
    items = itemscore.read_items(twins.location, format="inspect", rules="harness", scorer=scorer)
    result = itemscore.score(items, ["exact_match", "accuracy"], suite_id="t")
    expected = inspect_verdicts(twins, scorer)
    for label in ("exact_match", "accuracy"):
        assert itemscore_values(result, label) == expected
        assert headline(result, label) == pytest.approx(
            logged_metric(twins, scorer, "accuracy"), abs=1e-12
        )
    assert {i.metadata["scorer"] for i in result.items} == {scorer}
    rule = result.items[0].metadata["harness_rule"]
    assert rule["scorer"] == scorer
    assert twins.results is not None
    (logged,) = [s for s in twins.results.scores if s.name == scorer]
    assert {k: rule[k] for k in logged.params} == logged.params  # the options as logged


def test_the_second_scorer_reads_without_rules_too(twins: EvalLog) -> None:
    """Its score and answer per sample, and the completion as output (match() compares it)."""
    records = list(read_inspect(twins.location, scorer="match1"))
    assert twins.samples is not None
    by_id = {str(s.id): s for s in twins.samples}
    for record in records:
        sample = by_id[record["id"]]
        assert record["scorer"] == "match1"
        assert record["score"] == sample.scores["match1"].value  # type: ignore[index]
        assert record["output"] == sample.output.completion


def test_a_scorer_the_log_does_not_have_names_the_ones_it_has(twins: EvalLog) -> None:
    """match2 is not in the log: the message lists all four names inspect keyed scores by."""
    with pytest.raises(itemscore.ConfigError, match=r"has no scorer 'match2'") as caught:
        read_inspect(twins.location, scorer="match2")
    assert "'match', 'match1', 'includes'" in str(caught.value)


# -- 19: partial credit (inspect f1()) -----------------------------------------------------------

#: Answers that get whole, partial and no credit from inspect's f1(), epoch by epoch.
PARTIAL: list[Row] = [
    ("a", "Say: the cat sat.", "the cat sat", ["the cat sat", "the cat"]),
    ("b", "Name a red fruit.", "red apple", ["green apple", "red apple"]),
    ("c", "Describe the sky.", "blue sky today", ["blue", "grey"]),
    ("d", "What is six times seven?", "forty two", ["nothing", "forty two"]),
    ("e", "Name the capital of Italy.", "Rome", ["Rome", "Rome"]),
    ("f", "Describe the dog.", "big brown dog", ["brown dog runs", "big dog"]),
]


@pytest.fixture(scope="module")
def partial(tmp_path_factory: pytest.TempPathFactory) -> EvalLog:
    """f1() over six samples, one epoch."""
    return run_eval(tmp_path_factory.mktemp("f1"), "partial", PARTIAL, f1())


@pytest.fixture(scope="module")
def partial_epochs(tmp_path_factory: pytest.TempPathFactory) -> EvalLog:
    """f1() over six samples, two epochs reduced by mean and by max."""
    folder = tmp_path_factory.mktemp("f1_epochs")
    return run_eval(folder, "partial", PARTIAL, f1(), epochs=Epochs(2, ["mean", "max"]))


def test_partial_credit_is_the_harness_value_and_the_headline_its_mean(partial: EvalLog) -> None:
    """Each sample's value is inspect's f1 value; the headline is inspect's mean, over 6."""
    values = inspect_verdicts(partial, "f1")
    assert set(values.values()) > {0.0, 1.0}  # partial credit among them
    items = itemscore.read_items(partial.location, format="inspect", rules="harness")
    result = itemscore.score(items, ["exact_match", "accuracy"], suite_id="p")
    for label in ("exact_match", "accuracy"):
        assert itemscore_values(result, label) == values
        assert {i.scores[label].status for i in result.items} <= {"ok", "fail"}  # no error
        (measurement,) = [m for m in result.measurements.values() if m.metric == label]
        assert measurement.n == 6
        assert measurement.aggregation == "mean"
        assert measurement.value == pytest.approx(logged_metric(partial, "f1", "mean"), abs=1e-12)


def test_partial_credit_over_epochs_gives_inspects_reductions(partial_epochs: EvalLog) -> None:
    """Two epochs: the mean and the max of each sample's values, then their mean, as inspect."""
    items = itemscore.read_items(partial_epochs.location, format="inspect", rules="harness")
    result = itemscore.score(items, ["exact_match"], suite_id="p", reduce=["mean", "max"])
    assert partial_epochs.results is not None
    logged = {s.reducer: s.metrics["mean"].value for s in partial_epochs.results.scores}
    mean, best = result.measurements["p.exact_match"], result.measurements["p.exact_match[max]"]
    assert (mean.n, best.n) == (6, 6)
    assert mean.value == pytest.approx(logged["mean"], abs=1e-12)
    assert best.value == pytest.approx(logged["max"], abs=1e-12)


def test_credit_reads_partial_values_and_verdict_refuses_them() -> None:
    """credit(): 1/0 for a verdict, the logged number or inspect's "P"; verdict() names credit."""
    logged = {"harness": "inspect", "scorer": "f1", "kind": "logged"}
    assert credit("x", ["y"], logged | {"value": 0.67}) == 0.67
    assert credit("x", ["y"], logged | {"value": "P"}) == 0.5
    assert credit("x", ["y"], logged | {"value": "C"}) == 1.0
    assert credit("x", ["y"], logged | {"value": 0}) == 0.0
    assert credit("x", ["x"], {"harness": "inspect", "kind": "includes"}) == 1.0
    assert credit(None, ["x"], {"harness": "inspect", "kind": "unscored"}) is None
    with pytest.raises(ValueError, match=r"is not a verdict but partial credit; .*credit gives it"):
        verdict("x", ["y"], logged | {"value": 0.67})
    for bad in (1.5, -0.5, float("nan"), "maybe", [1]):
        with pytest.raises(ValueError, match=r"neither a verdict .* nor partial credit"):
            credit("x", ["y"], logged | {"value": bad})


# -- 20: itemscore_scorer with samples in flight --------------------------------------------------

#: A fresh interpreter runs inspect on 12 samples at once with itemscore_scorer: pandas is
#: not imported before the scorer is made (as in a script that never asks for it), and the
#: samples are scored on inspect's threads together.
IN_FLIGHT = """
import json, sys
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput, get_model
from inspect_ai.solver import generate
from itemscore.integrations.inspect import itemscore_scorer

before = "pandas" in sys.modules
scorer = itemscore_scorer("exact_match")

def output(messages, tools, tool_choice, config):
    return ModelOutput.from_content(model="mockllm", content="Paris")

async def words(text):
    return len(text.split())

model = get_model("mockllm/model", custom_outputs=output, memoize=False)
model.api.count_text_tokens = words
samples = [Sample(id=f"s{n}", input=f"Question {n}?", target="Paris") for n in range(12)]
dataset = MemoryDataset(samples)
task = Task(name="in_flight", dataset=dataset, solver=generate(), scorer=scorer)
(log,) = eval(task, model=model, log_dir=sys.argv[1], display="none", max_samples=12,
              max_connections=12, fail_on_error=False)
print(json.dumps({
    "pandas_before": before,
    "status": log.status,
    "errors": [s.error.message for s in log.samples if s.error],
    "states": [s.scores["exact_match"].metadata["itemscore_status"]
               for s in log.samples if s.scores],
    "value": log.results.scores[0].metrics["value"].value if log.results else None,
}))
"""


def test_samples_scored_at_once_in_a_fresh_interpreter_are_all_scored(tmp_path: Path) -> None:
    """12 samples in flight (max_samples=12): every one scored ok, none an import error."""
    ran = subprocess.run(
        [sys.executable, "-I", "-c", IN_FLIGHT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    got = json.loads(ran.stdout.strip().splitlines()[-1])
    assert got["pandas_before"] is False  # the premise: nothing imported pandas first
    assert got["errors"] == []
    assert got["status"] == "success"
    assert got["states"] == ["ok"] * 12
    assert got["value"] == 1.0


# -- 23: standard errors over questions, per reducer ---------------------------------------------

RIGHT, WRONG = "Rome", "Paris"
#: Three epochs of one question each: every answer is the right one or the one wrong one, so
#: the most frequent answer (itemscore's majority) is the most frequent verdict (inspect's mode).
EPOCHS: list[Row] = [
    (ident, f"Question {ident}: name the capital of Italy.", "Rome", answers)
    for ident, answers in [
        ("a", [RIGHT, RIGHT, RIGHT]),
        ("b", [RIGHT, WRONG, WRONG]),
        ("c", [WRONG, WRONG, WRONG]),
        ("d", [RIGHT, RIGHT, WRONG]),
        ("e", [WRONG, RIGHT, WRONG]),
        ("f", [WRONG, WRONG, RIGHT]),
    ]
]
#: itemscore's reducer and inspect's of the same name.
REDUCERS = {"mean": "mean", "at_least:2": "at_least_2", "majority": "mode", "max": "max"}


@pytest.fixture(scope="module")
def epochs_log(tmp_path_factory: pytest.TempPathFactory) -> EvalLog:
    """match() over six questions, three epochs, reduced four ways."""
    folder = tmp_path_factory.mktemp("epochs")
    reducers = ["mean", at_least(2), "mode", "max"]
    return run_eval(folder, "epochs", EPOCHS, match(), epochs=Epochs(3, reducers))


def _by_reducer(result: itemscore.RunResult) -> dict[str, itemscore.Measurement]:
    return {
        name: result.measurements["e.exact_match" + ("" if name == "mean" else f"[{name}]")]
        for name in REDUCERS
    }


def test_under_harness_rules_each_reducers_standard_error_is_inspects(epochs_log: EvalLog) -> None:
    """at_least, mode, max and mean: value and stderr as inspect logged them, to 1e-12."""
    assert epochs_log.results is not None
    logged = {s.reducer: s.metrics for s in epochs_log.results.scores}
    items = itemscore.read_items(epochs_log.location, format="inspect", rules="harness")
    result = itemscore.score(items, ["exact_match"], suite_id="e", reduce=list(REDUCERS))
    for name, measurement in _by_reducer(result).items():
        metrics = logged[REDUCERS[name]]
        assert measurement.n == 6
        assert measurement.value == pytest.approx(metrics["accuracy"].value, abs=1e-12), name
        assert measurement.extra["se"] == pytest.approx(metrics["stderr"].value, abs=1e-12), name
    # The premise: a reducer whose question values are 0 or 1 is a ratio, whose binomial
    # standard error (over n) is not inspect's (over n - 1).
    p = logged["at_least_2"]["accuracy"].value
    assert math.sqrt(p * (1 - p) / 6) != pytest.approx(logged["at_least_2"]["stderr"].value)


def test_under_itemscores_rules_a_ratio_keeps_its_binomial_standard_error(
    epochs_log: EvalLog,
) -> None:
    """Read without rules: the same verdicts; a ratio's se is sqrt(p(1-p)/n), a mean's inspect's."""
    assert epochs_log.results is not None
    logged = {s.reducer: s.metrics for s in epochs_log.results.scores}
    items = itemscore.read_items(epochs_log.location, format="inspect")
    result = itemscore.score(items, ["exact_match"], suite_id="e", reduce=list(REDUCERS))
    for name, measurement in _by_reducer(result).items():
        metrics = logged[REDUCERS[name]]
        assert measurement.value == pytest.approx(metrics["accuracy"].value, abs=1e-12), name
        se = measurement.extra["se"]
        if measurement.aggregation == "ratio":
            p = measurement.value
            assert p is not None
            assert se == pytest.approx(math.sqrt(p * (1 - p) / 6), abs=1e-12), name
        else:
            assert se == pytest.approx(metrics["stderr"].value, abs=1e-12), name
    assert {m.aggregation for m in _by_reducer(result).values()} == {"ratio", "mean"}
