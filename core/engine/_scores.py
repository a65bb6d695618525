"""One metric's scores as an Arrow column, and back.

In the run table each metric label has one struct column, :data:`SCORE_TYPE`: the state code
(0 ok, 1 fail, 2 skip, 3 error, as :class:`~itemscore.ScoreColumn` numbers them), the value
(null for skip and error), the reason and the ``extra`` mapping as JSON text (null when empty).
That is about a tenth of the memory of one Python object per score, it moves between
processes as flat buffers, and Parquet stores it as it is.

Metrics keep producing :class:`~itemscore.ScoreColumn` (or lists of scores); :func:`to_arrow`
turns a shard's column into Arrow where the shard was scored, and :func:`from_arrow` gives a
:class:`~itemscore.ScoreColumn` back to whoever reads one (an aggregate, a report), with the
values, reasons and extras made into Python objects only when first read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

import numpy as np
import pyarrow as pa

from .._columns import ScoreColumn
from .._lean import from_ipc, to_ipc
from .._records import ItemResult, ItemScore, Status
from .._schema import Unreadable, strings
from .._serialize import json_safe

__all__ = [
    "SCORE_TYPE",
    "ArrowScoreColumn",
    "decode_extra",
    "encode_extras",
    "filled",
    "from_arrow",
    "to_arrow",
    "unreadable",
    "unreadable_reasons",
    "without_extras",
]

#: The Arrow type of one label's scores in the run table.
SCORE_TYPE = pa.struct(
    [
        pa.field("status", pa.int8(), nullable=False),
        pa.field("value", pa.float64()),
        pa.field("reason", pa.string()),
        pa.field("extra", pa.string()),
    ]
)


_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False, check_circular=False).encode


def _extra_text(extra: Mapping[str, Any]) -> str:
    try:
        return _encode(extra if type(extra) is dict else dict(extra))
    except (TypeError, ValueError):  # numpy scalars, NaN, read-only nested mappings
        return _encode(json_safe(extra))


def encode_extras(extras: Sequence[Mapping[str, Any] | None]) -> list[str | None]:
    """Each ``extra`` as JSON text (``None`` when empty)."""
    return [_extra_text(extra) if extra else None for extra in extras]


def to_arrow(column: ScoreColumn | Sequence[ItemScore], *, extras: bool = True) -> pa.StructArray:
    """A shard's scores as one :data:`SCORE_TYPE` array.

    Args:
        column: The scores.
        extras: ``False``: leave the ``extra`` mappings out (null), unencoded — a run that keeps
            no items has no reader for them, and encoding them is a sixth of such a run.
    """
    if not isinstance(column, ScoreColumn):
        column = ScoreColumn.from_scores("", list(column))
    if isinstance(column, ArrowScoreColumn):
        arrow = column.arrow
        if isinstance(arrow, pa.ChunkedArray):
            arrow = arrow.combine_chunks()
        return arrow if extras else without_extras(arrow)
    n = len(column.states)
    status = pa.array(np.frombuffer(bytes(column.states), dtype=np.int8), type=pa.int8())
    values = pa.array(column.values, type=pa.float64())
    reasons = pa.nulls(n, pa.string()) if column.reasons is None else strings(column.reasons)
    texts = (
        _texts(encode_extras(column.extras))
        if extras and column.extras is not None
        else pa.nulls(n, pa.string())
    )
    return pa.StructArray.from_arrays([status, values, reasons, texts], fields=list(SCORE_TYPE))


def without_extras(array: pa.StructArray) -> pa.StructArray:
    """A :data:`SCORE_TYPE` array with every ``extra`` null."""
    return pa.StructArray.from_arrays(
        [array.field(0), array.field(1), array.field(2), pa.nulls(len(array), pa.string())],
        fields=list(SCORE_TYPE),
    )


def _texts(texts: list[str | None]) -> pa.Array:
    """JSON texts as Arrow; one holding a lone surrogate is written with ASCII escapes."""
    try:
        return pa.array(texts, pa.string())
    except UnicodeEncodeError:
        ascii_encode = json.JSONEncoder(ensure_ascii=True, allow_nan=False).encode
        fixed = [t if t is None or t.isascii() else ascii_encode(json.loads(t)) for t in texts]
        return pa.array(fixed, pa.string())


def filled(n: int, status: Status, reason: str | None) -> pa.StructArray:
    """``n`` equal value-less scores (skip or error) with one reason, as Arrow."""
    code = {"ok": 0, "fail": 1, "skip": 2, "error": 3}[Status(status).value]
    return pa.StructArray.from_arrays(
        [
            pa.array(np.full(n, code, dtype=np.int8), type=pa.int8()),
            pa.nulls(n, pa.float64()),
            pa.array([reason] * n, pa.string()),
            pa.nulls(n, pa.string()),
        ],
        fields=list(SCORE_TYPE),
    )


def decode_extra(text: str | None) -> Mapping[str, Any] | None:
    """The ``extra`` mapping of one score from its JSON text."""
    return None if text is None else json.loads(text)


class _Decoded(Sequence["Mapping[str, Any] | None"]):
    """The extras of a column, decoded from JSON text when first read (each text once)."""

    __slots__ = ("_memo", "_texts")

    def __init__(self, texts: list[str | None]) -> None:
        self._texts = texts
        self._memo: dict[str, Mapping[str, Any]] = {}

    def __len__(self) -> int:
        return len(self._texts)

    @overload
    def __getitem__(self, index: int) -> Mapping[str, Any] | None: ...

    @overload
    def __getitem__(self, index: slice) -> list[Mapping[str, Any] | None]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        text = self._texts[index]
        if text is None:
            return None
        found = self._memo.get(text)
        if found is None:
            found = self._memo[text] = json.loads(text)
        return found

    def __iter__(self) -> Iterator[Mapping[str, Any] | None]:
        return map(self.__getitem__, range(len(self._texts)))


class ArrowScoreColumn(ScoreColumn):
    """A :class:`~itemscore.ScoreColumn` over one :data:`SCORE_TYPE` array.

    ``states`` is read from the array's buffer; ``values``, ``reasons`` and ``extras`` become
    Python objects the first time they are read, and only those.
    """

    __slots__ = ("_extras", "_reasons", "_values", "arrow")

    def __init__(self, label: str, arrow: pa.StructArray | pa.ChunkedArray) -> None:
        if isinstance(arrow, pa.ChunkedArray) and arrow.num_chunks <= 1:
            arrow = arrow.chunk(0) if arrow.num_chunks else pa.array([], type=SCORE_TYPE)
        #: The column as Arrow: one array, or the chunks of a run's batches as they came
        #: (joining them would copy every score column while the table holds it).
        self.arrow: pa.StructArray | pa.ChunkedArray = arrow
        self.label = label
        field = self._field("status")
        self.states = np.asarray(field.to_numpy(zero_copy_only=False), dtype=np.int8).tobytes()
        self._values: list[float | None] | None = None
        self._reasons: list[str | None] | bool | None = False
        self._extras: Sequence[Mapping[str, Any] | None] | bool | None = False

    def _field(self, name: str) -> pa.Array | pa.ChunkedArray:
        """One field of every score (chunked as the column is)."""
        arrow = self.arrow
        if isinstance(arrow, pa.ChunkedArray):
            return pa.chunked_array(
                [chunk.field(name) for chunk in arrow.chunks], SCORE_TYPE.field(name).type
            )
        return arrow.field(name)

    @property
    def values(self) -> list[float | None]:  # type: ignore[override]
        if self._values is None:
            self._values = self._field("value").to_pylist()
        return self._values

    @property
    def reasons(self) -> list[str | None] | None:  # type: ignore[override]
        if self._reasons is False:
            field = self._field("reason")
            self._reasons = None if field.null_count == len(field) else field.to_pylist()
        return self._reasons  # type: ignore[return-value] # False replaced above

    @property
    def extras(self) -> Sequence[Mapping[str, Any] | None] | None:  # type: ignore[override]
        if self._extras is False:
            field = self._field("extra")
            self._extras = None if field.null_count == len(field) else _Decoded(field.to_pylist())
        return self._extras  # type: ignore[return-value] # False replaced above

    def take(self, indices: Sequence[int]) -> ScoreColumn:
        """The scores of the items at ``indices``, in that order."""
        return ArrowScoreColumn(self.label, self.arrow.take(pa.array(indices, type=pa.int64())))

    def __reduce__(self) -> tuple[Any, ...]:
        # Through Arrow IPC: a pickled slice of a shared all-null array would carry all of it.
        return (_restored, (self.label, to_ipc(pa.table({"scores": self.arrow}))))

    def scored_values(self) -> Any:
        """The values of the scored (ok and fail) items, in order, as a numpy array.

        A million Python floats would cost more memory than the whole column.
        """
        if self._values is not None:
            return super().scored_values()
        codes = np.frombuffer(self.states, dtype=np.int8)
        values = np.asarray(self._field("value").to_numpy(zero_copy_only=False), np.float64)
        return values[codes <= 1]

    def counts(self) -> dict[Status, int]:
        """Items in each of the four states."""
        codes = np.frombuffer(self.states, dtype=np.int8)
        found = np.bincount(codes, minlength=4) if codes.size else np.zeros(4, dtype=np.int64)
        return {
            Status.OK: int(found[0]),
            Status.FAIL: int(found[1]),
            Status.SKIP: int(found[2]),
            Status.ERROR: int(found[3]),
        }


def _restored(label: str, data: pa.Buffer) -> ArrowScoreColumn:
    """A pickled :class:`ArrowScoreColumn` (see its ``__reduce__``)."""
    return ArrowScoreColumn(label, from_ipc(data).column(0))


def from_arrow(label: str, arrow: pa.StructArray | pa.ChunkedArray) -> ArrowScoreColumn:
    """A :class:`~itemscore.ScoreColumn` reading the Arrow column ``arrow``."""
    return ArrowScoreColumn(label, arrow)


def unreadable(array: pa.StructArray, errors: pa.Array) -> pa.StructArray:
    """Rows a reader could not read (a bad harness document) are ``error`` for every metric.

    ``errors`` holds each row's reason, null where the row was read.
    """
    import pyarrow.compute as pc

    bad = errors.is_valid()
    status = pc.if_else(bad, pa.scalar(3, pa.int8()), array.field("status"))
    value = pc.if_else(bad, pa.scalar(None, pa.float64()), array.field("value"))
    reason = pc.if_else(bad, errors, array.field("reason"))
    extra = pc.if_else(bad, pa.scalar(None, pa.string()), array.field("extra"))
    return pa.StructArray.from_arrays([status, value, reason, extra], fields=list(SCORE_TYPE))


def unreadable_reasons(items: Sequence[ItemResult]) -> pa.Array | None:
    """The reasons of items that stand for unreadable documents (``None``: there are none).

    Such an item came from a reader (through ``read_items``) with an
    :class:`~itemscore._schema.Unreadable` ``metadata["error"]``.
    """
    reasons = [
        str(reason) if isinstance(reason := item.metadata.get("error"), Unreadable) else None
        for item in items
    ]
    if all(reason is None for reason in reasons):
        return None
    return strings(reasons)
