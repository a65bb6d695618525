"""Tests for the accuracy metric: label extraction, normalisation, failed requests, options."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from itemscore import ItemResult, ItemScore, MetricContext, OptionError, Status, score
from itemscore.metrics_builtin.accuracy import Accuracy

SENTIMENT = ["positive", "negative", "neutral"]


def score_one(output: str | None, expected: Any, **options: Any) -> ItemScore:
    result = score(
        [ItemResult(id="1", output=output, expected=expected)],
        [{"name": "accuracy", **options}],
    )
    return result.items[0].scores["accuracy"]


@pytest.mark.parametrize(
    ("output", "label"),
    [
        pytest.param("positive", "positive", id="bare-label"),
        pytest.param(' "Positive." ', "positive", id="label-after-normalisation"),
        pytest.param("The sentiment is positive.", "positive", id="mentioned-once"),
        pytest.param("NEGATIVE, clearly", "negative", id="case-and-comma"),
        pytest.param("I'd say neutral", "neutral", id="in-a-sentence"),
    ],
)
def test_free_form_answer_counts_as_the_label_it_mentions(output: str, label: str) -> None:
    """With labels, an answer equal to or mentioning exactly one label counts as it."""
    verdict = score_one(output, label, labels=SENTIMENT)
    assert verdict.status is Status.OK
    assert verdict.extra["label"] == label
    assert verdict.extra["matched"] == label


def test_longest_label_wins() -> None:
    """'very positive' beats 'positive' when both are labels."""
    labels = ["positive", "very positive", "negative"]
    verdict = score_one("It is very positive!", "very positive", labels=labels)
    assert verdict.status is Status.OK
    assert verdict.extra["label"] == "very positive"
    assert score_one("It is very positive!", "positive", labels=labels).status is Status.FAIL


@pytest.mark.parametrize(
    "output",
    [
        pytest.param("positive or negative", id="two-labels"),
        pytest.param("nonpositive", id="not-a-whole-word"),
        pytest.param("I cannot tell", id="no-label"),
    ],
)
def test_answer_without_a_single_label_matches_no_label(output: str) -> None:
    """Ambiguous answers, part-words and answers naming no label are wrong."""
    verdict = score_one(output, "positive", labels=SENTIMENT)
    assert verdict.status is Status.FAIL
    assert verdict.extra["label"] is None
    assert verdict.extra["matched"] is None


def test_labels_in_unspaced_scripts_match_anywhere() -> None:
    """Japanese and Thai labels match inside the answer, with no spaces around them."""
    assert score_one("これは肯定です", "肯定", labels=["肯定", "否定"]).extra["label"] == "肯定"
    assert score_one("คำตอบคือบวกค่ะ", "บวก", labels=["บวก", "ลบ"]).status is Status.OK


def test_extracted_label_is_compared_with_normalised_answers() -> None:
    """The label found is compared with the answer key after normalisation."""
    verdict = score_one("The answer is Positive.", " POSITIVE ", labels=SENTIMENT)
    assert verdict.status is Status.OK
    assert verdict.extra["matched"] == " POSITIVE "


def test_without_labels_it_is_exact_match() -> None:
    """Without labels, accuracy gives exact_match's verdicts on the same items."""
    rng = random.Random(11)
    words = [
        "positive",
        "Positive.",
        "negative",
        "the answer is positive",
        "-1",
        "1",
        "\uff30\uff4f\uff53",
    ]
    items = [
        ItemResult(
            id=str(i),
            output=None if rng.random() < 0.1 else rng.choice(words),
            expected=tuple(rng.sample(words, rng.randint(1, 2))),
        )
        for i in range(1000)
    ]
    result = score(items, ["accuracy", "exact_match"])
    for item in result.items:
        ours, theirs = item.scores["accuracy"], item.scores["exact_match"]
        assert (ours.status, ours.value, ours.extra) == (theirs.status, theirs.value, theirs.extra)
    a, e = result.measurements["default.accuracy"], result.measurements["default.exact_match"]
    assert (a.value, a.n) == (e.value, e.n)


def test_several_valid_answers_any_matches() -> None:
    """An answer matching any of several valid answers is correct."""
    verdict = score_one("It is neutral.", ("positive", "neutral"), labels=SENTIMENT)
    assert verdict.status is Status.OK
    assert verdict.extra["matched"] == "neutral"


def test_failed_requests_and_count_failed() -> None:
    """A failed request is fail (in n) by default and skip (out of n) with count_failed=False."""
    items = [
        ItemResult(id="1", output="positive", expected="positive"),
        ItemResult(id="2", output="negative", expected="positive"),
        ItemResult(id="3", output=None, expected="neutral"),
    ]
    counted = score(items, [{"name": "accuracy", "labels": SENTIMENT}])
    failed = counted.items[2].scores["accuracy"]
    assert (failed.status, failed.value) == (Status.FAIL, 0.0)
    assert failed.extra == {"normalized": None, "label": None, "matched": None}
    assert counted.measurements["default.accuracy"].value == 1 / 3
    left_out = score(items, [{"name": "accuracy", "labels": SENTIMENT, "count_failed": False}])
    assert left_out.items[2].scores["accuracy"].status is Status.SKIP
    measurement = left_out.measurements["default.accuracy"]
    assert (measurement.n, measurement.value) == (2, 1 / 2)


