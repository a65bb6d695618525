"""Rows and Arrow tables into canonical batches: the converter's rules, Arrow first.

Every reader builds its batches here, from one of two kinds of columns:

- an **Arrow table** as pyarrow parsed it (JSON lines, CSV, Parquet, :func:`arrow_batch`):
  each role column is taken where its type makes the outcome certain (a text id, a text or
  whole-number output, a list of texts as answers...) and converted with ``pyarrow.compute``.
  Any other column (a value of another type, a blank id, a missing key the table cannot tell
  from a null) goes through the converter's rule for one value when the reader hands the rows
  as Python reads them (Parquet, whose values are the table's); otherwise the table is not
  taken (:func:`arrow_batch` gives ``None``) and the reader reads the rows in Python, with
  every place known for the messages.
- **rows** as Python mappings (:class:`RowBuilder`: a JSON line read by Python, a CSV record,
  a harness log's record; :func:`rows_to_items`: dicts and DataFrame rows given from Python):
  each column whose values are all of one plain kind is made an Arrow array and goes the same
  way; any other column goes through the converter's rule for one value (:mod:`._convert`),
  row after row, which also words every error.

So each rule stands in one place for each form: vectorised here, for the columns whose type
makes the outcome certain, and for one value in the converter, which decides everything else
and is the reference. The property tests compare the two on files and on rows from Python.

``absent(column, rows)`` tells, for a JSON format, which of the given rows lack the key
entirely (Arrow reads a missing key and ``null`` alike); tabular formats pass ``None``: every
row has every column.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import repeat
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._exceptions import InputError
from .._records import ItemResult
from .._schema import (
    METADATA,
    assemble,
    batch_to_items,
    metadata_array,
)
from ._bounds import DEFAULT_LIMITS, too_many_columns
from ._convert import TEXT_ROLES, Converter
from ._source import Rows

__all__ = [
    "Absent",
    "RowBuilder",
    "arrow_batch",
    "blank",
    "collector_paused",
    "kept_answers",
    "numbers",
    "rows_to_items",
]

#: ``absent(column, rows) -> mask``: which of ``rows`` (indices) lack the key ``column``.
Absent = Callable[[str, np.ndarray], np.ndarray]
#: The converter's rule for one value of a role: ``rule(chunk, index, row)``.
_Rule = Callable[[Rows, int, dict[str, Any]], Any]

_STRING = pa.string()
_INT = pa.int64()
_ANSWERS = pa.list_(_STRING)
_NONE = type(None)
#: What Python's ``str.isspace`` and ``str.strip`` take for white space (Unicode's White_Space
#: and the four information separators, the last U+3000), so that blank and stripped texts
#: match the converter.
_WHITESPACE = "".join(filter(str.isspace, map(chr, range(0x3001))))
_SCALARS = (pa.types.is_string, pa.types.is_int64, pa.types.is_float64, pa.types.is_boolean)


class _NotMine(Exception):
    """A column an Arrow table cannot convert with certainty: its rows are read in Python."""


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while one chunk of rows or items is worked on.

    Parsing and building make many acyclic objects and free none until the chunk is done: a
    collection pass would walk them all for nothing. Measured on the 1M-line QA file, the row
    path costs a quarter more with the collector on, and building items twice as much
    (``benchmarks/bench_readers.py``); scoring a file a quarter more
    (``benchmarks/bench_pipeline.py``). One chunk at a time: what a chunk leaves in cycles is
    collected when the collector runs again.

    Kept because it pays: without it, ``itemscore score`` of the 1M-line QA file with three
    metrics took 17.8 s instead of 13.4 s (+33% wall, +32% CPU), and 22.6 s instead of 18.7 s
    with every report (+21%), at the same peak memory (medians of three alternating pairs).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def numbers(values: np.ndarray) -> pa.Array:
    """A numpy array of int32 or int64 as an Arrow array, sharing its memory.

    (``pa.array`` of a numpy array imports pandas to look for its types: 0.2 s and memory.)
    """
    kind = pa.int32() if values.dtype == np.int32 else _INT
    values = np.ascontiguousarray(values, dtype=np.int32 if kind == pa.int32() else np.int64)
    return pa.Array.from_buffers(kind, len(values), [None, pa.py_buffer(values)])


def blank(texts: pa.Array) -> pa.Array:
    """Which texts are empty or only white space (null stays null)."""
    return pc.equal(pc.utf8_length(pc.utf8_trim(texts, characters=_WHITESPACE)), 0)


# -- the ways in ------------------------------------------------------------------------------


def arrow_batch(
    table: pa.Table | pa.RecordBatch,
    converter: Converter,
    *,
    lines: pa.Array,
    first_row: int,
    absent: Absent | None,
    metadata_rule: Literal["json", "arrow"] = "json",
    rows: Callable[[], Rows] | None = None,
) -> pa.RecordBatch | None:
    """The canonical batch of ``table``'s rows, or ``None`` when its rows must be read in Python.

    Args:
        table: The rows as parsed: one column per key or header field.
        converter: The mapping, delimiter and null marker.
        lines: Each row's line (or row number).
        first_row: The row number of the first row (ids of rows without one).
        absent: For JSON formats, which rows lack a key; ``None`` for tabular ones.
        metadata_rule: ``"json"``: metadata fields of JSON's kinds only (anything else is read
            in Python, which makes JSON text of it); ``"arrow"``: every column as it is
            (Parquet).
        rows: The rows as Python reads them, where they hold exactly the table's values
            (Parquet): a column the vectorised rules are not certain of then goes through the
            converter's rule per value instead of sending the table back.
    """
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    columns = _Table(table, absent, rows)
    try:
        roles = _Roles(columns, converter, first_row).build()
        metadata = columns.metadata(converter, metadata_rule)
    except _NotMine:
        return None
    return assemble(roles, metadata, lines)


class RowBuilder:
    """Builds canonical batches from chunks of rows, with one converter's settings.

    Args:
        converter: The mapping, delimiter and null marker (and, for a tabular source, the
            header it checked).
        error_key: A records format's key for "this document could not be read" (its value,
            the reason, goes to ``_error``), or ``None``.
        max_columns: The bound on metadata columns.
    """

    def __init__(
        self,
        converter: Converter,
        *,
        error_key: str | None = None,
        max_columns: int = DEFAULT_LIMITS.max_columns,
    ) -> None:
        self.converter = converter
        self.error_key = error_key
        self.max_columns = max_columns
        self._not_metadata = converter.role_columns | (
            frozenset({error_key}) if error_key else frozenset()
        )

    def build(self, chunk: Rows, first_row: int) -> pa.RecordBatch:
        """The canonical batch of ``chunk``, whose first row is row ``first_row`` of the source.

        ``first_row`` numbers the rows without an id.

        Raises:
            InputError: a row with a missing key or a value of the wrong type, at its place.
        """
        rows = chunk.rows
        if set(map(type, rows)) != {dict}:
            index = next(i for i, row in enumerate(rows) if type(row) is not dict)
            raise InputError(
                f"{chunk.where(index)}: the row is not a mapping of column to value.",
                path=chunk.name or None,
                line=chunk.lines[index],
            )
        columns = _Rows(chunk)
        if len(columns.present) > self.max_columns + len(self._not_metadata):
            self._refuse_columns(chunk)
        conv = self.converter
        roles = _Roles(columns, conv, first_row).build()
        metadata = columns.metadata(conv, self._not_metadata)
        errors = None
        key = self.error_key
        if key is not None and key in columns.present:
            reasons = [row.get(key) for row in rows]
            errors = pa.array([None if r is None else str(r) for r in reasons], _STRING)
        return assemble(roles, metadata, pa.array(chunk.lines, _INT), errors)

    def _refuse_columns(self, chunk: Rows) -> None:
        """Raise at the row whose keys take the chunk past ``max_columns`` (if any does)."""
        seen: set[str] = set()
        for index, row in enumerate(chunk.rows):
            seen.update(row)
            if len(seen - self._not_metadata) > self.max_columns:
                raise too_many_columns(chunk.name, chunk.lines[index], self.max_columns, chunk.unit)


def rows_to_items(converter: Converter, chunk: Rows) -> list[ItemResult]:
    """The items of rows given from Python (dicts, DataFrame rows), column by column.

    The roles go the way of a file's rows; the metadata is kept as given (the converter's
    :meth:`~Converter.metadata_of`). A chunk that is not all plain dicts, that breaks a rule
    or holds text Arrow cannot (a lone surrogate) is converted row by row
    (:meth:`Converter.convert`), which words the first error in row order.

    Raises:
        InputError: a row that is not a mapping, a value of the wrong type, or a duplicate id.
    """
    rows = chunk.rows
    if rows and set(map(type, rows)) == {dict}:
        try:
            roles = _Roles(_Rows(chunk), converter, converter.count + 1).build()
            metadata = [converter.metadata_of(chunk, i, row) for i, row in enumerate(rows)]
            batch = assemble(roles, None, pa.array(chunk.lines, _INT))
        except (InputError, ValueError, pa.ArrowException):  # UnicodeEncodeError included
            pass
        else:
            items = batch_to_items(batch, metadata=metadata)
            converter.register(chunk, items)
            converter.count += len(rows)
            return items
    return converter.convert(chunk)


# -- the columns: of an Arrow table, or of rows -------------------------------------------------


class _Table:
    """The columns of an Arrow table as pyarrow parsed it.

    A column that needs the converter's rule for one value sends the table back: its rows are
    read in Python, where every place is known.
    """

    def __init__(
        self, table: pa.Table, absent: Absent | None, rows: Callable[[], Rows] | None = None
    ) -> None:
        self.table = table
        self._rows = rows
        self.n = table.num_rows
        self.present = set(table.column_names)
        self.absent = absent
        #: Whether a missing key differs from a null (JSON formats).
        self.keyed = absent is not None

    def array(self, name: str) -> pa.Array | None:
        """A role's column as one array of plain types; None: unsigned 64-bit numbers."""
        array = self._plain(name)
        return None if pa.types.is_uint64(array.type) else array  # may not fit int64

    def _plain(self, name: str) -> pa.Array:
        """The column as one array of plain types (no dictionary, no large offsets)."""
        column = self.table.column(name)
        array = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
        kind = array.type
        if pa.types.is_dictionary(kind):
            array = array.dictionary_decode()
            kind = array.type
        if pa.types.is_large_string(kind) or _is_string_view(kind):
            array = array.cast(_STRING)
        elif pa.types.is_integer(kind) and not pa.types.is_int64(kind) and kind != pa.uint64():
            array = array.cast(_INT)
        elif pa.types.is_large_list(kind):
            array = array.cast(pa.list_(kind.value_type))
        return array

    def missing(self, name: str, array: pa.Array) -> np.ndarray | None:
        """Which null rows of ``array`` lack the key (JSON formats); None: none is null."""
        if not array.null_count:
            return None
        if self.absent is None:
            return np.zeros(array.null_count, dtype=bool)
        rows = pc.indices_nonzero(array.is_null()).to_numpy()
        return self.absent(name, rows)

    def each(self, rule: _Rule) -> list[Any]:
        """``rule`` applied to each row, where the rows are at hand; else the table goes back."""
        if self._rows is None:
            raise _NotMine
        chunk = self._rows()
        return [rule(chunk, index, row) for index, row in enumerate(chunk.rows)]

    def metadata(self, conv: Converter, rule: str) -> pa.StructArray:
        """Every column but the roles' (``rule``: ``"json"`` or ``"arrow"``, as above)."""
        skip = conv.role_columns
        renamed = conv.renamed
        if renamed:
            for column, role in renamed.items():
                if role in self.present:
                    raise _NotMine  # both columns: the converter names the first such row
                if column not in self.present:
                    if self.keyed:
                        raise _NotMine
                    continue
                gone = self.missing(column, self._plain(column))
                if gone is not None and gone.any():
                    raise _NotMine
        fields: dict[str, tuple[pa.Field, pa.Array]] = {}
        for name in self.table.column_names:
            if name in skip:
                continue
            array = self._plain(name)
            if name == METADATA and pa.types.is_struct(array.type):
                if rule == "json":
                    raise _NotMine  # objects: merged as Python reads them
                for index, field in enumerate(array.type):
                    child = _micro_times(_nan_free(array.field(index)))
                    fields.pop(field.name, None)  # the nested value wins, as for rows
                    fields[field.name] = (field.with_type(child.type), child)
                continue
            if rule == "json" and not _json_kind(array.type):
                raise _NotMine
            array = _micro_times(_nan_free(array))
            label = renamed.get(name, name)
            fields[label] = (pa.field(label, array.type), array)
        if not fields:
            return pa.array([{}] * self.n, pa.struct([]))
        kinds = [field for field, _ in fields.values()]
        arrays = [array for _, array in fields.values()]
        return pa.StructArray.from_arrays(arrays, fields=kinds)


