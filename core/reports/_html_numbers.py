"""How report.html and the viewer write numbers: one function, so one rule for every cell.

:func:`number` is the only place the page chooses digits; the page's script shows per-item
values with four significant digits (``toPrecision(4)``), which this function also gives a
number without an interval.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

__all__ = ["column_decimals", "interval", "number", "p_value"]

#: Significant digits of a value without an interval.
_SIGNIFICANT = 4
#: Decimals are never more than this, however narrow an interval.
_MAX_DECIMALS = 12


def number(
    value: float | None,
    low: float | None = None,
    high: float | None = None,
    decimals: int | None = None,
) -> str:
    """``value`` with as many decimals as its interval's width needs, ``—`` for none.

    With an interval of width ``w > 0``, the decimals show two significant digits of ``w``, so
    that 0.0005 and 0.0008 with an interval 0.0001 wide read ``0.00050`` and ``0.00080``, and
    0.8333 with an interval 0.33 wide reads ``0.833``. Without one (or a zero-width one), four
    significant digits. The ends of the interval are written with the value's decimals.
    ``decimals`` overrides the choice: one column's (:func:`column_decimals`).

    Example:
        >>> number(0.00050, 0.00045, 0.00055)
        '0.00050'
        >>> number(0.8333333, 0.6078, 0.9416)
        '0.83'
    """
    if value is None or not math.isfinite(value):
        return "—"
    return f"{value:.{_decimals(value, low, high) if decimals is None else decimals}f}"


def interval(
    value: float | None, low: float | None, high: float | None, decimals: int | None = None
) -> str:
    """``[low, high]`` with the decimals :func:`number` gives ``value``; empty without ends."""
    if low is None or high is None:
        return ""
    if decimals is None:
        decimals = _decimals(value if value is not None else low, low, high)
    return f"[{low:.{decimals}f}, {high:.{decimals}f}]"


def column_decimals(
    cells: Iterable[tuple[float | None, float | None, float | None]],
) -> int | None:
    """The decimals of one column of ``(value, low, high)`` cells: the most any cell needs.

    A column of one metric's values (one per model, or per group) reads with one precision:
    0.83 beside 0.833 would suggest a difference in precision that is only one of interval
    width. ``None`` when no cell has a value (each then takes its own).
    """
    needed = [
        _decimals(value, low, high)
        for value, low, high in cells
        if value is not None and math.isfinite(value)
    ]
    return max(needed) if needed else None


def _decimals(value: float, low: float | None, high: float | None) -> int:
    width = (high - low) if low is not None and high is not None else 0.0
    if math.isfinite(width) and width > 0:
        return min(_MAX_DECIMALS, max(0, 1 - math.floor(math.log10(width))))
    if value == 0:
        return _SIGNIFICANT - 1
    magnitude = math.floor(math.log10(abs(value)))
    return min(_MAX_DECIMALS, max(0, _SIGNIFICANT - 1 - magnitude))


def p_value(p: float | None) -> str:
    """A p-value: three significant digits, ``<0.0001`` below that, ``—`` for none."""
    if p is None or not math.isfinite(p):
        return "—"
    if p < 1e-4:
        return "<0.0001"
    return f"{p:.3g}" if p < 0.1 else f"{p:.3f}"
