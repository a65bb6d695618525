"""Aggregates with confidence intervals: the statistics every metric shares.

Every function returns an :class:`~itemscore.Estimate` whose numbers are plain Python floats:

- :func:`ratio` -- a proportion ``k / n`` (ok among ok + fail) with a Wilson, Wald ("normal"),
  Clopper-Pearson, Jeffreys or Agresti-Coull interval; :func:`ratio_interval` is the same
  computation over arrays, for many groups or bootstrap samples at once.
- :func:`mean` -- an arithmetic mean with a normal, Student t or percentile-bootstrap interval.
- :func:`geomean` -- a geometric mean with the normal (or t) interval of the logs, exponentiated.
- :func:`percentiles` -- several percentiles of the values, in ``extra``.
- :func:`cluster_mean` and :func:`cluster_ratio` -- a mean or a proportion of items that come in
  clusters (passages, templates, conversations), with cluster-robust standard errors.
- :func:`macro_mean` -- the unweighted mean over groups of the group means, with an interval.
- :func:`resample_counts` and :func:`percentile_interval` -- building blocks for metrics with a
  custom shape (F1 from a confusion matrix): resample the cells, recompute, take percentiles.

Options (method, confidence level...) are validated before any data is looked at. ``n = 0``
gives ``value=None`` and is handled before any numerical routine is called.

The normal quantile comes from :class:`statistics.NormalDist` (cached per confidence level), so
Wilson, Wald and Agresti-Coull intervals never import scipy; scipy is imported lazily, only by the
methods that need a beta or t quantile. Results agree with ``statsmodels`` and ``scipy.stats`` to
1e-12, except the Jeffreys bounds at ``k = 0`` and ``k = n`` (see :func:`ratio`).

The computations live in :mod:`itemscore.stats`, one module per concept (proportions, means,
clusters, bootstrap, coverage, the table of interval methods); this module is their public
face and defines nothing of its own.
"""

from __future__ import annotations

from .stats._bootstrap import _COUNTED_ADVANTAGE as _COUNTED_ADVANTAGE
from .stats._bootstrap import percentile_interval, resample_counts
from .stats._clusters import cluster_mean, cluster_ratio, macro_mean
from .stats._coverage import (
    COVERAGE_FLOOR,
    COVERAGE_MARGIN,
    coverage_flag,
    coverage_floor,
    coverage_receipt,
    coverage_shortfall,
    mean_coverage,
    ratio_coverage,
    ratio_coverage_min,
)
from .stats._coverage import COVERAGE_INNER_RESAMPLES as COVERAGE_INNER_RESAMPLES
from .stats._coverage import COVERAGE_REPETITIONS as COVERAGE_REPETITIONS
from .stats._coverage import _base_method as _base_method

# Names outside __all__ are imported "as" themselves, which re-exports them: the type every
# function returns, the constants of the rules, and the private helpers other modules of the
# package still import from here.
from .stats._estimate import Estimate as Estimate
from .stats._mean import AUTO_BOUND_SES as AUTO_BOUND_SES
from .stats._mean import AUTO_T_FROM as AUTO_T_FROM
from .stats._mean import GEOMEAN_METHODS, MEAN_METHODS, geomean, mean, percentiles, wilson_bound
from .stats._numbers import _check_confidence as _check_confidence
from .stats._numbers import _check_positive_int as _check_positive_int
from .stats._numbers import _check_seed as _check_seed
from .stats._ratio import AUTO_MIDP_BELOW as AUTO_MIDP_BELOW
from .stats._ratio import AUTO_WILSON_FROM as AUTO_WILSON_FROM
from .stats._ratio import RATIO_METHODS, auto_ratio_method, ratio, ratio_interval

__all__ = [
    "COVERAGE_FLOOR",
    "COVERAGE_MARGIN",
    "GEOMEAN_METHODS",
    "MEAN_METHODS",
    "RATIO_METHODS",
    "auto_ratio_method",
    "cluster_mean",
    "cluster_ratio",
    "coverage_flag",
    "coverage_floor",
    "coverage_receipt",
    "coverage_shortfall",
    "geomean",
    "macro_mean",
    "mean",
    "mean_coverage",
    "percentile_interval",
    "percentiles",
    "ratio",
    "ratio_coverage",
    "ratio_coverage_min",
    "ratio_interval",
    "resample_counts",
    "wilson_bound",
]
