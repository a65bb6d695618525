"""Multiple-choice letters: the choices of an item, its answer key, and the letters an output gives.

The choices come from ``item.metadata["choices"]`` (the role ``choices`` of a data file): a
list of option texts, or a string holding a JSON list. Option ``i`` is the letter ``A + i``, so
at most 26 choices; without choices every letter A-Z is allowed.

An output's letters, in order of preference:

1. An ``ANSWER: ...`` line, read exactly as inspect_ai's ``multiple_choice`` solver reads it
   (``parse_answers`` with several answers allowed): ``$B$``, ``**B**`` and ``(B)`` unwrapped,
   the last such line, its letters separated by commas, spaces or "and", or written together
   (``AC``).
2. Otherwise the output as a whole: a letter or several (``B``, ``(B)``, ``B)``, ``B.``,
   ``A, C``, ``A and C``), any case.
3. Otherwise "answer is B" / "answer: (B)" anywhere, the last one.
4. Otherwise an option label at the start: ``B) Paris``, ``(B) Paris``, ``B. Paris``,
   ``B: Paris``.
5. Otherwise an output equal to one choice's text (case, punctuation and spacing aside).

A letter beyond the choices is no valid answer.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Mapping, Sequence
from typing import Any, Final

from itemscore.text import Normalizer

__all__ = ["answer_letters", "expected_letters", "letters_text", "read_choices"]

_LETTERS: Final = string.ascii_uppercase
_NORMALIZE: Final = Normalizer(ignore_punctuation=True)

# inspect_ai's parse_answers (solver/_multiple_choice.py), its wrappers and its two patterns.
_DOLLARS: Final = re.compile(r"\x24\s*([A-Za-z\d][A-Za-z\d ,]*?)\s*\x24")
_BOLD: Final = re.compile(r"\*\*\s*([A-Za-z\d][A-Za-z\d ,]*?)\s*\*\*")
_PARENS: Final = re.compile(r"(?i)(^|[:,])(\s*)\(([A-Za-z\d])\)(?=\s*(?:,|\.|\n|\Z))")
_STRICT: Final = re.compile(r"(?i)^ANSWER\s*:\s*([A-Za-z\d ,]+)\s*(?:$|\n|\.)", re.MULTILINE)
_LENIENT: Final = re.compile(r"(?i)ANSWER\s*:\s*([A-Za-z\d ,]+)(?:[^\w]|\n|$|\.)")

_ONE: Final = r"\(?([A-Za-z])\)?"
_SET: Final = re.compile(rf"^{_ONE}((?:\s*(?:,|/|&|\band\b|\s)\s*{_ONE})*)[.)]?$", re.IGNORECASE)
_SET_MEMBER: Final = re.compile(_ONE)
# After "answer is" / "answer:", capital letters (or any letter in parentheses): "a cat" is
# no answer, "(a)" is.
_SAID: Final = r"(?:\([A-Za-z]\)|[A-Z])"
_SAYS: Final = re.compile(
    rf"(?i:\banswer\s*(?:is|:|-)\s*(?:option\s+|choice\s+)?)"
    rf"({_SAID}(?:\s*(?:,|/|&|\b(?i:and)\b|\s)\s*{_SAID})*)(?![A-Za-z])"
)
_LABEL: Final = re.compile(r"^\s*\(?([A-Z])(?:\)|\.|:)\s+\S")


def read_choices(metadata: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The item's choices from ``metadata["choices"]``, or ``None`` when it has none.

    Raises:
        ValueError: ``choices`` is not a list of strings (or a JSON list of them), or holds
            more than 26.
    """
    value = metadata.get("choices") if metadata else None
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError(
                f"metadata['choices'] ({value!r}) must be a list of the option texts, or a "
                "string holding a JSON list of them."
            ) from None
    if (
        not isinstance(value, Sequence)
        or isinstance(value, str)
        or not all(isinstance(v, str) for v in value)
    ):
        raise ValueError(f"metadata['choices'] ({value!r}) must be a list of strings.")
    if len(value) > len(_LETTERS):
        raise ValueError(
            f"metadata['choices'] has {len(value)} options; letters A-Z name at most 26."
        )
    return tuple(value)


def letters_text(indices: frozenset[int]) -> str:
    """``"A, C"`` for the options 0 and 2."""
    return ", ".join(_LETTERS[i] for i in sorted(indices))


