"""``accuracy``: classification accuracy, with label extraction from free-form answers."""

from __future__ import annotations

from collections.abc import Sequence

from itemscore.metrics_builtin._comparison import AnswerMatchMetric, Rules, check_labels
from itemscore.metrics_builtin._extract import Pick

__all__ = ["Accuracy"]


class Accuracy(AnswerMatchMetric):
    """Classification accuracy: the share of items whose answer is one of the valid answers.

    Without ``labels`` it compares normalised outputs with normalised valid answers, like
    ``exact_match``. With ``labels``, the output first goes through label extraction
    (:class:`itemscore.text.LabelExtractor`): an output equal to a label is that label; an
    output mentioning exactly one label counts as that label, the longest match winning
    ("very positive" beats "positive"); any other output is compared as it is and so matches
    no label. The label found is then compared with the normalised valid answers.

    Per-item ``extra``: ``normalized`` (the normalised output), ``label`` (the label found, or
    ``None``; only with ``labels``) and ``matched`` (the valid answer matched, or ``None``).

    Args:
        labels: Class labels. A free-form answer that mentions exactly one of them counts as it.

    Raises:
        ValueError: ``labels`` is an empty list.
        OptionError: ``rules="harness"`` with ``labels`` or a comparison option off its default.
    """

    metric_id = "accuracy"
    display_name = "Accuracy"
    description = (
        "Classification accuracy; with `labels`, a free-form answer that mentions exactly one "
        "label counts as that label."
    )

    def __init__(
        self,
        *,
        labels: list[str] | None = None,
        ignore_case: bool = True,
        trim_punctuation: bool = True,
        ignore_punctuation: bool = False,
        nfkc: bool = True,
        count_failed: bool = True,
        extract: str | None = None,
        extract_pick: Pick | None = None,
        rules: Rules = "auto",
    ) -> None:
        checked = check_labels(labels)
        super().__init__(
            ignore_case=ignore_case,
            trim_punctuation=trim_punctuation,
            ignore_punctuation=ignore_punctuation,
            nfkc=nfkc,
            count_failed=count_failed,
            extract=extract,
            extract_pick=extract_pick,
        )
        self.labels: Sequence[str] | None = list(checked) if checked is not None else None
        self._use_labels(checked)
        self._use_rules(rules)
