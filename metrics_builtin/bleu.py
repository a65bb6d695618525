"""``bleu``: corpus BLEU (sacrebleu), from sentence statistics kept item by item."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from itemscore.metrics_builtin._extract import Pick
from itemscore.metrics_builtin._sacrebleu import N_BOOTSTRAP, SacrebleuMetric

__all__ = ["Bleu"]

#: sacrebleu's tokenizers that need nothing from the network (``spm`` and the ``flores``
#: tokenizers download a SentencePiece model on first use, which itemscore never does).
Tokenize = Literal["none", "zh", "13a", "intl", "char", "ja-mecab", "ko-mecab"]


class Bleu(SacrebleuMetric):
    """Corpus BLEU as sacrebleu computes it (0-100), with sacrebleu's own options.

    Each item keeps its sentence's statistics in ``extra["stats"]`` (sacrebleu's list:
    hypothesis length, closest reference length, matched n-grams of each order, then the
    n-grams of each order in the hypothesis) and ``extra["refs"]`` (its number of references);
    its value is the sentence BLEU, as ``sacrebleu.sentence_bleu`` gives it with the same
    options (effective order on, as there). The headline number sums the statistics of the
    scored items: ``sacrebleu.corpus_bleu`` on the same sentences, to the last digit.
    ``Measurement.extra`` has the brevity penalty ``bp``, ``ratio``, ``hyp_len``, ``ref_len``,
    ``precision_1`` ... ``precision_4``, sacrebleu's "μ ± ci" (``bootstrap_mean``,
    ``bootstrap_ci``) and its signature (``signature[nrefs:1|bs:1000|seed:0|case:mixed|...]``).

    Requires the ``text`` extra (sacrebleu).

    Args:
        lowercase: Lowercase hypotheses and references before scoring.
        force: Do not warn about output that looks tokenized already.
        tokenize: sacrebleu's tokenizer; none: `13a`, or the one for `trg_lang` (zh, ja, ko).
        smooth_method: Smoothing of zero n-gram matches: `exp`, `floor`, `add-k` or `none`.
        smooth_value: The value of `floor` and `add-k` smoothing; none: sacrebleu's default.
        max_ngram_order: The largest n-gram order.
        effective_order: Leave out n-gram orders without any n-gram (for few short sentences).
        trg_lang: The target language, which picks the default tokenizer as in sacrebleu.
    """

    metric_id = "bleu"
    display_name = "BLEU"
    description = (
        "Corpus BLEU (sacrebleu, 0-100) from per-sentence statistics; needs the text extra."
    )
    sacrebleu_class = "BLEU"
    score_extras: ClassVar[Mapping[str, str]] = {
        "bp": "bp",
        "ratio": "ratio",
        "hyp_len": "sys_len",
        "ref_len": "ref_len",
    }

    def __init__(
        self,
        *,
        lowercase: bool = False,
        force: bool = False,
        tokenize: Tokenize | None = None,
        smooth_method: Literal["exp", "floor", "add-k", "none"] = "exp",
        smooth_value: float | None = None,
        max_ngram_order: int = 4,
        effective_order: bool = False,
        trg_lang: str = "",
        n_bootstrap: int = N_BOOTSTRAP,
        count_failed: bool = True,
        extract: str | None = None,
        extract_pick: Pick | None = None,
    ) -> None:
        if max_ngram_order < 1:
            raise ValueError(f"`max_ngram_order` ({max_ngram_order}) must be at least 1.")
        self.lowercase = lowercase
        self.force = force
        self.tokenize = tokenize
        self.smooth_method = smooth_method
        self.smooth_value = smooth_value
        self.max_ngram_order = max_ngram_order
        self.effective_order = effective_order
        self.trg_lang = trg_lang
        self._setup(
            {
                "lowercase": lowercase,
                "force": force,
                "tokenize": tokenize,
                "smooth_method": smooth_method,
                "smooth_value": smooth_value,
                "max_ngram_order": max_ngram_order,
                "effective_order": effective_order,
                "trg_lang": trg_lang,
            },
            n_bootstrap=n_bootstrap,
            count_failed=count_failed,
            extract=extract,
            extract_pick=extract_pick,
        )

    def _sentence_metric(self) -> Any:
        # sacrebleu.sentence_bleu turns the effective order on; the statistics are the same.
        if self._sentence is None:
            corpus = self._corpus()
            if self.effective_order:
                self._sentence = corpus
            else:
                self._sentence = type(corpus)(**{**self._options, "effective_order": True})
        return self._sentence

    def _result_extra(self, result: Any) -> dict[str, float]:
        extra = super()._result_extra(result)
        for order, precision in enumerate(result.precisions, 1):
            extra[f"precision_{order}"] = float(precision)
        return extra
