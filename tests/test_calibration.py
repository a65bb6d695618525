"""brier and ece against scikit-learn and direct numpy computations."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss

from itemscore import ItemResult, MetricContext, OptionError, Status, compare, plan, score


def _binary_items(n: int, seed: int, model: str | None = None) -> list[ItemResult]:
    """Answers right about as often as their confidence says, a little overconfident."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        confidence = round(rng.random(), rng.choice([1, 2, 6]))
        right = rng.random() < confidence * 0.85
        rows.append(
            ItemResult(
                id=str(i),
                output="Paris" if right else "Lyon",
                expected="paris",
                metadata={"confidence": confidence},
                model=model,
            )
        )
    return rows


def _truth(items: list[ItemResult]) -> tuple[np.ndarray, np.ndarray]:
    confidence = np.array([i.metadata["confidence"] for i in items], dtype=float)
    right = np.array([i.output == "Paris" for i in items], dtype=float)
    return confidence, right


def reference_ece(confidence: np.ndarray, right: np.ndarray, bins: int, binning: str) -> float:
    """ECE written out: equal-width bins (lo, hi] (0 in the first) or equal-mass runs."""
    n = confidence.size
    if binning == "mass":
        order = np.argsort(confidence, kind="stable")
        groups = np.array_split(order, bins)
    else:
        edges = np.linspace(0, 1, bins + 1)
        groups = []
        for b in range(bins):
            lo, hi = edges[b], edges[b + 1]
            inside = (confidence > lo) & (confidence <= hi)
            if b == 0:
                inside |= confidence == 0
            groups.append(np.flatnonzero(inside))
    total = 0.0
    for members in groups:
        if members.size:
            total += members.size / n * abs(right[members].mean() - confidence[members].mean())
    return total


def test_brier_equals_scikit_learn() -> None:
    """Binary Brier is brier_score_loss(right, confidence); the interval is a bootstrap."""
    items = _binary_items(700, 1)
    m = score(items, ["brier"], seed=3).measurements["default.brier"]
    confidence, right = _truth(items)
    assert m.value == brier_score_loss(right, confidence)
    assert m.ci_method == "bootstrap"
    assert m.ci_low is not None
    assert m.ci_high is not None
    assert m.ci_low < m.value < m.ci_high
    assert m.higher_is_better is False


def test_multiclass_brier_equals_scikit_learn() -> None:
    """Class probabilities: scikit-learn's multi-class Brier (halved for two classes)."""
    rng = np.random.default_rng(4)
    for labels in (["neg", "neu", "pos"], ["no", "yes"]):
        probabilities = rng.dirichlet(np.ones(len(labels)), size=300)
        truth = [labels[int(rng.integers(len(labels)))] for _ in range(300)]
        items = [
            ItemResult(id=str(i), output=None, expected=t, metadata={"confidence": list(p)})
            for i, (p, t) in enumerate(zip(probabilities, truth))
        ]
        m = score(items, [{"name": "brier", "labels": labels}]).measurements["default.brier"]
        expected = brier_score_loss(truth, probabilities, labels=labels)
        assert m.value == pytest.approx(expected, abs=1e-15)
        as_mappings = [
            ItemResult(
                id=i.id,
                output=None,
                expected=i.expected,
                metadata={"confidence": dict(zip(labels, i.metadata["confidence"]))},
            )
            for i in items
        ]
        again = score(as_mappings, ["brier"]).measurements["default.brier"]
        assert again.value == m.value


@pytest.mark.parametrize("binning", ["width", "mass"])
@pytest.mark.parametrize("bins", [10, 7, 1])
def test_ece_equals_a_direct_numpy_computation(bins: int, binning: str) -> None:
    """ECE and its reliability diagram, as written out with numpy."""
    items = _binary_items(500, bins)
    spec = {"name": "ece", "bins": bins, "binning": binning}
    m = score(items, [spec], seed=1).measurements["default.ece"]
    confidence, right = _truth(items)
    assert m.value == pytest.approx(reference_ece(confidence, right, bins, binning), abs=1e-12)
    counts = [m.extra[f"bin[{b}].count"] for b in range(bins)]
    assert sum(counts) == 500
    gaps = []
    for b in range(bins):
        if m.extra[f"bin[{b}].count"]:
            gaps.append(abs(m.extra[f"bin[{b}].accuracy"] - m.extra[f"bin[{b}].confidence"]))
    assert m.extra["mce"] == max(gaps)
    assert m.extra["accuracy"] == right.mean()
    assert m.ci_low is not None
    assert m.ci_high is not None
    assert m.ci_low <= m.value <= m.ci_high or bins == 1


