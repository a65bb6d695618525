"""results.md: an lm-eval-style Markdown table, read back with a Markdown parser."""

from __future__ import annotations

from pathlib import Path

from markdown_it import MarkdownIt

import itemscore
from itemscore import ItemResult
from itemscore.reports import export
from itemscore.reports.results_md import markdown_table


def rows_of(text: str) -> list[list[str]]:
    """The table's rows as cell texts, as a CommonMark + GFM-tables parser reads them."""
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    rows: list[list[str]] = []
    for i, token in enumerate(tokens):
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and tokens[i - 1].type in ("td_open", "th_open"):
            rows[-1].append(token.content)
        elif token.type in ("td_open", "th_open") and tokens[i + 1].type != "inline":
            rows[-1].append("")
    return rows


def _run() -> itemscore.RunResult:
    data = [
        ItemResult(id=str(i), model=m, output="a" if i % (2 + k) else "b", expected="a",
                   group=("algebra", "history")[i % 2], metadata={"cost": 0.0004 * (1 + k)})
        for k, m in enumerate(("small|v1", "large"))
        for i in range(60)
    ]  # fmt: skip
    return itemscore.score(data, ["exact_match", "cost"], suite_id="qa")


def test_one_row_per_measurement_and_group_with_the_direction() -> None:
    """Header, then each model's metrics with ↑/↓, their groups, and the cost of a success."""
    result = _run()
    rows = rows_of(markdown_table(result))
    assert rows[0] == ["Suite", "Model", "Metric", "", "Value", "95% interval", "Method", "n"]
    assert all(len(r) == 8 for r in rows)
    head = {(r[1], r[2]): r for r in rows[1:] if r[1]}
    assert head[("small|v1", "Exact match")][3] == "↑"  # the pipe in the name stays in its cell
    assert head[("large", "Cost")][3] == "↓"
    assert head[("large", "Cost")][4] == "$0.0008000"  # no spread: four significant digits
    assert ("large", "Cost per success (exact_match)") in head
    assert [r[2] for r in rows[1:4]] == ["Exact match", "- algebra", "- history"]
    m = result.by_model["large"]["qa.exact_match"]
    assert head[("large", "Exact match")][7] == str(m.n)


def test_a_significant_lead_is_bold_and_explained() -> None:
    """The model whose lead is significant has its value in bold; the note says why."""
    text = markdown_table(_run())
    assert "**" in text
    assert "**Bold**: the model's lead over every other model is significant" in text


def test_written_only_when_asked(tmp_path: Path) -> None:
    """`--report md` writes results.md; the default set leaves it out."""
    result = _run()
    written = export(result, tmp_path / "a", ["md"])
    assert [p.name for p in written] == ["results.md"]
    assert "results.md" not in {p.name for p in export(result, tmp_path / "b")}
