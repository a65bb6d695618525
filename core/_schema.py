"""The canonical batch: the one Arrow shape every reader yields and the run table is made of.

A batch has these columns, in this order (:data:`SCHEMA` without ``metadata`` fields):

=============  ===================  =======================================================
column         type                 holds
=============  ===================  =======================================================
``id``         string, not null     the item's id
``output``     string               the model's answer; null: a failed request
``expected``   list<string>         the valid answers; null: no answer key (never empty)
``input``      string               the prompt; null: none
``group``      string               the breakdown key; null: none
``model``      string               the model; null: none
``cluster``    string               the cluster; null: none
``attempt``    int64                which attempt at the question; null: the only one
``metadata``   struct<...>          every other column, one field each
``_line``      int64, not null      the row's first line in its file (1-based), or its row
                                    (record) number where the format has no lines
``_error``     string (optional)    why a harness document could not be read (its item is
                                    scored ``error``)
=============  ===================  =======================================================

**Metadata fields.** A field holds what its values share: text (string), whole numbers within
64 bits (int64), numbers (double: a field of whole numbers and fractions is double, as pandas
and Arrow read JSON), booleans, lists of one of those, or only nulls (null). A field whose
values have nothing in common (text on one row, a number on the next), objects, and lists of
lists or objects hold their JSON text instead, and the field carries the field metadata
:data:`JSON_FIELD` so that :func:`batch_to_items` turns the text back into the value. A key
missing on a row is null there, so an item read back has every key of its batch (``None``
where its row had none). A top-level NaN is missing (null), as everywhere in itemscore.

Batches of one source may differ in their metadata fields (a key first seen in a later batch,
a field that is null in one batch and text in the next); :func:`unify_batches` brings them to
one schema.
"""

from __future__ import annotations

import json
from collections import deque as _consume
from collections.abc import Iterable, Mapping, Sequence
from itertools import repeat
from types import MappingProxyType
from typing import Any

import attrs
import pyarrow as pa

from ._records import EMPTY, ItemResult, _freeze_metadata, _frozen

__all__ = [
    "ERROR",
    "ITEM_COLUMNS",
    "JSON_FIELD",
    "LINE",
    "METADATA",
    "ROLE_COLUMNS",
    "Unreadable",
    "assemble",
    "batch_to_items",
    "canonical_schema",
    "common_schema",
    "conform",
    "is_json_field",
    "items_to_batch",
    "metadata_array",
    "metadata_column",
    "strings",
    "unify_batches",
]

#: The field metadata of a metadata field that holds JSON text.
JSON_FIELD: Mapping[bytes, bytes] = MappingProxyType({b"itemscore": b"json"})
#: The name of the metadata column.
METADATA = "metadata"
#: The name of the line (or row number) column.
LINE = "_line"
#: The name of the optional column of unreadable documents' reasons.
ERROR = "_error"


class Unreadable(str):
    """Why a reader could not read a document: the text of its item's ``metadata["error"]``.

    It is a text like any other to whoever reads the metadata; its type tells the engine that
    the item stands for an unreadable document, so that items handed back to ``score`` are
    ``error`` as the file's rows are. A metadata ``error`` of the data's own (a column named
    so) is a plain text and means nothing to the engine.
    """

    __slots__ = ()


_STRING = pa.string()
_ANSWERS = pa.list_(_STRING)
_INT = pa.int64()
_DOUBLE = pa.float64()
_BOOL = pa.bool_()
_NULL = pa.null()

