"""What the engine does to score columns besides scoring: unreadable documents become errors.

A score's one form is :class:`~itemscore.ScoreColumn` over a
:func:`~itemscore._columns.score_type` array; the engine builds the arrays of a shard with
``column.arrow`` (or ``column.without_extras().arrow`` when no reader keeps the extras).
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from .._columns import CODE, score_type
from .._records import ItemResult, Status
from .._schema import Unreadable, strings

__all__ = ["unreadable", "unreadable_reasons"]


def unreadable(array: pa.StructArray, errors: pa.Array) -> pa.StructArray:
    """Rows a reader could not read (a bad harness document) are ``error`` for every metric.

    ``errors`` holds each row's reason, null where the row was read.
    """
    import pyarrow.compute as pc

    bad = errors.is_valid()
    status = pc.if_else(bad, pa.scalar(CODE[Status.ERROR], pa.int8()), array.field("status"))
    value = pc.if_else(bad, pa.scalar(None, pa.float64()), array.field("value"))
    reason = pc.if_else(bad, errors, array.field("reason"))
    extra = pc.if_else(bad, pa.scalar(None, pa.string()), array.field("extra"))
    return pa.StructArray.from_arrays([status, value, reason, extra], fields=list(score_type()))


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
