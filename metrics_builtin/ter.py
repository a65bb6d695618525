"""``ter``: corpus translation edit rate (sacrebleu), from sentence statistics item by item."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from itemscore.metrics_builtin._extract import Pick
from itemscore.metrics_builtin._sacrebleu import N_BOOTSTRAP, SacrebleuMetric

__all__ = ["Ter"]


class Ter(SacrebleuMetric):
    """Corpus TER as sacrebleu computes it: edits per 100 reference words; lower is better.

    Each item keeps its sentence's statistics in ``extra["stats"]`` (sacrebleu's list: the
    fewest edits to any reference, and the average reference length) and ``extra["refs"]``;
    its value is the sentence TER (``sacrebleu.sentence_ter``). The headline number is
    ``sacrebleu.corpus_ter`` of the scored items, to the last digit. ``Measurement.extra`` has
    ``num_edits``, ``ref_length``, sacrebleu's "μ ± ci" (``bootstrap_mean``,
    ``bootstrap_ci``) and its signature (``signature[...]``).

    Requires the ``text`` extra (sacrebleu).

    Args:
        normalized: sacrebleu's character normalisation (punctuation split, XML entities).
        no_punct: Remove punctuation.
        asian_support: Split Asian (CJK) characters, with `normalized` or `no_punct`.
        case_sensitive: Compare case-sensitively.
    """

    metric_id = "ter"
    display_name = "TER"
    description = (
        "Corpus TER (sacrebleu) from per-sentence statistics; lower is better; "
        "needs the text extra."
    )
    higher_is_better = False
    # A hypothesis longer than its references has a TER above 100: bounded below only.
    value_bounds = None
    sacrebleu_class = "TER"
    score_extras: ClassVar[Mapping[str, str]] = {
        "num_edits": "num_edits",
        "ref_length": "ref_length",
    }

    def __init__(
        self,
        *,
        normalized: bool = False,
        no_punct: bool = False,
        asian_support: bool = False,
        case_sensitive: bool = False,
        n_bootstrap: int = N_BOOTSTRAP,
        count_failed: bool = True,
        extract: str | None = None,
        extract_pick: Pick | None = None,
    ) -> None:
        self.normalized = normalized
        self.no_punct = no_punct
        self.asian_support = asian_support
        self.case_sensitive = case_sensitive
        self._setup(
            {
                "normalized": normalized,
                "no_punct": no_punct,
                "asian_support": asian_support,
                "case_sensitive": case_sensitive,
            },
            n_bootstrap=n_bootstrap,
            count_failed=count_failed,
            extract=extract,
            extract_pick=extract_pick,
        )
