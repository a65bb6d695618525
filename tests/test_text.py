"""Tests for itemscore.text: normalisation, tokenisation and label extraction."""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Callable

import attrs
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from itemscore import text
from itemscore._exceptions import ConfigError
from itemscore.text import (
    KEPT_PUNCTUATION,
    LabelExtractor,
    Normalizer,
    extract_label,
    is_punctuation,
    tokenize,
)

# Every combination of the five options.
normalizers = st.builds(
    Normalizer,
    nfkc=st.booleans(),
    ignore_case=st.booleans(),
    trim_punctuation=st.booleans(),
    ignore_punctuation=st.booleans(),
    remove_articles=st.booleans(),
)

# Text that often hits the interesting cases: articles, punctuation of several scripts, marks,
# unspaced scripts, compatibility characters, odd whitespace; mixed with arbitrary Unicode.
_TRICKY = [
    "a", "an", "the", "The", "A", " ", "\t", "\n", "\u00a0", "\u3000", ".", ",", "_", "'", '"',
    "«", "»", "「", "」", "。", "、", "¡", "¿", "\uff01", "-", "%", "#", "@", "&", "+", "$", "5",
    "\u0301", "\u0338", "=", "e", "j", "ǰ", "ß", "İ", "ﬁ", "\uff21", "ｶ", "ﾞ", "は", "日", "บ", "ำ",
    "က", "한", "न", "ा", "\u00b4", "\U00010100", "\U00020000", "\U0001f600", "Σ", "ς",
]  # fmt: skip
texts = st.text() | st.lists(st.sampled_from(_TRICKY) | st.characters(), max_size=30).map("".join)
label_lists = st.lists(
    st.text(min_size=1) | st.lists(st.sampled_from(_TRICKY), min_size=1, max_size=6).map("".join),
    min_size=1,
    max_size=5,
)


# --- Normalizer ----------------------------------------------------------------------------------


def _full_width(ascii_text: str) -> str:
    """The full-width forms (U+FF01-U+FF5E) of printable ASCII characters."""
    return "".join(chr(ord(ch) + 0xFEE0) for ch in ascii_text)


def _name(ch: str) -> str:
    """A readable test id for one character."""
    return unicodedata.name(ch, f"U+{ord(ch):04X}").lower()


def test_nfkc_makes_full_width_letters_equal_ascii() -> None:
    """Full-width ABC (U+FF21-U+FF23) normalises to the same text as ABC."""
    assert Normalizer()(_full_width("ABC")) == Normalizer()("ABC") == "abc"


def test_without_nfkc_full_width_letters_stay_apart() -> None:
    """With nfkc=False, full-width letters are not ASCII letters."""
    assert Normalizer(nfkc=False)(_full_width("ABC")) != Normalizer(nfkc=False)("ABC")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Positive.", "positive"),
        (' "Positive." ', "positive"),
        ("«Bonjour»", "bonjour"),
        ("「答え」。", "答え"),
        ("¡Hola!", "hola"),
        ("¿Qué?", "qué"),
        ("(B)", "b"),
        ("'quoted'", "quoted"),
        (_full_width("!") + "正解" + _full_width("!"), "正解"),
        ("U.S.A.", "u.s.a"),
        ("Hello, world!", "hello, world"),
        ("...", ""),
    ],
    ids=[
        "full-stop",
        "quotes-through-whitespace",
        "guillemets",
        "cjk-brackets-and-full-stop",
        "inverted-exclamation",
        "inverted-question",
        "parentheses",
        "single-quotes",
        "full-width-exclamation",
        "inner-kept",
        "inner-comma-kept",
        "only-punctuation",
    ],
)
def test_trim_punctuation_strips_both_ends(raw: str, expected: str) -> None:
    """The default normaliser strips punctuation and whitespace from both ends only."""
    assert Normalizer()(raw) == expected


def test_positive_with_full_stop_matches_label() -> None:
    """The answer "Positive." and the label positive normalise to the same text."""
    assert Normalizer()("Positive.") == Normalizer()("positive")


