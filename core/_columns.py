"""``ScoreColumn``: one metric's scores for a run's items, as one Arrow column.

A score has one form in memory and one on disk. In memory it is a row of a
:class:`ScoreColumn`: one :func:`score_type` struct array per metric label (the state code,
the value, the reason, the ``extra`` mapping as JSON text), which the run table holds, moves
between processes as flat buffers and writes to Parquet as it is. An
:class:`~itemscore.ItemScore` is the one view of a row, built only when someone reads one.

The four states and their codes are :data:`~itemscore._records.STATES`: the order of
:class:`~itemscore.Status` is the code order.
"""

from __future__ import annotations

import functools
import json
import operator
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, cast, overload

from ._records import CODE, EMPTY, STATE_NAMES, STATES, ItemResult, ItemScore, Status
from ._serialize import json_safe

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

# numpy and pyarrow are imported where a column is built or read, not with this module: a
# metric module imports ScoreColumn, and listing the installed metrics imports every metric
# module (``itemscore metrics`` stays light: tests/test_cli_plugins.py).

__all__ = [
    "CODE",
    "STATES",
    "STATE_NAMES",
    "ScoreColumn",
    "score_type",
    "scored_items",
    "without_extras",
]

OK, FAIL, SKIP, ERROR = (CODE[s] for s in (Status.OK, Status.FAIL, Status.SKIP, Status.ERROR))


@functools.cache
def score_type() -> pa.StructType:
    """The Arrow type of one label's scores, in memory and in ``items.parquet``."""
    import pyarrow as pa

    return pa.struct(
        [
            pa.field("status", pa.int8(), nullable=False),
            pa.field("value", pa.float64()),
            pa.field("reason", pa.string()),
            pa.field("extra", pa.string()),
        ]
    )


_new = object.__new__
_set = object.__setattr__
_status_of = operator.attrgetter("status")
_value_of = operator.attrgetter("value")
_reason_of = operator.attrgetter("reason")
_extra_of = operator.attrgetter("extra")
_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False, check_circular=False).encode
#: Not read yet (``None`` is a value: no item has one).
_UNREAD: Any = object()


def _extra_text(extra: Mapping[str, Any]) -> str:
    try:
        return _encode(extra if type(extra) is dict else dict(extra))
    except (TypeError, ValueError):  # numpy scalars, NaN, read-only nested mappings
        return _encode(json_safe(extra))


def encode_extras(extras: Iterable[Mapping[str, Any] | None]) -> pa.Array:
    """Each ``extra`` as JSON text (null when empty), as Arrow.

    One holding a lone surrogate is written with ASCII escapes (Arrow holds UTF-8 only).
    """
    import pyarrow as pa

    texts = [_extra_text(extra) if extra else None for extra in extras]
    try:
        return pa.array(texts, pa.string())
    except UnicodeEncodeError:
        ascii_encode = json.JSONEncoder(ensure_ascii=True, allow_nan=False).encode
        fixed = [t if t is None or t.isascii() else ascii_encode(json.loads(t)) for t in texts]
        return pa.array(fixed, pa.string())


def _struct(status: pa.Array, value: pa.Array, reason: pa.Array, extra: pa.Array) -> pa.StructArray:
    import pyarrow as pa

    return pa.StructArray.from_arrays([status, value, reason, extra], fields=list(score_type()))


def without_extras(array: pa.StructArray) -> pa.StructArray:
    """A :func:`score_type` array with every ``extra`` null."""
    import pyarrow as pa

    return _struct(
        array.field(0), array.field(1), array.field(2), pa.nulls(len(array), pa.string())
    )


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


