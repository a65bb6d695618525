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


class _Missing:
    __slots__ = ()


_ABSENT: Any = _Missing()


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
        """The items of one chunk of rows, in order.

        Raises:
            InputError: a missing column, a value of the wrong type, or a duplicate id.
        """
        col, mapping = self.col, self.mapping
        id_col, out_col, exp_col = col["id"], col["output"], col["expected"]
        att_col = col["attempt"]
        text_roles = [(role, col[role]) for role in TEXT_ROLES]
        has_id = "id" in mapping or self.header is None or id_col in self.header
        explicit_id, explicit_expected = "id" in mapping, "expected" in mapping
        role_columns, null_output = self.role_columns, self.null_output
        delimiter = self.answer_delimiter
        seen = self.seen
        items: list[ItemResult] = []
        append = items.append
        last_model: Any = _ABSENT
        ids: dict[Any, int] = {}
        for index, row in enumerate(chunk.rows):
            number = self.count + index + 1
            if type(row) is not dict:
                if isinstance(row, ItemResult):
                    self._check_id(chunk, index, row.model, row.id, None, row.attempt)
                    append(row)
                    continue
                if not isinstance(row, Mapping):
                    raise _error(
                        chunk,
                        index,
                        f"the row is {_a(row)}; rows must be mappings (dicts) or ItemResult "
                        "objects.",
                    )
                row = dict(row)
            raw_id = row.get(id_col, _ABSENT) if has_id else _ABSENT
            if type(raw_id) is str and raw_id and not raw_id.isspace():
                ident = raw_id
            elif raw_id is _ABSENT:
                if explicit_id:
                    raise self.missing_key(chunk, index, "id", id_col, row)
                ident = str(number)
            else:
                ident = self.id_text(chunk, index, id_col, raw_id)
            raw_output = row.get(out_col, _ABSENT)
            output: str | None
            if type(raw_output) is str:
                output = None if raw_output == null_output else raw_output
            elif raw_output is _ABSENT:
                raise self.missing_key(chunk, index, "output", out_col, row)
            else:
                output = self.text(chunk, index, "output", out_col, raw_output)
                if output is not None and output == null_output:
                    output = None
            raw_expected = row.get(exp_col, _ABSENT)
            expected: tuple[str, ...] | None
            if type(raw_expected) is str and delimiter is None:
                expected = (raw_expected,) if raw_expected and not raw_expected.isspace() else None
            elif type(raw_expected) is list and all(type(a) is str for a in raw_expected):
                expected = tuple(a for a in raw_expected if a and not a.isspace()) or None
            elif raw_expected is _ABSENT:
                if explicit_expected:
                    raise self.missing_key(chunk, index, "expected", exp_col, row)
                expected = None
            else:
                expected = self.answers(chunk, index, exp_col, raw_expected)
            fields: dict[str, Any] = {}
            for role, column in text_roles:
                raw = row.get(column, _ABSENT)
                if type(raw) is str:
                    fields[role] = raw or None
                elif raw is _ABSENT:
                    if role in mapping:
                        raise self.missing_key(chunk, index, role, column, row)
                elif raw is not None:
                    fields[role] = self.text(chunk, index, role, column, raw) or None
            raw_attempt = row.get(att_col)
            attempt = (
                None if raw_attempt is None else self.attempt(chunk, index, att_col, raw_attempt)
            )
            metadata = {k: v for k, v in row.items() if k not in role_columns}
            if self.renamed:
                metadata = self.rename(chunk, index, row, metadata)
            if metadata:
                metadata = _clean(metadata)
            model = fields.get("model")
            if model is not last_model:
                last_model = model
                ids = seen.get(model) or seen.setdefault(model, {})
            size = len(ids)
            ids.setdefault(ident if attempt is None else (ident, attempt), chunk.lines[index])
            if len(ids) == size:
                self._duplicate(chunk, index, model, ident, id_col if has_id else None, attempt)
            append(
                ItemResult(
                    id=ident,
                    output=output,
                    expected=expected,
                    attempt=attempt,
                    metadata=metadata,
                    **fields,
                )
            )
        self.count += len(chunk.rows)
        return items

    # -- pieces ---------------------------------------------------------------------------

    def rename(
        self, chunk: Rows, index: int, row: Mapping[str, Any], metadata: dict[str, Any]
    ) -> dict[str, Any]:
        """A row's metadata with each mapped metadata role's column under the role's name.

        Raises:
            InputError: the row lacks the mapped column, or has a column named like the role
                as well (one of the two would be lost).
        """
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
        return {self.renamed.get(k, k): v for k, v in metadata.items()}

    def _check_id(
        self,
        chunk: Rows,
        index: int,
        model: str | None,
        ident: str,
        key: str | None,
        attempt: int | None = None,
    ) -> None:
        ids: dict[Any, int] = self.seen.setdefault(model, {})
        size = len(ids)
        ids.setdefault(ident if attempt is None else (ident, attempt), chunk.lines[index])
        if len(ids) == size:
            self._duplicate(chunk, index, model, ident, key, attempt)

    def _duplicate(
        self,
        chunk: Rows,
        index: int,
        model: str | None,
        ident: str,
        key: str | None,
        attempt: int | None = None,
    ) -> None:
        first = self.seen[model][ident if attempt is None else (ident, attempt)]
        whose = f" for model {model!r}" if model is not None else ""
        if attempt is not None:
            whose = f" with attempt {attempt}{whose}"
        hint = " Fix the id column, or drop it to number the rows." if chunk.name else ""
        raise _error(
            chunk,
            index,
            f"the id {ident!r} appears twice{whose} (first at {chunk.unit} {first}). Ids must "
            f"be unique per model.{hint}",
            key,
        )

    def attempt(self, chunk: Rows, index: int, column: str, raw: Any) -> int | None:
        """The attempt in ``raw`` (a whole number of at least 0, or its text), or ``None``.

        Raises:
            InputError: anything else, placed at row ``index`` of ``chunk``.
        """
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

    def id_text(self, chunk: Rows, index: int, column: str, raw: Any) -> str:
        """The id in ``raw``, which is not a non-blank text: a whole number as text.

        Raises:
            InputError: an empty or missing id, a boolean, a fraction or any other value.
        """
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

    def answers(self, chunk: Rows, index: int, column: str, raw: Any) -> tuple[str, ...] | None:
        """The valid answers in ``raw`` (``None``: no answer key), by the rules above.

        Raises:
            InputError: an object, or a list holding objects or lists.
        """
        if is_missing(raw):
            return None
        if hasattr(raw, "tolist") and not isinstance(raw, (str, bytes)):
            raw = raw.tolist()  # a numpy array: a Parquet list column read through pandas
        if type(raw) is list and all(type(answer) is str for answer in raw):
            return tuple(answer for answer in raw if answer and not answer.isspace()) or None
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