def test_without_trimming_punctuation_stays() -> None:
    """With trim_punctuation=False the full stop is kept."""
    assert Normalizer(trim_punctuation=False)(" Positive. ") == "positive."


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("U.S.A.", "usa"),
        ("It's 5 o'clock, isn't it?", "its 5 oclock isnt it"),
        ("«Bonjour», dit-il.", "bonjour dit-il"),
        ("今日は、晴れ。", "今日は晴れ"),
        ("a . b", "a b"),
        ("snake_case", "snakecase"),
        ("a\U00010100b", "ab"),
    ],
    ids=["acronym", "apostrophes", "french", "japanese", "lone-mark", "underscore", "astral"],
)
def test_ignore_punctuation_deletes_everywhere(raw: str, expected: str) -> None:
    """ignore_punctuation deletes punctuation anywhere, as SQuAD does."""
    assert Normalizer(ignore_punctuation=True)(raw) == expected


@pytest.mark.parametrize(
    "normalizer",
    [Normalizer(), Normalizer(ignore_punctuation=True), Normalizer(nfkc=False)],
    ids=["default", "ignore-punctuation", "no-nfkc"],
)
def test_symbols_and_kept_characters_are_not_punctuation(normalizer: Normalizer) -> None:
    """+ - % $ # @ & survive every normalisation, so -5 and 5 stay different."""
    assert normalizer("+ - % $ # @ &") == "+ - % $ # @ &"
    assert normalizer("-5") == "-5"
    assert normalizer("-5") != normalizer("5")
    assert normalizer("50%") == "50%"
    assert normalizer("C#") == "c#"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Positive", "positive"),
        ("STRASSE", "strasse"),
        ("Straße", "strasse"),
        ("ΣΊΣΥΦΟΣ", "σίσυφοσ"),
    ],
    ids=["ascii", "upper", "sharp-s", "greek-final-sigma"],
)
def test_ignore_case_folds_case(raw: str, expected: str) -> None:
    """ignore_case folds case with str.casefold, not just lower()."""
    assert Normalizer()(raw) == expected


def test_case_is_kept_without_ignore_case() -> None:
    """With ignore_case=False the case of letters is kept."""
    assert Normalizer(ignore_case=False)("Positive.") == "Positive"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("The cat sat on a mat", "cat sat on mat"),
        ("an apple", "apple"),
        ("Theater and Anatomy", "theater and anatomy"),
        ("The", ""),
        ("cat, the", "cat"),
        ('"The Eiffel Tower."', "eiffel tower"),
        ("_the_", ""),
        ("the1 a2", "the1 a2"),
        ("L\u2019été à la plage, the end", "l\u2019été à la plage, end"),
        ("日本のthe本", "日本の 本"),
    ],
    ids=[
        "the-and-a",
        "an",
        "inside-words-kept",
        "only-an-article",
        "trimmed-after-removal",
        "quoted",
        "underscore-is-no-letter",
        "digits-are-letters",
        "non-ascii",
        "between-unspaced",
    ],
)
def test_remove_articles_drops_whole_words(raw: str, expected: str) -> None:
    """remove_articles drops a, an and the where they stand as whole words."""
    assert Normalizer(remove_articles=True)(raw) == expected


def test_remove_articles_with_case_kept_drops_only_lowercase() -> None:
    """Without ignore_case only lowercase articles are dropped."""
    normalizer = Normalizer(ignore_case=False, remove_articles=True)
    assert normalizer("The cat and the dog") == "The cat and dog"


def test_remove_articles_with_ignore_punctuation_as_squad() -> None:
    """ignore_punctuation plus remove_articles reproduces SQuAD's answer normalisation."""
    normalizer = Normalizer(ignore_punctuation=True, remove_articles=True)
    assert normalizer("The U.S.A.'s army, a force.") == "usas army force"


@pytest.mark.parametrize(
    "normalizer",
    [Normalizer(), Normalizer(nfkc=False), Normalizer(trim_punctuation=False)],
    ids=["default", "no-nfkc", "no-trim"],
)
def test_whitespace_is_always_collapsed(normalizer: Normalizer) -> None:
    """Runs of any whitespace (tabs, newlines, non-breaking spaces) become one space."""
    raw = "  New\t\tYork \n city\u00a0\u00a0is\u3000big\u2003\r\n "
    assert normalizer(raw) == "new york city is big"