class ScoreColumn(Sequence[ItemScore]):
    """One metric's scores, one entry per item, in item order, held as Arrow.

    A metric's ``score_items`` may return a column instead of a list of scores: state codes
    (:attr:`OK`, :attr:`FAIL`, :attr:`SKIP`, :attr:`ERROR`), values (a finite number for ok
    and fail, ``None`` otherwise), and optionally reasons and extras; no
    :class:`~itemscore.ItemScore` is built until someone reads one.

    :attr:`states` is read from the array's buffer; :attr:`values`, :attr:`reasons` and
    :attr:`extras` become Python objects the first time they are read, and only those.
    ``reasons`` and ``extras`` read ``None`` when no item has one (the common case).

    The ``extra`` mappings a metric gave are encoded as JSON text the first time the Arrow
    form is asked for with them (:attr:`arrow`): a run that keeps no items never needs them
    as text (see :meth:`without_extras`), and encoding them would be a sixth of such a run.
    """

    __slots__ = ("_arrow", "_extras", "_given", "_reasons", "_states", "_values", "label")

    #: State codes, as stored in :attr:`states`.
    OK: ClassVar[int] = CODE[Status.OK]
    FAIL: ClassVar[int] = CODE[Status.FAIL]
    SKIP: ClassVar[int] = CODE[Status.SKIP]
    ERROR: ClassVar[int] = CODE[Status.ERROR]

    def __init__(
        self,
        label: str,
        states: bytes | bytearray,
        values: Sequence[float | None],
        reasons: Sequence[str | None] | None = None,
        extras: Sequence[Mapping[str, Any] | None] | None = None,
    ) -> None:
        import numpy as np
        import pyarrow as pa

        from ._schema import strings

        n = len(states)
        for name, given in (("values", values), ("reasons", reasons), ("extras", extras)):
            if given is not None and len(given) != n:
                raise ValueError(
                    f"A ScoreColumn of {n} states was given {len(given)} {name}; give one per item."
                )
        states = bytes(states)
        reason = pa.nulls(n, pa.string()) if reasons is None else strings(reasons)
        self._init(
            label,
            _struct(
                pa.array(np.frombuffer(states, dtype=np.int8), type=pa.int8()),
                pa.array(values, type=pa.float64()),
                reason,
                pa.nulls(n, pa.string()),
            ),
            extras,
            states,
        )

    def _init(
        self,
        label: str,
        arrow: pa.StructArray | pa.ChunkedArray,
        given: Sequence[Mapping[str, Any] | None] | None = None,
        states: bytes | None = None,
    ) -> None:
        #: The metric's label in the run.
        import pyarrow as pa

        self.label = label
        if isinstance(arrow, pa.ChunkedArray) and arrow.num_chunks <= 1:
            arrow = arrow.chunk(0) if arrow.num_chunks else pa.array([], type=score_type())
        self._arrow: pa.StructArray | pa.ChunkedArray = arrow
        # The extras as the metric gave them, not yet encoded (the array's are null then).
        self._given = given
        self._states = states
        self._values: list[float | None] | None = None
        self._reasons: Any = _UNREAD
        self._extras: Any = _UNREAD

    # -- building ------------------------------------------------------------------------

    @classmethod
    def of_arrow(cls, label: str, arrow: pa.StructArray | pa.ChunkedArray) -> ScoreColumn:
        """A column over a :func:`score_type` array (or the chunks of a run's batches)."""
        column: ScoreColumn = _new(cls)
        column._init(label, arrow)
        return column

    @classmethod
    def from_scores(cls, label: str, scores: Sequence[ItemScore]) -> ScoreColumn:
        """A column holding ``scores`` (their own ``metric`` is ignored: the label wins)."""
        states = bytes(map(CODE.__getitem__, map(_status_of, scores)))
        values = list(map(_value_of, scores))
        reasons: list[str | None] | None = list(map(_reason_of, scores))
        if reasons is not None and reasons.count(None) == len(reasons):
            reasons = None
        extras: list[Mapping[str, Any] | None] | None = list(map(_extra_of, scores))
        if extras is not None:
            empty = extras.count(EMPTY)
            if empty == len(extras):
                extras = None
            elif empty:
                extras = [e or None for e in extras]
        return cls(label, states, values, reasons, extras)

    @classmethod
    def filled(cls, label: str, n: int, status: Status | str, reason: str | None) -> ScoreColumn:
        """``n`` equal value-less scores (skip or error) with one reason."""
        import numpy as np
        import pyarrow as pa

        code = CODE[Status(status)]
        return cls.of_arrow(
            label,
            _struct(
                pa.array(np.full(n, code, dtype=np.int8), type=pa.int8()),
                pa.nulls(n, pa.float64()),
                pa.array([reason] * n, pa.string()),
                pa.nulls(n, pa.string()),
            ),
        )

    @classmethod
    def concat(cls, label: str, parts: Sequence[ScoreColumn]) -> ScoreColumn:
        """One column from consecutive parts (shards), in order."""
        import pyarrow as pa

        if len(parts) == 1:
            return parts[0].relabelled(label)
        chunks: list[pa.StructArray] = []
        for part in parts:
            arrow = part.arrow
            chunks += arrow.chunks if isinstance(arrow, pa.ChunkedArray) else [arrow]
        return cls.of_arrow(label, pa.chunked_array(chunks, score_type()))

    def relabelled(self, label: str) -> ScoreColumn:
        """The same scores under ``label``."""
        column = ScoreColumn.of_arrow(label, self._arrow)
        column._given = self._given
        column._states = self._states
        return column

    def take(self, indices: Sequence[int]) -> ScoreColumn:
        """The scores of the items at ``indices``, in that order."""
        import pyarrow as pa

        picked = self._arrow.take(pa.array(indices, type=pa.int64()))
        column = ScoreColumn.of_arrow(self.label, picked)
        if self._given is not None:
            column._given = list(map(self._given.__getitem__, indices))
        return column

    def without_extras(self) -> ScoreColumn:
        """The same scores with every ``extra`` left out (none encoded)."""
        import pyarrow as pa

        if self._given is not None:
            return ScoreColumn.of_arrow(self.label, self._arrow)
        arrow = self._arrow
        if isinstance(arrow, pa.ChunkedArray):
            bare = [without_extras(chunk) for chunk in arrow.chunks]
            return ScoreColumn.of_arrow(self.label, pa.chunked_array(bare, score_type()))
        return ScoreColumn.of_arrow(self.label, without_extras(arrow))

    def __reduce__(self) -> tuple[Any, ...]:
        # Through Arrow IPC: a pickled slice of a shared all-null array would carry all of it.
        import pyarrow as pa

        from ._lean import to_ipc

        return (_restored, (self.label, to_ipc(pa.table({"scores": self.arrow}))))

    # -- reading -------------------------------------------------------------------------

    @property
    def arrow(self) -> pa.StructArray | pa.ChunkedArray:
        """The column as Arrow: one array, or the chunks of a run's batches as they came.

        Joining a run's chunks would copy every score column while the table holds it.
        """
        import pyarrow as pa

        if self._given is not None:
            arrow = self._arrow
            assert isinstance(arrow, pa.StructArray)  # built from lists: one array
            self._arrow = _struct(
                arrow.field(0), arrow.field(1), arrow.field(2), encode_extras(self._given)
            )
            self._given = None
        return self._arrow

    def array(self, *, extras: bool = True) -> pa.StructArray:
        """The column as one Arrow array (chunks joined); ``extras=False``: every one null."""
        import pyarrow as pa

        arrow = (self if extras else self.without_extras()).arrow
        return arrow.combine_chunks() if isinstance(arrow, pa.ChunkedArray) else arrow

    def _field(self, name: str) -> pa.Array | pa.ChunkedArray:
        """One field of every score (chunked as the column is)."""
        import pyarrow as pa

        arrow = self._arrow
        if isinstance(arrow, pa.ChunkedArray):
            return pa.chunked_array(
                [chunk.field(name) for chunk in arrow.chunks], score_type().field(name).type
            )
        return arrow.field(name)

    @property
    def states(self) -> bytes:
        """One state code per item (see :data:`STATES`)."""
        import numpy as np

        if self._states is None:
            codes = self._field("status").to_numpy(zero_copy_only=False)
            self._states = np.asarray(codes, dtype=np.int8).tobytes()
        return self._states

    @property
    def values(self) -> list[float | None]:
        """One value per item (``None`` for skip and error)."""
        if self._values is None:
            self._values = self._field("value").to_pylist()
        return self._values

    @property
    def reasons(self) -> list[str | None] | None:
        """One reason per item, or ``None`` when no item has one."""
        if self._reasons is _UNREAD:
            field = self._field("reason")
            self._reasons = None if field.null_count == len(field) else field.to_pylist()
        return cast("list[str | None] | None", self._reasons)  # a list or None once read

    @property
    def extras(self) -> Sequence[Mapping[str, Any] | None] | None:
        """One ``extra`` per item (``None``: empty), or ``None`` when no item has one."""
        if self._given is not None:
            return self._given
        if self._extras is _UNREAD:
            field = self._field("extra")
            self._extras = None if field.null_count == len(field) else _Decoded(field.to_pylist())
        return cast("Sequence[Mapping[str, Any] | None] | None", self._extras)  # read above

    def __len__(self) -> int:
        return len(self._arrow)

    @overload
    def __getitem__(self, index: int) -> ItemScore: ...

    @overload
    def __getitem__(self, index: slice) -> list[ItemScore]: ...

    def __getitem__(self, index: int | slice) -> ItemScore | list[ItemScore]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        code = self.states[index]  # raises IndexError past the end
        if index < 0:
            index += len(self)
        reasons, extras = self.reasons, self.extras
        reason = None if reasons is None else reasons[index]
        extra = None if extras is None else extras[index]
        return _score(self.label, code, self.values[index], reason, extra)

    def __iter__(self) -> Iterator[ItemScore]:
        if not len(self):
            return iter(())
        label, values, reasons, extras = self.label, self.values, self.reasons, self.extras
        return map(
            _score,
            [label] * len(values),
            self.states,
            values,
            reasons if reasons is not None else [None] * len(values),
            extras if extras is not None else [None] * len(values),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment] # compared by content, like a list

    def __repr__(self) -> str:
        return f"<ScoreColumn {self.label!r}: {len(self)} scores>"

    def counts(self) -> dict[Status, int]:
        """Items in each of the four states."""
        import numpy as np

        codes = np.frombuffer(self.states, dtype=np.int8)  # (bincount would copy to int64)
        return {status: int(np.count_nonzero(codes == code)) for code, status in enumerate(STATES)}

    def scored_extras(self) -> list[Mapping[str, Any]]:
        """The ``extra`` of every scored (ok and fail) item, in order.

        Equal verdicts of a batch are often one shared mapping, so counting by identity is cheap.
        """
        states = self.states
        extras = self.extras
        if extras is None:
            return [EMPTY] * (states.count(OK) + states.count(FAIL))
        return [e or EMPTY for s, e in zip(states, extras) if s <= FAIL]

    def scored_clusters(self, clusters: Sequence[str | None]) -> list[str | None]:
        """The entries of ``clusters`` (one per item) of the scored items, in order."""
        return [c for s, c in zip(self.states, clusters) if s <= FAIL]

    def scored_outcomes(
        self, clusters: Sequence[str | None]
    ) -> tuple[list[bool], list[str | None]]:
        """For the scored items: whether each is ok (not fail), and each one's cluster."""
        pairs = [(s == OK, c) for s, c in zip(self.states, clusters) if s <= FAIL]
        return [p[0] for p in pairs], [p[1] for p in pairs]

    def scored_values(self) -> np.ndarray[Any, np.dtype[np.float64]]:
        """The values of the scored (ok and fail) items, in order, as a numpy array.

        A million Python floats would cost more memory than the whole column.
        """
        import numpy as np
        import pyarrow as pa

        codes = np.frombuffer(self.states, dtype=np.int8)
        scored = self._field("value").filter(pa.array(codes <= FAIL))  # one copy, not two
        return np.asarray(scored.to_numpy(zero_copy_only=False), np.float64)


