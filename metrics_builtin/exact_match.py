"""``exact_match``: the output equals one of the valid answers after normalisation."""

from __future__ import annotations

from typing import Literal

from itemscore.metrics_builtin._comparison import AnswerMatchMetric, Rules
from itemscore.metrics_builtin._extract import Pick
from itemscore.metrics_builtin._squad import normalizer_for

__all__ = ["ExactMatch"]

#: The normalisation options ``normalization="squad"`` replaces, with their defaults.
_NORMALISATION_DEFAULTS = {
    "ignore_case": True,
    "trim_punctuation": True,
    "ignore_punctuation": False,
    "remove_articles": False,
    "nfkc": True,
}


class ExactMatch(AnswerMatchMetric):
    """Share of items whose output equals one of the valid answers after normalisation.

    Each item is ``ok`` (1.0) when its normalised output equals any of its normalised valid
    answers, else ``fail`` (0.0); the headline number is the share of ok among scored items,
    with a Wilson interval. With the defaults, full-width letters equal their ASCII forms and
    ``"Positive."`` equals ``positive``, while ``-5`` and ``5`` stay different.

    ``normalization="squad"`` reproduces the official SQuAD v1.1 exact match: outputs and valid
    answers are normalised by the evaluation script's rules (lower case, ASCII punctuation
    deleted, articles dropped, nothing else), which replace the other normalisation options.
    ``token_f1`` with ``normalization="squad"`` gives the matching F1.

    Per-item ``extra``: ``normalized`` (the normalised output) and ``matched`` (the valid answer
    it matched, as spelled in the answer key, or ``None``).

    Args:
        remove_articles: Remove English articles (a, an, the), as in SQuAD.
        normalization: `itemscore` normalises as the options say; `squad` exactly as the
            official SQuAD v1.1 evaluation does, in place of the other normalisation options.

    Raises:
        ValueError: ``normalization="squad"`` with a normalisation option off its default.
        OptionError: ``rules="harness"`` with a comparison option off its default.
    """

    metric_id = "exact_match"
    display_name = "Exact match"
    description = "Share of rows where the output equals a reference answer after normalisation."

    def __init__(
        self,
        *,
        ignore_case: bool = True,
        trim_punctuation: bool = True,
        ignore_punctuation: bool = False,
        remove_articles: bool = False,
        nfkc: bool = True,
        count_failed: bool = True,
        normalization: Literal["itemscore", "squad"] = "itemscore",
        extract: str | None = None,
        extract_pick: Pick | None = None,
        rules: Rules = "auto",
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
        self.remove_articles = remove_articles
        self.normalization = normalization
        self.normalizer = normalizer_for(
            self.metric_id,
            normalization,
            {
                "ignore_case": ignore_case,
                "trim_punctuation": trim_punctuation,
                "ignore_punctuation": ignore_punctuation,
                "remove_articles": remove_articles,
                "nfkc": nfkc,
            },
            _NORMALISATION_DEFAULTS,
        )
        self._use_rules(rules)
