"""The bundled demo suites: found through entry points, small data, sensible results."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest

import itemscore
from itemscore import Suite, get_suite
from itemscore._demo import SENTIMENT_LABELS, QADemo, SentimentDemo, demo_suites


def raw_rows(suite: Suite) -> list[dict[str, Any]]:
    assert suite.bundled_data is not None
    package, name = suite.bundled_data
    text = resources.files(package).joinpath(name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_demo_suites_come_from_entry_points() -> None:
    """`itemscore demo` finds both suites through the itemscore.suites group."""
    suites = demo_suites()
    assert [type(s) for s in suites] == [QADemo, SentimentDemo]
    assert isinstance(get_suite("demo-qa"), QADemo)
    assert isinstance(get_suite("demo_sentiment"), SentimentDemo)


@pytest.mark.parametrize(
    ("suite", "rows"), [(QADemo(), 40), (SentimentDemo(), 60)], ids=["qa", "sentiment"]
)
def test_demo_data_is_small_and_has_two_models(suite: Suite, rows: int) -> None:
    """Each data set has two models answering the same questions."""
    data = raw_rows(suite)
    assert len(data) == rows
    models = {row["model"] for row in data}
    assert len(models) == 2
    for model in models:
        assert sorted(r["id"] for r in data if r["model"] == model) == sorted(
            {r["id"] for r in data}
        )


def test_qa_data_covers_the_special_cases() -> None:
    """Several valid answers, failed requests and rows without answer key are all present."""
    data = raw_rows(QADemo())
    assert any(isinstance(r["expected"], list) and len(r["expected"]) > 1 for r in data)
    assert sum(r["output"] is None for r in data) >= 3
    assert sum(r["expected"] is None for r in data) >= 2


def test_sentiment_data_has_groups_and_free_form_answers() -> None:
    """Gold labels are the three classes; outputs are sentences; every row has a group."""
    data = raw_rows(SentimentDemo())
    assert {r["expected"] for r in data} == set(SENTIMENT_LABELS)
    assert len({r["group"] for r in data}) == 3
    assert any(r["output"] and r["output"].startswith("The sentiment is") for r in data)


def test_demo_repeats_question_ids_once_per_model() -> None:
    """Both models answer the same questions: each id appears once per model, and runs."""
    suite = QADemo()
    items = list(suite.items(suite.load_data()))
    assert items[0].id == "q01"
    assert len({(item.model, item.id) for item in items}) == len(items)
    assert len({item.id for item in items}) == len(items) // 2


@pytest.mark.parametrize("suite", [QADemo(), SentimentDemo()], ids=["qa", "sentiment"])
def test_demo_runs_with_its_bound_metrics(suite: Suite) -> None:
    """Each demo run gives every bound metric for both models; answered_rate counts outputs."""
    result = itemscore.run(suite)
    data = raw_rows(suite)
    assert len(result.by_model) == 2
    for model, measurements in result.by_model.items():
        assert [m.metric for m in measurements.values()] == result.labels
        rows = [r for r in data if r["model"] == model]
        answered = sum(r["output"] is not None for r in rows)
        assert measurements[f"{suite.suite_id}.answered_rate"].value == answered / len(rows)
        for m in measurements.values():
            assert m.error is None
            assert m.value is not None


def test_sentiment_labels_are_extracted_from_sentences() -> None:
    """'The sentiment is positive.' counts as positive: model-a scores high on accuracy."""
    result = itemscore.run(SentimentDemo())
    accuracy = result.by_model["model-a"]["demo_sentiment.accuracy"]
    data = [r for r in raw_rows(SentimentDemo()) if r["model"] == "model-a"]
    exact = sum(
        r["output"] is not None and r["output"].strip(" .!").lower() == r["expected"] for r in data
    )
    # Plain comparison misses the sentences; extraction must find more of them right.
    assert accuracy.value is not None
    assert accuracy.value * len(data) > exact
    assert set(accuracy.groups) == {"books", "electronics", "kitchen"}
