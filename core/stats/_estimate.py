"""An aggregated number with its interval: what every statistic here returns."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import attrs

__all__ = ["EMPTY", "Estimate"]

#: One shared, read-only empty mapping: the default for every ``extra``/``metadata`` field.
EMPTY: Mapping[str, Any] = MappingProxyType({})


def _freeze_mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return value or EMPTY


@attrs.frozen(kw_only=True)
class Estimate:
    """An aggregated number with its interval, as returned by :mod:`itemscore.aggregate`.

    ``value`` is ``None`` when nothing was scored (``n == 0``); ``low``/``high`` are ``None`` when
    no interval is defined (n = 0, or a method that needs more observations).
    """

    #: The point estimate.
    value: float | None
    #: Lower end of the interval.
    low: float | None = None
    #: Upper end of the interval.
    high: float | None = None
    #: Observations the estimate rests on.
    n: int = 0
    #: The interval method ("wilson", "normal", "t", "bootstrap"...), or "none".
    method: str = "none"
    #: Confidence level of the interval, in (0, 1).
    confidence: float = 0.95
    #: Secondary numbers by name (precision next to F1, percentiles...).
    extra: Mapping[str, float] = attrs.field(default=EMPTY, converter=_freeze_mapping)

    @property
    def ci(self) -> tuple[float | None, float | None]:
        """The interval as a ``(low, high)`` pair."""
        return (self.low, self.high)
