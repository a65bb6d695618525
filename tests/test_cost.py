"""Tests for the cost metric and cost_per_success (itemscore.metrics_builtin.cost)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from statsmodels.stats.weightstats import DescrStatsW

from itemscore import ItemResult, Measurement, OptionError, Status, score
from itemscore.metrics_builtin.cost import Cost, cost_per_success, cost_per_success_rows


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


def test_cost_per_success_rows_per_model_and_group() -> None:
    """One row per model (then its groups), dividing by the first other metric's ok items."""
    rows = cost_per_success_rows(grouped_run())
    assert [(r.model, r.group) for r in rows] == [
        ("m1", None), ("m1", "g0"), ("m1", "g1"), ("m2", None), ("m2", "g0"), ("m2", "g1"),
    ]  # fmt: skip
    head = rows[0]
    assert (head.label, head.cost, head.success) == ("cost_per_success", "cost", "exact_match")
    assert head.value == pytest.approx(3.0 / 3)
    assert head.successes == 3
    assert rows[1].value is None  # group g0: no exact match
    assert rows[2].value == pytest.approx(1.5 / 3)


def test_cost_per_success_names_its_success_metric() -> None:
    """The `success` option picks the metric; a run with only costs has no rows."""
    rows = cost_per_success_rows(grouped_run(success="answered_rate"))
    assert rows[0].success == "answered_rate"
    assert rows[0].value == pytest.approx(3.0 / 6)
    only_cost = score([item(0, 1.0)], ["cost"])
    assert cost_per_success_rows(only_cost) == []


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
    assert "cost_per_success (exact_match)" in console.export_text()