def test_whitespace_only_collapses_to_empty() -> None:
    """A text of whitespace only normalises to the empty string."""
    assert Normalizer(trim_punctuation=False)(" \t\n\u00a0") == ""


@pytest.mark.parametrize(
    ("normalizer", "raw"),
    [
        (Normalizer(), "ǰ"),
        (Normalizer(ignore_case=False, ignore_punctuation=True), "e.\u0301"),
        (Normalizer(remove_articles=True), "cat, the"),
        (Normalizer(remove_articles=True), "_the"),
        (Normalizer(remove_articles=True, trim_punctuation=False), "=a\u0338"),
        (Normalizer(), "\u00b4"),
        (Normalizer(ignore_punctuation=True), "\U00010100.\U00016fe2"),
    ],
    ids=[
        "casefold-decomposes",
        "deletion-composes",
        "article-exposes-punctuation",
        "underscore",
        "article-before-mark",
        "spacing-accent",
        "astral-punctuation",
    ],
)
def test_normalising_twice_changes_nothing(normalizer: Normalizer, raw: str) -> None:
    """Known traps for idempotence normalise to a fixed point."""
    once = normalizer(raw)
    assert normalizer(once) == once


@given(normalizer=normalizers, raw=texts)
@example(normalizer=Normalizer(), raw="ǰ")
@example(normalizer=Normalizer(ignore_case=False, ignore_punctuation=True), raw="e.\u0301")
def test_normalising_is_idempotent(normalizer: Normalizer, raw: str) -> None:
    """Normalising twice gives what normalising once gives, for every combination of options."""
    once = normalizer(raw)
    assert normalizer(once) == once


def _reference(normalizer: Normalizer, raw: str) -> str:
    """The documented steps, spelled out slowly, for ASCII text (NFKC changes no ASCII)."""

    def trim(text: str) -> str:
        while text and (is_punctuation(text[0]) or text[0].isspace()):
            text = text[1:]
        while text and (is_punctuation(text[-1]) or text[-1].isspace()):
            text = text[:-1]
        return text

    if normalizer.ignore_case:
        raw = raw.lower()
    trimming = normalizer.trim_punctuation and not normalizer.ignore_punctuation
    if normalizer.ignore_punctuation:
        raw = "".join(ch for ch in raw if not is_punctuation(ch))
    elif trimming:
        raw = trim(raw)
    if normalizer.remove_articles:
        # Words are maximal runs of letters and digits; split keeps them at odd positions.
        parts = re.split(r"([A-Za-z0-9]+)", raw)
        raw = "".join(" " if part in {"a", "an", "the"} else part for part in parts)
        if trimming:
            raw = trim(raw)
    return " ".join(raw.split())


@given(normalizer=normalizers, raw=st.text(st.characters(max_codepoint=127)))
@example(normalizer=Normalizer(remove_articles=True), raw="a a the an")
@example(normalizer=Normalizer(remove_articles=True), raw="cat, the")
def test_ascii_fast_path_follows_the_steps(normalizer: Normalizer, raw: str) -> None:
    """The fast path for ASCII text gives what the documented steps give."""
    assert normalizer(raw) == _reference(normalizer, raw)


@given(normalizer=normalizers, raw=st.text(st.characters(max_codepoint=127)))
def test_ascii_text_normalises_alike_on_both_paths(normalizer: Normalizer, raw: str) -> None:
    """Framed by non-ASCII spaces (taking the Unicode path), ASCII text normalises the same."""
    assert normalizer("\u2003" + raw + "\u2003") == normalizer(raw)


def test_normalizer_is_frozen_and_hashable() -> None:
    """Normalizers are immutable values: equal options, equal hashes."""
    normalizer = Normalizer(remove_articles=True)
    assert normalizer == Normalizer(remove_articles=True)
    assert hash(normalizer) == hash(Normalizer(remove_articles=True))
    assert normalizer != Normalizer()
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        normalizer.nfkc = False  # type: ignore[misc]


