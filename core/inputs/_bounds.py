"""The bounds every data-file read keeps, so that no file can make a reader take all memory.

- ``max_line_bytes`` (default 64 MiB): the longest line of a JSON lines file, and the longest
  record of a CSV or TSV file (its quoted cells may span lines). A longer one, or a stream
  that never ends a line (``/dev/zero``), is an input error naming the file and the line; the
  reader never holds much more than this bound and one block of the file.
- ``max_json_bytes`` (default 1 GiB): the largest JSON file (one list of objects), which must
  be parsed whole. The same bound holds for a stream (a pipe) of a harness log that must be
  copied before it can be read.

Each is a reader option (``--read-option max_line_bytes=200000000``, ``read_options:`` in a
configuration, ``read_items(path, max_line_bytes=...)``) and a field of :class:`Limits`
(``open_source(..., limits=Limits(...))``).
"""

from __future__ import annotations

from typing import Any

import attrs

from .._exceptions import ConfigError

__all__ = ["DEFAULT_LIMITS", "LIMIT_OPTIONS", "Limits"]

_MIB = 1 << 20


def _positive(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(
            f"`{attribute.name}` ({value!r}) must be a whole number of bytes, at least 1 "
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
    #: The largest JSON (list) file, or copied stream of a harness log, in bytes.
    max_json_bytes: int = attrs.field(default=1024 * _MIB, validator=_positive)

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
                if isinstance(value, str) and value.strip().isdigit():
                    value = int(value.strip())
                changes[name] = value
        return attrs.evolve(self, **changes) if changes else self


#: The reader options that set a bound.
LIMIT_OPTIONS = ("max_line_bytes", "max_json_bytes")
#: The bounds when none is given.
DEFAULT_LIMITS = Limits()
