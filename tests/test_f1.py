"""Tests for the f1 metric: scikit-learn parity, per-item extras, bootstrap interval, options."""

from __future__ import annotations

import random
from typing import Any

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import precision_recall_fscore_support

from itemscore import (
    ItemResult,
    ItemScore,
    MetricContext,
    OptionError,
    RunResult,
    Status,
    aggregate,
    score,
)
from itemscore.aggregate import percentile_interval
from itemscore.metrics_builtin import f1 as f1_module
from itemscore.metrics_builtin.f1 import F1, _Cells

LABELS = ["bird", "cat", "dog", "fish", "horse"]
AVERAGES = ["macro", "micro", "weighted"]
#: What sklearn sees for an answer that names no label, and for a failed request.
NO_LABEL, FAILED = "<no label>", "<failed>"


def labelled_items(n: int, seed: int) -> tuple[list[ItemResult], list[str], list[str]]:
    """Items whose true and predicted labels are known from how they were made.

    Gold labels are drawn from the first four labels only, so "horse" is a label that is
    predicted but never gold. Answers are bare labels, labels in a sentence, answers naming no
    label, and failed requests.
    """
    rng = random.Random(seed)
    items, y_true, y_pred = [], [], []
    weights = [0.5, 0.25, 0.15, 0.1]
    for i in range(n):
        gold = rng.choices(LABELS[:4], weights)[0]
        roll = rng.random()
        if roll < 0.05:
            output, pred = None, FAILED
        elif roll < 0.12:
            output, pred = rng.choice(["I am not sure.", "no idea", "It depends"]), NO_LABEL
        else:
            pred = gold if roll < 0.7 else rng.choice(LABELS)
            output = rng.choice(["{}", "{}.", "It is a {}!", "Answer: {}", " {} "]).format(
                pred.upper() if rng.random() < 0.2 else pred
            )
        items.append(ItemResult(id=str(i), output=output, expected=gold))
        y_true.append(gold)
        y_pred.append(pred)
    return items, y_true, y_pred


@pytest.mark.parametrize("average", AVERAGES)
def test_matches_scikit_learn(average: str) -> None:
    """F1, precision, recall and per-class F1 equal scikit-learn's to 1e-12."""
    items, y_true, y_pred = labelled_items(3000, seed=42)
    result = score(items, [{"name": "f1", "labels": LABELS, "average": average}])
    measurement = result.measurements["default.f1"]
    gold_labels = sorted(set(y_true))
    precision, recall, f1, _ = precision_recall_fscore_support(
        y_true, y_pred, labels=gold_labels, average=average, zero_division=0
    )
    assert measurement.value == pytest.approx(f1, abs=1e-12)
    assert measurement.extra["precision"] == pytest.approx(precision, abs=1e-12)
    assert measurement.extra["recall"] == pytest.approx(recall, abs=1e-12)
    for other in AVERAGES:
        _, _, want, _ = precision_recall_fscore_support(
            y_true, y_pred, labels=gold_labels, average=other, zero_division=0
        )
        assert measurement.extra[f"f1_{other}"] == pytest.approx(want, abs=1e-12)
    _, _, per_class, _ = precision_recall_fscore_support(
        y_true, y_pred, labels=gold_labels, average=None, zero_division=0
    )
    for label, want in zip(gold_labels, per_class):
        assert measurement.extra[f"f1[{label}]"] == pytest.approx(want, abs=1e-12)
    assert "f1[horse]" not in measurement.extra
    assert measurement.n == len(items)
    assert measurement.ci_method == "bootstrap"


def test_without_labels_compares_normalised_answers() -> None:
    """Without labels the prediction is the normalised answer itself, as in scikit-learn."""
    rng = random.Random(8)
    answers = ["yes", "no", "maybe"]
    items, y_true, y_pred = [], [], []
    for i in range(500):
        gold, pred = rng.choice(answers), rng.choice(answers)
        items.append(ItemResult(id=str(i), output=f" {pred.title()}. ", expected=gold.upper()))
        y_true.append(gold)
        y_pred.append(pred)
    measurement = score(items, ["f1"]).measurements["default.f1"]
    _, _, want, _ = precision_recall_fscore_support(
        y_true, y_pred, labels=sorted(set(y_true)), average="macro", zero_division=0
    )
    assert measurement.value == pytest.approx(want, abs=1e-12)


