"""``RunTable``: a run's items and their scores, column by column, in item order.

One object holds what a run produced, whoever made it (a fresh run, :func:`~itemscore.rescore`,
:meth:`~itemscore.RunResult.load_json`):

- the **keys**: ``id``, ``model``, ``group``, ``cluster``, ``attempt`` — what aggregation,
  pairing and group tables need — in memory, or **stored** (:class:`StoredKeys`) in the items
  file that holds them (the parts a run's workers wrote), a column read when asked for;
- the **scores**: one :func:`~itemscore._columns.score_type` column per metric label, in
  memory, or **stored**: left in the items file that holds them (a run that writes
  ``items.parquet``), read when a label is asked for, one label in memory at a time (a run
  that keeps its items in a file may also leave the ``extra`` texts of a label in memory out,
  when its aggregate does not read them);
- the **items** themselves, where they are: the caller's list of
  :class:`~itemscore.ItemResult` (items given from Python), Arrow item columns in memory, a
  Parquet file (``items.parquet`` of a report set) or a folder of Parquet parts (the same,
  written by a run's workers), or nowhere (the command line without
  ``--out`` keeps nothing it will not show).

``RunResult.items`` and ``ItemResult.scores`` are the public view of the table
(:class:`ScoredItems`); reports read it in batches through :meth:`RunTable.rows`; ``compare``
through :meth:`RunTable.codes` and :meth:`RunTable.values`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, overload

import numpy as np
import pyarrow as pa

from .._columns import ScoreColumn, score_type, scored_items
from .._lean import lean, nulls
from .._records import ItemResult
from .._schema import ITEM_COLUMNS, batch_to_items, items_to_batch
from ._keys import (
    FINGERPRINT,
    KEY_COLUMNS,
    KEY_TYPES,
    OPTIONAL_KEYS,
    ROWS_BATCH,
    ItemSource,
    StoredKeys,
    fingerprints,
    keys_of,
)
from ._store import ROW_GROUP, SCORE_PREFIX, ItemsWriter, PartFile, score_field

__all__ = [
    "FINGERPRINT",
    "KEY_COLUMNS",
    "OPTIONAL_KEYS",
    "ROWS_BATCH",
    "SCORE_PREFIX",
    "ItemSource",
    "RunTable",
    "ScoredItems",
    "StoredKeys",
    "fingerprints",
    "keys_of",
]


class RunTable:
    """A run's items and scores as columns (see the module's docstring).

    Args:
        keys: The key columns (:data:`KEY_COLUMNS`), one row per item; or
            :class:`StoredKeys`: they are in ``items``, read when first asked for.
        scores: One :func:`~itemscore._columns.score_type` column per label, in the run's
            order.
        items: Where the items are; ``None``: not kept.
        light: Labels whose ``extra`` texts are left in the items file.
        stored: Labels whose whole score columns are left in the items file (the parts a
            run's workers wrote).
        order: Every label, in the run's order (default: those of ``scores``, then
            ``stored``).
    """

    __slots__ = ("_cache", "_held", "_keys", "_memory", "_order", "_stored_keys", "items", "light")

    def __init__(
        self,
        keys: pa.Table | StoredKeys,
        scores: Mapping[str, pa.StructArray | pa.ChunkedArray],
        items: ItemSource | None,
        *,
        light: Collection[str] = (),
        stored: Sequence[str] = (),
        order: Sequence[str] | None = None,
    ) -> None:
        #: The key columns (all-null ones lean: see :mod:`itemscore._lean`), once read.
        self._keys = None if isinstance(keys, StoredKeys) else lean(keys)
        self._stored_keys = keys if isinstance(keys, StoredKeys) else None
        self._memory: dict[str, pa.ChunkedArray] = {
            label: lean(pa.chunked_array([column]) if isinstance(column, pa.Array) else column)
            for label, column in scores.items()
        }
        #: The labels in ``order``; by default those in memory, then those ``stored``.
        self._order = [*self._memory, *(label for label in stored if label not in self._memory)]
        if order is not None:
            if sorted(order) != sorted(self._order):
                raise ValueError(f"The order {list(order)} names other labels than {self._order}.")
            self._order = list(order)
        #: Where the items are, or ``None`` when they were not kept.
        self.items = items
        #: Labels whose ``extra`` texts are only in the items file (a large run keeps them
        #: there, not in memory): read from it when a row is read.
        self.light = frozenset(light) & set(self._order)
        if (self.light or len(self._order) > len(self._memory) or self._keys is None) and (
            items is None or items.path is None
        ):
            raise ValueError("Scores left in the items file need the file that holds them.")
        self._cache: dict[Any, Any] = {}
        #: The one stored label read into memory: (label, column, ScoreColumn or None).
        self._held: tuple[str, pa.ChunkedArray, ScoreColumn | None] | None = None
        for label, column in self._memory.items():
            if len(column) != len(self):
                raise ValueError(
                    f"The score column {label!r} has {len(column)} rows for {len(self)} items."
                )

    # -- building --------------------------------------------------------------------------

    @classmethod
    def of_items(
        cls,
        items: Sequence[ItemResult],
        scores: Mapping[str, pa.StructArray | pa.ChunkedArray] | None = None,
    ) -> RunTable:
        """A table over items given from Python (their own ``scores`` are not read)."""
        return cls(keys_of(items), scores or {}, ItemSource.of_list(items))

    @classmethod
    def of_scored_items(cls, items: Sequence[ItemResult]) -> RunTable:
        """A table over items that carry their scores (``item.scores``), e.g. loaded ones."""
        labels: dict[str, None] = {}
        for item in items:
            labels.update(dict.fromkeys(item.scores))
        scores: dict[str, pa.StructArray] = {}
        bare = [item.with_scores({}) if item.scores else item for item in items]
        for label in labels:
            column = [item.scores[label] for item in items if label in item.scores]
            if len(column) != len(items):
                raise ValueError(
                    f"The items do not all have a score for {label!r}; every item of a run "
                    "has one score per label."
                )
            scores[label] = ScoreColumn.from_scores(label, column).array()
        return cls(keys_of(bare), scores, ItemSource.of_list(bare))

    def with_scores(
        self, scores: Mapping[str, pa.StructArray | pa.ChunkedArray], *, replace: bool = False
    ) -> RunTable:
        """A table with ``scores`` added (a label already present is replaced in place).

        With ``replace``, only ``scores`` are kept.
        """
        merged: dict[str, pa.StructArray | pa.ChunkedArray] = {} if replace else dict(self._memory)
        merged.update(scores)
        stored = [] if replace else [label for label in self.stored if label not in scores]
        kept = [] if replace else self._order
        return RunTable(
            self._key_source, merged, self.items, light=self.light - set(scores), stored=stored,
            order=[*kept, *(label for label in scores if label not in kept)],
        )  # fmt: skip

    def select(self, labels: Sequence[str]) -> RunTable:
        """A table with the score columns of ``labels`` only, in that order."""
        missing = [label for label in labels if label not in self._order]
        if missing:
            raise KeyError(missing[0])
        return RunTable(
            self._key_source,
            {label: self._memory[label] for label in labels if label in self._memory},
            self.items,
            light=self.light,
            stored=[label for label in labels if label not in self._memory],
            order=labels,
        )

    # -- reading ---------------------------------------------------------------------------

    def __len__(self) -> int:
        if self._stored_keys is not None:
            return self._stored_keys.n_rows
        assert self._keys is not None
        return int(self._keys.num_rows)

    @property
    def keys(self) -> pa.Table:
        """The key columns (:data:`KEY_COLUMNS` and the fingerprint), one row per item.

        Stored keys are read from the items file the first time, and kept.
        """
        if self._keys is None:  # read from the items file a column at a time
            self._keys = pa.table({n: self.key_column(n) for n in (*KEY_COLUMNS, FINGERPRINT)})
        return self._keys

    @property
    def _key_source(self) -> pa.Table | StoredKeys:
        """What a table built from this one takes as its keys: the same, read or not."""
        if self._keys is not None:
            return self._keys
        assert self._stored_keys is not None
        return self._stored_keys

    @property
    def labels(self) -> list[str]:
        """The metric labels, in the run's order."""
        return list(self._order)

    @property
    def scores(self) -> Mapping[str, pa.ChunkedArray]:
        """The score column of each label, in order; a stored one is read when asked for."""
        return _Scores(self)

    @property
    def stored(self) -> list[str]:
        """The labels whose scores are left in the items file, in order."""
        return [label for label in self._order if label not in self._memory]

    def _column(self, label: str) -> pa.ChunkedArray:
        found = self._memory.get(label)
        if found is not None:
            return found
        if label not in self._order:
            raise KeyError(label)
        if self._held is None or self._held[0] != label:
            self._held = None  # the label held before is let go first
            self._held = (label, self._read_stored(label), None)
        return self._held[1]

    def _read_stored(self, label: str) -> pa.ChunkedArray:
        """A stored label's column, read from the items file (its parts, in order)."""
        name = score_field(label)
        light = label in self.light
        fields = [f"{name}.{field}" for field in ("status", "value", "reason")] if light else [name]

        def read(handle: Any) -> list[pa.Array]:
            chunks: list[pa.Array] = handle.read(columns=fields).column(0).chunks
            if not light:
                return chunks
            # The extras stay in the file: a null column that costs no memory.
            return [
                pa.StructArray.from_arrays(
                    [*chunk.flatten(), nulls(len(chunk), pa.string())], fields=list(score_type())
                )
                for chunk in chunks
            ]

        return lean(self._from_file(read, score_type(), f"scores of {label!r}"))

    def _from_file(
        self, read: Callable[[Any], list[pa.Array]], kind: pa.DataType, what: str
    ) -> pa.ChunkedArray:
        """A column of the items file: ``read(handle)`` gives each part's chunks, in order.

        Raises:
            ValueError: the parts hold another number of rows than the table.
        """
        import pyarrow.parquet as pq

        assert self.items is not None
        chunks: list[pa.Array] = []
        for path in self.items.files:
            with pq.ParquetFile(path, pre_buffer=False) as handle:
                chunks += read(handle)
        column = pa.chunked_array(chunks, kind)
        if len(column) != len(self):
            raise ValueError(f"{self.items.path} holds {len(column)} {what} for {len(self)} items.")
        return column

    def key(self, name: str) -> list[Any]:
        """One key column as a Python list (read once, then kept)."""
        found = self._cache.get(("key", name))
        if found is None:
            found = self._cache[("key", name)] = self.key_column(name).to_pylist()
        return found  # type: ignore[no-any-return]

    def key_column(self, name: str) -> pa.ChunkedArray:
        """One key column; of stored keys not yet read, that column only, from the items file.

        A fingerprint is made from the items' input and answer key, a batch at a time.
        """
        if self._keys is not None:
            return self.keys.column(name)
        kind = pa.uint64() if name == FINGERPRINT else KEY_TYPES[name]

        def read(handle: Any) -> list[pa.Array]:
            names = handle.schema_arrow.names
            if name == FINGERPRINT:
                texts = [k for k in ("input", "expected") if k in names]
                return [
                    keys_of(batch).column(FINGERPRINT).combine_chunks()
                    for batch in handle.iter_batches(batch_size=1 << 16, columns=texts)
                ]
            if name in names:
                chunks: list[pa.Array] = handle.read(columns=[name]).column(0).chunks
                return chunks
            return [pa.nulls(handle.metadata.num_rows, kind)]

        return lean(self._from_file(read, kind, f"values of the key {name!r}"))

    def rows_of_model(self, model: str | None) -> np.ndarray[Any, np.dtype[np.intp]]:
        """The positions of ``model``'s items (of the items without a model, for ``None``)."""
        import pyarrow.compute as pc

        models = self.key_column("model")
        same = pc.is_null(models) if model is None else pc.fill_null(pc.equal(models, model), False)
        return np.flatnonzero(same.to_numpy(zero_copy_only=False))

    def has(self, name: str) -> bool:
        """Whether any item has a value in the key column ``name``."""
        if self._keys is None and self._stored_keys is not None and name != "id":
            return name in self._stored_keys.present
        return bool(self.keys.column(name).null_count < self.keys.num_rows)

    def score(self, label: str) -> ScoreColumn:
        """The scores of ``label`` as a :class:`~itemscore.ScoreColumn`."""
        if label not in self._memory:
            column = self._column(label)
            assert self._held is not None
            found = self._held[2]
            if found is None:
                found = ScoreColumn.of_arrow(label, column)
                self._held = (label, column, found)
            return found
        found = self._cache.get(("score", label))
        if found is None:
            found = self._cache[("score", label)] = ScoreColumn.of_arrow(label, self._memory[label])
        return found

    def codes(self, label: str) -> np.ndarray[Any, np.dtype[np.int8]]:
        """The state code of each item for ``label`` (0 ok, 1 fail, 2 skip, 3 error)."""
        if self._in_hand(label):
            return np.frombuffer(self.score(label).states, dtype=np.int8)
        codes = self._stored_field(label, "status").to_numpy()
        return np.asarray(codes, dtype=np.int8)

    def values(self, label: str) -> np.ndarray[Any, np.dtype[np.float64]]:
        """The value of each item for ``label`` (NaN for skip and error), made at each call."""
        import pyarrow.compute as pc

        if self._in_hand(label):
            column = pc.struct_field(self._column(label), "value")
        else:
            column = self._stored_field(label, "value")
        return np.asarray(column.to_numpy(), dtype=np.float64)

    def parts(
        self, labels: Sequence[str], keys: Sequence[str]
    ) -> Iterator[tuple[list[pa.Array], list[tuple[pa.Array, pa.Array]]]]:
        """The key columns ``keys`` and each label's (state codes, values), a part at a time.

        Stored columns are read from the items file one part (one file of the folder) at a
        time, each key and label for the same rows; columns in memory are sliced to match.
        Items that are not in files are one part. ``keys`` may name :data:`FINGERPRINT`, made
        from the part's items when the keys are stored.

        Raises:
            KeyError: a label the table does not have.
        """
        import pyarrow.compute as pc

        for label in labels:
            if label not in self._order:
                raise KeyError(label)
        files = self.items.files if self.items is not None else []
        stored = [label for label in labels if not self._in_hand(label)]
        if not files or (not stored and self._keys is not None):
            files = []
            sizes = [len(self)]
        else:
            import pyarrow.parquet as pq

        start = 0
        for index in range(max(len(files), 1)):
            part: pa.Table | None = None
            if files:
                with pq.ParquetFile(files[index], pre_buffer=False) as handle:
                    rows = handle.metadata.num_rows
                    present = set(handle.schema_arrow.names)
                    wanted = [
                        f"{score_field(label)}.{f}" for label in stored for f in ("status", "value")
                    ]
                    if self._keys is None:
                        wanted += [k for k in keys if k in present]
                        if FINGERPRINT in keys:
                            wanted += [k for k in ("input", "expected") if k in present]
                    part = handle.read(columns=list(dict.fromkeys(wanted)))
            else:
                rows = sizes[0]
            found: list[pa.Array] = []
            for key in keys:
                if self._keys is not None:
                    found.append(self._keys.column(key).slice(start, rows).combine_chunks())
                elif key == FINGERPRINT:
                    assert part is not None
                    found.append(keys_of(part).column(FINGERPRINT).combine_chunks())
                elif part is not None and key in part.schema.names:
                    found.append(part.column(key).combine_chunks())
                else:
                    found.append(pa.nulls(rows, KEY_TYPES[key]))
            scores: list[tuple[pa.Array, pa.Array]] = []
            for label in labels:
                if label in stored:
                    assert part is not None
                    name = score_field(label)
                    pieces = part.column(name).combine_chunks().flatten()
                    names = [f.name for f in part.schema.field(name).type]
                    scores.append((pieces[names.index("status")], pieces[names.index("value")]))
                else:
                    column = self._column(label).slice(start, rows)
                    scores.append(
                        (
                            pc.struct_field(column, "status").combine_chunks(),
                            pc.struct_field(column, "value").combine_chunks(),
                        )
                    )
            yield found, scores
            start += rows
        if start != len(self):
            assert self.items is not None
            raise ValueError(f"{self.items.path} holds {start} rows for {len(self)} items.")

    def _in_hand(self, label: str) -> bool:
        """Whether ``label``'s column is in memory (or is the stored one held)."""
        return label in self._memory or (self._held is not None and self._held[0] == label)

    def _stored_field(self, label: str, field: str) -> pa.ChunkedArray:
        """One field of a stored label's scores (``status``, ``value``), read from the file.

        Neither the other fields nor the label's whole column come into memory (the ``extra``
        texts of ten million items are a gigabyte).
        """
        if label not in self._order:
            raise KeyError(label)
        name = f"{score_field(label)}.{field}"

        def read(handle: Any) -> list[pa.Array]:
            return [c.flatten()[0] for c in handle.read(columns=[name]).column(0).chunks]

        return self._from_file(read, score_type().field(field).type, f"scores of {label!r}")

    def item_fields(
        self, names: Sequence[str], rows: Sequence[int] | None = None
    ) -> list[list[Any]]:
        """The item fields ``names`` (``output``, ``expected``...) as lists, for ``rows``."""
        source = self._source()
        out: list[list[Any]] = [[] for _ in names]
        for batch in source.batches():
            if isinstance(batch, list):
                for column, name in zip(out, names):
                    column += [getattr(item, name) for item in batch]
            else:
                for column, name in zip(out, names):
                    column += batch.column(name).to_pylist()
        if rows is not None:
            out = [[column[i] for i in rows] for column in out]
        return out

    def reasons(self, label: str) -> list[str | None]:
        """The reason of each item for ``label`` (``None`` where it has none)."""
        reasons = self.score(label).reasons
        return list(reasons) if reasons is not None else [None] * len(self)

    def rows(self, size: int = ROWS_BATCH) -> Iterator[ItemResult]:
        """Each item with its scores (``item.scores``, one per label), in order.

        Built one batch at a time, so a report over a million items writes with flat memory.

        Raises:
            ValueError: the table does not keep its items.
        """
        labels = self.labels
        fresh = self.items is not None and self.items.listed is None  # built here from Arrow
        for items, columns in self.scored_batches(size, records=True):
            scores = [ScoreColumn.of_arrow(k, columns[k]) for k in labels]
            yield from scored_items(items, scores, fresh=fresh)

    def scored_batches(
        self, size: int, *, records: bool
    ) -> Iterator[tuple[Any, dict[str, pa.StructArray]]]:
        """Batches of items (records, or Arrow item columns) with their whole score columns."""
        source = self._source()
        in_file = [label for label in self.labels if label in self.light or label in self.stored]
        in_file_set = set(in_file)
        start = 0
        for batch in source.batches(size, in_file):
            n = len(batch) if isinstance(batch, list) else batch.num_rows
            columns: dict[str, pa.StructArray] = {}
            for label in self.labels:
                if label in in_file_set:
                    assert not isinstance(batch, list)
                    columns[label] = batch.column(score_field(label))
                else:
                    columns[label] = self._memory[label].slice(start, n).combine_chunks()
            if isinstance(batch, list):
                items: Any = batch if records else _item_batch(batch)
            else:
                batch = batch.select([c for c in ITEM_COLUMNS if c in batch.schema.names])
                items = batch_to_items(batch) if records else batch
            yield items, columns
            start += n

    def _source(self) -> ItemSource:
        if self.items is None:
            raise ValueError(
                "This run did not keep its items (the command line without --out keeps only "
                "what it shows); score again with --out to read them."
            )
        return self.items

    def scored_items(self) -> ScoredItems:
        """The items with their scores, as the public view ``RunResult.items`` gives them."""
        return ScoredItems(self)

    # -- Parquet ---------------------------------------------------------------------------

    def write_parquet(self, path: Path) -> None:
        """Write the items and their scores to ``path`` (see :mod:`._store`), batch by batch."""
        writer = ItemsWriter(path, self.labels)
        try:
            for items, columns in self.scored_batches(ROW_GROUP, records=False):
                writer.write(items, columns)
            writer.close()
        except BaseException:
            writer.abort()
            raise

    @classmethod
    def from_parquet(
        cls,
        path: Path,
        labels: Sequence[str] | None = None,
        *,
        max_rows: int | None = None,
        parts: Sequence[PartFile] | None = None,
    ) -> RunTable:
        """The table of an ``items.parquet`` file: keys, scores and items left in the file.

        Only the footers are read here: the rows, the labels, and which of the optional keys
        some item has (from the column statistics, or the column where a writer left none);
        a key or a label is read when asked for, a column at a time. ``labels`` gives the
        order of the score columns (default: the file's). With ``max_rows``, a file whose
        footer counts more rows is refused before any is read; a column that brings other
        rows than the footers said is refused when it is read. With ``parts``, ``path`` is a
        folder of Parquet parts, read in that order, and ``max_rows`` bounds them together.

        Raises:
            ValueError: a label without scores in the file, or more rows than ``max_rows``.
        """
        import pyarrow.parquet as pq

        source = ItemSource.of_parquet(path, parts)
        n_rows, order, present = 0, list(labels or ()), set[str]()
        schema = None
        for file in source.files:
            with pq.ParquetFile(file, pre_buffer=False) as handle:
                if schema is None:
                    schema = handle.schema_arrow
                    if labels is None:
                        order = [
                            n[len(SCORE_PREFIX) :]
                            for n in schema.names
                            if n.startswith(SCORE_PREFIX)
                        ]
                missing = [
                    label for label in order if score_field(label) not in handle.schema_arrow.names
                ]
                if missing:
                    raise ValueError(f"{file} holds no scores for {', '.join(map(repr, missing))}.")
                footer = handle.metadata
                if max_rows is not None and n_rows + footer.num_rows > max_rows:
                    raise ValueError(
                        f"{file} holds {footer.num_rows} rows, more than {max_rows - n_rows}."
                    )
                n_rows += footer.num_rows
                present |= _keys_with_values(handle, set(OPTIONAL_KEYS) - present)
        if schema is None:
            raise ValueError(f"{path} holds no Parquet part.")
        return cls(StoredKeys(n_rows, frozenset(present)), {}, source, stored=order)


