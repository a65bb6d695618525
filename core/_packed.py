"""``PackedItems``: a run's items kept compressed, chunk by chunk, rebuilt as they are read.

A file of a million outputs read into :class:`~itemscore.ItemResult` objects takes about six
times its size in memory. A streamed run keeps its items here instead: each chunk of items is
stored as one compressed block of plain values (``marshal``, or ``pickle`` when a metadata value
needs it, then ``zlib`` at its fastest level), about a fifth of the file's size. Reading
rebuilds one chunk at a time, so iterating a million items never holds more than one chunk of
objects; the chunk last read is kept for indexing near it.

What the run needs of every item (model, group, cluster) is kept beside the blocks, one entry
per item (nothing for a field no item has), so that aggregating never unpacks an item.
"""

from __future__ import annotations

import marshal
import operator
import pickle
import zlib
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar, overload

from ._gc import gc_paused
from ._records import EMPTY, ItemResult, _freeze_metadata, _thawed

__all__ = ["PackedItems", "PackedList", "Picked", "pack_list", "unpack_items"]

T = TypeVar("T")
_MARSHAL, _PICKLE = b"m", b"p"


_FIELDS = operator.attrgetter(
    "id", "output", "expected", "input", "group", "model", "cluster", "attempt"
)
_METADATA = operator.attrgetter("metadata")
#: The fields kept per item beside the blocks: what a run aggregates by.
_PER_ITEM = {name: operator.attrgetter(name) for name in ("model", "group", "cluster")}
_EXPECTED = operator.attrgetter("expected")


def _dump(items: Sequence[ItemResult]) -> bytes:
    """The items' fields and metadata as plain values (marshal, else pickle).

    Raises:
        Exception: a metadata value neither can write.
    """
    fields = list(map(_FIELDS, items))
    # Read-only metadata as dicts; nested values are tuples already, or read-only mappings,
    # which marshal refuses: then every value is copied plain.
    metadata = [dict(m) if m else None for m in map(_METADATA, items)]
    try:
        return _MARSHAL + marshal.dumps((fields, metadata))
    except ValueError:
        metadata = [None if m is None else _thawed(m) for m in metadata]
    try:
        return _MARSHAL + marshal.dumps((fields, metadata))
    except ValueError:  # a value marshal cannot write (a date, a numpy scalar...)
        return _PICKLE + pickle.dumps((fields, metadata), protocol=pickle.HIGHEST_PROTOCOL)


def _pack(items: Sequence[ItemResult]) -> bytes | list[ItemResult]:
    """``items`` as one compressed block; as a list when a metadata value cannot be written."""
    try:
        raw = _dump(items)
    except Exception:  # noqa: BLE001 - not picklable either (items given from Python)
        return list(items)
    return zlib.compress(raw, 1)


def unpack_items(blocks: Iterable[bytes]) -> list[ItemResult]:
    """The items of blocks taken from :meth:`PackedItems.blocks_between`, in order."""
    out: list[ItemResult] = []
    for block in blocks:
        out += _unpack(block)
    return out


def _unpack(block: bytes | list[ItemResult]) -> list[ItemResult]:
    if isinstance(block, list):
        return block
    with gc_paused():  # thousands of acyclic records
        return _rebuild(block)


def _rebuild(block: bytes) -> list[ItemResult]:
    raw = zlib.decompress(block)
    # Both forms were written by _dump, in this process.
    fields, metadata = marshal.loads(raw[1:]) if raw[:1] == _MARSHAL else pickle.loads(raw[1:])
    new, put, item_type, empty = object.__new__, object.__setattr__, ItemResult, EMPTY
    out: list[ItemResult] = []
    append = out.append
    # Unrolled, without validation: every field was valid when the item was packed.
    for (ident, output, expected, text, group, model, cluster, attempt), meta in zip(
        fields, metadata
    ):
        item = new(item_type)
        put(item, "id", ident)
        put(item, "output", output)
        put(item, "expected", expected)
        put(item, "input", text)
        put(item, "group", group)
        put(item, "model", model)
        put(item, "cluster", cluster)
        put(item, "attempt", attempt)
        put(item, "metadata", empty if meta is None else _freeze_metadata(meta))
        put(item, "scores", empty)
        append(item)
    return out


