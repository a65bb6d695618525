"""The canonical batch: items round-trip through it, and both reader paths build equal batches."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from itemscore import InputError, ItemResult
from itemscore._schema import (
    JSON_FIELD,
    batch_to_items,
    canonical_schema,
    is_json_field,
    items_to_batch,
    metadata_array,
    unify_batches,
)
from itemscore.inputs import csv as csv_reader
from itemscore.inputs import jsonl, open_source, read_part

# -- strategies --------------------------------------------------------------------------------

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8)
KEY = st.sampled_from(["a", "b", "c", "lang", "n", "é", "metadata"])
SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    TEXT,
)
JSON_VALUE = st.recursive(
    SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)


@st.composite
def items(draw: Any) -> list[ItemResult]:
    n = draw(st.integers(1, 6))
    kinds = draw(st.dictionaries(KEY, st.sampled_from(["text", "int", "float", "any"]), max_size=3))
    out = []
    for index in range(n):
        metadata: dict[str, Any] = {}
        for key, kind in kinds.items():
            if draw(st.booleans()):
                continue  # a key this item does not have
            strategy = {
                "text": TEXT,
                "int": st.integers(-(2**62), 2**62),
                "float": st.floats(allow_nan=False),
                "any": JSON_VALUE,
            }[kind]
            metadata[key] = draw(strategy)
        out.append(
            ItemResult(
                id=f"q{index}",
                output=draw(st.none() | TEXT),
                expected=draw(st.none() | st.lists(TEXT.filter(bool), min_size=1, max_size=3)),
                input=draw(st.none() | TEXT.filter(bool)),
                group=draw(st.none() | st.sampled_from(["g1", "g2"])),
                model=draw(st.none() | st.sampled_from(["m"])),
                attempt=draw(st.none() | st.integers(0, 5)),
                metadata=metadata,
            )
        )
    return out


def _doubles(numbers: list[Any]) -> bool:
    """Whether these values are numbers that make a field of doubles (a whole one past 64 bits)."""
    return all(type(v) in (int, float) for v in numbers) and any(
        type(v) is int and not -(2**63) <= v < 2**63 for v in numbers
    )


def _with_every_key(items: list[ItemResult]) -> list[ItemResult]:
    """The documented rule: every item of a batch has every metadata key (None if it had none)."""
    keys: dict[str, None] = {}
    for item in items:
        keys.update(dict.fromkeys(item.metadata))
    # The documented rule for numbers: a field of numbers holding a whole number beyond 64 bits
    # is a field of doubles, so those read back as floats; so is a field of lists of numbers.
    doubles, double_lists = set(), set()
    for key in keys:
        values = [item.metadata.get(key) for item in items]
        numbers = [v for v in values if v is not None]
        if _doubles(numbers):
            doubles.add(key)
        elif (
            numbers
            and all(type(v) in (list, tuple) for v in numbers)
            and _doubles([e for v in numbers for e in v if e is not None])
        ):
            double_lists.add(key)
    out = []
    for item in items:
        metadata = {key: item.metadata.get(key) for key in keys}
        for key in doubles:
            if metadata[key] is not None:
                metadata[key] = float(metadata[key])
        for key in double_lists:
            value = metadata[key]
            if value is not None:
                metadata[key] = type(value)(None if e is None else float(e) for e in value)
        out.append(
            ItemResult(
                id=item.id,
                output=item.output,
                expected=item.expected,
                input=item.input,
                group=item.group,
                model=item.model,
                cluster=item.cluster,
                attempt=item.attempt,
                metadata=metadata,
            )
        )
    return out


# -- items -> batch -> items ---------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(given_items=items())
def test_items_round_trip_through_a_batch(given_items: list[ItemResult]) -> None:
    """items -> batch -> items is the identity, every batch key present on every item."""
    batch = items_to_batch(given_items)
    assert batch.schema.field("id").nullable is False
    assert batch_to_items(batch) == _with_every_key(given_items)


def test_the_batch_has_the_canonical_columns() -> None:
    """Roles in ItemResult's order, then metadata, then the line."""
    batch = items_to_batch([ItemResult(id="a", output="x", metadata={"k": 1})])
    assert batch.schema.names == [
        "id",
        "output",
        "expected",
        "input",
        "group",
        "model",
        "cluster",
        "attempt",
        "metadata",
        "_line",
    ]
    assert batch.schema.equals(canonical_schema(batch.schema.field("metadata").type))
    assert batch.column("_line").to_pylist() == [1]


