"""How every output writes a number: digits from the interval, units, signs, p-values, axes.

One rule for the terminal, LaTeX, markdown, HTML and the plots (CSV and JSON keep every
float exactly): a value is written to the decimal place its interval can tell apart. The
place is that of the interval width's first significant digit, plus one: ``0.712 [0.683,
0.739]`` (width 0.056: three decimals), ``0.000502 [0.000491, 0.000513]`` (width 0.00002: six),
``35 [29, 41]`` on a 0-100 scale. A value without an interval gets four significant digits,
as report.html's per-item values do.
Values shown side by side (one metric across models) share the finest of their places, so
0.0005 and 0.0008 are never both ``0.001``.

A unit (``Measurement.unit``, e.g. ``USD`` for a cost) is written as a currency sign before the
number (``$0.000502``) or as a word after it (``412 tokens``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ..stats._intervals import METHODS

__all__ = [
    "MAX_DECIMALS",
    "decimals_for",
    "direction",
    "direction_arrow",
    "fixed",
    "format_interval",
    "format_p",
    "format_signed",
    "format_value",
    "method_name",
    "shared_decimals",
    "with_unit",
]

#: The most decimals any number is written with.
MAX_DECIMALS = 10
#: Significant digits of a value that has no interval.
_SIGNIFICANT = 4

#: Units written as a sign before the number.
_CURRENCY = {"USD": "$", "$": "$", "EUR": "€", "€": "€", "GBP": "£", "£": "£"}


def _place(x: float) -> int:
    """The decimal exponent of ``x``'s first significant digit (``0.056`` -> -2)."""
    return math.floor(math.log10(abs(x)))


def decimals_for(value: float | None, low: float | None = None, high: float | None = None) -> int:
    """Decimals to write ``value`` with: one past the interval width's first digit.

    Without an interval (or one of zero width), four significant digits of the value; zero
    or no value, three decimals.

    Example:
        >>> decimals_for(0.712, 0.683, 0.739), decimals_for(0.000502, 0.000491, 0.000513)
        (3, 6)
    """
    if low is not None and high is not None and math.isfinite(high - low) and high > low:
        digits = 1 - _place(high - low)
    elif value is not None and math.isfinite(value) and value != 0:
        digits = _SIGNIFICANT - 1 - _place(value)
    else:
        digits = _SIGNIFICANT - 1
    return max(0, min(MAX_DECIMALS, digits))


def shared_decimals(rows: Iterable[tuple[float | None, float | None, float | None]]) -> int:
    """The decimals for values shown together: the finest any of ``(value, low, high)`` needs."""
    found = [decimals_for(v, lo, hi) for v, lo, hi in rows if v is not None]
    return max(found) if found else _SIGNIFICANT - 1


def fixed(value: float, decimals: int) -> str:
    """``value`` with ``decimals`` decimals, never ``-0.000``."""
    text = f"{value:.{decimals}f}"
    if text.startswith("-") and float(text) == 0:
        text = text[1:]
    return text


def with_unit(text: str, unit: str | None) -> str:
    """``text`` with ``unit``: ``$`` before it for a currency, the unit after it otherwise."""
    if not unit:
        return text
    sign = _CURRENCY.get(unit)
    if sign is None:
        return f"{text} {unit}"
    return f"-{sign}{text[1:]}" if text.startswith("-") else f"{sign}{text}"


def format_value(
    value: float | None, decimals: int | None = None, *, unit: str | None = None, none: str = "—"
) -> str:
    """A value as text (``none`` when missing); decimals from :func:`decimals_for` by default."""
    if value is None:
        return none
    places = decimals_for(value) if decimals is None else decimals
    return with_unit(fixed(value, places), unit)


def format_interval(
    low: float | None,
    high: float | None,
    decimals: int | None = None,
    *,
    unit: str | None = None,
    brackets: tuple[str, str] = ("[", "]"),
) -> str:
    """``[low, high]`` (empty when there is no interval), with the value's decimals."""
    if low is None or high is None:
        return ""
    places = decimals_for(None, low, high) if decimals is None else decimals
    ends = (with_unit(fixed(x, places), unit) for x in (low, high))
    return brackets[0] + ", ".join(ends) + brackets[1]


def format_signed(value: float | None, decimals: int, *, none: str = "—") -> str:
    """A difference with its sign (``+0.042``, ``-0.013``; zero without one)."""
    if value is None:
        return none
    text = fixed(value, decimals)
    if float(text) == 0:
        return text
    return text if text.startswith("-") else f"+{text}"


def format_p(p: float | None, *, none: str = "—") -> str:
    """A p-value: three significant digits below 0.1, three decimals above, ``<0.0001`` below.

    Example:
        >>> format_p(0.0123), format_p(0.5), format_p(3e-7)
        ('0.0123', '0.500', '<0.0001')
    """
    if p is None or not math.isfinite(p):
        return none
    if p < 1e-4:
        return "<0.0001"
    return f"{p:.3g}" if p < 0.1 else f"{p:.3f}"


def direction(higher_is_better: bool) -> str:
    """``higher is better`` or ``lower is better``."""
    return "higher is better" if higher_is_better else "lower is better"


def direction_arrow(higher_is_better: bool) -> str:
    """``↑`` when higher is better, ``↓`` when lower is."""
    return "↑" if higher_is_better else "↓"


def method_name(method: str) -> str:
    """How tables name an interval method: ``Wilson``, ``t``, ``bootstrap``...

    The display name of the method's entry in :data:`itemscore.stats._intervals.METHODS`;
    ``"none"`` (no interval) and names that are no entry are shown as they are recorded.
    """
    entry = METHODS.get(method)
    return "no interval" if method == "none" else method if entry is None else entry.display
