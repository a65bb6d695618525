r"""Outside data into items: one module per input format, all registered in :data:`REGISTRY`.

Adding a format means one new module in this folder and one line in ``_FORMATS`` below. A
module offers either

- a *rows* reader, ``read(path, name, *, chunk_size) -> RowSource``, whose rows are mappings
  from column name to value (a header when the format has one), produced chunk by chunk; or
- a *records* reader, ``read_x(path) -> Iterable[dict]``, whose dicts are keyed by role name
  (harness logs) and produced as the file is read; any other key goes to metadata.

Either way the rows go through the one converter (:mod:`._convert`, whose docstring gives the
rules), so every format treats ids, missing values, answers and metadata alike.

Every problem is an :class:`~itemscore.InputError` (or, for a bad option, a
:class:`~itemscore.ConfigError`) whose message starts with ``FILE:LINE:COLUMN:`` (``FILE:LINE:``
when no column applies, ``FILE: row N:`` for Parquet) and says how to fix it. A file with no
rows is an error in every format: an empty export is almost always a mistake, and scoring
nothing would write a report that looks like success. Lone surrogate escapes (``"\\ud800"``)
are refused at read: strict UTF-8 has no such character, so no report could be written.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from .._exceptions import ConfigError, InputError, OptionError, did_you_mean, one_of
from .._records import ItemResult
from ._convert import (
    ROLES,
    Converter,
    check_columns,
    check_unique_ids,
    is_missing,
    item_from_row,
    parse_column_map,
)
from ._source import DEFAULT_CHUNK_SIZE, Rows, RowSource, decode

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "FORMATS",
    "REGISTRY",
    "ROLES",
    "Converter",
    "InputFormat",
    "RowSource",
    "Rows",
    "check_columns",
    "check_unique_ids",
    "decode",
    "detect_format",
    "is_missing",
    "item_from_row",
    "iter_items",
    "parse_column_map",
    "read_items",
    "read_rows",
    "suite_rows",
    "to_items",
]


@attrs.frozen
class InputFormat:
    """One input format: its name, the extensions that imply it, and where its reader is."""

    #: The name ``format=`` and ``--format`` take.
    name: str
    #: File extensions (lower case, with the dot) read in this format when none is named.
    extensions: tuple[str, ...]
    #: ``"module:function"``: a module of this package (or, with a dot, any module), imported
    #: on first use so that start-up stays light.
    reader: str
    #: Whether the reader yields dicts keyed by role (``True``) or returns a RowSource.
    records: bool = False

    def load(self) -> Callable[..., Any]:
        """The reader function."""
        module, _, function = self.reader.partition(":")
        if "." not in module:
            module = f"{__name__}.{module}"
        loaded: Callable[..., Any] = getattr(importlib.import_module(module), function)
        return loaded


# One line per format. Formats named only explicitly (harness logs sharing .jsonl or .json)
# list no extension.
_FORMATS = (
    InputFormat("jsonl", (".jsonl", ".ndjson"), "jsonl:read"),
    InputFormat("json", (".json",), "json:read"),
    InputFormat("csv", (".csv",), "csv:read_csv"),
    InputFormat("tsv", (".tsv", ".tab"), "csv:read_tsv"),
    InputFormat("parquet", (".parquet", ".pq"), "parquet:read"),
    InputFormat("lm-eval", (), "lm_eval:read_lm_eval", records=True),
    InputFormat("inspect", (".eval",), "inspect_log:read_inspect", records=True),
    InputFormat("eee", (), "eee:read_eee", records=True),
)

#: Every input format, by name.
REGISTRY: Mapping[str, InputFormat] = {f.name: f for f in _FORMATS}
#: The names of the input formats.
FORMATS: tuple[str, ...] = tuple(REGISTRY)


def detect_format(path: str | os.PathLike[str], format: str | None = None) -> str:
    """The input format of ``path``: ``format`` when given, else from the file's extension.

    A ``.jsonl`` or ``.json`` file that holds a harness log (lm-eval, inspect_ai) by its
    content is read as one.

    ``format`` may also be an extension's name (``ndjson``, ``pq``).

    Raises:
        ConfigError: an unknown ``format``, or an extension that names no format.
    """
    if format is not None:
        name = format.lower().lstrip(".")
        if name in REGISTRY:
            return name
        for fmt in REGISTRY.values():
            if f".{name}" in fmt.extensions:
                return fmt.name
        raise ConfigError(
            f"The input format {format!r} is not one itemscore reads; use one of "
            f"{one_of(FORMATS)}.{did_you_mean(name, FORMATS)}"
        )
    suffix = Path(path).suffix.lower()
    for fmt in REGISTRY.values():
        if suffix in fmt.extensions:
            from ._sniff import sniff  # harness logs share .jsonl and .json with data files

            return sniff(path, fmt.name)
    raise ConfigError(
        f"Cannot tell the format of {os.fspath(path)} from its extension "
        f"{suffix or '(none)'!r}; name it with --format (one of {one_of(FORMATS)})."
    )


def read_rows(
    path: str | os.PathLike[str],
    format: str | None = None,
    *,
    name: str | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    **reader_options: Any,
) -> RowSource:
    """Open a data file: its header now, its rows (not yet turned into items) as iterated.

    Args:
        path: The file.
        format: One of :data:`FORMATS`; ``None``: from the extension.
        name: How to call the file in messages (default: ``path`` as given).
        chunk_size: Rows per chunk.
        reader_options: Options of the format's reader.

    Raises:
        ConfigError: an unknown format or reader option, or a missing optional dependency.
        InputError: the file is malformed (the message names the line and column).
        OSError: the file cannot be read.
    """
    fmt = REGISTRY[detect_format(path, format)]
    label = name if name is not None else os.fspath(path)
    if not isinstance(chunk_size, int) or chunk_size < 1:
        raise ConfigError(f"`chunk_size` ({chunk_size!r}) must be a whole number of at least 1.")
    import inspect  # only here: it costs start-up time of every command

    reader = fmt.load()
    accepted = [
        p.name
        for p in inspect.signature(reader).parameters.values()
        if p.kind is p.KEYWORD_ONLY and p.name != "chunk_size"
    ]
    for option in reader_options:
        if option not in accepted:
            raise OptionError(
                f"The {fmt.name} reader has no option {option!r}; "
                f"{'its options are ' + one_of(accepted) if accepted else 'it takes none'}."
                f"{did_you_mean(option, accepted)}",
                option=option,
                allowed=accepted,
            )
    if not fmt.records:
        source: RowSource = reader(Path(path), label, chunk_size=chunk_size, **reader_options)
        return source
    records = reader(Path(path), **reader_options)
    return RowSource(label, fmt.name, None, _record_chunks(label, records, chunk_size), "record")


def _record_chunks(label: str, records: Iterable[Any], chunk_size: int) -> Iterator[Rows]:
    """A records reader's records, ``chunk_size`` at a time, as they are read."""
    chunk: list[Any] = []
    first = 1
    for record in records:
        chunk.append(record)
        if len(chunk) == chunk_size:
            yield Rows(label, chunk, range(first, first + len(chunk)), "record")
            first += len(chunk)
            chunk = []
    if chunk:
        yield Rows(label, chunk, range(first, first + len(chunk)), "record")


