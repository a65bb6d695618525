"""Reading data files of model outputs into items: JSON lines, JSON, CSV/TSV and Parquet.

Every problem is an :class:`~itemscore.InputError` (or, for a bad option, a
:class:`~itemscore.ConfigError`) whose message starts with ``FILE:LINE:COLUMN:`` (or
``FILE:LINE:`` when no column applies, ``FILE: row N:`` for Parquet) and says how to fix it.

How cells become item fields (the same for every format):

- ``id``: a string, or a whole number (turned into text). Without an id column, an item's id is
  its row number (1 for the first data row). Ids must be unique per model: several models
  may answer the same questions.
- ``output``: text; a number or boolean becomes its JSON text (``3``, ``0.5``, ``true``). JSON
  ``null`` (a missing value in Parquet, NaN) is a failed request. A CSV cell has no null: an
  empty cell is an empty answer, and cells equal to the ``null_output`` marker are failed
  requests.
- ``expected``: text, or a list of texts (several valid answers). With ``answer_delimiter``, a
  text is split into several answers (each stripped, empty ones dropped). An empty cell, ``null``
  or an empty list means the row has no answer key.
- ``input``, ``group``, ``model``: text (numbers are turned into text); empty means none.
- Any other column goes to ``metadata`` unchanged (CSV cells stay text).

An object or list where text is expected is an error.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from ._exceptions import ConfigError, InputError, did_you_mean, one_of
from ._gc import gc_paused
from ._records import ItemResult

__all__ = [
    "FORMATS",
    "ROLES",
    "DataFile",
    "check_columns",
    "detect_format",
    "items_from_file",
    "parse_column_map",
    "read_file",
    "read_items",
]

#: The input formats, by the name ``--format`` takes.
FORMATS: tuple[str, ...] = ("jsonl", "json", "csv", "tsv", "parquet")
#: The item fields a column can be mapped to.
ROLES: tuple[str, ...] = ("id", "output", "expected", "input", "group", "model")

_EXTENSIONS = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
}
_CSV_FIELD_LIMIT = 2**31 - 1  # model outputs can be longer than csv's default 128 kB
_OPTIONAL_ROLES = ("expected", "input", "group", "model")


def detect_format(path: str | os.PathLike[str], format: str | None = None) -> str:
    """The input format of ``path``: ``format`` when given, else from the file's extension.

    Raises:
        ConfigError: an unknown ``format``, or an extension that names no format.
    """
    if format is not None:
        name = format.lower().lstrip(".")
        if name in FORMATS:
            return name
        if name == "ndjson":
            return "jsonl"
        raise ConfigError(
            f"The input format {format!r} is not one itemscore reads; use one of "
            f"{one_of(FORMATS)}.{did_you_mean(name, FORMATS)}"
        )
    suffix = Path(path).suffix.lower()
    found = _EXTENSIONS.get(suffix)
    if found is None:
        raise ConfigError(
            f"Cannot tell the format of {os.fspath(path)} from its extension "
            f"{suffix or '(none)'!r}; name it with --format (one of {one_of(FORMATS)})."
        )
    return found


def check_columns(columns: Mapping[str, str] | None) -> dict[str, str]:
    """Check a role -> column mapping; return it as a plain dict.

    Raises:
        ConfigError: an unknown role, or a column name that is not a non-empty string.
    """
    checked: dict[str, str] = {}
    for role, column in (columns or {}).items():
        if role not in ROLES:
            raise ConfigError(
                f"{role!r} is not a column role; roles are {one_of(ROLES)}."
                f"{did_you_mean(str(role), ROLES)}"
            )
        if not isinstance(column, str) or not column:
            raise ConfigError(
                f"The column mapped to role {role!r} must be a non-empty name, got {column!r}."
            )
        checked[role] = column
    return checked


# -- reading a file into rows --------------------------------------------------------------


@attrs.define
class DataFile:
    """The rows of one data file, with what is needed to say where each row came from."""

    #: The path as the user wrote it (used in messages).
    name: str
    #: One of :data:`FORMATS`.
    format: str
    #: The rows, as mappings from column name to value.
    rows: list[dict[str, Any]]
    #: The header (CSV, TSV, Parquet); ``None`` for JSON formats, whose rows carry their keys.
    columns: list[str] | None = None
    #: Per row: its first line in the file (CSV, JSON), or its row number (Parquet).
    lines: list[int] = attrs.field(factory=list)
    #: Per row of a JSON format: the character offsets where it starts and ends in ``text``.
    spans: list[tuple[int, int]] | None = None
    #: The decoded text of text formats (kept to find a key's column for messages).
    text: str | None = None

    def where(self, index: int, key: str | None = None) -> str:
        """``FILE:LINE:COLUMN`` of row ``index`` (and of ``key`` in it, when it can be found)."""
        if self.format == "parquet":
            return f"{self.name}: row {self.lines[index]}"
        line = self.lines[index]
        if self.format == "jsonl" and self.spans is None and self.text is not None:
            self.spans = _line_spans(self.text, self.lines)
        if self.spans is not None and self.text is not None:
            start, end = self.spans[index]
            offset = start
            if key is not None:
                found = self.text.find(json.dumps(key, ensure_ascii=False), start, end)
                if found >= 0:
                    offset = found
            line_start = self.text.rfind("\n", 0, offset) + 1
            line = self.text.count("\n", 0, offset) + 1
            return f"{self.name}:{line}:{offset - line_start + 1}"
        if key is not None:
            return f"{self.name}:{line}: column {key!r}"
        return f"{self.name}:{line}"


def _line_spans(text: str, lines: list[int]) -> list[tuple[int, int]]:
    """Start and end offsets of the given (1-based) lines of ``text``; only for messages."""
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    return [(starts[n - 1], starts[n] - 1) for n in lines]


def read_file(
    path: str | os.PathLike[str], format: str | None = None, *, name: str | None = None
) -> DataFile:
    """Read the rows of a data file, without interpreting them.

    Args:
        path: The file.
        format: One of :data:`FORMATS`; ``None``: from the extension.
        name: How to call the file in messages (default: ``path`` as given).

    Raises:
        ConfigError: an unknown format, or Parquet without pyarrow installed.
        InputError: the file is malformed (the message names the line and column).
        OSError: the file cannot be read.
    """
    fmt = detect_format(path, format)
    label = name if name is not None else os.fspath(path)
    if fmt == "parquet":
        return _read_parquet(Path(path), label)
    text = _decode(Path(path).read_bytes(), label)
    if fmt == "jsonl":
        return _read_jsonl(text, label)
    if fmt == "json":
        return _read_json(text, label)
    return _read_csv(text, label, delimiter="\t" if fmt == "tsv" else ",", fmt=fmt)


def _decode(data: bytes, name: str) -> str:
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        column = len(data[line_start : exc.start].decode("utf-8", errors="replace")) + 1
        raise InputError(
            f"{name}:{line}:{column}: the file is not valid UTF-8 (byte 0x{data[exc.start]:02x}). "
            "Save it as UTF-8 and try again."
        ) from None


def _read_jsonl(text: str, name: str) -> DataFile:
    raw_lines = text.split("\n")
    lines = [n for n, line in enumerate(raw_lines, 1) if line and not line.isspace()]
    body = [raw_lines[n - 1] for n in lines]
    # The fast path: one parse of all lines joined as a JSON list is twice as fast as one
    # parse per line. It stands only when every line is one object on its own (each starts
    # with "{" and ends with "}", and there are as many objects as lines); anything else goes
    # through the line-by-line parse, which names the line at fault.
    if all(line.lstrip()[0] == "{" and line.rstrip()[-1] == "}" for line in body):
        try:
            rows = json.loads("[" + ",".join(body) + "]")
        except json.JSONDecodeError:
            pass
        else:
            if len(rows) == len(body) and all(type(row) is dict for row in rows):
                return DataFile(name, "jsonl", rows, None, lines, None, text)
    rows = []
    loads = json.loads
    for lineno, line in zip(lines, body):
        try:
            row = loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"{name}:{lineno}:{exc.colno}: not valid JSON ({exc.msg}). Each line of a "
                "JSON lines file must be one complete JSON object."
            ) from None
        if type(row) is not dict:
            raise InputError(
                f"{name}:{lineno}:1: each line must be a JSON object ({{...}}), "
                f"not {_json_kind(row)}."
            )
        rows.append(row)
    return DataFile(name, "jsonl", rows, None, lines, None, text)


def _read_json(text: str, name: str) -> DataFile:
    decoder = json.JSONDecoder()
    rows: list[dict[str, Any]] = []
    spans: list[tuple[int, int]] = []

    def fail(pos: int, message: str) -> InputError:
        line = text.count("\n", 0, pos) + 1
        column = pos - (text.rfind("\n", 0, pos) + 1) + 1
        return InputError(f"{name}:{line}:{column}: {message}")

    def skip_space(pos: int) -> int:
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        return pos

    pos = skip_space(0)
    if pos >= len(text) or text[pos] != "[":
        raise fail(
            pos,
            "a JSON data file must hold a list of objects ([{...}, {...}]). "
            "For one object per line, name the file .jsonl or pass --format jsonl.",
        )
    pos = skip_space(pos + 1)
    if pos < len(text) and text[pos] == "]":
        pos += 1
    else:
        while True:
            try:
                row, end = decoder.raw_decode(text, pos)
            except json.JSONDecodeError as exc:
                raise InputError(
                    f"{name}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg})."
                ) from None
            if type(row) is not dict:
                raise fail(
                    pos, f"each element of the list must be an object, not {_json_kind(row)}."
                )
            rows.append(row)
            spans.append((pos, end))
            pos = skip_space(end)
            if pos < len(text) and text[pos] == ",":
                pos = skip_space(pos + 1)
                continue
            if pos < len(text) and text[pos] == "]":
                pos += 1
                break
            raise fail(pos, "not valid JSON (expected ',' or ']' after an element of the list).")
    pos = skip_space(pos)
    if pos < len(text):
        raise fail(pos, "not valid JSON (extra data after the list).")
    lines = [text.count("\n", 0, start) + 1 for start, _ in spans]
    return DataFile(name, "json", rows, None, lines, spans, text)


def _read_csv(text: str, name: str, *, delimiter: str, fmt: str) -> DataFile:
    if csv.field_size_limit() < _CSV_FIELD_LIMIT:
        csv.field_size_limit(_CSV_FIELD_LIMIT)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    header: list[str] | None = None
    header_line = 0
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    previous = 0
    while True:
        start = previous + 1
        try:
            fields = next(reader, None)
        except csv.Error as exc:
            raise InputError(
                f"{name}:{reader.line_num}: bad {fmt.upper()} quoting ({exc}). A field holding "
                f'quotes, delimiters or line breaks must be quoted, with inner quotes doubled ("").'
            ) from None
        if fields is None:
            break
        previous = reader.line_num
        if not fields:
            continue  # a blank line
        if header is None:
            header, header_line = _check_header(fields, name, start), start
            continue
        if len(fields) != len(header):
            raise InputError(
                f"{name}:{start}: the row has {len(fields)} fields, the header (line "
                f"{header_line}) has {len(header)}. Quote fields that contain "
                f"{'tabs' if delimiter == chr(9) else 'commas'}."
            )
        rows.append(dict(zip(header, fields)))
        lines.append(start)
    if header is None:
        raise InputError(f"{name}:1: the file is empty; the first line must be a header row.")
    return DataFile(name, fmt, rows, header, lines)


def _check_header(fields: list[str], name: str, line: int) -> list[str]:
    seen: set[str] = set()
    for index, field in enumerate(fields, 1):
        if not field.strip():
            raise InputError(f"{name}:{line}: header field {index} is empty; name every column.")
        if field in seen:
            raise InputError(
                f"{name}:{line}: the header names column {field!r} twice; column names must be "
                "unique."
            )
        seen.add(field)
    return fields


def _read_parquet(path: Path, name: str) -> DataFile:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError(
            f"Reading {name} needs pyarrow, which is not installed. "
            "Install it with: pip install 'itemscore[parquet]'"
        ) from None
    try:
        table = pq.read_table(path)
    except OSError:
        raise
    except Exception as exc:  # noqa: BLE001 - pyarrow raises its own types for bad files
        raise InputError(f"{name}: not a readable Parquet file ({exc}).") from None
    rows = table.to_pylist()
    return DataFile(name, "parquet", rows, list(table.column_names), list(range(1, len(rows) + 1)))


def _json_kind(value: object) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return f"a {type(value).__name__}"


# -- rows into items -----------------------------------------------------------------------


class _Missing:
    pass


_MISSING: Any = _Missing()


def items_from_file(
    data: DataFile,
    *,
    columns: Mapping[str, str] | None = None,
    answer_delimiter: str | None = None,
    null_output: str | None = None,
) -> list[ItemResult]:
    """Turn the rows of ``data`` into items (see the module docstring for the rules).

    Args:
        data: What :func:`read_file` returned.
        columns: Role -> column name; roles not named use the column named like the role.
        answer_delimiter: Split each text ``expected`` cell into several answers at this string.
        null_output: A cell of the output column equal to this text is a failed request.

    Raises:
        ConfigError: an unknown role or an empty delimiter.
        InputError: a missing column, a value of the wrong type, or a duplicate id.
    """
    mapping = check_columns(columns)
    if answer_delimiter is not None and not answer_delimiter:
        raise ConfigError("The answer delimiter must not be empty; omit it to keep answers whole.")
    col = {role: mapping.get(role, role) for role in ROLES}
    if data.columns is not None:
        _check_header_roles(data, mapping, col)
    has_id = "id" in mapping or data.columns is None or "id" in data.columns
    role_columns = frozenset(col.values())
    id_col, out_col, exp_col = col["id"], col["output"], col["expected"]
    in_col, group_col, model_col = col["input"], col["group"], col["model"]
    explicit_expected = "expected" in mapping
    explicit_id = "id" in mapping

    def optional(index: int, row: Mapping[str, Any], role: str, column: str) -> str | None:
        raw = row.get(column, _MISSING)
        if type(raw) is str:
            return raw or None
        if raw is None:
            return None
        if raw is _MISSING:
            if role in mapping:
                raise _missing_key(data, index, role, column, row)
            return None
        return _text(data, index, role, column, raw) or None

    items: list[ItemResult] = []
    first: dict[tuple[str | None, str], int] = {}
    for index, row in enumerate(data.rows):
        raw_id = row.get(id_col, _MISSING) if has_id else _MISSING
        if type(raw_id) is str and raw_id.strip():
            ident = raw_id
        elif raw_id is _MISSING:
            if explicit_id:
                raise _missing_key(data, index, "id", id_col, row)
            ident = str(index + 1)
        else:
            ident = _id_text(data, index, id_col, raw_id)
        raw_output = row.get(out_col, _MISSING)
        if type(raw_output) is str:
            output: str | None = None if raw_output == null_output else raw_output
        elif raw_output is None:
            output = None
        elif raw_output is _MISSING:
            raise _missing_key(data, index, "output", out_col, row)
        else:
            output = _text(data, index, "output", out_col, raw_output)
        raw_expected = row.get(exp_col, _MISSING)
        expected: tuple[str, ...] | None
        if type(raw_expected) is str and answer_delimiter is None:
            expected = (raw_expected,) if raw_expected.strip() else None
        elif raw_expected is _MISSING:
            if explicit_expected:
                raise _missing_key(data, index, "expected", exp_col, row)
            expected = None
        else:
            expected = _answers(data, index, exp_col, raw_expected, answer_delimiter)
        model = optional(index, row, "model", model_col)
        metadata = {k: v for k, v in row.items() if k not in role_columns}
        nested = metadata.get("metadata")
        if isinstance(nested, dict):  # items written by itemscore nest their metadata
            del metadata["metadata"]
            metadata.update(nested)
        seen = first.setdefault((model, ident), index)
        if seen != index:
            whose = f" for model {model!r}" if model is not None else ""
            raise InputError(
                f"{data.where(index, id_col if has_id else None)}: the id {ident!r} appears "
                f"twice{whose} (first at {_place(data, seen)}). Ids must be unique per model; "
                "fix the id column, or drop it to number the rows."
            )
        items.append(
            ItemResult(
                id=ident,
                output=output,
                expected=expected,
                input=optional(index, row, "input", in_col),
                group=optional(index, row, "group", group_col),
                model=model,
                metadata=metadata,
            )
        )
    return items


def _check_header_roles(data: DataFile, mapping: Mapping[str, str], col: Mapping[str, str]) -> None:
    assert data.columns is not None
    header = data.columns
    where = f"{data.name}:1" if data.format != "parquet" else data.name
    for role in ROLES:
        column = col[role]
        if column in header:
            continue
        if role in mapping:
            raise InputError(
                f"{where}: the file has no column {column!r} (mapped to {role!r} with "
                f"--map {role}={column}).{did_you_mean(column, header)} "
                f"Columns: {', '.join(header)}."
            )
        if role == "output":
            raise InputError(
                f"{where}: the file has no 'output' column.{did_you_mean('output', header)} "
                f"Name the column of model outputs with --map output=COLUMN (columns: "
                f"{', '.join(header)})."
            )


def _missing_key(
    data: DataFile, index: int, role: str, column: str, row: Mapping[str, Any]
) -> InputError:
    keys = list(row)
    hint = ' (a failed request is written "output": null)' if role == "output" else ""
    how = f" mapped to {role!r}" if column != role else ""
    return InputError(
        f"{data.where(index)}: the row has no {column!r} key{how}{hint}."
        f"{did_you_mean(column, keys)} Its keys: {', '.join(keys) or 'none'}."
    )


def _id_text(data: DataFile, index: int, column: str, raw: Any) -> str:
    if type(raw) is str:
        if raw.strip():
            return raw
        raise InputError(
            f"{data.where(index, column)}: the id is empty; every row needs an id "
            "(or drop the id column to number the rows)."
        )
    if isinstance(raw, int) and not isinstance(raw, bool):
        return str(raw)
    raise InputError(
        f"{data.where(index, column)}: the id {raw!r} is {_json_kind(raw)}; "
        "an id must be a string or a whole number."
    )


def _text(data: DataFile, index: int, role: str, column: str, raw: Any) -> str | None:
    if type(raw) is str:
        return raw
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, int):
        return str(raw)
    if isinstance(raw, float):
        return None if math.isnan(raw) else json.dumps(raw)
    how = f" (role {role!r})" if column != role else ""
    raise InputError(
        f"{data.where(index, column)}: {column!r}{how} must be text, a number or null, "
        f"not {_json_kind(raw)}."
        + (" Several valid answers belong in `expected`." if role == "output" else "")
    )


def _answers(
    data: DataFile, index: int, column: str, raw: Any, delimiter: str | None
) -> tuple[str, ...] | None:
    if raw is None:
        return None
    if type(raw) is list and all(type(answer) is str for answer in raw):
        return tuple(answer for answer in raw if answer and not answer.isspace()) or None
    if isinstance(raw, (list, tuple)):
        answers: list[str] = []
        for answer in raw:
            if isinstance(answer, (dict, list, tuple)) or answer is None:
                raise InputError(
                    f"{data.where(index, column)}: the answers in {column!r} must be texts, "
                    f"found {_json_kind(answer)}."
                )
            text = _text(data, index, "expected", column, answer)
            if text is not None and text.strip():
                answers.append(text)
        return tuple(answers) or None
    if isinstance(raw, dict):
        raise InputError(
            f"{data.where(index, column)}: {column!r} must be text, a list of texts or null, "
            "not an object."
        )
    text = _text(data, index, "expected", column, raw)
    if text is None or not text.strip():
        return None
    if delimiter is not None:
        parts = tuple(part.strip() for part in text.split(delimiter))
        return tuple(part for part in parts if part) or None
    return (text,)


def _place(data: DataFile, index: int) -> str:
    return f"{'row' if data.format == 'parquet' else 'line'} {data.lines[index]}"


def read_items(
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
    columns: Mapping[str, str] | None = None,
    answer_delimiter: str | None = None,
    null_output: str | None = None,
    name: str | None = None,
) -> list[ItemResult]:
    """Read a data file of model outputs into items.

    Args:
        path: The file (JSON lines, JSON list of objects, CSV, TSV or Parquet).
        format: One of :data:`FORMATS`; ``None``: from the extension.
        columns: Role -> column name (roles: :data:`ROLES`).
        answer_delimiter: Split each text ``expected`` cell into several answers.
        null_output: A cell of the output column equal to this text is a failed request.
        name: How to call the file in messages.

    Raises:
        ConfigError: an unknown format or role.
        InputError: the file is malformed; the message names the file, line and column.
    """
    with gc_paused():
        data = read_file(path, format, name=name)
        return items_from_file(
            data, columns=columns, answer_delimiter=answer_delimiter, null_output=null_output
        )


def parse_column_map(pairs: Iterable[str]) -> dict[str, str]:
    """``["output=response", ...]`` -> ``{"output": "response"}``.

    Raises:
        ConfigError: a pair without ``=``, an unknown role, or a role mapped twice.
    """
    mapping: dict[str, str] = {}
    for pair in pairs:
        role, sep, column = pair.partition("=")
        role, column = role.strip(), column.strip()
        if not sep or not role or not column:
            raise ConfigError(
                f"--map {pair!r} must be ROLE=COLUMN, e.g. --map output=response "
                f"(roles: {', '.join(ROLES)})."
            )
        if role in mapping:
            raise ConfigError(
                f"--map names role {role!r} twice ({mapping[role]!r} and {column!r}); "
                "map each role once."
            )
        try:
            check_columns({role: column})
        except ConfigError as exc:
            raise ConfigError(f"--map {pair!r}: {exc}") from None
        mapping[role] = column
    return mapping
