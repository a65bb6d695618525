"""Tests for the token_f1 metric: SQuAD parity, multisets, unspaced scripts, states, options."""

from __future__ import annotations

import random
import re
import statistics
import string
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from itemscore import ItemResult, ItemScore, MetricContext, OptionError, Status, score
from itemscore.metrics_builtin.token_f1 import TokenF1, token_scores

# itemscore's punctuation in ASCII: SQuAD's string.punctuation except "# % & - @" (kept) and
# "+ $" (symbols). The random answers below use only punctuation both definitions share.
SHARED_PUNCTUATION = ".,!?;:'\"()[]{}/*_"


def squad_normalize(text: str) -> str:
    """SQuAD v1.1's normalize_answer: lower, remove punctuation and articles, fix spaces."""
    text = text.lower()
    exclude = set(string.punctuation) - set("#%&-@+$")
    text = "".join(ch for ch in text if ch not in exclude)
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def squad_f1(prediction: str, truth: str) -> float:
    """SQuAD v1.1's f1_score, with its both-empty case spelled out."""
    pred, gold = squad_normalize(prediction).split(), squad_normalize(truth).split()
    if not pred or not gold:
        return float(pred == gold)
    common = Counter(pred) & Counter(gold)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(gold)
    return (2 * precision * recall) / (precision + recall)


def score_one(output: str | None, expected: Any, **options: Any) -> ItemScore:
    result = score(
        [ItemResult(id="1", output=output, expected=expected)],
        [{"name": "token_f1", **options}],
    )
    return result.items[0].scores["token_f1"]


def _random_answer(rng: random.Random) -> str:
    words = ["the", "a", "an", "The", "eiffel", "Tower", "paris", "in", "of", "1889", "it's"]
    words += ["Gustave", "iron", "lattice", "Champ", "de", "Mars", "tower", "ANd"]
    tokens = []
    for _ in range(rng.randint(0, 8)):
        word = rng.choice(words)
        if rng.random() < 0.25:
            word = word + rng.choice(SHARED_PUNCTUATION)
        if rng.random() < 0.1:
            word = rng.choice(SHARED_PUNCTUATION) + word
        tokens.append(word)
    return rng.choice([" ", "  ", "\t"]).join(tokens)


def test_equals_squad_f1_on_random_english_answers() -> None:
    """With remove_articles, every item's F1 is SQuAD's max-over-answers F1 to 1e-12."""
    rng = random.Random(1234)
    items = []
    for i in range(3000):
        refs = tuple(_random_answer(rng) or "x" for _ in range(rng.randint(1, 3)))
        output = _random_answer(rng) if rng.random() > 0.05 else None
        items.append(ItemResult(id=str(i), output=output, expected=refs))
    result = score(items, [{"name": "token_f1", "remove_articles": True}])
    values = []
    for item in result.items:
        assert item.expected is not None
        verdict = item.scores["token_f1"]
        want = 0.0 if item.output is None else max(squad_f1(item.output, r) for r in item.expected)
        assert verdict.value == pytest.approx(want, abs=1e-12)
        values.append(want)
    measurement = result.measurements["default.token_f1"]
    assert measurement.value == pytest.approx(statistics.fmean(values), abs=1e-12)
    assert measurement.n == len(items)
    assert measurement.ci_method == "normal"


def test_tokens_are_a_multiset() -> None:
    """A repeated token counts as often as it occurs in both: 'the the cat' vs 'the cat' is 0.8."""
    verdict = score_one("the the cat", "the cat")
    # shared 2 of 3 predicted and 2 of 2 gold: precision 2/3, recall 1, F1 = 0.8
    assert verdict.value == pytest.approx(0.8, abs=1e-15)
    assert verdict.extra["precision"] == pytest.approx(2 / 3)
    assert verdict.extra["recall"] == 1.0


@pytest.mark.parametrize(
    ("output", "expected", "value"),
    [
        # both normalise to the five characters 今 日 は 晴 れ
        pytest.param("今日は 晴れ!", "今日は晴れ", 1.0, id="japanese-characters-are-tokens"),
        # 今 日 は shared: precision 3/4, recall 3/5, F1 = 2*(3/4)*(3/5)/(3/4+3/5) = 2/3
        pytest.param("今日は雨", "今日は晴れ", 2 / 3, id="japanese-partial"),
        # 北 京 shared of 北 京 大 学 and 北 京: precision 1/2, recall 1, F1 = 2/3
        pytest.param("北京大学", "北京", 2 / 3, id="chinese-partial"),
        # ส ว ั ส ด ี: the 6 code points of "สวัสดี" against 4 of "สวัส": 4 shared, F1 = 0.8
        pytest.param("สวัสดี", "สวัส", 0.8, id="thai-characters"),
        # iPhone, 15 and は are three tokens; only "iphone" and "15" are shared: F1 = 0.8
        pytest.param("iPhone 15 は", "iphone 15", 0.8, id="mixed-script"),
    ],
)
def test_unspaced_scripts_count_characters(output: str, expected: str, value: float) -> None:
    """Every Chinese, Japanese, Thai or Burmese character is a token of its own."""
    assert score_one(output, expected).value == pytest.approx(value, abs=1e-12)


