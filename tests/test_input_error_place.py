"""InputError carries the place its message names as data: path, line and column."""

from __future__ import annotations

from pathlib import Path

import pytest

from itemscore import InputError
from itemscore.inputs import read_items, to_items


def _error(path: Path) -> InputError:
    with pytest.raises(InputError) as caught:
        read_items(path)
    return caught.value


def test_a_bad_jsonl_line_names_its_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "a", "output": "x"}\n{"id": "b", "output": }\n', encoding="utf-8")
    error = _error(path)
    assert (error.line, error.column) == (2, 23)
    assert error.path == str(path)
    assert str(error).startswith(f"{error.path}:2:23: ")


def test_an_unclosed_csv_quote_names_the_line_it_opens_on(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text('id,output\n1,"open\n2,x\n3,y\n', encoding="utf-8")
    error = _error(path)
    assert error.path == str(path)
    assert (error.line, error.column) == (2, None)


def test_deep_nesting_in_a_json_file_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    deep = "[" * 100_000 + "]" * 100_000
    path.write_text(
        '[{"id": "a", "output": "x"},\n  {"id": "b", "deep": ' + deep + "}]", encoding="utf-8"
    )
    error = _error(path)
    assert error.path == str(path)
    assert (error.line, error.column) == (2, 3)


def test_rows_given_in_memory_name_the_row_and_no_file() -> None:
    with pytest.raises(InputError) as caught:
        to_items([{"id": "a", "output": "x"}, {"id": 10**5000, "output": "x"}])
    assert (caught.value.path, caught.value.line, caught.value.column) == (None, 2, None)


def test_a_place_given_explicitly_is_kept_and_no_place_is_none() -> None:
    given = InputError("f.jsonl:9:9: text", path="g.jsonl", line=1, column=2)
    assert (given.path, given.line, given.column) == ("g.jsonl", 1, 2)
    plain = InputError("The items are empty: nothing to score.")
    assert (plain.path, plain.line, plain.column) == (None, None, None)


def test_a_windows_path_keeps_its_drive_colon() -> None:
    error = InputError(r"C:\data\d.jsonl:4:7: not valid JSON (Expecting value).")
    assert (error.path, error.line, error.column) == (r"C:\data\d.jsonl", 4, 7)
