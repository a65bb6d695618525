"""InputError carries the place its message names as data: path, line and column.

Each reader passes the place where it raises; the message is never read back. For every
reader a malformed file gives an error whose ``(path, line, column)`` is the place the test
broke, and whose message starts with that same place.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from itemscore import InputError, ResultsFormatError, RunResult
from itemscore.cli import cli
from itemscore.inputs import read_items, to_items

HARNESS = Path(__file__).parent / "data" / "harness"
LM_EVAL = next((HARNESS / "lm-eval" / "results" / "scripted-a").glob("samples_capitals_gen_*"))
INSPECT = HARNESS / "inspect" / "capitals_qa_scripted-a"


def _error(path: Path, **options: object) -> InputError:
    with pytest.raises(InputError) as caught:
        read_items(path, **options)  # type: ignore[arg-type]
    return caught.value


def _place(error: InputError) -> tuple[str | None, int | None, int | None]:
    return error.path, error.line, error.column


def _prefix(error: InputError) -> str:
    """The place as the message must start with it (``FILE: row N`` for Parquet's rows)."""
    if str(error.path).endswith(".parquet") and error.line is not None:
        return f"{error.path}: row {error.line}: "
    parts = [error.path, error.line, error.column]
    return ":".join(str(p) for p in parts if p is not None) + ": "


# -- one malformed file per reader -----------------------------------------------------------


def _jsonl_bad_json(tmp: Path) -> tuple[Path, int, int | None]:
    path = tmp / "d.jsonl"
    path.write_text('{"id": "a", "output": "x"}\n{"id": "b", "output": }\n', encoding="utf-8")
    return path, 2, 23


def _jsonl_not_an_object(tmp: Path) -> tuple[Path, int, int | None]:
    path = tmp / "d.jsonl"
    path.write_text('{"id": "a", "output": "x"}\n\n   [1, 2]\n', encoding="utf-8")
    return path, 3, 4


def _jsonl_surrogate(tmp: Path) -> tuple[Path, int, int | None]:
    path = tmp / "d.jsonl"
    path.write_text('{"id": "a", "output": "x \\ud800"}\n', encoding="utf-8")
    return path, 1, 26


def _jsonl_bad_utf8(tmp: Path) -> tuple[Path, int, int | None]:
    path = tmp / "d.jsonl"
    path.write_bytes(b'{"id": "a", "output": "x"}\n{"id": "b", "output": "\xff"}\n')
    return path, 2, 24


def _jsonl_duplicate_id(tmp: Path) -> tuple[Path, int, int | None]:
    path = tmp / "d.jsonl"
    path.write_text('{"id": "a", "output": "x"}\n{"output": "y", "id": "a"}\n', encoding="utf-8")
    return path, 2, 17  # at the id key


def _json_not_an_object(tmp: Path) -> tuple[Path, int, int | None]:
    path = tmp / "d.json"
    path.write_text('[{"id": "a", "output": "x"},\n  7]', encoding="utf-8")
    return path, 2, 3


def _json_deep(tmp: Path) -> tuple[Path, int, int | None]:
    path = tmp / "d.json"
    deep = "[" * 100_000 + "]" * 100_000
    path.write_text(
        '[{"id": "a", "output": "x"},\n  {"id": "b", "deep": ' + deep + "}]", encoding="utf-8"
    )
    return path, 2, 3


def _json_bad_value(tmp: Path) -> tuple[Path, int, int | None]:
    path = tmp / "d.json"
    path.write_text('[{"id": "a",\n "output": ["x"]}]', encoding="utf-8")
    return path, 2, 2  # at the output key


def _csv_unclosed_quote(tmp: Path) -> tuple[Path, int, int | None]:
    path = tmp / "d.csv"
    path.write_text('id,output\n1,"open\n2,x\n3,y\n', encoding="utf-8")
    return path, 2, None


def _csv_field_count(tmp: Path) -> tuple[Path, int, int | None]:
    path = tmp / "d.csv"
    path.write_text("id,output\n1,x\n2,y,z\n", encoding="utf-8")
    return path, 3, None


def _csv_no_output_column(tmp: Path) -> tuple[Path, int, int | None]:
    path = tmp / "d.csv"
    path.write_text("id,answer\n1,x\n", encoding="utf-8")
    return path, 1, None


def _tsv_empty_header_field(tmp: Path) -> tuple[Path, int, int | None]:
    path = tmp / "d.tsv"
    path.write_text("\n\nid\t\toutput\n1\tx\ty\n", encoding="utf-8")
    return path, 3, None


def _parquet_bad_id(tmp: Path) -> tuple[Path, int, int | None]:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp / "d.parquet"
    table = pa.table({"id": [[1], [2], [3]], "output": ["x", "y", "z"]})
    pq.write_table(table, path)
    return path, 1, None  # the row


def _parquet_not_parquet(tmp: Path) -> tuple[Path, int | None, int | None]:
    pytest.importorskip("pyarrow")
    path = tmp / "d.parquet"
    path.write_bytes(b"not parquet at all")
    return path, None, None


def _lm_eval_bad_json(tmp: Path) -> tuple[Path, int, int | None]:
    lines = LM_EVAL.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2][:40]
    path = tmp / LM_EVAL.name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(json.JSONDecodeError) as caught:
        json.loads(lines[2])
    return path, 3, caught.value.colno


