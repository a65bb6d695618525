"""What a worker does with one part of a file: read it, then score it.

The two tasks of a run over files (see :mod:`._files`, which plans the parts and runs the
passes): :func:`read_part_task` reads one part, checks its rows, keeps its canonical batches in
a spool file and returns the digest of its keys; :func:`score_part_task` scores the part's
items from the spool (or reads the part again) and returns the score and key columns, or
writes the part's items and scores to a file of its own when the run's workers write
``items.parquet/``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs
import pyarrow as pa

from .._exceptions import ConfigError, ItemscoreError, describe_exception
from .._schema import ERROR, LINE, batch_to_items, conform
from ..inputs import Part, collector_paused, read_part
from ..inputs._checks import KeyDigest
from ._store import ItemsWriter, PartFile, file_sha256
from ._table import OPTIONAL_KEYS, keys_of
from ._tasks import Job, ShardFailed, limit_worker_memory

__all__ = [
    "PartOut",
    "PartRead",
    "ScoredPart",
    "exact_keys",
    "joined",
    "read_part_task",
    "score_part_task",
]


@attrs.frozen
class PartRead:
    """What a read task returns: a part's digest, what it held, where its batches wait."""

    #: The part's index.
    index: int
    #: What the whole-source checks need of the part's rows (``None`` once checked).
    digest: KeyDigest | None
    #: The keys of :data:`OPTIONAL_KEYS` that some row of the part has.
    present: frozenset[str]
    #: Rows read.
    n_rows: int
    #: The SHA-256 of the bytes read.
    sha256: str
    #: Bytes read.
    n_bytes: int
    #: The schemas of the part's batches (their metadata fields differ between batches).
    schemas: tuple[pa.Schema, ...]
    #: The spool file of the part's batches, or ``None`` (not written: out of reach).
    spool: str | None


@attrs.frozen
class ScoredPart:
    """What a score task returns: per batch, the score columns (and the item columns)."""

    #: Score columns by label, one array per batch.
    scores: dict[str, list[pa.StructArray]]
    #: Item columns of each batch, when the run keeps its items.
    items: list[pa.RecordBatch] | None
    #: Rows scored.
    n_rows: int
    #: The files the items were written to (a parallel run that writes ``items.parquet``),
    #: in order, under the names they were written with.
    files: tuple[PartFile, ...] = ()
    #: The run table's key columns of each batch (:func:`~._table.keys_of`); none when the
    #: items went to ``files``, which hold them.
    keys: tuple[pa.Table, ...] = ()


@attrs.frozen
class PartOut:
    """Where a score task writes its items and scores: a file of its own in the parts folder."""

    #: The folder (``items.parquet/`` of the report set being written).
    folder: str
    #: The file's name while the run goes (hidden: dataset readers skip it).
    name: str
    #: The labels of the score columns, in order.
    labels: tuple[str, ...]

    @property
    def path(self) -> str:
        """The file."""
        return os.path.join(self.folder, self.name)


def _part_name(index: int, rows: tuple[int, int]) -> str:
    """The name part ``index``'s rows ``rows`` are written under until the driver renames it."""
    return f".part-{index:05d}-{rows[0]}-{rows[1]}.parquet.tmp"


def _unreachable(folder: str) -> ConfigError:
    import socket

    return ConfigError(
        f"The folder {folder} that holds the items of the report set being written cannot be "
        f"reached from the worker on {socket.gethostname()} (process {os.getpid()}): each "
        "worker writes the items of the part it read there. With workers on other machines, "
        "--out must name a folder on a file system that every worker and this process share; "
        "write to such a folder, or score with executor 'process' on this machine."
    )


def _write_part(out: PartOut, scored: ScoredPart) -> tuple[PartFile, ...]:
    """Write a part's items and scores (held here) to ``out``'s file: see :func:`_finish_part`."""
    writer = ItemsWriter(Path(out.path), out.labels)
    try:
        writer.write_batches(scored.items or (), scored.scores)
        return _finish_part(writer, out)
    except BaseException:
        writer.abort()
        raise


# -- the spool: a part's batches, kept between the two passes --------------------------------


