"""A run's items as the viewer reads them: a row group at a time, checked first, never all at once.

``items.parquet`` is written in row groups. :meth:`ItemStore.open` checks it as
``RunResult.load_json`` does — a plain file beside the real ``results.json``, not reached
through a link, with the SHA-256 the results record, and a footer whose row counts equal the
items the results declare, all before any row is read — and then reads only what a view
needs: the first page reads the first row group(s); a text search streams the groups' text
columns (:meth:`ItemStore.scan`); the key and score columns that filters, sorts and the
views between runs and models read are read once, a group at a time, and kept
(:meth:`ItemStore.columns`). The number of items comes from the footer the results were
checked against, so nothing is counted by reading.

Every later read opens the file again (no link followed) and refuses it when it is no longer
the file that was checked (another inode, size or time), so a set written over while the
viewer runs is never read as the old one.

``items.parquet`` written by a run's workers is a folder of parts: each part is checked as
the one file is, and the run's row groups are those of its parts, in order.

A run saved with its items inline (``RunResult.save_json``) or in ``items.jsonl`` has no row
groups: it is loaded whole, as before, and held as Arrow columns of the same names.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Generator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._exceptions import ResultsFormatError
from .._items_file import CheckedItems, check_parquet_items, open_items_file, open_part
from .._result import RunResult
from .._schema import ITEM_COLUMNS
from ..engine._store import ROW_GROUP, SCORE_PREFIX, score_field
from ..engine._table import FINGERPRINT, KEY_COLUMNS, ItemSource, RunTable, keys_of

__all__ = ["ItemStore", "score_part"]

#: The fields of a score column, each readable on its own.
SCORE_PARTS = ("status", "value", "reason", "extra")

_Stamp = tuple[int, int, int]


def score_part(label: str, part: str) -> str:
    """The column name of one field of a label's scores (``score:<label>.status``).

    Parquet reads such a field alone, so that states and values are read without the
    reasons and extras beside them.
    """
    return f"{score_field(label)}.{part}"


def _split(name: str) -> tuple[str, str | None]:
    """``(the stored column, the score field or None)`` of a column name."""
    top, _, part = name.rpartition(".")
    if top.startswith(SCORE_PREFIX) and part in SCORE_PARTS:
        return top, part
    return name, None


def _stamp(fd: int) -> _Stamp:
    st = os.fstat(fd)
    return st.st_ino, st.st_size, st.st_mtime_ns


class _Files:
    """The checked files of a run opened again as row groups are read, each checked once more.

    A row group of the run is one of a file's (of the one file, or of a part): ``where[g]``
    says which file and which of its groups.
    """

    def __init__(self, checked: CheckedItems, results: Path, where: Sequence[tuple[int, int]]):
        self.checked = checked
        self.results = results
        self.where = where
        self._open: dict[int, Any] = {}
        self._stack = contextlib.ExitStack()

    def file(self, index: int) -> Any:
        """File ``index`` as a ``ParquetFile``, refused when it is no longer the one checked."""
        found = self._open.get(index)
        if found is not None:
            return found
        import pyarrow.parquet as pq

        checked = self.checked
        shown = checked.shown(index)
        if checked.parts is None:
            handle = open_items_file(checked.path, self.results)
        else:
            handle = open_part(checked.path, checked.files[index].name, shown, self.results)
        self._stack.enter_context(handle)
        if _stamp(handle.fileno()) != checked.stamps[index]:
            raise ResultsFormatError(
                f"{self.results}: {shown} changed since the viewer checked it; open the run "
                "again from the list."
            )
        found = self._open[index] = pq.ParquetFile(handle, pre_buffer=False)
        return found

    @property
    def schema_arrow(self) -> pa.Schema:
        """The items' schema (the first file's)."""
        return self.file(0).schema_arrow

    def read_row_group(self, index: int, columns: Sequence[str]) -> pa.Table:
        """The run's row group ``index``."""
        file, group = self.where[index]
        return self.file(file).read_row_group(group, columns=list(columns))

    def close(self) -> None:
        """Close every file opened."""
        self._stack.close()