def _inspect_bad_json(tmp: Path) -> tuple[Path, int, int | None]:
    path = tmp / "log.json"
    path.write_text('{"version": 2,\n  "eval": {,}}', encoding="utf-8")
    return path, 2, 12  # the comma


# A bad lm-eval document or inspect sample is no longer the file's error but that item's: the
# readers' own tests check that its error names the file, the line or sample, and the task.
CASES: dict[str, Callable[[Path], tuple[Path, int | None, int | None]]] = {
    "jsonl-bad-json": _jsonl_bad_json,
    "jsonl-not-an-object": _jsonl_not_an_object,
    "jsonl-surrogate": _jsonl_surrogate,
    "jsonl-bad-utf8": _jsonl_bad_utf8,
    "jsonl-duplicate-id": _jsonl_duplicate_id,
    "json-not-an-object": _json_not_an_object,
    "json-deep": _json_deep,
    "json-bad-value": _json_bad_value,
    "csv-unclosed-quote": _csv_unclosed_quote,
    "csv-field-count": _csv_field_count,
    "csv-no-output-column": _csv_no_output_column,
    "tsv-empty-header-field": _tsv_empty_header_field,
    "parquet-bad-id": _parquet_bad_id,
    "parquet-not-parquet": _parquet_not_parquet,
    "lm-eval-bad-json": _lm_eval_bad_json,
    "inspect-bad-json": _inspect_bad_json,
}
FORMATS = {"lm-eval": "lm-eval", "inspect": "inspect"}


@pytest.mark.parametrize("case", list(CASES))
def test_each_reader_gives_the_place_as_data(tmp_path: Path, case: str) -> None:
    path, line, column = CASES[case](tmp_path)
    fmt = next((f for prefix, f in FORMATS.items() if case.startswith(prefix)), None)
    error = _error(path, format=fmt)
    assert _place(error) == (str(path), line, column)
    assert str(error).startswith(_prefix(error))


@pytest.mark.parametrize("case", ["jsonl-bad-json", "csv-field-count", "lm-eval-bad-json"])
def test_the_command_line_names_the_place_and_exits_2(tmp_path: Path, case: str) -> None:
    path, line, column = CASES[case](tmp_path)
    args = ["score", str(path), "-m", "exact_match"]
    if case.startswith("lm-eval"):
        args += ["--format", "lm-eval"]
    outcome = CliRunner().invoke(cli, args)
    assert outcome.exit_code == 2, outcome.output
    place = ":".join(str(p) for p in (path, line, column) if p is not None)
    assert f"Error: {place}: " in outcome.output


# -- items given in memory, saved results, the class itself ----------------------------------


def test_rows_given_in_memory_name_the_row_and_no_file() -> None:
    with pytest.raises(InputError) as caught:
        to_items([{"id": "a", "output": "x"}, {"id": 10**5000, "output": "x"}])
    assert _place(caught.value) == (None, 2, None)
    assert str(caught.value).startswith("Row 2: ")


def test_a_broken_results_file_names_its_place(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text('{"schema": "itemscore.results",\n "version": }', encoding="utf-8")
    with pytest.raises(ResultsFormatError) as caught:
        RunResult.load_json(path)
    assert _place(caught.value) == (str(path), 2, 13)
    assert str(caught.value).startswith(f"{path}:2:13: not valid JSON")


def test_at_writes_the_place_into_the_message_and_the_attributes() -> None:
    assert str(InputError.at("f.jsonl", 4, 7, "bad.")) == "f.jsonl:4:7: bad."
    assert str(InputError.at("f.csv", 4, None, "bad.")) == "f.csv:4: bad."
    assert str(InputError.at("f.eval", None, None, "bad.")) == "f.eval: bad."
    assert _place(InputError.at("f.jsonl", 4, 7, "bad.")) == ("f.jsonl", 4, 7)
    assert type(ResultsFormatError.at("r.json", 1, 1, "bad.")) is ResultsFormatError


def test_the_message_is_never_parsed_for_a_place() -> None:
    given = InputError("f.jsonl:9:9: text", path="g.jsonl", line=1, column=2)
    assert _place(given) == ("g.jsonl", 1, 2)
    assert _place(InputError("f.jsonl:9:9: text")) == (None, None, None)
    assert _place(InputError("The items are empty: nothing to score.")) == (None, None, None)
