"""A vectorised ``paired_bootstrap`` for metrics whose headline is the mean of the item values.

``cost`` and ``llm_judge`` override ``aggregate`` for their extras (a total, usage figures)
while their value stays the default mean (or, with 0/1 values, the ratio). Without this,
``compare`` would call that aggregate once per resample; with it, both sides' means are
resampled on arrays at once (:mod:`._paired_means`). numpy loads on the first comparison, not
when the metrics are listed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from itemscore import ItemScore, MetricContext

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["ValueMeansBootstrap"]


def _value(score: ItemScore) -> float:
    return float(score.value) if score.value is not None else math.nan


class ValueMeansBootstrap:
    """Mixin: ``paired_bootstrap`` over the scores' values (a mean or a ratio of 0/1)."""

    def paired_bootstrap(
        self,
        scores_a: Sequence[ItemScore | None],
        scores_b: Sequence[ItemScore | None],
        ctx: MetricContext,
        *,
        n_resamples: int = 2000,
        clusters: Sequence[str | None] | None = None,
    ) -> tuple[float | None, float | None, NDArray[np.float64], NDArray[np.float64]]:
        """Both sides' mean value on the pairs scored on both, and on the same resamples."""
        from itemscore.metrics_builtin._paired_means import paired_means

        return paired_means(scores_a, scores_b, _value, n_resamples, ctx.seed, clusters)