class _Rows:
    """The columns of rows (dicts).

    A column of one plain kind is made an Arrow array; any other goes through the converter's
    rule for one value.
    """

    keyed = True

    def __init__(self, chunk: Rows) -> None:
        self.chunk = chunk
        self.rows: list[dict[str, Any]] = chunk.rows
        self.n = len(self.rows)
        self.present: set[str] = set().union(*self.rows) if self.rows else set()

    def array(self, name: str) -> pa.Array | None:
        """The column as an Arrow array when its values are of one plain kind, else None."""
        values = list(map(dict.get, self.rows, repeat(name)))
        kinds = set(map(type, values))
        kinds.discard(_NONE)
        try:
            if not kinds:
                return pa.nulls(self.n)
            if kinds == {str}:
                return pa.array(values, _STRING)
            if kinds == {int}:
                return pa.array(values, _INT)
            if kinds == {bool}:
                return pa.array(values, pa.bool_())
            if kinds == {list}:
                return pa.array(values)  # lists of texts, say: the element type inferred
        except (pa.ArrowException, OverflowError, TypeError, ValueError):
            pass  # too large a number, a lone surrogate, lists of mixed kinds
        return None

    def missing(self, name: str, array: pa.Array) -> np.ndarray | None:
        """Which null rows of ``array`` lack the key; None: none is null."""
        if not array.null_count:
            return None
        rows = self.rows
        nulls = pc.indices_nonzero(array.is_null()).to_numpy().tolist()
        return np.array([name not in rows[i] for i in nulls], dtype=bool)

    def each(self, rule: _Rule) -> list[Any]:
        """``rule`` applied to each row, in order (it raises at the first row it refuses)."""
        chunk = self.chunk
        return [rule(chunk, index, row) for index, row in enumerate(self.rows)]

    def metadata(self, conv: Converter, skip: frozenset[str]) -> pa.StructArray:
        """Every key but the roles' (and ``skip``'s), by :func:`~itemscore._schema.metadata_array`.

        A mapped metadata role is named as the role; a nested ``metadata`` object (items
        written by itemscore) is merged in, as the converter does.
        """
        rows = self.rows
        keys = [key for key in _keys(rows, self.present) if key not in skip]
        if conv.renamed or (
            "metadata" in keys and any(isinstance(row.get("metadata"), Mapping) for row in rows)
        ):
            chunk, other = self.chunk, skip - conv.role_columns  # a records format's error key
            return metadata_array(
                [
                    conv.metadata_of(chunk, index, {k: v for k, v in row.items() if k not in other})
                    for index, row in enumerate(rows)
                ]
            )
        return metadata_array(rows, keys)


