"""Reading data files into items: formats, roles, conversions, and errors that name their place."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

import itemscore
from itemscore import ConfigError, InputError, ItemResult, RunResult, score
from itemscore.inputs import (
    FORMATS,
    ROLES,
    detect_format,
    parse_column_map,
    read_items,
    read_rows,
)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def jsonl(tmp_path: Path, *rows: Any, name: str = "data.jsonl") -> Path:
    return write(tmp_path, name, "".join(json.dumps(r) + "\n" for r in rows))


# -- formats ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("a.jsonl", "jsonl"),
        ("a.NDJSON", "jsonl"),
        ("a.json", "json"),
        ("a.csv", "csv"),
        ("a.tsv", "tsv"),
        ("a.parquet", "parquet"),
        ("a.pq", "parquet"),
    ],
    ids=["jsonl", "ndjson-upper", "json", "csv", "tsv", "parquet", "pq"],
)
def test_format_comes_from_the_extension(name: str, expected: str) -> None:
    """The extension names the format, case-insensitively."""
    assert detect_format(name) == expected


def test_explicit_format_wins_over_the_extension() -> None:
    """--format overrides the extension, so a .txt file can be read as CSV."""
    assert detect_format("outputs.txt", "csv") == "csv"


def test_unknown_extension_asks_for_format() -> None:
    """An extension that names no format is an error listing the formats."""
    with pytest.raises(ConfigError, match=r"outputs\.txt.*'\.txt'.*--format") as info:
        detect_format("outputs.txt")
    for name in FORMATS:
        assert repr(name) in str(info.value)


def test_unknown_format_suggests_a_close_one() -> None:
    """A misspelt format gets a did-you-mean."""
    with pytest.raises(ConfigError, match="Did you mean 'jsonl'"):
        detect_format("a.jsonl", "jsnl")


# -- roles and conversions -------------------------------------------------------------------


def test_jsonl_rows_become_items(tmp_path: Path) -> None:
    """Role columns fill the item; other keys go to metadata; lists are several answers.

    A metadata key missing on a row is null there (``None``), as in a column of a table.
    """
    path = jsonl(
        tmp_path,
        {"id": "a", "output": "Paris", "expected": "Paris", "model": "m", "latency": 0.5},
        {"id": "b", "output": None, "expected": ["Rome", "Roma"], "group": "geo", "input": "q?"},
    )
    items = read_items(path)
    assert items == [
        ItemResult(
            id="a", output="Paris", expected=("Paris",), model="m", metadata={"latency": 0.5}
        ),
        ItemResult(
            id="b",
            output=None,
            expected=("Rome", "Roma"),
            group="geo",
            input="q?",
            metadata={"latency": None},
        ),
    ]


def test_missing_id_column_numbers_the_rows(tmp_path: Path) -> None:
    """Without an id column, ids are the data row numbers, from 1."""
    path = write(tmp_path, "d.csv", "output\nx\ny\n")
    assert [item.id for item in read_items(path)] == ["1", "2"]


@pytest.mark.parametrize(
    ("value", "text"),
    [(3, "3"), (0.5, "0.5"), (True, "true"), (False, "false"), ("", "")],
    ids=["int", "float", "true", "false", "empty"],
)
def test_scalar_outputs_become_text(tmp_path: Path, value: Any, text: str) -> None:
    """Numbers and booleans become their JSON text; an empty string stays an empty answer."""
    path = jsonl(tmp_path, {"id": 1, "output": value})
    (item,) = read_items(path)
    assert item.output == text
    assert item.id == "1"


def test_nan_output_is_a_failed_request(tmp_path: Path) -> None:
    """NaN (how pandas writes a missing value) is a failed request, like null."""
    path = write(tmp_path, "d.jsonl", '{"id": "a", "output": NaN}\n')
    assert read_items(path)[0].output is None


@pytest.mark.parametrize(
    ("expected", "answers"),
    [(None, None), ("", None), ("  ", None), ([], None), ([1, "two", ""], ("1", "two"))],
    ids=["null", "empty", "blank", "empty-list", "mixed-list"],
)
def test_expected_cells(tmp_path: Path, expected: Any, answers: tuple[str, ...] | None) -> None:
    """Empty means no answer key; list elements are texts, empty ones dropped."""
    path = jsonl(tmp_path, {"id": "a", "output": "x", "expected": expected})
    assert read_items(path)[0].expected == answers


def test_answer_delimiter_splits_text_but_not_lists(tmp_path: Path) -> None:
    """The delimiter splits a text cell (parts stripped, empty parts dropped); lists stay whole."""
    path = jsonl(
        tmp_path,
        {"id": "a", "output": "x", "expected": "Rome | Roma ||"},
        {"id": "b", "output": "x", "expected": ["a|b"]},
    )
    items = read_items(path, answer_delimiter="|")
    assert items[0].expected == ("Rome", "Roma")
    assert items[1].expected == ("a|b",)


def test_empty_answer_delimiter_is_refused(tmp_path: Path) -> None:
    """An empty delimiter would split between every character: refused."""
    path = jsonl(tmp_path, {"id": "a", "output": "x"})
    with pytest.raises(ConfigError, match="delimiter must not be empty"):
        read_items(path, answer_delimiter="")


def test_column_map_reads_roles_from_other_columns(tmp_path: Path) -> None:
    """--map output=response reads outputs from `response`; the `output` column is metadata."""
    path = jsonl(tmp_path, {"qid": "7", "response": "x", "gold": "y", "output": "old"})
    (item,) = read_items(path, columns={"id": "qid", "output": "response", "expected": "gold"})
    assert (item.id, item.output, item.expected) == ("7", "x", ("y",))
    assert dict(item.metadata) == {"output": "old"}


def test_nested_metadata_is_merged(tmp_path: Path) -> None:
    """Items written by itemscore (items.jsonl) keep their metadata flat when read back."""
    path = jsonl(tmp_path, {"id": "a", "output": "x", "metadata": {"cost": 2}, "tokens": 5})
    assert dict(read_items(path)[0].metadata) == {"cost": 2, "tokens": 5}


def test_same_id_for_several_models_is_kept(tmp_path: Path) -> None:
    """Ids repeat across models in one file: each model answered the same question."""
    path = jsonl(
        tmp_path,
        {"id": "q1", "model": "a", "output": "x"},
        {"id": "q1", "model": "b", "output": "y"},
    )
    items = read_items(path)
    assert [(item.model, item.id) for item in items] == [("a", "q1"), ("b", "q1")]
    assert itemscore.score(items, ["answered_rate"]).models == ["a", "b"]


def test_ids_unique_across_models_are_kept(tmp_path: Path) -> None:
    """Ids already unique are not renamed, even with several models."""
    path = jsonl(
        tmp_path,
        {"id": "q1", "model": "a", "output": "x"},
        {"id": "q2", "model": "b", "output": "y"},
    )
    assert [item.id for item in read_items(path)] == ["q1", "q2"]


# -- CSV, TSV, JSON, Parquet -----------------------------------------------------------------


def test_csv_cells(tmp_path: Path) -> None:
    """CSV: empty output is an empty answer, the marker is a failed request, cells stay text."""
    path = write(
        tmp_path,
        "d.csv",
        'id,output,expected,group,tokens\n1,,a,,12\n2,<null>,b,g,3\n3,"x, y",,g,4\n',
    )
    items = read_items(path, null_output="<null>")
    assert [i.output for i in items] == ["", None, "x, y"]
    assert [i.expected for i in items] == [("a",), ("b",), None]
    assert [i.group for i in items] == [None, "g", "g"]
    assert items[0].metadata["tokens"] == "12"


def test_tsv_is_tab_separated(tmp_path: Path) -> None:
    """TSV splits on tabs, so commas stay inside the cell."""
    path = write(tmp_path, "d.tsv", "id\toutput\n1\ta, b\n")
    assert read_items(path)[0].output == "a, b"


def test_csv_rows_keep_their_first_line(tmp_path: Path) -> None:
    """A quoted field spanning lines does not shift the line numbers of later rows."""
    path = write(tmp_path, "d.csv", 'id,output\n1,"two\nlines"\n1,x\n')
    with pytest.raises(InputError, match=r"d\.csv:4: .*'1' appears twice \(first at line 2\)"):
        read_items(path)


def test_json_list_of_objects(tmp_path: Path) -> None:
    """A .json file holds a list of objects; each element's line is known for messages."""
    path = write(tmp_path, "d.json", '[\n {"id": 1, "output": "a"},\n {"id": 2, "output": {}}\n]')
    with pytest.raises(InputError, match=r"d\.json:3:\d+: 'output' must be text"):
        read_items(path)
    good = write(tmp_path, "ok.json", '[{"id": 1, "output": "a"}, {"id": 2, "output": null}]')
    assert [i.output for i in read_items(good)] == ["a", None]


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"id": 1}', "1:1: a JSON data file must hold a list"),
        ('[{"id": 1, "output": "a"} {"x": 1}]', "1:27: not valid JSON"),
        ('[{"id": 1, "output": "a"}] x', "1:28: not valid JSON"),
        ("[1]", "1:2: each element of the list must be an object"),
        ('[{"id": 1,\n "output": }]', "2:12: not valid JSON"),
    ],
    ids=["object", "missing-comma", "trailing", "number", "bad-value"],
)
def test_malformed_json_names_line_and_column(tmp_path: Path, text: str, where: str) -> None:
    """Every JSON syntax problem is reported at its line and column."""
    path = write(tmp_path, "d.json", text)
    with pytest.raises(InputError) as info:
        list(read_rows(path))
    assert str(info.value).startswith(f"{path}:{where}")