def _keys_with_values(handle: Any, keys: set[str]) -> set[str]:
    """Those of ``keys`` that some row of the Parquet file ``handle`` has a value in."""
    footer = handle.metadata
    found: set[str] = set()
    for key in keys & set(handle.schema_arrow.names):
        counted = True
        for group in range(footer.num_row_groups):
            meta = footer.row_group(group)
            for index in range(meta.num_columns):
                column = meta.column(index)
                if column.path_in_schema != key:
                    continue
                stats = column.statistics
                if stats is None or not stats.has_null_count:
                    counted = False
                elif stats.null_count < meta.num_rows:
                    found.add(key)
        # Without statistics, the column says it.
        if (
            not counted
            and key not in found
            and handle.read(columns=[key]).column(0).null_count < footer.num_rows
        ):
            found.add(key)
    return found


def _item_batch(items: Sequence[ItemResult]) -> pa.RecordBatch:
    """Items given from Python as item columns (no line numbers)."""
    batch = items_to_batch(items)
    return batch.drop_columns([c for c in batch.schema.names if c.startswith("_")])


class _Scores(Mapping[str, pa.ChunkedArray]):
    """A table's score columns by label, in order: a stored one read when asked for."""

    __slots__ = ("_table",)

    def __init__(self, table: RunTable) -> None:
        self._table = table

    def __getitem__(self, label: str) -> pa.ChunkedArray:
        return self._table._column(label)

    def __iter__(self) -> Iterator[str]:
        return iter(self._table.labels)

    def __len__(self) -> int:
        return len(self._table.labels)

    def __contains__(self, label: object) -> bool:
        return label in self._table.labels


class ScoredItems(Sequence[ItemResult]):
    """The public view of a run table: every item, in order, with one score per label.

    Items are built a batch at a time when read; a table whose items are in memory keeps
    the built items, one whose items are in a file rebuilds them on every pass, so that
    iterating a million items never holds them all.
    """

    __slots__ = ("_built", "table")

    def __init__(self, table: RunTable) -> None:
        #: The run table behind the view.
        self.table = table
        self._built: list[ItemResult] | None = None

    def __len__(self) -> int:
        return len(self.table)

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
            raise IndexError("item index out of range")
        if self._in_file():
            for position, item in enumerate(self.table.rows()):
                if position == index:
                    return item
        return self._all()[index]

    def __iter__(self) -> Iterator[ItemResult]:
        if self._in_file():
            return self.table.rows()
        return iter(self._all())

    def _in_file(self) -> bool:
        items = self.table.items
        return items is not None and items.path is not None

    def _all(self) -> list[ItemResult]:
        if self._built is None:
            self._built = list(self.table.rows())
        return self._built

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment] # compared by content, like a list

    def __repr__(self) -> str:
        return f"<ScoredItems: {len(self)} items x {len(self.table.labels)} metrics>"