_Columns = _Table | _Rows


# -- the roles, one column each ---------------------------------------------------------------


class _Roles:
    """The role columns, in order.

    Each is vectorised where the column's type makes the outcome certain, and otherwise goes
    through the converter's rule for one value (which an Arrow table refuses).
    """

    def __init__(self, columns: _Columns, converter: Converter, first_row: int) -> None:
        self.columns = columns
        self.conv = converter
        self.n = columns.n
        self.first_row = first_row

    def build(self) -> list[pa.Array]:
        columns = [self._ids(), self._outputs(), self._answers()]
        columns += [self._text_role(role) for role in TEXT_ROLES]
        columns.append(self._attempts())
        return columns

    def _array(self, name: str) -> pa.Array | None:
        return self.columns.array(name) if name in self.columns.present else None

    def _keys_gone(self, name: str, array: pa.Array) -> bool:
        """Whether some row lacks the key ``name`` (where a missing key is not a null)."""
        gone = self.columns.missing(name, array)
        return gone is not None and bool(gone.any())

    def _each(self, rule: _Rule, kind: pa.DataType) -> pa.Array:
        return pa.array(self.columns.each(rule), kind)

    def _row_numbers(self) -> pa.Array:
        first = self.first_row
        return numbers(np.arange(first, first + self.n, dtype=np.int64)).cast(_STRING)

    def _ids(self) -> pa.Array:
        conv, first = self.conv, self.first_row
        name, explicit = conv.col["id"], "id" in conv.mapping
        if name not in self.columns.present and not (explicit and self.columns.keyed):
            return self._row_numbers()
        array = self._array(name)
        if array is not None and (
            pa.types.is_string(array.type)
            or pa.types.is_int64(array.type)
            or pa.types.is_null(array.type)
        ):
            texts = _as_text(array)
            assert texts is not None
            gone = self.columns.missing(name, array)
            if gone is not None and not explicit and gone.all():  # no key: the row number
                texts = pc.if_else(texts.is_null(), self._row_numbers(), texts)
                gone = None
            if gone is None and not (
                pa.types.is_string(array.type) and pc.any(blank(texts)).as_py()
            ):
                return texts

        def rule(chunk: Rows, index: int, row: dict[str, Any]) -> str:
            return conv.id_of(chunk, index, row, first + index)

        return self._each(rule, _STRING)

    def _outputs(self) -> pa.Array:
        conv = self.conv
        name = conv.col["output"]
        array = self._array(name)
        texts = None if array is None else _as_text(array)
        if texts is None or self._keys_gone(name, array):
            return self._each(conv.output_of, _STRING)
        marker = conv.null_output
        if marker is not None:
            texts = pc.if_else(pc.equal(texts, marker), pa.nulls(self.n, _STRING), texts)
        return texts

    def _answers(self) -> pa.Array:
        conv = self.conv
        name, explicit = conv.col["expected"], "expected" in conv.mapping
        if name not in self.columns.present and not (explicit and self.columns.keyed):
            return pa.nulls(self.n, _ANSWERS)
        array = self._array(name)
        answers = None if array is None else self._vector_answers(array)
        if answers is None or (explicit and self._keys_gone(name, array)):
            return self._each(conv.answers_of, _ANSWERS)
        return answers

    def _vector_answers(self, array: pa.Array) -> pa.Array | None:
        kind = array.type
        if pa.types.is_list(kind):
            element = kind.value_type
            if pa.types.is_null(element):
                return pa.nulls(self.n, _ANSWERS)
            if not (
                pa.types.is_string(element)
                or pa.types.is_int64(element)
                or pa.types.is_boolean(element)
                or pa.types.is_large_string(element)
            ):
                return None
            return kept_answers(array)
        texts = _as_text(array)
        if texts is None:
            return None
        empty = pc.fill_null(blank(texts), True)
        delimiter = self.conv.answer_delimiter
        if delimiter is None:
            offsets = numbers(np.arange(self.n + 1, dtype=np.int32))
            return pa.ListArray.from_arrays(offsets, texts, mask=empty)
        texts = pc.if_else(empty, pa.nulls(self.n, _STRING), texts)
        parts = pc.split_pattern(texts, pattern=delimiter)
        values = pc.utf8_trim(parts.flatten(), characters=_WHITESPACE)
        parts = pa.ListArray.from_arrays(parts.offsets, values, mask=parts.is_null())
        return kept_answers(parts)

    def _text_role(self, role: str) -> pa.Array:
        conv = self.conv
        name, explicit = conv.col[role], role in conv.mapping
        if name not in self.columns.present and not (explicit and self.columns.keyed):
            return pa.nulls(self.n, _STRING)
        array = self._array(name)
        texts = None if array is None else _as_text(array)
        if texts is None or (explicit and self._keys_gone(name, array)):

            def rule(chunk: Rows, index: int, row: dict[str, Any]) -> str | None:
                return conv.text_of(chunk, index, row, role)

            return self._each(rule, _STRING)
        if pa.types.is_string(texts.type) and texts.null_count < self.n:
            empty = pc.equal(pc.utf8_length(texts), 0)
            texts = pc.if_else(empty, pa.nulls(self.n, _STRING), texts)
        return texts

    def _attempts(self) -> pa.Array:
        name = self.conv.col["attempt"]
        if name not in self.columns.present:
            return pa.nulls(self.n, _INT)
        array = self._array(name)
        attempts = None if array is None else _vector_attempts(array)
        if attempts is None:
            return self._each(self.conv.attempt_of, _INT)
        return attempts