@pytest.mark.parametrize(
    "option",
    ["nfkc", "ignore_case", "trim_punctuation", "ignore_punctuation", "remove_articles"],
)
def test_normalizer_options_must_be_booleans(option: str) -> None:
    """A non-boolean option is rejected when the normaliser is built, naming the option."""
    with pytest.raises(TypeError, match=rf"^`{option}` \(1\) must be True or False\.$"):
        Normalizer(**{option: 1})  # type: ignore[arg-type]


# --- Punctuation ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ch",
    [
        *".,!?\"'()[]{}:;/\\*_«»「」『』。、¡¿・“”…—",
        *"\uff01\uff1f\u2018\u2019\u2013\u2010\u2e3a\U00016fe2",
    ],
    ids=_name,
)
def test_punctuation_is_every_p_category(ch: str) -> None:
    """Every character of a P* category is punctuation, in every script."""
    assert is_punctuation(ch)


@pytest.mark.parametrize("ch", [*"-%#@&+$^`|~<>=a1 \t", "\u2212", "€", "😀", "\u0301"], ids=_name)
def test_kept_characters_and_symbols_are_not_punctuation(ch: str) -> None:
    """- % # @ &, symbols (+ $ ^ ...), letters, digits, spaces and marks are not punctuation."""
    assert not is_punctuation(ch)


def test_kept_punctuation_is_punctuation_by_category() -> None:
    """The kept characters are all of a punctuation category: the exception is deliberate."""
    assert sorted(KEPT_PUNCTUATION) == sorted("-%#@&")
    assert all(unicodedata.category(ch).startswith("P") for ch in KEPT_PUNCTUATION)


@pytest.mark.parametrize("ch", ["", "ab"], ids=["empty", "two"])
def test_is_punctuation_wants_one_character(ch: str) -> None:
    """is_punctuation rejects anything but a single character."""
    with pytest.raises(ValueError, match="must be exactly one character"):
        is_punctuation(ch)


def test_unscanned_planes_hold_no_punctuation_or_marks() -> None:
    """Planes 4-13 are unassigned and 15-16 private use, so the tables can skip them."""
    category = unicodedata.category
    assert all(category(chr(cp)) == "Cn" for cp in range(0x40000, 0xE0000))
    assert all(category(chr(cp)) in {"Co", "Cn"} for cp in range(0xF0000, sys.maxunicode + 1))


# --- tokenize ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("the eiffel tower", ["the", "eiffel", "tower"]),
        ("  a \t b\n", ["a", "b"]),
        ("", []),
        ("iPhone 15 は", ["iPhone", "15", "は"]),
        ("東京タワー", ["東", "京", "タ", "ワ", "ー"]),
        ("abc日本def", ["abc", "日", "本", "def"]),
        ("人々", ["人", "々"]),
        ("ㄅㄆㄇ", ["ㄅ", "ㄆ", "ㄇ"]),
        ("ﾃｽﾄ", ["ﾃ", "ｽ", "ﾄ"]),
        ("ㇰㇱ", ["ㇰ", "ㇱ"]),
        ("\U00020000\uf900", ["\U00020000", "\uf900"]),
        ("คำตอบ", ["ค", "ำ", "ต", "อ", "บ"]),
        ("မြန်မာ", ["မ", "ြ", "န", "်", "မ", "ာ"]),
        ("이것은 한국어", ["이것은", "한국어"]),
        ("Привет, мир", ["Привет,", "мир"]),
        ("日本\u3000語", ["日", "本", "語"]),
        ("「答え」。", ["「", "答", "え", "」", "。"]),
    ],
    ids=[
        "english",
        "whitespace",
        "empty",
        "mixed-japanese",
        "katakana",
        "embedded",
        "iteration-mark",
        "bopomofo",
        "halfwidth-katakana",
        "katakana-extension",
        "han-extension-b-and-compatibility",
        "thai",
        "burmese",
        "korean-is-spaced",
        "cyrillic",
        "ideographic-space",
        "cjk-punctuation",
    ],
)
def test_tokenize(raw: str, expected: list[str]) -> None:
    """Whitespace words, and one token per character of unspaced scripts."""
    assert tokenize(raw) == expected