class PackedItems(Sequence[ItemResult]):
    """Items stored compressed in blocks; ``items[i]`` and iteration rebuild them on demand.

    Build one with :meth:`append` (a chunk at a time), then read it like a list. Items come
    back equal to those appended (their ``scores`` are not kept).
    """

    __slots__ = (
        "_blocks",
        "_cached",
        "_cached_at",
        "_fields",
        "_n",
        "_starts",
        "n_answer_keys",
    )

    def __init__(self, chunks: Iterable[Sequence[ItemResult]] = ()) -> None:
        self._blocks: list[bytes | list[ItemResult]] = []
        self._starts: list[int] = []
        self._cached: list[ItemResult] = []
        self._cached_at = -1
        self._n = 0
        # Per item: its model, group and cluster (equal texts share one object); a field no
        # item has so far is None, not a list of None.
        self._fields: dict[str, list[str | None] | None] = dict.fromkeys(_PER_ITEM)
        #: How many items have an answer key.
        self.n_answer_keys = 0
        for chunk in chunks:
            self.append(chunk)

    def append(self, chunk: Sequence[ItemResult]) -> None:
        """Store ``chunk`` after the items stored so far."""
        if not chunk:
            return
        with gc_paused():  # acyclic values only; a collection would walk the lists below
            self._append(chunk)

    def _append(self, chunk: Sequence[ItemResult]) -> None:
        self._starts.append(len(self))
        self._blocks.append(_pack(chunk))
        # Equal texts of a chunk kept as one object.
        shared: dict[str | None, str | None] = {None: None}
        for name, getter in _PER_ITEM.items():
            found = list(map(getter, chunk))
            values = self._fields[name]
            if values is None:
                if found.count(None) == len(found):
                    continue
                values = self._fields[name] = [None] * self._n
            values += map(shared.setdefault, found, found)
        self._n += len(chunk)
        self.n_answer_keys += len(chunk) - list(map(_EXPECTED, chunk)).count(None)

    def chunks(self) -> Iterator[list[ItemResult]]:
        """The items chunk by chunk, as they were appended; one chunk alive at a time."""
        for index in range(len(self._blocks)):
            yield self._chunk(index)

    @property
    def n_chunks(self) -> int:
        """How many chunks are stored."""
        return len(self._blocks)

    @property
    def packed_bytes(self) -> int:
        """The size of the compressed blocks, in bytes (blocks kept as items not counted)."""
        return sum(len(block) for block in self._blocks if isinstance(block, bytes))

    def _chunk(self, index: int) -> list[ItemResult]:
        if index != self._cached_at:
            self._cached = _unpack(self._blocks[index])
            self._cached_at = index
        return self._cached

    def blocks_between(self, start: int, stop: int) -> list[bytes] | None:
        """The compressed blocks holding exactly the items ``start`` to ``stop``.

        ``None`` when those items do not begin and end at block bounds, or a block among them
        is kept as items.
        """
        first = bisect_right(self._starts, start) - 1
        if first < 0 or self._starts[first] != start:
            return None
        blocks: list[bytes] = []
        index = first
        while index < len(self._blocks) and self._starts[index] < stop:
            block = self._blocks[index]
            if not isinstance(block, bytes):
                return None
            blocks.append(block)
            index += 1
        end = self._starts[index] if index < len(self._starts) else self._n
        return blocks if end == stop else None

    def field(self, name: str) -> Sequence[str | None] | None:
        """Per item, its ``model``, ``group`` or ``cluster``; ``None`` when no item has one."""
        return self._fields[name]

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> ItemResult: ...

    @overload
    def __getitem__(self, index: slice) -> list[ItemResult]: ...

    def __getitem__(self, index: int | slice) -> ItemResult | list[ItemResult]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("PackedItems index out of range")
        block = bisect_right(self._starts, index) - 1
        return self._chunk(block)[index - self._starts[block]]

    def __iter__(self) -> Iterator[ItemResult]:
        for block in self._blocks:
            # A fresh list per chunk, not the cache: the caller may hold items across chunks.
            yield from _unpack(block)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment] # compared by content, like a list

    def __repr__(self) -> str:
        return (
            f"<PackedItems: {len(self)} items in {len(self._blocks)} blocks, "
            f"{self.packed_bytes / 2**20:.1f} MiB>"
        )