#: The item fields a batch holds, each with its type, in ItemResult's order.
ROLE_COLUMNS: tuple[pa.Field, ...] = (
    pa.field("id", _STRING, nullable=False),
    pa.field("output", _STRING),
    pa.field("expected", _ANSWERS),
    pa.field("input", _STRING),
    pa.field("group", _STRING),
    pa.field("model", _STRING),
    pa.field("cluster", _STRING),
    pa.field("attempt", _INT),
)
_TEXT_FIELDS = ("input", "group", "model", "cluster")
#: The item columns of a batch, in order (``metadata`` only when the rows have metadata).
ITEM_COLUMNS: tuple[str, ...] = (*(field.name for field in ROLE_COLUMNS), METADATA)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def canonical_schema(metadata: pa.StructType | None = None, *, errors: bool = False) -> pa.Schema:
    """The schema of a canonical batch with these ``metadata`` fields (and ``_error``).

    A batch whose rows have no metadata field has no ``metadata`` column: Parquet cannot store
    a struct without fields.
    """
    fields = list(ROLE_COLUMNS)
    if metadata is not None and metadata.num_fields:
        fields.append(pa.field(METADATA, metadata))
    fields.append(pa.field(LINE, _INT, nullable=False))
    if errors:
        fields.append(pa.field(ERROR, _STRING))
    return pa.schema(fields)


def assemble(
    roles: Sequence[pa.Array],
    metadata: pa.StructArray | None,
    lines: pa.Array,
    errors: pa.Array | None = None,
) -> pa.RecordBatch:
    """The canonical batch of these columns: the roles in order, metadata, lines, reasons."""
    kind = metadata.type if metadata is not None and metadata.type.num_fields else None
    columns = list(roles)
    if kind is not None:
        columns.append(metadata)
    columns.append(lines)
    if errors is not None:
        columns.append(errors)
    return pa.RecordBatch.from_arrays(
        columns, schema=canonical_schema(kind, errors=errors is not None)
    )


def strings(values: Sequence[str | None]) -> pa.Array:
    r"""``values`` as an Arrow string array; a lone surrogate is written as ``\udXXX``.

    Arrow holds UTF-8, which has no lone surrogates; text given from Python may (the readers
    refuse them in files). The escape keeps such a character visible instead of failing.
    """
    try:
        return pa.array(values, _STRING)
    except UnicodeEncodeError:
        return pa.array(
            [
                v if v is None else v.encode("utf-8", "backslashreplace").decode("utf-8")
                for v in values
            ],
            _STRING,
        )


def is_json_field(field: pa.Field) -> bool:
    """Whether a metadata field holds JSON text (to be read back as values)."""
    return field.metadata is not None and field.metadata.get(b"itemscore") == b"json"


# -- metadata: Python values into typed Arrow fields ----------------------------------------


def metadata_column(values: list[Any]) -> tuple[pa.Array, bool]:
    """One metadata field from its values (``None``: missing): ``(array, holds JSON text)``.

    The rule of the module docstring; ``values`` may be changed in place (NaN made ``None``).
    """
    kinds = set(map(type, values))
    kinds.discard(type(None))
    if float in kinds:
        for index, value in enumerate(values):
            if type(value) is float and value != value:
                values[index] = None
    if not kinds:
        return pa.nulls(len(values)), False
    if len(kinds) == 1:
        kind = next(iter(kinds))
        if kind is str:
            return strings(values), False
        if kind is bool:
            return pa.array(values, _BOOL), False
    if kinds <= {int, float}:
        typed = _number_type(values)
        if typed is None:
            return _json_column(values), True
        return pa.array(_as_typed(values, typed), typed), False
    if kinds <= {list, tuple}:
        element = _element_type(values)
        if element is None:
            return _json_column(values), True
        if element is _DOUBLE:
            values = [None if v is None else _as_typed(v, _DOUBLE) for v in values]
        if element is _STRING:
            return _lists_of_strings(values), False
        return pa.array(values, pa.list_(element)), False
    if kinds & _JSON_KINDS == kinds:  # objects, or JSON values of several kinds
        return _json_column(values), True
    try:  # values from Python (dates, bytes, decimals): as Arrow infers them
        inferred = pa.array(values, from_pandas=False)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return _json_column(values), True
    if inferred.type.num_fields or pa.types.is_null(inferred.type):  # a struct: keys lost
        return _json_column(values), True
    return inferred, False


_JSON_KINDS = frozenset({str, int, float, bool, list, tuple, dict, MappingProxyType})


def _lists_of_strings(values: Sequence[Sequence[str | None] | None]) -> pa.Array:
    try:
        return pa.array(values, _ANSWERS)
    except UnicodeEncodeError:  # a lone surrogate from Python: escaped, as by strings()
        escaped = [None if v is None else strings(list(v)).to_pylist() for v in values]
        return pa.array(escaped, _ANSWERS)