@pytest.mark.parametrize(
    ("values", "kind", "is_json"),
    [
        (["a", None], pa.string(), False),
        ([1, None, 2], pa.int64(), False),
        ([1, 2.5], pa.float64(), False),
        ([2**63, 1], pa.float64(), False),
        ([True, False], pa.bool_(), False),
        ([["a"], [], None], pa.list_(pa.string()), False),
        ([[1], [2.5]], pa.list_(pa.float64()), False),
        ([None, None], pa.null(), False),
        (["a", 1], pa.string(), True),
        ([True, 1], pa.string(), True),
        ([{"k": 1}], pa.string(), True),
        ([[[1]]], pa.string(), True),
        ([10**400], pa.string(), True),
    ],
    ids=[
        "text",
        "whole",
        "whole-and-fraction",
        "beyond-int64",
        "bool",
        "list-of-text",
        "list-of-numbers",
        "null",
        "text-and-number",
        "bool-and-number",
        "object",
        "nested-list",
        "beyond-double",
    ],
)
def test_the_metadata_typing_rule(values: list[Any], kind: pa.DataType, is_json: bool) -> None:
    """A field holds what its values share, or their JSON text (marked) when nothing is shared."""
    struct = metadata_array([{"f": v} for v in values])
    field = struct.type.field(0)
    assert field.type == kind
    assert is_json_field(field) is is_json
    if is_json:
        assert field.metadata == dict(JSON_FIELD)
        assert [None if t is None else json.loads(t) for t in struct.field(0).to_pylist()] == (
            values
        )


def test_nan_in_metadata_is_missing() -> None:
    """A top-level NaN is a missing value, as in every itemscore input."""
    struct = metadata_array([{"f": math.nan}, {"f": 1.5}])
    assert struct.field(0).to_pylist() == [None, 1.5]


def test_an_unreadable_documents_reason_is_shown_in_metadata() -> None:
    """batch_to_items puts _error in metadata["error"] for the older item API."""
    batch = items_to_batch([ItemResult(id="a", output=None), ItemResult(id="b", output="x")])
    batch = batch.append_column("_error", pa.array(["bad document", None]))
    first, second = batch_to_items(batch)
    assert first.metadata["error"] == "bad document"
    assert "error" not in second.metadata


def test_batches_of_one_source_are_unified() -> None:
    """Fields missing, null in one batch, or of two kinds, take one schema across batches."""
    one = items_to_batch([ItemResult(id="a", output="x", metadata={"k": 1, "t": None})])
    two = items_to_batch([ItemResult(id="b", output="y", metadata={"k": 2.5, "t": "x", "u": "z"})])
    three = items_to_batch([ItemResult(id="c", output="z", metadata={"k": "text"})])
    unified = unify_batches([one, two, three])
    schemas = {batch.schema for batch in unified}
    assert len(schemas) == 1
    fields = {f.name: f for f in unified[0].schema.field("metadata").type}
    assert is_json_field(fields["k"])  # a number and a text: no common type
    assert fields["t"].type == pa.string()
    items_back = [item for batch in unified for item in batch_to_items(batch)]
    assert [dict(item.metadata) for item in items_back] == [
        {"k": 1, "t": None, "u": None},
        {"k": 2.5, "t": "x", "u": "z"},
        {"k": "text", "t": None, "u": None},
    ]
    assert pa.Table.from_batches(unified).num_rows == 3


# -- the Arrow path and the row path give equal batches ------------------------------------------


ROW_VALUE = st.one_of(SCALAR, st.lists(SCALAR, max_size=3), JSON_VALUE)
ROLE_VALUE = st.one_of(
    st.none(),
    TEXT,
    st.integers(-(10**20), 10**20),
    st.booleans(),
    st.lists(TEXT, max_size=3),
    st.floats(allow_nan=False, allow_infinity=False),
)


