"""``choice``: multiple choice graded by letter, as inspect_ai's ``choice()`` grades."""

from __future__ import annotations

from typing import Any, Literal

from itemscore import ItemResult, ItemScore, Metric, MetricContext
from itemscore.metrics_builtin._comparison import FAILED_REASON, NO_ANSWER_KEY
from itemscore.metrics_builtin._extract import NO_ANSWER_FOUND, Pick, answer_extractor
from itemscore.metrics_builtin._letters import (
    answer_letters,
    expected_letters,
    letters_text,
    read_choices,
)

__all__ = ["Choice"]


class Choice(Metric):
    """Share of multiple-choice items answered with exactly the right letter(s).

    The choices are ``item.metadata["choices"]`` (the role ``choices`` of a data file: a list
    of option texts, or a string holding a JSON list); option ``i`` is the letter ``A + i``.
    Without choices any letter A-Z is an answer. The answer key is one set of required
    options: every letter of every valid answer (``"B"``, ``"A, C"``, ``"AC"``, or
    ``["A", "C"]`` as two valid answers), an option number counted from ``index_base``
    (``"2"``), or a choice's text. The item is ``ok`` when the output gives exactly that set,
    as inspect_ai's ``choice()`` grades several correct answers.

    The output's letters are read from an ``ANSWER: B`` line exactly as inspect's
    ``multiple_choice`` solver reads it; failing that from a bare ``B``, ``(B)``, ``B)`` or
    ``A, C``, then "the answer is (B)", then an option label such as ``B) Paris`` at the start,
    then an output equal to one choice's text. An output giving no letter, or a letter beyond
    the choices, is ``fail`` with the reason "no answer found". An answer key naming no
    option, or an option beyond the choices, is that item's ``error``.

    Per-item ``extra``: ``answer`` (the letters given, ``"A, C"``, or ``None``) and
    ``expected`` (the letters required).

    Args:
        index_base: What the first option is numbered in an answer key given as numbers (0, as
            in most data sets, or 1).
        count_failed: Score failed requests as wrong. `false` leaves them out.
        extract: Read the letters only from the answer found in the output: a regex (its group
            is the answer), or a preset `answer_is`, `boxed`, `last_number`; an output without
            one is `fail` with the reason "no answer found".
        extract_pick: Which match of `extract` counts, `first` or `last`; none: `first` for a
            regex, `last` for a preset.
    """

    metric_id = "choice"
    display_name = "Choice accuracy"
    description = (
        "Share of multiple-choice rows answered with exactly the right letter(s), graded as "
        "inspect_ai's choice(); choices from the `choices` column."
    )
    required_inputs = ("expected",)
    reproducibility_class = "deterministic"
    higher_is_better = True
    aggregation = "ratio"

    def __init__(
        self,
        *,
        index_base: Literal[0, 1] = 0,
        count_failed: bool = True,
        extract: str | None = None,
        extract_pick: Pick | None = None,
    ) -> None:
        self.index_base = index_base
        self.count_failed = count_failed
        self.extract = extract
        self.extract_pick = extract_pick
        self.answer_extractor = answer_extractor("choice", extract, extract_pick)

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore | None:
        """Grade one item's letters against its answer key."""
        expected = item.expected
        if not expected:
            return self.skip(NO_ANSWER_KEY)
        choices = read_choices(item.metadata)
        required = expected_letters(expected, choices, self.index_base)
        extra: dict[str, Any] = {"answer": None, "expected": letters_text(required)}
        output = item.output
        if output is None:
            return self.fail(extra=extra) if self.count_failed else self.skip(FAILED_REASON)
        extractor = self.answer_extractor
        text = output if extractor is None else extractor(output)
        if extractor is not None:
            extra["extracted"] = text
        given = None if text is None else answer_letters(text, choices)
        if given is None:
            return ItemScore(
                metric=self.label, value=0.0, status="fail", reason=NO_ANSWER_FOUND, extra=extra
            )
        extra["answer"] = letters_text(given)
        return self.ok(extra=extra) if given == required else self.fail(extra=extra)
