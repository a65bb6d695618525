"""Rows into items: the one converter behind files, suites, dicts and DataFrames.

The roles a column can fill are :class:`~itemscore.ItemResult`'s fields (but ``metadata`` and
``scores``), so a field added there is a role here without another edit. The rules, the same
for every source:

- **Missing**: ``None``, NaN, pandas ``NA``/``NaT`` all mean a missing value.
- ``id``: a non-empty string, or a whole number (``7`` and ``7.0`` become ``"7"``). A row without
  the id column gets its row number (1 for the first row); a missing or empty id where the column
  exists is an error, and so is a boolean (shown as JSON ``true``). Ids are unique per model.
- ``output``: text. A number or boolean becomes its JSON text (``3``, ``0.5``, ``true``); a
  missing value is a failed request (``None``); so is text equal to the ``null_output`` marker.
- ``expected``: text, or a list of texts (several valid answers; missing and blank ones
  dropped). With ``answer_delimiter`` a text is split into several answers. Missing, blank or an
  empty list: the row has no answer key.
- Every other role (``input``, ``group``, ``model``, ...): text (numbers become text); missing
  or empty means none.
- Any other column goes to ``metadata`` unchanged, missing values as ``None``; a nested
  ``metadata`` mapping (items written by itemscore) is merged into it.

An object or a list where text is expected is an error naming the row (and, for files, the
line and column).

Here each rule is written for one value (:meth:`Converter.id_of`, :meth:`~Converter.output_of`
...), with every message about a row: they are the reference. :mod:`._vector` builds whole
columns, vectorised where a column's type makes the outcome certain, and through these rules
for any other column.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from .._exceptions import ConfigError, InputError, did_you_mean, one_of
from .._records import ItemResult
from ._source import Rows, escape_name, json_kind, show

__all__ = [
    "MAPPABLE",
    "METADATA_ROLES",
    "ROLES",
    "Converter",
    "check_columns",
    "check_unique_ids",
    "is_missing",
    "item_from_row",
    "parse_column_map",
]

_NOT_ROLES = frozenset({"metadata", "scores"})
#: The item fields a column can be mapped to, in ItemResult's order.
ROLES: tuple[str, ...] = tuple(f.name for f in attrs.fields(ItemResult) if f.name not in _NOT_ROLES)
#: Roles kept in metadata under their own name: ``--map choices=options`` reads the column
#: ``options`` into ``metadata["choices"]`` (multiple-choice metrics and calibration read them).
METADATA_ROLES: tuple[str, ...] = ("choices", "confidence")
#: Everything ``--map`` (``columns=``) can name.
MAPPABLE: tuple[str, ...] = (*ROLES, *METADATA_ROLES)
_SPECIAL = ("id", "output", "expected", "attempt")
#: Roles that hold one optional text (input, group, model, ...).
TEXT_ROLES: tuple[str, ...] = tuple(role for role in ROLES if role not in _SPECIAL)


#: What ``row.get(column, _ABSENT)`` gives for a key the row lacks (``None`` is a value).
_ABSENT: Any = object()


def is_missing(value: Any) -> bool:
    """Whether ``value`` means "no value": ``None``, NaN, pandas ``NA`` or ``NaT``."""
    if value is None:
        return True
    kind = type(value)
    if kind is str or kind is int or kind is bool:
        return False
    if kind is float:
        return bool(value != value)
    if kind.__name__ in ("NAType", "NaTType") and kind.__module__.startswith("pandas"):
        return True
    if isinstance(value, float):  # numpy.float64 and friends
        return math.isnan(value)
    return False


def check_columns(columns: Mapping[str, str] | None) -> dict[str, str]:
    """Check a role -> column mapping; return it as a plain dict.

    Raises:
        ConfigError: an unknown role, or a column name that is not a non-empty string.
    """
    checked: dict[str, str] = {}
    for role, column in (columns or {}).items():
        if role not in MAPPABLE:
            raise ConfigError(
                f"{role!r} is not a column role; roles are {one_of(MAPPABLE)}."
                f"{did_you_mean(str(role), MAPPABLE)}"
            )
        if not isinstance(column, str) or not column:
            raise ConfigError(
                f"The column mapped to role {role!r} must be a non-empty name, got {column!r}."
            )
        checked[role] = column
    return checked


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
                f"(roles: {', '.join(MAPPABLE)})."
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


class Converter:
    """Turns rows into items, chunk after chunk, checking ids across every chunk.

    Args:
        columns: Role -> column name; roles not named use the column named like the role.
        answer_delimiter: Split each text ``expected`` into several answers at this string.
        null_output: An output equal to this text is a failed request.

    Raises:
        ConfigError: an unknown role or an empty delimiter.
    """

    def __init__(
        self,
        columns: Mapping[str, str] | None = None,
        *,
        answer_delimiter: str | None = None,
        null_output: str | None = None,
    ) -> None:
        self.mapping = check_columns(columns)
        if answer_delimiter is not None and not answer_delimiter:
            raise ConfigError(
                "The answer delimiter must not be empty; omit it to keep answers whole."
            )
        self.answer_delimiter = answer_delimiter
        self.null_output = null_output
        self.col = {role: self.mapping.get(role, role) for role in ROLES}
        #: Column -> metadata role, for the metadata roles mapped to another column.
        self.renamed = {
            self.mapping[role]: role
            for role in METADATA_ROLES
            if role in self.mapping and self.mapping[role] != role
        }
        self.role_columns = frozenset(self.col.values())
        self.header: Sequence[str] | None = None
        #: Rows converted so far: the next row without an id is numbered ``count + 1``.
        self.count = 0
        #: Per model, each id seen and the place (line or row) it was first seen at.
        self.seen: dict[str | None, dict[Any, int]] = {}

    def check_header(self, header: Sequence[str], name: str, line: int | None) -> None:
        """Check that the header of a tabular source has every mapped column, and an output.

        ``name`` and ``line`` say where the header is (``line`` is ``None`` where the source
        has no lines: Parquet, DataFrames).

        Raises:
            InputError: a mapped column the header lacks, or no output column.
        """
        self.header = header
        present = set(header)
        shown = ", ".join(map(escape_name, header))
        for role in MAPPABLE:
            column = self.col.get(role, self.mapping.get(role, role))
            if column in present:
                continue
            if role in self.mapping:
                error = InputError.at(
                    name,
                    line,
                    None,
                    f"the file has no column {column!r} (mapped to {role!r})."
                    f"{did_you_mean(column, header)} Columns: {shown}.",
                )
                error.at_entry(f"columns.{role}")  # callers say where the mapping was written
                raise error
            if role == "output":
                raise InputError.at(
                    name,
                    line,
                    None,
                    f"the file has no 'output' column.{did_you_mean('output', header)} "
                    f"Name the column of model outputs with --map output=COLUMN (columns: "
                    f"{shown}).",
                )
        for column, role in self.renamed.items():
            if role in present:
                raise InputError.at(
                    name,
                    line,
                    None,
                    f"the file has both a {role!r} column and the column "
                    f"{column!r} mapped to {role!r}; rename one of them.",
                )

    def convert(self, chunk: Rows) -> list[ItemResult]:
        """The items of one chunk of rows, in order, one row at a time.

        Rows may mix mappings and ``ItemResult`` objects. Chunks of plain rows are turned into
        items column by column (:func:`~itemscore.inputs._vector.rows_to_items`), which comes
        here only to word the first error in row order.

        Raises:
            InputError: a missing column, a value of the wrong type, or a duplicate id.
        """
        items: list[ItemResult] = []
        for index, row in enumerate(chunk.rows):
            if not isinstance(row, ItemResult):
                if not isinstance(row, Mapping):
                    raise _error(
                        chunk,
                        index,
                        f"the row is {_a(row)}; rows must be mappings (dicts) or ItemResult "
                        "objects.",
                    )
                row = self.item(chunk, index, dict(row) if type(row) is not dict else row)
            self.register(chunk, (row,), index)
            items.append(row)
        self.count += len(chunk.rows)
        return items

    def item(self, chunk: Rows, index: int, row: dict[str, Any]) -> ItemResult:
        """The item of one row, each role's rule in turn (the first broken one raises)."""
        ident = self.id_of(chunk, index, row, self.count + index + 1)
        output = self.output_of(chunk, index, row)
        expected = self.answers_of(chunk, index, row)
        fields: dict[str, Any] = {
            role: self.text_of(chunk, index, row, role) for role in TEXT_ROLES
        }
        attempt = self.attempt_of(chunk, index, row)
        metadata = self.metadata_of(chunk, index, row)
        return ItemResult(
            id=ident, output=output, expected=expected, attempt=attempt, metadata=metadata, **fields
        )

    def register(self, chunk: Rows, items: Iterable[ItemResult], first: int = 0) -> None:
        """Note the ids of ``items`` (rows ``first``, ``first + 1``... of ``chunk``).

        Raises:
            InputError: an id seen before for the same model (and attempt).
        """
        has_id = "id" in self.mapping or self.header is None or self.col["id"] in self.header
        seen, lines = self.seen, chunk.lines
        last_model: Any = _ABSENT
        ids: dict[Any, int] = {}
        for index, item in enumerate(items, first):
            model, ident, attempt = item.model, item.id, item.attempt
            if model is not last_model:
                last_model = model
                ids = seen.get(model) or seen.setdefault(model, {})
            size = len(ids)
            ids.setdefault(ident if attempt is None else (ident, attempt), lines[index])
            if len(ids) == size:
                before = ids[ident if attempt is None else (ident, attempt)]
                whose = f" for model {model!r}" if model is not None else ""
                if attempt is not None:
                    whose = f" with attempt {attempt}{whose}"
                hint = " Fix the id column, or drop it to number the rows." if chunk.name else ""
                raise _error(
                    chunk,
                    index,
                    f"the id {ident!r} appears twice{whose} (first at {chunk.unit} {before}). "
                    f"Ids must be unique per model.{hint}",
                    self.col["id"] if has_id else None,
                )

    # -- the rules, one value at a time -----------------------------------------------------
    #
    # Each takes a row (a dict) and gives what its role holds. The vectorised rules
    # (:mod:`._vector`) take whole columns where the values make the outcome certain and come
    # here for every other column, and for every error.

    def id_of(self, chunk: Rows, index: int, row: Mapping[str, Any], number: int) -> str:
        """The row's id: a non-blank text, a whole number as text, or ``number`` when absent.

        Raises:
            InputError: a missing mapped id column, an empty id, a boolean, a fraction or any
                other value.
        """
        column = self.col["id"]
        raw = row.get(column, _ABSENT)
        if type(raw) is str and raw and not raw.isspace():
            return raw
        if raw is _ABSENT:
            if "id" in self.mapping:
                raise self.missing_key(chunk, index, "id", column, row)
            return str(number)
        if type(raw) is str or is_missing(raw):
            raise _error(
                chunk,
                index,
                "the id is empty; every row needs an id (or drop the id column to number the "
                "rows).",
                column,
            )
        raw = _native(raw)
        if isinstance(raw, float) and raw.is_integer():
            raw = int(raw)
        if isinstance(raw, int) and not isinstance(raw, bool):
            try:
                return str(raw)
            except ValueError:  # more digits than Python turns into text
                raise _error(
                    chunk,
                    index,
                    "the id is a whole number too long to turn into text; write long ids as "
                    "strings.",
                    column,
                ) from None
        raise _error(
            chunk,
            index,
            f"the id {show(raw)} is {json_kind(raw)}; an id must be a string or a whole number.",
            column,
        )

    def output_of(self, chunk: Rows, index: int, row: Mapping[str, Any]) -> str | None:
        """The row's output (``None``: a failed request, or the ``null_output`` marker).

        Raises:
            InputError: no output key, or a value that is not text, a number or null.
        """
        column = self.col["output"]
        raw = row.get(column, _ABSENT)
        if raw is _ABSENT:
            raise self.missing_key(chunk, index, "output", column, row)
        output = self.text(chunk, index, "output", column, raw)
        return None if output is not None and output == self.null_output else output

    def text_of(self, chunk: Rows, index: int, row: Mapping[str, Any], role: str) -> str | None:
        """The row's text for ``role`` (input, group, ...): ``None`` when missing or empty.

        Raises:
            InputError: a missing mapped column, or a value that is not text, a number or null.
        """
        column = self.col[role]
        raw = row.get(column, _ABSENT)
        if raw is _ABSENT:
            if role in self.mapping:
                raise self.missing_key(chunk, index, role, column, row)
            return None
        return self.text(chunk, index, role, column, raw) or None

    def answers_of(self, chunk: Rows, index: int, row: Mapping[str, Any]) -> tuple[str, ...] | None:
        """The row's valid answers (``None``: no answer key), by the rules above.

        Raises:
            InputError: a missing mapped column, an object, or a list holding objects or lists.
        """
        column = self.col["expected"]
        raw = row.get(column, _ABSENT)
        if raw is _ABSENT:
            if "expected" in self.mapping:
                raise self.missing_key(chunk, index, "expected", column, row)
            return None
        if is_missing(raw):
            return None
        if hasattr(raw, "tolist") and not isinstance(raw, (str, bytes)):
            raw = raw.tolist()  # a numpy array: a Parquet list column read through pandas
        if isinstance(raw, (list, tuple)):
            answers: list[str] = []
            for answer in raw:
                if isinstance(answer, (dict, list, tuple)):
                    raise _error(
                        chunk,
                        index,
                        f"the answers in {column!r} must be texts, found {json_kind(answer)}.",
                        column,
                    )
                text = self.text(chunk, index, "expected", column, answer)
                if text is not None and text.strip():
                    answers.append(text)
            return tuple(answers) or None
        if isinstance(raw, Mapping):
            raise _error(
                chunk,
                index,
                f"{column!r} must be text, a list of texts or null, not an object.",
                column,
            )
        text = self.text(chunk, index, "expected", column, raw)
        if text is None or not text.strip():
            return None
        if self.answer_delimiter is not None:
            parts = tuple(part.strip() for part in text.split(self.answer_delimiter))
            return tuple(part for part in parts if part) or None
        return (text,)

    def attempt_of(self, chunk: Rows, index: int, row: Mapping[str, Any]) -> int | None:
        """The row's attempt (a whole number of at least 0, or its text), or ``None``.

        Raises:
            InputError: anything else.
        """
        column = self.col["attempt"]
        raw = row.get(column)
        if is_missing(raw):
            return None
        raw = _native(raw)
        if isinstance(raw, float) and raw.is_integer():
            raw = int(raw)
        if type(raw) is str and raw.strip().isdecimal():
            raw = int(raw.strip())
        if type(raw) is int and 0 <= raw < 2**63:
            return raw
        raise _error(
            chunk,
            index,
            f"the attempt {show(raw)} is {json_kind(raw)}; an attempt must be a whole number "
            "of at least 0 and below 2**63 (or missing).",
            column,
        )

    def metadata_of(self, chunk: Rows, index: int, row: Mapping[str, Any]) -> dict[str, Any]:
        """The row's metadata: every other column, a mapped metadata role under its name.

        Raises:
            InputError: the row lacks a mapped metadata role's column, or has a column named
                like the role as well (one of the two would be lost).
        """
        roles = self.role_columns
        metadata = {k: v for k, v in row.items() if k not in roles}
        if self.renamed:
            for column, role in self.renamed.items():
                if column not in metadata:
                    raise self.missing_key(chunk, index, role, column, row)
                if role in metadata:
                    raise _error(
                        chunk,
                        index,
                        f"the row has both a {role!r} column and the column {column!r} "
                        f"mapped to {role!r}; rename one of them.",
                        role,
                    )
            metadata = {self.renamed.get(k, k): v for k, v in metadata.items()}
        return _clean(metadata) if metadata else metadata

    def text(self, chunk: Rows, index: int, role: str, column: str, raw: Any) -> str | None:
        """``raw`` as the text of ``role``: numbers and booleans as their JSON text.

        Raises:
            InputError: an object, a list or another value that is not text.
        """
        if type(raw) is str:
            return raw
        if is_missing(raw):
            return None
        raw = _native(raw)
        if isinstance(raw, bool):
            return "true" if raw else "false"
        if isinstance(raw, int):
            try:
                return str(raw)
            except ValueError:
                raise _error(
                    chunk,
                    index,
                    f"{column!r} is a whole number too long to turn into text; write it as a "
                    "string.",
                    column,
                ) from None
        if isinstance(raw, float):
            return json.dumps(raw)
        if isinstance(raw, str):
            return str(raw)
        how = f" (role {role!r})" if column != role else ""
        raise _error(
            chunk,
            index,
            f"{column!r}{how} must be text, a number or null, not {json_kind(raw)}."
            + (" Several valid answers belong in `expected`." if role == "output" else ""),
            column,
        )

    def missing_key(
        self, chunk: Rows, index: int, role: str, column: str, row: Mapping[str, Any]
    ) -> InputError:
        """The error for a row of a JSON format that lacks the key of a role it must have."""
        keys = [str(key) for key in row]
        hint = ' (a failed request is written "output": null)' if role == "output" else ""
        how = f" mapped to {role!r}" if column != role else ""
        error = _error(
            chunk,
            index,
            f"the row has no {column!r} key{how}{hint}.{did_you_mean(column, keys)} Its keys: "
            f"{', '.join(map(escape_name, keys)) or 'none'}.",
        )
        if column != role:
            error.at_entry(f"columns.{role}")  # callers say where the mapping was written
        return error