@pytest.mark.parametrize(
    ("output", "expected", "value"),
    [
        pytest.param("!!!", "...", 1.0, id="both-empty"),
        pytest.param("", "Paris", 0.0, id="empty-output"),
        pytest.param("Paris", "«»", 0.0, id="empty-answer"),
        pytest.param("London", "Paris", 0.0, id="nothing-shared"),
    ],
)
def test_empty_and_disjoint_answers(output: str, expected: str, value: float) -> None:
    """Both empty is 1.0, one empty or nothing shared is 0.0, and the status is still ok."""
    verdict = score_one(output, expected)
    assert verdict.value == value
    assert verdict.status is Status.OK


def test_best_matching_answer_is_used_and_recorded() -> None:
    """With several valid answers the highest F1 counts and its answer is recorded."""
    verdict = score_one("Eiffel tower in Paris", ("Louvre", "the Eiffel Tower", "Paris"))
    # against "the eiffel tower": shared eiffel, tower: precision 2/4, recall 2/3, F1 = 4/7
    assert verdict.value == pytest.approx(4 / 7)
    assert verdict.extra["best_reference"] == "the Eiffel Tower"
    assert verdict.extra["precision"] == 0.5
    assert verdict.extra["recall"] == pytest.approx(2 / 3)


def test_ties_keep_the_first_answer() -> None:
    """When two valid answers give the same F1 the first one is recorded."""
    assert score_one("red blue", ("red", "blue")).extra["best_reference"] == "red"


@pytest.mark.parametrize(
    ("options", "value"),
    [
        pytest.param({}, 2 / 3, id="articles-kept-by-default"),
        pytest.param({"remove_articles": True}, 1.0, id="remove-articles"),
    ],
)
def test_remove_articles(options: dict[str, Any], value: float) -> None:
    """remove_articles drops a/an/the as SQuAD does; by default they are tokens."""
    assert score_one("the cat", "cat", **options).value == pytest.approx(value)


def test_punctuation_is_removed_by_default_and_can_be_kept() -> None:
    """ignore_punctuation defaults to true (U.S.A. = USA); off, inner punctuation stays."""
    assert score_one("U.S.A.", "USA").value == 1.0
    assert score_one("U.S.A.", "USA", ignore_punctuation=False).value == 0.0
    assert score_one('"Paris."', "paris", ignore_punctuation=False).value == 1.0


def test_case_and_width_options() -> None:
    """ignore_case and nfkc work as for the other metrics."""
    assert score_one("PARIS", "paris").value == 1.0
    assert score_one("PARIS", "paris", ignore_case=False).value == 0.0
    assert score_one("\uff30\uff21\uff32\uff29\uff33", "paris").value == 1.0
    assert score_one("\uff30\uff21\uff32\uff29\uff33", "paris", nfkc=False).value == 0.0


def test_failed_requests_and_count_failed() -> None:
    """A failed request is fail 0.0 in the mean, or skip with count_failed=False."""
    items = [
        ItemResult(id="1", output="red blue", expected="red"),
        ItemResult(id="2", output="red", expected="red"),
        ItemResult(id="3", output=None, expected="red"),
    ]
    counted = score(items, ["token_f1"])
    failed = counted.items[2].scores["token_f1"]
    assert (failed.status, failed.value) == (Status.FAIL, 0.0)
    assert failed.extra["best_reference"] is None
    # per item: 2/3 ("red blue" vs "red"), 1.0, 0.0
    assert counted.measurements["default.token_f1"].value == pytest.approx((2 / 3 + 1 + 0) / 3)
    left_out = score(items, [{"name": "token_f1", "count_failed": False}])
    assert left_out.items[2].scores["token_f1"].status is Status.SKIP
    measurement = left_out.measurements["default.token_f1"]
    assert measurement.n == 2
    assert measurement.value == pytest.approx((2 / 3 + 1) / 2)


def test_rows_without_answer_key_are_skipped() -> None:
    """Rows without an answer key are skip and out of n."""
    items = [
        ItemResult(id="1", output="red", expected=None),
        ItemResult(id="2", output="red", expected="red"),
    ]
    result = score(items, ["token_f1"])
    assert result.items[0].scores["token_f1"].status is Status.SKIP
    assert result.measurements["default.token_f1"].n == 1


