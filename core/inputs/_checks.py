"""The checks of a whole source: unique ids, an answer key somewhere, any rows at all.

A reader (or a worker reading its own part) keeps the *key columns* of each batch
(:func:`key_columns`: id, model, attempt, whether the row has an answer key, its line and its
file) and boils them down to a :class:`KeyDigest`: its counts and one 64-bit hash per row.
:class:`SourceChecks` takes the digests in any order (the parts as their reads finish), from
one reader or from the parts of several, and raises these errors at the end:

- ``FILE:LINE:COLUMN: the id 'x' appears twice for model 'm' (first at line 3)``, at the
  second occurrence (``(model, id, attempt)`` must be unique);
- ``FILE:1: the file is empty: it holds no rows to score``;
- ``FILE: no row has an answer key ... but 'exact_match' needs one`` (:func:`answer_key_error`).

The duplicate search sorts the hashes (8 bytes a row: ten million rows' key columns would be
400 MB) a slice of the hash range at a time: each part's hashes go, as it is added, to the
slice their question's top bits name — in files of a folder when the checks are given one (a
run over files: the driver then holds no hash of the parts it checked), in memory otherwise.
Only when a hash repeats are the exact key columns of the parts that hold it read again — from
the part, by whoever added it — to name the first repeat, or to find that two different keys
met by chance.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._exceptions import InputError, one_of
from .._hashing import MISSING, mix, text_hashes
from .._schema import LINE

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["KEY_SCHEMA", "KeyDigest", "SourceChecks", "answer_key_error", "key_columns"]

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


# -- hashed keys: what the driver holds of each row ---------------------------------------------

_U64 = np.uint64
#: Mixed into the model's hash, so that a model and an id of the same text differ.
_BASE = _U64(0x100000001B3)


#: A missing attempt, among the attempts of a part that has some.
_NO_ATTEMPT = -(2**63)
#: The id check sorts the hashes whose question's top bits are equal together: a 32nd of them
#: at a time (a power of two). All the rows of a question fall in one slice.
_SLICES = 32
_SHIFT = np.uint64(64 - _SLICES.bit_length() + 1)
#: What the checks keep of a row: its key's hash, its question's hash, its part.
_ROW = np.dtype([("key", np.uint64), ("question", np.uint64), ("part", np.uint32)])


@attrs.frozen(eq=False)
class KeyDigest:
    """What the whole-source checks hold of a part's rows: counts and 64-bit hashes.

    A part's key columns (:func:`key_columns`) are 30-40 bytes a row; this is 8 (16 with
    attempts). Equal keys have equal hashes; unequal ones almost never do, and when a hash
    repeats, the exact key columns of the rows concerned are read again to decide.
    """

    #: Rows.
    n_rows: int
    #: Rows with an answer key.
    n_answer_keys: int
    #: Each row's question: the hash of its model and id.
    questions: NDArray[np.uint64]
    #: Each row's attempt (``None``: no row of the part has one; a missing one is
    #: ``-2**63``).
    attempts: NDArray[np.int64] | None

    @classmethod
    def of(cls, keys: pa.Table | pa.RecordBatch) -> KeyDigest:
        """The digest of key columns (:data:`KEY_SCHEMA`)."""
        n = keys.num_rows
        questions = mix(
            text_hashes(keys.column("id")) ^ mix(text_hashes(keys.column("model")) + _BASE)
        )
        attempt = keys.column("attempt")
        attempts = None
        if attempt.null_count < n:
            filled = pc.fill_null(attempt, _NO_ATTEMPT)
            attempts = np.asarray(filled.to_numpy(), dtype=np.int64)
        answered = int(pc.sum(keys.column("answered")).as_py() or 0) if n else 0
        return cls(n, answered, questions, attempts)

    def hashes(self) -> NDArray[np.uint64]:
        """Each row's key, (model, id, attempt), hashed."""
        attempts = self.attempts
        if attempts is None:
            attempts = np.full(self.n_rows, _NO_ATTEMPT, np.int64)
        return mix(self.questions ^ mix(attempts.view(np.uint64) + MISSING))


#: ``exact()``: a part's key columns (:data:`KEY_SCHEMA`), read again.
ExactKeys = Callable[[], pa.Table]


def answer_key_error(source: str, column: str, needing: Sequence[str]) -> InputError:
    """The error for a run whose metrics ``needing`` need an answer key that no row has."""
    return InputError(
        f"{source}: no row has an answer key (column {column!r} is missing or "
        f"empty), but {one_of(needing)} need{'s' if len(needing) == 1 else ''} one. "
        "Map the answers with --map expected=COLUMN, or leave those metrics out.",
        path=source,
    )


