"""Runs over files: every worker reads its own part, and the driver never parses the data.

A file, a list of files, a glob or a folder is opened as a source (:mod:`itemscore.inputs`)
and cut into parts (byte ranges of JSON lines, row groups of Parquet, whole files otherwise).
A run over it goes in two passes of tasks on the run's executor:

1. **read**: the driver plans the parts (reading the source once, for line starts and
   hashes), and each goes to a worker as soon as its end is found, while the rest is planned.
   Each task reads one part — hashing its bytes, parsing and converting its rows,
   checking each row — and keeps its canonical batches in a spool file (Arrow IPC, lz4) in a
   private folder of the run; it returns only the part's key columns. The driver then runs the
   whole-source checks (an id twice for a model, no answer key where a metric needs one, an
   empty source) on the keys, in file order, **before anything is scored**, so a judge is
   never paid for a file that would be refused.
2. **score**: each task scores its part's items from the spool (or reads the part again where
   the spool is out of reach, checking that its bytes did not change) and returns the score
   columns — and, when the run keeps its items, the item columns, which the driver appends to
   ``items.parquet`` as they arrive, in order. On a parallel executor a run that writes
   ``items.parquet`` has each task write its own rows, items and scores, to a file of its own
   in the folder ``items.parquet/`` (a hidden name while it runs); the task returns the
   file's name, rows and SHA-256, and the driver renames the files ``part-00000.parquet``,
   ``part-00001.parquet``... in item order as the parts arrive. A part whose worker was lost
   gets its file from the driver (its items with errors); whatever a dead worker left is
   removed when the run's parts are done.

Serially the same tasks run in this process, one batch at a time: memory holds a batch, never
the file. The source's SHA-256 is taken while its bytes are read, never by a second read.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import attrs
import pyarrow as pa

from .._columns import SCORE_TYPE, ScoreColumn, without_extras
from .._exceptions import ConfigError, ItemscoreError, describe_exception
from .._lean import lean
from .._plan import RunPlan
from .._records import Status
from .._reducers import check_attempt_counts
from .._schema import ERROR, LINE, batch_to_items, common_schema, conform
from .._settings import RunSettings
from ..executors import Engine
from ..inputs import Part, Source, collector_paused, read_part
from ..inputs._checks import KEY_SCHEMA
from ..inputs._fs import size as file_size
from ._dispatch import Lost, Split, Task, run_tasks
from ._scores import unreadable
from ._shard import score_shard
from ._store import PART_NAME, ItemsWriter, PartFile, file_sha256
from ._table import ItemSource, RunTable, keys_of
from ._tasks import Job, ShardFailed, limit_worker_memory, release_memo

__all__ = ["Keep", "PartRead", "ScoredPart", "score_source"]

#: About this many bytes of input per part, whatever the executor: progress, memory and the
#: spread of work over workers move in steps of it.
PART_BYTES = 12 << 20
#: Parts per worker on a parallel executor, at least.
PARTS_PER_WORKER = 3


@attrs.frozen
class Keep:
    """What a run keeps of its items: nothing, Arrow columns in memory, or a Parquet file."""

    #: ``"none"`` (the command line without reports), ``"memory"``, or ``"parquet"``.
    mode: Literal["none", "memory", "parquet"]
    #: The Parquet file (``items.parquet`` of the report set being written); on a parallel
    #: executor, the folder of the parts the workers write.
    path: Path | None = None


@attrs.frozen
class PartRead:
    """What a read task returns: a part's keys, what it held, where its batches wait."""

    #: The part's index.
    index: int
    #: The run table's key columns of the part's rows (``None`` once they are in the table).
    keys: pa.Table | None
    #: The whole-source checks' key columns of the part's rows but the ids, which are the
    #: keys' (``None`` once checked).
    checks: pa.Table | None
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


