"""A grouped measurement names the method of its macro interval: ``macro_ci_method[METHOD]``."""

from __future__ import annotations

from pathlib import Path

import itemscore
from itemscore import ItemResult, Measurement, RunResult, aggregate

GROUPS = [("a", "b", "c")[i % 3] if i < 45 else "a" for i in range(60)]


def methods(m: Measurement) -> list[str]:
    """The methods named by ``macro_ci_method[...]`` keys."""
    prefix = "macro_ci_method["
    return [k[len(prefix) : -1] for k in m.extra if k.startswith(prefix)]


def test_a_default_aggregate_names_macro_means_method() -> None:
    items = [
        ItemResult(id=str(i), output="yes" if i % 4 else "no", expected="yes", group=g)
        for i, g in enumerate(GROUPS)
    ]
    m = itemscore.score(items, ["exact_match"]).measurements["default.exact_match"]
    expected = aggregate.macro_mean([float(i % 4 != 0) for i in range(60)], GROUPS, bounds=(0, 1))
    assert expected.method == "macro-normal"
    assert methods(m) == ["macro-normal"]
    assert m.extra["macro_ci_method[macro-normal]"] == 1.0


def test_values_without_spread_name_the_wilson_bound() -> None:
    items = [ItemResult(id=str(i), output="y", expected="y", group=g) for i, g in enumerate(GROUPS)]
    m = itemscore.score(items, ["exact_match"]).measurements["default.exact_match"]
    expected = aggregate.macro_mean([1.0] * 60, GROUPS, bounds=(0, 1))
    assert expected.method == "macro-wilson"
    assert methods(m) == ["macro-wilson"]
    assert (m.extra["macro_low"], m.extra["macro_high"]) == (expected.low, expected.high)


def test_an_own_aggregate_names_the_combined_group_intervals() -> None:
    labels = ["pos", "neg"]
    items = [
        ItemResult(id=str(i), output=labels[i % 2], expected=labels[(i // 3) % 2], group=g)
        for i, g in enumerate(GROUPS)
    ]
    f1 = itemscore.MetricSpec("f1", options={"labels": labels})
    m = itemscore.score(items, [f1]).measurements["default.f1"]
    assert m.ci_method != "macro-from-group-intervals"
    assert "macro_low" in m.extra
    assert methods(m) == ["macro-from-group-intervals"]


def test_only_grouped_measurements_with_an_interval_name_a_method(tmp_path: Path) -> None:
    items = [
        ItemResult(id=str(i), output="yes" if i % 4 else "no", expected="yes", group=g)
        for i, g in enumerate(GROUPS)
    ]
    result = itemscore.score(items, ["exact_match", "answered_rate"])
    for m in result.measurements.values():
        assert len(methods(m)) == ("macro_low" in m.extra)
        assert all(methods(group) == [] for group in m.groups.values())
    ungrouped = itemscore.score([ItemResult(id="1", output="x", expected="x")], ["exact_match"])
    assert methods(ungrouped.measurements["default.exact_match"]) == []
    path = result.save_json(tmp_path / "results.json")
    again = RunResult.load_json(path).measurements["default.exact_match"]
    assert methods(again) == ["macro-normal"]
