"""The bounds every data-file read keeps, so that no file can make a reader take all memory.

- ``max_line_bytes`` (default 64 MiB): the longest line of a JSON lines file, and the longest
  record of a CSV or TSV file (its quoted cells may span lines). A longer one, or a stream
  that never ends a line (``/dev/zero``), is an input error naming the file and the line; the
  reader never holds much more than this bound and one block of the file.
- ``max_json_bytes`` (default 1 GiB): the largest JSON file (one list of objects), which must
  be parsed whole. The same bound holds for a stream (a pipe, a device) of a harness log or a
  Parquet file, which must be copied whole before it can be read (``/dev/zero`` never ends).
- ``max_columns`` (default 2,048): the most distinct keys (columns) the rows of a source may
  hold. Every key is a column of the batches, as long as the batch: a file whose rows each
  bring keys of their own would make the reading quadratic.

Each is a reader option (``--read-option max_line_bytes=200000000``, ``read_options:`` in a
configuration, ``read_items(path, max_line_bytes=...)``) and a field of :class:`Limits`
(``open_source(..., limits=Limits(...))``).
"""

from __future__ import annotations

from typing import Any

import attrs

from .._exceptions import ConfigError, InputError

__all__ = ["DEFAULT_LIMITS", "LIMIT_OPTIONS", "Limits", "too_many_columns"]

_MIB = 1 << 20


def _positive(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(
            f"`{attribute.name}` ({value!r}) must be a whole number, at least 1 "
            f"(the default is {attribute.default}); e.g. --read-option "
            f"{attribute.name}={attribute.default}."
        )


@attrs.frozen(kw_only=True)
class Limits:
    """How large a line, a record or a whole-file document of a data file may be.

    Raises:
        ConfigError: a bound that is not a whole number of at least 1.
    """

    #: The longest JSON line, or CSV/TSV record, in bytes.
    max_line_bytes: int = attrs.field(default=64 * _MIB, validator=_positive)
    #: The largest JSON (list) file, or copied stream of a harness log or Parquet file, in bytes.
    max_json_bytes: int = attrs.field(default=1024 * _MIB, validator=_positive)
    #: The most distinct keys (columns) in the rows of a source.
    max_columns: int = attrs.field(default=2048, validator=_positive)

    def with_options(self, options: dict[str, Any]) -> Limits:
        """These limits with the bounds named in reader ``options`` (taken out of them).

        Values may be text (the command line gives them so).

        Raises:
            ConfigError: a bound that is not a whole number of at least 1.
        """
        changes = {}
        for name in LIMIT_OPTIONS:
            if name in options:
                value = options.pop(name)
                if isinstance(value, str) and value.strip().isdecimal():
                    value = int(value.strip())
                changes[name] = value
        return attrs.evolve(self, **changes) if changes else self


#: The reader options that set a bound.
LIMIT_OPTIONS = ("max_line_bytes", "max_json_bytes", "max_columns")
#: The bounds when none is given.
DEFAULT_LIMITS = Limits()


def too_many_columns(name: str, line: int | None, limit: int, unit: str = "line") -> InputError:
    """The error for rows holding more distinct keys than ``max_columns``."""
    where = f"{name}: {unit} {line}" if unit != "line" and line is not None else name
    at = line if unit == "line" else None
    message = (
        f"the rows hold more than {limit:,} different keys (columns), the bound max_columns. "
        "A file of rows to score has far fewer: if each row keeps its data under keys of its "
        "own, nest them under one key (kept as one metadata value). If so many columns are "
        f"meant, raise the bound: --read-option max_columns={limit * 4}."
    )
    if unit != "line" and line is not None:
        return InputError(f"{where}: {message}", path=name, line=line)
    return InputError.at(name, at, None, message)
