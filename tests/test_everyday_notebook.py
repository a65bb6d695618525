"""A run in a notebook: a one-line repr, flat DataFrames, and the terminal's table as HTML."""

from __future__ import annotations

import html.parser
import io
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

import itemscore
from itemscore import ConfigError, Measurement, compare
from itemscore._terminal import result_tables
from itemscore.display._format import format_interval, format_value, shared_decimals

HOSTILE = "<script>alert(1)</script>"


def _rows(models: tuple[str, ...] = ("m1", "m2"), n: int = 100) -> list[dict[str, Any]]:
    return [
        {"id": str(i), "model": model, "output": "a" if i % (2 + k) else "b", "expected": "a",
         "group": "xy"[i % 2]}
        for k, model in enumerate(models)
        for i in range(n)
    ]  # fmt: skip


def _run(models: tuple[str, ...] = ("m1", "m2")) -> itemscore.RunResult:
    return itemscore.score(_rows(models), ["exact_match", "f1"], suite_id="qa")


# --- repr ---------------------------------------------------------------------------------


def test_run_repr_is_one_line_with_models_metrics_and_items() -> None:
    """Two models, two metrics, 200 items: named in one line, not a dump of every field."""
    text = repr(_run())
    assert text == "<RunResult qa: 2 models (m1, m2) \u00d7 2 metrics (exact_match, f1), 200 items>"
    assert len(text) <= 120