#: Values of one kind: a column of them is one Arrow type (the Arrow path's case).
ONE_KIND = [
    TEXT,
    st.integers(-(2**62), 2**62),
    st.floats(allow_nan=False),
    st.booleans(),
    st.lists(TEXT, max_size=3),
    st.lists(st.integers(-5, 5), max_size=2),
    st.none(),
    st.sampled_from(["2024-01-01", "2024-01-02T10:00:00"]),
]


@st.composite
def jsonl_rows(draw: Any) -> list[dict[str, Any]]:
    n = draw(st.integers(1, 8))
    consistent = draw(st.booleans())
    keys = draw(st.lists(KEY, max_size=3, unique=True))
    kinds = {key: draw(st.sampled_from(ONE_KIND)) for key in keys}
    roles = {
        "output": draw(st.sampled_from([TEXT, st.none() | TEXT, st.integers(-9, 9), TEXT])),
        "expected": draw(
            st.sampled_from([TEXT, st.lists(TEXT, max_size=3), st.none() | st.lists(TEXT)])
        ),
    }
    rows = []
    for index in range(n):
        row: dict[str, Any] = {}
        if draw(st.integers(0, 9)):
            row["id"] = draw(st.sampled_from([f"q{index}", index, f"q{index}"]))
        if draw(st.integers(0, 19)):
            row["output"] = draw(roles["output"] if consistent else ROLE_VALUE)
        for role in ("expected", "input", "group", "model"):
            if draw(st.booleans()):
                strategy = roles.get(role, TEXT) if consistent else ROLE_VALUE
                row[role] = draw(strategy)
        for key in keys if consistent else draw(st.lists(KEY, max_size=3, unique=True)):
            if draw(st.integers(0, 4)):
                row[key] = draw(kinds[key] if consistent else ROW_VALUE)
        rows.append(row)
    return rows


def _read(path: Path, **options: Any) -> list[pa.RecordBatch] | str:
    """The batches of a file, or the message of the error reading it."""
    try:
        with open_source(path, **options) as source:
            reader = read_part(source.whole())
            batches = list(reader.batches())
            checks = source.checks()
            checks.add(reader.keys())
            checks.finish()
            return batches
    except InputError as exc:
        return str(exc)


def _same(a: list[pa.RecordBatch] | str, b: list[pa.RecordBatch] | str) -> None:
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
        return
    table_a, table_b = pa.Table.from_batches(a), pa.Table.from_batches(b)
    assert table_a.schema.equals(table_b.schema, check_metadata=True), (
        table_a.schema,
        table_b.schema,
    )
    assert table_a.equals(table_b), (table_a.to_pylist(), table_b.to_pylist())


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=jsonl_rows(), delimiter=st.none() | st.just("|"))
def test_json_lines_read_alike_by_pyarrow_and_by_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: list[dict[str, Any]], delimiter: Any
) -> None:
    """Any JSON lines file gives equal batches (or the same error) through both paths."""
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    arrow = _read(path, answer_delimiter=delimiter)
    monkeypatch.setattr(jsonl, "ARROW", False)
    by_rows = _read(path, answer_delimiter=delimiter)
    monkeypatch.setattr(jsonl, "ARROW", True)
    _same(arrow, by_rows)


CELL = st.one_of(
    TEXT,
    st.sampled_from(["", " ", "a,b", 'say "hi"', "two\nlines", "x\r\ny", "1", "  7 ", "NA"]),
)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    header=st.lists(
        st.sampled_from(["id", "output", "expected", "group", "n", "attempt"]),
        min_size=1,
        max_size=5,
        unique=True,
    ),
    cells=st.lists(st.lists(CELL, min_size=6, max_size=6), min_size=1, max_size=6),
    crlf=st.booleans(),
)
def test_csv_reads_alike_by_pyarrow_and_by_rows(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    header: list[str],
    cells: list[list[str]],
    crlf: bool,
) -> None:
    """Any CSV file gives equal batches (or the same error) through both paths."""
    if "output" not in header:
        header = [*header, "output"]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n" if crlf else "\n")
    writer.writerow(header)
    for row in cells:
        writer.writerow(row[: len(header)] + [""] * (len(header) - len(row)))
    path = tmp_path / "d.csv"
    path.write_text(buffer.getvalue(), encoding="utf-8", newline="")
    arrow = _read(path)
    monkeypatch.setattr(csv_reader, "ARROW", False)
    by_rows = _read(path)
    monkeypatch.setattr(csv_reader, "ARROW", True)
    _same(arrow, by_rows)