def test_per_item_extras_hold_pred_and_gold() -> None:
    """pred is the extracted label (None when failed), gold the matched or first answer."""
    items = [
        ItemResult(id="1", output="It is a Cat.", expected="cat"),
        ItemResult(id="2", output="dog", expected="cat"),
        ItemResult(id="3", output=None, expected=("Fish", "bird")),
        ItemResult(id="4", output="a bird", expected=("Fish", "bird")),
        ItemResult(id="5", output="no idea", expected="cat"),
    ]
    result = score(items, [{"name": "f1", "labels": LABELS}])
    got = [(s.status, s.value, dict(s.extra)) for s in (item.scores["f1"] for item in result.items)]
    assert got == [
        (Status.OK, 1.0, {"pred": "cat", "gold": "cat"}),
        (Status.FAIL, 0.0, {"pred": "dog", "gold": "cat"}),
        (Status.FAIL, 0.0, {"pred": None, "gold": "fish"}),
        (Status.OK, 1.0, {"pred": "bird", "gold": "bird"}),
        (Status.FAIL, 0.0, {"pred": "no idea", "gold": "cat"}),
    ]


def test_count_failed_false_leaves_failed_requests_out() -> None:
    """With count_failed=False failed requests are skipped and are no false negatives."""
    items, y_true, y_pred = labelled_items(1000, seed=3)
    result = score(items, [{"name": "f1", "labels": LABELS, "count_failed": False}])
    kept = [(t, p) for t, p in zip(y_true, y_pred) if p != FAILED]
    _, _, want, _ = precision_recall_fscore_support(
        [t for t, _ in kept],
        [p for _, p in kept],
        labels=sorted({t for t, _ in kept}),
        average="macro",
        zero_division=0,
    )
    measurement = result.measurements["default.f1"]
    assert measurement.value == pytest.approx(want, abs=1e-12)
    assert measurement.n == len(kept)
    assert measurement.counts[Status.SKIP] == len(items) - len(kept)


def test_groups_get_their_own_f1() -> None:
    """Each group's measurement is the F1 of that group's items alone."""
    items, y_true, y_pred = labelled_items(800, seed=5)
    items = [
        attrs.evolve(item, group="even" if i % 2 == 0 else "odd") for i, item in enumerate(items)
    ]
    result = score(items, [{"name": "f1", "labels": LABELS}])
    for group, parity in (("even", 0), ("odd", 1)):
        t = y_true[parity::2]
        p = y_pred[parity::2]
        _, _, want, _ = precision_recall_fscore_support(
            t, p, labels=sorted(set(t)), average="macro", zero_division=0
        )
        measured = result.measurements["default.f1"].groups[group].value
        assert measured == pytest.approx(want, abs=1e-12)


def test_nothing_scored_gives_no_value() -> None:
    """With no scored item (no answer keys) the value is None and n is 0."""
    items = [ItemResult(id=str(i), output="cat", expected=None) for i in range(3)]
    measurement = score(items, ["f1"]).measurements["default.f1"]
    assert (measurement.value, measurement.n, measurement.error) == (None, 0, None)
    failed_only = [ItemResult(id="1", output=None, expected="cat")]
    left_out = score(failed_only, [{"name": "f1", "count_failed": False}])
    assert left_out.measurements["default.f1"].value is None


def test_bootstrap_interval_is_reproducible_and_contains_the_estimate() -> None:
    """The same seed gives the same interval, another seed another; both hold the estimate."""
    items, _, _ = labelled_items(2000, seed=11)
    metrics = [{"name": "f1", "labels": LABELS}]
    first = score(items, metrics, seed=1).measurements["default.f1"]
    again = score(items, metrics, seed=1).measurements["default.f1"]
    other = score(items, metrics, seed=2).measurements["default.f1"]
    assert (first.ci_low, first.ci_high) == (again.ci_low, again.ci_high)
    assert (first.ci_low, first.ci_high) != (other.ci_low, other.ci_high)
    for m in (first, other):
        assert m.value is not None
        assert m.ci_low is not None
        assert m.ci_high is not None
        assert 0.0 <= m.ci_low < m.value < m.ci_high <= 1.0


def test_interval_narrows_with_more_items() -> None:
    """Twenty-five times the items from the same process give a clearly narrower interval."""
    metrics = [{"name": "f1", "labels": LABELS}]
    small = score(labelled_items(400, seed=4)[0], metrics).measurements["default.f1"]
    large = score(labelled_items(10_000, seed=4)[0], metrics).measurements["default.f1"]
    small_width = _width(small.ci_low, small.ci_high)
    large_width = _width(large.ci_low, large.ci_high)
    assert large_width < 0.5 * small_width