def test_tokenize_normalised_japanese() -> None:
    """Normalising away punctuation then tokenising Japanese gives one token per character."""
    assert tokenize(Normalizer(ignore_punctuation=True)("今日は 晴れ!")) == [
        "今",
        "日",
        "は",
        "晴",
        "れ",
    ]


@given(texts)
def test_tokens_are_never_empty_and_hold_no_whitespace(raw: str) -> None:
    """No token is empty or contains whitespace."""
    for token in tokenize(raw):
        assert token
        assert not any(ch.isspace() for ch in token)


@given(texts)
def test_tokens_keep_every_non_space_character(raw: str) -> None:
    """Joined, the tokens are the text without its whitespace."""
    assert "".join(tokenize(raw)) == "".join(raw.split())


# --- Label extraction ----------------------------------------------------------------------------

SENTIMENT = ["positive", "negative", "neutral"]


@pytest.mark.parametrize(
    ("answer", "labels", "expected"),
    [
        ("positive", SENTIMENT, "positive"),
        ("Positive.", SENTIMENT, "positive"),
        (' "NEGATIVE" ', SENTIMENT, "negative"),
        ("positive", ["Positive", "Negative"], "Positive"),
        ("The sentiment is positive.", SENTIMENT, "positive"),
        ("It is very positive.", ["positive", "very positive"], "very positive"),
        ("It is very positive.", ["very positive", "positive"], "very positive"),
        ("positive, clearly positive", SENTIMENT, "positive"),
        ("Answer: (B)", ["A", "B", "C", "D"], "B"),
        ("The answer is 2.", ["1", "2", "3"], "2"),
        ("The answer is -5.", ["5", "-5"], "-5"),
        ("คำตอบคือบวก", ["บวก", "ลบ"], "บวก"),
        ("はい、そうです。", ["はい", "いいえ"], "はい"),
        ("いいえ", ["はい", "いいえ"], "いいえ"),
        ("答えはpositiveです", SENTIMENT, "positive"),
        ("感情は肯定的です。", ["肯定的", "否定的"], "肯定的"),
        (_full_width("POSITIVE"), SENTIMENT, "positive"),
        ("Es ist «positiv».", ["positiv", "negativ"], "positiv"),
        ("positive_feedback", SENTIMENT, "positive"),
    ],
    ids=[
        "equal",
        "equal-after-trim",
        "equal-after-case-and-quotes",
        "spelled-as-given",
        "mentioned",
        "longest-wins",
        "longest-wins-any-order",
        "same-label-twice",
        "letter-choice",
        "number",
        "kept-minus",
        "thai-anywhere",
        "japanese-anywhere",
        "japanese-equal",
        "english-inside-japanese",
        "chinese-anywhere",
        "full-width",
        "guillemets",
        "underscore-separates-words",
    ],
)
def test_extract_label_finds_the_label(answer: str, labels: list[str], expected: str) -> None:
    """An answer equal to a label, or mentioning exactly one, gives that label."""
    assert extract_label(answer, labels) == expected


@pytest.mark.parametrize(
    ("answer", "labels"),
    [
        ("positive or negative", SENTIMENT),
        ("It is nonpositive.", SENTIMENT),
        ("positively", SENTIMENT),
        ("I cannot tell.", SENTIMENT),
        ("", SENTIMENT),
        ("12", ["1", "2"]),
        ("positive_feedback", SENTIMENT),
        ("New York City", ["new york", "york city"]),
        ("खाना", ["ना", "खा"]),
        ("答えははいいいえ", ["はい", "いいえ"]),
    ],
    ids=[
        "two-labels",
        "inside-a-word",
        "word-goes-on",
        "no-label",
        "empty",
        "digits-join",
        "underscore-deleted-joins-words",
        "overlapping-labels",
        "marks-belong-to-the-word",
        "overlapping-anywhere",
    ],
)
def test_extract_label_leaves_the_answer(answer: str, labels: list[str]) -> None:
    """No label, or two different labels, leave the answer exactly as it was."""
    normalizer = Normalizer(ignore_punctuation=True) if "_" in answer else None
    assert extract_label(answer, labels, normalizer) is answer