class SourceChecks:
    """Digests of a source's parts, in any order; :meth:`finish` raises what is wrong.

    Args:
        name: The source as messages name it.
        unit: ``"line"``, ``"row"`` or ``"record"``.
        files: The name of each file of the source (by the ``_file`` index).
        id_column: The column ids were read from (``None``: rows were numbered).
        locate: Where a row's key stands (default: ``FILE:LINE`` / ``FILE: row N``).
        folder: Where the rows' hashes wait for the checks (``None``: in memory).
    """

    def __init__(
        self,
        name: str,
        unit: str,
        files: Sequence[str],
        *,
        id_column: str | None = "id",
        locate: Locate | None = None,
        folder: str | None = None,
    ) -> None:
        self.name = name
        self.unit = unit
        self.files = list(files)
        self.id_column = id_column
        self.locate = locate or self._plain_place
        #: How to read each part's key columns again, by the order the parts were added.
        self._exact: list[ExactKeys] = []
        self._rows = _Slices(folder)
        self._attempts = False
        #: Rows seen.
        self.n_rows = 0
        #: Rows with an answer key.
        self.n_answer_keys = 0

    def add(self, keys: pa.Table | KeyDigest, exact: ExactKeys | None = None) -> None:
        """Take the next part: its key columns (:func:`key_columns`), or their digest.

        Args:
            keys: The part's key columns, or their :class:`KeyDigest`.
            exact: With a digest: how to read the part's key columns again, should a hash
                repeat (key columns given are kept for that).
        """
        if isinstance(keys, KeyDigest):
            if exact is None:
                raise TypeError("A part's digest needs a way to read its key columns again.")
            digest = keys
        else:
            table = keys if isinstance(keys, pa.Table) else pa.Table.from_batches([keys])
            digest, exact = KeyDigest.of(table), lambda: table
        if digest.n_rows:
            self._rows.add(digest, len(self._exact))
            self._exact.append(exact)
            self._attempts = self._attempts or digest.attempts is not None
            self.n_rows += digest.n_rows
            self.n_answer_keys += digest.n_answer_keys

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

        The rows' hashes are sorted a slice of the hash range at a time (:data:`_SLICES`), so
        that no array of every row's hash is made; only when one repeats are the exact keys of
        the parts that hold it read again, to name the first repeat or to find that the hashes
        met by chance.

        Raises:
            InputError: a repeated id, at its second place, naming the first.
        """
        repeats: list[NDArray[np.uint64]] = []
        parts: list[NDArray[np.uint32]] = []
        for rows in self._rows.slices():
            ordered = np.sort(rows["key"])
            found = ordered[1:][ordered[1:] == ordered[:-1]]
            if found.size:
                repeats.append(found)
                parts.append(np.unique(rows["part"][np.isin(rows["key"], found)]))
        if repeats:
            self._exact_search(np.concatenate(repeats), np.unique(np.concatenate(parts)))

    def question_sizes(self) -> tuple[int, int] | None:
        """The fewest and the most rows a question (model and id) has; ``None``: no attempts.

        Questions are told apart by their hashes: two that met by chance would count as one,
        which can only raise the most (never refuse a run that should pass).
        """
        if not self._attempts:
            return None
        fewest, most = None, 0
        for rows in self._rows.slices():
            if rows.size:
                _, counts = np.unique(rows["question"], return_counts=True)
                low = int(counts.min())
                fewest = low if fewest is None else min(fewest, low)
                most = max(most, int(counts.max()))
        return (fewest or 0), most

    def _exact_search(self, repeats: NDArray[np.uint64], parts: NDArray[np.uint32]) -> None:
        """Name the first repeat among the rows of ``parts`` whose hashes are ``repeats``."""
        found: list[pa.Table] = []
        for index in parts.tolist():
            exact = self._exact[index]()
            hashes = KeyDigest.of(exact).hashes()
            found.append(exact.filter(pa.array(np.isin(hashes, repeats))))
        table = pa.concat_tables(found).sort_by([("_file", "ascending"), (LINE, "ascending")])
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


class _Slices:
    """Each row's key hash, question hash and part (:data:`_ROW`), by slice of the hash range.

    A slice is the rows whose question hash has the same top bits. With ``folder``, each
    slice is a file the rows are appended to (20 bytes a row), read back one slice at a time;
    without, lists of arrays in memory.
    """

    def __init__(self, folder: str | None) -> None:
        self.folder = folder
        self._memory: list[list[NDArray[Any]]] = [[] for _ in range(_SLICES)]

    def _path(self, index: int) -> str:
        assert self.folder is not None
        return os.path.join(self.folder, f"hashes-{index:02d}.bin")

    def add(self, digest: KeyDigest, part: int) -> None:
        rows = np.empty(digest.n_rows, _ROW)
        rows["key"] = digest.hashes()
        rows["question"] = digest.questions
        rows["part"] = part
        which = (digest.questions >> _SHIFT).astype(np.intp)
        order = np.argsort(which, kind="stable")
        bounds = np.searchsorted(which[order], np.arange(_SLICES + 1))
        for index in range(_SLICES):
            picked = rows[order[bounds[index] : bounds[index + 1]]]
            if not picked.size:
                continue
            if self.folder is None:
                self._memory[index].append(picked)
            else:
                with open(self._path(index), "ab") as handle:
                    picked.tofile(handle)

    def slices(self) -> Iterator[NDArray[Any]]:
        """The rows of each slice in turn (one slice in memory at a time, with a folder)."""
        for index in range(_SLICES):
            if self.folder is None:
                found = self._memory[index]
                yield np.concatenate(found) if found else np.empty(0, _ROW)
            elif os.path.exists(self._path(index)):
                yield np.fromfile(self._path(index), _ROW)
