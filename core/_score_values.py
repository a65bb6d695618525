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
    codes, values = table.codes(label), table.values(label)
    scored = (codes == CODE[Status.OK]) | (codes == CODE[Status.FAIL])
    last = len(STATE_NAMES) - 1
    outside = np.zeros(codes.shape, dtype=bool)
    if bounds is not None:
        # A sum of floats lands a hair past its bound (sacrebleu's 100.00000000000004).
        slack = _BOUNDS_SLACK * max(1.0, bounds[1] - bounds[0])
        with np.errstate(invalid="ignore"):
            outside = scored & ((values < bounds[0] - slack) | (values > bounds[1] + slack))
    checks = (
        ((codes < 0) | (codes > last), "has an unknown state (code {code}) for {label}"),
        (scored & ~np.isfinite(values),
         "is {state} for {label} with the value {value}; a scored value must be a finite "
         "number"),
        (~scored & (codes >= 0) & (codes <= last) & ~np.isnan(values),
         "is {state} for {label} but carries the value {value}; skip and error carry none"),
        (outside, "is {state} for {label} with the value {value}, outside {bounds}"),
    )  # fmt: skip
    for bad, text in checks:
        where = np.flatnonzero(bad)
        if where.size == 0:
            continue
        first = int(where[0])
        code = int(codes[first])
        state = STATE_NAMES[code] if 0 <= code <= last else "unknown"
        shown = "" if bounds is None else f"[{bounds[0]:g}, {bounds[1]:g}]"
        if bounds is not None:
            shown += (", the range of a right-or-wrong metric's scores" if bounds == (0.0, 1.0)
                      else ", the metric's value bounds")  # fmt: skip
        what = text.format(
            code=code, state=state, label=label, value=_number(values[first]), bounds=shown
        )
        more = where.size - 1
        also = f" ({more} more item{'s' if more != 1 else ''} too)" if more else ""
        return f"Item {table.key('id')[first]!r} {what}{also}."
    return None


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
