"""Leaderboards: every model's value, its rank, and the ranks it could hold.

:func:`leaderboard` puts the models of one run (or of several runs) on the questions every
model answered, and says, for each model, its value with an interval, its rank, and the range
of ranks it could hold at the stated confidence, simultaneously for every model.

How the ranks are decided. For every pair of models ``(i, j)`` the difference of their values
``d_ij`` on the shared questions has a paired standard error ``se_ij`` (cluster-robust when the
questions carry clusters, as :func:`~itemscore.compare` computes it). The pair is *decided*
when ``|d_ij / se_ij|`` exceeds a critical value ``c``:

- ``method="max-t"`` (default): ``c`` is the ``confidence`` quantile of the largest studentised
  deviation over every pair at once, ``max_ij |(d*_ij - d_ij) / se*_ij|``, in a paired
  bootstrap over questions (whole clusters when there are clusters; seeded with
  ``numpy.random.default_rng(seed)``; questions with equal values for every model are drawn as
  one row, as likely as they are together, which is the same law). The chance that any pair
  is decided the wrong way, or that two equal models are told apart, is then at most
  ``1 - confidence`` (asymptotically): every rank interval holds the model's true rank
  simultaneously.
- ``method="none"``: ``c`` is the two-sided Student t quantile (``G - 1`` degrees of freedom,
  ``G`` the questions or clusters) of each pair alone. Each interval is pointwise: with many
  models, some pairs are decided by chance.

A model's ``rank_low`` is 1 plus the models decided better than it; its ``rank_high`` is the
number of models less those decided worse than it. Tie groups walk the ranked list: a model
opens a new group when it is decided worse than the first model of the current group, so the
groups are contiguous in rank order and every model in a group is undecided against its
group's first model (not necessarily against every member: a tie group is no claim that its
models are equal).

The bootstrap is vectorised: resample weights come in blocks of replicates, the resampled sums
and sums of squared differences of every pair are matrix products of the weight block with
the per-question (or per-cluster) sums, so 50 models on 10,000 questions with 1,000 resamples
take about three seconds of CPU.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import attrs
import numpy as np
import pyarrow as pa

from ._exceptions import ConfigError, did_you_mean, one_of
from ._records import EMPTY
from .aggregate import (
    _check_confidence,
    _check_positive_int,
    _check_seed,
    cluster_mean,
    cluster_ratio,
    mean,
    ratio,
)
from .comparison import (
    _check_same_items,
    _Columns,
    _Entry,
    _higher_is_better,
    _kind_of,
    _labels,
    _metric_for,
    _model_names,
    _pick,
    _question_sides,
    _reduces,
    check_same_metrics,
)
from .display._text import md_escape, md_table
from .stats import _paired as _stats
from .stats._intervals import _t_bounds

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ._records import Estimate
    from ._result import RunResult

__all__ = ["Leaderboard", "LeaderboardRow", "leaderboard", "rank_intervals"]

#: Ways of deciding pairs, the first the default.
METHODS: tuple[str, ...] = ("max-t", "none")
#: Bootstrap resamples of ``method="max-t"``.
N_RESAMPLES = 1000
#: Elements of one block of resample weights (``replicates x G``) or of squared pair
#: differences (``pairs x G``): 32 MB each, large enough for matrix products to run at speed.
_BLOCK_ELEMENTS = 1 << 22
#: Pairs whose residuals are formed at once for the standard errors of the sample.
_PAIR_BLOCK = 256
#: A spread below this many ulps of the values' scale is rounding, not spread.
_ULPS = 64.0


def check_options(
    confidence: object, method: object, seed: object, n_resamples: object
) -> tuple[float, int, int]:
    """The options of a leaderboard or an arena, checked in this order: the three numbers."""
    confidence = _check_confidence(confidence)
    if method not in METHODS:
        hint = did_you_mean(method, METHODS) if isinstance(method, str) else ""
        raise ConfigError(f"`method` ({method!r}) must be one of {one_of(METHODS)}.{hint}")
    seed = _check_seed(seed)
    return confidence, seed, _check_positive_int(n_resamples, "n_resamples")


def _md_cell(text: str) -> str:
    """A name from the data as Markdown table text (:func:`md_escape`), line breaks as spaces."""
    return md_escape(" ".join(text.splitlines()))


@attrs.frozen(kw_only=True)
class LeaderboardRow:
    """One model on a leaderboard."""

    #: The model's name.
    model: str
    #: Its value on the shared questions (the mean of its per-question values).
    value: float
    #: Lower end of its own (pointwise) interval.
    ci_low: float | None = None
    #: Upper end of its own (pointwise) interval.
    ci_high: float | None = None
    #: The questions the value rests on (the shared questions).
    n: int = 0
    #: 1 = best, by value; equal values share the smallest rank (1, 2, 2, 4).
    rank: int = 1
    #: The best rank the model could hold at the leaderboard's confidence.
    rank_low: int = 1
    #: The worst rank the model could hold at the leaderboard's confidence.
    rank_high: int = 1
    #: 1-based group of models that cannot be told apart from the group's first model.
    tie_group: int = 1

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON-ready data."""
        return attrs.asdict(self)


