"""Grouped measurements in the tables: pooled and macro values labelled, small groups flagged."""

from __future__ import annotations

import csv
import io
import re

import pytest
from rich.console import Console

import itemscore
from itemscore import ItemResult, RunResult
from itemscore._terminal import format_interval, format_value, result_tables
from itemscore.display._format import decimals_for
from itemscore.engine._measure import SMALL_GROUP
from itemscore.reports._html_numbers import number
from itemscore.reports.report_html import report_html
from itemscore.reports.summary_csv import summary_csv
from itemscore.reports.table_tex import latex_table, tex_text
from itemscore.summary._summary import MACRO_NAME, POOLED_NAME, summary_rows

#: A group name the LaTeX and HTML writers must escape.
TINY = "tiny & <b>5%</b>_{x}"


@pytest.fixture(scope="module")
def result() -> RunResult:
    """Two models; per model a group of 60 items, one of 12 and one of 5 (the last two small)."""
    data = []
    for model, period in (("a", 3), ("b", 4)):
        for i, group in enumerate(["big"] * 60 + ["small"] * 12 + [TINY] * 5):
            right = i % period != 0 if group != TINY else i % 2 == 0
            data.append(
                ItemResult(
                    id=str(i), model=model, group=group, output="yes" if right else "no",
                    expected="yes",
                )
            )  # fmt: skip
    return itemscore.score(data, ["exact_match"], suite_id="grouped")


def render(result: RunResult, *, by_group: bool) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=200, color_system=None)
    for table in result_tables(result, by_group=by_group, layout="wide"):
        console.print(table)
    return buffer.getvalue()


def test_the_fixture_has_small_and_large_groups(result: RunResult) -> None:
    m = result.by_model["a"]["grouped.exact_match"]
    assert {g: gm.n for g, gm in m.groups.items()} == {"big": 60, "small": 12, TINY: 5}
    assert [g for g, gm in m.groups.items() if gm.extra.get("small_group")] == ["small", TINY]
    assert SMALL_GROUP == 30


def test_terminal_labels_pooled_and_macro_rows_and_flags_small_groups(result: RunResult) -> None:
    text = render(result, by_group=True)
    lines = text.splitlines()
    for model in ("a", "b"):
        m = result.by_model[model]["grouped.exact_match"]
        title = lines.index(next(line for line in lines if line.strip() == f"grouped · {model}"))
        table = lines[title:]
        pooled = next(line for line in table if f"exact_match · {POOLED_NAME}" in line)
        d = decimals_for(m.value, m.ci_low, m.ci_high)
        assert format_value(m.value, d) in pooled
        assert format_interval(m.ci_low, m.ci_high, d) in pooled
        macro = next(line for line in table if f"{MACRO_NAME} (3)" in line)
        d = decimals_for(m.extra["macro"], m.extra["macro_low"], m.extra["macro_high"])
        assert format_value(m.extra["macro"], d) in macro
        assert format_interval(m.extra["macro_low"], m.extra["macro_high"], d) in macro
        assert m.extra["macro"] != pytest.approx(m.value)  # the two really differ here
        small = next(line for line in table if re.search(r"^\s+small\b", line))
        assert "small †" in small
        g = m.groups["small"]
        assert format_value(g.value, decimals_for(g.value, g.ci_low, g.ci_high)) in small
        big = next(line for line in table if re.search(r"^\s+big\b", line))
        assert "†" not in big
        assert "tiny & <b>5%</b>_{x} †" in text
    assert text.count(f"† fewer than {SMALL_GROUP} scored items in the group") == 2


def test_terminal_without_groups_is_unchanged(result: RunResult) -> None:
    text = render(result, by_group=False)
    assert POOLED_NAME not in text
    assert MACRO_NAME not in text
    assert "†" not in text
    plain = itemscore.score(
        [ItemResult(id=str(i), output="yes", expected="yes", group="g") for i in range(40)],
        ["exact_match"],
    )
    grouped = render(plain, by_group=True)
    assert POOLED_NAME in grouped
    assert "micro" not in grouped  # F1's word: its value over all items is a macro average
    assert "†" not in grouped  # 40 items: not small