def _error(chunk: Rows, index: int, message: str, key: str | None = None) -> InputError:
    """The error ``message`` about row ``index`` of ``chunk`` (about ``key`` in it), placed."""
    path, line, column = chunk.position(index, key)
    where = chunk.where(index, key)
    return InputError(f"{where}: {message}", path=path, line=line, column=column)


def _native(value: Any) -> Any:
    """A numpy scalar as the Python number it holds; anything else unchanged."""
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        return value.item()
    return value


def _clean(metadata: dict[str, Any]) -> dict[str, Any]:
    """``metadata`` with a nested ``metadata`` mapping merged and missing values as ``None``."""
    nested = metadata.get("metadata")
    if isinstance(nested, Mapping):
        del metadata["metadata"]
        metadata.update(nested)
    for key, value in metadata.items():
        kind = type(value)
        if kind is str or kind is int or value is None or kind is bool:
            continue
        if is_missing(value):
            metadata[key] = None
    return metadata


def _a(value: object) -> str:
    kind = json_kind(value)
    return kind if kind.startswith(("a ", "an ")) else f"a {type(value).__name__}"


def check_unique_ids(items: Sequence[ItemResult]) -> None:
    """Check that ids are unique per model (several models may answer one question).

    Raises:
        InputError: an item that is not an ``ItemResult``, or an id seen twice for one model.
    """
    if set(map(type, items)) <= {ItemResult}:
        if len({item.id for item in items}) == len(items):
            return  # the common case, checked in two passes at C speed
        if len({(item.model, item.id, item.attempt) for item in items}) == len(items):
            return  # attempts at questions (or several models), each (model, id, attempt) once
    Converter().convert(Rows("", list(items), range(1, len(items) + 1), "row"))


def item_from_row(row: Any, index: int) -> ItemResult:
    """An item from one mapping keyed by role (``index``: its 0-based position, for messages).

    Raises:
        InputError: the row is not a mapping, or a value has the wrong type.
    """
    converter = Converter()
    converter.count = index
    return converter.convert(Rows("", [row], [index + 1], "row"))[0]