def _write_spool(path: str, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Pass ``batches`` through, writing each to ``path`` as an lz4-compressed IPC stream."""
    options = pa.ipc.IpcWriteOptions(compression="lz4")
    with open(path, "wb") as handle:
        for batch in batches:
            sink = pa.BufferOutputStream()
            with pa.ipc.new_stream(sink, batch.schema, options=options) as writer:
                writer.write_batch(batch)
            data = sink.getvalue()
            handle.write(len(data).to_bytes(8, "little"))
            handle.write(data)
            yield batch


def _read_spool(path: str) -> Iterator[pa.RecordBatch]:
    with open(path, "rb") as handle:
        while head := handle.read(8):
            data = handle.read(int.from_bytes(head, "little"))
            yield from pa.ipc.open_stream(pa.py_buffer(data))


# -- the tasks --------------------------------------------------------------------------------


def read_part_task(
    part: Part,
    spool_dir: str | None,
    rows: Callable[[int], None] | None = None,
    limit: int | None = None,
) -> PartRead:
    """Read one part: check its rows, spool its batches, return their digest.

    Args:
        part: The part.
        spool_dir: The run's private folder for the batches, if this process reaches it.
        rows: For a task run in the caller's process: called with each batch's row count.
        limit: Read no more than this many rows.

    Raises:
        InputError: the part is malformed (naming the file, line and column).
    """
    reader = read_part(part)
    spool = None
    batches: Iterator[pa.RecordBatch] = reader.batches()
    if limit is not None:
        batches = _first_rows(batches, limit)
    if spool_dir is not None and os.path.isdir(spool_dir):
        spool = os.path.join(spool_dir, f"part-{part.index:06d}.arrows")
        batches = _write_spool(spool, batches)
    n_rows = 0
    present: set[str] = set()
    schemas: dict[pa.Schema, None] = {}
    for batch in batches:
        n_rows += batch.num_rows
        present.update(k for k in OPTIONAL_KEYS if batch.column(k).null_count < batch.num_rows)
        schemas.setdefault(batch.schema, None)
        if rows is not None:
            rows(batch.num_rows)
    keys = reader.keys()
    if keys.num_rows != n_rows:  # a limit cut the last batch
        keys = keys.slice(0, n_rows)
    return PartRead(
        index=part.index,
        digest=KeyDigest.of(keys),
        present=frozenset(present),
        n_rows=n_rows,
        sha256=reader.sha256,
        n_bytes=reader.n_bytes,
        schemas=tuple(schemas),
        spool=spool,
    )


def exact_keys(part: Part, limit: int | None = None) -> pa.Table:
    """A part's key columns for the whole-source checks, read again (a hash repeated)."""
    reader = read_part(part)
    batches: Iterator[pa.RecordBatch] = reader.batches()
    for _ in batches if limit is None else _first_rows(batches, limit):
        pass
    return reader.keys()


def _first_rows(batches: Iterator[pa.RecordBatch], limit: int) -> Iterator[pa.RecordBatch]:
    """The batches up to the first ``limit`` rows; the reader is closed once they are read."""
    left = limit
    try:
        for batch in batches:
            if left <= 0:
                return
            yield batch if batch.num_rows <= left else batch.slice(0, left)
            left -= batch.num_rows
    finally:
        close = getattr(batches, "close", None)
        if close is not None:
            close()


def _counter(reading: Callable[[int], None]) -> Callable[[int], None]:
    total = 0

    def more(count: int) -> None:
        nonlocal total
        total += count
        reading(total)

    return more


def _batches_of(
    part: Part, read: PartRead, rows: tuple[int, int] | None = None
) -> Iterator[pa.RecordBatch]:
    """A part's batches again, or of its rows ``rows`` (``(start, stop)``) only.

    From the part's spool when this process reaches it, else read again.
    """
    batches = _all_batches_of(part, read)
    if rows is None:
        yield from batches
        return
    start, stop = rows
    offset = 0
    for batch in batches:
        end = offset + batch.num_rows
        if end > start:
            first = max(start, offset)
            yield batch.slice(first - offset, min(stop, end) - first)
        offset = end
        if offset >= stop:
            return


def _all_batches_of(part: Part, read: PartRead) -> Iterator[pa.RecordBatch]:
    if read.spool is not None and os.path.exists(read.spool):
        yield from _read_spool(read.spool)
        return
    again = read_part(part)
    yield from again.batches()
    if again.sha256 != read.sha256:
        from .._exceptions import InputError

        raise InputError.at(
            part.pieces[0].name,
            None,
            None,
            "the file changed while it was read (its bytes differ between the check and the "
            "scoring of the same part). Let whatever writes it finish, then run again.",
        )


def score_part_task(
    job: Job,
    part: Part,
    read: PartRead,
    schema: pa.Schema | None,
    emit: Callable[[ScoredPart], None] | None = None,
    rows: tuple[int, int] | None = None,
    out: PartOut | None = None,
) -> ScoredPart | ShardFailed:
    """Score one part's items (or its rows ``rows``), batch by batch.

    Args:
        job: The run's plan and settings.
        part: The part (read again when its spool is out of reach).
        read: What its read task returned.
        schema: The source's common schema: item columns are returned in it; ``None``: the
            run does not keep its items.
        emit: For a task run in the caller's process: called with each batch's results, so
            that nothing of the part piles up (the task then returns an empty result).
        rows: ``(start, stop)``: score only these rows of the part (a part cut in two to
            find the item that kills its worker); ``None``: every row.
        out: Write the items and their scores to this file instead of returning them (a
            parallel run that writes ``items.parquet``); the result names the file.

    Returns:
        The score columns (and item columns, or the file), or :class:`ShardFailed`.

    Raises:
        WorkerCannotLoad: the metrics cannot be loaded in this process.
        InputError: the part changed since it was read.
        ConfigError: ``out``'s folder cannot be reached from this process.
    """
    if out is not None and not os.path.isdir(out.folder):
        raise _unreachable(out.folder)
    limit_worker_memory(job)
    result = ScoredPart({}, [] if schema is not None and out is None else None, 0)
    writer = None if out is None else ItemsWriter(Path(out.path), out.labels)
    try:
        for batch in _batches_of(part, read, rows):
            # A batch's items live until it is scored, so with the collector on each
            # collection would promote them and full passes would walk the run's caches: a
            # quarter of the 1M-line run (benchmarks/bench_pipeline.py). The collector runs
            # between batches, where any cyclic garbage a metric left is freed.
            with collector_paused():
                scored = _score_batch(job, batch, schema, keys=out is None)
            if emit is not None:
                emit(scored)
                continue
            if writer is not None and out is not None and scored.items is not None:
                # The items and their scores go to the part's file, and stay there: the
                # driver reads a label's scores from the parts when it needs them.
                writer.write_batches(scored.items, scored.scores)
                scored = attrs.evolve(scored, scores={}, items=None)
            result = joined(result, scored)
        if writer is not None and out is not None:
            result = attrs.evolve(result, files=_finish_part(writer, out))
    except BaseException as exc:
        if writer is not None:
            writer.abort()
        if isinstance(exc, ItemscoreError) or not isinstance(exc, Exception):
            raise
        # A part's failure costs its items only.
        return ShardFailed(f"shard failed: {describe_exception(exc)}")
    return result


def joined(first: ScoredPart, second: ScoredPart) -> ScoredPart:
    """Two consecutive results of a part's rows as one (a task's halves, or its batches)."""
    labels = dict.fromkeys([*first.scores, *second.scores])
    scores = {
        label: [*first.scores.get(label, []), *second.scores.get(label, [])] for label in labels
    }
    items = None
    if first.items is not None and second.items is not None:
        items = [*first.items, *second.items]
    files = (*first.files, *second.files)
    keys = (*first.keys, *second.keys)
    return ScoredPart(scores, items, first.n_rows + second.n_rows, files, keys)


def _finish_part(writer: ItemsWriter, out: PartOut) -> tuple[PartFile, ...]:
    """Close a part's file: its name, rows and SHA-256 (none: no rows, and no file)."""
    if writer.rows == 0:
        writer.abort()
        return ()
    writer.close()
    return (PartFile(out.name, writer.rows, file_sha256(out.path)),)


def _score_batch(
    job: Job, batch: pa.RecordBatch, schema: pa.Schema | None, *, keys: bool
) -> ScoredPart:
    errors = batch.column(ERROR) if ERROR in batch.schema.names else None
    scores = {label: [a] for label, a in job.score(batch_to_items(batch), errors).items()}
    kept = None if schema is None else [_item_columns(batch, schema)]
    return ScoredPart(scores, kept, batch.num_rows, keys=(keys_of(batch),) if keys else ())


def _item_columns(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """A batch's item columns in the source's common schema (no line numbers, no reasons)."""
    conformed = conform(batch, schema)
    return conformed.drop_columns([c for c in (LINE, ERROR) if c in conformed.schema.names])
