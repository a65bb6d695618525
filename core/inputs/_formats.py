"""The registry of input formats: one line per format, each naming the module that reads it.

A format's module (``jsonl.py``, ``csv.py``...) offers, as module attributes:

- ``read(piece, settings, state) -> Iterator[pyarrow.RecordBatch]``: canonical batches of a
  piece of a file (:mod:`._read`);
- ``rows(piece, settings, state) -> Iterator[Rows]``: the rows, parsed but not converted
  (what ``Suite.items`` and :func:`~itemscore.inputs.read_rows` take);
- optionally ``plan(path, name, format, k, settings, digest) -> Iterator[Planned]``: the file
  in about ``k`` pieces, read once, every byte fed to ``digest``, each piece yielded as soon as
  it is found with the rows and bytes it covers (without it, a file is one piece, its rows
  counted by ``rows``);
- ``UNIT`` (``"line"``, ``"row"``), ``STREAM`` (how a copied stream is bounded) and
  ``BOUNDS`` (the bound options it keeps); optionally ``locate(...)``, the place of a key on
  a line, for messages about a row found after it was read.

A *records* format (a harness log) names instead a function ``read_x(path, **options)`` that
returns or yields dicts keyed by role; :mod:`._logs` turns them into batches.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import attrs

from .._exceptions import ConfigError, did_you_mean, one_of

__all__ = ["FORMATS", "REGISTRY", "InputFormat", "detect_format"]


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
    #: Whether the reader returns (or yields) dicts keyed by role (``True``), or is one of this
    #: package's format modules.
    records: bool = False

    def load(self) -> Callable[..., Any]:
        """The reader function."""
        module, _, function = self.reader.partition(":")
        loaded: Callable[..., Any] = getattr(_import(module), function)
        return loaded

    def module(self) -> ModuleType:
        """The module that reads this format into batches (:mod:`._logs` for records)."""
        if self.records:
            return _import("_logs")
        return _import(self.reader.partition(":")[0])

    @property
    def unit(self) -> str:
        """How a row's place is named: ``"line"``, ``"row"`` or ``"record"``."""
        return str(self.module().UNIT)

    @property
    def stream(self) -> str:
        """How a stream of this format is bounded while it is copied."""
        return str(self.module().STREAM)

    @property
    def bounds(self) -> tuple[str, ...]:
        """The bound options (:mod:`._bounds`) this format's reader keeps."""
        return tuple(self.module().BOUNDS)

    def options(self) -> list[str]:
        """The reader's own options (a records reader's keyword-only arguments)."""
        if not self.records:
            return list(getattr(self.module(), "OPTIONS", ()))
        import inspect  # only here: it costs start-up time of every command

        return [
            p.name
            for p in inspect.signature(self.load()).parameters.values()
            if p.kind is p.KEYWORD_ONLY and p.name != "chunk_size"
        ]


def _import(module: str) -> ModuleType:
    if "." not in module:
        module = f"{__package__}.{module}"
    return importlib.import_module(module)


# One line per format. Formats named only explicitly (harness logs sharing .jsonl or .json)
# list no extension.
_FORMATS = (
    InputFormat("jsonl", (".jsonl", ".ndjson"), "jsonl:read"),
    InputFormat("json", (".json",), "json:read"),
    InputFormat("csv", (".csv",), "csv:read"),
    InputFormat("tsv", (".tsv", ".tab"), "csv:read"),  # CSV's module reads it, with tabs
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
    content is read as one (a stream is never read here: its copy is sniffed instead).

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
