"""Tests for `itemscore compare` and the comparison reports (table, JSON, CSV, LaTeX, plot)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import itemscore
from itemscore import ItemResult, RunResult, compare
from itemscore._compare_out import comparison_csv, comparison_rows, comparison_tex
from itemscore.cli._compare_commands import compare_command

FILES = {"comparison.json", "comparison.csv", "comparison.tex", "comparison.png", "comparison.svg"}


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    result = itemscore.run(itemscore.get_suite("demo-sentiment"))
    return result.save_json(tmp_path_factory.mktemp("runs") / "results.json")


def invoke(*args: str | Path) -> object:
    return CliRunner().invoke(compare_command, [str(a) for a in args], catch_exceptions=False)


def test_table_shows_every_metric_with_interval_and_note(saved: Path) -> None:
    """The table has one row per metric, the interval, the p-values and a note on methods."""
    out = invoke(saved)
    assert out.exit_code == 0, out.output  # type: ignore[attr-defined]
    text = out.output  # type: ignore[attr-defined]
    # The interval is 0.42 wide: two decimals, one past its first digit.
    for word in ("accuracy", "f1", "answered_rate", "-0.30 [-0.49, -0.07]", "mcnemar-exact"):
        assert word in text
    assert "Holm" in text
    assert "books" not in text
    assert "books" in invoke(saved, "--by-group").output  # type: ignore[attr-defined]


def test_json_lists_the_comparison_fields(saved: Path) -> None:
    """--json prints a list of objects with the Comparison fields, equal to compare()."""
    out = invoke(saved, "--json", "-m", "accuracy")
    data = json.loads(out.output)  # type: ignore[attr-defined]
    assert len(data) == 1
    expected = compare(RunResult.load_json(saved), metrics=["accuracy"])[0].to_dict()
    assert data[0] == json.loads(json.dumps(expected))
    for field in ("key", "metric", "baseline", "candidate", "difference", "p_adjusted", "mde"):
        assert field in data[0]


def test_out_writes_every_file(saved: Path, tmp_path: Path) -> None:
    """--out writes JSON, CSV, LaTeX and the forest plot as PNG and SVG."""
    out_dir = tmp_path / "cmp"
    result = invoke(saved, "--out", out_dir)
    assert result.exit_code == 0  # type: ignore[attr-defined]
    assert {p.name for p in out_dir.iterdir()} == FILES
    assert (out_dir / "comparison.png").read_bytes().startswith(b"\x89PNG")
    assert "<svg" in (out_dir / "comparison.svg").read_text()
    rows = list(csv.DictReader((out_dir / "comparison.csv").read_text().splitlines()))
    assert len(rows) == 12  # 3 metrics, each with 3 groups
    assert rows[0]["metric"] == "accuracy"
    assert rows[0]["group"] == ""
    tex = (out_dir / "comparison.tex").read_text()
    assert r"\begin{table}" in tex
    assert r"\caption{" in tex
    assert r"\textbf{$-$0.30}" in tex
    document = json.loads((out_dir / "comparison.json").read_text())
    assert document["sources"] == [str(saved)]


def test_bad_input_exits_2_naming_the_file_and_writes_nothing(tmp_path: Path) -> None:
    """A file that is no results.json: exit 2, the message names it, no output folder."""
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    out_dir = tmp_path / "cmp"
    result = invoke(bad, "--out", out_dir)
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert str(bad) in result.output  # type: ignore[attr-defined]
    assert not out_dir.exists()


def test_bad_baseline_exits_2(saved: Path, tmp_path: Path) -> None:
    """An unknown --baseline is exit 2 with a did-you-mean; nothing is written."""
    result = invoke(saved, "--baseline", "model-c", "--out", tmp_path / "cmp")
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert "Did you mean" in result.output  # type: ignore[attr-defined]
    assert not (tmp_path / "cmp").exists()


def test_two_files(saved: Path) -> None:
    """Two results files: the models of the same name are compared (first is the baseline).

    The same file twice has no folder to tell the runs apart: they are labelled a and b.
    """
    out = invoke(saved, saved, "--json")
    data = json.loads(out.output)  # type: ignore[attr-defined]
    assert {(c["baseline"], c["candidate"]) for c in data} == {
        ("model-a @ a", "model-a @ b"),
        ("model-b @ a", "model-b @ b"),
    }
    assert {c["difference"] for c in data} == {0.0}


def test_registered_in_the_cli(saved: Path) -> None:
    """`itemscore compare` is a command of the main group."""
    from itemscore.cli import cli

    result = CliRunner().invoke(cli, ["compare", str(saved), "-m", "f1"])
    assert result.exit_code == 0
    assert "paired-bootstrap" in result.output


def test_rows_and_csv_are_flat(saved: Path) -> None:
    """Rows flatten groups; CSV floats read back exactly; LaTeX escapes labels."""
    comparisons = compare(RunResult.load_json(saved))
    rows = comparison_rows(comparisons)
    assert [r["group"] for r in rows[:4]] == [None, "books", "electronics", "kitchen"]
    parsed = list(csv.DictReader(comparison_csv(comparisons).splitlines()))
    assert float(parsed[0]["difference"]) == comparisons[0].difference
    assert r"answered\_rate" in comparison_tex(comparisons)


def test_forest_plot_has_an_axis_per_metric_and_marks_a_costlier_candidate_worse() -> None:
    """Each metric has its own labelled axis; a significant cost increase is drawn as worse."""
    from itemscore._compare_out import PLOT_COLOURS, forest_plot

    data = [
        ItemResult(id=str(i), model=m, output="a" if i % (2 + k) else "b", expected="a",
                   metadata={"cost": 0.0004 * (1 + k) * (1 + (i % 3) / 10)})
        for k, m in enumerate(("small", "large"))
        for i in range(80)
    ]  # fmt: skip
    comparisons = compare(itemscore.score(data, ["exact_match", "cost"]))
    cost = next(c for c in comparisons if c.metric == "cost")
    assert cost.better == "small"  # large costs more on every item
    svg = forest_plot(comparisons)["svg"].decode()
    assert "exact_match: difference (candidate - baseline); → candidate better" in svg
    assert "cost: difference (candidate - baseline); ← candidate better (lower is better)" in svg
    assert PLOT_COLOURS["worse"].lower() in svg.lower()
    assert "candidate significantly worse" in svg


@pytest.mark.parametrize("width", [200, 100, 60])
def test_the_note_explains_mde_only_where_its_column_is_shown(width: int) -> None:
    """The wide layout has the MDE column and explains it; narrower ones drop both."""
    import io

    from rich.console import Console

    from itemscore._compare_out import comparison_table

    items = [
        ItemResult(id=str(i), model=m, output="x" if (i + len(m)) % 3 else "y", expected=("x",))
        for i in range(60)
        for m in ("model-alpha-long-name", "model-b")
    ]
    comparisons = compare(itemscore.score(items, ["exact_match", "token_f1"]))
    out = io.StringIO()
    Console(file=out, width=width, color_system=None).print(
        comparison_table(comparisons, width=width)
    )
    text = out.getvalue()
    has_column = any(line.split()[-1:] == ["MDE"] for line in text.splitlines())
    assert has_column == (width == 200), text
    assert ("MDE:" in " ".join(text.split())) == has_column, text


def test_the_forest_plot_is_the_same_bytes_each_time_it_is_drawn() -> None:
    """The same comparisons give the same PNG and SVG bytes (no timestamp, no random ids)."""
    from itemscore._compare_out import forest_plot

    data = [
        ItemResult(id=str(i), model=m, output="a" if i % (2 + k) else "b", expected="a")
        for k, m in enumerate(("small", "large"))
        for i in range(40)
    ]
    comparisons = compare(itemscore.score(data, ["exact_match"]))
    first, second = forest_plot(comparisons), forest_plot(comparisons)
    assert first["svg"] == second["svg"]
    assert first["png"] == second["png"]
