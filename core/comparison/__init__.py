"""Paired comparison of models: which is better, by how much, and how sure we can be.

:func:`compare` pairs the items of two models by id and, for every metric label both sides
have, computes the difference ``value_b - value_a`` with an interval and a p-value:

- ratio metrics (the default aggregate with ``aggregation = "ratio"``): the exact McNemar test
  on the discordant pairs and Newcombe's hybrid score interval (1998, method 10);
- mean metrics: the paired t interval and test on the per-item differences;
- metrics with their own aggregate (f1, plugins overriding ``aggregate``) and geometric means:
  a seeded paired bootstrap over item ids, both sides recomputed on the same resampled ids
  (vectorised when the metric has ``paired_bootstrap``, as f1 does);
- items with a ``cluster``: cluster-robust standard errors for ratio and mean metrics, a
  cluster bootstrap (whole clusters resampled) for the others.

p-values of several comparisons are adjusted (Holm by default, or Benjamini-Hochberg): the
headline comparisons of one metric across model pairs form one family, the group comparisons
of one metric and one pair another.

Where it lives:

- ``_record.py``: :class:`Comparison`, the record of one comparison;
- ``_pairing.py``: a run table as compare reads it, rows paired by id (by question for runs
  with attempts), and the check that paired items are the same item;
- ``_joined.py``: two runs (or two models of one) of ratio and mean metrics paired out of
  core, a bucket of ids at a time, into counts and tallies that add up (runs with attempts,
  clusters or a metric's own aggregate pair in memory through ``_pairing.py``);
- ``_metrics.py``: what a label is in each run (its kind, its metric, its range) and
  :func:`check_same_metrics`, :func:`score_range`;
- ``_one.py``: one comparison's paired items and the test their kind takes, in
  ``_ratio_mean.py`` (ratio, mean, clustered) or ``_bootstrap.py`` (bootstrap, degenerate);
- ``_family.py``: the multiplicity adjustment of a family of comparisons;
- ``_compare.py``: :func:`compare`; ``_leaders.py``: :func:`significant_leaders`.

What it may import: the records, metrics, statistics (``stats``, ``aggregate``) and the run
table (``engine``) below it. Never the command line, the viewer or ``RunResult``'s module at
run time (a result is read through its attributes; the type only under ``TYPE_CHECKING``).
:class:`Comparison` shows itself through ``display._notebook``, imported when it is shown.

The leaderboard and the gate pair items as compare does: the pairing's private pieces they
use are re-exported here for them.
"""

from __future__ import annotations

from ._compare import _model_names as _model_names
from ._compare import compare
from ._leaders import significant_leaders
from ._metrics import _higher_is_better as _higher_is_better
from ._metrics import _kind_of as _kind_of
from ._metrics import _labels as _labels
from ._metrics import _metric_for as _metric_for
from ._metrics import check_same_metrics, score_range
from ._pairing import _check_same_items as _check_same_items
from ._pairing import _Columns as _Columns
from ._pairing import _Entry as _Entry
from ._pairing import _pick as _pick
from ._pairing import _question_sides as _question_sides
from ._pairing import _reduces as _reduces
from ._record import Comparison

__all__ = ["Comparison", "check_same_metrics", "compare", "score_range", "significant_leaders"]
