"""Arrow tables into canonical batches with ``pyarrow.compute``: the converter's rules, vectorised.

The *Arrow path* of the readers that parse with pyarrow (JSON lines, CSV, Parquet). It takes a
column only where its type makes the outcome certain (a text id, a text or whole-number
output, a list of texts as answers...) and says "not mine" (``None``) for everything else: a
value of another type, a blank id, a missing key the table cannot tell from a null. The reader
then builds the same rows through the row path (:mod:`._build`), which applies every rule and
names the place of every error. Both paths give equal batches.

``absent(column, rows)`` tells, for a JSON format, which of the given rows lack the key
entirely (Arrow reads a missing key and ``null`` alike); tabular formats pass ``None``: every
row has every column.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._schema import ERROR, METADATA, assemble
from ._convert import TEXT_ROLES, Converter

__all__ = ["Absent", "arrow_batch", "arrow_metadata", "blank", "kept_answers", "numbers"]

#: ``absent(column, rows) -> mask``: which of ``rows`` (indices) lack the key ``column``.
Absent = Callable[[str, np.ndarray], np.ndarray]

_STRING = pa.string()
_INT = pa.int64()
_ANSWERS = pa.list_(_STRING)
#: What Python's ``str.isspace`` and ``str.strip`` take for white space (Unicode's White_Space
#: and the four information separators), so that blank and stripped texts match the row path.
_WHITESPACE = "".join(
    map(
        chr,
        (
            *range(0x09, 0x0E),
            *range(0x1C, 0x21),
            0x85,
            0xA0,
            0x1680,
            *range(0x2000, 0x200B),
            0x2028,
            0x2029,
            0x202F,
            0x205F,
            0x3000,
        ),
    )
)
_SCALARS = (pa.types.is_string, pa.types.is_int64, pa.types.is_float64, pa.types.is_boolean)


class _NotMine(Exception):
    """A column the Arrow path cannot convert with certainty: the row path takes the batch."""


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


def arrow_batch(
    table: pa.Table | pa.RecordBatch,
    converter: Converter,
    *,
    lines: pa.Array,
    first_row: int,
    absent: Absent | None,
    metadata_rule: Literal["json", "arrow"] = "json",
    errors: pa.Array | None = None,
) -> pa.RecordBatch | None:
    """The canonical batch of ``table``'s rows, or ``None`` when the row path must build it.

    Args:
        table: The rows as parsed: one column per key or header field.
        converter: The mapping, delimiter and null marker.
        lines: Each row's line (or row number).
        first_row: The row number of the first row (ids of rows without one).
        absent: For JSON formats, which rows lack a key; ``None`` for tabular ones.
        metadata_rule: ``"json"``: metadata fields of JSON's kinds only (anything else goes
            to the row path, which makes JSON text of it); ``"arrow"``: every column as it is
            (Parquet).
        errors: The ``_error`` column, when the source has one.
    """
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    try:
        return _Batch(table, converter, lines, first_row, absent, metadata_rule, errors).build()
    except _NotMine:
        return None


def arrow_metadata(table: pa.Table, converter: Converter) -> pa.StructArray:
    """The metadata column of a Parquet table: every column but the roles', as it is.

    A float column's NaN is null; a struct column named ``metadata`` (items written by
    itemscore) has its fields merged in.
    """
    lines = numbers(np.arange(1, table.num_rows + 1, dtype=np.int64))
    batch = _Batch(table, converter, lines, 1, None, "arrow", None)
    try:
        return batch._metadata()
    except _NotMine:
        return batch._metadata(check=False)


class _Batch:
    def __init__(
        self,
        table: pa.Table,
        converter: Converter,
        lines: pa.Array,
        first_row: int,
        absent: Absent | None,
        metadata_rule: str,
        errors: pa.Array | None,
    ) -> None:
        self.table = table
        self.n = table.num_rows
        self.names = set(table.column_names)
        self.conv = converter
        self.lines = lines
        self.first_row = first_row
        self.absent = absent
        self.rule = metadata_rule
        self.errors = errors

    def build(self) -> pa.RecordBatch:
        columns = [self._ids(), self._outputs(), self._answers()]
        columns += [self._text_role(role) for role in TEXT_ROLES]
        columns.append(self._attempts())
        return assemble(columns, self._metadata(), self.lines, self.errors)

    # -- helpers ----------------------------------------------------------------------------

    def _column(self, name: str, *, role: bool = True) -> pa.Array:
        """The column as one array of plain types (no dictionary, no large offsets)."""
        column = self.table.column(name)
        array = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
        kind = array.type
        if pa.types.is_dictionary(kind):
            array = array.dictionary_decode()
            kind = array.type
        if pa.types.is_large_string(kind) or _is_string_view(kind):
            array = array.cast(_STRING)
        elif pa.types.is_uint64(kind):
            if role:
                raise _NotMine  # may not fit int64: the row path reads it as Python does
            return array  # metadata keeps it
        elif pa.types.is_integer(kind) and not pa.types.is_int64(kind):
            array = array.cast(_INT)
        elif pa.types.is_large_list(kind):
            array = array.cast(pa.list_(kind.value_type))
        return array

    def _keys_absent(self, name: str, array: pa.Array) -> np.ndarray | None:
        """Which null rows of ``array`` lack the key (JSON formats); None: none is null."""
        if not array.null_count:
            return None
        if self.absent is None:
            return np.zeros(array.null_count, dtype=bool)
        rows = pc.indices_nonzero(array.is_null()).to_numpy()
        return self.absent(name, rows)

    def _as_text(self, array: pa.Array) -> pa.Array:
        """A column of texts, whole numbers or booleans as text (their JSON text)."""
        kind = array.type
        if pa.types.is_string(kind):
            return array
        if pa.types.is_int64(kind) or pa.types.is_boolean(kind):
            return array.cast(_STRING)
        if pa.types.is_null(kind):
            return pa.nulls(len(array), _STRING)
        raise _NotMine

    def _row_numbers(self) -> pa.Array:
        first = self.first_row
        return numbers(np.arange(first, first + self.n, dtype=np.int64)).cast(_STRING)

    # -- roles ------------------------------------------------------------------------------

    def _ids(self) -> pa.Array:
        conv = self.conv
        name = conv.col["id"]
        explicit = "id" in conv.mapping
        if name not in self.names:
            if explicit and self.absent is not None:
                raise _NotMine  # every row lacks the mapped key: the row path names the first
            return self._row_numbers()
        array = self._column(name)
        if not (
            pa.types.is_string(array.type)
            or pa.types.is_int64(array.type)
            or pa.types.is_null(array.type)
        ):
            raise _NotMine
        texts = self._as_text(array)
        gone = self._keys_absent(name, array)
        if gone is not None:
            if explicit or not gone.all():
                raise _NotMine  # an empty id, or a mapped one missing: an error
            texts = pc.if_else(texts.is_null(), self._row_numbers(), texts)
        if pa.types.is_string(array.type) and pc.any(blank(texts)).as_py():
            raise _NotMine
        return texts

    def _outputs(self) -> pa.Array:
        conv = self.conv
        name = conv.col["output"]
        if name not in self.names:
            raise _NotMine  # no row has the key: the row path names the first
        array = self._column(name)
        texts = self._as_text(array)
        gone = self._keys_absent(name, array)
        if gone is not None and gone.any():
            raise _NotMine
        marker = conv.null_output
        if marker is not None:
            texts = pc.if_else(pc.equal(texts, marker), pa.nulls(self.n, _STRING), texts)
        return texts

    def _answers(self) -> pa.Array:
        conv = self.conv
        name = conv.col["expected"]
        explicit = "expected" in conv.mapping
        if name not in self.names:
            if explicit and self.absent is not None:
                raise _NotMine
            return pa.nulls(self.n, _ANSWERS)
        array = self._column(name)
        if explicit:
            gone = self._keys_absent(name, array)
            if gone is not None and gone.any():
                raise _NotMine
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
                raise _NotMine
            return kept_answers(array)
        texts = self._as_text(array)
        empty = pc.fill_null(blank(texts), True)
        delimiter = conv.answer_delimiter
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
        name = conv.col[role]
        explicit = role in conv.mapping
        if name not in self.names:
            if explicit and self.absent is not None:
                raise _NotMine
            return pa.nulls(self.n, _STRING)
        array = self._column(name)
        texts = self._as_text(array)
        if explicit:
            gone = self._keys_absent(name, array)
            if gone is not None and gone.any():
                raise _NotMine
        if pa.types.is_string(array.type):
            empty = pc.equal(pc.utf8_length(texts), 0)
            texts = pc.if_else(empty, pa.nulls(self.n, _STRING), texts)
        return texts

    def _attempts(self) -> pa.Array:
        name = self.conv.col["attempt"]
        if name not in self.names:
            return pa.nulls(self.n, _INT)
        array = self._column(name)
        kind = array.type
        if pa.types.is_null(kind):
            return pa.nulls(self.n, _INT)
        if pa.types.is_string(kind):
            trimmed = pc.utf8_trim(array, characters=_WHITESPACE)
            digits = pc.match_substring_regex(trimmed, r"^[0-9]{1,18}$")
            if not pc.all(pc.fill_null(digits, True)).as_py():
                raise _NotMine
            return trimmed.cast(_INT)
        if not pa.types.is_int64(kind):
            raise _NotMine
        if pc.any(pc.less(array, 0)).as_py():
            raise _NotMine
        return array

    # -- metadata ---------------------------------------------------------------------------

    def _metadata(self, *, check: bool = True) -> pa.StructArray:
        conv = self.conv
        skip = set(conv.role_columns)
        if self.errors is not None:
            skip.add(ERROR)
        renamed = conv.renamed
        if renamed and check:
            for column, role in renamed.items():
                if role in self.names:
                    raise _NotMine  # both columns: the row path names the first such row
                if column not in self.names:
                    if self.absent is not None:
                        raise _NotMine
                    continue
                gone = self._keys_absent(column, self._column(column))
                if gone is not None and gone.any():
                    raise _NotMine
        fields: dict[str, tuple[pa.Field, pa.Array]] = {}
        for name in self.table.column_names:
            if name in skip:
                continue
            array = self._column(name, role=False)
            if name == METADATA and pa.types.is_struct(array.type):
                if self.rule == "json":
                    raise _NotMine  # objects: the row path merges them
                for index, field in enumerate(array.type):
                    child = _micro_times(_nan_free(array.field(index)))
                    fields.pop(field.name, None)  # the nested value wins, as in the row path
                    fields[field.name] = (field.with_type(child.type), child)
                continue
            if self.rule == "json" and not _json_kind(array.type):
                raise _NotMine
            array = _micro_times(_nan_free(array))
            label = renamed.get(name, name)
            fields[label] = (pa.field(label, array.type), array)
        if not fields:
            return pa.array([{}] * self.n, pa.struct([]))
        kinds = [field for field, _ in fields.values()]
        arrays = [array for _, array in fields.values()]
        return pa.StructArray.from_arrays(arrays, fields=kinds)


def _json_kind(kind: pa.DataType) -> bool:
    """Whether a metadata field of this type holds what the row path makes of JSON values."""
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
