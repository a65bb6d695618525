"""Per-item scores read back from a file, checked against what their metric can give.

A saved score is trusted only as far as it is possible: ``gate`` and ``compare`` refuse one
that is not (it would become a verdict), ``verify`` names it. This module imports nothing of
the run machinery, so the comparison code below it in the import graph may use it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._result import RunResult

__all__ = ["check_score_values", "score_value_problem"]

#: How far past its bounds a saved score may lie and still be taken for rounding.
_BOUNDS_SLACK = 1e-9


def score_value_problem(
    result: RunResult, label: str, bounds: tuple[float, float] | None
) -> str | None:
    """What is wrong with the saved per-item scores of ``label``, as one sentence; else ``None``.

    A score read back from a file is trusted only as far as this holds: a known state; a
    finite value on every ok and fail item and none on skip and error; every value within
    ``bounds`` (see :func:`itemscore.comparison.score_range`). The first item at fault is named,
    with its value.
    """
    import numpy as np

    from ._records import CODE, STATE_NAMES, Status

    table = result.table
    last = len(STATE_NAMES) - 1
    # A sum of floats lands a hair past its bound (sacrebleu's 100.00000000000004).
    slack = 0.0 if bounds is None else _BOUNDS_SLACK * max(1.0, bounds[1] - bounds[0])
    texts = (
        "has an unknown state (code {code}) for {label}",
        "is {state} for {label} with the value {value}; a scored value must be a finite number",
        "is {state} for {label} but carries the value {value}; skip and error carry none",
        "is {state} for {label} with the value {value}, outside {bounds}",
    )
    # Per check: items at fault, and the first one's (row, code, value).
    counts = [0] * len(texts)
    first: list[tuple[int, int, float] | None] = [None] * len(texts)
    start = 0
    for _, ((status, value),) in table.parts([label], []):  # a part at a time
        codes = np.asarray(status.to_numpy(zero_copy_only=False), np.int64)
        values = np.asarray(value.to_numpy(zero_copy_only=False), np.float64)
        scored = (codes == CODE[Status.OK]) | (codes == CODE[Status.FAIL])
        outside = np.zeros(codes.shape, dtype=bool)
        if bounds is not None:
            with np.errstate(invalid="ignore"):
                outside = scored & ((values < bounds[0] - slack) | (values > bounds[1] + slack))
        known = (codes >= 0) & (codes <= last)
        checks = (
            ~known,
            scored & ~np.isfinite(values),
            ~scored & known & ~np.isnan(values),
            outside,
        )
        for index, bad in enumerate(checks):
            where = np.flatnonzero(bad)
            counts[index] += int(where.size)
            if where.size and first[index] is None:
                row = int(where[0])
                first[index] = (start + row, int(codes[row]), float(values[row]))
        start += len(codes)
    for index, text in enumerate(texts):
        found = first[index]
        if found is None:
            continue
        row, code, value = found
        state = STATE_NAMES[code] if 0 <= code <= last else "unknown"
        shown = "" if bounds is None else f"[{bounds[0]:g}, {bounds[1]:g}]"
        if bounds is not None:
            shown += (", the range of a right-or-wrong metric's scores" if bounds == (0.0, 1.0)
                      else ", the metric's value bounds")  # fmt: skip
        what = text.format(code=code, state=state, label=label, value=_number(value), bounds=shown)
        more = counts[index] - 1
        also = f" ({more} more item{'s' if more != 1 else ''} too)" if more else ""
        return f"Item {_id_at(result, row)!r} {what}{also}."
    return None


def _id_at(result: RunResult, row: int) -> str:
    """The id of the item at ``row``, read a part at a time."""
    start = 0
    for (ids,), _ in result.table.parts([], ["id"]):
        if row < start + len(ids):
            return str(ids[row - start].as_py())
        start += len(ids)
    raise IndexError(row)


def check_score_values(
    result: RunResult,
    labels: Iterable[str],
    source: str,
    *,
    bounds_of: Callable[[str], tuple[float, float] | None] | None = None,
) -> None:
    """Refuse results whose saved per-item scores of ``labels`` cannot be right.

    Args:
        result: The loaded results.
        labels: The labels whose scores are about to be used.
        source: How to name the results in the message (the file).
        bounds_of: The range of each label's scores (``None``: none known), e.g.
            :func:`itemscore.comparison.score_range`; ``None``: no range is checked.

    Raises:
        ResultsFormatError: the first label with a score that :func:`score_value_problem`
            refuses, naming ``source``, the item and the value.
    """
    from ._exceptions import ResultsFormatError

    present = set(result.table.labels)
    for label in labels:
        if label not in present:  # nothing per item to check (no score column)
            continue
        problem = score_value_problem(result, label, bounds_of(label) if bounds_of else None)
        if problem is not None:
            raise ResultsFormatError(
                f"{source}: {problem} The per-item scores were altered or damaged after the "
                "run; score the items again (or run `itemscore verify` on the file to see "
                "what recomputes)."
            )


def _number(value: float) -> str:
    return "NaN (or none)" if math.isnan(value) else repr(float(value))
