"""64-bit hashes of Arrow text columns, over their own buffers: no text becomes a Python object.

:func:`text_buffers` reads a string array's own offsets and bytes (the fingerprints' CRC-32s
read them too). Two users of the hash: the whole-source checks hash each row's key
(:mod:`itemscore.inputs._checks`), and the run table hashes each item's input and answer key
into its content fingerprint (:func:`itemscore.engine._table.fingerprints`). Neither hash is
ever written to a file: a different function would only change which rows the exact checks
read again.

``text_hashes`` is the polynomial ``sum((b_i + 1) * BASE**i) mod 2**64`` of a text's bytes,
mixed with its length by splitmix64's finaliser (:func:`mix`). Equal texts hash alike
whatever array, chunk or slice holds them; different ones almost never do, and every user
tells a collision apart by comparing the texts themselves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["MISSING", "mix", "text_buffers", "text_hashes"]

_U64 = np.uint64
#: The hash of a missing text (a text that hashes to it too is told apart by the exact check).
MISSING = _U64(0x9E3779B97F4A7C15)
#: The base of the polynomial (odd: every power is a unit mod 2**64).
_BASE = _U64(0x100000001B3)
#: Bytes of text hashed at a time: the work arrays are 32 bytes per byte of text.
_SLICE_BYTES = 1 << 20


def mix(z: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """splitmix64's finaliser: every bit of the result depends on every bit of ``z``."""
    z = (z ^ (z >> _U64(30))) * _U64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> _U64(27))) * _U64(0x94D049BB133111EB)
    out: NDArray[np.uint64] = z ^ (z >> _U64(31))
    return out


def text_hashes(column: pa.ChunkedArray | pa.Array) -> NDArray[np.uint64]:
    """A 64-bit hash of each text of a string column (:data:`MISSING` for a null)."""
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    out: list[NDArray[np.uint64]] = [np.zeros(0, np.uint64)]
    for chunk in chunks:
        n = len(chunk)
        if n == 0:
            continue
        if chunk.null_count == n:
            out.append(np.full(n, MISSING, np.uint64))
            continue
        offsets, data_buffer = text_buffers(chunk)
        data = np.zeros(0, np.uint8)
        if data_buffer is not None:
            data = np.frombuffer(data_buffer, np.uint8)
        hashed = np.empty(n, np.uint64)
        start = 0
        while start < n:  # rows holding about _SLICE_BYTES of text at a time (one at least)
            stop = int(np.searchsorted(offsets, offsets[start] + _SLICE_BYTES, side="right")) - 1
            stop = min(max(stop, start + 1), n)
            hashed[start:stop] = _polynomial(data, offsets[start : stop + 1])
            start = stop
        if chunk.null_count:
            hashed[chunk.is_null().to_numpy(zero_copy_only=False)] = MISSING
        out.append(hashed)
    return np.concatenate(out)


def text_buffers(chunk: pa.Array) -> tuple[NDArray[np.int64], pa.Buffer | None]:
    """A string array's offsets (its own rows', as int64) and its data buffer."""
    wide = pa.types.is_large_string(chunk.type) or pa.types.is_large_binary(chunk.type)
    kind = np.int64 if wide else np.int32
    _, offsets_buffer, data_buffer = chunk.buffers()
    offsets = np.frombuffer(
        offsets_buffer, kind, count=len(chunk) + 1, offset=chunk.offset * np.dtype(kind).itemsize
    ).astype(np.int64)
    return offsets, data_buffer


def _polynomial(data: NDArray[np.uint8], offsets: NDArray[np.int64]) -> NDArray[np.uint64]:
    """The hash of each text between consecutive ``offsets`` into ``data``."""
    ends = offsets - offsets[0]
    lengths = np.diff(ends)
    size = int(ends[-1])
    text = data[int(offsets[0]) : int(offsets[0]) + size]
    position = np.arange(size, dtype=np.int64) - np.repeat(ends[:-1], lengths)
    powers = np.cumprod(np.full(int(lengths.max()) + 1, _BASE, np.uint64), dtype=np.uint64)
    sums = np.zeros(size + 1, np.uint64)
    np.cumsum((text.astype(np.uint64) + _U64(1)) * powers[position], dtype=np.uint64, out=sums[1:])
    return mix((sums[ends[1:]] - sums[ends[:-1]]) ^ mix(lengths.astype(np.uint64)))
