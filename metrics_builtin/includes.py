"""``includes``: the output contains one of the valid answers, after normalisation."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from itemscore.metrics_builtin._comparison import NormalizedMetric, Verdict
from itemscore.metrics_builtin._extract import Pick
from itemscore.text import LabelExtractor, Normalizer

__all__ = ["Includes"]

#: A valid answer as given, its normalised form, and its whole-word finder (``None``: any).
_Answer = tuple[str, str, "LabelExtractor | None"]


class Includes(NormalizedMetric[tuple[_Answer, ...]]):
    """Share of items whose output contains one of the valid answers, as inspect's ``includes()``.

    Output and valid answers are normalised the same way (case, NFKC, punctuation trimmed at
    both ends, whitespace collapsed); the item is ``ok`` when a normalised answer occurs in the
    normalised output. With ``nfkc=False, trim_punctuation=False`` this is exactly inspect_ai's
    ``includes()`` (``target.casefold() in output.casefold()``) except for runs of whitespace,
    which itemscore always collapses. With ``whole_words``, an answer must stand as whole
    words, as label extraction finds labels (``cat`` is not in ``concatenate``; in Chinese,
    Japanese, Thai or Burmese text an answer matches anywhere). A valid answer that normalises
    to nothing would be in every output: that item is an ``error``.

    Per-item ``extra``: ``normalized`` (the normalised output) and ``matched`` (the valid answer
    found, as spelled in the answer key, or ``None``).

    Args:
        whole_words: The answer must appear as whole words, not inside a longer word.
    """

    metric_id = "includes"
    display_name = "Includes"
    description = "Share of rows whose output contains a reference answer after normalisation."
    aggregation = "ratio"

    def __init__(
        self,
        *,
        whole_words: bool = False,
        ignore_case: bool = True,
        trim_punctuation: bool = True,
        ignore_punctuation: bool = False,
        nfkc: bool = True,
        count_failed: bool = True,
        extract: str | None = None,
        extract_pick: Pick | None = None,
    ) -> None:
        super().__init__(
            ignore_case=ignore_case,
            trim_punctuation=trim_punctuation,
            ignore_punctuation=ignore_punctuation,
            nfkc=nfkc,
            count_failed=count_failed,
            extract=extract,
            extract_pick=extract_pick,
        )
        self.whole_words = whole_words

    def _prepare(self, expected: tuple[str, ...]) -> tuple[_Answer, ...]:
        normalize = self.normalizer
        answers = []
        for answer in expected:
            form = normalize(answer)
            if not form:
                raise ValueError(
                    f"The valid answer {answer!r} normalises to nothing, so every output would "
                    "include it: fix the answer key, or turn trim_punctuation or "
                    "ignore_punctuation off."
                )
            finder = (
                LabelExtractor([answer], cast(Normalizer, normalize)) if self.whole_words else None
            )
            answers.append((answer, form, finder))
        return tuple(answers)

    def _verdict(
        self, output: str, prepared: tuple[_Answer, ...], normalize: Callable[[str], str]
    ) -> Verdict:
        text = normalize(output)
        for answer, form, finder in prepared:
            found = finder.find(output) is not None if finder is not None else form in text
            if found:
                return (True, 1.0, {"normalized": text, "matched": answer})
        return (False, 0.0, {"normalized": text, "matched": None})

    def _failed_extra(self, prepared: tuple[_Answer, ...]) -> Mapping[str, Any]:
        return {"normalized": None, "matched": None}
