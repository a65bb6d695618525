"""The item columns of the run table: one Arrow shape for every source, and items from it.

Every reader yields record batches with the columns below; the run table keeps them, workers
score them, Parquet stores them. :func:`batch_to_items` builds the
:class:`~itemscore.ItemResult` records a metric receives, without checking again what the
batch already guarantees; :func:`items_to_batch` goes the other way for items given from
Python.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from ._records import EMPTY, ItemResult, _freeze_metadata

__all__ = [
    "ITEM_COLUMNS",
    "JSON_FIELD",
    "batch_to_items",
    "item_columns",
    "items_to_batch",
    "strings",
]

#: The item columns, in order (``metadata`` is a struct of the other columns of the source).
ITEM_COLUMNS: tuple[str, ...] = (
    "id",
    "output",
    "expected",
    "input",
    "group",
    "model",
    "cluster",
    "attempt",
    "metadata",
)
#: The types of the fixed item columns.
_TYPES: dict[str, pa.DataType] = {
    "id": pa.string(),
    "output": pa.string(),
    "expected": pa.list_(pa.string()),
    "input": pa.string(),
    "group": pa.string(),
    "model": pa.string(),
    "cluster": pa.string(),
    "attempt": pa.int64(),
}
#: Field metadata of a ``metadata`` field whose values are JSON text (values of mixed types).
JSON_FIELD = {b"itemscore": b"json"}

_new = object.__new__
_set = object.__setattr__


def strings(values: Sequence[str | None]) -> pa.Array:
    r"""``values`` as an Arrow string array; a lone surrogate is written as ``\udXXX``.

    Arrow holds UTF-8, which has no lone surrogates; text given from Python may (the readers
    refuse them in files). The escape keeps such a character visible instead of failing.
    """
    try:
        return pa.array(values, pa.string())
    except UnicodeEncodeError:
        return pa.array(
            [
                v if v is None else v.encode("utf-8", "backslashreplace").decode("utf-8")
                for v in values
            ],
            pa.string(),
        )


def _answers(values: Sequence[Sequence[str] | None]) -> pa.Array:
    try:
        return pa.array(values, pa.list_(pa.string()))
    except UnicodeEncodeError:
        escaped = [None if v is None else strings(list(v)).to_pylist() for v in values]
        return pa.array(escaped, pa.list_(pa.string()))


def _metadata_array(values: Sequence[Mapping[str, Any] | None]) -> pa.Array:
    """The ``metadata`` struct column: each key a field, mixed-type keys as JSON text."""
    keys: dict[str, None] = {}
    for mapping in values:
        if mapping:
            keys.update(dict.fromkeys(mapping))
    if not keys:
        return pa.nulls(len(values), pa.struct([]))
    fields: list[pa.Field] = []
    arrays: list[pa.Array] = []
    for key in keys:
        column = [None if not m else m.get(key) for m in values]
        try:
            array = pa.array(column)
            fields.append(pa.field(key, array.type))
        except (
            pa.ArrowInvalid,
            pa.ArrowTypeError,
            pa.ArrowNotImplementedError,
            OverflowError,
            UnicodeEncodeError,
        ):
            from ._serialize import json_safe

            texts = [None if v is None else json.dumps(json_safe(v)) for v in column]
            array = strings(texts)
            fields.append(pa.field(key, pa.string(), metadata=JSON_FIELD))
        arrays.append(array)
    present = pa.array([bool(m) for m in values])
    return pa.StructArray.from_arrays(arrays, fields=fields, mask=pa.compute.invert(present))


def items_to_batch(items: Sequence[ItemResult]) -> pa.RecordBatch:
    """``items`` as one record batch of :data:`ITEM_COLUMNS` (their scores are not kept).

    Items without any metadata give no ``metadata`` column (Parquet stores no empty struct).
    """
    arrays = [
        strings([getattr(item, name) for item in items])
        if kind == pa.string()
        else _answers([item.expected for item in items])
        if name == "expected"
        else pa.array([getattr(item, name) for item in items], type=kind)
        for name, kind in _TYPES.items()
    ]
    names = list(_TYPES)
    metadata = _metadata_array([item.metadata for item in items])
    if metadata.type.num_fields:
        arrays.append(metadata)
        names.append("metadata")
    return pa.RecordBatch.from_arrays(arrays, names=names)


def item_columns(batch: pa.RecordBatch | pa.Table) -> dict[str, list[Any]]:
    """The item columns of ``batch`` as Python lists (``metadata`` as mappings or ``None``)."""
    names = set(batch.schema.names)
    out: dict[str, list[Any]] = {}
    n = batch.num_rows
    for name in ITEM_COLUMNS:
        if name not in names:
            out[name] = [None] * n
            continue
        column = batch.column(name)
        if name == "metadata":
            out[name] = _metadata_rows(column, batch.schema.field("metadata"))
        else:
            out[name] = column.to_pylist()
    return out


def _metadata_rows(column: Any, field: pa.Field) -> list[Any]:
    rows: list[Any] = column.to_pylist()
    struct = field.type
    decoded = [f.name for f in struct if (f.metadata or {}) == JSON_FIELD]
    if decoded:
        for row in rows:
            if row:
                for key in decoded:
                    if row.get(key) is not None:
                        row[key] = json.loads(row[key])
    return rows


def batch_to_items(batch: pa.RecordBatch | pa.Table) -> list[ItemResult]:
    """The items of one batch, in order, built without checking again what the batch holds."""
    c = item_columns(batch)
    out: list[ItemResult] = []
    append = out.append
    item_type, empty = ItemResult, EMPTY
    for ident, output, expected, text, group, model, cluster, attempt, meta in zip(
        c["id"],
        c["output"],
        c["expected"],
        c["input"],
        c["group"],
        c["model"],
        c["cluster"],
        c["attempt"],
        c["metadata"],
    ):
        item = _new(item_type)
        _set(item, "id", ident)
        _set(item, "output", output)
        _set(item, "expected", None if expected is None else tuple(expected))
        _set(item, "input", text)
        _set(item, "group", group)
        _set(item, "model", model)
        _set(item, "cluster", cluster)
        _set(item, "attempt", attempt)
        _set(item, "metadata", _freeze_metadata(meta) if meta else empty)
        _set(item, "scores", empty)
        append(item)
    return out