def _number_type(values: Iterable[Any]) -> pa.DataType | None:
    """int64 when every number is a whole number within 64 bits, else double (None: too big)."""
    whole = True
    for value in values:
        if type(value) is int:
            if not _INT64_MIN <= value <= _INT64_MAX:
                whole = False
                if abs(value) >= 2**1024:  # beyond every double
                    return None
        elif value is not None:
            whole = False
    return _INT if whole else _DOUBLE


def _as_typed(values: Iterable[Any], kind: pa.DataType) -> list[Any]:
    """Numbers as ``kind`` takes them: whole numbers as floats for double (any size)."""
    if kind is _DOUBLE:
        return [float(v) if type(v) is int else v for v in values]
    return list(values)


def _element_type(lists: Iterable[Any]) -> pa.DataType | None:
    """The element type of a field of lists, or None when the elements share none."""
    elements = [element for values in lists if values is not None for element in values]
    kinds = set(map(type, elements))
    kinds.discard(type(None))
    if not kinds:
        return _NULL
    if kinds == {str}:
        return _STRING
    if kinds == {bool}:
        return _BOOL
    if kinds <= {int, float}:
        return _number_type(elements)
    return None


def _json_column(values: Iterable[Any]) -> pa.Array:
    """JSON text of each value (``None`` stays null), marked as such by its field."""
    from ._serialize import json_safe  # the one JSON form of values itemscore writes

    dumps = json.dumps
    texts: list[str | None] = []
    for value in values:
        if value is None:
            texts.append(None)
            continue
        try:
            texts.append(dumps(value, ensure_ascii=False, allow_nan=True))
        except (TypeError, ValueError):  # a value from Python that JSON cannot write
            texts.append(dumps(json_safe(value), ensure_ascii=False))
    return strings(texts)


def metadata_array(
    rows: Sequence[Mapping[str, Any] | None], keys: Sequence[str] | None = None
) -> pa.StructArray:
    """The ``metadata`` column of ``rows`` (mappings of metadata; ``None``: none).

    Args:
        rows: One mapping per row.
        keys: The fields, in order; default: every key of the rows, in the order first seen.
    """
    if keys is None:
        seen: dict[str, None] = {}
        for row in rows:
            if row:
                seen.update(dict.fromkeys(row))
        keys = list(seen)
    if not keys:
        return pa.array([{}] * len(rows), pa.struct([]))  # left out of the batch
    arrays, fields = [], []
    for key in keys:
        values = [row.get(key) if row else None for row in rows]
        array, is_json = metadata_column(values)
        arrays.append(array)
        fields.append(pa.field(key, array.type, metadata=JSON_FIELD if is_json else None))
    return pa.StructArray.from_arrays(arrays, fields=fields)


# -- items into a batch, and back -----------------------------------------------------------


def items_to_batch(items: Sequence[ItemResult], *, first_line: int = 1) -> pa.RecordBatch:
    """A canonical batch of items given from Python (to be written as Parquet, for one).

    ``_line`` numbers the items from ``first_line``. Metadata follows the module docstring's
    rule; a value Arrow cannot hold is kept as its JSON text (:func:`~itemscore._serialize.
    json_safe`), and a lone surrogate in a text is escaped (:func:`strings`). The scores are
    not kept.
    """
    n = len(items)
    roles: list[pa.Array] = [
        strings([item.id for item in items]),
        strings([item.output for item in items]),
        _lists_of_strings([item.expected for item in items]),
    ]
    for name in _TEXT_FIELDS:
        roles.append(strings([getattr(item, name) for item in items]))
    roles.append(pa.array([item.attempt for item in items], _INT))
    metadata = metadata_array([item.metadata for item in items])
    return assemble(roles, metadata, pa.array(range(first_line, first_line + n), _INT))


_new = object.__new__
#: Each field's slot setter.
_SLOTS = {field.name: ItemResult.__dict__[field.name].__set__ for field in attrs.fields(ItemResult)}


