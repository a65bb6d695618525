"""Two metrics a third-party package ships: copy this file to start your own.

Everything here comes from itemscore's public API (``itemscore``, ``itemscore.text``,
``itemscore.aggregate``), exactly what any package can use. The metrics become available by id
because ``pyproject.toml`` declares them in the entry-point group ``itemscore.metrics``::

    [project.entry-points."itemscore.metrics"]
    starts-with = "itemscore_example.metrics:StartsWith"
    output-length = "itemscore_example.metrics:OutputLength"

Nothing else registers them: installing the package is what makes ``"starts_with"`` and
``"output_length"`` work in ``itemscore.score``, ``itemscore score -m ...`` and run configs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from itemscore import Estimate, ItemResult, ItemScore, Metric, MetricContext
from itemscore.text import tokenize

__all__ = ["OutputLength", "StartsWith"]

# Leading whitespace says nothing about the answer: models often begin with a space or newline.
_LEADING_SPACE = re.compile(r"^\s+")


class StartsWith(Metric):
    """Share of outputs that start with one of the valid answers.

    An item is ok when the output, leading whitespace removed, begins with any of its
    ``expected`` answers, and fail otherwise. A failed request (no output) is fail: the model
    did not give the answer. A row without an answer key is skipped.

    Args:
        ignore_case: Compare without regard to case (Unicode case folding: ``"Straße"``
            starts with ``"STRASSE"``).
        match: ``prefix`` accepts any prefix (``"Parisian"`` starts with ``"Paris"``); ``word``
            needs the answer to end at a word boundary, so ``"Paris."`` and ``"Paris is"`` match
            but ``"Parisian"`` does not.
    """

    # The id is what users type and what measurement keys carry ("<suite>.starts_with"). The
    # entry point's name ("starts-with") may differ; lookups accept either.
    metric_id = "starts_with"
    description = "Share of outputs that start with one of the valid answers."
    reproducibility_class = "deterministic"
    # An item whose `expected` is None (no answer key) is scored skip before score_item runs.
    # `output` is deliberately not required: a failed request must count as fail, not vanish.
    required_inputs = ("expected",)
    higher_is_better = True
    aggregation = "ratio"

    # Options are the keyword arguments of __init__ with a default and a type hint. itemscore
    # checks every value against the hint before any item is scored: `ignore_case="yes"` or
    # `match="words"` is an OptionError naming the option and the allowed values.
    def __init__(
        self, ignore_case: bool = True, match: Literal["prefix", "word"] = "prefix"
    ) -> None:
        self.ignore_case = ignore_case
        self.match = match

    def _fold(self, text: str) -> str:
        return text.casefold() if self.ignore_case else text

    def _starts_with(self, output: str, answer: str) -> bool:
        if not output.startswith(answer):
            return False
        if self.match == "prefix" or len(output) == len(answer):
            return True
        # Word match: the answer must not stop in the middle of a word.
        return not (output[len(answer)].isalnum() and answer[-1:].isalnum())

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        """Ok when the output starts with an answer; fail when it does not or is missing.

        Args:
            item: The item; ``expected`` is never None here (``required_inputs``).
            ctx: The run's context (unused: this metric needs nothing from it).

        Returns:
            ``ok`` with the matched answer in ``extra``, ``fail``, or ``skip`` when every
            answer is blank (nothing to start with).
        """
        answers = [a.strip() for a in item.expected or () if a.strip()]
        if not answers:
            return self.skip("every expected answer is blank")
        if item.output is None:
            return self.fail(extra={"reason": "the request failed"})
        output = self._fold(_LEADING_SPACE.sub("", item.output))
        for answer in answers:
            if self._starts_with(output, self._fold(answer)):
                return self.ok(extra={"matched": answer})
        return self.fail()


class OutputLength(Metric):
    """Length of each output, in tokens or characters; needs no answer key.

    The measurement is the mean length with a confidence interval; its ``extra`` holds the
    median (``p50``) and the 90th percentile (``p90``), since lengths are rarely symmetric.
    A failed request has no length and is skipped, so it does not pull the mean towards zero.

    Args:
        unit: ``tokens`` counts words as :func:`itemscore.text.tokenize` splits them (every
            Chinese, Japanese, Thai or Burmese character is one token); ``characters`` counts
            Unicode code points.
        strip: Ignore whitespace around the output.
    """

    metric_id = "output_length"
    description = "Mean length of the outputs, in tokens or characters; needs no answer key."
    reproducibility_class = "deterministic"
    # Only `output` is needed: rows without an answer key are scored too, failed requests
    # (output None) are skipped.
    required_inputs = ("output",)
    # Shorter is better here; tables and reports use this to pick the best model.
    higher_is_better = False
    aggregation = "mean"

    def __init__(
        self, unit: Literal["tokens", "characters"] = "tokens", strip: bool = True
    ) -> None:
        self.unit = unit
        self.strip = strip

    def length(self, output: str) -> int:
        """The length of one output in the configured unit."""
        text = output.strip() if self.strip else output
        return len(tokenize(text)) if self.unit == "tokens" else len(text)

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        """Every output gets a value: its length. A length is a measurement, never a failure.

        Args:
            item: The item; ``output`` is never None here (``required_inputs``).
            ctx: The run's context (unused).

        Returns:
            ``ok`` with the length as the value.
        """
        assert item.output is not None  # guaranteed by required_inputs
        return self.ok(float(self.length(item.output)))

    def score_items(self, items: Sequence[ItemResult], ctx: MetricContext) -> list[ItemScore]:
        """Score many items in one call: the runner prefers this when a metric overrides it.

        It must return one score per item, in order. If it raises, the runner scores the
        same items again one by one with :meth:`score_item`, so one bad item costs one score,
        never the batch.
        """
        return [self.ok(float(self.length(item.output or ""))) for item in items]

    def aggregate(self, scores: Sequence[ItemScore], ctx: MetricContext) -> Estimate:
        """The mean length (the default ``"mean"`` aggregate) plus its median and 90th percentile.

        Args:
            scores: This metric's scores for the items being aggregated, in all four states.
            ctx: The run's context: confidence level, interval method, the group if any.

        Returns:
            The default mean estimate, with ``p50`` and ``p90`` added to ``extra``.
        """
        # Imported here: itemscore.aggregate loads numpy, which listing the metrics never needs.
        from itemscore.aggregate import percentiles

        estimate = super().aggregate(scores, ctx)
        values = [s.value for s in scores if s.scored and s.value is not None]
        spread = percentiles(values, (50, 90))
        return Estimate(
            value=estimate.value,
            low=estimate.low,
            high=estimate.high,
            n=estimate.n,
            method=estimate.method,
            confidence=estimate.confidence,
            extra={**estimate.extra, **spread.extra},
        )
