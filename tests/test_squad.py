"""normalization="squad": exact_match and token_f1 give the official SQuAD v1.1 numbers.

The reference is the published recipe of the official evaluation script (evaluate-v1.1.py),
written out again here step for step: normalise (lower, delete ``string.punctuation``, replace
whole-word articles, collapse whitespace), exact match and multiset-token F1 per gold answer,
the best over the gold answers, and 100 x the mean over all questions, an unanswered question
counting 0.
"""

from __future__ import annotations

import random
import re
import string
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from itemscore import ItemResult, OptionError, Status, score
from itemscore.metrics_builtin._squad import squad_normalize

# --- the official recipe ---------------------------------------------------------------------


def reference_normalize(s: str) -> str:
    def remove_articles(text: str) -> str:
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text: str) -> str:
        return " ".join(text.split())

    def remove_punc(text: str) -> str:
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    def lower(text: str) -> str:
        return text.lower()

    return white_space_fix(remove_articles(remove_punc(lower(s))))


def reference_f1(prediction: str, ground_truth: str) -> float:
    prediction_tokens = reference_normalize(prediction).split()
    ground_truth_tokens = reference_normalize(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    return (2 * precision * recall) / (precision + recall)


def reference_em(prediction: str, ground_truth: str) -> bool:
    return reference_normalize(prediction) == reference_normalize(ground_truth)


def reference_evaluate(
    questions: list[tuple[str, list[str]]], predictions: dict[str, str]
) -> dict[str, Any]:
    f1 = exact_match = total = 0.0
    per_question = {}
    for qid, ground_truths in questions:
        total += 1
        if qid not in predictions:
            continue
        prediction = predictions[qid]
        em = max(reference_em(prediction, truth) for truth in ground_truths)
        score_f1 = max(reference_f1(prediction, truth) for truth in ground_truths)
        exact_match += em
        f1 += score_f1
        per_question[qid] = (em, score_f1)
    return {
        "exact_match": 100.0 * exact_match / total,
        "f1": 100.0 * f1 / total,
        "per_question": per_question,
    }


# --- generated questions ---------------------------------------------------------------------

WORDS = [
    "Denver", "Broncos", "Super", "Bowl", "50", "1848", "Paris", "tower", "Eiffel", "river",
    "Straße", "İstanbul", "ÉCOLE", "naïve", "thé", "the\u0301", "日本", "東京タワー", "café",
    "\uff34\uff48\uff45", "\uff21\uff22\uff23", "\ufb01re", "U.S.A.", "e-mail", "AT&T", "C#",
    "C++", "$5", "50%", "-5",
    "rock'n'roll", "an_apple", "_the_", "theater", "another", "a.m.", "Mr.",
]  # fmt: skip
ARTICLES = ["a", "an", "the", "A", "An", "The", "THE"]
PUNCTUATION = [*".,;:!?'\"()[]-_/\\@#$%^&*+=<>|~`{}", "«", "»", "。", "、", "\u2013", "…", "¡"]
SPACES = [" ", "  ", "\t", "\n", "\u00a0", "\u3000"]


def _phrase(rng: random.Random, length: int) -> list[str]:
    return [rng.choice(WORDS) for _ in range(length)]


def _render(rng: random.Random, tokens: list[str]) -> str:
    out = []
    for token in tokens:
        if rng.random() < 0.25:
            out.append(rng.choice(ARTICLES))
        word = token
        if rng.random() < 0.2:
            word = rng.choice([word.upper(), word.lower(), word.title()])
        if rng.random() < 0.25:
            word = word + rng.choice(PUNCTUATION)
        if rng.random() < 0.1:
            word = rng.choice(PUNCTUATION) + word
        out.append(word)
    text = ""
    for word in out:
        text += (rng.choice(SPACES) if text else "") + word
    if rng.random() < 0.2:
        text = rng.choice(["", " ", "«", '"']) + text + rng.choice(["", ".", "»", '" '])
    return text


def generated_questions(
    n: int, seed: int
) -> tuple[list[tuple[str, list[str]]], dict[str, str], list[ItemResult]]:
    """``n`` questions with 1-3 gold answers each, predictions near or far from them."""
    rng = random.Random(seed)
    questions: list[tuple[str, list[str]]] = []
    predictions: dict[str, str] = {}
    items = []
    for i in range(n):
        qid = f"q{i:04d}"
        gold = _phrase(rng, rng.randint(1, 4))
        golds = [_render(rng, gold) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.05:
            golds.append(rng.choice(ARTICLES) + rng.choice(["", ".", " ."]))  # normalises to ""
        roll = rng.random()
        prediction: str | None
        if roll < 0.05:
            prediction = None  # unanswered
        elif roll < 0.1:
            prediction = rng.choice(["", " ", "the", "A.", "...", "«»"])
        elif roll < 0.6:
            tokens = list(gold)
            if rng.random() < 0.5 and len(tokens) > 1:
                tokens.pop(rng.randrange(len(tokens)))
            if rng.random() < 0.3:
                tokens.append(rng.choice(WORDS))
            prediction = _render(rng, tokens)
        else:
            prediction = _render(rng, _phrase(rng, rng.randint(1, 5)))
        questions.append((qid, golds))
        if prediction is not None:
            predictions[qid] = prediction
        items.append(ItemResult(id=qid, output=prediction, expected=tuple(golds)))
    return questions, predictions, items


SQUAD = [
    {"name": "exact_match", "normalization": "squad"},
    {"name": "token_f1", "normalization": "squad"},
]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reproduces_the_official_squad_numbers(seed: int) -> None:
    """Per question and overall, the numbers are those of the official v1.1 evaluation."""
    questions, predictions, items = generated_questions(400, seed)
    official = reference_evaluate(questions, predictions)
    result = score(items, SQUAD)

    for item in result.items:
        em_score = item.scores["exact_match"]
        f1_score = item.scores["token_f1"]
        if item.id not in official["per_question"]:
            assert (em_score.status, em_score.value) == (Status.FAIL, 0.0)
            assert (f1_score.status, f1_score.value) == (Status.FAIL, 0.0)
            continue
        em, f1 = official["per_question"][item.id]
        assert em_score.status is (Status.OK if em else Status.FAIL), item
        assert f1_score.value == f1, item  # the same float, bit for bit

    em_m = result.measurements["default.exact_match"]
    f1_m = result.measurements["default.token_f1"]
    assert em_m.n == f1_m.n == len(questions)
    assert em_m.counts[Status.OK] == sum(em for em, _ in official["per_question"].values())
    assert em_m.value is not None
    assert f1_m.value is not None
    # Equal up to the order of the float additions: far below the reported 0.01.
    assert 100 * em_m.value == pytest.approx(official["exact_match"], rel=1e-13, abs=0)
    assert 100 * f1_m.value == pytest.approx(official["f1"], rel=1e-13, abs=0)


def test_the_generated_questions_tell_the_normalisations_apart() -> None:
    """itemscore's own normalisation gives other numbers on the same data: the test has teeth."""
    questions, predictions, items = generated_questions(400, 0)
    official = reference_evaluate(questions, predictions)
    result = score(
        items,
        [{"name": "exact_match", "remove_articles": True, "ignore_punctuation": True}, "token_f1"],
    )
    em = 100 * (result.measurements["default.exact_match"].value or 0.0)
    f1 = 100 * (result.measurements["default.token_f1"].value or 0.0)
    assert em != pytest.approx(official["exact_match"], rel=1e-6)
    assert f1 != pytest.approx(official["f1"], rel=1e-6)


@pytest.mark.parametrize(
    ("prediction", "gold", "em", "f1"),
    [
        pytest.param("The Eiffel Tower.", "eiffel tower", True, 1.0, id="articles-punctuation"),
        pytest.param("the", "A", True, 0.0, id="both-empty-f1-is-zero"),
        pytest.param("-5%", "5", True, 1.0, id="ascii-symbols-deleted"),
        pytest.param("«Paris»", "paris", False, 0.0, id="guillemets-kept"),
        pytest.param("\uff30\uff21\uff32\uff29\uff33", "paris", False, 0.0, id="no-nfkc"),
        pytest.param("STRASSE", "straße", False, 0.0, id="lower-not-casefold"),
        pytest.param("東京タワー", "東京 タワー", False, 0.0, id="whitespace-tokens-only"),
        pytest.param("the\u0301", "\u0301", True, 1.0, id="a-combining-mark-ends-a-word"),
    ],
)
def test_corner_cases_follow_the_script(prediction: str, gold: str, em: bool, f1: float) -> None:
    """The corners where SQuAD's rules differ from itemscore's defaults, as the script has them."""
    assert reference_em(prediction, gold) is em
    assert reference_f1(prediction, gold) == f1
    result = score([ItemResult(id="1", output=prediction, expected=gold)], SQUAD)
    scores = result.items[0].scores
    assert (scores["exact_match"].status is Status.OK) is em
    assert scores["token_f1"].value == f1


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_squad_normalize_is_the_script_normalisation(text: str) -> None:
    """squad_normalize agrees with the script's normalize_answer on any text."""
    assert squad_normalize(text) == reference_normalize(text)


@pytest.mark.parametrize(
    ("metric", "option", "value"),
    [
        ("exact_match", "ignore_punctuation", True),
        ("exact_match", "remove_articles", True),
        ("exact_match", "nfkc", False),
        ("token_f1", "ignore_punctuation", False),
        ("token_f1", "ignore_case", False),
    ],
)
def test_squad_refuses_normalisation_options(metric: str, option: str, value: bool) -> None:
    """An option that normalization='squad' would override is an error naming it."""
    items = [ItemResult(id="1", output="x", expected="x")]
    with pytest.raises(OptionError, match=f"`{option}` \\({value}\\)"):
        score(items, [{"name": metric, "normalization": "squad", option: value}])


def test_unknown_normalization_suggests_squad() -> None:
    """A misspelt normalization lists the choices and suggests the closest."""
    items = [ItemResult(id="1", output="x", expected="x")]
    with pytest.raises(OptionError, match="Did you mean 'squad'"):
        score(items, [{"name": "exact_match", "normalization": "squda"}])