@attrs.frozen
class PartOut:
    """Where a score task writes its items and scores: a file of its own in the parts folder."""

    #: The folder (``items.parquet/`` of the report set being written).
    folder: str
    #: The file's name while the run goes (hidden: dataset readers skip it).
    name: str
    #: The labels of the score columns, in order.
    labels: tuple[str, ...]
    #: Labels whose ``extra`` texts stay in the file only (not sent back).
    light: frozenset[str] = frozenset()

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
        for index, items in enumerate(scored.items or ()):
            writer.write(items, {label: scored.scores[label][index] for label in out.labels})
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
    """Read one part: check its rows, spool its batches, return its keys.

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
    keys: list[pa.Table] = []
    schemas: dict[pa.Schema, None] = {}
    for batch in batches:
        keys.append(keys_of(batch))
        schemas.setdefault(batch.schema, None)
        if rows is not None:
            rows(batch.num_rows)
    checks = reader.keys()
    n_rows = sum(k.num_rows for k in keys)  # of the rows kept (a limit cuts the last batch)
    empty = keys_of(pa.table({"id": pa.array([], pa.string())}))
    if checks.num_rows != n_rows:
        checks = checks.slice(0, n_rows)
    return PartRead(
        index=part.index,
        keys=pa.concat_tables(keys) if keys else empty,
        checks=checks.drop_columns(list(_KEYS_CHECKED)),  # the keys' own: sent once
        n_rows=n_rows,
        sha256=reader.sha256,
        n_bytes=reader.n_bytes,
        schemas=tuple(schemas),
        spool=spool,
    )


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
        out: Write the items and their scores to this file instead of returning the items
            (a parallel run that writes ``items.parquet``); the result names the file.

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
    plan = job.the_plan()
    result = ScoredPart({}, [] if schema is not None and out is None else None, 0)
    writer = None if out is None else ItemsWriter(Path(out.path), out.labels)
    try:
        for batch in _batches_of(part, read, rows):
            # A batch's items live until it is scored, so with the collector on each
            # collection would promote them and full passes would walk the run's caches: a
            # quarter of the 1M-line run (benchmarks/bench_pipeline.py). The collector runs
            # between batches, where any cyclic garbage a metric left is freed.
            with collector_paused():
                scored = _score_batch(plan, job, batch, schema)
            if emit is not None:
                emit(scored)
                continue
            if writer is not None and out is not None and scored.items is not None:
                # The items go to the part's file; the extras only the file keeps stay there.
                (items,) = scored.items
                writer.write(items, {label: scored.scores[label][0] for label in out.labels})
                light = {
                    label: [without_extras(a) for a in scored.scores[label]] for label in out.light
                }
                scored = attrs.evolve(scored, scores={**scored.scores, **light}, items=None)
            for label, arrays in scored.scores.items():
                result.scores.setdefault(label, []).extend(arrays)
            if result.items is not None and scored.items is not None:
                result.items.extend(scored.items)
            result = attrs.evolve(result, n_rows=result.n_rows + scored.n_rows)
        if writer is not None and out is not None:
            result = attrs.evolve(result, files=_finish_part(writer, out))
    except ItemscoreError:
        _abort(writer)
        raise
    except Exception as exc:  # noqa: BLE001 - a part's failure costs its items only
        _abort(writer)
        return ShardFailed(f"shard failed: {describe_exception(exc)}")
    except BaseException:
        _abort(writer)
        raise
    return result


def _finish_part(writer: ItemsWriter, out: PartOut) -> tuple[PartFile, ...]:
    """Close a part's file: its name, rows and SHA-256 (none: no rows, and no file)."""
    if writer.rows == 0:
        writer.abort()
        return ()
    writer.close()
    return (PartFile(out.name, writer.rows, file_sha256(out.path)),)


def _abort(writer: ItemsWriter | None) -> None:
    if writer is not None:
        writer.abort()


def _score_batch(
    plan: RunPlan, job: Job, batch: pa.RecordBatch, schema: pa.Schema | None
) -> ScoredPart:
    items = batch_to_items(batch)
    columns = score_shard(plan, items, job.settings, None, job.memo(), job.deadline)
    errors = batch.column(ERROR) if ERROR in batch.schema.names else None
    scores: dict[str, list[pa.StructArray]] = {}
    for label, column in columns.items():
        array = column.array(extras=job.sends_extras(label))
        if errors is not None and errors.null_count < len(errors):
            array = unreadable(array, errors)
        scores[label] = [array]
    kept = None if schema is None else [_item_columns(batch, schema)]
    return ScoredPart(scores, kept, batch.num_rows)


# -- the run over a source --------------------------------------------------------------------


@attrs.frozen
class SourceRun:
    """What scoring a source gave: the table, and what the source turned out to be."""

    #: The run table (keys, scores, and the items where ``keep`` said).
    table: RunTable
    #: The SHA-256 of every byte read, in order.
    sha256: str | None
    #: Rows read.
    n_rows: int


