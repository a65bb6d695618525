r"""Outside data into items: one module per input format, all registered in :data:`REGISTRY`.

The flow: a file (or a list, a glob, a folder of files) is opened as a *source*
(:func:`open_source`); its *parts* (:meth:`Source.parts`, or :meth:`Source.whole`) are read,
in a worker or in the driver, by a :class:`PartReader` into canonical Arrow batches
(:mod:`itemscore._schema`); the key columns of every part go through the whole-source checks
(:class:`SourceChecks`: unique ids, an answer key somewhere, any rows at all). Adding a format
means one new module in this folder and one line in ``_FORMATS`` (:mod:`._formats`, which says
what a format's module offers). Harness logs are *records* readers, ``read_x(path) -> list or
iterator of dicts`` keyed by role; any other key goes to metadata.

Every format follows the converter's rules (:mod:`._convert`, whose docstring gives them), so
ids, missing values, answers and metadata are treated alike. One builder (:mod:`._vector`)
makes every role column, Arrow first: a column whose type makes the outcome certain is
converted with ``pyarrow.compute`` (from the table pyarrow parsed, or from rows read in Python
and from Python); any other goes through the converter's rule for one value, which also words
every error.

Every problem is an :class:`~itemscore.InputError` (or, for a bad option, a
:class:`~itemscore.ConfigError`) whose message starts with ``FILE:LINE:COLUMN:`` (``FILE:LINE:``
when no column applies, ``FILE: row N:`` for Parquet) and says how to fix it; names from the
file (keys, headers) are shown escaped. A file with no rows is an error in every format: an
empty export is almost always a mistake, and scoring nothing would write a report that looks
like success. Lone surrogate escapes (``"\\ud800"``) are refused at read: strict UTF-8 has no
such character, so no report could be written. Every read is bounded (:mod:`._bounds`).

:func:`read_items`, :func:`iter_items` and :func:`read_rows` are the simpler ways in: items
(or rows) of a source read whole, in the driver.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .._records import ItemResult
from .._schema import Unreadable
from ._bounds import DEFAULT_LIMITS, Limits
from ._checks import SourceChecks, answer_key_error, key_columns
from ._convert import (
    MAPPABLE,
    METADATA_ROLES,
    ROLES,
    Converter,
    check_columns,
    check_unique_ids,
    is_missing,
    item_from_row,
    parse_column_map,
)
from ._formats import FORMATS, REGISTRY, InputFormat, detect_format
from ._read import (
    DEFAULT_BATCH_ROWS,
    Part,
    PartReader,
    PieceRead,
    Source,
    check_rows,
    open_source,
    read_part,
    source_name,
)
from ._source import DEFAULT_CHUNK_SIZE, Rows, RowSource, decode
from ._vector import collector_paused, rows_to_items

__all__ = [
    "DEFAULT_BATCH_ROWS",
    "DEFAULT_CHUNK_SIZE",
    "DEFAULT_LIMITS",
    "FORMATS",
    "MAPPABLE",
    "METADATA_ROLES",
    "REGISTRY",
    "ROLES",
    "Converter",
    "InputFormat",
    "Limits",
    "Part",
    "PartReader",
    "RowSource",
    "Rows",
    "Source",
    "SourceChecks",
    "answer_key_error",
    "check_columns",
    "check_unique_ids",
    "collector_paused",
    "decode",
    "detect_format",
    "is_missing",
    "item_from_row",
    "iter_items",
    "key_columns",
    "open_source",
    "parse_column_map",
    "read_items",
    "read_part",
    "read_rows",
    "suite_rows",
    "to_items",
]

Paths = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


def read_rows(
    path: Paths,
    format: str | None = None,
    *,
    name: str | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    **reader_options: Any,
) -> RowSource:
    """Open a data source: its rows (not yet turned into items) as iterated.

    Args:
        path: The file (or a list, glob or folder of files).
        format: One of :data:`FORMATS`; ``None``: from the extension.
        name: How to call the file in messages (default: ``path`` as given).
        chunk_size: Rows per chunk.
        reader_options: Options of the format's reader.

    Raises:
        ConfigError: an unknown format or reader option.
        InputError: the file is malformed (the message names the line and column).
        OSError: the file cannot be read.
    """
    check_rows("chunk_size", chunk_size)
    source = open_source(path, format, name=name, batch_rows=chunk_size, **reader_options)
    return RowSource(source.name, source.format, None, _rows(source), unit=source.unit)


def _rows(source: Source) -> Iterator[Rows]:
    try:
        row = 1
        for piece in source.whole().pieces:
            state = PieceRead(piece, row)
            try:
                for chunk in REGISTRY[piece.format].module().rows(piece, source.settings, state):
                    yield chunk
                    row += len(chunk.rows)
            finally:
                state.close()
            state.finish()
    finally:
        source.close()


def iter_items(
    path: Paths,
    columns: Mapping[str, str] | None = None,
    format: str | None = None,
    *,
    answer_delimiter: str | None = None,
    null_output: str | None = None,
    name: str | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    **reader_options: Any,
) -> Iterator[list[ItemResult]]:
    """Read a data source as lists of at most ``chunk_size`` items, never holding it whole.

    Ids are checked for uniqueness (per model and attempt) across the whole source, after the
    last chunk. The arguments are those of :func:`read_items`; the options are checked when
    the first chunk is asked for.

    Raises:
        ConfigError: an unknown format, role or reader option.
        InputError: the file is malformed or holds no rows; the message names the place.
    """
    from .._schema import batch_to_items

    check_rows("chunk_size", chunk_size)
    source = open_source(
        path,
        format,
        columns=columns,
        answer_delimiter=answer_delimiter,
        null_output=null_output,
        name=name,
        batch_rows=chunk_size,
        **reader_options,
    )
    with source:
        reader = read_part(source.whole())
        for batch in reader.batches():
            with collector_paused():  # bulk construction of acyclic records
                items = batch_to_items(batch)
            yield items
        checks = source.checks()
        checks.add(reader.keys())
        checks.finish()


def read_items(
    path: Paths,
    columns: Mapping[str, str] | None = None,
    format: str | None = None,
    *,
    answer_delimiter: str | None = None,
    null_output: str | None = None,
    name: str | None = None,
    **reader_options: Any,
) -> list[ItemResult]:
    """Read a data source of model outputs into items.

    Args:
        path: The file: JSON lines, JSON (a list of objects), CSV, TSV, Parquet, or another
            registered format (:data:`FORMATS`); or a list of files, a glob
            (``"runs/*.jsonl"``) or a folder of them.
        columns: Role -> column name, for columns not named like their role (roles:
            :data:`MAPPABLE`).
        format: One of :data:`FORMATS`; ``None``: from the extension.
        answer_delimiter: Split each text ``expected`` cell into several answers.
        null_output: An output equal to this text is a failed request.
        name: How to call the file in messages.
        reader_options: Options of the format's reader, and the bounds ``max_line_bytes``,
            ``max_json_bytes`` (:class:`Limits`).

    Raises:
        ConfigError: an unknown format, role or reader option.
        InputError: the file is malformed or holds no rows; the message names the file, line
            and column.
    """
    items: list[ItemResult] = []
    for chunk in iter_items(
        path,
        columns,
        format,
        answer_delimiter=answer_delimiter,
        null_output=null_output,
        name=name,
        chunk_size=DEFAULT_BATCH_ROWS,
        **reader_options,
    ):
        items += chunk
    _warn_unreadable(items, name or source_name(path))
    return items


def _warn_unreadable(items: Sequence[ItemResult], name: str) -> None:
    """Say how many documents a harness reader could not read: items that will be errors."""
    reasons = [r for item in items if isinstance(r := item.metadata.get("error"), Unreadable)]
    if reasons:
        warnings.warn(
            f"{name}: {len(reasons)} of {len(items)} documents could not be read; each is "
            f"scored error for every metric. The first: {reasons[0]}",
            UserWarning,
            stacklevel=3,
        )


def suite_rows(raw: Any, columns: Mapping[str, str] | None = None) -> Any:
    """What ``run()`` hands to ``Suite.items``: ``raw`` itself, or items when it needs mapping.

    A DataFrame, or rows with a ``columns`` mapping, are first turned into items by the
    converter (which the default ``Suite.items`` passes through); other rows go as they are.
    """
    from ._dataframe import is_dataframe

    if columns is not None or is_dataframe(raw):
        return to_items(raw, columns)
    return raw


def to_items(
    data: Any,
    columns: Mapping[str, str] | None = None,
    *,
    answer_delimiter: str | None = None,
    null_output: str | None = None,
) -> list[ItemResult]:
    """Items from ItemResults, mappings keyed by column, or a pandas DataFrame.

    The rows follow the same rules as a file's (see :mod:`itemscore.inputs._convert`):
    ``columns`` maps roles to column names, NaN and ``None`` mean missing, other columns go to
    metadata. ItemResult objects are taken as they are. Ids are checked to be unique per model.
    Text from Python is taken as it is, lone surrogates included (files refuse them, since no
    UTF-8 file can hold them; the report writers escape them).

    Raises:
        ConfigError: an unknown role.
        InputError: a row that is not a mapping, a value of the wrong type, or a duplicate id.
    """
    options = {"answer_delimiter": answer_delimiter, "null_output": null_output}
    from ._dataframe import frame_source, is_dataframe

    if is_dataframe(data):
        converter = Converter(columns, **options)
        source = frame_source(data)
        assert source.columns is not None
        converter.check_header(source.columns, source.name, None)
        out: list[ItemResult] = []
        with collector_paused():
            for chunk in source:
                out += rows_to_items(converter, chunk)
        return out
    rows = list(data)  # a copy: the caller's list may change after the run starts
    plain = columns is None and answer_delimiter is None and null_output is None
    if plain and set(map(type, rows)) <= {ItemResult}:
        check_unique_ids(rows)
        return rows
    with collector_paused():
        chunk = Rows("", rows, range(1, len(rows) + 1), "row")
        return rows_to_items(Converter(columns, **options), chunk)
