"""Tests for the exact_match metric, driven through itemscore.score."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from itemscore import ItemResult, ItemScore, MetricContext, OptionError, Status, score
from itemscore.metrics_builtin.exact_match import ExactMatch
from itemscore.text import Normalizer


def score_one(output: str | None, expected: Any, **options: Any) -> ItemScore:
    result = score(
        [ItemResult(id="1", output=output, expected=expected)],
        [{"name": "exact_match", **options}],
    )
    return result.items[0].scores["exact_match"]


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        pytest.param("\uff21\uff22\uff23", "ABC", id="full-width-equals-ascii"),
        pytest.param(' "Positive." ', "positive", id="quotes-and-period-trimmed"),
        pytest.param("«Paris»", "paris", id="guillemets-trimmed"),
        pytest.param("New   York\n", "new york", id="whitespace-collapsed"),
        pytest.param("STRASSE", "straße", id="case-folded"),
    ],
)
def test_equal_after_default_normalisation(output: str, expected: str) -> None:
    """Outputs that differ only in width, case, outer punctuation or spacing match."""
    verdict = score_one(output, expected)
    assert verdict.status is Status.OK
    assert verdict.value == 1.0
    assert verdict.extra["matched"] == expected


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        pytest.param("-5", "5", id="minus-sign"),
        pytest.param("+5", "5", id="plus-sign"),
        pytest.param("50%", "50", id="percent"),
        pytest.param("$5", "5", id="dollar"),
        pytest.param("#1", "1", id="hash"),
        pytest.param("@home", "home", id="at"),
        pytest.param("U.S.A.", "USA", id="inner-punctuation-kept"),
    ],
)
def test_kept_characters_make_answers_differ(output: str, expected: str) -> None:
    """`+ - % $ # @ &` are never punctuation, and inner punctuation stays by default."""
    verdict = score_one(output, expected)
    assert verdict.status is Status.FAIL
    assert verdict.value == 0.0
    assert verdict.extra["matched"] is None


@pytest.mark.parametrize(
    ("output", "expected", "options"),
    [
        pytest.param("\uff21\uff22\uff23", "ABC", {"nfkc": False}, id="nfkc-off"),
        pytest.param("Paris", "paris", {"ignore_case": False}, id="case-sensitive"),
        pytest.param('"positive."', "positive", {"trim_punctuation": False}, id="no-trim"),
    ],
)
def test_switching_a_normalisation_off_makes_answers_differ(
    output: str, expected: str, options: dict[str, Any]
) -> None:
    """Each normalisation option matters: with it off the same pair no longer matches."""
    assert score_one(output, expected).status is Status.OK
    assert score_one(output, expected, **options).status is Status.FAIL


def test_ignore_punctuation_removes_inner_punctuation() -> None:
    """ignore_punctuation deletes punctuation inside the text too, as SQuAD does."""
    verdict = score_one("U.S.A.", "USA", ignore_punctuation=True)
    assert verdict.status is Status.OK
    assert verdict.extra["normalized"] == "usa"


@pytest.mark.parametrize(
    ("output", "expected", "options", "status"),
    [
        pytest.param("The Eiffel Tower", "Eiffel Tower", {}, Status.FAIL, id="kept-by-default"),
        pytest.param(
            "The Eiffel Tower", "eiffel tower", {"remove_articles": True}, Status.OK, id="removed"
        ),
        pytest.param("a cat, the", "cat", {"remove_articles": True}, Status.OK, id="trimmed-after"),
        pytest.param("Theater", "ater", {"remove_articles": True}, Status.FAIL, id="whole-words"),
        pytest.param(
            "The cat",
            "cat",
            {"remove_articles": True, "ignore_case": False},
            Status.FAIL,
            id="case",
        ),
    ],
)
def test_remove_articles(
    output: str, expected: str, options: dict[str, Any], status: Status
) -> None:
    """remove_articles drops whole-word a/an/the (lowercase only when case matters)."""
    verdict = score_one(output, expected, **options)
    assert verdict.status is status


def test_extra_records_normalised_answer_and_match() -> None:
    """extra holds the normalised output and the valid answer it matched, as given."""
    verdict = score_one("  The EIFFEL tower. ", ("Louvre", "the Eiffel Tower"))
    assert verdict.status is Status.OK
    assert verdict.extra == {"normalized": "the eiffel tower", "matched": "the Eiffel Tower"}


def test_any_valid_answer_matches() -> None:
    """With several valid answers, matching any one of them is correct."""
    expected = ("1848", "eighteen forty-eight", "the year 1848")
    for answer in expected:
        assert score_one(answer.upper(), expected).extra["matched"] == answer
    assert score_one("1849", expected).status is Status.FAIL


def test_rows_without_answer_key_are_skipped() -> None:
    """Rows with an empty answer key are skip and left out of n."""
    items = [
        ItemResult(id="a", output="x", expected=None),
        ItemResult(id="b", output="x", expected=""),
        ItemResult(id="c", output="x", expected=()),
        ItemResult(id="d", output="x", expected="x"),
    ]
    result = score(items, ["exact_match"])
    statuses = [item.scores["exact_match"].status for item in result.items]
    assert statuses == [Status.SKIP, Status.SKIP, Status.SKIP, Status.OK]
    assert "answer key" in (result.items[0].scores["exact_match"].reason or "")
    measurement = result.measurements["default.exact_match"]
    assert measurement.n == 1
    assert measurement.value == 1.0


def _mixed_items() -> list[ItemResult]:
    return [
        ItemResult(id="1", output="Paris", expected="paris"),
        ItemResult(id="2", output="Rome", expected="rome"),
        ItemResult(id="3", output="Oslo", expected="bergen"),
        ItemResult(id="4", output=None, expected="madrid"),
    ]


def test_failed_requests_count_as_wrong_by_default() -> None:
    """A failed request is fail with value 0.0 and counts in n: 2 right of 4."""
    result = score(_mixed_items(), ["exact_match"])
    failed = result.items[3].scores["exact_match"]
    assert failed.status is Status.FAIL
    assert failed.value == 0.0
    measurement = result.measurements["default.exact_match"]
    assert (measurement.n, measurement.value) == (4, 2 / 4)


def test_count_failed_false_leaves_failed_requests_out() -> None:
    """With count_failed=False a failed request is skip with a reason: 2 right of 3."""
    result = score(_mixed_items(), [{"name": "exact_match", "count_failed": False}])
    failed = result.items[3].scores["exact_match"]
    assert failed.status is Status.SKIP
    assert failed.value is None
    assert "count_failed" in (failed.reason or "")
    measurement = result.measurements["default.exact_match"]
    assert (measurement.n, measurement.value) == (3, 2 / 3)
    assert measurement.counts[Status.SKIP] == 1


def test_headline_is_wilson_ratio() -> None:
    """The headline is the share of ok among scored items with a Wilson interval."""
    result = score(_mixed_items(), ["exact_match"])
    measurement = result.measurements["default.exact_match"]
    assert measurement.ci_method == "wilson"
    assert measurement.ci_low is not None
    assert measurement.ci_high is not None
    assert measurement.ci_low < 0.5 < measurement.ci_high


def test_unknown_option_lists_the_valid_ones() -> None:
    """An unknown option is an OptionError naming it, a suggestion and every valid option."""
    with pytest.raises(OptionError) as info:
        score(_mixed_items(), [{"name": "exact_match", "ignore_cas": False}])
    message = str(info.value)
    assert "ignore_cas" in message
    assert "Did you mean 'ignore_case'" in message
    for option in ExactMatch.options():
        assert f"`{option}`" in message


def test_wrong_option_type_is_an_option_error() -> None:
    """A non-boolean value for a boolean option is refused before scoring."""
    with pytest.raises(OptionError, match="ignore_case"):
        score(_mixed_items(), [{"name": "exact_match", "ignore_case": "yes"}])


def test_options_and_defaults_follow_the_reference() -> None:
    """The options, in order, with the documented defaults."""
    defaults = {name: info.default for name, info in ExactMatch.options().items()}
    assert list(defaults.items()) == [
        ("ignore_case", True),
        ("trim_punctuation", True),
        ("ignore_punctuation", False),
        ("remove_articles", False),
        ("nfkc", True),
        ("count_failed", True),
        ("normalization", "itemscore"),
        ("extract", None),
        ("extract_pick", None),
        ("rules", "auto"),
    ]
    assert all(info.description for info in ExactMatch.options().values())


def test_batch_and_single_scoring_agree() -> None:
    """score_items gives exactly the verdicts of score_item, item for item."""
    rng = random.Random(7)
    words = [
        "Paris",
        "paris.",
        "ROME",
        "rome",
        "-5",
        "5",
        "",
        "  ",
        "\uff2f\uff53\uff4c\uff4f",
        "oslo",
    ]
    items = [
        ItemResult(
            id=str(i),
            output=None if rng.random() < 0.1 else rng.choice(words),
            expected=tuple(rng.sample([*words[:6], "oslo"], rng.randint(1, 3))),
        )
        for i in range(3000)
    ]
    for options in (
        {},
        {"count_failed": False},
        {"ignore_punctuation": True},
        {"remove_articles": True},
        {"normalization": "squad"},
    ):
        metric = ExactMatch(**options)
        metric.bind("exact_match")
        ctx = MetricContext()
        assert metric.score_items(items, ctx) == [metric.score_item(i, ctx) for i in items]


def test_verdict_is_normalised_equality_on_random_pairs() -> None:
    """ok exactly when the Normalizer makes output and one valid answer equal."""
    rng = random.Random(3)
    alphabet = "aAbB .,!-'\"\uff21\uff22"
    items = []
    for i in range(2000):
        refs = tuple(
            "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 4)))
            for _ in range(rng.randint(1, 2))
        )
        output = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 4)))
        items.append(ItemResult(id=str(i), output=output, expected=refs))
    result = score(items, ["exact_match"])
    normalize = Normalizer()
    for item in result.items:
        assert item.output is not None
        assert item.expected is not None
        want = normalize(item.output) in {normalize(r) for r in item.expected}
        assert (item.scores["exact_match"].status is Status.OK) == want


@settings(max_examples=150, deadline=None)
@given(st.text(min_size=1))
def test_any_text_matches_itself(text: str) -> None:
    """Any non-empty text is an exact match of itself (empty text is no answer key)."""
    assert score_one(text, text).status is Status.OK


@settings(max_examples=150, deadline=None)
@given(st.text(min_size=1))
def test_surrounding_quotes_and_punctuation_never_matter(text: str) -> None:
    """Wrapping an answer in spaces, quotes and a period keeps it an exact match."""
    assert score_one(f' "{text}." ', text).status is Status.OK


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.none(), st.text()), st.lists(st.text(), min_size=1, max_size=3))
def test_arbitrary_unicode_never_errors(output: str | None, expected: list[str]) -> None:
    """Arbitrary Unicode outputs and answers give ok, fail or skip, never error."""
    verdict = score_one(output, expected)
    assert verdict.status is not Status.ERROR