@attrs.frozen(kw_only=True)
class Leaderboard:
    """Models ranked on one metric, with the ranks each could hold (see :func:`leaderboard`)."""

    #: The rows, best first (ties in the order the models were given).
    rows: tuple[LeaderboardRow, ...]
    #: The metric's label.
    metric: str
    #: How pairs were decided: ``"max-t"`` (simultaneous) or ``"none"`` (pointwise).
    method: str
    #: Confidence level of the intervals and rank ranges.
    confidence: float
    #: The number of questions every model answered (scored ok or fail): the shared questions.
    n_pairs: int
    #: Whether a larger value is better.
    higher_is_better: bool = True
    #: Questions some model has but not every model scored (left out).
    n_unpaired: int = 0
    #: The clusters of the shared questions, when they carry clusters.
    n_clusters: int | None = None
    #: The critical value pairs' ``|d / se|`` had to exceed (``None``: fewer than two models).
    critical_value: float | None = None
    #: Bootstrap resamples (``max-t``; 0 for ``none``).
    n_resamples: int = 0
    #: Seed of the bootstrap.
    seed: int = 0
    #: Per model, the models it is decided better than.
    beats: Mapping[str, tuple[str, ...]] = attrs.field(default=EMPTY)

    def to_frame(self) -> Any:
        """The rows as a pandas DataFrame, one row per model, best first."""
        import pandas as pd  # here: pandas is needed only by who asks for a frame

        columns = [field.name for field in attrs.fields(LeaderboardRow)]
        return pd.DataFrame([row.to_dict() for row in self.rows], columns=columns)

    def to_markdown(self, digits: int = 4) -> str:
        """The rows as a Markdown table, with the method in a line below it.

        Args:
            digits: Decimals of values and interval ends.
        """
        level = f"{100 * self.confidence:g}%"
        header = ["Rank", "Model", _md_cell(self.metric), f"{level} CI", "Rank range", "Tie group"]
        cells = [
            [
                str(row.rank),
                _md_cell(row.model),
                f"{row.value:.{digits}f}",
                "n/a"
                if row.ci_low is None or row.ci_high is None
                else f"[{row.ci_low:.{digits}f}, {row.ci_high:.{digits}f}]",
                f"{row.rank_low}-{row.rank_high}",
                str(row.tie_group),
            ]
            for row in self.rows
        ]
        lines = md_table(header, "---:|---|---:|---|---|---:", cells, pad=" ")
        how = "simultaneous over every pair (max-t)" if self.method == "max-t" else "pointwise"
        lines.append("")
        lines.append(
            f"{self.n_pairs} shared questions; rank ranges at {level}, {how}; "
            f"{'higher' if self.higher_is_better else 'lower'} is better."
        )
        return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- ranks


