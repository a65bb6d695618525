"""The table of interval methods: adding a method is one entry that every reader picks up."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import numpy as np
import pytest
from click.testing import CliRunner
from numpy.typing import NDArray

from itemscore import ConfigError, aggregate
from itemscore.cli import cli
from itemscore.display._format import method_name
from itemscore.reports.eee import _aggregation
from itemscore.stats._intervals import AUTO, METHODS, IntervalMethod, Level, names

DOCS = Path(__file__).resolve().parents[1] / "docs" / "aggregation.md"


def _toy_bounds(
    k: NDArray[np.float64], n: NDArray[np.float64], at: Level
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """A toy interval: the share ± a width that only depends on the confidence level."""
    width = 1.0 - at.confidence
    return k / n - width, k / n + 2.0 * width


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> IntervalMethod:
    entry = IntervalMethod(
        "Toy interval", "a toy interval for a proportion", ratio_array=_toy_bounds
    )
    monkeypatch.setitem(METHODS, "toy", entry)
    return entry


def test_ratio_uses_a_method_added_to_the_table(toy: IntervalMethod) -> None:
    """One entry: ratio, ratio_interval, cluster_ratio and the method lists take it."""
    estimate = aggregate.ratio(3, 10, method="toy", confidence=0.9)
    assert (estimate.method, estimate.value) == ("toy", 0.3)
    assert estimate.low == pytest.approx(0.2, abs=1e-15)
    assert estimate.high == pytest.approx(0.5, abs=1e-15)
    low, high = aggregate.ratio_interval([3, 0], [10, 4], method="toy", confidence=0.9)
    np.testing.assert_allclose(low, [0.2, 0.0], atol=1e-15)  # clipped to [0, 1]
    np.testing.assert_allclose(high, [0.5, 0.2], atol=1e-15)
    clustered = aggregate.cluster_ratio([1, 0, 1, 0], ["a", "a", "b", "c"], method="toy")
    assert clustered.method.startswith("toy-cluster")
    assert "toy" in names("ratio")
    assert "toy" not in names("mean")
    with pytest.raises(ConfigError, match="must be one of"):
        aggregate.mean([1.0, 2.0], method="toy")


def test_unknown_method_message_lists_the_table(toy: IntervalMethod) -> None:
    """The error for an unknown name lists the table's names (the new one too) and a guess."""
    with pytest.raises(ConfigError) as caught:
        aggregate.ratio(1, 2, method="toyy")
    message = str(caught.value)
    assert message == (
        "`method` ('toyy') must be one of 'wilson', 'normal', 'clopper-pearson', 'jeffreys', "
        "'agresti-coull', 'mid-p', 'toy', 'auto'. Did you mean 'toy'?"
    )


def test_command_line_and_reports_take_a_method_added_to_the_table(
    toy: IntervalMethod, tmp_path: Path
) -> None:
    """`--ci toy` is accepted and used; results.md shows the entry's display name."""
    data = tmp_path / "d.jsonl"
    data.write_text(
        "".join(f'{{"output": "{o}", "expected": "a"}}\n' for o in "aaab"), encoding="utf-8"
    )
    out = tmp_path / "out"
    args = ["score", str(data), "-m", "exact_match", "--ci", "toy", "--confidence", "0.9"]
    result = CliRunner().invoke(cli, [*args, "--json", "--out", str(out), "--report", "md"])
    assert result.exit_code == 0, result.output
    (measurement,) = json.loads(result.stdout)["measurements"]
    assert measurement["ci_method"] == "toy"
    assert measurement["ci_low"] == pytest.approx(0.65, abs=1e-12)
    assert measurement["ci_high"] == pytest.approx(0.95, abs=1e-12)
    assert method_name("toy") == "Toy interval"
    score = cli.get_command(click.Context(cli), "score")
    assert score is not None
    (ci,) = [p for p in score.params if p.name == "ci_method"]
    assert "mid-p, toy (ratios)" in str(ci.get_help_record(click.Context(score)))
    assert "Toy interval" in (out / "results.md").read_text(encoding="utf-8")


def test_an_unknown_ci_method_is_refused_by_the_command_line(tmp_path: Path) -> None:
    """Without the entry, `--ci toy` is bad usage (exit 2) naming the table's methods."""
    data = tmp_path / "d.jsonl"
    data.write_text('{"output": "a", "expected": "a"}\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["score", str(data), "-m", "exact_match", "--ci", "toy"])
    assert result.exit_code == 2
    assert "'clopper-pearson'" in result.output
    assert "'bca'" in result.output


def test_every_entry_has_a_display_name_a_doc_line_and_a_kind() -> None:
    for name, entry in METHODS.items():
        assert name != AUTO
        assert entry.display.strip(), name
        assert entry.doc.strip(), name
        assert "\n" not in entry.doc, name
        assert entry.kinds, name
        if "mean" in entry.kinds:
            assert (entry.spread is None) != (entry.bootstrap is None), name


def test_the_method_lists_are_the_table() -> None:
    """The public tuples, the help of --ci and EEE's kinds all come from the table."""
    assert names("ratio") == aggregate.RATIO_METHODS
    assert names("mean") == aggregate.MEAN_METHODS
    assert names("geomean") == aggregate.GEOMEAN_METHODS
    score = cli.get_command(click.Context(cli), "score")
    assert score is not None
    (ci,) = [p for p in score.params if p.name == "ci_method"]
    ratios = ", ".join(names("ratio")[:-1])
    means = ", ".join(names("mean")[:-1])
    assert f"or {ratios} (ratios); {means} (means)." in str(
        ci.get_help_record(click.Context(score))
    )
    kinds = {name: _aggregation_of(name) for name in METHODS}
    assert kinds["wilson"] == kinds["mid-p"] == "ratio"
    assert kinds["normal"] == kinds["t"] == kinds["bca"] == "mean"
    assert _aggregation_of("cluster-t") == "custom"


def _aggregation_of(ci_method: str) -> str:
    class Duck:  # a measurement without a recorded aggregation (an older file)
        pass

    duck = Duck()
    duck.ci_method = ci_method  # type: ignore[attr-defined]
    return _aggregation(duck)  # type: ignore[arg-type]


def test_docs_name_every_method() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for name in METHODS:
        assert re.search(rf"`\"?{re.escape(name)}\"?`", text), name