def score_source(
    the_plan: RunPlan,
    source: Source,
    settings: RunSettings,
    engine: Engine,
    tick: Callable[[int], None],
    *,
    keep: Keep,
    needing: Sequence[str],
    answer_column: str = "expected",
    reading: Callable[[int], None] | None = None,
    started: Callable[[int], None] | None = None,
    limit: int | None = None,
) -> SourceRun:
    """Read, check and score ``source`` on ``engine``; see the module's docstring.

    Args:
        the_plan: The run's metrics.
        source: The opened source.
        settings: The run's settings.
        engine: The started executor.
        tick: Progress of scoring (items x metrics).
        keep: What to keep of the items.
        needing: Labels of the metrics that need an answer key (for the whole-source check).
        answer_column: The column answers are read from (for that check's message).
        reading: Progress of reading (rows read so far).
        started: Called with the number of rows once every check passed, before scoring.
        limit: Read only the source's first ``limit`` rows (in this process).

    Raises:
        InputError: the source is malformed, or fails a whole-source check.
    """
    labels = [pm.label for pm in the_plan.metrics if not pm.is_corpus]
    inline = not engine.parallel
    with _spool_folder() as spool_dir:
        if limit is None:  # the parts are read as they are planned
            parts, reads = _read_all(engine, _parts(source, engine), spool_dir, settings, reading)
        else:  # a quick look: the first rows, read here, and no further
            parts = [source.whole()]
            read = read_part_task(parts[0], spool_dir, reading and _counter(reading), limit)
            reads = [_received(read)]
        checks = source.checks()
        for read in reads:
            checks.add(_check_columns(read))
        checks.finish(needing=list(needing), column=answer_column)
        del checks
        keys = pa.concat_tables([read.keys for read in reads])
        check_attempt_counts(keys, settings.reduce)
        # What is checked is dropped, and what is in the table is not sent again with the
        # score tasks: ten million rows' check columns are 400 MB.
        reads = [attrs.evolve(read, keys=None, checks=None) for read in reads]
        if started is not None:
            started(keys.num_rows)
        schema = common_schema([s for read in reads for s in read.schemas]) if reads else None
        item_schema = schema if keep.mode != "none" else None
        # Without items kept, only the labels whose own aggregate reads extras keep them.
        keep_extras = None if keep.mode != "none" else _reading_extras(the_plan)
        deadline = None if settings.deadline is None else time.time() + settings.deadline
        job = Job.of(
            the_plan, settings, portable=not inline, keep_extras=keep_extras, deadline=deadline
        )
        # With workers, each writes the items of its part into the folder items.parquet/.
        in_parts = keep.mode == "parquet" and not inline and item_schema is not None
        sink = _Sink(
            labels,
            keep,
            reads,
            item_schema,
            tick,
            counted=not inline,
            reading_extras=_reading_extras(the_plan),
            in_parts=in_parts,
        )
        offsets = list(itertools.accumulate((read.n_rows for read in reads), initial=0))
        ids = keys.column("id")

        def task(index: int, rows: tuple[int, int] | None = None) -> Task:
            """Part ``index``'s score task (of its rows ``rows``), which cuts itself in two."""
            part, read = parts[index], reads[index]
            start, stop = rows or (0, read.n_rows)

            def split() -> Split:
                middle = (start + stop) // 2
                sink.forget(index, (start, stop))  # what a dead worker left of the whole

                def join(first: Any, second: Any) -> ScoredPart:
                    a = sink.piece(index, (start, middle), first, parts)
                    b = sink.piece(index, (middle, stop), second, parts)
                    return _joined(a, b)

                return Split(task(index, (start, middle)), task(index, (middle, stop)), join)

            where = _where(part)
            if rows is not None:
                first = ids[offsets[index] + start].as_py()
                last = ids[offsets[index] + stop - 1].as_py()
                where = f"item {first!r}" if stop - start == 1 else f"items {first!r} to {last!r}"
            emit = sink.emit_for(index) if inline else None
            out = sink.out(index, (start, stop))
            return Task(
                score_part_task,
                (job, part, read, item_schema, emit, rows, out),
                where,
                split if stop - start > 1 and not inline else None,
            )

        tasks = [task(index) for index in range(len(parts))]
        try:
            if labels:
                run_tasks(
                    engine,
                    tasks,
                    retries=settings.retries,
                    deadline=settings.deadline,
                    on_done=lambda index, result: sink.done(index, result, parts),
                )
            else:  # only corpus metrics: the items, unscored here
                for index, (part, read) in enumerate(zip(parts, reads)):
                    items = None
                    if item_schema is not None:
                        items = [_item_columns(b, item_schema) for b in _batches_of(part, read)]
                    sink.done(index, ScoredPart({}, items, read.n_rows), parts)
            table = sink.table(keys)
        except BaseException:
            sink.abort()
            raise
        finally:
            release_memo(job.token)
    return SourceRun(table, source.sha256 or _digest_of(reads), sum(r.n_rows for r in reads))