def test_extract_label_uses_the_given_normalizer() -> None:
    """The normaliser applies to the answer and the labels alike."""
    assert extract_label("POSITIVE", ["positive"], Normalizer(ignore_case=False)) == "POSITIVE"
    assert extract_label("POSITIVE", ["POSITIVE"], Normalizer(ignore_case=False)) == "POSITIVE"
    articles = Normalizer(remove_articles=True)
    assert extract_label("the positive one", ["a positive one", "negative"], articles) == (
        "a positive one"
    )


def test_first_of_labels_normalising_alike_wins() -> None:
    """When two labels normalise to the same text, the first one is used."""
    assert extract_label("POSITIVE!", ["Positive", "positive"]) == "Positive"
    assert extract_label("it is POSITIVE", ["Positive", "positive."]) == "Positive"


def test_label_normalising_to_nothing_matches_only_an_empty_answer() -> None:
    """A label of punctuation only equals an answer of punctuation only, and is found nowhere."""
    labels = ["?", "yes"]
    assert extract_label("?!", labels) == "?"
    assert extract_label("What? yes!", labels) == "yes"
    assert extract_label("What?", labels) == "What?"


def test_label_extractor_find_and_call() -> None:
    """find returns None where calling the extractor returns the answer."""
    extractor = LabelExtractor(("positive", "negative"))
    assert extractor.find("so positive") == "positive"
    assert extractor("so positive") == "positive"
    assert extractor.find("unclear") is None
    assert extractor("unclear") == "unclear"
    assert extractor.labels == ("positive", "negative")
    assert extractor.normalizer == Normalizer()
    assert repr(extractor) == (
        "LabelExtractor(['positive', 'negative'], normalizer=Normalizer(nfkc=True, "
        "ignore_case=True, trim_punctuation=True, ignore_punctuation=False, "
        "remove_articles=False))"
    )


@pytest.mark.parametrize("labels", [["positive", "negative"], ("positive", "negative")])
def test_extract_label_accepts_any_sequence(labels: list[str] | tuple[str, ...]) -> None:
    """Lists and tuples of labels behave the same."""
    assert extract_label("so negative", labels) == "negative"


@pytest.mark.parametrize(
    "build",
    [LabelExtractor, lambda labels: extract_label("x", labels)],
    ids=["extractor", "extract_label"],
)
def test_empty_labels_are_rejected(build: Callable[[list[str]], object]) -> None:
    """An empty label list is a configuration error (a ValueError)."""
    with pytest.raises(ConfigError, match=r"^`labels` is empty: give at least one label"):
        build([])
    assert issubclass(ConfigError, ValueError)


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        (["positive", 5], r"labels\[1\] is 5 of type int"),
        (["positive", ["negative"]], r"labels\[1\] is \['negative'\] of type list"),
        ("positive", r"not the single string 'positive'"),
    ],
    ids=["number", "unhashable", "bare-string"],
)
def test_labels_must_be_strings(labels: object, message: str) -> None:
    """Labels that are not strings, or one bare string, are a TypeError naming the culprit."""
    with pytest.raises(TypeError, match=message):
        extract_label("positive", labels)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=message):
        LabelExtractor(labels)  # type: ignore[arg-type]


@given(answer=texts, labels=label_lists, normalizer=normalizers | st.none())
def test_extract_label_returns_the_answer_or_a_label(
    answer: str, labels: list[str], normalizer: Normalizer | None
) -> None:
    """extract_label never raises and returns the answer itself or one of the labels."""
    result = extract_label(answer, labels, normalizer)
    assert result is answer or result in labels


@given(label=st.text(min_size=1), normalizer=normalizers)
def test_a_label_extracts_itself(label: str, normalizer: Normalizer) -> None:
    """An answer spelled like a label gives that label (or one normalising the same)."""
    labels = [label, "zzz unrelated"]
    found = LabelExtractor(labels, normalizer).find(label)
    assert found is not None
    assert normalizer(found) == normalizer(label)


def test_module_exports_are_sorted_and_public() -> None:
    """__all__ is sorted and names exactly the public objects."""
    assert text.__all__ == sorted(text.__all__)
    assert all(hasattr(text, name) for name in text.__all__)