def test_confidence_level_widens_the_interval() -> None:
    """A 99% interval contains the 80% one."""
    items, _, _ = labelled_items(1000, seed=6)
    metrics = [{"name": "f1", "labels": LABELS}]
    wide = score(items, metrics, confidence=0.99).measurements["default.f1"]
    narrow = score(items, metrics, confidence=0.8).measurements["default.f1"]
    assert wide.confidence == 0.99
    bounds = (wide.ci_low, narrow.ci_low, narrow.ci_high, wide.ci_high)
    assert None not in bounds
    assert sorted(bounds) == list(bounds)  # type: ignore[type-var]
    assert len(set(bounds)) == 4


def test_bootstrap_in_blocks_uses_every_resample(monkeypatch: pytest.MonkeyPatch) -> None:
    """A table too large for one block is resampled in seeded blocks: 2000 draws, reproducible."""
    sizes: list[int] = []

    def spy(samples: Any, confidence: float = 0.95) -> tuple[float | None, float | None]:
        sizes.append(np.asarray(samples).size)
        return percentile_interval(samples, confidence)

    monkeypatch.setattr(aggregate, "percentile_interval", spy)  # f1 imports it when aggregating
    monkeypatch.setattr(f1_module, "_BLOCK_CELLS", 64)
    items, _, _ = labelled_items(1000, seed=21)
    metrics = [{"name": "f1", "labels": LABELS}]
    first = score(items, metrics, seed=5).measurements["default.f1"]
    again = score(items, metrics, seed=5).measurements["default.f1"]
    assert sizes == [f1_module.N_RESAMPLES, f1_module.N_RESAMPLES]
    assert (first.ci_low, first.ci_high) == (again.ci_low, again.ci_high)
    bounds = (first.ci_low, first.value, first.ci_high)
    assert None not in bounds
    assert sorted(bounds) == list(bounds)  # type: ignore[type-var]


def _width(low: float | None, high: float | None) -> float:
    assert low is not None
    assert high is not None
    return high - low


@pytest.mark.parametrize("average", AVERAGES)
def test_vectorised_resample_scores_match_scikit_learn(average: str) -> None:
    """Each resampled confusion table scores as scikit-learn scores it, classes coming and going."""
    rng = np.random.default_rng(0)
    pairs: dict[tuple[str, str | None], int] = {}
    for gold in ("a", "b", "c", "rare"):
        for pred in ("a", "b", "c", "rare", "zzz", None):
            if rng.random() < 0.7:
                pairs[(gold, pred)] = int(rng.integers(1, 30)) if gold != "rare" else 1
    pairs[("rare", "rare")] = 1
    cells = _Cells.from_pairs(pairs)
    draws = rng.multinomial(cells.counts.sum(), cells.counts / cells.counts.sum(), size=300)
    got = cells.scores(draws)
    keys = list(pairs)
    y_true = [g for g, _ in keys]
    y_pred = [FAILED if p is None else p for _, p in keys]
    for row, counts in enumerate(draws):
        present = sorted({g for (g, _), c in zip(keys, counts) if c > 0})
        precision, recall, f1, _ = precision_recall_fscore_support(
            y_true, y_pred, labels=present, average=average, sample_weight=counts, zero_division=0
        )
        assert got[f"f1_{average}"][row] == pytest.approx(f1, abs=1e-12)
        assert got[f"precision_{average}"][row] == pytest.approx(precision, abs=1e-12)
        assert got[f"recall_{average}"][row] == pytest.approx(recall, abs=1e-12)


def test_aggregate_of_distinct_score_objects_equals_shared_ones() -> None:
    """Scores read back one object per item (as from a saved file) aggregate the same."""
    items, _, _ = labelled_items(1500, seed=9)
    metric = F1(labels=LABELS)
    metric.bind("f1")
    ctx = MetricContext(label="f1", seed=3)
    shared = metric.score_items(items, ctx)
    assert len({id(s) for s in shared}) < len(shared) // 4  # equal verdicts share objects
    copies = [attrs.evolve(s, extra=dict(s.extra)) for s in shared]
    assert metric.aggregate(copies, ctx) == metric.aggregate(shared, ctx)


def test_saved_and_reloaded_results_give_the_same_f1(tmp_path: Any) -> None:
    """Re-aggregating scores loaded from results.json gives the same numbers."""
    items, _, _ = labelled_items(500, seed=12)
    result = score(items, [{"name": "f1", "labels": LABELS}])
    path = tmp_path / "results.json"
    result.save_json(path)
    loaded = RunResult.load_json(path)
    metric = F1(labels=LABELS)
    ctx = MetricContext(label="f1")
    estimate = metric.aggregate([item.scores["f1"] for item in loaded.items], ctx)
    assert estimate.value == result.measurements["default.f1"].value
    assert estimate.extra == result.measurements["default.f1"].extra