def _as_text(array: pa.Array) -> pa.Array | None:
    """A column of texts, whole numbers or booleans as text (their JSON text); None: other."""
    kind = array.type
    if pa.types.is_string(kind):
        return array
    if pa.types.is_int64(kind) or pa.types.is_boolean(kind):
        return array.cast(_STRING)
    if pa.types.is_null(kind):
        return pa.nulls(len(array), _STRING)
    return None


def _vector_attempts(array: pa.Array) -> pa.Array | None:
    """Attempts where the column makes them certain: whole numbers of at least 0, or digits."""
    kind = array.type
    if pa.types.is_null(kind):
        return pa.nulls(len(array), _INT)
    if pa.types.is_string(kind):
        trimmed = pc.utf8_trim(array, characters=_WHITESPACE)
        digits = pc.match_substring_regex(trimmed, r"^[0-9]{1,18}$")
        if not pc.all(pc.fill_null(digits, True)).as_py():
            return None
        return trimmed.cast(_INT)
    if not pa.types.is_int64(kind) or pc.any(pc.less(array, 0)).as_py():
        return None
    return array


def _keys(rows: Sequence[Mapping[str, Any]], every: set[str]) -> list[str]:
    """Every key of the rows (``every``), in the order first seen.

    Most rows share the first one's keys.
    """
    if not rows:
        return []
    first = list(rows[0])
    if len(every) == len(first):
        return first
    seen: dict[str, None] = {}
    for row in rows:
        seen.update(dict.fromkeys(row))
    return list(seen)


