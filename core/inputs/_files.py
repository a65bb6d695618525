"""Reading a data file once: every byte hashed as it is read, streams copied before reading.

A reader never opens a file twice for its data: what it hashes is what it parses. A source
that is not a regular file (a named pipe, ``/dev/stdin``, ``<(cat f)``, a character device)
cannot be read twice or split, so it is first copied, once and hashing as it goes, into a
private temporary file (mode 0600, in a folder of mode 0700, removed when the source is
closed), which is then read like any file. The copy keeps the bounds of
:mod:`._bounds`: a line longer than ``max_line_bytes`` (``/dev/zero`` has none) ends it
with an error, and so does a file read whole (JSON, a harness log, Parquet) larger than
``max_json_bytes``. A copy that does not finish is removed, whatever stops it: an error, or
Ctrl-C (and ``SIGTERM``, which the command line raises as Ctrl-C).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from typing import BinaryIO, Literal

import attrs
import numpy as np

from .._exceptions import InputError

__all__ = [
    "Copy",
    "HashedReader",
    "check_lines",
    "copy_stream",
    "is_regular",
    "line_too_long",
    "remove_copy",
]

_COPY_BLOCK = 1 << 20


def is_regular(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a regular file (through symbolic links); False when missing."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


class HashedReader:
    """Bytes ``[start, stop)`` of a file, read once, each byte hashed as it is read.

    Args:
        path: The file (a local path or a URL, :mod:`._fs`).
        start: The first byte.
        stop: The end (``None``: the end of the file).
    """

    def __init__(self, path: str, start: int = 0, stop: int | None = None) -> None:
        from ._fs import open_binary  # a URL, through fsspec, as well as a local path

        self._handle: BinaryIO = open_binary(path)
        if start:
            self._handle.seek(start)
        self._left = None if stop is None else stop - start
        self._digest = hashlib.sha256()
        #: Bytes read so far.
        self.n_bytes = 0

    def read(self, size: int) -> bytes:
        """Up to ``size`` bytes (fewer only at the end of the range)."""
        if self._left is not None:
            size = min(size, self._left)
            if size <= 0:
                return b""
        data = self._handle.read(size)
        if self._left is not None:
            self._left -= len(data)
        self._digest.update(data)
        self.n_bytes += len(data)
        return data

    @property
    def sha256(self) -> str:
        """The hex SHA-256 of the bytes read so far."""
        return self._digest.hexdigest()

    def close(self) -> None:
        """Close the file."""
        self._handle.close()


@attrs.frozen
class Copy:
    """A stream copied into a private file: its path and the SHA-256 of the bytes copied."""

    #: The copy.
    path: str
    #: The private folder holding it.
    folder: str
    #: The hex SHA-256 of the stream's bytes.
    sha256: str
    #: How many bytes the stream held.
    n_bytes: int


def line_too_long(name: str, line: int, limit: int, *, what: str = "line") -> InputError:
    """The error for a line (or CSV record) past ``max_line_bytes``."""
    return InputError.at(
        name,
        line,
        None,
        f"the {what} is longer than {limit:,} bytes (the bound max_line_bytes) and still "
        "has no line end: this is not a data file of one row per line (a stream such as "
        f"/dev/zero never ends one). If such long {what}s are meant, raise the bound, e.g. "
        f"--read-option max_line_bytes={limit * 4}.",
    )


def copy_stream(
    path: str | os.PathLike[str],
    name: str,
    kind: Literal["lines", "document"],
    *,
    max_line_bytes: int,
    max_json_bytes: int,
) -> Copy:
    """Copy a stream once into a private temporary file, hashing it and keeping the bounds.

    Args:
        path: The stream (a pipe, a device).
        name: How messages name it.
        kind: ``"lines"``: one row per line (JSON lines, CSV), each line within
            ``max_line_bytes``; ``"document"``: a file read whole (JSON, a harness log,
            Parquet), within ``max_json_bytes``.
        max_line_bytes: The bound of a line.
        max_json_bytes: The bound of a file read whole.

    Raises:
        InputError: a line or document past its bound.
        OSError: the stream cannot be read, or the copy written.

    A copy that does not finish is removed before the error (or the interrupt) goes on.
    """
    folder = tempfile.mkdtemp(prefix="itemscore-input-")  # mode 0700: the user's own
    target = os.path.join(folder, "data")
    digest = hashlib.sha256()
    total = 0
    line, run = 1, 0  # the current line and its length so far
    finished = False
    try:
        descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with open(path, "rb") as source, os.fdopen(descriptor, "wb") as out:
            while True:
                block = source.read(_COPY_BLOCK)
                if not block:
                    break
                digest.update(block)
                total += len(block)
                if kind == "lines":
                    line, run = check_lines(block, name, line, run, max_line_bytes)
                elif total > max_json_bytes:
                    raise InputError.at(
                        name,
                        None,
                        None,
                        f"the stream holds more than {max_json_bytes:,} bytes (the bound "
                        "max_json_bytes), more than a file read whole (JSON, Parquet, a "
                        "harness log) may be; a stream such as /dev/zero never ends. If it "
                        "is meant, raise the bound, e.g. --read-option max_json_bytes="
                        f"{max_json_bytes * 4}.",
                    )
                out.write(block)
        finished = True
    finally:
        if not finished:  # an error, Ctrl-C, or SIGTERM (which the command line raises so)
            shutil.rmtree(folder, ignore_errors=True)
    return Copy(target, folder, digest.hexdigest(), total)


def check_lines(block: bytes, name: str, line: int, run: int, limit: int) -> tuple[int, int]:
    """``(line, run)`` after ``block``: the current line and its length so far.

    Raises:
        InputError: a line of ``block`` (with the ``run`` bytes before it) past ``limit``.
    """
    ends = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 10)
    if not len(ends):
        run += len(block)
        if run > limit:
            raise line_too_long(name, line, limit)
        return line, run
    lengths = np.diff(ends, prepend=-1) - 1
    lengths[0] += run
    over = np.flatnonzero(lengths > limit)
    if len(over):
        raise line_too_long(name, line + int(over[0]), limit)
    run = len(block) - int(ends[-1]) - 1
    line += len(ends)
    if run > limit:
        raise line_too_long(name, line, limit)
    return line, run


def remove_copy(copy: Copy | None) -> None:
    """Remove a copy and its private folder (nothing when there is none)."""
    if copy is not None:
        shutil.rmtree(copy.folder, ignore_errors=True)
