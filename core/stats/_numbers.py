"""The numbers an estimate is given, checked, and the floating-point care every estimate shares.

Checks of the arguments (confidence levels, counts, seeds, bounds), values turned into finite
float64 arrays, machine epsilon for the rounding bounds of spreads, and the overflow-safe mean
and standard deviation. Each check raises before any data is looked at, with a message that
names the bad argument.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .._exceptions import ConfigError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

#: Machine epsilon of float64: the unit the rounding bounds of spreads are counted in.
_EPS = float(np.finfo(np.float64).eps)

# Above this magnitude, sums and squares of a few values can overflow float64.
_LARGE = 1e150


# --------------------------------------------------------------------------- validation


def _check_confidence(confidence: object) -> float:
    # numpy scalars would print as np.float64(...): messages show them as the float they are.
    shown = str(confidence) if type(confidence) is int else None
    if isinstance(confidence, bool) or not isinstance(confidence, numbers.Real):
        raise TypeError(
            f"`confidence` ({confidence!r}) must be a number, not {type(confidence).__name__}."
        )
    value = float(confidence)
    if not 0.0 < value < 1.0:  # also rejects NaN
        raise ConfigError(f"`confidence` ({shown or repr(value)}) must be in (0, 1).")
    return value


def _check_count(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` ({value!r}) must be an integer, not {type(value).__name__}.")
    return int(value)


def _check_positive_int(value: object, name: str) -> int:
    count = _check_count(value, name)
    if count < 1:
        raise ConfigError(f"`{name}` ({count}) must be at least 1.")
    return count


def _check_seed(seed: object) -> int:
    value = _check_count(seed, "seed")
    if value < 0:
        raise ConfigError(f"`seed` ({value}) must be a non-negative integer.")
    return value


def _as_values(values: Sequence[float] | NDArray[np.float64]) -> NDArray[np.float64]:
    """``values`` as a 1-D float64 array of finite numbers."""
    if isinstance(values, (str, bytes)):
        raise TypeError("`values` must be a sequence of numbers, not a string.")
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`values` must be a sequence of numbers: {exc}.") from None
    if array.ndim != 1:
        raise ValueError(f"`values` must be one-dimensional, got shape {array.shape}.")
    finite = np.isfinite(array)
    if not finite.all():
        bad = np.flatnonzero(~finite)
        first = float(array[bad[0]])
        raise ValueError(
            f"`values` holds {_plural(bad.size, 'non-finite value')} (NaN or infinity); "
            f"the first is {first!r} at index {int(bad[0])}."
        )
    return array


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _are(count: int) -> str:
    return "is" if count == 1 else "are"


def _as_counts(value: ArrayLike, name: str) -> NDArray[np.float64]:
    array = np.asarray(value)
    if array.dtype == np.bool_ or not (
        np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)
    ):
        raise TypeError(f"`{name}` must hold integers, not {array.dtype} values.")
    floats = array.astype(np.float64)
    if np.issubdtype(array.dtype, np.floating):
        bad = np.flatnonzero(floats != np.floor(floats))  # NaN and infinity fail this too
        if bad.size:
            raise TypeError(
                f"`{name}` must hold integers; got {float(floats.flat[bad[0]])!r} at flat index "
                f"{int(bad[0])}."
            )
    return floats


def _check_bounds(bounds: object) -> tuple[float, float] | None:
    if bounds is None:
        return None
    try:
        pair = tuple(float(b) for b in bounds)  # type: ignore[attr-defined]
        if len(pair) != 2:
            raise ValueError
    except (TypeError, ValueError):
        raise TypeError(f"`bounds` ({bounds!r}) must be a pair of numbers (lo, hi).") from None
    if not (math.isfinite(pair[0]) and math.isfinite(pair[1]) and pair[0] < pair[1]):
        raise ConfigError(f"`bounds` ({bounds!r}) must be two finite numbers with lo < hi.")
    return pair[0], pair[1]


def _check_within(x: NDArray[np.float64], bounds: tuple[float, float]) -> None:
    bad = np.flatnonzero((x < bounds[0]) | (x > bounds[1]))
    if bad.size:
        raise ValueError(
            f"`values` holds {_plural(bad.size, 'value')} outside `bounds` {bounds!r}; the "
            f"first is {float(x[bad[0]])!r} at index {int(bad[0])}."
        )


def _check_qs(qs: Sequence[float]) -> tuple[float, ...]:
    if isinstance(qs, (str, bytes)) or not isinstance(qs, Sequence):
        raise TypeError(f"`qs` ({qs!r}) must be a sequence of numbers.")
    items: Sequence[object] = qs
    checked: list[float] = []
    for q in items:
        if isinstance(q, bool) or not isinstance(q, numbers.Real):
            raise TypeError(f"`qs` holds {q!r}, which is not a number.")
        if not 0.0 <= float(q) <= 100.0:  # also rejects NaN
            raise ConfigError(f"`qs` ({q!r}) must be between 0 and 100.")
        checked.append(float(q))
    if not checked:
        raise ConfigError("`qs` must hold at least one percentile.")
    return tuple(checked)


# --------------------------------------------------------------------------- overflow


def _scale_of(x: NDArray[np.float64]) -> float:
    """1.0, or the largest magnitude in ``x`` when its sums or squares could overflow."""
    biggest = max(float(np.max(x)), -float(np.min(x))) if x.size else 0.0  # no copy of x
    return biggest if biggest > _LARGE else 1.0
