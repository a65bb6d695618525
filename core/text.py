"""Text helpers every metric shares: normalisation, tokenisation and label extraction.

Built-in and third-party metrics use the same three helpers, so that "equal after normalisation"
means the same thing everywhere:

- :class:`Normalizer` turns an answer into the form answers are compared in (Unicode NFKC, case
  folding, punctuation, articles, whitespace);
- :func:`tokenize` splits text into words, and every character of Chinese, Japanese, Thai and
  Burmese script into a token of its own;
- :func:`extract_label` (and :class:`LabelExtractor`, its compiled form) maps a free-form answer
  such as "The sentiment is positive." to one of a set of labels.

Punctuation is every Unicode character of general category ``P*`` except
:data:`KEPT_PUNCTUATION` (``# % & - @``); ``+`` and ``$`` are symbols (category ``S*``) and never
punctuation. The tables built from that definition cover all of Unicode; they are built once, the
first time a non-ASCII text needs them, and ASCII text never waits for them.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from itertools import chain
from typing import Final, NamedTuple, final

import attrs

from ._exceptions import ConfigError

__all__ = [
    "KEPT_PUNCTUATION",
    "LabelExtractor",
    "Normalizer",
    "extract_label",
    "is_punctuation",
    "tokenize",
]

#: Characters of a punctuation category (``P*``) that are *not* punctuation for itemscore: they
#: change what an answer means (``-5`` is not ``5``, ``50%`` is not ``50``).
KEPT_PUNCTUATION: Final = "#%&-@"

# --- Character sets ------------------------------------------------------------------------------

# Scripts written without spaces between words: every character is a token of its own, and a
# label containing one matches anywhere. Ranges are Unicode blocks; U+3000 IDEOGRAPHIC SPACE is
# whitespace and deliberately left out of "CJK Symbols and Punctuation".
_UNSPACED_BLOCKS: Final = (
    ("\u0e00", "\u0e7f"),  # Thai
    ("\u1000", "\u109f"),  # Myanmar
    ("\u2e80", "\u2fdf"),  # CJK Radicals Supplement, Kangxi Radicals
    ("\u2ff0", "\u2fff"),  # Ideographic Description Characters
    ("\u3001", "\u303f"),  # CJK Symbols and Punctuation (、。「」々〆〇...), without U+3000
    ("\u3040", "\u30ff"),  # Hiragana, Katakana
    ("\u3100", "\u312f"),  # Bopomofo
    ("\u3190", "\u31ff"),  # Kanbun, Bopomofo Extended, CJK Strokes, Katakana Phonetic Extensions
    ("\u3400", "\u4dbf"),  # CJK Unified Ideographs Extension A
    ("\u4e00", "\u9fff"),  # CJK Unified Ideographs
    ("\ua9e0", "\ua9ff"),  # Myanmar Extended-B
    ("\uaa60", "\uaa7f"),  # Myanmar Extended-A
    ("\uf900", "\ufaff"),  # CJK Compatibility Ideographs
    ("\uff61", "\uff9f"),  # Halfwidth CJK punctuation and Halfwidth Katakana
    ("\U00016fe0", "\U00016fff"),  # Ideographic Symbols and Punctuation
    ("\U0001aff0", "\U0001b16f"),  # Kana Extended-B, Kana Supplement, Extended-A, Small Kana
    ("\U00020000", "\U0003ffff"),  # Planes 2 and 3: Han Extensions B-J, Compatibility Supplement
)


def _ranges(chars: Iterable[str]) -> list[tuple[str, str]]:
    """Distinct characters, sorted and grouped into runs of consecutive code points."""
    runs: list[tuple[str, str]] = []
    for ch in sorted(set(chars)):
        if runs and ord(runs[-1][1]) + 1 == ord(ch):
            runs[-1] = (runs[-1][0], ch)
        else:
            runs.append((ch, ch))
    return runs


def _class_body(ranges: Iterable[tuple[str, str]]) -> str:
    """The inside of a regex character class matching ``ranges``, as escaped code points."""
    return "".join(
        f"\\U{ord(lo):08x}" if lo == hi else f"\\U{ord(lo):08x}-\\U{ord(hi):08x}"
        for lo, hi in ranges
    )


def _one_of(ranges: Sequence[tuple[str, str]]) -> str:
    """A regex for one character in ``ranges``, reaching above U+FFFF, yet fast below it.

    ``re`` tests a character class that reaches above U+FFFF range by range instead of in a
    bitmap, which makes every character of the text slower to test. So the ranges above U+FFFF
    get a class of their own, tried only after a single-range guard.
    """
    bmp = [(lo, min(hi, "\uffff")) for lo, hi in ranges if lo <= "\uffff"]
    astral = [(max(lo, "\U00010000"), hi) for lo, hi in ranges if hi > "\uffff"]
    return f"(?:[{_class_body(bmp)}]|(?=[\\U00010000-\\U0010ffff])[{_class_body(astral)}])"


# These few ranges keep `re` fast as one class; see _one_of for the many ranges of marks.
_UNSPACED: Final = f"[{_class_body(_UNSPACED_BLOCKS)}]"


# Compiled on first use, not at import: the token pattern alone takes ~25 ms to compile, which
# every start-up would pay (`itemscore metrics`, `--help`) although ASCII text never needs it.
@functools.cache
def _unspaced_re() -> re.Pattern[str]:
    """One character of a script written without spaces."""
    return re.compile(_UNSPACED)


@functools.cache
def _token_re() -> re.Pattern[str]:
    """One token of :func:`tokenize` in non-ASCII text."""
    return re.compile(f"{_UNSPACED}|[^\\s{_class_body(_UNSPACED_BLOCKS)}]+")


def _is_punctuation(ch: str) -> bool:
    return unicodedata.category(ch)[0] == "P" and ch not in KEPT_PUNCTUATION


_ASCII: Final = [chr(cp) for cp in range(128)]
_ASCII_PUNCTUATION: Final = "".join(ch for ch in _ASCII if _is_punctuation(ch))
# bytes.translate deletes ASCII characters several times faster than str.translate or re.sub.
_ASCII_PUNCTUATION_BYTES: Final = _ASCII_PUNCTUATION.encode("ascii")
_ASCII_TRIM: Final = _ASCII_PUNCTUATION + "".join(ch for ch in _ASCII if ch.isspace())


def _articles_re(word: str) -> re.Pattern[str]:
    """English articles standing as whole words, with ``word`` matching one word character.

    Each article comes first, so that ``re`` only stops where an ``a`` or a ``t`` stands; the
    boundary before it is a fixed-width look-behind over the article itself.
    """
    articles = "|".join(f"{article}(?<!{word}{article})" for article in ("a", "an", "the"))
    return re.compile(f"(?:{articles})(?!{word})")


_ASCII_ARTICLES_RE: Final = _articles_re("[A-Za-z0-9]")


class _Tables(NamedTuple):
    """What normalising non-ASCII text needs, built from one scan of Unicode."""

    #: Runs of punctuation characters up to U+FFFF.
    delete: re.Pattern[str]
    #: Runs of punctuation characters above U+FFFF.
    delete_astral: re.Pattern[str]
    #: Punctuation and whitespace: what trimming strips.
    trim: frozenset[str]
    #: English articles as whole words.
    articles: re.Pattern[str]


_ASTRAL_RE: Final = re.compile("[\\U00010000-\\U0010ffff]")

# Planes 4 to 13 hold no assigned character and planes 15 and 16 only private use: scanning
# planes 0-3 and 14 alone takes a third of the time. tests/test_text.py checks the claim for the
# Unicode version of the running Python.
_SCANNED_PLANES: Final = (range(0x40000), range(0xE0000, 0xF0000))


@functools.cache
def _tables() -> _Tables:
    category = unicodedata.category
    punctuation: list[str] = []
    marks: list[str] = []
    spaces: list[str] = []
    for cp in chain.from_iterable(_SCANNED_PLANES):
        ch = chr(cp)
        major = category(ch)[0]
        if major == "P":
            if ch not in KEPT_PUNCTUATION:
                punctuation.append(ch)
        elif major == "M":
            marks.append(ch)
        elif ch.isspace():
            spaces.append(ch)
    # One word character, as _is_word_char decides it.
    word = f"(?:(?!{_UNSPACED})(?:[^\\W_]|{_one_of(_ranges(marks))}))"
    bmp = _ranges(ch for ch in punctuation if ch <= "\uffff")
    astral = _ranges(ch for ch in punctuation if ch > "\uffff")
    return _Tables(
        delete=re.compile(f"[{_class_body(bmp)}]+"),
        delete_astral=re.compile(f"[{_class_body(astral)}]+"),
        trim=frozenset(punctuation + spaces),
        articles=_articles_re(word),
    )


def _is_word_char(ch: str) -> bool:
    """Whether ``ch`` continues a word: a letter, digit or combining mark of a spaced script.

    Characters of unspaced scripts (Chinese, Japanese, Thai, Burmese) separate words, as in
    :func:`tokenize`: ``positive`` is a whole word in ``答えはpositiveです``. Marks belong to
    the word they sit on, so ``ना`` is no word of its own in ``खाना``.
    """
    if ch.isascii():
        return ch.isalnum()
    if _unspaced_re().match(ch):
        return False
    return ch.isalnum() or unicodedata.category(ch)[0] == "M"


def is_punctuation(ch: str) -> bool:
    """Tell whether one character counts as punctuation for normalisation.

    Punctuation is every character of a Unicode punctuation category (``Pc``, ``Pd``, ``Ps``,
    ``Pe``, ``Pi``, ``Pf``, ``Po``: ``. , ! ? " ' « » 「 」 。 、 ¡ ¿`` and the like) except the
    characters of :data:`KEPT_PUNCTUATION` (``# % & - @``). ``+`` and ``$`` are symbols, never
    punctuation.

    Raises:
        ValueError: ``ch`` is not exactly one character long.
    """
    if len(ch) != 1:
        raise ValueError(f"`ch` ({ch!r}) must be exactly one character, not {len(ch)}.")
    return _is_punctuation(ch)


# --- Normalizer ----------------------------------------------------------------------------------


def _check_bool(instance: object, attribute: attrs.Attribute[bool], value: object) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"`{attribute.name}` ({value!r}) must be True or False.")


def _option(default: bool) -> bool:
    return attrs.field(default=default, validator=_check_bool)


@final
@attrs.frozen(cache_hash=True)
class Normalizer:
    """Bring a text into the form in which answers are compared.

    A normalizer is immutable and hashable; call it on a string. The steps run in this order:

    1. ``nfkc``: Unicode NFKC, so full-width letters equal ASCII ones and ``ﬁ`` equals ``fi``.
    2. ``ignore_case``: case folding with :meth:`str.casefold` (``Straße`` equals ``STRASSE``).
    3. Punctuation (see :func:`is_punctuation`): ``ignore_punctuation`` deletes it everywhere
       (``U.S.A.`` becomes ``usa``, as in SQuAD); otherwise ``trim_punctuation`` strips
       punctuation and whitespace from both ends, repeatedly (``' "Positive." '`` becomes
       ``positive``).
    4. ``remove_articles``: the English words *a*, *an* and *the* are dropped where they stand as
       whole words (only lowercase ones when case is not ignored). Trimming also applies to what
       is left, so ``"cat, the"`` becomes ``cat`` rather than ``cat,``.
    5. Always: runs of whitespace of any kind become one space, and both ends are stripped.

    Normalising is idempotent: normalising a normalised text changes nothing. Where NFKC and
    case folding or deleted punctuation interact (a deletion can bring a letter next to a
    combining mark that composes with it), the steps are repeated until the text is stable.

    Example:
        >>> Normalizer()(' "Positive." ')
        'positive'
        >>> Normalizer(ignore_punctuation=True)("U.S.A.")
        'usa'
    """

    nfkc: bool = _option(True)  #: apply Unicode NFKC
    ignore_case: bool = _option(True)  #: fold case with str.casefold
    trim_punctuation: bool = _option(True)  #: strip punctuation and whitespace at both ends
    ignore_punctuation: bool = _option(False)  #: delete punctuation everywhere
    remove_articles: bool = _option(False)  #: drop whole-word a / an / the

    def __call__(self, text: str) -> str:
        """Normalise one text."""
        if not text.isascii():
            return self._unicode(text)
        # ASCII is NFKC-stable and its case folding is str.lower: the lean path for most answers.
        if self.ignore_case:
            text = text.lower()
        if self.ignore_punctuation:
            text = text.encode().translate(None, _ASCII_PUNCTUATION_BYTES).decode()
        if self.remove_articles:
            text = _ASCII_ARTICLES_RE.sub(" ", text)
        if self.trim_punctuation and not self.ignore_punctuation:
            text = text.strip(_ASCII_TRIM)
        return " ".join(text.split())

    def _unicode(self, text: str) -> str:
        out = self._once(text)
        if not self.nfkc or out.isascii() or unicodedata.is_normalized("NFKC", out):
            return out
        # Case folding can leave text that NFKC composes again (U+01F0 folds to "j" + U+030C),
        # and a deleted character can bring a letter next to a combining mark. Repeat to a fixed
        # point so that normalising stays idempotent; two rounds suffice in practice.
        for _ in range(8):
            again = self._once(out)
            if again == out:
                break
            out = again
        return out

    def _once(self, text: str) -> str:
        if self.nfkc:
            text = unicodedata.normalize("NFKC", text)
        if self.ignore_case:
            text = text.casefold()
        tables = _tables()
        if self.ignore_punctuation:
            text = tables.delete.sub("", text)
            if _ASTRAL_RE.search(text):
                text = tables.delete_astral.sub("", text)
        if self.remove_articles:
            text = tables.articles.sub(" ", text)
        if self.trim_punctuation and not self.ignore_punctuation:
            # Looping over a frozenset beats str.strip with the 850 characters to strip.
            trim = tables.trim
            start, end = 0, len(text)
            while start < end and text[start] in trim:
                start += 1
            while end > start and text[end - 1] in trim:
                end -= 1
            text = text[start:end]
        return " ".join(text.split())


_DEFAULT_NORMALIZER: Final = Normalizer()


# --- Tokenisation --------------------------------------------------------------------------------


def tokenize(text: str) -> list[str]:
    """Split a text into tokens.

    Tokens are whitespace-separated words, except that every character of a script written
    without spaces is a token of its own, also inside mixed text: Chinese (Han ideographs with
    all extensions and compatibility ideographs, Bopomofo, CJK symbols such as ``々`` and
    ``。``), Japanese (Hiragana, Katakana including halfwidth forms and extensions), Thai and
    Burmese (Myanmar). Korean is written with spaces and split on whitespace like English.

    Args:
        text: The text to split, usually already normalised.

    Returns:
        The tokens in order; none is empty or contains whitespace.

    Example:
        >>> tokenize("iPhone 15 は")
        ['iPhone', '15', 'は']
        >>> tokenize("abc日本def")
        ['abc', '日', '本', 'def']
    """
    if text.isascii():
        return text.split()
    return _token_re().findall(text)


# --- Label extraction ----------------------------------------------------------------------------


def _check_labels(labels: Sequence[str]) -> tuple[str, ...]:
    if isinstance(labels, str):
        raise TypeError(
            f"`labels` must be a sequence of strings, not the single string {labels!r}: "
            f"write [{labels!r}]."
        )
    checked = tuple(labels)
    for index, label in enumerate(checked):
        if not isinstance(label, str):
            raise TypeError(
                f"`labels` must hold only strings, but labels[{index}] is {label!r} "
                f"of type {type(label).__name__}."
            )
    if not checked:
        raise ConfigError("`labels` is empty: give at least one label to extract.")
    return checked


@final
class LabelExtractor:
    """Map free-form answers to one of a fixed set of labels (compiled once, called per answer).

    The rules, applied to the answer and the labels after normalising them the same way:

    1. If the answer equals a label, that label.
    2. Otherwise, if exactly one label appears in the answer, that label. The longest match
       wins: a match lying inside the match of a longer label is discarded, so with the labels
       ``positive`` and ``very positive`` the answer "It is very positive." gives
       ``very positive``. When two or more different labels remain ("positive or negative"),
       the answer is ambiguous and no label is found.
    3. Otherwise no label: calling the extractor returns the answer unchanged.

    Labels in spaced scripts (English, but also Korean, Russian, Hindi...) must appear as whole
    words: not preceded or followed by a letter, digit or combining mark of a spaced script, so
    ``positive`` is not found in ``nonpositive`` or ``positively``. A label containing a
    character of a script written without spaces (Chinese, Japanese, Thai, Burmese) matches
    anywhere. Labels are returned exactly as spelled in ``labels``; when two labels normalise to
    the same text, the first one is used.

    Args:
        labels: The labels, at least one.
        normalizer: How answers and labels are normalised; ``Normalizer()`` when None.

    Raises:
        TypeError: ``labels`` is a single string or holds something that is not a string.
        ConfigError: ``labels`` is empty (a ``ValueError``).

    Example:
        >>> extractor = LabelExtractor(["positive", "negative", "very positive"])
        >>> extractor("It is very positive.")
        'very positive'
        >>> extractor("Positive or negative?")
        'Positive or negative?'
    """

    __slots__ = ("_exact", "_labels", "_normalizer", "_searches")

    def __init__(self, labels: Sequence[str], normalizer: Normalizer | None = None) -> None:
        self._labels = _check_labels(labels)
        self._normalizer = _DEFAULT_NORMALIZER if normalizer is None else normalizer
        exact: dict[str, str] = {}
        for label in self._labels:
            exact.setdefault(self._normalizer(label), label)
        self._exact = exact
        # A label that normalises to nothing would be found everywhere: it only matches by rule 1.
        self._searches = tuple(
            (needle, _unspaced_re().search(needle) is not None, label)
            for needle, label in exact.items()
            if needle
        )

    @property
    def labels(self) -> tuple[str, ...]:
        """The labels, as given."""
        return self._labels

    @property
    def normalizer(self) -> Normalizer:
        """The normalizer applied to answers and labels."""
        return self._normalizer

    def __repr__(self) -> str:
        return f"LabelExtractor({list(self._labels)!r}, normalizer={self._normalizer!r})"

    def __call__(self, answer: str) -> str:
        """The label of one answer, spelled as in ``labels``, or else ``answer`` unchanged."""
        label = self.find(answer)
        return answer if label is None else label

    def find(self, answer: str) -> str | None:
        """The label of one answer, spelled as in ``labels``.

        None when the answer equals no label and mentions no label or more than one.
        """
        text = self._normalizer(answer)
        label = self._exact.get(text)
        if label is not None:
            return label
        hits: list[tuple[int, int, str]] = []
        for needle, anywhere, label in self._searches:
            start = text.find(needle)
            while start >= 0:
                end = start + len(needle)
                if anywhere or (
                    (start == 0 or not _is_word_char(text[start - 1]))
                    and (end == len(text) or not _is_word_char(text[end]))
                ):
                    hits.append((start, end, label))
                start = text.find(needle, start + 1)
        if not hits:
            return None
        found = {hit[2] for hit in hits}
        if len(found) == 1:
            return hits[0][2]
        # Drop every match lying inside another one. Sorted by start, longest first, a match is
        # inside another exactly when an earlier one reaches at least as far. Two matches of
        # different labels never share a span: their labels would normalise to the same text.
        found.clear()
        reach = -1
        for _, end, label in sorted(hits, key=lambda hit: (hit[0], -hit[1])):
            if end > reach:
                found.add(label)
                reach = end
        return found.pop() if len(found) == 1 else None


@functools.lru_cache(maxsize=256)
def _cached_extractor(labels: tuple[str, ...], normalizer: Normalizer | None) -> LabelExtractor:
    return LabelExtractor(labels, normalizer)


def extract_label(answer: str, labels: Sequence[str], normalizer: Normalizer | None = None) -> str:
    """Map a free-form answer to one of ``labels``, or return it unchanged.

    Applies the rules of :class:`LabelExtractor`; extractors are compiled once per distinct
    ``(labels, normalizer)`` and reused. Build a :class:`LabelExtractor` yourself to keep one
    around, or to tell "no label" (None from :meth:`LabelExtractor.find`) from an answer that
    happens to be spelled like a label.

    Args:
        answer: The model's answer.
        labels: The labels, at least one.
        normalizer: How answers and labels are normalised; ``Normalizer()`` when None.

    Returns:
        The label found, spelled as in ``labels``; otherwise ``answer`` unchanged (never None).

    Raises:
        TypeError: ``labels`` is a single string or holds something that is not a string.
        ConfigError: ``labels`` is empty (a ``ValueError``).

    Example:
        >>> extract_label("The sentiment is Positive.", ["positive", "negative"])
        'positive'
    """
    if isinstance(labels, str):
        _check_labels(labels)  # raises the explanatory TypeError
    key = labels if type(labels) is tuple else tuple(labels)
    try:
        extractor = _cached_extractor(key, normalizer)
    except TypeError:
        # An unhashable label: build uncached, which raises the explanatory TypeError.
        extractor = LabelExtractor(key, normalizer)
    return extractor(answer)
