"""``chrf``: corpus chrF / chrF++ (sacrebleu), from sentence statistics kept item by item."""

from __future__ import annotations

from itemscore.metrics_builtin._extract import Pick
from itemscore.metrics_builtin._sacrebleu import N_BOOTSTRAP, SacrebleuMetric

__all__ = ["Chrf"]


class Chrf(SacrebleuMetric):
    """Corpus chrF as sacrebleu computes it (0-100); ``word_order=2`` is chrF++.

    Each item keeps its sentence's statistics in ``extra["stats"]`` (sacrebleu's list: for
    each character then word n-gram order, the hypothesis, reference and matched counts, of the
    reference with the best sentence chrF) and ``extra["refs"]``; its value is the sentence
    chrF (``sacrebleu.sentence_chrf``). The headline number is ``sacrebleu.corpus_chrf`` of the
    scored items, to the last digit. ``Measurement.extra`` has sacrebleu's "μ ± ci"
    (``bootstrap_mean``, ``bootstrap_ci``) and its signature (``signature[...]``).

    Requires the ``text`` extra (sacrebleu).

    Args:
        char_order: Character n-gram order.
        word_order: Word n-gram order (2: chrF++).
        beta: Weight of recall against precision.
        lowercase: Compare case-insensitively.
        whitespace: Keep whitespace in the character n-grams.
        eps_smoothing: Epsilon smoothing as chrF++.py, NLTK and Moses (sacrebleu's default
            is the effective order).
    """

    metric_id = "chrf"
    display_name = "chrF"
    description = (
        "Corpus chrF/chrF++ (sacrebleu, 0-100) from per-sentence statistics; needs the text extra."
    )
    sacrebleu_class = "CHRF"

    def __init__(
        self,
        *,
        char_order: int = 6,
        word_order: int = 0,
        beta: int = 2,
        lowercase: bool = False,
        whitespace: bool = False,
        eps_smoothing: bool = False,
        n_bootstrap: int = N_BOOTSTRAP,
        count_failed: bool = True,
        extract: str | None = None,
        extract_pick: Pick | None = None,
    ) -> None:
        if char_order < 0 or word_order < 0 or char_order + word_order < 1:
            raise ValueError(
                f"`char_order` ({char_order}) and `word_order` ({word_order}) must be at least 0 "
                "and not both 0."
            )
        self.char_order = char_order
        self.word_order = word_order
        self.beta = beta
        self.lowercase = lowercase
        self.whitespace = whitespace
        self.eps_smoothing = eps_smoothing
        self._setup(
            {
                "char_order": char_order,
                "word_order": word_order,
                "beta": beta,
                "lowercase": lowercase,
                "whitespace": whitespace,
                "eps_smoothing": eps_smoothing,
            },
            n_bootstrap=n_bootstrap,
            count_failed=count_failed,
            extract=extract,
            extract_pick=extract_pick,
        )
