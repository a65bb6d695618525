"""The per-item writers read the run once, in order: same content however the items are held.

report.html's data and results.xlsx's Outputs sheet are compared with references built here
from the item records (``result.items``, each ``ItemScore``), independently of the score
columns the writers read. The workbook of the default set of a large run holds its first
items only, says so inside, and the export is told what to print.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

import itemscore
from itemscore import ItemResult, ItemScore, Metric, MetricContext, RunResult
from itemscore.display._text import one_line, printable
from itemscore.reports import report_html, results_xlsx

HOSTILE = "</script><b>&amp;\u2028\ud800\x1b[2J"


class Reasoned(Metric):
    """Skips items whose output starts with q, with a reason quoting the output."""

    metric_id = "test_writers_reasoned"
    required_inputs = ("output",)

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        assert item.output is not None
        if item.output.startswith("q"):
            return self.skip(f"starts with q: {item.output}")
        return self.ok(0.25 * len(item.output))


def run(n: int = 9) -> RunResult:
    data = []
    for i in range(n):
        output = HOSTILE if i == 1 else None if i == 2 else ("q" if i % 3 == 0 else "x") + str(i)
        data.append(
            ItemResult(
                id=f"item-{i}" if i != 4 else f"item\x07{i}",
                model=("alpha", "=beta")[i % 2],
                group=("geo", None)[i % 2],
                input=f"question {i}\n" if i % 2 else None,
                output=output,
                expected=("x" + str(i), "y") if i != 5 else None,
            )
        )
    return itemscore.score(data, ["exact_match", Reasoned, "answered_rate"], suite_id="w")


def loaded(result: RunResult, tmp_path: Path) -> RunResult:
    """The run read back from results.json: plain item records, no score columns."""
    path = tmp_path / "saved.json"
    result.save_json(path)
    return RunResult.load_json(path)


def page_data(text: str) -> Any:
    match = re.search(r'<script type="application/json" id="items-data">(.*?)</script>', text)
    assert match is not None
    assert "<" not in match.group(1)
    assert "&" not in match.group(1)
    return json.loads(match.group(1))


def visible(text: str) -> str:
    return text.replace("\ud800", "\\ud800")


def expected_page_items(result: RunResult, limit: int) -> list[dict[str, Any]]:
    """The page's items as the records say, written out field by field."""
    out = []
    for item in list(result.items)[:limit]:
        out.append(
            {
                "id": printable(item.id),
                "model": item.model and printable(item.model),
                "group": item.group and printable(item.group),
                "input": item.input and visible(item.input),
                "output": item.output and visible(item.output),
                "expected": visible(" | ".join(item.expected)) if item.expected else None,
                "scores": {
                    label: [s.status.value, s.value, s.reason and visible(s.reason)]
                    for label, s in item.scores.items()
                },
            }
        )
    return out


@pytest.mark.parametrize("source", ["run", "loaded"])
def test_html_items_are_the_records(source: str, tmp_path: Path) -> None:
    """Each item's fields and scores, escaped, from the columns or from loaded records alike."""
    result = run()
    if source == "loaded":
        result = loaded(result, tmp_path)
    data = page_data(report_html.report_html(result))
    assert data["items"] == expected_page_items(result, len(result.items))
    assert data["labels"] == ["exact_match", "test_writers_reasoned", "answered_rate"]
    assert data["models"] == ["alpha", "=beta"]


def test_html_file_is_the_page_written_piece_by_piece(tmp_path: Path) -> None:
    """report.html, written in pieces, is byte for byte the page's text (non-ASCII too)."""
    result = itemscore.score(
        [
            ItemResult(id="é1", output="naïve ✓", expected=["naïve ✓"]),
            ItemResult(id="2", output="</script>", expected=["x"]),
        ],
        metrics=["exact_match"],
    )
    path = tmp_path / "report.html"
    report_html.write(result, path)
    assert path.read_bytes() == report_html.report_html(result).encode("utf-8")