def rank_intervals(
    scores: NDArray[np.float64], better: NDArray[np.bool_]
) -> tuple[
    NDArray[np.intp], NDArray[np.intp], NDArray[np.intp], NDArray[np.intp], NDArray[np.intp]
]:
    """Ranks, rank ranges and tie groups from scores and the pairs decided.

    Args:
        scores: One score per model, larger is better.
        better: ``better[i, j]``: model ``i`` is decided better than model ``j``.

    Returns:
        ``(order, rank, rank_low, rank_high, tie_group)``: the models best first (ties in
        their given order), then per model (in the given order) its rank (1 + the models
        with a strictly larger score), 1 + the models decided better, the number of models
        less those decided worse, and its tie group (1-based; a model opens a group when it
        is decided worse than the first model of the current group).
    """
    k = scores.size
    order = np.argsort(-scores, kind="stable")
    rank = 1 + (scores[None, :] > scores[:, None]).sum(axis=1)
    rank_low = 1 + better.sum(axis=0)
    rank_high = k - better.sum(axis=1)
    group = np.zeros(k, dtype=np.intp)
    current, first = 0, -1
    for i in order.tolist():
        if first < 0 or better[first, i]:
            current += 1
            first = i
        group[i] = current
    return order, rank, rank_low, rank_high, group