def test_ece_bootstrap_resamples_items_with_the_run_seed() -> None:
    """The interval is the percentile interval of the ECE over seeded resamples of items."""
    items = _binary_items(300, 8)
    m = score(items, ["ece"], seed=21).measurements["default.ece"]
    confidence, right = _truth(items)
    rng = np.random.default_rng(21)
    samples = []
    for _ in range(2000):
        idx = rng.integers(0, 300, size=300)
        samples.append(reference_ece(confidence[idx], right[idx], 10, "width"))
    low, high = np.percentile(samples, [2.5, 97.5])
    assert (m.ci_low, m.ci_high) == pytest.approx((low, high), abs=1e-12)


def test_ece_multiclass_uses_the_top_class() -> None:
    """With class probabilities the confidence is the largest and right means it is true."""
    items = [
        ItemResult(
            id="1",
            output=None,
            expected="B",
            metadata={"choices": ["x", "y"], "confidence": [0.3, 0.7]},
        ),
        ItemResult(
            id="2",
            output=None,
            expected="x",
            metadata={"choices": ["x", "y"], "confidence": [0.9, 0.1]},
        ),
    ]
    scores = [i.scores["ece"] for i in score(items, ["ece"]).items]
    assert [s.extra["confidence"] for s in scores] == [0.7, 0.9]
    assert [s.status for s in scores] == [Status.OK, Status.OK]


def test_states_of_odd_confidences() -> None:
    """Missing: skip; out of [0, 1], not a number, not summing to 1: error."""
    rows = [
        ItemResult(id="1", output="Paris", expected="paris"),
        ItemResult(id="2", output="Paris", expected="paris", metadata={"confidence": 1.5}),
        ItemResult(id="3", output="Paris", expected="paris", metadata={"confidence": "high"}),
        ItemResult(
            id="4", output=None, expected="a", metadata={"confidence": {"a": 0.5, "b": 0.2}}
        ),
        ItemResult(id="5", output=None, expected="paris", metadata={"confidence": 0.4}),
        ItemResult(id="6", output="Paris", expected="paris", metadata={"confidence": "0.8"}),
    ]
    scores = [i.scores["brier"] for i in score(rows, ["brier"]).items]
    assert [s.status for s in scores] == [
        Status.SKIP, Status.ERROR, Status.ERROR, Status.ERROR, Status.FAIL, Status.OK,
    ]  # fmt: skip
    assert scores[4].value == pytest.approx(0.16)
    assert scores[5].value == pytest.approx(0.04)
    with pytest.raises(OptionError):
        score(rows, [{"name": "ece", "bins": 0}])
    with pytest.raises(OptionError):
        score(rows, [{"name": "ece", "binning": "quantile"}])


@pytest.mark.parametrize("name", ["brier", "ece"])
def test_paired_comparison(name: str) -> None:
    """compare() pairs by id and resamples both sides together; lower is better."""
    a, b = _binary_items(400, 1, "a"), _binary_items(400, 2, "b")
    result = score(a + b, [name], seed=4)
    (c,) = compare(result, baseline="a")
    assert c.method == "paired-bootstrap"
    assert c.higher_is_better is False
    assert c.value_a == pytest.approx(result.by_model["a"][f"default.{name}"].value, abs=1e-12)
    metric: Any = plan([name]).metrics[0].metric
    sa = [i.scores[name] for i in result.items if i.model == "a"]
    sb = [i.scores[name] for i in result.items if i.model == "b"]
    va, vb, samples_a, samples_b = metric.paired_bootstrap(sa, sb, MetricContext(seed=4))
    assert (va, vb) == (c.value_a, c.value_b)
    low, high = np.percentile(samples_b - samples_a, [2.5, 97.5])
    assert (c.ci_low, c.ci_high) == pytest.approx((low, high), abs=1e-15)