#: The columns of the whole-source checks that the keys hold too: sent once, with the keys.
_KEYS_CHECKED = ("id", "model", "attempt")


def _check_columns(read: PartRead) -> pa.Table:
    """The whole-source checks' columns of a part (:data:`~itemscore.inputs._checks.KEY_SCHEMA`)."""
    assert read.keys is not None
    assert read.checks is not None
    table = read.checks
    for name in _KEYS_CHECKED:
        table = table.add_column(
            KEY_SCHEMA.get_field_index(name), KEY_SCHEMA.field(name), read.keys.column(name)
        )
    return table


def _received(read: PartRead) -> PartRead:
    """A part's read as the driver keeps it: its all-null key columns lean."""
    if read.keys is None:
        return read
    return attrs.evolve(read, keys=lean(read.keys), checks=lean(read.checks))


def _digest_of(reads: Sequence[PartRead]) -> str | None:
    return reads[0].sha256 if len(reads) == 1 else None


def _reading_extras(the_plan: RunPlan) -> frozenset[str]:
    from .._metric import Metric

    return frozenset(
        pm.label for pm in the_plan.metrics if type(pm.metric).aggregate is not Metric.aggregate
    )


def _parts(source: Source, engine: Engine) -> Iterator[Part]:
    """The source's parts, each as soon as it is planned."""
    size = sum(file_size(path) for path, _ in source.files)
    count = -(-size // PART_BYTES)
    if engine.parallel:
        workers = engine.workers or 1
        # A whole number of parts per worker: with one part more, the last would be read and
        # scored by one worker while the others wait (a twentieth of a 1M-line run on two).
        count = -(-max(count, workers * PARTS_PER_WORKER) // workers) * workers
    if count <= 1 and len(source.files) == 1:
        return iter([source.whole()])
    return source.iter_parts(max(1, count))


def _where(part: Part) -> str:
    piece = part.pieces[0]
    if piece.row_groups is not None:
        return f"{piece.name} row groups {piece.row_groups[0]}-{piece.row_groups[-1]}"
    if piece.start or piece.stop is not None:
        return f"{piece.name} from line {piece.first_line}"
    return piece.name


@contextlib.contextmanager
def _spool_folder() -> Iterator[str]:
    folder = tempfile.mkdtemp(prefix="itemscore-spool-")  # 0700: the run's own
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _read_all(
    engine: Engine,
    parts: Iterator[Part],
    spool_dir: str,
    settings: RunSettings,
    reading: Callable[[int], None] | None,
) -> tuple[list[Part], list[PartRead]]:
    """The read pass: every part, and its keys, in order (a lost read is done here instead).

    ``parts`` may still be planning its next part while the workers read the first ones.
    """
    planned: list[Part] = []
    reads: dict[int, PartRead] = {}
    rows = 0
    inline = not engine.parallel

    def more(count: int) -> None:
        nonlocal rows
        rows += count
        if reading is not None:
            reading(rows)

    def done(index: int, result: Any) -> None:
        if isinstance(result, Lost):  # the worker died reading: read it here
            result = read_part_task(planned[index], spool_dir, more)
        elif not inline:
            more(result.n_rows)
        reads[index] = _received(result)

    def tasks() -> Iterator[Task]:
        follow = more if inline else None
        for part in parts:
            planned.append(part)
            yield Task(read_part_task, (part, spool_dir, follow), _where(part))

    run_tasks(engine, tasks(), retries=settings.retries, deadline=None, on_done=done, settle=True)
    return planned, [reads[index] for index in range(len(planned))]


class _Sink:
    """Where scored parts go, in order: the score columns, and the items as ``keep`` says.

    With ``keep.mode == "parquet"`` every batch is appended to the items file as it arrives,
    score columns whole; memory keeps the scores without their ``extra`` texts (those are in
    the file), but for the labels whose own aggregate reads them. With ``in_parts`` the items
    file is a folder whose parts the tasks write: each part's files are renamed, in order,
    ``part-00000.parquet``, ``part-00001.parquet``...
    """

    def __init__(
        self,
        labels: Sequence[str],
        keep: Keep,
        reads: Sequence[PartRead],
        schema: pa.Schema | None,
        tick: Callable[[int], None],
        *,
        counted: bool,
        reading_extras: frozenset[str] = frozenset(),
        in_parts: bool = False,
    ) -> None:
        self.labels = list(labels)
        self.keep = keep
        self.reads = list(reads)
        self.schema = schema
        self.tick = tick
        self.counted = counted
        self.scores: dict[str, list[pa.StructArray]] = {label: [] for label in labels}
        self.items: list[pa.RecordBatch] = []
        self.pending: dict[int, ScoredPart] = {}
        self.next = 0
        self.writer: ItemsWriter | None = None
        #: Labels whose extras stay only in the items file.
        self.light = frozenset(labels) - reading_extras if keep.mode == "parquet" else frozenset()
        #: The folder of parts the tasks write (``None``: one file, written here).
        self.folder = keep.path if in_parts else None
        #: The parts renamed so far, in order.
        self.parts: list[PartFile] = []
        if self.folder is not None:
            self.folder.mkdir(exist_ok=True)

    def out(self, index: int, rows: tuple[int, int]) -> PartOut | None:
        """Where the task of rows ``rows`` of part ``index`` writes its items (if it does)."""
        if self.folder is None:
            return None
        name = _part_name(index, rows)
        return PartOut(str(self.folder), name, tuple(self.labels), self.light)

    def forget(self, index: int, rows: tuple[int, int]) -> None:
        """Remove what a task left of rows ``rows`` of part ``index`` (it is cut in two)."""
        if self.folder is not None:
            (self.folder / _part_name(index, rows)).unlink(missing_ok=True)

    def emit_for(self, index: int) -> Callable[[ScoredPart], None]:
        """The callback of an in-process task: its batches go straight where they belong."""

        def emit(scored: ScoredPart) -> None:
            self._take(scored)
            self.tick(scored.n_rows * len(self.labels))

        return emit

    def done(self, index: int, result: Any, parts: Sequence[Part]) -> None:
        """A task ended: keep its part, in order, once the parts before it are kept."""
        read = self.reads[index]
        if isinstance(result, (Lost, ShardFailed)):
            result = self._failed(index, parts[index], read, result.reason)
        elif self.counted:
            self.tick(read.n_rows * len(self.labels))
        out = self.out(index, (0, read.n_rows))
        if out is not None and result.items is not None:  # items read here: their file too
            result = attrs.evolve(result, items=None, files=_write_part(out, result))
        self.pending[index] = result
        while self.next in self.pending:
            self._take(self.pending.pop(self.next))
            self.next += 1

    def piece(
        self, index: int, rows: tuple[int, int], result: Any, parts: Sequence[Part]
    ) -> ScoredPart:
        """What the task of rows ``rows`` of part ``index`` gave, lost or not."""
        if isinstance(result, (Lost, ShardFailed)):
            return self._failed(index, parts[index], self.reads[index], result.reason, rows)
        scored: ScoredPart = result
        return scored

    def _failed(
        self,
        index: int,
        part: Part,
        read: PartRead,
        reason: str,
        rows: tuple[int, int] | None = None,
    ) -> ScoredPart:
        """A part (or rows of it) whose task was lost: its items get errors.

        The items are read here, if kept.
        """
        items = None
        if self.schema is not None:
            items = [_item_columns(b, self.schema) for b in _batches_of(part, read, rows)]
        n_rows = read.n_rows if rows is None else rows[1] - rows[0]
        column = ScoreColumn.filled("", n_rows, Status.ERROR, reason).arrow
        scores = {label: [column] for label in self.labels}
        if items is not None and len(items) != 1:  # one score array per item batch
            scores = {label: _split(column, items) for label in self.labels}
        failed = ScoredPart(scores, items, n_rows)
        out = self.out(index, rows or (0, n_rows))
        if out is not None:  # in the file the lost task would have written (what it left goes)
            return attrs.evolve(failed, items=None, files=_write_part(out, failed))
        return failed

    def _take(self, scored: ScoredPart) -> None:
        if self.folder is not None:
            self._rename(scored.files)
        elif scored.items is not None and self.keep.mode == "parquet":
            assert self.keep.path is not None
            if self.writer is None:
                self.writer = ItemsWriter(self.keep.path, self.labels)
            for index, batch in enumerate(scored.items):
                self.writer.write(
                    batch, {label: scored.scores[label][index] for label in self.labels}
                )
        elif scored.items is not None and self.keep.mode == "memory":
            self.items.extend(scored.items)
        for label in self.labels:
            arrays = scored.scores.get(label, [])
            light = label in self.light
            self.scores[label].extend(lean(without_extras(a) if light else a) for a in arrays)

    def _rename(self, files: Sequence[PartFile]) -> None:
        """Give a part's files their names in the folder, in order."""
        assert self.folder is not None
        for file in files:
            name = PART_NAME.format(len(self.parts))
            try:
                os.replace(self.folder / file.file, self.folder / name)
            except FileNotFoundError:
                raise ConfigError(
                    f"A worker wrote the items of its part as {file.file} in {self.folder}, "
                    "but that file is not there as this process sees the folder: the workers "
                    "write to another file system than this process. With workers on other "
                    "machines, --out must name a folder on a file system that every worker "
                    "and this process share."
                ) from None
            self.parts.append(attrs.evolve(file, file=name))

    def _finish_parts(self) -> ItemSource:
        """The folder's parts once all are in: anything else in it (a dead worker's) removed."""
        assert self.folder is not None
        if not self.parts:  # no rows: one empty part says what a row holds
            name = PART_NAME.format(0)
            ItemsWriter(self.folder / name, self.labels).close()
            self.parts.append(PartFile(name, 0, file_sha256(self.folder / name)))
        kept = {part.file for part in self.parts}
        for entry in os.scandir(self.folder):
            if entry.name not in kept:
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
        return ItemSource.of_parquet(self.folder, self.parts)

    def table(self, keys: pa.Table) -> RunTable:
        """The run table of everything taken."""
        scores = {
            label: pa.chunked_array(arrays, SCORE_TYPE) for label, arrays in self.scores.items()
        }
        if self.keep.mode == "none":
            return RunTable(keys, scores, None)
        if self.keep.mode == "memory":
            if self.items:
                return RunTable(
                    keys, scores, ItemSource.of_arrow(pa.Table.from_batches(self.items))
                )
            return RunTable(keys, scores, ItemSource.of_list([]))
        assert self.keep.path is not None
        if self.folder is not None:
            return RunTable(keys, scores, self._finish_parts(), light=self.light)
        if self.writer is None:  # nothing scored (no item-level metric): items only
            self.writer = ItemsWriter(self.keep.path, [])
        self.writer.close()
        return RunTable(keys, scores, ItemSource.of_parquet(self.keep.path), light=self.light)

    def abort(self) -> None:
        """Give up the items file (or folder of parts) being written."""
        if self.writer is not None:
            self.writer.abort()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def _item_columns(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """A batch's item columns in the source's common schema (no line numbers, no reasons)."""
    conformed = conform(batch, schema)
    return conformed.drop_columns([c for c in (LINE, ERROR) if c in conformed.schema.names])


def _joined(first: ScoredPart, second: ScoredPart) -> ScoredPart:
    """The result of a part's rows scored in two pieces, in order."""
    labels = dict.fromkeys([*first.scores, *second.scores])
    scores = {
        label: [*first.scores.get(label, []), *second.scores.get(label, [])] for label in labels
    }
    items = None
    if first.items is not None and second.items is not None:
        items = [*first.items, *second.items]
    files = (*first.files, *second.files)
    return ScoredPart(scores, items, first.n_rows + second.n_rows, files)


def _split(column: pa.StructArray, items: Sequence[pa.RecordBatch]) -> list[pa.StructArray]:
    out, start = [], 0
    for batch in items:
        out.append(column.slice(start, batch.num_rows))
        start += batch.num_rows
    return out