def _json_kind(kind: pa.DataType) -> bool:
    """Whether a metadata field of this type holds what Python's reading makes of JSON values."""
    if pa.types.is_null(kind) or any(test(kind) for test in _SCALARS):
        return True
    if pa.types.is_list(kind):
        element = kind.value_type
        return pa.types.is_null(element) or any(test(element) for test in _SCALARS)
    return False


def _nan_free(array: pa.Array) -> pa.Array:
    """A float column with NaN as null (a missing value, as everywhere)."""
    if pa.types.is_floating(array.type) and pc.any(pc.is_nan(array)).as_py():
        return pc.if_else(pc.is_nan(array), pa.nulls(len(array), array.type), array)
    return array


def _micro_times(array: pa.Array) -> pa.Array:
    """Nanosecond timestamps and durations in microseconds, or as text where they are finer.

    Python's ``datetime`` and ``timedelta`` hold microseconds. For nanoseconds pyarrow returns
    pandas objects when pandas is installed and raises when it is not, so the same file read
    differently by what else was installed. Now a column exact to the microsecond (what pandas
    writes of real times) holds ``datetime``/``timedelta``; one finer holds text: a timestamp's
    ISO 8601 form, a duration's count of nanoseconds. Lists and structs of them likewise.
    """
    micro = _times_as(array.type, lambda kind: pa.timestamp("us", kind.tz), pa.duration("us"))
    if micro is None:
        return array
    try:
        return array.cast(micro)  # a safe cast: it refuses to drop a digit
    except pa.ArrowInvalid:
        text = _times_as(array.type, lambda kind: _STRING, _STRING)
        return array.cast(text)


