"""Families of comparisons: their p-values adjusted together (Holm, Benjamini-Hochberg, none)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

import attrs
import numpy as np

from .._exceptions import ConfigError, did_you_mean, one_of
from ..stats import _paired as _stats
from ._record import Comparison

if TYPE_CHECKING:
    from numpy.typing import NDArray


def _check_adjust(adjust: object) -> str:
    if isinstance(adjust, str) and adjust in _stats.ADJUSTMENTS:
        return adjust
    hint = did_you_mean(adjust, _stats.ADJUSTMENTS) if isinstance(adjust, str) else ""
    raise ConfigError(f"`adjust` ({adjust!r}) must be one of {one_of(_stats.ADJUSTMENTS)}.{hint}")


def _group_rows(groups: list[str | None] | None) -> list[tuple[str, NDArray[np.intp]]]:
    """Each group's name and rows (``groups``: one name or ``None`` per row), by name."""
    members: dict[str, list[int]] = {}
    for index, group in enumerate(groups or ()):
        if group is not None:
            members.setdefault(group, []).append(index)
    return [(name, np.asarray(members[name], dtype=np.intp)) for name in sorted(members)]


def _with_groups(
    make: Callable[[Any], Comparison], groups: Sequence[tuple[str, Any]] | None, adjust: str
) -> Comparison:
    """The headline ``make(None)`` with its group comparisons, a family adjusted together.

    ``groups``: the ``(name, selector)`` each group's comparison ``make(selector)`` is made
    from, or ``None`` for no group comparisons.
    """
    headline = make(None)
    if groups is None:
        return headline
    found = _adjusted([make(selector) for _, selector in groups], adjust)
    return attrs.evolve(headline, groups=dict(zip([name for name, _ in groups], found)))


def _adjusted(family: list[Comparison], adjust: str) -> list[Comparison]:
    """``family`` with ``p_adjusted`` filled in by ``adjust`` over the p-values it has."""
    tested = [i for i, c in enumerate(family) if c.p_value is not None]
    adjusted = _stats.adjust_pvalues([cast("float", family[i].p_value) for i in tested], adjust)
    out = [attrs.evolve(c, adjustment=adjust) for c in family]
    for i, value in zip(tested, adjusted.tolist()):
        out[i] = attrs.evolve(out[i], p_adjusted=value)
    return out
