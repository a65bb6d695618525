"""Families of comparisons: their p-values adjusted together (Holm, Benjamini-Hochberg, none)."""

from __future__ import annotations

from typing import cast

import attrs
import numpy as np

from .._exceptions import ConfigError, did_you_mean, one_of
from ..stats import _paired as _stats
from ._one import _compare_one, _Paired
from ._record import Comparison


def _check_adjust(adjust: object) -> str:
    if isinstance(adjust, str) and adjust in _stats.ADJUSTMENTS:
        return adjust
    hint = did_you_mean(adjust, _stats.ADJUSTMENTS) if isinstance(adjust, str) else ""
    raise ConfigError(f"`adjust` ({adjust!r}) must be one of {one_of(_stats.ADJUSTMENTS)}.{hint}")


def _by_group(paired: _Paired, adjust: str) -> dict[str, Comparison]:
    if paired.groups is None:
        return {}
    members: dict[str, list[int]] = {}
    for index, group in enumerate(paired.groups):
        if group is not None:
            members.setdefault(group, []).append(index)
    if not members:
        return {}
    names = sorted(members)
    comparisons = [_compare_one(paired, np.asarray(members[name], dtype=np.intp)) for name in names]
    return dict(zip(names, _adjusted(comparisons, adjust)))


def _adjusted(family: list[Comparison], adjust: str) -> list[Comparison]:
    """``family`` with ``p_adjusted`` filled in by ``adjust`` over the p-values it has."""
    tested = [i for i, c in enumerate(family) if c.p_value is not None]
    adjusted = _stats.adjust_pvalues([cast("float", family[i].p_value) for i in tested], adjust)
    out = [attrs.evolve(c, adjustment=adjust) for c in family]
    for i, value in zip(tested, adjusted.tolist()):
        out[i] = attrs.evolve(out[i], p_adjusted=value)
    return out