def _times_as(
    kind: pa.DataType, timestamp: Callable[[pa.TimestampType], pa.DataType], duration: pa.DataType
) -> pa.DataType | None:
    """``kind`` with its nanosecond timestamps and durations replaced; ``None``: it has none."""
    if pa.types.is_timestamp(kind) and kind.unit == "ns":
        return timestamp(kind)
    if pa.types.is_duration(kind) and kind.unit == "ns":
        return duration
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        inner = _times_as(kind.value_type, timestamp, duration)
        if inner is None:
            return None
        field = kind.value_field.with_type(inner)
        return pa.list_(field) if pa.types.is_list(kind) else pa.large_list(field)
    if pa.types.is_struct(kind):
        fields = [kind.field(i) for i in range(kind.num_fields)]
        changed = [_times_as(f.type, timestamp, duration) for f in fields]
        if all(c is None for c in changed):
            return None
        return pa.struct([f if c is None else f.with_type(c) for f, c in zip(fields, changed)])
    return None


def kept_answers(lists: pa.Array) -> pa.Array:
    """Answer lists without blank (or null) answers; a list left empty is null."""
    n = len(lists)
    values = lists.flatten()
    if not pa.types.is_string(values.type):
        values = values.cast(_STRING)
    parents = pc.list_parent_indices(lists)
    keep = pc.invert(pc.fill_null(blank(values), True))
    counts = np.bincount(parents.filter(keep).to_numpy(), minlength=n)
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    kept = values.filter(keep)
    mask = pc.equal(numbers(counts.astype(np.int64)), 0)
    return pa.ListArray.from_arrays(numbers(offsets), kept, mask=mask).cast(_ANSWERS)


def _is_string_view(kind: pa.DataType) -> bool:
    test = getattr(pa.types, "is_string_view", None)  # pyarrow 16 and later
    return bool(test is not None and test(kind))
