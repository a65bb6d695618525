"""Judge-corrected scores: what the score is once the judge's own errors are taken out.

A judge that passes 10% of the wrong answers and fails 15% of the right ones reports a pass
rate that is neither the truth nor a fixed distance from it. With a human-labelled slice of
the items (``human_field``), two corrections:

- **Rogan-Gladen** (pass/fail): the judge's sensitivity ``Se`` (share of human passes it
  passes) and specificity ``Sp`` (share of human fails it fails) on the slice, and its pass
  rate ``q`` on the items without a human verdict, give the true pass rate
  ``θ = (q + Sp - 1) / (Se + Sp - 1)``, clipped to [0, 1] (Rogan and Gladen 1978). The
  interval carries the uncertainty of both samples: Jeffreys posteriors of ``q``, ``Se`` and
  ``Sp`` (three independent binomials: the slice and the rest are disjoint), 4,000 seeded
  draws of ``θ``, and their central quantiles. Draws in which the judge is no better than
  chance (``Se + Sp <= 1``, where the formula means nothing) are left out.
- **Prediction-powered inference** (numeric scales; Angelopoulos et al. 2023, Science 382):
  the judge's mean ``f̄`` on the items without a human verdict plus the mean of the human's
  minus the judge's values on the slice (the rectifier), ``θ = f̄_u + mean(y - f)_l``, with
  ``se² = s²(f)_u / N_u + s²(y - f)_l / n_l`` and the Welch t interval ``θ ± t(df)·se``, ``df``
  the Welch-Satterthwaite degrees of freedom (about ``n_l - 1`` when the slice's term
  dominates, as it does when the slice is small). A side without spread gets a bound
  instead of a zero variance (:func:`_ppi_bounds`). Unbiased whatever the judge's errors;
  as narrow as the judge is good.

The simulations in ``tests/test_judge_correction.py`` and ``tests/test_stats_edges.py`` check
both: the naive interval misses a known truth, the corrected ones cover it at the nominal
rate (figures in docs/judges.md). :func:`ppi_receipt` gives the interval its coverage receipt.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "CORRECTION_DRAWS",
    "RECEIPT_REPETITIONS",
    "ppi_receipt",
    "prediction_powered",
    "rogan_gladen",
]

#: Posterior draws behind the Rogan-Gladen interval.
CORRECTION_DRAWS = 4000

#: Repetitions of :func:`ppi_receipt` (fewer, down to 100, when the values have very many
#: distinct values: the receipt draws about four million counts at most).
RECEIPT_REPETITIONS = 2000
_RECEIPT_DRAWS = 1 << 22
_RECEIPT_BLOCK = 1 << 20

#: Machine epsilon of float64: spreads within a few units of it are rounding, not spread.
_EPS = float(np.finfo(np.float64).eps)


def rogan_gladen(
    passed_unlabelled: int,
    n_unlabelled: int,
    human: Sequence[float],
    judge: Sequence[float],
    *,
    confidence: float = 0.95,
    seed: int = 0,
    draws: int = CORRECTION_DRAWS,
) -> dict[str, float]:
    """The Rogan-Gladen corrected pass rate with its interval, and the judge's error rates.

    Args:
        passed_unlabelled: Items without a human verdict that the judge passed.
        n_unlabelled: Items without a human verdict (at least 1).
        human: The human verdicts of the slice, 1 (pass) or 0 (fail).
        judge: The judge's verdicts on the same items, 1 or 0.
        confidence: Confidence level of the interval.
        seed: Seed of the posterior draws.
        draws: Posterior draws.

    Returns:
        ``judge_sensitivity`` and ``judge_specificity`` (when the slice has human passes,
        resp. fails), and ``corrected``, ``corrected_low``, ``corrected_high`` when both are
        known and the judge is better than chance (``Se + Sp > 1``); else only what is known.
    """
    h = np.asarray(human, dtype=np.float64) > 0.5
    j = np.asarray(judge, dtype=np.float64) > 0.5
    positives, negatives = int(np.count_nonzero(h)), int(np.count_nonzero(~h))
    true_pass, true_fail = int(np.count_nonzero(h & j)), int(np.count_nonzero(~h & ~j))
    out: dict[str, float] = {}
    if positives:
        out["judge_sensitivity"] = true_pass / positives
    if negatives:
        out["judge_specificity"] = true_fail / negatives
    if not positives or not negatives or n_unlabelled < 1:
        return out
    se, sp = out["judge_sensitivity"], out["judge_specificity"]
    youden = se + sp - 1.0
    if youden <= 0.0:
        return out
    q = passed_unlabelled / n_unlabelled
    out["corrected"] = min(max((q + sp - 1.0) / youden, 0.0), 1.0)
    rng = np.random.default_rng((seed, 1978))
    q_s = rng.beta(passed_unlabelled + 0.5, n_unlabelled - passed_unlabelled + 0.5, draws)
    se_s = rng.beta(true_pass + 0.5, positives - true_pass + 0.5, draws)
    sp_s = rng.beta(true_fail + 0.5, negatives - true_fail + 0.5, draws)
    j_s = se_s + sp_s - 1.0
    keep = j_s > 0.0
    theta = np.clip((q_s[keep] + sp_s[keep] - 1.0) / j_s[keep], 0.0, 1.0)
    if theta.size:
        alpha = (1.0 - confidence) / 2.0
        low, high = np.percentile(theta, [100.0 * alpha, 100.0 * (1.0 - alpha)])
        out["corrected_low"] = min(float(low), out["corrected"])
        out["corrected_high"] = max(float(high), out["corrected"])
    return out


def prediction_powered(
    judge_unlabelled: Sequence[float],
    judge_labelled: Sequence[float],
    human_labelled: Sequence[float],
    *,
    confidence: float = 0.95,
    bounds: tuple[float, float] = (0.0, 1.0),
) -> dict[str, float]:
    """The prediction-powered mean of a score with its interval (Angelopoulos et al. 2023).

    The value is ``θ = f̄_u + r̄`` (``r = y - f`` on the slice) and ``se`` the paper's; the
    interval is Welch's t interval, never of zero width while uncertainty is left (see
    :func:`_ppi_bounds`).

    Args:
        judge_unlabelled: The judge's values on the items without a human verdict.
        judge_labelled: The judge's values on the slice.
        human_labelled: The human's values on the same items, on the judge's scale.
        confidence: Confidence level of the interval.
        bounds: The range ``(lo, hi)`` of the values; the interval is clipped to it.

    Returns:
        ``ppi``, ``ppi_low``, ``ppi_high`` and ``ppi_se``, and ``ppi_df`` (the Welch degrees
        of freedom) when both sides vary; ``{}`` without at least two items on each side.

    Raises:
        ValueError: an input holds NaN or infinity or a value outside ``bounds``, or the
            slice's two inputs differ in length.
    """
    lo, hi = float(bounds[0]), float(bounds[1])
    f_u = _checked("judge_unlabelled", judge_unlabelled, lo, hi)
    f_l = _checked("judge_labelled", judge_labelled, lo, hi)
    y_l = _checked("human_labelled", human_labelled, lo, hi)
    if f_l.size != y_l.size:
        raise ValueError(
            f"`human_labelled` has {y_l.size} values but `judge_labelled` has {f_l.size}; "
            "give the human's and the judge's value of every item of the slice, in one order."
        )
    if f_u.size < 2 or f_l.size < 2:
        return {}
    u_values, u_counts = np.unique(f_u, return_counts=True)
    r_values, r_counts = np.unique(y_l - f_l, return_counts=True)
    found = _ppi_bounds(
        _Side.of(u_values, u_counts[None, :]),
        _Side.of(r_values, r_counts[None, :]),
        confidence,
        (lo, hi),
    )
    out = {key: float(column[0]) for key, column in found.items()}
    if not math.isfinite(out["ppi_df"]):
        del out["ppi_df"]  # a side without spread: no Welch interval, the bound of that side
    return out


def ppi_receipt(
    judge_unlabelled: Sequence[float],
    judge_labelled: Sequence[float],
    human_labelled: Sequence[float],
    *,
    confidence: float = 0.95,
    bounds: tuple[float, float] = (0.0, 1.0),
    seed: int = 0,
    repetitions: int | None = None,
) -> dict[str, float]:
    """The coverage receipt of :func:`prediction_powered`'s interval, simulated.

    As :func:`itemscore.aggregate.mean_coverage` does for a mean, the observed values are
    taken as the population: each repetition resamples the judge-only values and the
    slice's (human, judge) pairs with replacement, each side by itself
    (``numpy.random.default_rng((seed, 2023))``), computes the interval and counts how often
    it contains the population's ``θ = f̄_u + r̄`` (clipped to ``bounds``). Resamples are
    drawn as multinomial counts of each side's distinct values (the same distribution), so a
    judge's scale of a few points costs a few numbers per repetition, however many items.

    Returns:
        ``ppi_coverage``, ``ppi_coverage_reps`` and ``ppi_coverage_high`` (the upper end of
        the Wilson 95% interval of the simulated share, the Monte Carlo error a flag must
        clear); ``{}`` when :func:`prediction_powered` gives no interval.
    """
    from itemscore.aggregate import ratio

    lo, hi = float(bounds[0]), float(bounds[1])
    f_u = _checked("judge_unlabelled", judge_unlabelled, lo, hi)
    f_l = _checked("judge_labelled", judge_labelled, lo, hi)
    y_l = _checked("human_labelled", human_labelled, lo, hi)
    if f_l.size != y_l.size or f_u.size < 2 or f_l.size < 2:
        return {}
    u_values, u_counts = np.unique(f_u, return_counts=True)
    r_values, r_counts = np.unique(y_l - f_l, return_counts=True)
    u_centre = float(np.dot(u_values, u_counts)) / f_u.size
    r_centre = float(np.dot(r_values, r_counts)) / f_l.size
    truth = min(max(u_centre + r_centre, lo), hi)
    per_draw = u_values.size + r_values.size
    if repetitions is None:
        repetitions = min(RECEIPT_REPETITIONS, max(100, _RECEIPT_DRAWS // per_draw))
    rng = np.random.default_rng((seed, 2023))
    block = max(1, _RECEIPT_BLOCK // per_draw)
    tol = 4.0 * _EPS * max(1.0, abs(truth))  # the truth on a bound only by rounding
    hits = 0
    for start in range(0, repetitions, block):
        rows = min(block, repetitions - start)
        judge = _Side.of(u_values, rng.multinomial(f_u.size, u_counts / f_u.size, rows), u_centre)
        rect = _Side.of(r_values, rng.multinomial(f_l.size, r_counts / f_l.size, rows), r_centre)
        found = _ppi_bounds(judge, rect, confidence, (lo, hi))
        hits += int(np.count_nonzero((found["ppi_low"] <= truth + tol)
                                     & (truth - tol <= found["ppi_high"])))  # fmt: skip
    coverage = hits / repetitions
    upper = ratio(hits, repetitions).high
    return {
        "ppi_coverage": coverage,
        "ppi_coverage_high": coverage if upper is None else max(upper, coverage),
        "ppi_coverage_reps": float(repetitions),
    }


def _checked(name: str, values: Sequence[float], lo: float, hi: float) -> NDArray[np.float64]:
    """``values`` as a float64 array, refused with the input named when not finite in bounds."""
    array = np.asarray(values, dtype=np.float64).ravel()
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        raise ValueError(
            f"`{name}` holds {bad.size} value(s) that are NaN or infinite; the first is "
            f"{float(array[bad[0]])!r} at index {int(bad[0])}. Leave out the items without a "
            "value instead."
        )
    bad = np.flatnonzero((array < lo) | (array > hi))
    if bad.size:
        raise ValueError(
            f"`{name}` holds {bad.size} value(s) outside the bounds [{lo:g}, {hi:g}]; the "
            f"first is {float(array[bad[0]])!r} at index {int(bad[0])}."
        )
    return array


class _Side:
    """One sample of each row (resample) as counts of its distinct values, with its moments.

    A resample of ``n`` values with replacement is a multinomial draw of such counts, so the
    receipt and the estimate share one computation; sums are taken about the counts' own
    weighted centre so that nothing cancels.
    """

    __slots__ = ("flat", "mean", "n", "var")

    def __init__(
        self, mean: NDArray[np.float64], var: NDArray[np.float64], flat: NDArray[np.bool_], n: int
    ) -> None:
        self.mean, self.var, self.flat, self.n = mean, var, flat, n

    @classmethod
    def of(
        cls, values: NDArray[np.float64], counts: NDArray[np.int64], centre: float | None = None
    ) -> _Side:
        n = int(counts[0].sum())
        if centre is None:
            centre = float(np.dot(values, counts[0])) / n
        shifted = values - centre
        first = counts @ shifted
        second = counts @ (shifted * shifted)
        mean = centre + first / n
        ss = np.maximum(second - first * first / n, 0.0)
        present = counts > 0
        top = np.max(np.where(present, values, -np.inf), axis=1)
        bottom = np.min(np.where(present, values, np.inf), axis=1)
        # Values that differ only by the rounding of y - f (5/9 - 4/9 against 6/9 - 5/9) show
        # no spread: eight units in the last place of the largest magnitude, as is_constant.
        scale = max(1.0, float(np.max(np.abs(values))))
        flat = (top - bottom) <= 8.0 * _EPS * scale
        var = np.where(flat, 0.0, ss / max(n - 1, 1))
        return cls(mean, var, flat, n)


def _ppi_bounds(
    judge: _Side, rectifier: _Side, confidence: float, bounds: tuple[float, float]
) -> dict[str, NDArray[np.float64]]:
    """PPI's value, interval and se for every row: the judge's side and the rectifier's.

    ``θ = f̄_u + r̄``, ``se² = s²(f)_u / N_u + s²(r)_l / n_l`` and, when both sides vary,
    Welch's ``θ ± t(df)·se`` with ``df = se⁴ / ((s²_u/N_u)²/(N_u-1) + (s²_r/n_l)²/(n_l-1))``
    (Satterthwaite 1946), as ``scipy.stats.ttest_ind(f_u, -r, equal_var=False)`` gives for
    the difference it is. With 10 labels the slice's term dominates and ``df`` is near 9,
    where t's quantile is 2.26, not the normal 1.96.
    A side that shows no spread has no variance to estimate, yet its mean is not known
    exactly, so it gets the interval of bounded values that do not vary (never of zero
    width), the other side its own t interval (``N - 1`` degrees of freedom), and the two
    intervals are added by MOVER (square-and-add, Zou and Donner 2008):

    - the judge's mean, every value equal: :func:`itemscore.aggregate.wilson_bound` over
      ``N_u`` trials, as :func:`itemscore.aggregate.mean` does for such values;
    - the rectifier, every human value minus judge value equal to ``c`` (the judge and the
      human agreed on every labelled item, or disagreed by one constant): the items on which
      they differ may still be a share ``π`` of the rest, each by at most the width of the
      range, so the mean lies within ``c ± π·(room)``. Seeing ``n_l`` items agree has a
      probability ``(1 - π)^{n_l}``, at most ``1 - confidence`` once
      ``π >= 1 - (1 - confidence)^{1/n_l}`` (the rule of three: 0.26 for 10 items, 3/n
      for many), so the rectifier's interval is
      ``[c - π·(c - (lo - hi)), c + π·((hi - lo) - c)]``.
    """
    from scipy.special import stdtrit

    from itemscore.aggregate import wilson_bound

    lo, hi = bounds
    tail = 0.5 + confidence / 2.0
    theta = judge.mean + rectifier.mean
    v_u, v_r = judge.var / judge.n, rectifier.var / rectifier.n
    se = np.sqrt(v_u + v_r)
    both = ~judge.flat & ~rectifier.flat
    with np.errstate(divide="ignore", invalid="ignore"):
        df = np.where(
            both, (v_u + v_r) ** 2 / (v_u**2 / (judge.n - 1) + v_r**2 / (rectifier.n - 1)), np.inf
        )
    # The judge's side: its own half-widths below and above its mean.
    down_u = up_u = float(stdtrit(judge.n - 1, tail)) * np.sqrt(v_u)
    flat = np.flatnonzero(judge.flat)
    if flat.size:
        down_u, up_u = down_u.copy(), up_u.copy()
        means, where = np.unique(judge.mean[flat], return_inverse=True)
        for i, m in enumerate(means.tolist()):  # resamples share few distinct flat means
            est = wilson_bound(min(max(m, lo), hi), judge.n, confidence=confidence, bounds=(lo, hi))
            assert est.low is not None
            assert est.high is not None
            rows = flat[where == i]
            down_u[rows], up_u[rows] = m - est.low, est.high - m
    # The rectifier's side: the rule-of-three bound when it does not vary.
    width = hi - lo
    share = 1.0 - (1.0 - confidence) ** (1.0 / rectifier.n)
    c = rectifier.mean
    r_half = float(stdtrit(rectifier.n - 1, tail)) * np.sqrt(v_r)
    down_r = np.where(rectifier.flat, share * (c + width), r_half)
    up_r = np.where(rectifier.flat, share * (width - c), r_half)
    welch = np.asarray(stdtrit(np.where(both, df, 1.0), tail)) * se
    low = np.where(both, theta - welch, theta - np.hypot(down_u, down_r))
    high = np.where(both, theta + welch, theta + np.hypot(up_u, up_r))
    value = np.clip(theta, lo, hi)
    return {
        "ppi": value,
        "ppi_low": np.minimum(np.maximum(low, lo), value),
        "ppi_high": np.maximum(np.minimum(high, hi), value),
        "ppi_se": se,
        "ppi_df": df,
    }
