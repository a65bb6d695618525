"""itemscore_scorer: any itemscore metric as an inspect_ai scorer, run in a real inspect task.

Each test runs ``inspect_ai.eval`` offline on mockllm (scripted outputs; its token count is a
word count, since mockllm's own downloads a tiktoken encoding), then checks the log inspect
wrote against itemscore scoring the same items itself.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest

import itemscore
from itemscore import ConfigError, ItemResult

inspect_ai = pytest.importorskip("inspect_ai")

from inspect_ai import Task, eval  # noqa: E402 - after the skip
from inspect_ai.dataset import MemoryDataset, Sample  # noqa: E402
from inspect_ai.model import ModelOutput, get_model, modelapi  # noqa: E402
from inspect_ai.model._providers.mockllm import MockLLM  # noqa: E402
from inspect_ai.solver import generate  # noqa: E402

from itemscore.integrations.inspect import itemscore_scorer  # noqa: E402

# inspect_ai's own dependencies warn about their own use of each other; not ours to fix.
pytestmark = [
    pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
]

QUESTIONS = [
    ("q1", "What is the capital of France?", ["Paris"], "The Paris"),
    ("q2", "How many legs does a spider have?", ["8", "eight"], "eight legs"),
    ("q3", "Who wrote Hamlet?", ["Shakespeare"], "Marlowe"),
    ("q4", "Name any colour.", [], "blue"),  # no answer key: itemscore skips it
]


@modelapi(name="wordcount")
class WordCount(MockLLM):  # type: ignore[misc]
    async def count_text_tokens(self, text: str) -> int:
        return len(text.split())


def _outputs(answers: dict[str, list[str]]) -> Any:
    calls: dict[str, int] = {}

    def output(messages: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
        prompt = messages[-1].text
        for ident, question, _, _ in QUESTIONS:
            if question in prompt:
                calls[ident] = calls.get(ident, 0) + 1
                texts = answers[ident]
                return ModelOutput.from_content(
                    model="mockllm", content=texts[(calls[ident] - 1) % len(texts)]
                )
        raise AssertionError(prompt)

    return output


def _run(tmp_path: Path, scorer: Any, epochs: int = 1, answers: Any = None) -> Any:
    answers = answers or {i: [a] for i, _, _, a in QUESTIONS}
    task = Task(
        name="capitals",
        dataset=MemoryDataset(
            [
                Sample(id=i, input=q, target=t, metadata={"n": n})
                for n, (i, q, t, _) in enumerate(QUESTIONS)
            ]
        ),
        solver=generate(),
        scorer=scorer,
        epochs=epochs,
    )
    model = get_model("wordcount/model", custom_outputs=_outputs(answers), memoize=False)
    (log,) = eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")
    gc.collect()  # inspect leaves streams for the collector: let their warnings fall here
    assert log.status == "success", log.error
    return log


def _items(answers: dict[str, str] | None = None) -> list[ItemResult]:
    return [
        ItemResult(
            id=i,
            output=(answers or {})[i] if answers else a,
            expected=tuple(t) or None,
            input=q,
            model="wordcount/model",
        )
        for i, q, t, a in QUESTIONS
    ]


def test_the_log_carries_itemscores_score_and_reason_per_sample(tmp_path: Path) -> None:
    """Each sample's score is itemscore's: value, state, reason, extra, as score() gives."""
    log = _run(tmp_path, itemscore_scorer("token_f1", remove_articles=True))
    own = itemscore.score(_items(), [{"name": "token_f1", "remove_articles": True}])
    expected = {i.id: i.scores["token_f1"] for i in own.items}
    for sample in log.samples:
        got = sample.scores["token_f1"]
        mine = expected[sample.id]
        assert got.metadata["itemscore_status"] == mine.status
        assert got.metadata["itemscore_value"] == mine.value
        assert got.metadata["itemscore_reason"] == mine.reason
        assert got.metadata["itemscore_extra"] == dict(mine.extra)
        assert got.explanation == mine.reason
        assert got.answer == sample.output.completion
    skipped = next(s for s in log.samples if s.id == "q4").scores["token_f1"]
    assert skipped.value == "N"  # inspect's NOANSWER: no itemscore metric counts it
    assert skipped.metadata["itemscore_status"] == "skip"
    assert skipped.explanation


def test_the_metrics_are_itemscores_aggregate(tmp_path: Path) -> None:
    """value, ci_low, ci_high equal itemscore's measurement of the same items."""
    log = _run(tmp_path, itemscore_scorer("token_f1", remove_articles=True))
    (scores,) = log.results.scores
    own = itemscore.score(_items(), [{"name": "token_f1", "remove_articles": True}])
    measurement = own.measurements["default.token_f1"]
    assert scores.metrics["value"].value == pytest.approx(measurement.value, abs=1e-12)
    assert scores.metrics["ci_low"].value == pytest.approx(measurement.ci_low, abs=1e-12)
    assert scores.metrics["ci_high"].value == pytest.approx(measurement.ci_high, abs=1e-12)
    assert measurement.n == 3  # q4 skipped: left out of every denominator


