"""``exact_match``: the output equals one of the valid answers after normalisation."""

from __future__ import annotations

from itemscore.metrics_builtin._comparison import AnswerMatchMetric

__all__ = ["ExactMatch"]


class ExactMatch(AnswerMatchMetric):
    """Share of items whose output equals one of the valid answers after normalisation.

    Each item is ``ok`` (1.0) when its normalised output equals any of its normalised valid
    answers, else ``fail`` (0.0); the headline number is the share of ok among scored items,
    with a Wilson interval. With the defaults, full-width letters equal their ASCII forms and
    ``"Positive."`` equals ``positive``, while ``-5`` and ``5`` stay different.

    Per-item ``extra``: ``normalized`` (the normalised output) and ``matched`` (the valid answer
    it matched, as spelled in the answer key, or ``None``).
    """

    metric_id = "exact_match"
    description = "Share of rows where the output equals a reference answer after normalisation."
