"""Tests for the cost metric and cost_per_success (itemscore.metrics_builtin.cost)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from statsmodels.stats.weightstats import DescrStatsW

from itemscore import ItemResult, Measurement, OptionError, Status, score
from itemscore.metrics_builtin.cost import Cost, cost_per_success


def item(i: int, cost: Any, output: str = "a", expected: str = "a", **more: Any) -> ItemResult:
    metadata = {"cost": cost, **more} if cost is not ... else more
    return ItemResult(id=f"i{i}", output=output, expected=[expected], metadata=metadata)


def test_mean_cost_with_a_normal_interval_lower_is_better() -> None:
    """The headline is the mean cost with statsmodels' normal interval; lower is better."""
    costs = [0.01, 0.03, 0.02, 0.05, 0.04]
    result = score([item(i, c) for i, c in enumerate(costs)], ["cost"])
    m = result.measurements["default.cost"]
    low, high = DescrStatsW(costs).zconfint_mean(alpha=0.05)
    assert m.value == pytest.approx(0.03, abs=1e-12)
    assert (m.ci_low, m.ci_high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
    assert m.higher_is_better is False
    assert m.reproducibility_class == "deterministic"
    assert m.extra["total"] == pytest.approx(0.15)


def test_interval_is_bounded_below_by_zero() -> None:
    """Costs are never negative, so neither is the interval's lower end."""
    result = score([item(0, 0.0), item(1, 0.0), item(2, 1.0)], ["cost"])
    assert result.measurements["default.cost"].ci_low == 0.0


@pytest.mark.parametrize(
    ("value", "status", "reason"),
    [
        pytest.param(0.5, Status.OK, None, id="number"),
        pytest.param(2, Status.OK, None, id="int"),
        pytest.param("0.25", Status.OK, None, id="numeric-string"),
        pytest.param(..., Status.SKIP, "no cost in metadata['cost']", id="missing"),
        pytest.param(None, Status.SKIP, "no cost in metadata['cost']", id="none"),
        pytest.param(math.nan, Status.SKIP, "no cost", id="nan"),
        pytest.param("nan", Status.SKIP, "no cost", id="nan-string"),
        pytest.param("cheap", Status.ERROR, "is not a number", id="text"),
        pytest.param(True, Status.ERROR, "is not a number but a bool", id="bool"),
        pytest.param(-1.0, Status.ERROR, "not a finite cost >= 0", id="negative"),
        pytest.param(math.inf, Status.ERROR, "not a finite cost >= 0", id="inf"),
    ],
)
def test_item_states(value: Any, status: Status, reason: str | None) -> None:
    """Numbers are scored; a missing cost is skipped; junk is the item's error."""
    got = score([item(0, value)], ["cost"]).items[0].scores["cost"]
    assert got.status is status
    if reason is not None:
        assert got.reason is not None
        assert reason in got.reason


def test_field_option_reads_nested_metadata() -> None:
    """`field` names another metadata field; dots go into nested mappings."""
    rows = [
        ItemResult(id="a", output="x", metadata={"usage": {"usd": 0.2}}),
        ItemResult(id="b", output="x", metadata={"usage": {"tokens": 3}}),
    ]
    result = score(rows, [{"name": "cost", "field": "usage.usd"}])
    assert [i.scores["cost"].status for i in result.items] == [Status.OK, Status.SKIP]
    assert result.items[1].scores["cost"].reason == "no cost in metadata['usage.usd']"


@pytest.mark.parametrize("field", ["", "usage.", ".cost"])
def test_bad_field_is_an_option_error(field: str) -> None:
    """An empty field name, or an empty part of a dotted one, is refused."""
    with pytest.raises(OptionError, match="must name a metadata field"):
        Cost(field=field)


def test_cost_per_success_divides_total_cost_by_ok_items() -> None:
    """Total cost / items the named metric scored ok, per run; None without a success."""
    rows = [
        item(0, 0.10, output="a", expected="a"),
        item(1, 0.30, output="b", expected="a"),
        item(2, 0.20, output="a", expected="a"),
    ]
    result = score(rows, ["cost", "exact_match"])
    m = result.measurements
    assert cost_per_success(m["default.cost"], m["default.exact_match"]) == pytest.approx(0.3)
    none_ok = Measurement(key="k", suite="s", metric="em", counts={"fail": 3})
    assert cost_per_success(m["default.cost"], none_ok) is None
    no_cost = Measurement(key="k", suite="s", metric="cost")
    assert cost_per_success(no_cost, m["default.exact_match"]) is None
    no_total = Measurement(key="k", suite="s", metric="cost", value=0.2, n=3)
    assert cost_per_success(no_total, m["default.exact_match"]) == pytest.approx(0.3)


def grouped_run(**cost_options: Any) -> Any:
    rows = [
        ItemResult(
            id=f"i{i}",
            output="a",
            expected=["a" if i % 2 else "b"],
            group=f"g{i % 2}",
            model=model,
            metadata={"cost": 0.5},
        )
        for model in ("m1", "m2")
        for i in range(6)
    ]
    return score(rows, ["exact_match", "answered_rate", {"name": "cost", **cost_options}])


def derived(result: Any, model: str) -> Measurement:
    ms = result.by_model[model]
    return ms["default.cost"].derived["cost_per_success"]


def test_cost_per_success_is_derived_per_model_and_group() -> None:
    """The run records the cost of one success per model and group, by the first other metric."""
    result = grouped_run()
    for model in ("m1", "m2"):
        head = derived(result, model)
        assert head.metric == "cost_per_success"
        assert head.display_name == "Cost per success (exact_match)"
        assert head.value == pytest.approx(3.0 / 3)
        assert head.n == 3
        assert head.unit == "USD"
        assert head.higher_is_better is False
        assert list(head.groups) == ["g0", "g1"]
        assert head.groups["g0"].value is None  # group g0: no exact match
        assert head.groups["g1"].value == pytest.approx(1.5 / 3)


def test_cost_per_success_survives_results_json(tmp_path: Any) -> None:
    """What was derived is saved: a loaded result shows it without the metric being configured."""
    from itemscore import RunResult

    result = grouped_run()
    result.save_json(tmp_path / "results.json")
    again = RunResult.load_json(tmp_path / "results.json")
    assert derived(again, "m1") == derived(result, "m1")


def test_cost_per_success_names_its_success_metric() -> None:
    """The `success` option picks the metric; a run with only costs derives nothing."""
    head = derived(grouped_run(success="answered_rate"), "m1")
    assert head.display_name == "Cost per success (answered_rate)"
    assert head.value == pytest.approx(3.0 / 6)
    only_cost = score([item(0, 1.0)], ["cost"])
    assert only_cost.measurements["default.cost"].derived == {}


def test_success_defaults_to_a_metric_where_higher_is_better() -> None:
    """A second cost (lower is better) is never the success metric."""
    rows = [item(i, 0.1 * (i + 1), output="a" if i % 2 else "b") for i in range(4)]
    specs = [{"name": "cost", "label": "c1"}, {"name": "cost", "label": "c2"}, "exact_match"]
    result = score(rows, specs)
    head = result.measurements["default.c1"].derived["c1_per_success"]
    assert head.display_name == "c1 per success (exact_match)"
    assert head.value == pytest.approx(1.0 / 2)


def test_cost_per_success_in_summary_and_terminal() -> None:
    """summary.csv and the terminal table show the cost of one success."""
    from rich.console import Console

    from itemscore._terminal import result_tables
    from itemscore.reports.summary_csv import summary_csv

    result = score([item(0, 0.2), item(1, 0.4, output="x")], ["exact_match", "cost"])
    lines = summary_csv(result).splitlines()
    assert lines[-1].startswith("default,cost_per_success,,,0.6000000000000001,,,none,0.95,1,")
    console = Console(width=200, record=True)
    for table in result_tables(result):
        console.print(table)
    text = console.export_text()
    assert "Cost per success (exact_match)" in text
    assert "$0.6000" in text


def test_paired_bootstrap_matches_the_loop_over_its_own_aggregate() -> None:
    """The vectorised comparison gives the means the metric's own aggregate gives."""
    from itemscore import compare

    rows = [
        ItemResult(id=f"i{i}", output="a", model=model, metadata={"cost": c * (1 + (i % 5) / 10)})
        for model, c in (("a", 0.001), ("b", 0.0015))
        for i in range(40)
    ]
    result = score(rows, ["cost"])
    (c,) = compare(result)
    assert c.value_a == pytest.approx(result.by_model["a"]["default.cost"].value, rel=1e-12)
    assert c.value_b == pytest.approx(result.by_model["b"]["default.cost"].value, rel=1e-12)
    assert c.method == "paired-bootstrap"
    assert c.extra["n_resamples"] == 2000
    assert c.ci_low is not None
    assert c.ci_low > 0