def test_html_holds_the_first_items_and_says_where_the_rest_are(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(report_html, "MAX_ITEMS", 4)
    result = run()
    text = report_html.report_html(result)
    assert page_data(text)["items"] == expected_page_items(result, 4)
    assert "the first 4 of 9 items; every item is in items.parquet" in text
    assert "9 items" in text


def test_html_cuts_the_middle_of_long_texts_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inputs, outputs, expected answers and reasons past MAX_TEXT keep their two ends."""
    monkeypatch.setattr(report_html, "MAX_TEXT", 4)
    result = run(4)
    text = report_html.report_html(result)
    items = page_data(text)["items"]
    assert [item["output"] for item in items] == [
        "q0",
        "</…[19 characters cut]…2J",
        None,
        "q3",
    ]
    assert [item["input"] for item in items] == [
        None,
        "qu…[7 characters cut]…1\n",
        None,
        "qu…[7 characters cut]…3\n",
    ]
    assert items[0]["expected"] == "x0…[2 characters cut]… y"
    assert items[0]["scores"]["test_writers_reasoned"][2] == "st…[13 characters cut]…q0"
    assert items[0]["id"] == "item-0"  # ids, models and groups are never cut
    assert "10 texts longer than 4 characters are shown here without their middle" in text
    monkeypatch.setattr(report_html, "MAX_TEXT", 4_000)
    assert 'id="cut"' not in report_html.report_html(result)


@pytest.mark.parametrize("code", range(128))
def test_printable_and_one_line_of_every_ascii_character(code: int) -> None:
    """The ASCII shortcut gives what the escaping rules give, character by character."""
    text = f"a{chr(code)}b"
    escaped = f"a\\x{code:02x}b" if code < 0x20 or code == 0x7F else text
    assert printable(text) == escaped
    breaks = "\r\n\t\v\f\x1c\x1d\x1e"
    assert one_line(text) == ("a b" if chr(code) in breaks else escaped)


# -- results.xlsx -----------------------------------------------------------------------------

openpyxl = pytest.importorskip("openpyxl")
pytest.importorskip("xlsxwriter")


def expected_rows(result: RunResult, limit: int) -> list[tuple[Any, ...]]:
    """The Outputs rows as the records say (the header apart)."""
    labels = result.labels
    rows = []
    for item in list(result.items)[:limit]:
        texts = (item.id, item.model, item.group, item.input, item.output)
        row: list[Any] = [
            t if t is None else t.replace("\x07", "\\x07").replace("\x1b", "\\x1b") for t in texts
        ]
        row = [None if t is None else t.replace("\ud800", "\\ud800") for t in row]
        row.append(" | ".join(item.expected) if item.expected else None)
        for label in labels:
            score = item.scores[label]
            row += [score.value, score.status.value]
        rows.append(tuple(row))
    return rows


@pytest.mark.parametrize("source", ["run", "loaded"])
def test_xlsx_outputs_are_the_records(source: str, tmp_path: Path) -> None:
    result = run()
    if source == "loaded":
        result = loaded(result, tmp_path)
    results_xlsx.write(result, tmp_path / "r.xlsx")
    rows = list(openpyxl.load_workbook(tmp_path / "r.xlsx")["Outputs"].values)
    assert rows[0][6:] == (
        "exact_match",
        "exact_match status",
        "test_writers_reasoned",
        "test_writers_reasoned status",
        "answered_rate",
        "answered_rate status",
    )
    assert rows[1:] == expected_rows(result, len(result.items))


def test_xlsx_limited_holds_the_first_items_and_a_note(tmp_path: Path) -> None:
    """With ``max_items``, the first items and, in the header row, where every item is."""
    result = run()
    results_xlsx.write(result, tmp_path / "r.xlsx", max_items=4, max_rows=3)
    book = openpyxl.load_workbook(tmp_path / "r.xlsx")
    assert book.sheetnames == ["Summary", "Outputs", "Outputs (2)"]
    rows = list(book["Outputs"].values) + list(book["Outputs (2)"].values)[1:]
    note = results_xlsx.limit_note(9, 4)
    assert rows[0][-1] == note
    assert "first 4 of 9 items" in note
    assert "items.parquet" in note
    assert "--report xlsx" in note
    assert [row[:-1] for row in rows[1:]] == expected_rows(result, 4)
    assert len(list(book["Summary"].values)) > 1  # the Summary is complete


def test_xlsx_limit_above_the_run_changes_nothing(tmp_path: Path) -> None:
    result = run()
    results_xlsx.write(result, tmp_path / "a.xlsx", max_items=9)
    results_xlsx.write(result, tmp_path / "b.xlsx")
    assert (tmp_path / "a.xlsx").read_bytes() == (tmp_path / "b.xlsx").read_bytes()


def test_item_limit_only_for_the_default_set_of_large_runs() -> None:
    limit = results_xlsx.ITEM_LIMIT
    assert results_xlsx.item_limit(explicit=False, n_items=limit) is None
    assert results_xlsx.item_limit(explicit=False, n_items=limit + 1) == limit
    assert results_xlsx.item_limit(explicit=True, n_items=10 * limit) is None
    notice = results_xlsx.limit_notice(1_000_000, limit)
    assert f"first {limit:,} of 1,000,000 items" in notice
    assert "items.parquet" in notice
    assert "--report xlsx" in notice


# -- reading results.json back with its items.jsonl ------------------------------------------


def test_items_file_read_back_line_by_line(tmp_path: Path) -> None:
    """Lines split at line feeds only; a bad line is named, after a hash that differs."""
    import hashlib

    from itemscore.reports import export

    result = itemscore.score(
        [ItemResult(id="a\u2028b", output="x\x85y", expected=("x",))], ["exact_match"]
    )
    export(result, tmp_path, ["json", "items", "jsonl"])
    back = RunResult.load_json(tmp_path / "results.json")
    assert list(back.items) == list(result.items)

    # A set written before items.parquet: results.json refers to items.jsonl.
    copy = tmp_path / "copy"  # plain files, not the links into the report set
    copy.mkdir()
    document = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    lines = (tmp_path / "items.jsonl").read_bytes()
    document["items"] = {
        "file": "items.jsonl",
        "count": 1,
        "sha256": hashlib.sha256(lines).hexdigest(),
    }
    (copy / "items.jsonl").write_bytes(lines)
    (copy / "results.json").write_text(json.dumps(document), encoding="utf-8")
    assert list(RunResult.load_json(copy / "results.json").items) == list(result.items)
    lines = b'{"id": \n'  # the one line the count allows, cut short
    (copy / "items.jsonl").write_bytes(lines)
    (copy / "results.json").write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(itemscore.ResultsFormatError, match="SHA-256 differs"):
        RunResult.load_json(copy / "results.json")
    document["items"]["sha256"] = hashlib.sha256(lines).hexdigest()
    (copy / "results.json").write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(itemscore.ResultsFormatError, match=r"items\.jsonl:1:8: not valid JSON"):
        RunResult.load_json(copy / "results.json")


def test_default_set_of_a_large_run_limits_the_workbook_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No format named: the first ITEM_LIMIT items and a notice; xlsx named: every item."""
    from itemscore.reports import export

    monkeypatch.setattr(results_xlsx, "ITEM_LIMIT", 4)
    result = run()
    notices: list[str] = []
    export(result, tmp_path / "default", notice=notices.append)
    assert results_xlsx.limit_notice(9, 4) in notices
    rows = list(openpyxl.load_workbook(tmp_path / "default" / "results.xlsx")["Outputs"].values)
    assert len(rows) == 1 + 4
    assert rows[0][-1] == results_xlsx.limit_note(9, 4)
    assert pq.read_metadata(tmp_path / "default" / "items.parquet").num_rows == 9
    notices.clear()
    export(result, tmp_path / "named", ["items", "xlsx"], notice=notices.append)
    assert notices == []
    rows = list(openpyxl.load_workbook(tmp_path / "named" / "results.xlsx")["Outputs"].values)
    assert len(rows) == 1 + 9


def test_cli_default_set_notes_the_limited_workbook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from itemscore.cli import cli

    monkeypatch.setattr(results_xlsx, "ITEM_LIMIT", 2)
    data = tmp_path / "d.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": str(i), "output": "x", "expected": ["x"]}) + "\n" for i in range(3)
        ),
        encoding="utf-8",
    )
    base = ["score", str(data), "-m", "exact_match", "--out"]
    ran = CliRunner().invoke(cli, [*base, str(tmp_path / "a")])
    assert ran.exit_code == 0, ran.output
    assert "results.xlsx holds the first 2 of 3 items" in ran.output
    ran = CliRunner().invoke(cli, [*base, str(tmp_path / "b"), "--report", "xlsx"])
    assert ran.exit_code == 0, ran.output
    assert "holds the first" not in ran.output
    rows = list(openpyxl.load_workbook(tmp_path / "b" / "results.xlsx")["Outputs"].values)
    assert len(rows) == 1 + 3
