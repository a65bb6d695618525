"""Parquet (``.parquet``, ``.pq``), through pyarrow (extra ``itemscore[parquet]``).

Read in record batches, so a large file is never held at once. Parquet files from others are
untrusted: pyarrow before 14.0.1 runs code stored in a crafted file when it reads the schema
(CVE-2023-47248), so older versions are refused unless ``pyarrow_hotfix`` is installed, and a
column declaring a pickled Python extension type (``arrow.py_extension_type``) is refused
before any data is read.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .._exceptions import ConfigError, InputError
from ._source import DEFAULT_CHUNK_SIZE, Rows, RowSource

__all__ = ["FIXED_VERSION", "read"]

#: The first pyarrow release that does not unpickle extension types from files.
FIXED_VERSION = (14, 0, 1)
_PICKLED_EXTENSION = b"arrow.py_extension_type"
_EXTENSION_NAME = b"ARROW:extension:name"


def read(path: Path, name: str, *, chunk_size: int = DEFAULT_CHUNK_SIZE) -> RowSource:
    """Open a Parquet file: check pyarrow and the schema now, read row batches as iterated.

    Raises:
        ConfigError: pyarrow is missing, or older than 14.0.1 without ``pyarrow_hotfix``.
        InputError: not a Parquet file, or a column of a pickled Python extension type.
    """
    pq = _pyarrow_parquet(name)
    try:
        handle = pq.ParquetFile(path)
    except OSError as exc:
        if not path.exists():
            raise
        raise InputError.at(name, None, None, f"not a readable Parquet file ({exc}).") from None
    except Exception as exc:  # noqa: BLE001 - pyarrow raises its own types for bad files
        raise InputError.at(name, None, None, f"not a readable Parquet file ({exc}).") from None
    schema = handle.schema_arrow
    for field in schema:
        metadata = field.metadata or {}
        if metadata.get(_EXTENSION_NAME) == _PICKLED_EXTENSION:
            handle.close()
            raise InputError.at(
                name,
                None,
                None,
                f"column {field.name!r} declares a pickled Python extension type "
                "(arrow.py_extension_type); reading it could run code from the file, so "
                "itemscore refuses it. Rewrite the column as plain data.",
            )
    columns = list(schema.names)
    return RowSource(name, "parquet", columns, _chunks(handle, name, chunk_size), unit="row")


def _chunks(handle: Any, name: str, chunk_size: int) -> Iterator[Rows]:
    done = 0
    try:
        for batch in handle.iter_batches(batch_size=chunk_size):
            rows = batch.to_pylist()
            yield Rows(name, rows, list(range(done + 1, done + len(rows) + 1)), "row")
            done += len(rows)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(
            f"{name}: row {done + 1} and after cannot be read ({exc}).", path=name, line=done + 1
        ) from None
    finally:
        handle.close()


def _pyarrow_parquet(name: str) -> Any:
    try:
        pa = importlib.import_module("pyarrow")
        pq = importlib.import_module("pyarrow.parquet")
    except ImportError:
        raise ConfigError(
            f"Reading {name} needs pyarrow, which is not installed. "
            "Install it with: pip install 'itemscore[parquet]'"
        ) from None
    if _version(getattr(pa, "__version__", "0")) < FIXED_VERSION:
        try:
            importlib.import_module("pyarrow_hotfix")
        except ImportError:
            raise ConfigError(
                f"pyarrow {pa.__version__} can run code hidden in a Parquet file "
                "(CVE-2023-47248), so itemscore does not read Parquet with it. Upgrade: "
                "pip install 'pyarrow>=14.0.1' (or install pyarrow_hotfix)."
            ) from None
    return pq


def _version(text: str) -> tuple[int, ...]:
    parts = []
    for part in text.split(".")[:3]:
        match = re.match(r"\d+", part)
        parts.append(int(match.group()) if match else 0)
    return tuple(parts)