def test_rows_without_answer_key_are_skipped() -> None:
    """Rows without an answer key are skipped, also with labels."""
    items = [
        ItemResult(id="1", output="positive", expected=None),
        ItemResult(id="2", output="positive", expected="positive"),
    ]
    result = score(items, [{"name": "accuracy", "labels": SENTIMENT}])
    assert result.items[0].scores["accuracy"].status is Status.SKIP
    assert result.measurements["default.accuracy"].n == 1


def test_empty_labels_is_refused_before_scoring() -> None:
    """labels=[] is an OptionError raised when the run is configured, before any item."""
    calls: list[tuple[int, int]] = []
    with pytest.raises(OptionError, match="labels") as info:
        score(
            [ItemResult(id="1", output="x", expected="x")],
            [{"name": "accuracy", "labels": []}],
            progress=lambda done, total: calls.append((done, total)),
        )
    assert "at least one" in str(info.value)
    assert calls == []


def test_empty_labels_raises_value_error_when_built_directly() -> None:
    """Building Accuracy(labels=[]) directly raises a ValueError."""
    with pytest.raises(ValueError, match="empty"):
        Accuracy(labels=[])


def test_labels_must_be_a_list() -> None:
    """A single string for labels is refused with an OptionError."""
    with pytest.raises(OptionError, match="labels"):
        score_one("positive", "positive", labels="positive")


def test_unknown_option_lists_the_valid_ones() -> None:
    """An unknown option names every valid option of accuracy."""
    with pytest.raises(OptionError) as info:
        score_one("positive", "positive", lables=["positive"])
    message = str(info.value)
    assert "Did you mean 'labels'" in message
    for option in Accuracy.options():
        assert f"`{option}`" in message


def test_options_and_defaults_follow_the_reference() -> None:
    """labels first, then the five normalisation options, with the documented defaults."""
    defaults = {name: info.default for name, info in Accuracy.options().items()}
    assert defaults == {
        "labels": None,
        "ignore_case": True,
        "trim_punctuation": True,
        "ignore_punctuation": False,
        "nfkc": True,
        "count_failed": True,
        "extract": None,
        "extract_pick": None,
        "rules": "auto",
    }
    assert next(iter(defaults)) == "labels"
    assert Accuracy.options()["labels"].type_name == "list of strings or none"


def test_batch_and_single_scoring_agree() -> None:
    """score_items gives exactly the verdicts of score_item, with and without labels."""
    rng = random.Random(5)
    outputs = ["positive", "It is negative.", "neutral!", "positive or negative", "meh", None]
    items = [
        ItemResult(
            id=str(i),
            output=rng.choice(outputs),
            expected=tuple(rng.sample(SENTIMENT, rng.randint(1, 2))),
        )
        for i in range(3000)
    ]
    for options in ({}, {"labels": SENTIMENT}, {"labels": SENTIMENT, "count_failed": False}):
        metric = Accuracy(**options)
        metric.bind("accuracy")
        ctx = MetricContext()
        assert metric.score_items(items, ctx) == [metric.score_item(i, ctx) for i in items]


@settings(max_examples=150, deadline=None)
@given(
    st.one_of(st.none(), st.text()),
    st.lists(st.text(), min_size=1, max_size=3),
    st.lists(st.text(min_size=1), min_size=1, max_size=4),
)
def test_arbitrary_unicode_never_errors(
    output: str | None, expected: list[str], labels: list[str]
) -> None:
    """Arbitrary Unicode outputs, answers and labels give ok, fail or skip, never error."""
    result = score(
        [ItemResult(id="1", output=output, expected=expected)],
        ["accuracy", {"name": "accuracy", "label": "with_labels", "labels": labels}],
    )
    for verdict in result.items[0].scores.values():
        assert verdict.status is not Status.ERROR


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        pytest.param("positive", "single string", id="single-string"),
        pytest.param(["positive", 1], r"labels\[1\]", id="not-a-string"),
    ],
)
def test_malformed_labels_built_directly_are_type_errors(labels: Any, message: str) -> None:
    """Building Accuracy directly with malformed labels raises a TypeError naming the fault."""
    with pytest.raises(TypeError, match=message):
        Accuracy(labels=labels)


def test_count_failed_must_be_a_boolean() -> None:
    """count_failed is checked when the metric is built directly."""
    with pytest.raises(TypeError, match="count_failed"):
        Accuracy(count_failed="no")  # type: ignore[arg-type]


def test_items_without_answer_key_given_directly_are_skipped() -> None:
    """Called without the runner, both scoring paths skip items that have no answer key."""
    metric = Accuracy()
    metric.bind("accuracy")
    ctx = MetricContext()
    items = [ItemResult(id="1", output="x", expected=None), ItemResult(id="2", output="x")]
    batch = metric.score_items(items, ctx)
    assert batch == [metric.score_item(item, ctx) for item in items]
    assert all(s.status is Status.SKIP and "answer key" in (s.reason or "") for s in batch)
