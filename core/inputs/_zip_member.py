"""One member of a zip archive, decompressed as a stream that stops at a bound.

An inspect_ai ``.eval`` log is a zip archive of zstd (or deflate) members. A member's size is
declared twice (local header, central directory) and checked against its CRC only once the
whole member is out, so a crafted archive can declare little and expand to gigabytes. Here the
declared size must be within the bounds before anything is decompressed, the output is read in
small pieces and stops one byte past the declared size, and the ratio of output to input is
checked as it grows. Python reads zstd members only from 3.14 on; before that the
``zstandard`` package decompresses them (``pip install zstandard``).
"""

from __future__ import annotations

import struct
import sys
import zipfile
import zlib
from typing import IO, Any

from .._exceptions import ConfigError, InputError
from ._source import escape_name

__all__ = ["BoundError", "read_member"]

_ZSTD = 93  # the zip compression method number of zstd (APPNOTE 4.4.5)
# zipfile reads zstd from Python 3.14 on. Before, packages may patch zipfile to read it
# (inspect_ai installs one); this module reads such members itself, the same way whatever
# was imported.
_NATIVE_ZSTD = sys.version_info >= (3, 14)
_PIECE = 1 << 16


class BoundError(InputError):
    """Raised when a member is larger than a bound: the archive's problem, not one sample's."""


def read_member(
    archive: zipfile.ZipFile,
    raw: IO[bytes],
    info: zipfile.ZipInfo,
    name: str,
    *,
    max_bytes: int,
    max_ratio: int,
    ratio_floor: int,
) -> bytes:
    """The bytes of member ``info``, never more than ``max_bytes`` of them.

    Args:
        archive: The open archive.
        raw: The archive file itself, opened for reading (for zstd before Python 3.14).
        info: The member.
        name: The archive as named in messages.
        max_bytes: Largest decompressed size taken.
        max_ratio: Largest decompressed size per compressed byte, past ``ratio_floor``.
        ratio_floor: Output below this size is never refused for its ratio.

    Raises:
        InputError: the member is larger than a bound, damaged, or not readable; the message
            names the archive, the member, the bound and the read option that changes it.
        ConfigError: a zstd member on Python < 3.14 without the ``zstandard`` package.
    """
    member = escape_name(info.filename)  # a name from the file: controls shown as escapes
    limit = max(ratio_floor, max_ratio * max(info.compress_size, 1))

    def too_large(size: int, what: str) -> BoundError:
        if size > max_bytes:
            bound = f"the bound of {max_bytes} bytes per sample (read option max_sample_bytes)"
        else:
            bound = (
                f"{max_ratio} times its compressed size of {info.compress_size} bytes (read "
                "option max_ratio)"
            )
        return BoundError.at(
            name,
            None,
            None,
            f"member {member} {what} {size} bytes, more than {bound}. A real inspect_ai log "
            "stays far below it; this archive may be crafted to exhaust memory. If the log is "
            "yours and its samples are this large, raise the bound with --read-option.",
        )

    if info.file_size > max_bytes or info.file_size > limit:
        raise too_large(info.file_size, "declares")
    if info.compress_type == _ZSTD and not _NATIVE_ZSTD:
        stream: Any = _zstd_stream(raw, info, name)
        check_crc = True
    else:
        try:
            stream = archive.open(info)
        except (zipfile.BadZipFile, NotImplementedError, RuntimeError) as exc:
            raise _broken(name, member, exc) from None
        check_crc = False  # zipfile checks it at the end of the member
    parts: list[bytes] = []
    size = 0
    try:
        with stream:
            while True:
                piece = stream.read(_PIECE)
                if not piece:
                    break
                size += len(piece)
                if size > info.file_size:
                    raise InputError.at(
                        name,
                        None,
                        None,
                        f"member {member} expands past the {info.file_size} bytes it declares: "
                        "the archive is damaged or crafted.",
                    )
                if size > max_bytes or size > limit:
                    raise too_large(size, "expands to at least")
                parts.append(piece)
    except InputError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:
        raise _broken(name, member, exc) from None
    except Exception as exc:  # zstandard.ZstdError, whose module may be absent
        if type(exc).__name__ != "ZstdError":
            raise
        raise _broken(name, member, exc) from None
    data = b"".join(parts)
    if len(data) != info.file_size or (check_crc and zlib.crc32(data) != info.CRC):
        raise InputError.at(
            name,
            None,
            None,
            f"member {member} is damaged (its size or checksum does not match).",
        )
    return data


def _broken(name: str, member: str, exc: BaseException) -> InputError:
    return InputError.at(name, None, None, f"member {member} cannot be read ({exc}).")


class _Slice:
    """``length`` bytes of ``raw`` from ``start``: the compressed data of one member."""

    def __init__(self, raw: IO[bytes], start: int, length: int) -> None:
        self.raw = raw
        self.at = start
        self.left = length

    def read(self, size: int = -1) -> bytes:
        if size < 0 or size > self.left:
            size = self.left
        if size == 0:
            return b""
        self.raw.seek(self.at)
        data = self.raw.read(size)
        self.at += len(data)
        self.left -= len(data)
        return data


def _zstd_stream(raw: IO[bytes], info: zipfile.ZipInfo, name: str) -> Any:
    try:
        import zstandard
    except ImportError:
        from itemscore._extras import install_hint

        raise ConfigError(
            f"Reading {name} needs the zstandard package: inspect_ai compresses .eval logs "
            "with zstd, which Python reads only from 3.14 on. Install it with: "
            f"{install_hint('zstandard')} (or read a log written with --log-format json)."
        ) from None
    # The member's data follows its local header: 30 fixed bytes, then name and extra field.
    raw.seek(info.header_offset)
    local = raw.read(30)
    if len(local) != 30 or local[:4] != b"PK\x03\x04":
        raise InputError.at(
            name, None, None, f"member {escape_name(info.filename)} has a broken local header."
        )
    name_length, extra_length = struct.unpack("<HH", local[26:30])
    start = info.header_offset + 30 + name_length + extra_length
    source: Any = _Slice(raw, start, info.compress_size)  # any object with read() will do
    return zstandard.ZstdDecompressor().stream_reader(
        source, read_size=_PIECE, read_across_frames=True
    )