def _score(label: str, code: int, value: float | None, reason: str | None, extra: Any) -> ItemScore:
    """One row of a column as an :class:`~itemscore.ItemScore` (checked when it was made)."""
    score = _new(ItemScore)
    _set(score, "metric", label)
    _set(score, "value", value)
    _set(score, "status", STATES[code])
    _set(score, "reason", reason)
    _set(score, "extra", extra or EMPTY)
    return score


#: Distinct scores a label shares across the rows of one batch, at most.
_SHARED_SCORES = 4096


def scored_items(
    items: Sequence[ItemResult], columns: Sequence[ScoreColumn], *, fresh: bool = False
) -> Iterator[ItemResult]:
    """``items`` with their scores: ``item.scores[label]`` read from each label's column.

    The columns hold one row per item, in order. An :class:`~itemscore.ItemScore` is
    immutable, so rows of one label that are equal (state, value, reason, ``extra`` text)
    share one: a batch of right-or-wrong scores builds a handful, not one per row.

    Args:
        items: The items, one per row.
        columns: One column per label.
        fresh: The items were just built for this (nobody else holds them): their ``scores``
            are set in place instead of on a copy.
    """
    labels = [column.label for column in columns]
    by_label = [_row_scores(column) for column in columns]
    rows = zip(*by_label) if by_label else ([] for _ in items)
    for item, row in zip(items, rows):
        scores = dict(zip(labels, row))
        if fresh:
            _set(item, "scores", scores or EMPTY)
            yield item
        else:
            yield item.with_scores(scores)


