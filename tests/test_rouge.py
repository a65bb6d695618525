"""rouge against Google's rouge-score: per item, averaged, and its bootstrap aggregator."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from itemscore import ItemResult, MetricContext, Status, compare, plan, score

rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
from rouge_score import scoring  # noqa: E402

TEXT = (
    "the cat sat on a mat and the dogs were running quickly towards houses while children "
    "played games in gardens near rivers 2024 summary results show improvements Café naïve "
    "e-mail U.S. don't 3.5% İstanbul ǅemal _under_score tab\tseparated"
)
WORDS = TEXT.split()


def _text(rng: random.Random, lines: bool = False) -> str:
    sentences = []
    for _ in range(rng.randint(1, 3) if lines else 1):
        words = [rng.choice(WORDS) for _ in range(rng.randint(0, 20))]
        sentences.append(" ".join(words).capitalize() + rng.choice([".", "!", ""]))
    return "\n".join(sentences)


def _items(n: int, seed: int, model: str | None = None) -> list[ItemResult]:
    rng = random.Random(seed)
    return [
        ItemResult(
            id=str(i),
            output=_text(rng, lines=True),
            expected=tuple(_text(rng, lines=True) for _ in range(rng.randint(1, 3))),
            model=model,
        )
        for i in range(n)
    ]


CASES = [
    (rouge_type, stemmer, measure)
    for rouge_type in ("rouge1", "rouge2", "rougeL", "rougeLsum")
    for stemmer, measure in ((False, "fmeasure"), (True, "recall"))
]


@pytest.mark.parametrize(("rouge_type", "use_stemmer", "measure"), CASES)
def test_equals_rouge_score_per_item_and_its_aggregator(
    rouge_type: str, use_stemmer: bool, measure: str
) -> None:
    """Each item is RougeScorer's score_multi; the interval and mid its BootstrapAggregator's."""
    items = _items(400, seed=len(rouge_type) + use_stemmer)
    spec = {
        "name": "rouge",
        "rouge_type": rouge_type,
        "use_stemmer": use_stemmer,
        "measure": measure,
    }
    result = score(items, [spec], seed=42)
    scorer = rouge_scorer.RougeScorer([rouge_type], use_stemmer=use_stemmer)
    aggregator = scoring.BootstrapAggregator()
    values = []
    found_all = []
    for item in result.items:
        assert item.expected is not None
        assert item.output is not None
        theirs = scorer.score_multi(list(item.expected), item.output)
        aggregator.add_scores(theirs)
        verdict = item.scores["rouge"]
        assert verdict.status is Status.OK
        found = theirs[rouge_type]
        assert (verdict.extra["precision"], verdict.extra["recall"]) == (
            found.precision,
            found.recall,
        )
        assert verdict.extra["fmeasure"] == found.fmeasure
        assert verdict.value == getattr(found, measure)
        values.append(getattr(found, measure))
        found_all.append(found)
    np.random.seed(42)
    aggregated = aggregator.aggregate()[rouge_type]
    m = result.measurements["default.rouge"]
    assert m.value == float(np.mean(values))
    assert (m.ci_low, m.ci_high) == (
        getattr(aggregated.low, measure),
        getattr(aggregated.high, measure),
    )
    for name in ("precision", "recall", "fmeasure"):
        assert m.extra[f"{name}_mid"] == getattr(aggregated.mid, name)
        assert m.extra[f"{name}_low"] == getattr(aggregated.low, name)
        assert m.extra[f"{name}_high"] == getattr(aggregated.high, name)
        assert m.extra[name] == float(np.mean([getattr(f, name) for f in found_all]))


def test_single_reference_is_score() -> None:
    """With one valid answer the item is RougeScorer.score(answer, output)."""
    scorer = rouge_scorer.RougeScorer(["rouge2"])
    item = ItemResult(id="1", output="the cat sat on the mat", expected="a cat sat on a mat")
    verdict = score([item], [{"name": "rouge", "rouge_type": "rouge2"}]).items[0].scores["rouge"]
    assert (
        verdict.value
        == scorer.score("a cat sat on a mat", "the cat sat on the mat")["rouge2"].fmeasure
    )


def test_failed_requests_and_extract() -> None:
    """A failed request is fail 0.0 or skip; extract scores the answer found, else fails."""
    items = [
        ItemResult(id="1", output=None, expected="a summary"),
        ItemResult(id="2", output="Summary: a short summary", expected="a summary"),
        ItemResult(id="3", output="no colon here", expected="a summary"),
    ]
    counted = score(items, ["rouge"]).items
    assert counted[0].scores["rouge"].status is Status.FAIL
    assert counted[0].scores["rouge"].value == 0.0
    skipped = score(items, [{"name": "rouge", "count_failed": False}]).items
    assert skipped[0].scores["rouge"].status is Status.SKIP
    extracted = score(items, [{"name": "rouge", "extract": r"Summary: (.*)"}]).items
    scorer = rouge_scorer.RougeScorer(["rougeL"])
    assert (
        extracted[1].scores["rouge"].value
        == scorer.score("a summary", "a short summary")["rougeL"].fmeasure
    )
    assert extracted[2].scores["rouge"].status is Status.FAIL
    assert extracted[2].scores["rouge"].reason == "no answer found"


def test_paired_comparison_is_a_paired_bootstrap_of_means() -> None:
    """compare() resamples the shared items: both means on the same resamples."""
    a, b = _items(300, 1, "a"), _items(300, 2, "b")
    b = [ItemResult(id=x.id, output=x.output, expected=y.expected, model="b") for x, y in zip(b, a)]
    result = score(a + b, ["rouge"], seed=9)
    (c,) = compare(result, baseline="a")
    assert c.method == "paired-bootstrap"
    value_a = result.by_model["a"]["default.rouge"].value
    value_b = result.by_model["b"]["default.rouge"].value
    assert (c.value_a, c.value_b) == (value_a, value_b)
    metric = plan(["rouge"]).metrics[0].metric
    sa = [i.scores["rouge"] for i in result.items if i.model == "a"]
    sb = [i.scores["rouge"] for i in result.items if i.model == "b"]
    _, _, samples_a, samples_b = metric.paired_bootstrap(
        sa, sb, MetricContext(seed=9), n_resamples=2000
    )  # type: ignore[attr-defined]
    rng = np.random.default_rng(9)
    va = np.array([s.value for s in sa])
    vb = np.array([s.value for s in sb])
    idx = rng.integers(0, 300, size=(2000, 300))
    assert np.array_equal(samples_a, va[idx].mean(axis=1))
    assert np.array_equal(samples_b, vb[idx].mean(axis=1))
    low, high = np.percentile(samples_b - samples_a, [2.5, 97.5])
    assert (c.ci_low, c.ci_high) == pytest.approx((low, high), abs=1e-15)


def test_options_are_checked() -> None:
    """rouge_type and measure accept only their values; n_samples must be positive."""
    from itemscore import OptionError

    items = _items(3, 0)
    for bad in ({"rouge_type": "rouge3"}, {"measure": "f1"}, {"n_samples": 0}):
        with pytest.raises(OptionError):
            score(items, [{"name": "rouge", **bad}])
    options: dict[str, Any] = {
        n: i.default for n, i in plan(["rouge"]).metrics[0].metric.options().items()
    }
    assert options["rouge_type"] == "rougeL"
    assert options["use_stemmer"] is False


def test_lcs_length_is_rouge_scores_table() -> None:
    """The bit-parallel LCS length is the last cell of rouge-score's DP table, long lists too."""
    from itemscore.metrics_builtin.rouge import _lcs_length

    rng = random.Random(12)
    for _ in range(300):
        vocabulary = WORDS[: rng.randint(2, len(WORDS))]
        a = [rng.choice(vocabulary) for _ in range(rng.randint(0, 150))]
        b = [rng.choice(vocabulary) for _ in range(rng.randint(0, 150))]
        table = rouge_scorer._lcs_table(a, b)
        assert _lcs_length(a, b) == table[-1][-1]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60), st.text(max_size=60))
def test_scores_equal_rouge_score_on_any_text(target: str, prediction: str) -> None:
    """Any text, any script: rouge1, rouge2 and rougeL are rouge-score's to the last digit."""
    for rouge_type in ("rouge1", "rouge2", "rougeL"):
        item = ItemResult(id="1", output=prediction, expected=target or "x")
        verdict = score([item], [{"name": "rouge", "rouge_type": rouge_type}]).items[0]
        theirs = rouge_scorer.RougeScorer([rouge_type]).score(target or "x", prediction)
        found = theirs[rouge_type]
        extra = verdict.scores["rouge"].extra
        assert (extra["precision"], extra["recall"], extra["fmeasure"]) == tuple(found)
