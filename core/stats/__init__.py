"""Pure statistics: estimates with confidence intervals, on plain numbers and arrays.

:mod:`itemscore.aggregate` is the public face of this folder; the modules here hold the
computations, one concept each:

- ``_estimate``: ``Estimate``, the number with its interval every statistic here returns.
- ``_intervals``: the one table of interval methods (bounds, display name, doc line).
- ``_numbers``: checks of the arguments, values as float64 arrays, overflow and rounding care.
- ``_tally``: a sample as its distinct values and their counts, merged by addition; every mean
  is computed from one.
- ``_ratio``: proportions, one (``ratio``) or many at once (``ratio_interval``), and ``auto``.
- ``_mean``: means, geometric means, percentiles and the Wilson bound of a bounded mean.
- ``_bootstrap``: seeded resampling: bootstrap means, resampled counts, percentile intervals.
- ``_clusters``: cluster-robust means and proportions, and the macro mean over groups.
- ``_coverage``: coverage receipts of intervals and the flags tables raise from them.
- ``_paired``: the paired tests and intervals behind ``compare`` (McNemar, Newcombe, paired t,
  power and minimum detectable effects, multiple-comparison adjustments).

This folder sits low. Its modules may import numpy, scipy (lazily, so that importing
:mod:`itemscore.aggregate` and a Wilson interval never load it), attrs, and of the package only
``itemscore._exceptions`` and ``itemscore._serialize``;
never the records, the engine, inputs, reports, the command line, results, comparisons, metrics or
``itemscore.aggregate`` itself, not even lazily inside a function.
"""