def test_parquet_rows_become_items(tmp_path: Path) -> None:
    """Parquet: nulls are failed requests, list columns several answers."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.table(
        {"id": ["a", "b"], "output": ["x", None], "expected": [["x", "y"], []], "n": [1, 2]}
    )
    path = tmp_path / "d.parquet"
    pq.write_table(table, path)
    items = read_items(path)
    assert items == [
        ItemResult(id="a", output="x", expected=("x", "y"), metadata={"n": 1}),
        ItemResult(id="b", output=None, expected=None, metadata={"n": 2}),
    ]


def test_parquet_errors_name_the_row(tmp_path: Path) -> None:
    """Parquet has no lines: messages name the row."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"id": ["a", "a"], "output": ["x", "y"]}), path)
    with pytest.raises(InputError, match=r"d\.parquet: row 2: .*first at row 1"):
        read_items(path)


def test_parquet_without_pyarrow_parquet_says_how_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pyarrow built without Parquet support is a clear error saying how to reinstall it."""
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    path = write(tmp_path, "d.parquet", "")
    with pytest.raises(ConfigError, match=r"pip install --force-reinstall 'pyarrow>=14\.0\.1'"):
        read_items(path)


def test_not_a_parquet_file(tmp_path: Path) -> None:
    """A file that is not Parquet is an input error naming it."""
    pytest.importorskip("pyarrow.parquet")
    path = write(tmp_path, "d.parquet", "not parquet")
    with pytest.raises(InputError, match=r"d\.parquet: not a readable Parquet file"):
        read_items(path)


# -- errors ----------------------------------------------------------------------------------


def test_invalid_utf8_names_line_and_column(tmp_path: Path) -> None:
    """A byte that is not UTF-8 is reported at its line and character column."""
    path = tmp_path / "d.csv"
    path.write_bytes(b"id,output\n1,caf\xe9\n")
    with pytest.raises(InputError, match=r"d\.csv:2:6: the file is not valid UTF-8 \(byte 0xe9\)"):
        read_items(path)


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    """Spreadsheet programs write a byte-order mark; the header still reads `id`."""
    path = tmp_path / "d.csv"
    path.write_bytes(b"\xef\xbb\xbfid,output\n1,x\n")
    assert read_items(path)[0].id == "1"


def test_malformed_json_line(tmp_path: Path) -> None:
    """A broken JSON line is reported at its line and column."""
    path = write(tmp_path, "d.jsonl", '{"id": "a", "output": "x"}\n\n{"id": "b", "output": }\n')
    with pytest.raises(InputError, match=r"d\.jsonl:3:23: not valid JSON"):
        read_items(path)


def test_two_objects_on_one_line_are_refused(tmp_path: Path) -> None:
    """Each line holds exactly one object: a second one on the same line is an error there."""
    path = write(tmp_path, "d.jsonl", '{"id": "a", "output": "x"}, {"id": "b", "output": "y"}\n')
    with pytest.raises(InputError, match=r"d\.jsonl:1:27: not valid JSON \(Extra data\)"):
        read_items(path)


def test_json_line_must_be_an_object(tmp_path: Path) -> None:
    """A JSON line holding a list is refused."""
    path = write(tmp_path, "d.jsonl", "[1, 2]\n")
    with pytest.raises(InputError, match=r"d\.jsonl:1:1: each line must be a JSON object"):
        read_items(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('id,output\n1,"a"b\n', r"d\.csv:2: bad CSV quoting"),
        ('id,output\n1,"open\n', r"d\.csv:2: bad CSV quoting"),
        ("id,output\n1,a,b\n", r"d\.csv:2: the row has 3 fields, the header \(line 1\) has 2"),
        ("id,id\n1,2\n", r"d\.csv:1: the header names column 'id' twice"),
        ("id,\n1,2\n", r"d\.csv:1: header field 2 is empty"),
        ("", r"d\.csv:1: the file is empty"),
    ],
    ids=[
        "stray-quote",
        "unclosed-quote",
        "extra-field",
        "duplicate-header",
        "empty-header",
        "empty",
    ],
)
def test_malformed_csv(tmp_path: Path, text: str, message: str) -> None:
    """CSV problems name the line at fault."""
    path = write(tmp_path, "d.csv", text)
    with pytest.raises(InputError, match=message):
        read_items(path)


def test_missing_mapped_csv_column(tmp_path: Path) -> None:
    """A column named by --map that the header lacks is an error with a did-you-mean."""
    path = write(tmp_path, "d.csv", "id,response\n1,x\n")
    with pytest.raises(
        InputError, match=r"d\.csv:1: .*no column 'respons'.*Did you mean 'response'"
    ):
        read_items(path, columns={"output": "respons"})


def test_missing_output_column(tmp_path: Path) -> None:
    """Without an output column (and no --map), the error says how to name one."""
    path = write(tmp_path, "d.csv", "id,answer\n1,x\n")
    with pytest.raises(InputError, match=r"no 'output' column.*--map output=COLUMN"):
        read_items(path)


def test_json_row_without_output_key(tmp_path: Path) -> None:
    """A JSON row without the output key is an error (null is how to write a failed request)."""
    path = jsonl(tmp_path, {"id": "a", "output": "x"}, {"id": "b", "outptu": "y"})
    with pytest.raises(InputError, match=r'd.*:2:1: the row has no \'output\' key.*"output": null'):
        read_items(path)


def test_explicitly_mapped_role_must_be_in_every_json_row(tmp_path: Path) -> None:
    """A role mapped with --map must be present in each row, not silently left empty."""
    path = jsonl(tmp_path, {"id": "a", "output": "x", "gold": "y"}, {"id": "b", "output": "x"})
    with pytest.raises(InputError, match=r":2:1: the row has no 'gold' key mapped to 'expected'"):
        read_items(path, columns={"expected": "gold"})


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"id": "a", "output": {"text": "x"}}, r":1:13: 'output' must be text.*not an object"),
        ({"id": "a", "output": ["x"]}, r":1:13: 'output' must be text.*not a list"),
        ({"id": "a", "output": "x", "expected": {"a": 1}}, r":1:28: 'expected' must be text"),
        ({"id": "a", "output": "x", "expected": [["a"]]}, r"answers in 'expected' must be texts"),
        ({"id": "a", "output": "x", "group": [1]}, r"'group' must be text"),
        ({"id": 1.5, "output": "x"}, r":1:2: the id 1.5 is a number; an id must be a string"),
        ({"id": " ", "output": "x"}, r":1:2: the id is empty"),
    ],
    ids=[
        "dict-output",
        "list-output",
        "dict-expected",
        "nested-list",
        "list-group",
        "float-id",
        "blank-id",
    ],
)
def test_wrong_types_name_line_and_column(tmp_path: Path, row: Any, message: str) -> None:
    """A value of the wrong type is reported where its key stands."""
    path = jsonl(tmp_path, row)
    with pytest.raises(InputError, match=message):
        read_items(path)


def test_duplicate_ids_name_both_lines(tmp_path: Path) -> None:
    """A repeated id (same model) names the line of each occurrence."""
    path = jsonl(
        tmp_path,
        {"id": "a", "output": "x", "model": "m"},
        {"id": "b", "output": "x", "model": "m"},
        {"id": "a", "output": "y", "model": "m"},
    )
    with pytest.raises(
        InputError, match=r":3:2: the id 'a' appears twice for model 'm' \(first at line 1\)"
    ):
        read_items(path)


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        (["output"], r"--map 'output' must be ROLE=COLUMN"),
        (["output="], r"must be ROLE=COLUMN"),
        (["outptu=x"], r"--map 'outptu=x': 'outptu' is not a column role.*Did you mean 'output'"),
        (["output=a", "output=b"], r"names role 'output' twice"),
    ],
    ids=["no-equals", "no-column", "unknown-role", "twice"],
)
def test_bad_column_maps(pairs: list[str], message: str) -> None:
    """--map values are checked before any file is read."""
    with pytest.raises(ConfigError, match=message):
        parse_column_map(pairs)


def test_column_map_parses() -> None:
    """ROLE=COLUMN pairs become a mapping; spaces around the parts are ignored."""
    assert parse_column_map(["output = response", "id=qid"]) == {"output": "response", "id": "qid"}


def test_one_file_read_with_two_mappings(tmp_path: Path) -> None:
    """The mapping picks the column: the same file read twice gives different outputs."""
    path = jsonl(tmp_path, {"a": "x", "b": "y"})
    assert read_items(path, columns={"output": "a"})[0].output == "x"
    assert read_items(path, columns={"output": "b"})[0].output == "y"


def test_every_item_field_is_a_role(tmp_path: Path) -> None:
    """Roles come from ItemResult's fields: `cluster` is read like `group`."""
    assert set(ROLES) == {
        *("id", "output", "expected", "input", "group", "model", "cluster", "attempt")
    }
    path = jsonl(tmp_path, {"id": "a", "output": "x", "passage": 7})
    (item,) = read_items(path, columns={"cluster": "passage"})
    assert item.cluster == "7"
    assert dict(item.metadata) == {}


