"""The bold cells of a run's tables: per metric, the model whose lead is significant."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from .._exceptions import ConfigError
from ..stats import _paired as _stats
from ._compare import _comparisons
from ._record import Comparison

if TYPE_CHECKING:
    from .._result import RunResult


def significant_leaders(result: RunResult) -> dict[str, str]:
    """Per metric label, the model whose lead over every other model is significant.

    The leader is the model with the best value (by ``higher_is_better``); it is returned only
    when its paired comparison against every other model has a Holm-adjusted p-value below
    ``1 - confidence`` (the run's level) and favours it. With one model the result is empty.
    """
    models = [m for m in result.by_model if m is not None]
    if len(models) < 2:
        return {}
    leaders: dict[str, str] = {}
    by_label: dict[str, list[Comparison]] = {}
    try:
        comparisons = _comparisons(
            result, None, baseline=None, metrics=None, adjust="holm", confidence=None,
            seed=None, allow_different_inputs=False, with_groups=False,
        )  # fmt: skip
    except ConfigError:  # models with nothing to pair, or a metric not installed: no bold
        return {}
    suite_id = result.suite_id
    for c in comparisons:
        if c.key == f"{suite_id}.{c.metric}":  # a further reducer's comparison bolds nothing
            by_label.setdefault(c.metric, []).append(c)
    for label, comparisons in by_label.items():
        best = _best_model(result, label, models)
        if best is None:
            continue
        against = [c for c in comparisons if best in (c.baseline, c.candidate)]
        if len(against) != len(models) - 1:
            continue
        # A p-value that underflowed to 0.0 is the strongest evidence, not a missing one.
        p_values = [1.0 if c.p_value is None else c.p_value for c in against]
        adjusted = _stats.adjust_pvalues(p_values, "holm")
        # Adjusted over this family, each favours ``best`` when significant (``better``).
        if all(
            attrs.evolve(c, p_adjusted=p).better == best for c, p in zip(against, adjusted.tolist())
        ):
            leaders[label] = best
    return leaders


def _best_model(result: RunResult, label: str, models: list[str]) -> str | None:
    values: dict[str, float] = {}
    higher = True
    for model in models:
        for m in result.by_model.get(model, {}).values():
            if m.metric == label and m.value is not None:
                values[model] = m.value
                higher = m.higher_is_better
    if len(values) < 2:
        return None
    return (max if higher else min)(values, key=values.__getitem__)
