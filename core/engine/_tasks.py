"""What a worker runs: a shard of items scored into Arrow score columns.

Tasks are module-level functions so that any executor can send them to a worker by name; what
they return is plain Arrow arrays and small records, cheap to send back. The metrics' caches
(:attr:`~itemscore.MetricContext.memo`) live in the worker across the tasks of one run: a
task names its run by a token, and a worker keeps the memo of the last run it served only.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

import attrs
import pyarrow as pa

from .._exceptions import ItemscoreError, describe_exception
from .._records import ItemResult
from ._scores import to_arrow
from ._shard import Tick, score_shard

if TYPE_CHECKING:
    from .._plan import RunPlan
    from .._settings import RunSettings

__all__ = ["ShardFailed", "release_memo", "score_items_task"]

_MEMO: dict[str, dict[str, Any]] = {}


@attrs.frozen
class ShardFailed:
    """A shard that raised outside any metric: its items get ``error`` scores with ``reason``."""

    #: "shard failed: <exception>".
    reason: str


def _memo_of(token: str) -> dict[str, Any]:
    memo = _MEMO.get(token)
    if memo is None:
        _MEMO.clear()  # a long-lived worker (Dask) keeps one run's caches, not every run's
        memo = _MEMO[token] = {}
    return memo


def release_memo(token: str) -> None:
    """Drop the caches of run ``token`` in this process (the driver's, after a serial run)."""
    _MEMO.pop(token, None)


def score_items_task(
    plan: RunPlan,
    settings: RunSettings,
    items: Sequence[ItemResult],
    token: str,
    keep_extras: Collection[str] | None = None,
    tick: Tick | None = None,
    deadline: float | None = None,
) -> dict[str, pa.StructArray] | ShardFailed:
    """Score a shard of items with every item-level metric of ``plan``.

    Args:
        plan: The run's metrics.
        settings: The run's settings.
        items: The shard.
        token: The run's token (the metrics' caches live under it in this process).
        keep_extras: Labels whose ``extra`` texts are sent back; ``None``: every label's.
        tick: Progress, for a task run in the caller's process.
        deadline: When the run must end (``time.time()``).

    Returns:
        One Arrow score column per label, or :class:`ShardFailed`.
    """
    try:
        columns = score_shard(plan, items, settings, tick, _memo_of(token), deadline)
        out: dict[str, pa.StructArray] = {}
        for label, column in columns.items():
            array = to_arrow(column)
            if keep_extras is not None and label not in keep_extras:
                array = _without_extras(array)
            out[label] = array
        return out
    except ItemscoreError:
        raise
    except Exception as exc:  # noqa: BLE001 - a shard's failure costs its items only
        return ShardFailed(f"shard failed: {describe_exception(exc)}")


def _without_extras(array: pa.StructArray) -> pa.StructArray:
    fields = list(array.type)
    columns = [array.field(i) for i in range(len(fields))]
    columns[fields.index(array.type.field("extra"))] = pa.nulls(len(array), pa.string())
    return pa.StructArray.from_arrays(columns, fields=fields)