class ItemStore:
    """A run's items and scores: in its ``items.parquet`` (read by row group), or in memory.

    Build one with :meth:`open`. ``bounds[g]`` is the first row of group ``g``;
    ``bounds[-1]`` is the number of items.
    """

    def __init__(
        self,
        *,
        labels: Sequence[str],
        names: Sequence[str],
        bounds: Sequence[int],
        path: Path | None = None,
        results: Path | None = None,
        checked: CheckedItems | None = None,
        where: Sequence[tuple[int, int]] = (),
        table: pa.Table | None = None,
    ) -> None:
        #: The metric labels, in the run's order.
        self.labels = list(labels)
        #: The columns the items have (item columns, ``score:<label>``).
        self.names = frozenset(names)
        #: Where each row group starts, and the number of items last.
        self.bounds = list(bounds)
        self._path = path
        self._results = results
        self._checked = checked
        #: Per row group of the run: (its file, its group in that file).
        self._where = list(where)
        self._table = table
        self._kept: dict[str, pa.ChunkedArray] = {}
        self._lock = threading.Lock()

    # -- opening ---------------------------------------------------------------------------

    @classmethod
    def open(cls, data: Mapping[str, Any], results: Path) -> ItemStore | None:
        """The items of the results document ``data`` read from ``results``, checked.

        ``None`` when the items are not in an ``items.parquet`` (load the run whole, and
        use :meth:`of_result`).

        Raises:
            ResultsFormatError: the items file is missing, altered, a link, not Parquet, or
                holds other rows than the results declare (said before any row is read).
        """
        checked = check_parquet_items(data, results)
        if checked is None:
            return None
        labels = [
            str(m["label"])
            for m in (data.get("config") or {}).get("metrics") or []
            if isinstance(m, Mapping) and m.get("label")
        ]
        names = checked.footers[0].schema.to_arrow_schema().names
        for index, footer in enumerate(checked.footers):
            here = footer.schema.to_arrow_schema().names
            missing = [label for label in labels if score_field(label) not in here]
            if missing or "id" not in here or (index and here != names):
                what = f"no scores for {', '.join(map(repr, missing))}" if missing else "no ids"
                if not missing and "id" in here:
                    what = f"other columns than {checked.shown(0)}"
                raise ResultsFormatError(
                    f"{results}: {checked.shown(index)} does not hold this run's items ({what})."
                )
        bounds = [0]
        where = []
        for file, footer in enumerate(checked.footers):
            for index in range(footer.num_row_groups):
                bounds.append(bounds[-1] + footer.row_group(index).num_rows)
                where.append((file, index))
        return cls(
            labels=labels,
            names=names,
            bounds=bounds,
            path=checked.path,
            results=results,
            checked=checked,
            where=where,
        )

    @classmethod
    def of_result(cls, result: RunResult) -> ItemStore:
        """The items of a loaded run, as Arrow columns in memory (in groups of ``ROW_GROUP``)."""
        table = result.table
        source = table.items
        if source is None:
            raise ResultsFormatError("This run did not keep its items; nothing to view.")
        pieces = []
        start = 0
        for batch, scores in table.scored_batches(ROW_GROUP, records=False):
            columns = dict(zip(batch.schema.names, batch.columns))
            for label in table.labels:
                columns[score_field(label)] = scores[label]
            pieces.append(pa.table(columns))
            start += batch.num_rows
        whole = pa.concat_tables(pieces, promote_options="default") if pieces else pa.table({})
        bounds = [*range(0, start, ROW_GROUP), start]
        return cls(labels=table.labels, names=whole.schema.names, bounds=bounds, table=whole)

    # -- reading ---------------------------------------------------------------------------

    @property
    def n(self) -> int:
        """How many items."""
        return self.bounds[-1]

    @property
    def groups(self) -> int:
        """How many row groups."""
        return len(self.bounds) - 1

    def present(self, names: Sequence[str]) -> list[str]:
        """Those of ``names`` the items have (a score field: its column), in that order."""
        return [name for name in names if _split(name)[0] in self.names]

    def fresh(self) -> bool:
        """Whether the items file (every part) is still the one checked (always, in memory)."""
        if self._checked is None:
            return True
        for file, stamp in zip(self._checked.files, self._checked.stamps):
            try:
                st = os.stat(file, follow_symlinks=False)
            except OSError:
                return False
            if (st.st_ino, st.st_size, st.st_mtime_ns) != stamp:
                return False
        return True

    def _group(self, source: Any, index: int, columns: Sequence[str]) -> pa.Table:
        """Row group ``index`` with ``columns``, checked against the footer's count."""
        said = self.bounds[index + 1] - self.bounds[index]
        tops = list(dict.fromkeys(_split(name)[0] for name in columns))
        if self._table is not None:
            group = self._table.slice(self.bounds[index], said).select(tops)
        else:
            group = source.read_row_group(index, columns=list(columns))
            if group.num_rows != said:
                raise ResultsFormatError(
                    f"{self._results}: row group {index} of {self._path} holds "
                    f"{group.num_rows} rows, its footer says {said}."
                )
        out = {}
        for name in columns:
            top, part = _split(name)
            column = group.column(top)
            out[name] = column if part is None else pc.struct_field(column, part)
        return pa.table(out) if out else group

    @contextlib.contextmanager
    def _source(self) -> Iterator[Any]:
        """The checked files, opened again as read, refused when no longer the ones checked.

        ``None`` for items in memory.
        """
        if self._table is not None:
            yield None
            return
        assert self._checked is not None
        assert self._results is not None
        files = _Files(self._checked, self._results, self._where)
        try:
            yield files
        finally:
            files.close()

    def scan(
        self, columns: Sequence[str], start: int = 0
    ) -> Generator[tuple[int, int, pa.Table], None, None]:
        """``(group, its first row, its rows)`` from group ``start`` on, one group at a time."""
        columns = self.present(columns)
        with self._source() as source:
            for index in range(start, self.groups):
                yield index, self.bounds[index], self._group(source, index, columns)

    def take(self, positions: Sequence[int], columns: Sequence[str] | None = None) -> pa.Table:
        """The rows at ``positions``, in that order, reading only the groups that hold them."""
        if columns is None:  # the item columns and every label's score column
            columns = [*ITEM_COLUMNS, *(score_field(label) for label in self.labels)]
        chosen = self.present(columns)
        if not len(positions):
            return pa.table({name: pa.array([], self._type(name)) for name in chosen})
        wanted = np.asarray(positions, dtype=np.int64)
        where = np.searchsorted(self.bounds, wanted, side="right") - 1
        pieces: list[pa.Table] = []
        starts: dict[int, int] = {}
        with self._source() as source:
            for index in sorted(set(where.tolist())):
                starts[index] = sum(p.num_rows for p in pieces)
                pieces.append(self._group(source, index, chosen))
        joined = pa.concat_tables(pieces)
        places = [starts[g] + p - self.bounds[g] for g, p in zip(where.tolist(), wanted.tolist())]
        return joined.take(pa.array(places, pa.int64()))

    def first(self, count: int, columns: Sequence[str] | None = None) -> pa.Table:
        """The first ``count`` rows (all when fewer), reading only the groups they are in."""
        return self.take(range(min(count, self.n)), columns)

    def columns(self, names: Sequence[str]) -> dict[str, pa.ChunkedArray]:
        """Whole columns (those the items have), read a group at a time once, then kept."""
        names = self.present(names)
        with self._lock:
            missing = [name for name in names if name not in self._kept]
            if missing:
                chunks: dict[str, list[pa.Array]] = {name: [] for name in missing}
                for _, _, group in self.scan(missing):
                    for name in missing:
                        chunks[name] += group.column(name).chunks
                for name in missing:
                    kind = self._type(name)
                    self._kept[name] = pa.chunked_array(chunks[name], kind)
            return {name: self._kept[name] for name in names}

    def _type(self, name: str) -> pa.DataType:
        top, part = _split(name)
        if self._table is not None:
            kind = self._table.schema.field(top).type
        else:
            with self._source() as source:
                kind = source.schema_arrow.field(top).type
        return kind if part is None else kind.field(part).type

    # -- tables for the report and compare -------------------------------------------------

    def page_table(self, first: pa.Table) -> RunTable:
        """A table of the rows ``first`` alone (the first items: what a page holds)."""
        items = first.select(self.present(ITEM_COLUMNS))
        scores = {label: first.column(score_field(label)) for label in self.labels}
        return RunTable(keys_of(items), scores, ItemSource.of_arrow(items))

    def full_table(self, first: pa.Table) -> RunTable:
        """Every item's keys and scores (what ``compare`` reads); the items held are ``first``."""
        keys = self.columns(self.present(KEY_COLUMNS))
        scores = self.columns([score_field(label) for label in self.labels])
        table = pa.table({**keys, FINGERPRINT: self.fingerprints()})
        if not keys:
            table = pa.table({"id": pa.nulls(self.n, pa.string()), FINGERPRINT: table[0]})
        items = first.select(self.present(ITEM_COLUMNS))
        return RunTable(
            keys_of(table),
            {label: scores[score_field(label)] for label in self.labels},
            ItemSource.of_arrow(items),
        )

    def fingerprints(self) -> pa.ChunkedArray:
        """Every item's content fingerprint, from its input and answer key, made once.

        The texts are read a group at a time, as ``RunTable.from_parquet`` reads them.
        """
        with self._lock:
            if FINGERPRINT not in self._kept:
                prints = [
                    keys_of(group).column(FINGERPRINT).combine_chunks()
                    for _, _, group in self.scan(["input", "expected"])
                ]
                self._kept[FINGERPRINT] = pa.chunked_array(prints, pa.uint64())
            return self._kept[FINGERPRINT]