def test_summary_rows_label_pooled_macro_and_group_rows(result: RunResult) -> None:
    rows = [r for r in summary_rows(result) if r["model"] == "a"]
    m = result.by_model["a"]["grouped.exact_match"]
    assert [(r["aggregation"], r["group"], r["small_group"]) for r in rows] == [
        ("pooled", None, None),
        ("macro", None, None),
        ("group", "big", 0),
        ("group", "small", 1),
        ("group", TINY, 1),
    ]
    macro = rows[1]
    assert (macro["value"], macro["ci_low"], macro["ci_high"]) == (
        m.extra["macro"],
        m.extra["macro_low"],
        m.extra["macro_high"],
    )
    assert rows[0]["value"] == m.value


def test_summary_csv_has_the_aggregation_and_small_group_columns(result: RunResult) -> None:
    table = list(csv.DictReader(io.StringIO(summary_csv(result))))
    m = result.by_model["b"]["grouped.exact_match"]
    macro = next(r for r in table if r["model"] == "b" and r["aggregation"] == "macro")
    assert float(macro["value"]) == m.extra["macro"]
    assert float(macro["ci_low"]) == m.extra["macro_low"]
    assert float(macro["ci_high"]) == m.extra["macro_high"]
    flags = {r["group"]: r["small_group"] for r in table if r["model"] == "b" and r["group"]}
    assert flags == {"big": "0", "small": "1", TINY: "1"}


def test_summary_csv_of_an_ungrouped_run_leaves_the_new_columns_empty() -> None:
    result = itemscore.score([ItemResult(id="1", output="x", expected="x")], ["exact_match"])
    (row,) = csv.DictReader(io.StringIO(summary_csv(result)))
    assert (row["aggregation"], row["small_group"]) == ("", "")


def test_table_tex_adds_the_macro_line_and_names_small_groups(result: RunResult) -> None:
    tex = latex_table(result, groups=True)
    for model in ("a", "b"):
        m = result.by_model[model]["grouped.exact_match"]
        macro = f"{m.extra['macro']:.2f}"
        interval = f"{{[}}{m.extra['macro_low']:.2f}, {m.extra['macro_high']:.2f}{{]}}"
        line = next(x for x in tex.splitlines() if x.startswith(rf"\quad {MACRO_NAME}"))
        assert macro in tex
        assert interval in tex
        assert line
        assert tex_text(model) in tex
    note = next(line for line in tex.splitlines() if "Note:" in line)
    assert f"Values are over {POOLED_NAME}" in note
    assert f"fewer than {SMALL_GROUP} scored items" in note
    assert f"small, {tex_text(TINY)}." in note
    assert r"tiny \& \textless{}b\textgreater{}5\%" in note
    assert "<b>" not in tex


def test_table_tex_of_an_ungrouped_run_has_no_macro_line() -> None:
    result = itemscore.score([ItemResult(id="1", output="x", expected="x")], ["exact_match"])
    tex = latex_table(result)
    assert "macro" not in tex
    assert "pooled" not in tex


def test_report_html_has_the_group_table_with_labels_and_flags(result: RunResult) -> None:
    """One row per group with a column per model; pooled and macro rows first, small flagged."""
    page = report_html(result)
    a = result.by_model["a"]["grouped.exact_match"]
    b = result.by_model["b"]["grouped.exact_match"]
    assert f"<tr><td>{POOLED_NAME}</td>" in page
    assert "micro" not in page
    macro_a = number(a.extra["macro"], a.extra["macro_low"], a.extra["macro_high"])
    macro_b = number(b.extra["macro"], b.extra["macro_low"], b.extra["macro_high"])
    row = re.search(rf"<tr><td>{MACRO_NAME} \(mean of 3 groups\)</td>(.*?)</tr>", page)
    assert row is not None
    assert re.findall(r'<td class="num">([^<]*)</td>', row.group(1))[::2] == [macro_a, macro_b]
    assert '<td data-v="small">small †</td>' in page
    assert '<td data-v="big">big</td>' in page
    assert "tiny &amp; &lt;b&gt;5%&lt;/b&gt;_{x} †" in page
    assert "<b>5%" not in page
    assert f"† fewer than {SMALL_GROUP} scored items in the group" in page
