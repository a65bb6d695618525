"""The tests of ratio and mean metrics: McNemar and Newcombe, the paired t, their cluster forms.

When the pairs (or clusters) show no spread, the exact sign test and Wilson bounds stand in.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ..stats import _paired as _stats
from ..stats._clusters import _cluster_se
from ..stats._intervals import _t_bounds
from ..stats._tally import Tally

if TYPE_CHECKING:
    from numpy.typing import NDArray


#: With ``ci_method="auto"``, paired ratio comparisons of fewer pairs take the Jeffreys
#: posterior's interval of the difference and report P(candidate better) in ``extra``.
AUTO_POSTERIOR_BELOW = 100


#: Why a comparison with clusters fell back, appended to its method in parentheses.
_ONE_CLUSTER = "1 cluster: items taken as independent"
_NO_SPREAD = "no spread between clusters"


def _noted(method: str, note: str | None) -> str:
    """``method`` with the fallback it took, if any, in parentheses."""
    return method if note is None else f"{method} ({note})"


def _ratio(
    ok_a: NDArray[np.bool_],
    ok_b: NDArray[np.bool_],
    clusters: list[str | None] | None,
    confidence: float,
    auto: bool = False,
) -> dict[str, Any]:
    n = ok_a.size
    both = int(np.count_nonzero(ok_a & ok_b))
    only_a = int(np.count_nonzero(ok_a & ~ok_b))
    only_b = int(np.count_nonzero(ok_b & ~ok_a))
    note = None
    if clusters is not None:
        values = (both + only_a) / n, (both + only_b) / n
        diffs = ok_b.astype(np.float64) - ok_a.astype(np.float64)
        clustered = _clustered(diffs, clusters, confidence, values, bounds=(0.0, 1.0), scale=1.0)
        if clustered is not None:
            counts = {"only_baseline": float(only_a), "only_candidate": float(only_b)}
            return {**clustered, "extra": {**counts, **clustered["extra"]}}
        note = _ONE_CLUSTER
    return ratio_of_counts(both, only_a, only_b, n - both - only_a - only_b, confidence, auto, note)


def ratio_of_counts(
    both: int,
    only_a: int,
    only_b: int,
    neither: int,
    confidence: float,
    auto: bool = False,
    note: str | None = None,
) -> dict[str, Any]:
    """McNemar's exact test and Newcombe's interval from the four counts of the pairs.

    ``note``: the fallback that led here (a cluster form that could not be estimated).
    """
    n = both + only_a + only_b + neither
    value_a, value_b = (both + only_a) / n, (both + only_b) / n
    extra = {"only_baseline": float(only_a), "only_candidate": float(only_b)}
    theta, low, high = _stats.newcombe_paired(both, only_b, only_a, neither, confidence)
    method = "mcnemar-exact, newcombe-10"
    if auto and n < AUTO_POSTERIOR_BELOW:
        low, high, better = _stats.beta_posterior_difference(only_a, only_b, n, confidence)
        low, high = min(low, theta), max(high, theta)
        extra["p_b_better"] = better
        method = f"mcnemar-exact, beta-posterior (auto: n = {n} < {AUTO_POSTERIOR_BELOW})"
    elif auto:
        method = f"{method} (auto: n = {n} >= {AUTO_POSTERIOR_BELOW})"
    return {
        "value_a": value_a,
        "value_b": value_b,
        "difference": theta,
        "ci_low": low,
        "ci_high": high,
        "p_value": _stats.mcnemar_exact(only_a, only_b),
        "method": _noted(method, note),
        "mde": _stats.mcnemar_mde(n, only_a + only_b, confidence),
        "extra": extra,
    }


def _clustered(
    diffs: NDArray[np.float64],
    clusters: list[str | None],
    confidence: float,
    values: tuple[float, float],
    *,
    bounds: tuple[float, float] | None,
    scale: float,
) -> dict[str, Any] | None:
    """Cluster-robust paired t on the differences, or ``None`` with one cluster.

    With one cluster there is no between-cluster variance at all: the caller's iid test
    stands in, noting :data:`_ONE_CLUSTER`. When every cluster has the same mean difference
    (``se = 0``, rounding noise included) the clusters are still the sample: the cluster sign
    test (every cluster one way: ``p = 2 / 2^G``) and, for values in ``bounds``, the Wilson
    bounds of both sides' ``values`` over ``G`` trials at the t(G-1) quantile
    (:func:`_tested`). ``scale``: the size of the values the differences came from, for
    telling a zero mean from rounding.
    """
    codes, n_clusters = _stats.cluster_codes(clusters)
    n = diffs.size
    if n_clusters < 2:
        return None
    mean = float(diffs.mean())
    se = _cluster_se(diffs, mean, codes, n_clusters)
    naive = float(diffs.std(ddof=1)) / math.sqrt(n) if n > 1 else 0.0
    extra = {
        "n_clusters": float(n_clusters),
        "se_cluster": se,
        "design_effect": (se / naive) ** 2 if se > 0 and naive > 0 else n / n_clusters,
    }
    t = (mean, se, *_stats.t_interval(mean, se, n_clusters - 1, confidence)) if se > 0 else None
    note = None if t else _NO_SPREAD
    tested = _tested(mean, t, n_clusters, values, bounds, confidence, scale, True, note)
    return {"value_a": values[0], "value_b": values[1], **tested, "extra": extra}


def _mean(
    values_a: NDArray[np.float64],
    values_b: NDArray[np.float64],
    clusters: list[str | None] | None,
    confidence: float,
    bounds: tuple[float, float] | None,
) -> dict[str, Any]:
    a, b, d = Tally.of(values_a), Tally.of(values_b), Tally.of(values_b - values_a)
    note = None
    if clusters is not None:
        values = a.mean_sd()[0], b.mean_sd()[0]
        diffs = values_b - values_a
        clustered = _clustered(
            diffs, clusters, confidence, values, bounds=bounds, scale=_scale(a, b)
        )
        if clustered is not None:
            return clustered
        note = _ONE_CLUSTER
    return mean_of_tallies(a, b, d, confidence, bounds, note)


def _scale(a: Tally, b: Tally) -> float:
    """The largest magnitude of the paired values (what their differences are exact to)."""
    return max(abs(float(t.values[i])) for t in (a, b) for i in (0, -1))


def mean_of_tallies(
    a: Tally,
    b: Tally,
    d: Tally,
    confidence: float,
    bounds: tuple[float, float] | None,
    note: str | None = None,
) -> dict[str, Any]:
    """The paired t test of a mean metric from the tallies of its pairs' values.

    ``a``, ``b``: each side's values; ``d``: the differences ``b - a`` of the pairs. Tallies
    of disjoint pairs merge by addition, so pairs joined a bucket at a time give the numbers
    of pairs held at once, to the bit.
    """
    n = d.n
    values = a.mean_sd()[0], b.mean_sd()[0]
    # Differences are as exact as the values they came from: spreads within their rounding
    # are no spread ((a + 0.1) - a is not the same float for every a).
    scale = _scale(a, b)
    spread = n > 1 and not _stats.is_constant(d.values[[0, -1]], scale)
    t = _stats.paired_t(d, confidence) if spread else None
    tested = _tested(d.mean_sd()[0], t, n, values, bounds, confidence, scale, False, note)
    return {"value_a": values[0], "value_b": values[1], **tested}


def _tested(
    diff: float,
    t: tuple[float, float, float, float, float] | None,
    trials: int,
    values: tuple[float, float],
    bounds: tuple[float, float] | None,
    confidence: float,
    scale: float,
    cluster: bool,
    note: str | None,
) -> dict[str, Any]:
    """The test of ``trials`` pairs (clusters) whose mean difference is ``diff``.

    The paired t ``t = (mean, se, low, high, p)``, its interval within ± the width of
    ``bounds``. Without one (every pair differs by the same amount, or one pair: no spread
    to estimate) the exact sign test, and for a bounded metric Newcombe's square-and-add of
    the Wilson bounds of both sides' ``values`` as shares of the range, over ``trials`` at
    the normal quantile (t(G-1)'s for clusters).
    """
    width = None if bounds is None else bounds[1] - bounds[0]
    mde: float | None = None
    if t is not None:
        _, se, low, high, p = t
        if width is not None:
            low, high = max(low, -width), min(high, width)
        method = "cluster-paired-t" if cluster else "paired-t"
        mde = _stats.mde(se, confidence, trials - 1)
    else:
        zero = _stats.is_constant(np.array([0.0, diff]), scale)
        low = high = diff
        p = 1.0 if zero else _stats.sign_test(trials, 0)
        method = "cluster-sign-test" if cluster else "sign-test"
        if bounds is not None and width is not None:
            z = _t_bounds(trials - 1, confidence)[1] if cluster else None
            share_a, share_b = ((v - bounds[0]) / width for v in values)
            share_low, share_high = _stats.wilson_difference(
                share_a, share_b, trials, confidence, z
            )
            low, high = min(share_low * width, diff), max(share_high * width, diff)
            method += ", cluster-wilson-bound" if cluster else ", newcombe-wilson-bound"
    return {
        "difference": diff,
        "ci_low": low,
        "ci_high": high,
        "p_value": p,
        "method": _noted(method, note),
        "mde": mde,
    }