def test_run_repr_says_which_file_the_items_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run read from a file ends with that file, as the run recorded it."""
    path = tmp_path / "qa.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in _rows()), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = itemscore.score("qa.jsonl", ["exact_match"], suite_id="qa")
    assert repr(result) == (
        "<RunResult qa: 2 models (m1, m2) \u00d7 1 metric (exact_match), 200 items, from qa.jsonl>"
    )


def test_run_repr_stays_short_with_many_models_and_a_long_path(tmp_path: Path) -> None:
    """Names give way to counts, and a long path keeps its end (the file's name)."""
    models = tuple(f"provider/model-with-a-long-name-{k}" for k in range(4))
    folder = tmp_path.joinpath(*[f"folder-{k}" for k in range(8)])
    folder.mkdir(parents=True)
    path = folder / "questions.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in _rows(models, 10)), "utf-8")
    text = repr(itemscore.score(str(path), ["exact_match", "f1"], suite_id="qa"))
    assert len(text) <= 120
    assert text.startswith("<RunResult qa: 4 models \u00d7 2 metrics (exact_match, f1), 40 items")
    assert text.endswith("folder-7/questions.jsonl>")
    assert ", from \u2026" in text  # the path's start gave way, and says so
    assert "\n" not in text


def test_run_repr_shows_hostile_names_as_printable_text() -> None:
    """A model name with a control character cannot move the cursor of the terminal."""
    text = repr(_run(("a\x1b[2Jb", "m2")))
    assert "\x1b" not in text
    assert text.isprintable()


def test_measurement_and_comparison_reprs_are_one_line() -> None:
    """A measurement: value, interval, method, n; a comparison: difference, p, pairs."""
    result = _run()
    m = result.by_model["m2"]["qa.exact_match"]
    assert m.value is not None
    assert m.ci_low is not None
    assert m.ci_high is not None
    d = shared_decimals([(m.value, m.ci_low, m.ci_high)])
    assert repr(m) == (
        f"<Measurement qa.exact_match (m2): {m.value:.{d}f} [{m.ci_low:.{d}f}, "
        f"{m.ci_high:.{d}f}] Wilson, n=100, 2 groups>"
    )
    (c, *_) = compare(result)
    text = repr(c)
    assert text.startswith(f"<Comparison qa.exact_match {c.candidate} - {c.baseline}: +")
    assert f"{c.n_pairs} pairs" in text
    assert ("not significant" in text) is not c.significant
    assert len(text) <= 120


# --- measurements_df ------------------------------------------------------------------------


def _measurement_of(result: itemscore.RunResult, row: Mapping[str, Any]) -> Measurement:
    """The measurement a frame row stands for, found without the frame's code."""
    model = row["model"]
    block = result.measurements if model is None else result.by_model[model]
    m = block[row["key"]]
    group = row["group"]
    return m if group is None else m.groups[group]


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def test_measurements_df_cells_are_all_scalars_equal_to_the_measurements() -> None:
    """extra is expanded into extra.<name> columns; every row matches its Measurement."""
    result = _run()
    frame = result.measurements_df()
    assert "extra" not in frame.columns
    assert {"extra.precision", "extra.recall", "extra.coverage"} <= set(frame.columns)
    for column in frame.columns:
        for value in frame[column]:
            assert not isinstance(value, (dict, list, tuple, set, Mapping)), column
    records = frame.astype(object).where(frame.notna(), None).to_dict("records")
    # per model: 2 metrics x (overall + 2 groups); then the pooled rows
    assert len(records) == 3 * 2 * 3
    for row in records:
        m = _measurement_of(result, row)
        assert (row["value"], row["ci_low"], row["ci_high"]) == (m.value, m.ci_low, m.ci_high)
        assert (row["n"], row["ci_method"], row["error"]) == (m.n, m.ci_method, m.error)
        counts = [m.counts[s] for s in ("ok", "fail", "skip", "error")]  # type: ignore[index]
        assert [row["n_ok"], row["n_fail"], row["n_skip"], row["n_error"]] == counts
        extras = {k.removeprefix("extra."): v for k, v in row.items() if k.startswith("extra.")}
        assert {k: v for k, v in extras.items() if not _is_missing(v)} == dict(m.extra)


def test_measurements_df_keeps_the_dict_column_or_drops_it_on_request() -> None:
    """extra="column" is the former single dict column; extra="drop" leaves the numbers out."""
    result = _run()
    column = result.measurements_df(extra="column")
    dropped = result.measurements_df(extra="drop")
    assert list(column.columns) == [*dropped.columns, "extra"]
    assert not any(c.startswith("extra") for c in dropped.columns)
    first = result.by_model["m1"]["qa.f1"]
    row = column[(column["model"] == "m1") & (column["key"] == "qa.f1")].iloc[0]
    assert row["extra"] == dict(first.extra)


def test_measurements_df_names_a_bad_extra_mode() -> None:
    """A misspelt mode is refused with the modes that exist."""
    with pytest.raises(ConfigError, match=r"extra='expanded'.*'expand', 'column', 'drop'"):
        _run().measurements_df(extra="expanded")


# --- _repr_html_ ----------------------------------------------------------------------------


class _Tables(html.parser.HTMLParser):
    """Each table's rows, each row's cell texts; fails on a tag closed out of order."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.tables = 0
        self.open: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.open.append(tag)
        if tag == "table":
            self.tables += 1
        elif tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        assert self.open.pop() == tag
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _parsed(page: str) -> _Tables:
    parser = _Tables()
    parser.feed(page)
    parser.close()
    assert parser.open == []
    return parser


def _terminal_text(result: itemscore.RunResult) -> str:
    console = Console(file=io.StringIO(), width=300, color_system=None)
    for table in result_tables(result, layout="columns"):
        console.print(table)
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_run_html_is_the_terminal_table_one_row_per_metric() -> None:
    """Header, then one row per metric; a model's cell is its value and interval as printed."""
    models = (HOSTILE, "m2")
    result = _run(models)
    page = result._repr_html_()
    assert "<script>" not in page
    assert "&lt;script&gt;" in page
    parsed = _parsed(page)
    assert parsed.tables == 1
    header, *body = parsed.rows
    assert header == ["metric", HOSTILE, "m2", "method", "n"]
    assert [row[0] for row in body] == result.labels  # one row per metric, in order
    terminal = _terminal_text(result)
    for row in body:
        found = [result.by_model[model][f"qa.{row[0]}"] for model in models]
        d = shared_decimals((m.value, m.ci_low, m.ci_high) for m in found)
        for m, cell in zip(found, row[1:3]):
            value = format_value(m.value, d)
            interval = format_interval(m.ci_low, m.ci_high, d)
            assert cell.startswith(value + " ")
            assert cell.endswith(interval)  # after the coverage mark, when there is one
            assert cell in terminal  # the same text the terminal prints
        assert row[4] == "100"


def test_run_html_bolds_what_the_terminal_bolds_and_keeps_its_notes() -> None:
    """A significant lead is bold, with the note saying which test decided it."""
    result = _run()
    page = result._repr_html_()
    assert "<b>" in page
    assert "Bold: the model&#x27;s lead over every other model is significant" in page
    one = itemscore.score(_rows(("m1",)), ["exact_match"], suite_id="qa")
    header, *body = _parsed(one._repr_html_()).rows
    assert header == ["metric", "m1", "method", "n"]
    assert len(body) == 1
