"""Runs over files: every worker reads its own part, and the driver never parses the data.

A file, a list of files, a glob or a folder is opened as a source (:mod:`itemscore.inputs`)
and cut into parts (byte ranges of JSON lines, row groups of Parquet, whole files otherwise).
A run over it goes in two passes of tasks on the run's executor:

1. **read**: the driver plans the parts (reading the source once, for line starts and
   hashes), and each goes to a worker as soon as its end is found, while the rest is planned.
   Each task reads one part — hashing its bytes, parsing and converting its rows,
   checking each row — and keeps its canonical batches in a spool file (Arrow IPC, lz4) in a
   private folder of the run; it returns only the digest of the part's keys (counts, a hash
   per row: :class:`~itemscore.inputs._checks.KeyDigest`). The driver then runs the
   whole-source checks (an id twice for a model, no answer key where a metric needs one, an
   empty source) on the digests, in file order, **before anything is scored**, so a judge is
   never paid for a file that would be refused.
2. **score**: each task scores its part's items from the spool (or reads the part again where
   the spool is out of reach, checking that its bytes did not change) and returns the score
   columns and the items' key columns — and, when the run keeps its items, the item columns,
   which the driver appends to ``items.parquet`` as they arrive, in order. On a parallel
   executor a run that writes ``items.parquet`` has each task write its own rows, items and
   scores, to a file of its own in the folder ``items.parquet/`` (a hidden name while it runs);
   the task returns only the file's name, rows and SHA-256 — the scores and keys stay in the
   file, and the run table reads a label's scores (or a key column) from the parts when it
   needs them, one at a time —, and the driver renames the files ``part-00000.parquet``,
   ``part-00001.parquet``... in item order as the parts arrive. A part whose worker was lost
   gets its file from the driver (its items with errors); whatever a dead worker left is
   removed when the run's parts are done.

Serially the same tasks run in this process, one batch at a time: memory holds a batch, never
the file. The source's SHA-256 is taken while its bytes are read, never by a second read.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import attrs
import pyarrow as pa

from .._columns import ScoreColumn, score_type, without_extras
from .._exceptions import ConfigError
from .._lean import lean
from .._plan import RunPlan
from .._records import Status
from .._reducers import check_attempt_counts
from .._schema import common_schema
from .._settings import RunSettings
from ..executors import Engine
from ..inputs import Part, Source, SourceChecks
from ..inputs._fs import size as file_size
from ._dispatch import Lost, Split, Task, run_tasks
from ._part_tasks import (
    PartOut,
    PartRead,
    ScoredPart,
    _batches_of,
    _counter,
    _item_columns,
    _part_name,
    _write_part,
    exact_keys,
    joined,
    read_part_task,
    score_part_task,
)
from ._store import PART_NAME, ItemsWriter, PartFile, file_sha256
from ._table import ItemSource, RunTable, StoredKeys, keys_of
from ._tasks import Job, ShardFailed, release_memo

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
        # Each part's digest goes to the checks as it arrives, and their hashes to the spool.
        checks = source.checks(spool_dir)
        if limit is None:  # the parts are read as they are planned
            parts, reads = _read_all(
                engine, _parts(source, engine), spool_dir, settings, reading, checks
            )
        else:  # a quick look: the first rows, read here, and no further
            parts = [source.whole()]
            read = read_part_task(parts[0], spool_dir, reading and _counter(reading), limit)
            reads = [_checked(checks, parts[0], read, limit)]
        checks.finish(needing=list(needing), column=answer_column)
        n_items = sum(read.n_rows for read in reads)
        check_attempt_counts(n_items, checks.question_sizes, settings.reduce)
        del checks
        if started is not None:
            started(n_items)
        schema = common_schema([s for read in reads for s in read.schemas]) if reads else None
        item_schema = schema if keep.mode != "none" else None
        # Without items kept, only the labels whose own aggregate reads extras keep them.
        reading_extras = _reading_extras(the_plan)
        keep_extras = None if keep.mode != "none" else reading_extras
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
            reading_extras=reading_extras,
            in_parts=in_parts,
        )

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
                    return joined(a, b)

                return Split(task(index, (start, middle)), task(index, (middle, stop)), join)

            where = _where(part) if rows is None else _where_rows(part, read, rows)
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
                    items, keys = sink.items_and_keys(part, read)
                    sink.done(index, ScoredPart({}, items, read.n_rows, keys=keys), parts)
            table = sink.table()
        except BaseException:
            sink.abort()
            raise
        finally:
            release_memo(job.token)
    digest = reads[0].sha256 if len(reads) == 1 else None  # one part: the whole source's
    return SourceRun(table, source.sha256 or digest, n_items)


def _where_rows(part: Part, read: PartRead, rows: tuple[int, int]) -> str:
    """The items of rows ``rows`` of a part, by their ids (read again: a task was cut in two)."""
    ids = [i for b in _batches_of(part, read, rows) for i in b.column("id").to_pylist()]
    first, last = ids[0], ids[-1]
    return f"item {first!r}" if len(ids) == 1 else f"items {first!r} to {last!r}"


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
    """The run's private folder of read batches, removed when the run ends.

    Serial runs spool too, because it pays: scoring from the spool instead of reading and
    parsing the file a second time makes ``itemscore score`` of the 1M-line QA file with three
    metrics take 11.7 s instead of 13.2 s (median of three alternating pairs: 11.65 against
    12.99 s wall, +12%; CPU +12%), at the same peak memory (267 against 267 MB).
    """
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
    checks: SourceChecks,
) -> tuple[list[Part], list[PartRead]]:
    """The read pass: every part, in order (a lost read is done here instead).

    ``parts`` may still be planning its next part while the workers read the first ones.
    Each part's digest goes to ``checks`` as it arrives.
    """
    planned: list[Part] = []
    reads: dict[int, PartRead] = {}
    inline = not engine.parallel
    more = reading and _counter(reading)

    def done(index: int, result: Any) -> None:
        if isinstance(result, Lost):  # the worker died reading: read it here
            result = read_part_task(planned[index], spool_dir, more)
        elif not inline and more is not None:
            more(result.n_rows)
        reads[index] = _checked(checks, planned[index], result, None)

    def tasks() -> Iterator[Task]:
        follow = more if inline else None
        for part in parts:
            planned.append(part)
            yield Task(read_part_task, (part, spool_dir, follow), _where(part))

    run_tasks(engine, tasks(), retries=settings.retries, deadline=None, on_done=done, settle=True)
    return planned, [reads[index] for index in range(len(planned))]


def _checked(checks: SourceChecks, part: Part, read: PartRead, limit: int | None) -> PartRead:
    """``read`` without its digest, which ``checks`` takes."""
    assert read.digest is not None
    checks.add(read.digest, functools.partial(exact_keys, part, limit))
    return attrs.evolve(read, digest=None)


class _Sink:
    """Where scored parts go, in order: the score columns, and the items as ``keep`` says.

    With ``keep.mode == "parquet"`` every batch is appended to the items file as it arrives,
    score columns whole; memory keeps the scores without their ``extra`` texts (those are in
    the file), but for the labels whose own aggregate reads them. With ``in_parts`` the items
    file is a folder whose parts the tasks write, scores included: each part's files are
    renamed, in order, ``part-00000.parquet``, ``part-00001.parquet``..., and no score comes
    back to this process (the run table reads a label's scores from the parts when needed).
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
        #: The run table's key columns, batch by batch (none when the parts hold them).
        self.keys: list[pa.Table] = []
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
        return PartOut(str(self.folder), name, tuple(self.labels))

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
        items, keys = self.items_and_keys(part, read, rows)
        n_rows = read.n_rows if rows is None else rows[1] - rows[0]
        column = ScoreColumn.filled("", n_rows, Status.ERROR, reason).arrow
        scores = {label: [column] for label in self.labels}
        if items is not None and len(items) != 1:  # one score array per item batch
            scores = {label: _split(column, items) for label in self.labels}
        failed = ScoredPart(scores, items, n_rows, keys=keys)
        out = self.out(index, rows or (0, n_rows))
        if out is not None:  # in the file the lost task would have written (what it left goes)
            return attrs.evolve(failed, items=None, files=_write_part(out, failed))
        return failed

    def items_and_keys(
        self, part: Part, read: PartRead, rows: tuple[int, int] | None = None
    ) -> tuple[list[pa.RecordBatch] | None, tuple[pa.Table, ...]]:
        """A part's item columns (if kept) and keys (unless the parts hold them), read here."""
        batches = list(_batches_of(part, read, rows))
        items = None if self.schema is None else [_item_columns(b, self.schema) for b in batches]
        keys = () if self.folder is not None else tuple(keys_of(b) for b in batches)
        return items, keys

    def _take(self, scored: ScoredPart) -> None:
        self.keys.extend(lean(keys) for keys in scored.keys)
        if self.folder is not None:
            self._rename(scored.files)
        elif scored.items is not None and self.keep.mode == "parquet":
            assert self.keep.path is not None
            if self.writer is None:
                self.writer = ItemsWriter(self.keep.path, self.labels)
            self.writer.write_batches(scored.items, scored.scores)
        elif scored.items is not None and self.keep.mode == "memory":
            self.items.extend(scored.items)
        # With workers writing parts, no score comes here: the table reads them from the parts.
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

    def table(self) -> RunTable:
        """The run table of everything taken."""
        if self.folder is not None:  # the keys and scores are in the workers' parts, and stay
            present = frozenset(k for read in self.reads for k in read.present)
            keys: pa.Table | StoredKeys = StoredKeys(sum(r.n_rows for r in self.reads), present)
            return RunTable(keys, {}, self._finish_parts(), light=self.light, stored=self.labels)
        keys = pa.concat_tables(self.keys) if self.keys else keys_of([])
        scores = {
            label: pa.chunked_array(arrays, score_type()) for label, arrays in self.scores.items()
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
        if self.writer is None:  # nothing scored (no item-level metric): items only
            self.writer = ItemsWriter(self.keep.path, [])
        self.writer.close()
        return RunTable(keys, scores, ItemSource.of_parquet(self.keep.path), light=self.light)

    def abort(self) -> None:
        """Give up the items file (or folder of parts) being written."""
        if self.writer is not None:
            self.writer.abort()
        if self.folder is not None:
            _remove_folder(self.folder)


def _remove_folder(folder: Path) -> None:
    """Remove a folder of parts that workers may still be writing into.

    It is renamed away first: its path is gone at once, so a worker still running opens no
    new file in it (it finds no folder), and the removal cannot race with one that does.
    """
    trash = folder.with_name(f".{folder.name}.removed-{os.getpid()}")
    try:
        os.rename(folder, trash)
    except OSError:
        trash = folder
    shutil.rmtree(trash, ignore_errors=True)


def _split(column: pa.StructArray, items: Sequence[pa.RecordBatch]) -> list[pa.StructArray]:
    out, start = [], 0
    for batch in items:
        out.append(column.slice(start, batch.num_rows))
        start += batch.num_rows
    return out
