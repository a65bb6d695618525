"""Items in clusters and groups: cluster-robust means and proportions, and the macro mean.

The cluster-robust standard error (:func:`_cluster_se`) is statsmodels' sandwich estimator
of OLS on a constant; with few clusters the clusters are the sample size (t(G-1) quantile).
:func:`macro_mean` treats groups as fixed strata.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs
import numpy as np

from . import _intervals
from ._estimate import Estimate
from ._intervals import _t_bounds, _z, ratio_bounds
from ._intervals import check as _check_method
from ._mean import _wilson_bound
from ._numbers import (
    _EPS,
    _as_values,
    _check_bounds,
    _check_confidence,
    _check_within,
    _scale_of,
)
from ._ratio import auto_ratio_method
from ._tally import Tally, tally_rows

if TYPE_CHECKING:
    from numpy.typing import NDArray

# --------------------------------------------------------------------------- clusters, groups


def _cluster_codes(clusters: Sequence[str | None], n: int) -> tuple[NDArray[np.intp], int]:
    """One integer code per item and the number of clusters; ``None`` is a cluster of its own."""
    if isinstance(clusters, (str, bytes)):
        raise TypeError("`clusters` must be a sequence of cluster names, not a string.")
    if len(clusters) != n:
        raise ValueError(
            f"`clusters` has {len(clusters)} entries but there are {n} values; give one "
            "cluster per value (None: the value is a cluster of its own)."
        )
    index: dict[object, int] = {}
    singles = 0

    def code(name: str | None) -> int:
        nonlocal singles
        if name is None:
            singles += 1
            return -singles
        return index.setdefault(name, len(index))

    raw = np.fromiter(map(code, clusters), dtype=np.intp, count=n)
    # Singletons (negative codes) come after the named clusters.
    codes = np.where(raw < 0, len(index) - 1 - raw, raw)
    return codes, len(index) + singles


#: How a clustered interval says it fell back: no spread between the clusters, or one cluster.
_NO_SPREAD = "no spread: 1 trial per cluster"
_ONE_CLUSTER = "1 cluster: 1 trial, normal quantile"


def _cluster_se(
    x: NDArray[np.float64], m: float, codes: NDArray[np.intp], n_clusters: int
) -> float:
    """The cluster-robust standard error of the mean of ``x``.

    ``sqrt(G/(G-1) · Σ_g S_g²) / n`` with ``S_g`` the sum of ``x - m`` over cluster ``g``: the
    sandwich estimator of OLS on a constant with statsmodels' default small-sample factor
    ``G/(G-1) · (n-1)/(n-k)`` (``k = 1`` regressor, so the second factor is 1).

    Exactly 0 when every ``S_g`` is rounding noise. Every cluster of the same mean has
    ``S_g = 0`` in exact arithmetic, but in floating point ``[1, 0, 1]`` three times gives sums
    of 1e-16 and a standard error of 2.6e-17: an interval of zero width that claims a
    certainty no data give. Each computed ``S_g`` is off by at most about ``n_g`` roundings of
    the values and ``n_g`` times the rounding of ``m`` (``(n_g + log2 n)`` units of
    ``eps · max|x|`` each), so sums within four times that bound of 0 are taken as 0. A real
    spread below that bound cannot be told from rounding, and the fallback it then gets (one
    trial per cluster) errs on the wide side.
    """
    sums = np.bincount(codes, weights=x - m, minlength=n_clusters)
    sizes = np.bincount(codes, minlength=n_clusters).astype(np.float64)
    biggest = float(np.max(np.abs(x))) if x.size else 0.0
    noise = 4.0 * _EPS * biggest * sizes * (sizes + math.log2(max(x.size, 1)) + 1.0)
    if bool(np.all(np.abs(sums) <= noise)):
        return 0.0
    return math.sqrt(n_clusters / (n_clusters - 1) * float(np.dot(sums, sums))) / x.size


def _cluster_quantile(n_clusters: int, confidence: float) -> tuple[float, float]:
    """The two-sided quantile of a clustered interval and the normal tail it cuts off.

    With ``G >= 2`` clusters the clusters are the sample: the quantile is t(G-1)'s, used as it
    is by the closed forms (Wilson, Wald, Agresti-Coull), and the beta quantiles
    (Clopper-Pearson, Jeffreys) take its normal tail ``Φ(-t)``, computed from ``erfc`` so that
    a tail of 1e-37 (2 clusters) is not lost to ``1 - confidence``-style rounding. With one
    cluster t(0) does not exist and the normal quantile is used.
    """
    if n_clusters < 2:
        return _z(confidence), (1.0 - confidence) / 2.0
    t = -_t_bounds(n_clusters - 1, confidence)[0]
    return t, 0.5 * math.erfc(t / math.sqrt(2.0))


def cluster_mean(
    values: Sequence[float] | NDArray[np.float64],
    clusters: Sequence[str | None],
    *,
    confidence: float = 0.95,
    bounds: tuple[float, float] | None = None,
) -> Estimate:
    """The mean of values that come in clusters, with a cluster-robust interval.

    Items of one cluster (questions about one passage, variants of one template, turns of one
    conversation) are not independent: treating them as independent understates the standard
    error. With ``m`` the mean, ``G`` the number of clusters and ``S_g`` the sum of ``x - m``
    over cluster ``g``, the standard error is

        ``se = sqrt(G/(G-1) · Σ_g S_g²) / n``,

    equal to statsmodels ``OLS(x, ones).fit(cov_type="cluster", cov_kwds={"groups": g})`` (its
    default small-sample correction ``G/(G-1) · (n-1)/(n-1)``), and the interval is
    ``m ± t(G-1)·se``, as that fit gives with ``use_t=True``: with few clusters, the clusters
    are the sample size. ``extra`` holds ``n_clusters``, ``se_cluster`` and ``design_effect``
    (``se²`` over the naive ``s²/n``; 1 for independent items, larger with intra-cluster
    correlation). A value whose cluster is ``None`` is a cluster of its own.

    Fallbacks, each named in ``method``: when every cluster has the same mean (``se = 0``,
    rounding noise included) and ``bounds`` are given, the interval is the Wilson bound of
    :func:`mean` with one trial per cluster and the t(G-1) quantile
    (``"wilson-cluster (no spread: 1 trial per cluster)"``); without ``bounds`` it is the
    point ``[m, m]`` (``"cluster-t (no spread)"``). With one cluster there is no t quantile:
    the Wilson bound over 1 trial at the normal quantile with ``bounds``, no interval without.

    Args:
        values: The scored values; every one must be finite.
        clusters: One cluster name (or ``None``) per value.
        confidence: Confidence level of the interval, in (0, 1).
        bounds: The range ``(lo, hi)`` every value lies in, or ``None``.

    Returns:
        ``Estimate(value=m, low, high, n, method="cluster-t", extra={...})``; ``value=None``
        when ``values`` is empty.

    Raises:
        ConfigError: ``confidence`` or ``bounds`` is not valid (a ``ValueError``).
        ValueError: ``values`` holds NaN or infinity, or ``clusters`` has another length.
        TypeError: ``values`` does not hold numbers.
    """
    confidence = _check_confidence(confidence)
    checked_bounds = _check_bounds(bounds)
    x = _as_values(values)
    n = int(x.size)
    codes, n_clusters = _cluster_codes(clusters, n)
    if n == 0:
        return Estimate(value=None, n=0, method="cluster-t", confidence=confidence)
    if checked_bounds is not None:
        _check_within(x, checked_bounds)
    scale = _scale_of(x)
    y = x / scale if scale != 1.0 else x
    m_scaled, sd_scaled = Tally.of(y).mean_sd()
    m = m_scaled * scale
    se = _cluster_se(y, m_scaled, codes, n_clusters) * scale if n_clusters > 1 else 0.0
    naive = sd_scaled * scale / math.sqrt(n)
    # No spread between clusters: the design effect cannot be estimated; the fallback below
    # counts each cluster as one trial, which is a design effect of n / G.
    design_effect = (se / naive) ** 2 if se > 0.0 else n / n_clusters
    extra = {
        "n_clusters": float(n_clusters),
        "se_cluster": se,
        "design_effect": design_effect,
    }
    z, _ = _cluster_quantile(n_clusters, confidence)
    if checked_bounds is not None and se == 0.0:
        why = _NO_SPREAD if n_clusters > 1 else _ONE_CLUSTER
        return _wilson_bound(
            m,
            float(n_clusters),
            n,
            checked_bounds,
            confidence,
            extra,
            z=z,
            method=f"wilson-cluster ({why})",
        )
    low: float | None = None
    high: float | None = None
    method = "cluster-t (1 cluster: no interval)"
    if n_clusters > 1:
        low, high = m - z * se, m + z * se
        if checked_bounds is not None:
            low, high = max(low, checked_bounds[0]), min(high, checked_bounds[1])
        method = "cluster-t" if se > 0.0 else "cluster-t (no spread)"
    return Estimate(
        value=m, low=low, high=high, n=n, method=method, confidence=confidence, extra=extra
    )


def cluster_ratio(
    successes: Sequence[bool] | NDArray[np.bool_] | NDArray[np.float64],
    clusters: Sequence[str | None],
    *,
    method: str = "wilson",
    confidence: float = 0.95,
) -> Estimate:
    """A proportion of items that come in clusters, with a cluster-robust interval.

    ``successes`` holds one 0/1 (or bool) per scored item. The value is ``k / n``; the
    standard error ``se`` is :func:`cluster_mean`'s on the 0/1 values (statsmodels' OLS
    cluster standard error). The design effect ``deff = se² / (p(1-p)/n)`` turns ``n`` into an
    effective sample size ``n / deff`` (Kish), and the interval is ``method``'s interval of
    :func:`ratio` for ``p`` over that many trials, with the t(G-1) quantile in place of the
    normal one (``"normal"``: ``p ± t·se``; Clopper-Pearson and Jeffreys cut off the normal
    tail of that quantile). ``extra`` holds ``n_clusters``, ``se_cluster`` and
    ``design_effect``.

    Fallbacks, each named in ``method``: when the clusters show no spread (``p`` is 0 or 1,
    or every cluster has the same share, rounding noise included) the design effect cannot
    be estimated and each cluster counts as one trial, never fewer trials than clusters
    (``"wilson-cluster (no spread: 1 trial per cluster)"``); with one cluster, one trial at
    the normal quantile (``"wilson-cluster (1 cluster: 1 trial, normal quantile)"``).

    Args:
        successes: One 0/1 per scored item.
        clusters: One cluster name (or ``None``: a cluster of its own) per item.
        method: One of :data:`RATIO_METHODS`.
        confidence: Confidence level of the interval, in (0, 1).

    Returns:
        ``Estimate(value=k / n, low, high, n, method=f"{method}-cluster", extra={...})``.

    Raises:
        ConfigError: ``method`` or ``confidence`` is not valid (a ``ValueError``).
        ValueError: a value is not 0 or 1, or ``clusters`` has another length.
    """
    method = _check_method(method, "ratio")
    confidence = _check_confidence(confidence)
    x = _as_values(np.asarray(successes, dtype=np.float64))
    bad = np.flatnonzero((x != 0.0) & (x != 1.0))
    if bad.size:
        raise ValueError(
            f"`successes` must hold 0 or 1; got {float(x[bad[0]])!r} at index {int(bad[0])}."
        )
    n = int(x.size)
    codes, n_clusters = _cluster_codes(clusters, n)
    name = f"{method}-cluster"
    if n == 0:
        return Estimate(value=None, n=0, method=name, confidence=confidence)
    p = float(np.mean(x))
    se = _cluster_se(x, p, codes, n_clusters) if n_clusters > 1 else 0.0
    binomial = p * (1.0 - p) / n
    spread = binomial > 0.0 and se > 0.0
    design_effect = se * se / binomial if spread else n / n_clusters
    n_eff = n / design_effect
    extra = {"n_clusters": float(n_clusters), "se_cluster": se, "design_effect": design_effect}
    z, tail = _cluster_quantile(n_clusters, confidence)
    if method == "auto":
        method, auto_name = auto_ratio_method(n_eff)
        name = f"{method}-cluster{auto_name[len(method) :]}"
    # The t(G-1) quantile for the closed forms, its normal tail for the beta quantiles.
    low, high = ratio_bounds(method)(p * n_eff, n_eff, _intervals.Level(1.0 - 2.0 * tail, z, tail))
    low = min(max(low, 0.0), p)
    high = max(min(high, 1.0), p)
    if not spread:
        name = f"{name} ({_NO_SPREAD if n_clusters > 1 else _ONE_CLUSTER})"
    return Estimate(
        value=p, low=low, high=high, n=n, method=name, confidence=confidence, extra=extra
    )


def macro_mean(
    values: Sequence[float] | NDArray[np.float64],
    groups: Sequence[str | None],
    *,
    confidence: float = 0.95,
    bounds: tuple[float, float] | None = None,
) -> Estimate:
    """The unweighted mean over groups of the group means (the macro average), with an interval.

    Next to the pooled (micro) mean, where a group of 900 items outweighs one of 10, the macro
    value gives every group the same weight. For a ratio metric pass 0/1 values. With ``K``
    groups of ``n_g`` items, means ``m_g`` and sample variances ``s_g²``:

        ``value = Σ m_g / K``,  ``se² = Σ s_g² / n_g / K²``,  interval ``value ± z·se``:

    the groups are fixed strata, each mean has its own sampling error. A group of one item has
    no variance of its own and borrows the pooled within-group variance. With ``bounds``, the
    interval is clipped to them and, when it would have zero width, is the Wilson bound of
    :func:`mean` over the effective ``K² / Σ(1/n_g)`` trials. Values whose group is ``None``
    are left out. ``extra`` holds ``n_groups``.

    Args:
        values: One finite value per item.
        groups: One group name (or ``None``) per value.
        confidence: Confidence level of the interval, in (0, 1).
        bounds: The range ``(lo, hi)`` every value lies in, or ``None``.

    Returns:
        ``Estimate(value, low, high, n=items in a group, method="macro-normal",
        extra={"n_groups": K})``; ``value=None`` when no value has a group.

    Raises:
        ConfigError: ``confidence`` or ``bounds`` is not valid (a ``ValueError``).
        ValueError: ``values`` holds NaN or infinity, or ``groups`` has another length.
    """
    confidence = _check_confidence(confidence)
    checked_bounds = _check_bounds(bounds)
    x = _as_values(values)
    if isinstance(groups, (str, bytes)) or len(groups) != x.size:
        raise ValueError(
            f"`groups` must hold one group name (or None) per value; got "
            f"{len(groups)} for {x.size} values."
        )
    if checked_bounds is not None:
        _check_within(x, checked_bounds)
    index: dict[str, int] = {}
    codes = np.fromiter(
        (-1 if g is None else index.setdefault(g, len(index)) for g in groups),
        dtype=np.int64,
        count=x.size,
    )
    keep = codes >= 0
    keys, distinct, counts = tally_rows(codes[keep], x[keep])
    cuts = np.flatnonzero(keys[1:] != keys[:-1]) + 1
    tallies = [Tally(v, c) for v, c in zip(np.split(distinct, cuts), np.split(counts, cuts))]
    return tally_macro(tallies if keys.size else [], confidence, checked_bounds)


def tally_macro(
    tallies: Sequence[Tally], confidence: float, bounds: tuple[float, float] | None
) -> Estimate:
    """:func:`macro_mean` of each group's values as a tally (arguments checked, values within).

    Sums run over the groups with :func:`math.fsum`, so their order does not matter.
    """
    k = len(tallies)
    if k == 0:
        return Estimate(value=None, n=0, method="macro-normal", confidence=confidence)
    scale = max(t.scale for t in tallies)
    stats = [
        (t.n, *(attrs.evolve(t, values=t.values / scale) if scale != 1.0 else t).mean_sd())
        for t in tallies
    ]
    sizes = [float(size) for size, _, _ in stats]
    ss = [sd * sd * (size - 1) for size, _, sd in stats]
    df = math.fsum(sizes) - k
    pooled = math.fsum(ss) / df if df > 0 else 0.0
    variances = [s / (size - 1) if size > 1 else pooled for s, size in zip(ss, sizes)]
    value = math.fsum(m for _, m, _ in stats) / k * scale
    se = math.sqrt(math.fsum(v / size for v, size in zip(variances, sizes))) / k * scale
    extra = {"n_groups": float(k)}
    n = int(math.fsum(sizes))
    if bounds is not None and se == 0.0:
        n_eff = k * k / math.fsum(1.0 / size for size in sizes)
        estimate = _wilson_bound(value, n_eff, n, bounds, confidence, extra)
        return attrs.evolve(estimate, method="macro-wilson")
    z = _z(confidence)
    low, high = value - z * se, value + z * se
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return Estimate(
        value=value,
        low=low,
        high=high,
        n=n,
        method="macro-normal",
        confidence=confidence,
        extra=extra,
    )