def iter_items(
    path: str | os.PathLike[str],
    columns: Mapping[str, str] | None = None,
    format: str | None = None,
    *,
    answer_delimiter: str | None = None,
    null_output: str | None = None,
    name: str | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    **reader_options: Any,
) -> Iterator[list[ItemResult]]:
    """Read a data file as lists of at most ``chunk_size`` items, never holding it whole.

    Ids are checked for uniqueness (per model) across the whole file. The arguments are those
    of :func:`read_items`; the options are checked, and the header read, when the first chunk
    is asked for.

    Raises:
        ConfigError: an unknown format, role or reader option.
        InputError: the file is malformed or holds no rows; the message names the place.
    """
    converter = Converter(columns, answer_delimiter=answer_delimiter, null_output=null_output)
    source = read_rows(path, format, name=name, chunk_size=chunk_size, **reader_options)
    first_line = 1 if source.unit == "line" else None
    if source.columns is not None:
        converter.check_header(source.columns, source.name, first_line)
    chunks = iter(source)
    while True:
        chunk = next(chunks, None)
        if chunk is None:
            break
        yield converter.convert(chunk)
    if converter.count == 0:
        raise InputError.at(
            source.name,
            first_line,
            None,
            "the file is empty: it holds no rows to score. Check the path, or the export that "
            "wrote it.",
        )


def read_items(
    path: str | os.PathLike[str],
    columns: Mapping[str, str] | None = None,
    format: str | None = None,
    *,
    answer_delimiter: str | None = None,
    null_output: str | None = None,
    name: str | None = None,
    **reader_options: Any,
) -> list[ItemResult]:
    """Read a data file of model outputs into items.

    Args:
        path: The file: JSON lines, JSON (a list of objects), CSV, TSV, Parquet, or another
            registered format (:data:`FORMATS`).
        columns: Role -> column name, for columns not named like their role (roles:
            :data:`ROLES`).
        format: One of :data:`FORMATS`; ``None``: from the extension.
        answer_delimiter: Split each text ``expected`` cell into several answers.
        null_output: An output equal to this text is a failed request.
        name: How to call the file in messages.
        reader_options: Options of the format's reader.

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
        **reader_options,
    ):
        items += chunk
    return items


def suite_rows(raw: Any, columns: Mapping[str, str] | None = None) -> Any:
    """What ``run()`` hands to ``Suite.items``: ``raw`` itself, or items when it needs mapping.

    A DataFrame, or rows with a ``columns`` mapping, are first turned into items by the
    converter (which the default ``Suite.items`` passes through); other rows go as they are.
    """
    from .._frames import is_dataframe

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
    from .._frames import frame_source, is_dataframe

    if is_dataframe(data):
        converter = Converter(columns, **options)
        source = frame_source(data)
        assert source.columns is not None
        converter.check_header(source.columns, source.name, None)
        out: list[ItemResult] = []
        for chunk in source:
            out += converter.convert(chunk)
        return out
    rows = list(data)  # a copy: the caller's list may change after the run starts
    plain = columns is None and answer_delimiter is None and null_output is None
    if plain and set(map(type, rows)) <= {ItemResult}:
        check_unique_ids(rows)
        return rows
    return Converter(columns, **options).convert(Rows("", rows, range(1, len(rows) + 1), "row"))