def test_attempt_is_read_and_written(tmp_path: Path) -> None:
    """The role `attempt` is read from files, kept per item and saved with the results."""
    data = tmp_path / "a.jsonl"
    rows = [
        {"id": "q1", "output": "a", "expected": "a", "attempt": 0},
        {"id": "q1", "output": "b", "expected": "a", "attempt": "1"},
        {"id": "q2", "output": "a", "expected": "a"},
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    items = read_items(data)
    assert [i.attempt for i in items] == [0, 1, None]
    assert all("attempt" not in i.metadata for i in items)
    result = score(items, ["exact_match"])
    saved = tmp_path / "r.json"
    result.save_json(saved)
    assert [i.attempt for i in RunResult.load_json(saved).items] == [0, 1, None]


def test_same_id_and_attempt_twice_is_refused(tmp_path: Path) -> None:
    """(model, id, attempt) is unique: a repeated attempt is an error naming both lines."""
    data = tmp_path / "a.jsonl"
    rows = [{"id": "q1", "output": "a", "attempt": 1}, {"id": "q1", "output": "b", "attempt": 1}]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(InputError, match=r"a.jsonl:2.*'q1' appears twice with attempt 1.*line 1"):
        read_items(data)


@pytest.mark.parametrize("suffix", ["jsonl", "csv"])
def test_an_attempt_of_digits_int_does_not_read_is_refused_by_name(
    tmp_path: Path, suffix: str
) -> None:
    """'¹' is a digit to str.isdigit but not to int(): an InputError at its row, no crash."""
    data = tmp_path / f"a.{suffix}"
    if suffix == "jsonl":
        row = {"id": "q1", "output": "a", "attempt": "¹"}
        data.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    else:
        data.write_text("id,output,attempt\nq1,a,¹\n", encoding="utf-8")
    with pytest.raises(InputError, match=r'the attempt "\\u00b9" is a string; an attempt must be'):
        read_items(data)
    data.write_text(data.read_text("utf-8").replace("¹", "٣"), encoding="utf-8")
    assert [item.attempt for item in read_items(data)] == [3]  # a decimal digit int() reads


def test_parquet_metadata_keeps_its_types(tmp_path: Path) -> None:
    """Parquet metadata columns keep their Arrow types, unsigned 64-bit numbers included."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "d.parquet"
    table = pa.table(
        {
            "id": ["a", "b"],
            "output": ["x", "y"],
            "big": pa.array([2**64 - 1, 3], pa.uint64()),
            "attempt": pa.array([1, 2], pa.uint64()),
        }
    )
    pq.write_table(table, path)
    items = read_items(path)
    assert [i.metadata["big"] for i in items] == [2**64 - 1, 3]
    assert [i.attempt for i in items] == [1, 2]


def test_parquet_nanosecond_times_read_alike_with_or_without_pandas(tmp_path: Path) -> None:
    """Nanosecond times are datetime/timedelta when exact to the microsecond, else text.

    pyarrow turns nanoseconds into pandas objects when pandas is installed and raises when it
    is not; the reader casts first, so neither decides what an item holds.
    """
    import datetime as dt

    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    second = 1_000_000_000
    times = pa.array([second, 2 * second + 1, None], pa.timestamp("ns", "UTC"))
    table = pa.table(
        {
            "id": ["a", "b", "c"],
            "output": ["x", "y", "z"],
            "exact": pa.array([second, 2 * second, None], pa.timestamp("ns")),
            "fine": times,
            "took": pa.array([3000, 1, None], pa.duration("ns")),
            "fines": pa.array([[1], None, []], pa.list_(pa.timestamp("ns"))),
            "exacts": pa.array([[1000], None, []], pa.list_(pa.duration("ns"))),
            "pair": pa.array(
                [{"at": 1, "n": 1}, None, {"at": None, "n": 2}],
                pa.struct([("at", pa.timestamp("ns")), ("n", pa.int64())]),
            ),
            "metadata": pa.StructArray.from_arrays(
                [pa.array([5000, 7000, 9000], pa.duration("ns"))], names=["lag"]
            ),
        }
    )
    pq.write_table(table, tmp_path / "d.parquet")
    items = read_items(tmp_path / "d.parquet")
    exact = [item.metadata["exact"] for item in items]
    assert [type(value) for value in exact[:2]] == [dt.datetime, dt.datetime]
    assert exact == [dt.datetime(1970, 1, 1, 0, 0, 1), dt.datetime(1970, 1, 1, 0, 0, 2), None]
    assert [item.metadata["fine"] for item in items] == [
        *times.cast(pa.string()).to_pylist()[:2],
        None,
    ]
    assert items[1].metadata["fine"] == "1970-01-01 00:00:02.000000001Z"
    assert [item.metadata["took"] for item in items] == ["3000", "1", None]
    epoch = "1970-01-01 00:00:00.000000001"
    assert [item.metadata["fines"] for item in items] == [(epoch,), None, ()]
    assert [item.metadata["exacts"] for item in items] == [
        (dt.timedelta(microseconds=1),),
        None,
        (),
    ]
    pairs = [item.metadata["pair"] for item in items]
    assert [None if p is None else dict(p) for p in pairs] == [
        {"at": epoch, "n": 1},
        None,
        {"at": None, "n": 2},
    ]
    lags = [item.metadata["lag"] for item in items]
    assert all(type(lag) is dt.timedelta for lag in lags)
    assert lags == [dt.timedelta(microseconds=n) for n in (5, 7, 9)]
