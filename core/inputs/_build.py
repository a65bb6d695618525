"""Rows into canonical batches, column by column: the converter's rules for data files.

The *row path* of every reader: rows are mappings from column name to value (a JSON line's
object, a CSV record with its header, a Parquet row, a harness log's record), and each role is
built as one column. The common values (a non-blank text id, a text output, a list of texts)
are taken as they are in one pass per column; any other value goes through the
:class:`~itemscore.inputs._convert.Converter`'s rules one at a time, so that files, Python rows
and DataFrames share one set of rules and one set of messages.

The Arrow readers (:mod:`._vector`) take a faster route where a column's type makes it safe,
and come back here for everything else; both give equal batches.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator, Mapping, Sequence
from itertools import repeat
from typing import Any

import pyarrow as pa

from .._exceptions import InputError
from .._schema import JSON_FIELD, assemble, metadata_array, metadata_column
from ._bounds import DEFAULT_LIMITS, too_many_columns
from ._convert import _ABSENT, TEXT_ROLES, Converter
from ._source import Rows
from ._vector import kept_answers

__all__ = ["RowBuilder", "collector_paused"]

_STRING = pa.string()
_ANSWERS = pa.list_(_STRING)
_NONE = type(None)
_PLAIN_TEXT = frozenset({str, _NONE})
_ANSWER_KINDS = frozenset({str, list, _NONE})


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


class RowBuilder:
    """Builds canonical batches from chunks of rows, with one converter's settings.

    Args:
        converter: The mapping, delimiter and null marker (and, for a tabular source, the
            header it checked).
        error_key: A records format's key for "this document could not be read" (its value,
            the reason, goes to ``_error``), or ``None``.
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
        col = converter.col
        self._id, self._output, self._expected = col["id"], col["output"], col["expected"]
        self._attempt = col["attempt"]
        self._present: set[str] = set()  # the keys of the chunk being built
        self._not_metadata = converter.role_columns | (
            frozenset({error_key}) if error_key else frozenset()
        )

    def build(
        self, chunk: Rows, first_row: int, *, metadata: pa.StructArray | None = None
    ) -> pa.RecordBatch:
        """The canonical batch of ``chunk``, whose first row is row ``first_row`` of the source.

        Args:
            chunk: The rows, with their places.
            first_row: The row number of the chunk's first row: ids of rows without one.
            metadata: The metadata column when the reader has it already (Parquet keeps its
                own types); ``None``: built from the rows.

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
        self._present = set().union(*rows) if rows else set()
        if len(self._present) > self.max_columns + len(self._not_metadata):
            self._refuse_columns(chunk)
        columns: list[pa.Array] = [
            pa.array(self._ids(chunk, first_row), _STRING),
            pa.array(self._outputs(chunk), _STRING),
            self._answers(chunk),
        ]
        for role in TEXT_ROLES:
            columns.append(self._text_role(chunk, role))
        columns.append(self._attempts(chunk))
        if metadata is None:
            metadata = self._metadata(chunk)
        elif self.converter.renamed:
            self._check_renamed(chunk)
        errors = None
        key = self.error_key
        if key is not None and key in self._present:
            errors = pa.array([_reason(row.get(key)) for row in rows], _STRING)
        return assemble(columns, metadata, pa.array(chunk.lines, pa.int64()), errors)

    def _refuse_columns(self, chunk: Rows) -> None:
        """Raise at the row whose keys take the chunk past ``max_columns`` (if any does)."""
        seen: set[str] = set()
        for index, row in enumerate(chunk.rows):
            seen.update(row)
            if len(seen - self._not_metadata) > self.max_columns:
                raise too_many_columns(chunk.name, chunk.lines[index], self.max_columns, chunk.unit)

    # -- the roles, one column each ---------------------------------------------------------

    def _ids(self, chunk: Rows, first_row: int) -> list[str]:
        conv, rows = self.converter, chunk.rows
        column = self._id
        has_id = "id" in conv.mapping or conv.header is None or column in conv.header
        if not has_id:
            return [str(number) for number in range(first_row, first_row + len(rows))]
        raw = _column(rows, column, _ABSENT)
        if set(map(type, raw)) == {str} and all(raw) and not any(map(str.isspace, raw)):
            return raw
        explicit = "id" in conv.mapping
        ids = []
        for index, value in enumerate(raw):
            if type(value) is str and value and not value.isspace():
                ids.append(value)
            elif value is _ABSENT:
                if explicit:
                    raise conv.missing_key(chunk, index, "id", column, rows[index])
                ids.append(str(first_row + index))
            else:
                ids.append(conv.id_text(chunk, index, column, value))
        return ids

    def _outputs(self, chunk: Rows) -> list[str | None]:
        conv, rows, column = self.converter, chunk.rows, self._output
        raw: list[Any] = _column(rows, column, _ABSENT)
        if not set(map(type, raw)) <= _PLAIN_TEXT:
            for index, value in enumerate(raw):
                if type(value) is str or value is None:
                    continue
                if value is _ABSENT:
                    raise conv.missing_key(chunk, index, "output", column, rows[index])
                raw[index] = conv.text(chunk, index, "output", column, value)
        marker = conv.null_output
        if marker is not None:
            raw = [None if value == marker else value for value in raw]
        return raw

    def _answers(self, chunk: Rows) -> pa.Array:
        conv, rows, column = self.converter, chunk.rows, self._expected
        explicit = "expected" in conv.mapping
        if column not in self._present and not explicit:
            return pa.nulls(len(rows), _ANSWERS)
        raw: list[Any] = _column(rows, column, _ABSENT if explicit else None)
        if conv.answer_delimiter is None and set(map(type, raw)) <= _ANSWER_KINDS:
            # Texts and lists of texts at C speed: a text is a list of one answer, and blank
            # answers (and lists left empty) go as in the Arrow path.
            wrapped = [[value] if type(value) is str else value for value in raw]
            try:
                return kept_answers(pa.array(wrapped, _ANSWERS))
            except (pa.ArrowException, TypeError, ValueError):
                pass  # an element that is not a text: one row at a time below
        delimiter = conv.answer_delimiter
        out: list[list[str] | None] = []
        append = out.append
        for index, value in enumerate(raw):
            kind = type(value)
            if value is None:
                append(None)
            elif kind is str and delimiter is None:
                append([value] if value and not value.isspace() else None)
            elif kind is list and all(type(answer) is str for answer in value):
                kept = [answer for answer in value if answer and not answer.isspace()]
                append(kept or None)
            elif value is _ABSENT:
                raise conv.missing_key(chunk, index, "expected", column, rows[index])
            else:
                answers = conv.answers(chunk, index, column, value)
                append(list(answers) if answers else None)
        return pa.array(out, _ANSWERS)

    def _text_role(self, chunk: Rows, role: str) -> pa.Array:
        conv, rows = self.converter, chunk.rows
        column = conv.col[role]
        explicit = role in conv.mapping
        if column not in self._present and not explicit:
            return pa.nulls(len(rows), _STRING)
        raw: list[Any] = _column(rows, column, _ABSENT if explicit else None)
        kinds = set(map(type, raw))
        if kinds <= {_NONE}:
            return pa.nulls(len(rows), _STRING)
        if not kinds <= _PLAIN_TEXT:
            for index, value in enumerate(raw):
                if type(value) is str or value is None:
                    continue
                if value is _ABSENT:
                    raise conv.missing_key(chunk, index, role, column, rows[index])
                raw[index] = conv.text(chunk, index, role, column, value)
        return pa.array([value or None for value in raw], _STRING)

    def _attempts(self, chunk: Rows) -> pa.Array:
        conv, rows, column = self.converter, chunk.rows, self._attempt
        if column not in self._present:
            return pa.nulls(len(rows), pa.int64())
        raw = _column(rows, column, None)
        kinds = set(map(type, raw))
        if kinds <= {_NONE}:
            return pa.nulls(len(rows), pa.int64())
        attempts = [
            None if value is None else conv.attempt(chunk, index, column, value)
            for index, value in enumerate(raw)
        ]
        return pa.array(attempts, pa.int64())

    # -- everything else: metadata ----------------------------------------------------------

    def _metadata(self, chunk: Rows) -> pa.StructArray:
        conv, rows = self.converter, chunk.rows
        skip = self._not_metadata
        if conv.renamed:
            self._check_renamed(chunk)
        keys = _keys(rows, self._present)
        nested = "metadata" in keys and "metadata" not in skip
        if nested and any(isinstance(row.get("metadata"), Mapping) for row in rows):
            return self._merged_metadata(chunk)
        renamed = conv.renamed
        arrays: list[pa.Array] = []
        fields: list[pa.Field] = []
        for key in keys:
            if key in skip:
                continue
            array, is_json = metadata_column(_column(rows, key, None))
            arrays.append(array)
            name = renamed.get(key, key)
            fields.append(pa.field(name, array.type, metadata=JSON_FIELD if is_json else None))
        if not fields:
            return pa.array(repeat({}, len(rows)), pa.struct([]))
        return pa.StructArray.from_arrays(arrays, fields=fields)

    def _check_renamed(self, chunk: Rows) -> None:
        conv = self.converter
        roles = conv.role_columns
        for index, row in enumerate(chunk.rows):
            conv.rename(chunk, index, row, {k: v for k, v in row.items() if k not in roles})

    def _merged_metadata(self, chunk: Rows) -> pa.StructArray:
        """Metadata where some row nests a ``metadata`` object (items written by itemscore)."""
        skip, renamed = self._not_metadata, self.converter.renamed
        merged: list[dict[str, Any]] = []
        for row in chunk.rows:
            meta = {renamed.get(k, k): v for k, v in row.items() if k not in skip}
            nested = meta.get("metadata")
            if isinstance(nested, Mapping):
                del meta["metadata"]
                meta.update(nested)
            merged.append(meta)
        return metadata_array(merged)


def _column(rows: Sequence[dict[str, Any]], key: str, default: Any) -> list[Any]:
    """Each row's value of ``key`` (``default`` where it has none), in one C-level loop."""
    return list(map(dict.get, rows, repeat(key), repeat(default)))


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


def _reason(value: Any) -> str | None:
    return None if value is None else str(value)
