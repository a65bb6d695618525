r"""The ``extract`` option of the text metrics: the answer pulled out of a longer output.

A chain of thought ends with "The answer is 42."; a math model writes ``\boxed{42}``. With
``extract``, a text metric scores the answer found in the output instead of the whole output,
and an output in which none is found is ``fail`` with the reason :data:`NO_ANSWER_FOUND` (the
raw text is never scored in its place). ``extract`` is a regular expression or a preset:

- a regex: matched as lm-eval's ``regex`` filter matches (``re.findall``): with no group the
  whole match is the answer, with one group that group, with several the first non-empty group
  (a picked match whose groups are all empty is no answer, as lm-eval falls back); the answer
  is stripped of surrounding whitespace. ``extract_pick`` ``"first"`` (the default for a
  regex, as lm-eval's ``group_select: 0``) or ``"last"`` (``group_select: -1``) chooses among
  the matches.
- ``"answer_is"``: what follows "answer is" or "answer:" (any case, markdown emphasis allowed)
  up to the end of its sentence (a period before a space) or line; the last one by default.
- ``"boxed"``: the content of ``\boxed{...}`` (or ``\fbox{...}``, braces balanced), or of
  ``\boxed X`` up to the next ``$``, as lm-eval's minerva_math ``last_boxed_only_string`` and
  ``remove_boxed`` read it; the last one by default.
- ``"last_number"``: the last number of the output (the grammar of ``numeric_match``), as
  written but without thousands separators: "It costs $1,234.50." gives ``1234.50``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Final, Literal

from itemscore import OptionError

__all__ = [
    "NO_ANSWER_FOUND",
    "PRESETS",
    "AnswerExtractor",
    "Pick",
    "answer_extractor",
]

#: ``reason`` of an item whose output holds no answer that ``extract`` (or the metric) finds.
NO_ANSWER_FOUND: Final = "no answer found"

#: The preset names ``extract`` accepts besides a regular expression.
PRESETS: Final = ("answer_is", "boxed", "last_number")

Pick = Literal["first", "last"]

# "answer is X" / "Answer: X" / "**Final answer:** X", to the end of its sentence or line.
# lm-eval's tasks spell the same idea as "(?<=The answer is )(.*)(?=.)" (bbh, mmlu cot) and
# "The answer is (\-?[0-9\.\,]+)." (gsm8k-cot); this one also takes "answer:" and markdown.
_ANSWER_IS: Final = re.compile(
    r"\banswer[*_]*\s*(?:is\b|:)[\s*_:]*(.*?)[\s*_]*(?:\.+(?=\s|$)|$)",
    re.IGNORECASE | re.MULTILINE,
)
_BOXED_SPACE: Final = "\\boxed "


def _boxed(text: str) -> list[str]:
    r"""The contents of every ``\boxed{...}`` / ``\fbox{...}`` of ``text``, in order.

    Braces are balanced as lm-eval's minerva_math ``last_boxed_only_string`` balances them; a
    box never closed is no answer. ``\boxed X$`` (the space form) runs to the next ``$``.
    """
    found: list[tuple[int, str]] = []
    for match in re.finditer(r"\\(?:boxed|fbox)\s*\{", text):
        depth = 0
        for index in range(match.end() - 1, len(text)):
            char = text[index]
            if char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    found.append((match.start(), text[match.end() : index]))
                    break
    start = 0
    while True:
        start = text.find(_BOXED_SPACE, start)
        if start < 0:
            break
        body = text[start + len(_BOXED_SPACE) :].split("$")[0]
        found.append((start, body))
        start += len(_BOXED_SPACE)
    found.sort(key=lambda pair: pair[0])
    return [body.strip() for _, body in found]


def _answer_is(text: str) -> list[str]:
    return [answer for m in _ANSWER_IS.finditer(text) if (answer := m.group(1).strip())]


def _numbers(text: str) -> list[str]:
    # Here: the number grammar (and fractions) loads only for metrics that read numbers.
    from itemscore.metrics_builtin._numbers import find_numbers

    return [number.text for number in find_numbers(text)]


def _regex(pattern: re.Pattern[str]) -> Callable[[str], list[str | None]]:
    """lm-eval's ``RegexFilter`` reading of ``pattern``: one answer per ``findall`` match.

    With several groups the answer is the first non-empty one, and a match whose groups are
    all empty is ``None``: lm-eval picks the match first, then falls back when it is empty.
    """
    groups = pattern.groups

    def matches(text: str) -> list[str | None]:
        out: list[str | None] = []
        for match in pattern.findall(text):
            if groups > 1:
                match = next((m for m in match if m), None)
            out.append(None if match is None else match.strip())
        return out

    return matches


class AnswerExtractor:
    """Finds the answer in an output, as the ``extract`` option says; callable on a string.

    Args:
        extract: A regular expression or one of :data:`PRESETS`.
        pick: ``"first"`` or ``"last"`` match; ``None``: first for a regex, last for a preset.

    Raises:
        OptionError: ``extract`` is no valid regex, or ``pick="first"`` with ``last_number``.
    """

    __slots__ = ("_find", "extract", "pick")

    def __init__(self, extract: str, pick: Pick | None = None, *, metric_id: str = "") -> None:
        prefix = f"Metric {metric_id!r}: " if metric_id else ""
        finder: Callable[[str], Sequence[str | None]]
        if extract == "answer_is":
            finder = _answer_is
        elif extract == "boxed":
            finder = _boxed
        elif extract == "last_number":
            if pick == "first":
                raise OptionError(
                    f"{prefix}`extract` ('last_number') always takes the last number, so "
                    "`extract_pick` ('first') contradicts it: leave `extract_pick` out, or "
                    r"give a regex such as extract='(-?\d[\d,]*(?:\.\d+)?)' with "
                    "extract_pick='first'.",
                    metric_id=metric_id or None,
                    option="extract_pick",
                )
            finder = _numbers
        else:
            try:
                pattern = re.compile(extract)
            except re.error as exc:
                raise OptionError(
                    f"{prefix}`extract` ({extract!r}) is neither a preset "
                    f"({', '.join(repr(p) for p in PRESETS)}) nor a valid regular expression: "
                    f"{exc}.",
                    metric_id=metric_id or None,
                    option="extract",
                    allowed=PRESETS,
                ) from None
            finder = _regex(pattern)
            pick = pick or "first"
        self.extract = extract
        self.pick: Pick = pick or "last"
        self._find = finder

    def __call__(self, text: str) -> str | None:
        """The answer found in ``text``, or ``None`` when there is none."""
        found = self._find(text)
        if not found:
            return None
        return found[0] if self.pick == "first" else found[-1]

    def all(self, text: str) -> list[str]:
        """Every answer found in ``text``, in order."""
        return [answer for answer in self._find(text) if answer is not None]

    def __repr__(self) -> str:
        return f"AnswerExtractor({self.extract!r}, pick={self.pick!r})"


def answer_extractor(
    metric_id: str, extract: str | None, pick: Pick | None
) -> AnswerExtractor | None:
    """The extractor of a metric's ``extract``/``extract_pick`` options (``None``: none).

    Raises:
        OptionError: ``extract`` is not valid, or ``extract_pick`` is given without it.
    """
    if extract is None:
        if pick is not None:
            raise OptionError(
                f"Metric {metric_id!r}: `extract_pick` ({pick!r}) chooses among the matches of "
                "`extract`, which is not set: give `extract` too, or leave `extract_pick` out.",
                metric_id=metric_id,
                option="extract_pick",
            )
        return None
    if not isinstance(extract, str) or not extract:
        raise OptionError(
            f"Metric {metric_id!r}: `extract` ({extract!r}) must be a non-empty regex or one "
            f"of {', '.join(repr(p) for p in PRESETS)}.",
            metric_id=metric_id,
            option="extract",
            allowed=PRESETS,
        )
    return AnswerExtractor(extract, pick, metric_id=metric_id)