def _pack_values(values: Sequence[Any]) -> bytes | None:
    """``values`` as one compressed block; ``None`` when they cannot be written."""
    try:
        raw = _MARSHAL + marshal.dumps(list(values))
    except ValueError:  # read-only mappings, numpy scalars...: plain copies, pickled
        plain = [_thawed(v) if isinstance(v, Mapping) else v for v in values]
        try:
            raw = _PICKLE + pickle.dumps(plain, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - not picklable either: the caller keeps the list
            return None
    return zlib.compress(raw, 1)


def _unpack_values(block: bytes) -> list[Any]:
    with gc_paused():
        return _load_values(block)


def _load_values(block: bytes) -> list[Any]:
    raw = zlib.decompress(block)
    # Both forms were written by _pack_values, in this process.
    values: list[Any] = marshal.loads(raw[1:]) if raw[:1] == _MARSHAL else pickle.loads(raw[1:])
    return values


class PackedList(Sequence[Any]):
    """A long list of plain values (a metric's per-item ``extra`` mappings) kept compressed.

    Made of blocks, each decoded when read; the block last read is kept for reading near it.
    Use :func:`pack_list` to make one and :meth:`join` to put consecutive ones together.
    """

    __slots__ = ("_blocks", "_cached", "_cached_at", "_n", "_starts")

    def __init__(self, blocks: Sequence[tuple[bytes, int]]) -> None:
        self._blocks = [block for block, _ in blocks]
        self._starts: list[int] = []
        n = 0
        for _, size in blocks:
            self._starts.append(n)
            n += size
        self._n = n
        self._cached: list[Any] = []
        self._cached_at = -1

    @classmethod
    def join(cls, parts: Sequence[Sequence[Any]]) -> PackedList | None:
        """One list of consecutive ``parts`` (packed or plain); ``None`` if one cannot pack."""
        blocks: list[tuple[bytes, int]] = []
        for part in parts:
            if isinstance(part, PackedList):
                blocks += [
                    (block, (part._starts[i + 1] if i + 1 < len(part._starts) else part._n) - start)
                    for i, (block, start) in enumerate(zip(part._blocks, part._starts))
                ]
            elif len(part):
                block = _pack_values(part)
                if block is None:
                    return None
                blocks.append((block, len(part)))
        return cls(blocks)

    def __reduce__(self) -> tuple[Any, ...]:
        # The blocks and their sizes; never the decoded block kept for reading.
        ends = [*self._starts[1:], self._n]
        sizes = [end - start for start, end in zip(self._starts, ends)]
        return (PackedList, (list(zip(self._blocks, sizes)),))

    def _block(self, index: int) -> list[Any]:
        if index != self._cached_at:
            self._cached = _unpack_values(self._blocks[index])
            self._cached_at = index
        return self._cached

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._n))]
        if index < 0:
            index += self._n
        if not 0 <= index < self._n:
            raise IndexError("PackedList index out of range")
        block = bisect_right(self._starts, index) - 1
        return self._block(block)[index - self._starts[block]]

    def __iter__(self) -> Iterator[Any]:
        for block in self._blocks:
            yield from _unpack_values(block)

    def __repr__(self) -> str:
        return f"<PackedList: {self._n} values in {len(self._blocks)} blocks>"


def pack_list(values: Sequence[Any] | None) -> Sequence[Any] | None:
    """``values`` compressed as a :class:`PackedList`, or as they are when they cannot be."""
    if values is None or isinstance(values, PackedList) or not values:
        return values
    return PackedList.join([values]) or values


class Picked(Sequence[T]):
    """The entries of ``base`` at ``indices``, in that order, read from ``base`` when asked.

    A breakdown by group or model picks its items and extras this way, so that picking from
    packed items never unpacks what nobody reads.
    """

    __slots__ = ("_base", "_indices")

    def __init__(self, base: Sequence[T], indices: Sequence[int]) -> None:
        self._base, self._indices = base, indices

    def __len__(self) -> int:
        return len(self._indices)

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self._base[i] for i in self._indices[index]]
        return self._base[self._indices[index]]

    def __iter__(self) -> Iterator[T]:
        return map(self._base.__getitem__, self._indices)