def test_a_ratio_metric_gets_its_wilson_interval(tmp_path: Path) -> None:
    """exact_match through inspect: the share of ok among scored samples, Wilson interval."""
    answers = {"q1": ["Paris"], "q2": ["8"], "q3": ["Marlowe"], "q4": ["blue"]}
    log = _run(tmp_path, itemscore_scorer("exact_match"), answers=answers)
    (scores,) = log.results.scores
    own = itemscore.score(_items({k: v[0] for k, v in answers.items()}), ["exact_match"])
    measurement = own.measurements["default.exact_match"]
    assert measurement.ci_method == "wilson"
    assert scores.metrics["value"].value == pytest.approx(2 / 3)
    assert scores.metrics["ci_low"].value == pytest.approx(measurement.ci_low)
    assert scores.metrics["ci_high"].value == pytest.approx(measurement.ci_high)


def test_a_plugin_metric_with_options(tmp_path: Path) -> None:
    """A third-party metric (the example plugin) with an option, named by a label."""
    scorer = itemscore_scorer("starts_with", label="starts", match="word")
    log = _run(tmp_path, scorer)
    (scores,) = log.results.scores
    assert scores.name == "starts"
    by_id = {s.id: s.scores["starts"].metadata["itemscore_status"] for s in log.samples}
    assert by_id == {"q1": "fail", "q2": "ok", "q3": "fail", "q4": "skip"}
    assert log.eval.scorers[0].options["options"] == {"match": "word"}


def test_epochs_are_averaged_per_sample_first(tmp_path: Path) -> None:
    """Two epochs: each sample's attempts are averaged, then the samples."""
    answers = {"q1": ["Paris", "Lyon"], "q2": ["eight"], "q3": ["Marlowe"], "q4": ["x"]}
    log = _run(tmp_path, itemscore_scorer("exact_match"), epochs=2, answers=answers)
    (scores,) = log.results.scores
    assert scores.metrics["value"].value == pytest.approx((0.5 + 1.0 + 0.0) / 3)


def test_bad_metric_or_option_is_refused_before_any_sample() -> None:
    """The metric and its options are checked when the scorer is made."""
    with pytest.raises(ConfigError, match=r"token_f"):
        itemscore_scorer("token_f")
    with pytest.raises(ConfigError, match=r"remove_article"):
        itemscore_scorer("token_f1", remove_article=True)


def test_itemscore_reads_the_log_it_scored(tmp_path: Path) -> None:
    """The log's itemscore scores read back with the inspect reader, scorer by label."""
    log = _run(tmp_path, itemscore_scorer("token_f1", remove_articles=True))
    from itemscore.inputs.inspect_log import read_inspect

    records = list(read_inspect(log.location, scorer="token_f1"))
    assert [r["score"] for r in records] == [
        s.scores["token_f1"].value for s in sorted(log.samples, key=lambda s: str(s.id))
    ]