def test_a_block_with_mixed_kinds_takes_the_row_path(tmp_path: Path) -> None:
    """`expected` as a text on one line and a list on the next: read, equal either way."""
    path = tmp_path / "d.jsonl"
    path.write_text(
        '{"id": "a", "output": "x", "expected": "x"}\n'
        '{"id": "b", "output": "y", "expected": ["y", "z"]}\n',
        encoding="utf-8",
    )
    batches = _read(path)
    assert not isinstance(batches, str)
    assert pa.Table.from_batches(batches).column("expected").to_pylist() == [["x"], ["y", "z"]]


PARQUET_COLUMN = st.sampled_from(
    [
        st.lists(st.none() | TEXT, min_size=3, max_size=3),
        st.lists(st.none() | st.integers(-(2**40), 2**40), min_size=3, max_size=3),
        st.lists(st.none() | st.floats(allow_nan=True), min_size=3, max_size=3),
        st.lists(st.none() | st.booleans(), min_size=3, max_size=3),
        st.lists(st.none() | st.lists(st.none() | TEXT, max_size=3), min_size=3, max_size=3),
    ]
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    columns=st.dictionaries(
        st.sampled_from(["id", "output", "expected", "group", "attempt", "n", "m"]),
        PARQUET_COLUMN.flatmap(lambda s: s),
        min_size=1,
        max_size=5,
    )
)
def test_parquet_reads_alike_vectorised_and_by_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, columns: dict[str, list[Any]]
) -> None:
    """Any Parquet file gives equal batches (or the same error) both ways.

    Both ways: each role column vectorised where its type allows, and each through the
    converter's rule for one value, on the values Python reads from the file.
    """
    import pyarrow.parquet as pq

    from itemscore.inputs import _vector

    columns.setdefault("output", ["a", None, "b"])
    try:
        table = pa.table(columns)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return
    path = tmp_path / "d.parquet"
    pq.write_table(table, path)
    vectorised = _read(path)
    with monkeypatch.context() as patch:  # undone before the next example
        patch.setattr(_vector._Roles, "_array", lambda self, name: None)
        by_rows = _read(path)
    _same(vectorised, by_rows)


def test_items_without_metadata_have_no_metadata_column(tmp_path: Path) -> None:
    """Parquet cannot store a struct without fields: such a batch leaves the column out."""
    import pyarrow.parquet as pq

    items = [ItemResult(id="a", output="x"), ItemResult(id="b", output=None, expected="y")]
    batch = items_to_batch(items)
    assert "metadata" not in batch.schema.names
    path = tmp_path / "items.parquet"
    pq.write_table(pa.Table.from_batches([batch]), path)
    assert batch_to_items(pq.read_table(path)) == items


def test_lone_surrogates_from_python_are_escaped() -> None:
    """Text from Python may hold a lone surrogate, which UTF-8 cannot: it is shown escaped."""
    batch = items_to_batch([ItemResult(id="a\ud800", output="x", metadata={"k": "b\udc00"})])
    (item,) = batch_to_items(batch)
    assert (item.id, item.metadata["k"]) == ("a\\ud800", "b\\udc00")


def test_a_struct_null_on_a_row_is_no_metadata() -> None:
    """A table stored with a null metadata struct on some rows gives those items none."""
    struct = pa.StructArray.from_arrays(
        [pa.array([1, None])], fields=[pa.field("k", pa.int64())], mask=pa.array([False, True])
    )
    batch = items_to_batch([ItemResult(id="a", output="x"), ItemResult(id="b", output="y")])
    batch = batch.append_column("metadata", struct)
    first, second = batch_to_items(batch)
    assert dict(first.metadata) == {"k": 1}
    assert second.metadata == {}