def batch_to_items(
    batch: pa.RecordBatch | pa.Table, *, metadata: Sequence[Mapping[str, Any]] | None = None
) -> list[ItemResult]:
    """The items of a canonical batch, in order, built without validating them again.

    A canonical batch is valid by construction (every reader checks each row as it builds
    it), so the items are made the way unpickling makes them. Their metadata holds every field
    of the batch's ``metadata`` (``None`` where a row had no value); JSON-text fields are read
    back into values. An unreadable document's reason (``_error``) is also put in its
    metadata, as ``error``, when that key is free. A role column the batch lacks is ``None``
    on every item (a table stored without its empty columns). ``metadata``: each item's
    metadata as given from Python (kept as ``ItemResult`` keeps it), in place of the batch's.
    """
    n = batch.num_rows
    if n == 0:
        return []
    schema = batch.schema
    names = set(schema.names)

    def column(name: str) -> Iterable[Any]:
        return _plain(batch.column(name), n) if name in names else repeat(None)

    ids = batch.column("id").to_pylist()
    answers: Iterable[Any] = repeat(None)
    if "expected" in names and batch.column("expected").null_count < n:
        answers = [None if e is None else tuple(e) for e in batch.column("expected").to_pylist()]
    mappings: Iterable[Any] = repeat(EMPTY)
    if metadata is not None:
        mappings = map(_freeze_metadata, metadata)
    elif METADATA in names:
        mappings = _metadata_mappings(batch.column(METADATA), schema.field(METADATA).type, n)
    if ERROR in names:
        mappings = _with_errors(mappings, batch.column(ERROR), n)
    items = [_new(ItemResult) for _ in range(n)]
    # One C-level loop per field: 40% cheaper than one Python loop setting ten slots per item.
    _each(_SLOTS["id"], items, ids)
    _each(_SLOTS["output"], items, column("output"))
    _each(_SLOTS["expected"], items, answers)
    for name in (*_TEXT_FIELDS, "attempt"):
        _each(_SLOTS[name], items, column(name))
    _each(_SLOTS["metadata"], items, mappings)
    _each(_SLOTS["scores"], items, repeat(EMPTY))
    return items


def _each(setter: Any, items: list[ItemResult], values: Iterable[Any]) -> None:
    _consume(map(setter, items, values), 0)  # run the setter in C, keep nothing


def _plain(column: pa.Array, n: int) -> Iterable[Any]:
    """A column's values as Python objects (``repeat(None)`` when every one is null)."""
    if column.null_count == n:
        return repeat(None)
    return column.to_pylist()  # type: ignore[no-any-return]


def _metadata_mappings(column: pa.Array, kind: pa.StructType, n: int) -> Iterable[Any]:
    if kind.num_fields == 0:
        return repeat(EMPTY)
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if column.null_count:  # a struct null on some rows (items stored without metadata)
        rows = column.to_pylist()
        decode = [field.name for field in kind if is_json_field(field)]
        return [EMPTY if row is None else _frozen_row(row, decode) for row in rows]
    if not any(is_json_field(field) or not _scalar_type(field.type) for field in kind):
        # Scalars only: Arrow builds the dicts, each then made read-only.
        return list(map(MappingProxyType, column.to_pylist()))
    keys = [field.name for field in kind]
    columns: list[Iterable[Any]] = []
    for index, field in enumerate(kind):
        values = _plain(column.field(index), n)
        if is_json_field(field):
            loads = json.loads
            values = [None if v is None else _frozen(loads(v)) for v in values]
        elif not _scalar_type(field.type):  # lists, structs: read-only like any metadata
            values = [_frozen(v) for v in values]
        columns.append(values)
    proxy = MappingProxyType
    return [proxy(dict(zip(keys, row))) for row in zip(*columns)]


def _frozen_row(row: dict[str, Any], decode: Sequence[str]) -> Mapping[str, Any]:
    for key in decode:
        if row[key] is not None:
            row[key] = json.loads(row[key])
    return MappingProxyType({key: _frozen(value) for key, value in row.items()})