def _units(
    x: NDArray[np.float64], clusters: Sequence[str | None] | None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per-unit sums ``(G x K)`` and sizes ``(G)``: questions, or clusters of questions."""
    if clusters is None:
        return x, np.ones(x.shape[0])
    codes, n_clusters = _stats.cluster_codes(clusters)
    sums = np.zeros((n_clusters, x.shape[1]))
    np.add.at(sums, codes, x)
    return sums, np.bincount(codes, minlength=n_clusters).astype(np.float64)


def decide_pairs(
    x: NDArray[np.float64],
    clusters: Sequence[str | None] | None,
    *,
    confidence: float,
    method: str,
    seed: int,
    n_resamples: int,
) -> tuple[NDArray[np.int8], float | None]:
    """Which pairs of models differ, on ``x``: per-question values, ``n x K`` (questions by models).

    Returns:
        ``(diff, c)``: ``diff[i, j]`` is +1 when model ``i`` is decided larger than ``j``, -1
        when decided smaller, 0 when undecided; and the critical value (``None`` with fewer
        than two models).

    A pair whose differences do not vary between questions (clusters) has no standard error:
    it is decided by the exact sign test over the ``G`` units (all differ one way:
    ``p = 2 / 2^G``) at ``1 - confidence``, divided by the number of pairs for ``max-t``.
    """
    n, k = x.shape
    decided = np.zeros((k, k), dtype=np.int8)
    if k < 2 or n == 0:
        return decided, None
    sums, sizes = _units(x, clusters)
    g = sums.shape[0]
    total = float(sizes.sum())
    means = sums.sum(axis=0) / total
    iu, ju = np.triu_indices(k, 1)
    d = means[iu] - means[ju]
    resid = sums - sizes[:, None] * means[None, :]
    scale = max(float(np.max(np.abs(x))), 1e-300)
    factor = g / (g - 1) if g > 1 else math.nan
    var = np.empty(iu.size)
    for s in range(0, iu.size, _PAIR_BLOCK):
        r = resid[:, iu[s : s + _PAIR_BLOCK]] - resid[:, ju[s : s + _PAIR_BLOCK]]
        var[s : s + _PAIR_BLOCK] = np.einsum("gp,gp->p", r, r)
    var *= factor / (total * total)
    tiny = (_ULPS * np.finfo(np.float64).eps * scale) ** 2
    spread = var > tiny
    se = np.sqrt(np.where(spread, var, 1.0))
    t_obs = np.where(spread, np.abs(d) / se, 0.0)
    alpha = 1.0 - confidence
    if method == "max-t":
        critical = _max_t_quantile(sums, sizes, d, spread, confidence, seed, n_resamples, tiny)
        sign_alpha = alpha / iu.size
    else:
        critical = -_t_bounds(max(g - 1, 1), confidence)[0]
        sign_alpha = alpha
    win = spread & (t_obs > critical)
    # No spread: every unit differs by the same amount; a nonzero one is a sign test of G units.
    flat = ~spread & (np.abs(d) > math.sqrt(tiny))
    if flat.any() and _stats.sign_test(g, 0) < sign_alpha:
        win |= flat
    sign = np.sign(d).astype(np.int8)
    decided[iu[win], ju[win]] = sign[win]
    decided[ju[win], iu[win]] = -sign[win]
    return decided, critical


def _patterns(
    sums: NDArray[np.float64], sizes: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """The distinct units (equal sums and size) in order of first appearance, with counts.

    Each count is how many units the pattern stands for; units that are all distinct come
    back as they are, one each.
    """
    keyed = np.column_stack([sums, sizes])
    _, first, counts = np.unique(keyed, axis=0, return_index=True, return_counts=True)
    if first.size == keyed.shape[0]:
        return sums, sizes, np.ones(first.size)
    order = np.argsort(first, kind="stable")
    return sums[first[order]], sizes[first[order]], counts[order].astype(np.float64)


def _max_t_quantile(
    sums: NDArray[np.float64],
    sizes: NDArray[np.float64],
    d: NDArray[np.float64],
    spread: NDArray[np.bool_],
    confidence: float,
    seed: int,
    n_resamples: int,
    tiny: float,
) -> float:
    """The ``confidence`` quantile of ``max |(d* - d) / se*|`` over the pairs with a spread.

    With ``W`` a block of resample weights (replicates by units), the resampled sums are
    ``W @ sums``, and the cluster-robust variance of a pair's resampled difference needs
    ``Σ w (T_d - c d*)²``, expanded into ``W @ T_d²``, ``W @ (T_d c)`` and ``W @ c²``: matrix
    products, no loop over replicates or pairs. A replicate in which a pair shows no spread
    (it drew none of the few questions where the two differ) leaves that pair out of its
    maximum.
    """
    g, k = sums.shape
    iu, ju = np.triu_indices(k, 1)
    keep = np.flatnonzero(spread)
    iu, ju, d = iu[keep], ju[keep], d[keep]
    if iu.size == 0:
        return math.inf
    factor = g / (g - 1)
    rng = np.random.default_rng(seed)
    # Every statistic below is linear in the weights with one coefficient per unit, so units
    # with equal sums and size are one pattern, drawn as often as its units together are:
    # a multinomial over the patterns is the multinomial over the units, added up. Right or
    # wrong metrics have at most 2^K patterns however many questions there are.
    sums, sizes, counts = _patterns(sums, sizes)
    patterns = sums.shape[0]
    probs = counts / g
    # Units along the contiguous axis: gathering a pair's two models copies two rows.
    by_model = np.ascontiguousarray(sums.T)
    weighted_c = sums * sizes[:, None]
    sizes_sq = sizes * sizes
    block = max(1, min(n_resamples, _BLOCK_ELEMENTS // patterns))
    pair_block = max(1, _BLOCK_ELEMENTS // patterns)
    maxima = np.empty(n_resamples)
    for start in range(0, n_resamples, block):
        b = min(block, n_resamples - start)
        w = rng.multinomial(g, probs, size=b).astype(np.float64)
        total = w @ sizes
        m_star = (w @ sums) / total[:, None]
        tc = w @ weighted_c
        c2 = w @ sizes_sq
        best = np.zeros(b)
        for s in range(0, iu.size, pair_block):
            i, j = iu[s : s + pair_block], ju[s : s + pair_block]
            diff = by_model[i] - by_model[j]
            q = w @ (diff * diff).T
            d_star = m_star[:, i] - m_star[:, j]
            r = tc[:, i] - tc[:, j]
            ss = q - 2.0 * d_star * r + d_star * d_star * c2[:, None]
            var = factor * ss / (total * total)[:, None]
            ok = var > tiny
            deviation = np.abs(d_star - d[s : s + pair_block])
            t = np.where(ok, deviation / np.sqrt(np.where(ok, var, 1.0)), 0.0)
            np.maximum(best, t.max(axis=1), out=best)
        maxima[start : start + b] = best
    return float(np.quantile(maxima, confidence))


# --------------------------------------------------------------------------- reading runs


@attrs.frozen
class _ModelScores:
    """One model's per-question scores of one label, as compare pairs them."""

    model: str
    columns: _Columns
    rows: NDArray[np.intp]
    #: The questions' ids, as Arrow text (joined across models in Arrow).
    ids: pa.Array
    scored: NDArray[np.bool_]
    values: NDArray[np.float64]


def _check_results(results: object) -> list[RunResult]:
    from ._result import RunResult

    if isinstance(results, RunResult):
        return [results]
    if isinstance(results, (str, bytes)) or not isinstance(results, Sequence):
        raise ConfigError(
            f"`results` ({type(results).__name__}) must be a RunResult or a list of them; load "
            "saved results with RunResult.load_json(path)."
        )
    runs = list(results)
    if not runs:
        raise ConfigError("`results` is empty; give a RunResult, or a list of them.")
    for index, run in enumerate(runs):
        if not isinstance(run, RunResult):
            raise ConfigError(
                f"`results[{index}]` ({type(run).__name__}) is not a RunResult; load saved "
                "results with RunResult.load_json(path)."
            )
    return runs


def _read_run(
    run: RunResult, label: str, index: int, several_runs: bool
) -> tuple[list[_ModelScores], str, bool, tuple[float, float] | None]:
    """Every model's scores of ``label`` in ``run``, per question as compare pairs them.

    Attempts are reduced by the run's first reducer.

    Returns:
        ``(models, kind, higher_is_better, bounds)``.
    """
    where = f"`results[{index}]`" if several_runs else "the run"
    where_ = where[0].upper() + where[1:]
    labels = _labels(run)
    if label not in labels:
        raise ConfigError(
            f"{where_} has no metric labelled {label!r}; its labels are {one_of(labels)}."
            f"{did_you_mean(label, labels)}"
        )
    models = _model_names(run)
    if None in models:
        raise ConfigError(
            f"{where_} names no model, so its row on the leaderboard would have no name: "
            "give its items a model (the role `model`) when scoring."
        )
    several = len(models) > 1
    key = f"{run.suite_id}.{label}"
    entry: _Entry | None = _Entry(label, key, label, label)
    columns = _Columns(run)
    if _reduces(run):
        entries, sides = _question_sides(run, run, [label], [], several, several)
        entry = next((e for e in entries if e.key == key and not e.by_attempt), None)
        columns = sides.col_a
    kind = "custom" if entry is None else _kind_of(run, run, entry)
    if entry is None or kind not in ("ratio", "mean"):
        raise ConfigError(
            f"The metric {label!r} of {where} is not a mean over questions (it has its own "
            "aggregate, such as f1, or is a geometric mean), so a question-by-question "
            "leaderboard cannot rank it; rank a metric whose value is a share of right "
            "answers or a mean of per-question values."
        )
    codes = columns.codes(entry.column_a)
    values = (codes == 0).astype(np.float64) if kind == "ratio" else columns.values(entry.column_a)
    out = []
    for model, rows in zip(models, _rows_by_model(columns, models, several)):
        assert model is not None
        out.append(
            _ModelScores(
                model=model,
                columns=columns,
                rows=rows,
                ids=columns.id_column.take(pa.array(rows, pa.int64())),
                scored=codes[rows] < 2,
                values=values[rows],
            )
        )
    bounds = entry.bounds
    if bounds is None and kind == "mean":
        metric = _metric_for(run, label, required=False)
        bounds = None if metric is None else metric.value_bounds
    return out, kind, _higher_is_better(run, label), bounds


def _rows_by_model(
    columns: _Columns, models: list[str | None], several: bool
) -> list[NDArray[np.intp]]:
    """Each model's rows, in one pass over the table (not one pass per model)."""
    if not several:
        return [np.arange(columns.n)]
    import pyarrow.compute as pc

    found = pc.index_in(columns.table.key_column("model"), value_set=pa.array(models, pa.string()))
    codes = np.asarray(found.to_numpy(zero_copy_only=False), dtype=np.intp)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(models) + 1))
    return [order[bounds[i] : bounds[i + 1]] for i in range(len(models))]


