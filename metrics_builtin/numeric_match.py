"""``numeric_match``: the number in the output equals a numeric answer, within tolerances."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from itemscore import OptionError
from itemscore.metrics_builtin._comparison import NormalizedMetric, Verdict
from itemscore.metrics_builtin._extract import Pick
from itemscore.metrics_builtin._numbers import Number, find_numbers, parse_number

__all__ = ["NumericMatch"]


class NumericMatch(NormalizedMetric[tuple[tuple[str, Number], ...]]):
    """Share of items whose number equals the numeric answer (GSM8K-style), within tolerances.

    Numbers are read with thousands separators, signs, decimals, exponents, fractions (``3/4``)
    and percentages (``60%`` is 60, the number written), currency signs and units ignored
    (``$1,234.50``, ``5 kg``, ``5kg``). ``pick`` chooses the number of the output: the
    ``last`` (default, the conclusion of a chain of thought), the ``first``, or a regular
    expression whose first match's group (or whole match) holds it, e.g. ``#### (.*)``. Each
    valid answer must be a single number, else the item is an ``error``. The output's number
    matches when it equals a valid answer exactly (both read as exact fractions), or, with
    ``abs_tol`` or ``rel_tol``, when ``math.isclose`` says so. ``significant_digits`` rounds
    both first, as inspect_ai's ``match(numeric=True)`` does with 5. An output without a number
    is ``fail`` with the reason "no answer found".

    Per-item ``extra``: ``number`` (the number found, as written without thousands separators,
    or ``None``) and ``matched`` (the valid answer it matched, or ``None``).

    Args:
        pick: `last` or `first` number of the output, or a regex whose group holds it.
        abs_tol: Largest absolute difference still counted as equal.
        rel_tol: Largest difference relative to the larger magnitude still counted as equal.
        significant_digits: Compare numbers rounded to this many significant digits (inspect's
            `match(numeric=True)` uses 5); none: unrounded.
    """

    metric_id = "numeric_match"
    display_name = "Numeric match"
    description = (
        "Share of rows whose (last) number equals the numeric reference answer, within "
        "tolerances; thousands separators, fractions, percentages and units understood."
    )
    aggregation = "ratio"
    _finds_answers = True

    def __init__(
        self,
        *,
        pick: str = "last",
        abs_tol: float = 0.0,
        rel_tol: float = 0.0,
        significant_digits: int | None = None,
        count_failed: bool = True,
        extract: str | None = None,
        extract_pick: Pick | None = None,
    ) -> None:
        super().__init__(count_failed=count_failed, extract=extract, extract_pick=extract_pick)
        for name, tolerance in (("abs_tol", abs_tol), ("rel_tol", rel_tol)):
            if not tolerance >= 0:
                raise OptionError(
                    f"Metric 'numeric_match': `{name}` ({tolerance!r}) must be 0 or more.",
                    metric_id="numeric_match",
                    option=name,
                )
        if significant_digits is not None and significant_digits < 1:
            raise OptionError(
                f"Metric 'numeric_match': `significant_digits` ({significant_digits}) must be "
                "at least 1, or none.",
                metric_id="numeric_match",
                option="significant_digits",
            )
        self.pick = pick
        self.abs_tol = abs_tol
        self.rel_tol = rel_tol
        self.significant_digits = significant_digits
        self._pattern: re.Pattern[str] | None = None
        if pick not in ("first", "last"):
            try:
                self._pattern = re.compile(pick)
            except re.error as exc:
                raise OptionError(
                    f"Metric 'numeric_match': `pick` ({pick!r}) must be 'last', 'first' or a "
                    f"regular expression whose group holds the number: {exc}.",
                    metric_id="numeric_match",
                    option="pick",
                    allowed=("last", "first"),
                ) from None

    def _prepare(self, expected: tuple[str, ...]) -> tuple[tuple[str, Number], ...]:
        answers = []
        for answer in expected:
            number = parse_number(answer)
            if number is None:
                raise ValueError(
                    f"The valid answer {answer!r} is not a single number: numeric_match needs "
                    "answers such as '42', '-3.5', '1,234', '3/4' or '60%'."
                )
            answers.append((answer, number))
        return tuple(answers)

    def _number(self, output: str) -> Number | None:
        pattern = self._pattern
        if pattern is None:
            numbers = find_numbers(output)
            if not numbers:
                return None
            return numbers[-1] if self.pick == "last" else numbers[0]
        match = pattern.search(output)
        if match is None:
            return None
        groups = [g for g in match.groups() if g]
        numbers = find_numbers(groups[0] if groups else match.group(0))
        return numbers[-1] if numbers else None

    def _equal(self, found: Number, answer: Number) -> bool:
        digits = self.significant_digits
        if digits is not None:
            return format(float(found.value), f".{digits}g") == format(
                float(answer.value), f".{digits}g"
            )
        if self.abs_tol == 0.0 and self.rel_tol == 0.0:
            return found.value == answer.value
        return math.isclose(
            float(found.value), float(answer.value), rel_tol=self.rel_tol, abs_tol=self.abs_tol
        )

    def _verdict(
        self,
        output: str,
        prepared: tuple[tuple[str, Number], ...],
        normalize: Callable[[str], str],
    ) -> Verdict:
        found = self._number(output)
        if found is None:
            return self._no_answer(prepared)
        for answer, number in prepared:
            if self._equal(found, number):
                return (True, 1.0, {"number": found.text, "matched": answer})
        return (False, 0.0, {"number": found.text, "matched": None})

    def _failed_extra(self, prepared: tuple[tuple[str, Number], ...]) -> Mapping[str, Any]:
        return {"number": None, "matched": None}