def _scalar_type(kind: pa.DataType) -> bool:
    return not (pa.types.is_nested(kind) or pa.types.is_dictionary(kind))


def _with_errors(metadata: Iterable[Any], errors: pa.Array, n: int) -> Iterable[Any]:
    if errors.null_count == n:
        return metadata
    out = []
    for meta, reason in zip(metadata, errors.to_pylist()):
        if reason is not None and "error" not in meta:
            meta = MappingProxyType({**meta, "error": Unreadable(reason)})
        out.append(meta)
    return out


# -- one schema for batches of one source ---------------------------------------------------


def unify_batches(batches: Sequence[pa.RecordBatch]) -> list[pa.RecordBatch]:
    """``batches`` with one schema: the union of their metadata fields, in order first seen.

    A field missing from a batch is null there; a field null in one batch takes the other's
    type; int64 and double make double, lists likewise by their elements; any other
    difference makes the field JSON text in every batch. ``_error`` is added where missing.
    """
    if not batches:
        return []
    first = batches[0].schema
    if all(batch.schema.equals(first, check_metadata=True) for batch in batches[1:]):
        return list(batches)
    schema = common_schema([batch.schema for batch in batches])
    return [conform(batch, schema) for batch in batches]


def common_schema(schemas: Iterable[pa.Schema]) -> pa.Schema:
    """One canonical schema for batches of these schemas (the rules of :func:`unify_batches`).

    Batches read in parts (by several workers) are brought to it one at a time, with
    :func:`conform`, as they are written.
    """
    fields: dict[str, pa.Field] = {}
    errors = False
    for schema in schemas:
        errors = errors or schema.get_field_index(ERROR) >= 0
        if METADATA not in schema.names:
            continue
        for field in schema.field(METADATA).type:
            known = fields.get(field.name)
            fields[field.name] = field if known is None else _common_field(known, field)
    return canonical_schema(pa.struct(list(fields.values())), errors=errors)


def _common_field(a: pa.Field, b: pa.Field) -> pa.Field:
    if a.equals(b, check_metadata=True):
        return a
    common = None if is_json_field(a) or is_json_field(b) else _common_type(a.type, b.type)
    if common is None:
        return pa.field(a.name, _STRING, metadata=JSON_FIELD)
    return pa.field(a.name, common)


def _common_type(a: pa.DataType, b: pa.DataType) -> pa.DataType | None:
    if a.equals(b):
        return a
    if pa.types.is_null(a):
        return b
    if pa.types.is_null(b):
        return a
    numbers = {_INT, _DOUBLE}
    if a in numbers and b in numbers:
        return _DOUBLE
    if pa.types.is_list(a) and pa.types.is_list(b):
        element = _common_type(a.value_type, b.value_type)
        return None if element is None else pa.list_(element)
    return None


def conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """``batch`` with the metadata fields (and ``_error``) of ``schema`` (a common schema)."""
    if batch.schema.equals(schema, check_metadata=True):
        return batch
    n = batch.num_rows
    names = batch.schema.names
    roles = [batch.column(field.name) for field in ROLE_COLUMNS]
    errors = None
    if ERROR in schema.names:
        errors = batch.column(ERROR) if ERROR in names else pa.nulls(n, _STRING)
    if METADATA not in schema.names:
        return assemble(roles, None, batch.column(LINE), errors)
    metadata = batch.column(METADATA) if METADATA in names else None
    have = {} if metadata is None else {f.name: i for i, f in enumerate(metadata.type)}
    arrays = []
    target = schema.field(METADATA).type
    for field in target:
        index = have.get(field.name)
        if metadata is None or index is None:
            arrays.append(pa.nulls(n, field.type))
            continue
        child = metadata.field(index)
        source = metadata.type.field(index)
        if source.equals(field, check_metadata=True) or is_json_field(source):
            arrays.append(child)
        elif is_json_field(field):
            arrays.append(_json_column(child.to_pylist()))
        else:
            arrays.append(child.cast(field.type))
    struct = pa.StructArray.from_arrays(arrays, fields=list(target))
    return assemble(roles, struct, batch.column(LINE), errors)
