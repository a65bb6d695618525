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
    assert headline.error is None
    assert headline.n == 4
    other = result.measurements[f"default.{label}[max]"]
    assert other.value is None
    assert other.error is not None
    assert "'max'" in other.error
    assert repr(label) in other.error
    assert "'mean'" in other.error
    assert other.n == 4
    # The item-level metric beside it is reduced as always.
    assert result.measurements["default.exact_match[max]"].error is None


# -- bleu, chrf and ter: sentence statistics per attempt, summed over the attempts counted -------

WORDS = [f"w{i}" for i in range(17)]  # a small vocabulary: n-grams match often


def translations(
    seed: int = 3, n: int = 40
) -> tuple[dict[str, tuple[str, ...]], dict[str, list[str]]]:
    """References (1-2 per question) and 1-4 attempts per question, some given twice."""
    rng = np.random.default_rng(seed)

    def sentence() -> list[str]:
        return [str(w) for w in rng.choice(WORDS, size=int(rng.integers(4, 10)))]

    def perturb(words: list[str]) -> str:
        kept = [w if rng.random() > 0.3 else str(rng.choice(WORDS)) for w in words]
        return " ".join(kept[: max(1, len(kept) - int(rng.integers(0, 3)))])

    refs: dict[str, tuple[str, ...]] = {}
    attempts: dict[str, list[str]] = {}
    for q in range(n):
        first = sentence()
        refs[f"q{q}"] = (" ".join(first),) + ((perturb(first),) if rng.random() < 0.5 else ())
        outs = [perturb(first) for _ in range(int(rng.integers(1, 5)))]
        if len(outs) >= 3:
            outs[2] = outs[0]  # a repeated answer: majority has one to pick
        attempts[f"q{q}"] = outs
    return refs, attempts


def _streams(refs: Sequence[tuple[str, ...]]) -> list[list[str | None]]:
    width = max(len(r) for r in refs)
    return [[r[k] if k < len(r) else None for r in refs] for k in range(width)]


def _majority(outs: list[str]) -> int:
    """The first attempt of the most frequent answer (answers here differ in words, not case)."""
    from collections import Counter

    top = Counter(outs).most_common(1)[0][0]
    return outs.index(top)


@pytest.mark.parametrize("name", ["bleu", "chrf", "ter"])
def test_sacrebleu_metrics_with_attempts_sum_the_statistics_of_the_attempts_counted(
    name: str,
) -> None:
    """mean: sacrebleu's corpus score of every attempt; max/min/majority: of the picked ones.

    max and min pick the attempt with the largest and smallest sentence score (the first on a
    tie), as sacrebleu's sentence score gives it; n counts questions throughout.
    """
    sacrebleu = pytest.importorskip("sacrebleu")
    corpus_of = {"bleu": sacrebleu.corpus_bleu, "chrf": sacrebleu.corpus_chrf}.get(
        name, sacrebleu.corpus_ter
    )
    sentence_of = {"bleu": sacrebleu.sentence_bleu, "chrf": sacrebleu.sentence_chrf}.get(
        name, sacrebleu.sentence_ter
    )
    refs, attempts = translations()
    items = [
        ItemResult(id=q, output=out, expected=refs[q], attempt=j)
        for q, outs in attempts.items()
        for j, out in enumerate(outs, 1)
    ]
    reducers = ["mean", "max", "min", "majority"]
    result = score(items, [{"name": name, "n_bootstrap": 1}], reduce=reducers)

    def corpus_score(picked: dict[str, list[str]]) -> float:
        hyps = [out for q in picked for out in picked[q]]
        rows = [refs[q] for q in picked for _ in picked[q]]
        return float(corpus_of(hyps, _streams(rows)).score)

    def pick(which: str) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for q, outs in attempts.items():
            scores = [sentence_of(o, list(refs[q])).score for o in outs]
            best = {"max": max, "min": min}[which](scores) if which != "majority" else None
            index = _majority(outs) if best is None else scores.index(best)
            out[q] = [outs[index]]
        return out

    expected = {
        "mean": corpus_score(attempts),
        "max": corpus_score(pick("max")),
        "min": corpus_score(pick("min")),
        "majority": corpus_score(pick("majority")),
    }
    assert len(set(expected.values())) == 4  # the reducers differ on these data
    for index, reducer in enumerate(reducers):
        key = f"default.{name}" if index == 0 else f"default.{name}[{reducer}]"
        m = result.measurements[key]
        assert m.error is None
        assert m.value == pytest.approx(expected[reducer], rel=1e-12), reducer
        assert m.n == len(attempts)


def test_bleu_under_mean_resamples_whole_questions() -> None:
    """Under mean, the interval is a cluster bootstrap: each question's attempts stay together."""
    pytest.importorskip("sacrebleu")
    refs, attempts = translations()
    items = [
        ItemResult(id=q, output=out, expected=refs[q], attempt=j)
        for q, outs in attempts.items()
        for j, out in enumerate(outs, 1)
    ]
    m = score(items, [{"name": "bleu", "n_bootstrap": 200}]).measurements["default.bleu"]
    assert m.ci_method == "cluster-bootstrap"
    assert m.ci_low is not None
    assert m.ci_high is not None
    assert m.ci_low < m.value < m.ci_high
    assert m.extra["n_attempts"] == sum(len(o) for o in attempts.values())


@pytest.mark.parametrize("reducer", ["pass@1", "pass^2", "at_least:1"])
def test_sacrebleu_metrics_refuse_reducers_that_count_right_attempts(reducer: str) -> None:
    """Partial credit: no attempt is right or wrong, so the measurement is an error saying so."""
    pytest.importorskip("sacrebleu")
    refs, attempts = translations(n=5)
    items = [
        ItemResult(id=q, output=out, expected=refs[q], attempt=j)
        for q, outs in attempts.items()
        for j, out in enumerate(outs, 1)
    ]
    m = score(items, ["bleu"], reduce=["mean", reducer]).measurements[f"default.bleu[{reducer}]"]
    assert m.value is None
    assert m.error is not None
    assert "partial credit" in m.error
    assert "'mean', 'max' or 'min'" in m.error
