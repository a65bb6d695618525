"""``token_f1``: SQuAD-style token-overlap F1 between the output and the best valid answer."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any, Literal

from itemscore.metrics_builtin._comparison import NormalizedMetric, Verdict
from itemscore.metrics_builtin._extract import Pick
from itemscore.metrics_builtin._squad import normalizer_for
from itemscore.text import tokenize

__all__ = ["TokenF1", "token_scores"]

#: A valid answer as given, its tokens, and their counts (only for long answers).
_Reference = tuple[str, list[str], "Mapping[str, int] | None"]

#: The normalisation options ``normalization="squad"`` replaces, with their defaults.
_NORMALISATION_DEFAULTS = {
    "ignore_case": True,
    "ignore_punctuation": True,
    "remove_articles": False,
    "nfkc": True,
}

# Below this many token pairs, counting the overlap by scanning a list beats building Counters.
_SMALL = 256
# Answers with more tokens than this get their token counts computed once, ahead of time.
_LONG = 16


def token_scores(pred: list[str], gold: list[str]) -> tuple[float, float, float]:
    """``(f1, precision, recall)`` of two token lists, compared as multisets (SQuAD's rule).

    Both empty gives 1.0 for all three, one empty 0.0. A token counts as shared as many times
    as it occurs in both lists (the ``Counter`` intersection).

    Args:
        pred: The output's tokens.
        gold: The valid answer's tokens.

    Returns:
        F1, precision and recall, each in [0, 1].
    """
    return _scores(pred, gold, None)


def _scores(
    pred: list[str], gold: list[str], gold_counts: Mapping[str, int] | None
) -> tuple[float, float, float]:
    if not pred or not gold:
        same = 1.0 if not pred and not gold else 0.0
        return same, same, same
    if pred == gold:
        return 1.0, 1.0, 1.0
    if len(pred) * len(gold) <= _SMALL:
        remaining = list(gold)
        common = 0
        for token in pred:
            if token in remaining:
                remaining.remove(token)
                common += 1
    else:
        left = dict(gold_counts if gold_counts is not None else Counter(gold))
        common = 0
        for token in pred:
            count = left.get(token)
            if count:
                left[token] = count - 1
                common += 1
    if common == 0:
        return 0.0, 0.0, 0.0
    # 2c / (|pred| + |gold|): the harmonic mean of precision and recall in one rounding step,
    # so the value is the same float as a plain loop computing it that way.
    return 2.0 * common / (len(pred) + len(gold)), common / len(pred), common / len(gold)


class TokenF1(NormalizedMetric[tuple[_Reference, ...]]):
    """SQuAD-style token-overlap F1 between the output and its best-matching valid answer.

    Output and valid answers are normalised (punctuation is always trimmed, and by default
    removed everywhere), then split into tokens with :func:`itemscore.text.tokenize`: words
    separated by whitespace, and every character of Chinese, Japanese, Thai and Burmese as a
    token of its own. Precision and recall count shared tokens as multisets (a token shared
    twice counts twice); F1 is their harmonic mean. Both token lists empty gives 1.0, one empty
    0.0. With several valid answers, the one with the highest F1 is used (the first of equals).

    Status: every answered item is ``ok`` with its F1 as the value, 0.0 included. F1 is partial
    credit with no pass mark to split ok from fail, so ``fail`` is kept for failed requests
    only (value 0.0; ``skip`` with ``count_failed=False``). The headline number is the mean F1
    over scored items, with a normal interval.

    Per-item ``extra``: ``best_reference`` (the valid answer used, as given), ``precision``
    and ``recall`` (against that answer).

    ``normalization="squad"`` reproduces the official SQuAD v1.1 F1: the evaluation script's
    normalisation, tokens split on whitespace only, and an F1 of 0 for an output that normalises
    to nothing, whatever the answer.

    Args:
        ignore_punctuation: Remove all punctuation, including inside the text.
        remove_articles: Remove English articles (a, an, the), as in SQuAD.
        normalization: `itemscore` normalises as the options say; `squad` exactly as the
            official SQuAD v1.1 evaluation does, in place of the other normalisation options.

    Raises:
        ValueError: ``normalization="squad"`` with a normalisation option off its default.
    """

    metric_id = "token_f1"
    display_name = "Token F1"
    description = (
        "Token-overlap F1 between output and reference (SQuAD-style), averaged over rows; "
        "characters count as tokens in Chinese, Japanese, Thai, and Burmese."
    )
    aggregation = "mean"
    value_bounds = (0.0, 1.0)

    def __init__(
        self,
        *,
        ignore_case: bool = True,
        ignore_punctuation: bool = True,
        remove_articles: bool = False,
        nfkc: bool = True,
        count_failed: bool = True,
        normalization: Literal["itemscore", "squad"] = "itemscore",
        extract: str | None = None,
        extract_pick: Pick | None = None,
    ) -> None:
        super().__init__(
            ignore_case=ignore_case,
            trim_punctuation=True,
            ignore_punctuation=ignore_punctuation,
            nfkc=nfkc,
            count_failed=count_failed,
            extract=extract,
            extract_pick=extract_pick,
        )
        self.remove_articles = remove_articles
        self.normalization = normalization
        #: Splits a normalised text into tokens.
        self._split: Callable[[str], list[str]] = tokenize
        #: SQuAD v1.1 scores an output without tokens 0, even against an answer without any.
        self._squad = normalization == "squad"
        self.normalizer = normalizer_for(
            self.metric_id,
            normalization,
            {
                "ignore_case": ignore_case,
                "trim_punctuation": True,
                "ignore_punctuation": ignore_punctuation,
                "remove_articles": remove_articles,
                "nfkc": nfkc,
            },
            {**_NORMALISATION_DEFAULTS, "trim_punctuation": True},
        )
        if self._squad:
            self._split = str.split

    def _prepare(self, expected: tuple[str, ...]) -> tuple[_Reference, ...]:
        normalize, split = self.normalizer, self._split
        references = []
        for answer in expected:
            tokens = split(normalize(answer))
            counts = Counter(tokens) if len(tokens) > _LONG else None
            references.append((answer, tokens, counts))
        return tuple(references)

    def _verdict(
        self, output: str, prepared: tuple[_Reference, ...], normalize: Callable[[str], str]
    ) -> Verdict:
        pred = self._split(normalize(output))
        if not pred and self._squad:
            extra = {"best_reference": prepared[0][0], "precision": 0.0, "recall": 0.0}
            return (True, 0.0, extra)
        best = (-1.0, 0.0, 0.0)
        best_reference = prepared[0][0]
        squad = self._squad
        for answer, tokens, counts in prepared:
            scores = _scores(pred, tokens, counts)
            if squad and scores[0]:
                # The official script's rounding: 2pr / (p + r), to reproduce it to the digit.
                _, p, r = scores
                scores = ((2 * p * r) / (p + r), p, r)
            if scores[0] > best[0]:
                best, best_reference = scores, answer
                if scores[0] == 1.0:
                    break
        f1, precision, recall = best
        extra = {"best_reference": best_reference, "precision": precision, "recall": recall}
        return (True, f1, extra)

    def _failed_extra(self, prepared: tuple[_Reference, ...]) -> Mapping[str, Any]:
        return {"best_reference": None, "precision": 0.0, "recall": 0.0}