def _row_scores(column: ScoreColumn) -> list[ItemScore]:
    """One :class:`~itemscore.ItemScore` per row, equal rows sharing one."""
    import numpy as np
    import pyarrow as pa

    arrow = column.arrow
    if isinstance(arrow, pa.ChunkedArray):
        arrow = arrow.combine_chunks()
    n, label = len(arrow), column.label
    value = arrow.field("value")
    numbers = np.asarray(value.to_numpy(zero_copy_only=False), dtype=np.float64)
    values = value.to_pylist()
    states = column.states
    extra = arrow.field("extra")
    reasons = column.reasons
    memo: dict[Any, ItemScore] = {}
    if np.any((numbers == 0.0) & np.signbit(numbers)):
        # -0.0 == 0.0 as a key: a column holding a negative zero shares no score.
        texts = extra.to_pylist()
        return [
            _score(label, c, v, r, None if t is None else json.loads(t))
            for c, v, r, t in zip(states, values, reasons or [None] * n, texts)
        ]
    if reasons is None and extra.null_count == n:  # the common case: state and value only
        out = []
        for key in zip(states, values):
            score = memo.get(key)
            if score is None:
                score = _score(label, key[0], key[1], None, None)
                if len(memo) < _SHARED_SCORES:
                    memo[key] = score
            out.append(score)
        return out
    out = []
    texts = extra.to_pylist()
    for full in zip(states, values, reasons or [None] * n, texts):
        score = memo.get(full)
        if score is None:
            text = full[3]
            score = _score(label, *full[:3], None if text is None else json.loads(text))
            if len(memo) < _SHARED_SCORES:
                memo[full] = score
        out.append(score)
    return out


def _restored(label: str, data: pa.Buffer) -> ScoreColumn:
    """A pickled :class:`ScoreColumn` (see its ``__reduce__``)."""
    from ._lean import from_ipc

    return ScoreColumn.of_arrow(label, from_ipc(data).column(0))


def columns_of(label: str, scores: Iterable[ItemScore] | ScoreColumn) -> ScoreColumn:
    """``scores`` as a column (a column is returned as it is)."""
    if isinstance(scores, ScoreColumn):
        return scores
    return ScoreColumn.from_scores(label, list(scores))