def test_trim_punctuation_is_not_an_option() -> None:
    """Punctuation is always trimmed: trim_punctuation is refused with the valid options."""
    with pytest.raises(OptionError) as info:
        score_one("red", "red", trim_punctuation=False)
    message = str(info.value)
    assert "trim_punctuation" in message
    for option in TokenF1.options():
        assert f"`{option}`" in message


def test_options_and_defaults_follow_the_reference() -> None:
    """The options, in order, with the documented defaults."""
    defaults = {name: info.default for name, info in TokenF1.options().items()}
    assert list(defaults.items()) == [
        ("ignore_case", True),
        ("ignore_punctuation", True),
        ("remove_articles", False),
        ("nfkc", True),
        ("count_failed", True),
        ("normalization", "itemscore"),
        ("extract", None),
        ("extract_pick", None),
    ]
    assert all(info.description for info in TokenF1.options().values())


@pytest.mark.parametrize("length", [1, 5, 40, 200], ids=lambda n: f"{n}-tokens")
def test_token_scores_match_counter_overlap(length: int) -> None:
    """Short (list scan) and long (counts) answers give Counter-intersection precision/recall."""
    rng = random.Random(length)
    vocab = [f"w{i}" for i in range(max(3, length // 3))]
    for _ in range(200):
        pred = [rng.choice(vocab) for _ in range(rng.randint(1, length))]
        gold = [rng.choice(vocab) for _ in range(rng.randint(1, length))]
        same = sum((Counter(pred) & Counter(gold)).values())
        f1, precision, recall = token_scores(pred, gold)
        assert precision == same / len(pred)
        assert recall == same / len(gold)
        want = 0.0 if same == 0 else 2 * same / (len(pred) + len(gold))
        assert f1 == want
        if same:
            assert f1 == pytest.approx(2 * precision * recall / (precision + recall), rel=1e-15)


def test_long_answers_through_the_metric() -> None:
    """Answers long enough for the counted path give SQuAD's F1 too."""
    rng = random.Random(9)
    words = [f"word{i}" for i in range(12)]
    items = [
        ItemResult(
            id=str(i),
            output=" ".join(rng.choice(words) for _ in range(rng.randint(15, 60))),
            expected=tuple(
                " ".join(rng.choice(words) for _ in range(rng.randint(15, 60)))
                for _ in range(rng.randint(1, 2))
            ),
        )
        for i in range(200)
    ]
    result = score(items, ["token_f1"])
    for item in result.items:
        assert item.output is not None
        assert item.expected is not None
        want = max(squad_f1(item.output, r) for r in item.expected)
        assert item.scores["token_f1"].value == pytest.approx(want, abs=1e-12)


def test_batch_and_single_scoring_agree() -> None:
    """score_items gives exactly the verdicts of score_item, item for item."""
    rng = random.Random(2)
    items = [
        ItemResult(
            id=str(i),
            output=None if rng.random() < 0.05 else _random_answer(rng),
            expected=tuple(_random_answer(rng) or "x" for _ in range(rng.randint(1, 3))),
        )
        for i in range(2000)
    ]
    items += [ItemResult(id=f"dup{i}", output="the tower", expected="Tower") for i in range(50)]
    metric = TokenF1()
    metric.bind("token_f1")
    ctx = MetricContext()
    assert metric.score_items(items, ctx) == [metric.score_item(i, ctx) for i in items]


@settings(max_examples=150, deadline=None)
@given(st.text(), st.lists(st.text(min_size=1), min_size=1, max_size=3))
def test_value_lies_in_unit_interval(output: str, expected: list[str]) -> None:
    """F1, precision and recall always lie in [0, 1]."""
    verdict = score_one(output, expected)
    assert verdict.status is Status.OK
    assert verdict.value is not None
    assert 0.0 <= verdict.value <= 1.0
    assert 0.0 <= verdict.extra["precision"] <= 1.0
    assert 0.0 <= verdict.extra["recall"] <= 1.0


@settings(max_examples=150, deadline=None)
@given(st.text(min_size=1))
def test_identical_answers_score_one(text: str) -> None:
    """An output identical to its valid answer has F1 1.0, whatever the text."""
    verdict = score_one(text, text)
    assert verdict.value == 1.0
    assert verdict.extra["best_reference"] == text


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.none(), st.text()), st.lists(st.text(), min_size=1, max_size=3))
def test_arbitrary_unicode_never_errors(output: str | None, expected: list[str]) -> None:
    """Arbitrary Unicode outputs and answers give ok, fail or skip, never error."""
    assert score_one(output, expected).status is not Status.ERROR