def _shared(models: list[_ModelScores]) -> tuple[list[NDArray[np.intp]], int]:
    """Per model, the positions of the questions every model scored; and the others' number.

    The shared questions come in the first model's order; the second number counts the
    questions some model has but not every model scored. The ids are joined in Arrow.
    """
    import pyarrow.compute as pc

    scored = [m.ids.filter(pa.array(m.scored)) for m in models]
    shared = scored[0]
    for other in scored[1:]:
        shared = shared.filter(pc.is_in(shared, value_set=other))
    picks = [
        np.asarray(pc.index_in(shared, value_set=m.ids).to_numpy(), dtype=np.intp) for m in models
    ]
    every = pc.count_distinct(pa.chunked_array([m.ids for m in models], pa.string())).as_py()
    return picks, int(every) - len(shared)


def leaderboard(
    results: RunResult | Sequence[RunResult],
    metric: str,
    *,
    confidence: float = 0.95,
    method: Literal["max-t", "none"] = "max-t",
    seed: int = 0,
    n_resamples: int = N_RESAMPLES,
    allow_different_inputs: bool = False,
) -> Leaderboard:
    """Rank the models of one run, or of several runs, on one metric.

    Each model's per-question values are read as :func:`~itemscore.compare` reads them: items
    pair by id, attempts are reduced to one value per question by the run's first reducer,
    and a question counts only when every model scored it (ok or fail; skip and error leave
    it out for every model). A model's value is its mean over these shared questions (for a
    ratio metric, its share of ok). Its interval is its own, pointwise: the Wilson interval
    for a ratio and the Student t interval for a mean (their cluster-robust forms,
    :func:`~itemscore.aggregate.cluster_ratio` and :func:`~itemscore.aggregate.cluster_mean`,
    when the questions carry clusters).

    Ranks, rank ranges and tie groups come from the pairs decided (the module's docstring
    says how): with ``method="max-t"`` simultaneously for every model at ``confidence``,
    with ``"none"`` pair by pair.

    Args:
        results: A run with several models, or a list of runs (each model named once).
        metric: The label of the metric to rank on.
        confidence: Confidence level of the intervals and rank ranges, in (0, 1).
        method: ``"max-t"`` (simultaneous) or ``"none"`` (pointwise).
        seed: Seed of the bootstrap.
        n_resamples: Bootstrap resamples of ``max-t``.
        allow_different_inputs: Pair items by id even when their ``input`` or ``expected``
            differ between models (by default that is an error: different data).

    Returns:
        A :class:`Leaderboard` whose rows are best first.

    Raises:
        ConfigError: bad ``results``, ``metric``, ``confidence``, ``method``, ``seed`` or
            ``n_resamples``; a model named twice or a run naming none; a metric that is not a
            mean over questions, or ranked higher-is-better in one run and not in another; no
            question every model scored; items with one id that differ between models.
    """
    confidence, seed, n_resamples = check_options(confidence, method, seed, n_resamples)
    if not isinstance(metric, str):
        raise ConfigError(f"`metric` ({metric!r}) must be a metric label (a string).")
    runs = _check_results(results)
    for index, run in enumerate(runs[1:], start=1):
        # one label may name another metric, or other options, in another run
        where = ("`results[0]`", f"`results[{index}]`")
        check_same_metrics(runs[0], run, [metric], names=where)
    models: list[_ModelScores] = []
    kinds: set[str] = set()
    higher: set[bool] = set()
    bounds: tuple[float, float] | None = None
    owner: dict[str, int] = {}
    for index, run in enumerate(runs):
        found, kind, up, run_bounds = _read_run(run, metric, index, len(runs) > 1)
        for m in found:
            if m.model in owner:  # a run names each of its models once: another run has it
                raise ConfigError(
                    f"The model {m.model!r} appears in `results[{owner[m.model]}]` and "
                    f"`results[{index}]`; each model may be ranked once. Leave one of the runs "
                    "out, or rename the model in one of them."
                )
            owner[m.model] = index
        models.extend(found)
        kinds.add(kind)
        higher.add(up)
        bounds = bounds if bounds is not None else run_bounds
    if len(higher) > 1:
        raise ConfigError(
            f"The metric {metric!r} is higher-is-better in some runs and lower-is-better in "
            "others; rank runs scored with the same metric."
        )
    picks, n_unpaired = _shared(models)
    n = int(picks[0].size)
    if n == 0:
        raise ConfigError(
            f"No question was scored (ok or fail) by every model for {metric!r}, so the "
            f"models ({one_of(m.model for m in models)}) share nothing to be ranked on; rank "
            "models scored on the same questions, or leave out the model that answered none."
        )
    if not allow_different_inputs:
        base = models[0]
        for m, pick in zip(models[1:], picks[1:]):
            aligned = [(None, None, base.rows[picks[0]], m.rows[pick], 0, None)]
            _check_same_items(base.columns, m.columns, aligned)
    x = np.column_stack([m.values[p] for m, p in zip(models, picks)])
    clusters = _pick(models[0].columns.clusters, models[0].rows[picks[0]])
    kind = "ratio" if kinds == {"ratio"} else "mean"
    up = higher.pop()
    decided, critical = decide_pairs(
        x, clusters, confidence=confidence, method=method, seed=seed, n_resamples=n_resamples
    )
    values = x.mean(axis=0)
    scores = values if up else -values
    better = decided > 0 if up else decided < 0
    order, rank, rank_low, rank_high, group = rank_intervals(scores, better)
    rows = []
    for i in order.tolist():
        own = _interval(x[:, i], clusters, kind, confidence, bounds)
        rows.append(
            LeaderboardRow(
                model=models[i].model,
                value=float(values[i]),
                ci_low=own.low,
                ci_high=own.high,
                n=n,
                rank=int(rank[i]),
                rank_low=int(rank_low[i]),
                rank_high=int(rank_high[i]),
                tie_group=int(group[i]),
            )
        )
    names = [m.model for m in models]
    beats = {
        names[i]: tuple(names[j] for j in np.flatnonzero(better[i]).tolist())
        for i in range(len(names))
    }
    return Leaderboard(
        rows=tuple(rows),
        metric=metric,
        method=method,
        confidence=confidence,
        n_pairs=n,
        higher_is_better=up,
        n_unpaired=n_unpaired,
        n_clusters=None if clusters is None else _stats.cluster_codes(clusters)[1],
        critical_value=critical,
        n_resamples=n_resamples if method == "max-t" and len(models) > 1 else 0,
        seed=seed,
        beats=beats,
    )


def _interval(
    values: NDArray[np.float64],
    clusters: Sequence[str | None] | None,
    kind: str,
    confidence: float,
    bounds: tuple[float, float] | None,
) -> Estimate:
    """A model's own interval on the shared questions: Wilson for ratios, t for means."""
    if kind == "ratio":
        if clusters is not None:
            return cluster_ratio(values, clusters, method="wilson", confidence=confidence)
        return ratio(int(values.sum()), int(values.size), "wilson", confidence)
    if clusters is not None:
        return cluster_mean(values, clusters, confidence=confidence, bounds=bounds)
    return mean(values, "t", confidence, bounds=bounds)
