"""Corpus metrics (``compute``) in runs with attempts: every attempt a row, counted by question."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pytest

import itemscore
from itemscore import ItemResult, Metric, MetricResult, score


class CorpusLength(Metric):
    """Mean output length over the corpus, each row's length its score; needs an answer key."""

    metric_id = "corpus_length_attempts_test"
    required_inputs = ("expected",)
    aggregation = "mean"

    def compute(
        self, predictions: Sequence[str | None], references: Sequence[tuple[str, ...] | None]
    ) -> MetricResult:
        per_row = [
            None if refs is None or out is None else float(len(out))
            for out, refs in zip(predictions, references)
        ]
        values = [v for v in per_row if v is not None]
        value = sum(values) / len(values) if values else None
        return self.result(value, per_row=per_row, extra={"rows": float(len(per_row))})


@pytest.fixture(autouse=True)
def _registered() -> Iterator[None]:
    itemscore.register(CorpusLength)
    yield
    itemscore.unregister(CorpusLength.metric_id)


LENGTHS = {"q1": [1, 4, 2], "q2": [3, 3], "q3": [5], "q4": [2, 6, 1, 7]}
GROUPS = {"q1": "a", "q2": "a", "q3": "b", "q4": "b"}


def corpus_items(model: str | None = None, shift: int = 0) -> list[ItemResult]:
    return [
        ItemResult(
            id=q,
            output="x" * (n + shift),
            expected="x",
            attempt=j,
            group=GROUPS[q],
            model=model,
        )
        for q, lengths in LENGTHS.items()
        for j, n in enumerate(lengths, 1)
    ]


def test_a_corpus_metric_with_attempts_computes_over_every_attempt_counted_by_question() -> None:
    """compute sees every attempt as a row; n, counts and the attempt extras are the questions'."""
    result = score(corpus_items(), [CorpusLength.metric_id])
    m = result.measurements[f"default.{CorpusLength.metric_id}"]
    every = [n for lengths in LENGTHS.values() for n in lengths]
    assert m.error is None
    assert m.value == pytest.approx(float(np.mean(every)), abs=1e-12)
    assert m.extra["rows"] == len(every)  # compute got every attempt
    assert (m.n, m.counts["ok"]) == (4, 4)
    assert (m.extra["n_questions"], m.extra["n_attempts"]) == (4.0, float(len(every)))
    assert (m.extra["attempts_min"], m.extra["attempts_max"]) == (1.0, 4.0)
    assert m.extra["reducer[mean]"] == 1.0
    # Groups: compute over the attempts of each group's questions, n its questions.
    for group in ("a", "b"):
        rows = [n for q, lengths in LENGTHS.items() if GROUPS[q] == group for n in lengths]
        g = m.groups[group]
        assert g.value == pytest.approx(float(np.mean(rows)), abs=1e-12)
        assert g.n == 2
    # Each attempt keeps its own row score.
    values = [i.scores[CorpusLength.metric_id].value for i in result.items]
    assert values == [float(n) for n in every]


def test_a_corpus_metric_with_attempts_by_model_and_pooled() -> None:
    """Per model over its attempts, pooled over both models' attempts; n counts questions."""
    items = corpus_items("m1") + corpus_items("m2", shift=1)
    result = score(items, [CorpusLength.metric_id])
    key = f"default.{CorpusLength.metric_id}"
    every = [n for lengths in LENGTHS.values() for n in lengths]
    by_model = result.by_model
    assert by_model["m1"][key].value == pytest.approx(float(np.mean(every)), abs=1e-12)
    assert by_model["m2"][key].value == pytest.approx(float(np.mean(every)) + 1, abs=1e-12)
    assert by_model["m1"][key].n == by_model["m2"][key].n == 4
    pooled = result.measurements[key]
    assert pooled.value == pytest.approx(float(np.mean(every)) + 0.5, abs=1e-12)
    assert pooled.n == 8


def test_a_corpus_metric_under_another_reducer_is_an_error_that_names_it() -> None:
    """A reducer other than mean has no score per question to reduce: its measurement says so."""
    result = score(corpus_items(), [CorpusLength.metric_id, "exact_match"], reduce=["mean", "max"])
    label = CorpusLength.metric_id
    headline = result.measurements[f"default.{label}"]
    assert headline.error is None and headline.n == 4
    other = result.measurements[f"default.{label}[max]"]
    assert other.value is None
    assert other.error is not None
    assert "'max'" in other.error and repr(label) in other.error and "'mean'" in other.error
    assert other.n == 4
    # The item-level metric beside it is reduced as always.
    assert result.measurements["default.exact_match[max]"].error is None