def expected_letters(
    expected: Sequence[str], choices: Sequence[str] | None, index_base: int
) -> frozenset[int]:
    """The options an answer key requires: every letter of every valid answer, as one set.

    Each valid answer holds letters (``B``, ``A, C``, ``AC``, ``(B)``), option numbers counted
    from ``index_base``, or a choice's text.

    Raises:
        ValueError: an answer names no option, or one beyond the choices.
    """
    n = len(choices) if choices is not None else len(_LETTERS)
    by_text = {} if choices is None else {_NORMALIZE(c): i for i, c in enumerate(choices)}
    found: set[int] = set()
    for answer in expected:
        text_index = by_text.get(_NORMALIZE(answer))
        if text_index is not None:
            found.add(text_index)
            continue
        tokens = re.sub(r"\band\b", " ", answer.replace(",", " ")).split()
        for token in tokens:
            token = token.strip("()[].")
            if token.isdecimal():
                index = int(token) - index_base
            elif token.isalpha() and (token.isupper() or len(token) == 1):
                for letter in token.upper():
                    index = _LETTERS.index(letter) if letter in _LETTERS else n
                    if index >= n:
                        raise ValueError(_beyond(answer, n))
                    found.add(index)
                continue
            else:
                raise ValueError(
                    f"The answer key {answer!r} names no option: give letters (B, or A, C), "
                    f"option numbers counted from {index_base}, or a choice's text."
                )
            if not 0 <= index < n:
                raise ValueError(_beyond(answer, n))
            found.add(index)
    if not found:
        raise ValueError(f"The answer key {list(expected)!r} names no option.")
    return frozenset(found)


def _beyond(answer: str, n: int) -> str:
    return (
        f"The answer key {answer!r} names an option beyond the {n} choices (A-{_LETTERS[n - 1]})."
    )


def _unwrapped(completion: str) -> str:
    """``$B$``, ``**B**`` and ``(B)`` unwrapped, as inspect_ai's ``parse_answers`` does."""
    completion = _DOLLARS.sub(r"\1", completion)
    completion = _BOLD.sub(r"\1", completion)
    return _PARENS.sub(r"\1\2\3", completion)


def _inspect_letters(completion: str, n: int) -> frozenset[int] | None:
    """inspect_ai's ``parse_answers(state, multiple_correct=True)``; ``None``: no ANSWER line."""
    completion = _unwrapped(completion)
    matches = _STRICT.findall(completion) or _LENIENT.findall(completion)
    if not matches:
        return None
    matched = matches[-1].strip().rstrip(".").upper()
    allowed = set(_LETTERS[:n])
    matched = matched.replace(" AND ", ",").replace(" ", "")
    split_comma = {x for x in matched.split(",") if x}
    if split_comma and split_comma <= allowed:
        return frozenset(_LETTERS.index(x) for x in split_comma)
    split_nothing = set(matched)
    if split_nothing and split_nothing <= allowed:
        return frozenset(_LETTERS.index(x) for x in split_nothing)
    return frozenset()


def answer_letters(output: str, choices: Sequence[str] | None) -> frozenset[int] | None:
    """The options an output gives (see the module docstring), or ``None`` for none.

    An empty set means the output gave letters, but not all of them name a choice.
    """
    n = len(choices) if choices is not None else len(_LETTERS)
    strict = _inspect_letters(output, n)
    if strict is not None:
        return strict or None
    text = output.strip().strip("*_").strip()
    if _SET.match(text) is not None:
        members = re.sub(r"\band\b", ",", text, flags=re.IGNORECASE)
        return _within({m.group(1).upper() for m in _SET_MEMBER.finditer(members)}, n)
    says = _SAYS.findall(_unwrapped(output))
    if says:
        members = re.sub(r"\band\b", ",", says[-1], flags=re.IGNORECASE)
        return _within({m.group(1).upper() for m in _SET_MEMBER.finditer(members)}, n)
    label = _LABEL.match(output)
    if label is not None:
        return _within({label.group(1)}, n)
    if choices is not None:
        wanted = _NORMALIZE(output)
        for index, choice in enumerate(choices):
            if wanted and _NORMALIZE(choice) == wanted:
                return frozenset({index})
    return None


def _within(letters: set[str], n: int) -> frozenset[int] | None:
    indices = {_LETTERS.index(letter) for letter in letters}
    return frozenset(indices) if all(i < n for i in indices) else None
