"""The Metric base class: class checks, score helpers, the default aggregate."""

from __future__ import annotations

import math
import statistics
from typing import Any

import pytest
from scipy import stats

from itemscore import ConfigError, ItemResult, ItemScore, Metric, MetricContext, Status


class Constant(Metric):
    """Scores every item with ``value``.

    Args:
        value: The score.
    """

    metric_id = "constant"
    aggregation = "mean"

    def __init__(self, value: float = 1.0) -> None:
        self.value = value

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        return self.ok(self.value)


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        ({"metric_id": "has space"}, "metric_id"),
        ({"metric_id": ""}, "metric_id"),
        ({"aggregation": "median"}, "aggregation.*'ratio', 'mean', 'geomean'"),
        ({"reproducibility_class": "random"}, "'deterministic', 'judge-based'"),
        ({"required_inputs": "output"}, r"e\.g\. \('output',\)"),
    ],
    ids=["space-in-id", "empty-id", "aggregation", "reproducibility", "required-str"],
)
def test_bad_class_attributes_fail_at_class_creation(
    attrs: dict[str, object], message: str
) -> None:
    """Mistakes in class attributes surface when the class is defined."""
    with pytest.raises(ConfigError, match=message):
        type("Bad", (Metric,), attrs)


def test_helpers_use_the_bound_label() -> None:
    """ok/fail/skip/error build scores for the metric's label in the run."""
    metric = Constant()
    assert metric.label == "constant"
    assert metric.ok().metric == "constant"
    metric.bind("c2")
    scores = [metric.ok(), metric.fail(), metric.ok(0.5), metric.skip("why"), metric.error("E")]
    assert {s.metric for s in scores} == {"c2"}
    assert [s.status for s in scores] == [
        Status.OK,
        Status.FAIL,
        Status.OK,
        Status.SKIP,
        Status.ERROR,
    ]
    assert metric.ok() is metric.ok()  # the common verdicts are shared frozen records
    assert metric.ok(extra={"a": 1}).extra["a"] == 1


def test_needs_answer_key_follows_required_inputs() -> None:
    """A metric needs an answer key when expected is a required input."""

    class Keyed(Constant):
        metric_id = "keyed"
        required_inputs = ("output", "expected")

    assert Keyed().needs_answer_key
    assert not Constant().needs_answer_key


def test_score_item_must_be_written() -> None:
    """The base score_item says which class forgot it."""

    class Lazy(Metric):
        metric_id = "lazy"

    with pytest.raises(NotImplementedError, match="Lazy must implement score_item"):
        Lazy().score_item(ItemResult(id="1", output="x"), MetricContext())


def _scores(values: list[float | None]) -> list[ItemScore]:
    out = []
    for v in values:
        if v is None:
            out.append(ItemScore.skip("m"))
        else:
            out.append(ItemScore.ok("m", v) if v > 0 else ItemScore.fail("m", v))
    return out


def test_default_ratio_counts_ok_among_scored() -> None:
    """The default ratio is ok / (ok + fail); skip and error are left out."""

    class R(Constant):
        metric_id = "r"
        aggregation = "ratio"

    scores = [*_scores([1, 1, 0, None]), ItemScore.error("m", "E")]
    est = R().aggregate(scores, MetricContext())
    assert (est.value, est.n, est.method) == (2 / 3, 3, "wilson")


def test_default_mean_uses_scored_values() -> None:
    """The default mean averages scored values, with a normal interval unless asked."""
    values = [0.2, 0.9, 0.4, 0.7]
    scores = [*_scores(values), ItemScore.skip("m")]
    est = Constant().aggregate(scores, MetricContext())
    assert est.value == pytest.approx(statistics.fmean(values), abs=1e-12)
    assert est.method == "normal"
    t_est = Constant().aggregate(scores, MetricContext(ci_method="t"))
    low, high = stats.t.interval(
        0.95, len(values) - 1, loc=statistics.fmean(values), scale=stats.sem(values)
    )
    assert (t_est.low, t_est.high) == pytest.approx((low, high), abs=1e-12)
    wilson = Constant().aggregate(scores, MetricContext(ci_method="wilson"))
    assert wilson.method == "normal"  # a ratio method does not apply to means


def test_default_geomean() -> None:
    """The geomean aggregation is the geometric mean of scored values."""

    class G(Constant):
        metric_id = "g"
        aggregation = "geomean"

    values = [1.0, 2.0, 4.0]
    est = G().aggregate(_scores(values), MetricContext())
    assert est.value == pytest.approx(2.0, abs=1e-12)
    assert est.low is not None
    assert est.high is not None
    assert est.low < 2.0 < est.high
    assert math.isclose(est.value, stats.gmean(values), abs_tol=1e-12)


def test_repr_names_the_metric() -> None:
    """A metric's repr shows its class and id."""
    assert repr(Constant()) == "<Constant 'constant'>"


def test_value_bounds_clip_the_mean_interval() -> None:
    """A mean near a bound keeps its interval inside value_bounds."""

    class Bounded(Constant):
        metric_id = "bounded"
        value_bounds = (0.0, 1.0)

    scores = _scores([1.0, 1.0, 1.0, 0.2])
    free = Constant().aggregate(scores, MetricContext())
    bounded = Bounded().aggregate(scores, MetricContext())
    assert free.high is not None
    assert free.high > 1.0  # the normal interval alone reaches past 1
    assert bounded.high == 1.0
    assert bounded.low == free.low
    assert bounded.value == free.value


@pytest.mark.usefixtures("fresh_registry")
def test_display_name_defaults_to_the_id_and_is_recorded() -> None:
    """display_name defaults to the metric id; the run records a chosen one, or the user's label."""
    from itemscore import register, score
    from itemscore._registry import unregister

    class Plain(Metric):
        metric_id = "test_metric_plain_name"
        required_inputs = ()

        def score_item(self, item: ItemResult, ctx: MetricContext) -> Any:
            return self.ok()

    class Named(Plain):
        metric_id = "test_metric_named"
        display_name = "Named metric"
        unit = "tokens"

    assert Plain.display_name == "test_metric_plain_name"
    assert Named.display_name == "Named metric"
    register(Named)
    try:
        specs = [Plain, Named, {"name": "test_metric_named", "label": "mine"}]
        result = score([ItemResult(id="1", output="x")], specs)
    finally:
        unregister("test_metric_named")
    ms = {m.metric: m for m in result.measurements.values()}
    assert ms["test_metric_plain_name"].name == "test_metric_plain_name"
    assert ms["test_metric_named"].display_name == "Named metric"
    assert ms["test_metric_named"].unit == "tokens"
    assert ms["mine"].name == "mine"  # the user's label wins over the metric's name


def test_a_failing_derivation_spoils_only_its_own_row() -> None:
    """derived_measurements raising: an error row in ``derived``, the measurement intact."""
    from itemscore import score

    class Deriving(Metric):
        metric_id = "test_metric_deriving"
        required_inputs = ()

        def score_item(self, item: ItemResult, ctx: MetricContext) -> Any:
            return self.ok()

        def derived_measurements(self, own: Any, others: Any) -> Any:
            raise ZeroDivisionError("nothing to divide")

    m = score([ItemResult(id="1", output="x")], [Deriving]).measurements[
        "default.test_metric_deriving"
    ]
    assert m.value == 1.0
    (row,) = m.derived.values()
    assert row.metric == "test_metric_deriving_derived"
    assert row.error is not None
    assert "ZeroDivisionError: nothing to divide" in row.error