def test_aggregate_refuses_scores_without_gold() -> None:
    """A scored item without a gold label in its extra is a clear aggregation error."""
    with pytest.raises(ValueError, match="gold"):
        F1().aggregate([ItemScore.ok("f1")], MetricContext())


def test_batch_and_single_scoring_agree() -> None:
    """score_items gives exactly the verdicts of score_item, item for item."""
    items, _, _ = labelled_items(2000, seed=13)
    for options in ({}, {"labels": LABELS}, {"labels": LABELS, "count_failed": False}):
        metric = F1(**options)
        metric.bind("f1")
        ctx = MetricContext()
        assert metric.score_items(items, ctx) == [metric.score_item(i, ctx) for i in items]


@pytest.mark.parametrize(
    ("value", "hint"),
    [
        pytest.param("macr", "Did you mean 'macro'", id="typo"),
        pytest.param("mean", "'macro', 'micro', 'weighted'", id="unknown"),
    ],
)
def test_bad_average_names_the_allowed_values(value: str, hint: str) -> None:
    """A bad average is an OptionError naming the allowed values (and a close one)."""
    with pytest.raises(OptionError) as info:
        score([ItemResult(id="1", output="a", expected="a")], [{"name": "f1", "average": value}])
    message = str(info.value)
    assert "average" in message
    assert repr(value) in message
    assert hint in message


def test_bad_average_built_directly_is_a_value_error() -> None:
    """F1(average=...) outside the allowed values raises a ValueError naming them."""
    with pytest.raises(ValueError, match="'macro', 'micro', 'weighted'"):
        F1(average="mean")  # type: ignore[arg-type]


def test_empty_labels_is_refused() -> None:
    """labels=[] is an OptionError at configuration time."""
    with pytest.raises(OptionError, match="labels"):
        score([ItemResult(id="1", output="a", expected="a")], [{"name": "f1", "labels": []}])


def test_unknown_option_lists_the_valid_ones() -> None:
    """An unknown option is an OptionError listing every option of f1."""
    with pytest.raises(OptionError) as info:
        score([ItemResult(id="1", output="a", expected="a")], [{"name": "f1", "avg": "micro"}])
    for option in F1.options():
        assert f"`{option}`" in str(info.value)


def test_options_and_defaults_follow_the_reference() -> None:
    """average and labels first, then the five normalisation options."""
    options = F1.options()
    assert list(options) == [
        "average",
        "labels",
        "ignore_case",
        "trim_punctuation",
        "ignore_punctuation",
        "nfkc",
        "count_failed",
        "extract",
        "extract_pick",
    ]
    assert options["average"].default == "macro"
    assert options["average"].choices == ("macro", "micro", "weighted")
    assert options["labels"].default is None


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.text(max_size=8)),
            st.lists(st.text(max_size=8), min_size=1, max_size=2),
        ),
        min_size=1,
        max_size=8,
    ),
    st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=3),
)
def test_arbitrary_unicode_never_errors(
    rows: list[tuple[str | None, list[str]]], labels: list[str]
) -> None:
    """Arbitrary Unicode outputs, answers and labels: no error score, F1 within [0, 1]."""
    items = [ItemResult(id=str(i), output=o, expected=e) for i, (o, e) in enumerate(rows)]
    metrics: list[Any] = ["f1", {"name": "f1", "label": "f1_labels", "labels": labels}]
    result = score(items, metrics)
    for item in result.items:
        assert all(s.status is not Status.ERROR for s in item.scores.values())
    for measurement in result.measurements.values():
        assert measurement.error is None
        if measurement.value is not None:
            assert 0.0 <= measurement.value <= 1.0


def test_mean_over_groups_interval_stays_within_zero_and_one() -> None:
    """F1 near 1 in every group: the interval of the mean over groups never passes 1.0."""
    data = []
    for g in range(3):
        for i in range(12):
            gold = "pos" if i % 2 else "neg"
            wrong = {"pos": "neg", "neg": "pos"}[gold]
            output = gold if i else wrong
            data.append(ItemResult(id=f"{g}-{i}", group=f"g{g}", output=output, expected=gold))
    result = score(data, [{"name": "f1", "labels": ["pos", "neg"]}])
    m = result.measurements["default.f1"]
    assert all(gm.ci_high == 1.0 for gm in m.groups.values())  # each group's reaches 1
    assert m.extra["macro_low"] < m.extra["macro"] < m.extra["macro_high"]
    assert m.extra["macro_high"] == 1.0
