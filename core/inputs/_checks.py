"""The checks of a whole source, on key columns: unique ids, an answer key somewhere, any rows.

A reader (or a worker reading its own part) keeps only the *key columns* of each batch
(:func:`key_columns`: id, model, attempt, whether the row has an answer key, its line and its
file); :class:`SourceChecks` takes them in file order, from one reader or from the parts of
several, and raises today's errors with today's messages at the end:

- ``FILE:LINE:COLUMN: the id 'x' appears twice for model 'm' (first at line 3)``, at the
  second occurrence (``(model, id, attempt)`` must be unique);
- ``FILE:1: the file is empty: it holds no rows to score``;
- ``FILE: no row has an answer key ... but 'exact_match' needs one`` (:func:`answer_key_error`).

The duplicate search runs in Arrow (a group-by of the keys; past two million rows one bucket
of ids at a time, so that its hash table stays small); only when it finds one does a
Python pass look for the first repeat, to name it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._exceptions import InputError, one_of
from .._schema import LINE

__all__ = ["KEY_SCHEMA", "SourceChecks", "answer_key_error", "key_columns"]

#: The columns :func:`key_columns` keeps of a batch.
KEY_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("model", pa.string()),
        pa.field("attempt", pa.int64()),
        pa.field("answered", pa.bool_(), nullable=False),
        pa.field(LINE, pa.int64(), nullable=False),
        pa.field("_file", pa.int32(), nullable=False),
    ]
)

#: ``locate(file, line, key) -> (where, path, line, column)``: the place of a row (of ``key``
#: in it) as a message names it (``FILE:LINE:COLUMN``, ``FILE: row N``).
Locate = Callable[[int, int, "str | None"], "tuple[str, str | None, int | None, int | None]"]


def key_columns(batch: pa.RecordBatch, file: int = 0) -> pa.RecordBatch:
    """What the whole-source checks need of a canonical batch (``file``: its file's index)."""
    n = batch.num_rows
    answered = batch.column(2).is_valid()
    return pa.RecordBatch.from_arrays(
        [
            batch.column(0),
            batch.column(5),
            batch.column(7),
            answered,
            batch.column(LINE),
            pa.array([file] * n, pa.int32()) if n else pa.array([], pa.int32()),
        ],
        schema=KEY_SCHEMA,
    )


#: Rows past which the duplicate search goes one bucket of ids at a time.
BUCKET_ROWS = 1 << 21
_BUCKETS = 16


def _unique(keys: pa.Table) -> bool:
    """Whether no row of ``keys`` (the id, or the model, id and attempt) repeats."""
    if keys.num_columns == 1:
        return bool(pc.count_distinct(keys.column(0)).as_py() == keys.num_rows)
    groups = keys.group_by(keys.column_names, use_threads=False).aggregate([])
    return bool(len(groups) == keys.num_rows)


def _buckets(ids: pa.ChunkedArray) -> np.ndarray[Any, np.dtype[np.uint8]]:
    """Each id's bucket, from its length and last four bytes: equal ids share a bucket."""
    out = []
    for chunk in ids.chunks:
        n = len(chunk)
        _, offsets_buffer, data_buffer = chunk.buffers()
        offsets = np.frombuffer(offsets_buffer, np.int32, count=n + 1, offset=chunk.offset * 4)
        ends = offsets[1:].astype(np.int64)
        lengths = ends - offsets[:-1]
        key = lengths.copy()
        if data_buffer is not None and data_buffer.size:
            data = np.frombuffer(data_buffer, np.uint8)
            for back in range(1, 5):
                byte = data[np.maximum(ends - back, 0)].astype(np.int64)
                key = key * 31 + np.where(lengths >= back, byte, 0)
        out.append((key % _BUCKETS).astype(np.uint8))
    return np.concatenate(out) if out else np.zeros(0, np.uint8)


def answer_key_error(source: str, column: str, needing: Sequence[str]) -> InputError:
    """The error for a run whose metrics ``needing`` need an answer key that no row has."""
    return InputError(
        f"{source}: no row has an answer key (column {column!r} is missing or "
        f"empty), but {one_of(needing)} need{'s' if len(needing) == 1 else ''} one. "
        "Map the answers with --map expected=COLUMN, or leave those metrics out.",
        path=source,
    )


class SourceChecks:
    """Key columns of a source, in file order; :meth:`finish` raises what is wrong.

    Args:
        name: The source as messages name it.
        unit: ``"line"``, ``"row"`` or ``"record"``.
        files: The name of each file of the source (by the ``_file`` index).
        id_column: The column ids were read from (``None``: rows were numbered).
        locate: Where a row's key stands (default: ``FILE:LINE`` / ``FILE: row N``).
    """

    def __init__(
        self,
        name: str,
        unit: str,
        files: Sequence[str],
        *,
        id_column: str | None = "id",
        locate: Locate | None = None,
    ) -> None:
        self.name = name
        self.unit = unit
        self.files = list(files)
        self.id_column = id_column
        self.locate = locate or self._plain_place
        self._keys: list[pa.RecordBatch] = []
        #: Rows seen.
        self.n_rows = 0
        #: Rows with an answer key.
        self.n_answer_keys = 0

    def add(self, keys: pa.RecordBatch | pa.Table) -> None:
        """Take the key columns of the next batches (:func:`key_columns`), in file order."""
        batches = keys.to_batches() if isinstance(keys, pa.Table) else [keys]
        for batch in batches:
            if batch.num_rows:
                self._keys.append(batch)
                self.n_rows += batch.num_rows
                self.n_answer_keys += pc.sum(batch.column(3)).as_py() or 0

    def finish(self, *, needing: Sequence[str] = (), column: str = "expected") -> None:
        """Raise the first thing wrong with the source as a whole.

        Args:
            needing: Labels of the metrics that need an answer key.
            column: The column answers were read from (for the message).

        Raises:
            InputError: no rows; an id seen twice for one model (and attempt); no answer key
                anywhere while ``needing`` is not empty.
        """
        if self.n_rows == 0:
            first_line = 1 if self.unit == "line" else None
            raise InputError.at(
                self.files[0] if len(self.files) == 1 else self.name,
                first_line,
                None,
                "the file is empty: it holds no rows to score. Check the path, or the export "
                "that wrote it.",
            )
        self.check_ids()
        if needing and self.n_answer_keys == 0:
            raise answer_key_error(self.name, column, needing)

    def check_ids(self) -> None:
        """Raise at the first id that repeats for its model and attempt.

        Raises:
            InputError: a repeated id, at its second place, naming the first.
        """
        if not self._keys:
            return
        table = pa.Table.from_batches(self._keys, schema=KEY_SCHEMA)
        plain = table.column("model").null_count == len(table) and (
            table.column("attempt").null_count == len(table)
        )
        keys = table.select(["id"] if plain else ["model", "id", "attempt"])
        if len(table) <= BUCKET_ROWS:
            if _unique(keys):
                return
        else:  # one hash table over ten million ids would take 650 MB: a sixteenth at a time
            buckets = _buckets(keys.column("id"))
            if all(_unique(keys.filter(buckets == b)) for b in range(_BUCKETS)):
                return
        self._raise_first_repeat(table)

    def _raise_first_repeat(self, table: pa.Table) -> None:
        seen: dict[tuple[str | None, str, int | None], tuple[int, int]] = {}
        rows = zip(
            table.column("model").to_pylist(),
            table.column("id").to_pylist(),
            table.column("attempt").to_pylist(),
            table.column(LINE).to_pylist(),
            table.column("_file").to_pylist(),
        )
        for model, ident, attempt, line, file in rows:
            key = (model, ident, attempt)
            first = seen.setdefault(key, (file, line))
            if first == (file, line):
                continue
            whose = f" for model {model!r}" if model is not None else ""
            if attempt is not None:
                whose = f" with attempt {attempt}{whose}"
            first_file, first_line = first
            of = f" of {self.files[first_file]}" if first_file != file else ""
            where, path, at_line, at_column = self.locate(file, line, self.id_column)
            raise InputError(
                f"{where}: the id {ident!r} appears twice{whose} (first at {self.unit} "
                f"{first_line}{of}). Ids must be unique per model. Fix the id column, or "
                "drop it to number the rows.",
                path=path,
                line=at_line,
                column=at_column,
            )

    def _plain_place(
        self, file: int, line: int, key: str | None
    ) -> tuple[str, str | None, int | None, int | None]:
        name = self.files[file]
        if self.unit != "line":
            return f"{name}: {self.unit} {line}", name, line, None
        named = f": column {key!r}" if key is not None else ""
        return f"{name}:{line}{named}", name, line, None
