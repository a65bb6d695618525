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
  ``se² = s²(f)_u / N_u + s²(y - f)_l / n_l`` and the normal interval ``θ ± z·se``. Unbiased
  whatever the judge's errors; as narrow as the judge is good.

The simulations in ``tests/test_judge_correction.py`` check both: the naive interval misses a
known truth, the corrected ones cover it at the nominal rate (figures in docs/judges.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["CORRECTION_DRAWS", "prediction_powered", "rogan_gladen"]

#: Posterior draws behind the Rogan-Gladen interval.
CORRECTION_DRAWS = 4000


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

    Args:
        judge_unlabelled: The judge's values on the items without a human verdict.
        judge_labelled: The judge's values on the slice.
        human_labelled: The human's values on the same items, on the judge's scale.
        confidence: Confidence level of the interval.
        bounds: The range of the values; the interval is clipped to it.

    Returns:
        ``ppi``, ``ppi_low``, ``ppi_high`` and ``ppi_se``; ``{}`` without at least two items
        on each side (no variance to estimate).
    """
    from statistics import NormalDist

    f_u = np.asarray(judge_unlabelled, dtype=np.float64)
    f_l = np.asarray(judge_labelled, dtype=np.float64)
    y_l = np.asarray(human_labelled, dtype=np.float64)
    if f_u.size < 2 or f_l.size < 2:
        return {}
    rectifier = y_l - f_l
    value = float(f_u.mean() + rectifier.mean())
    se = math.sqrt(float(f_u.var(ddof=1)) / f_u.size + float(rectifier.var(ddof=1)) / f_l.size)
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    lo, hi = bounds
    value = min(max(value, lo), hi)
    return {
        "ppi": value,
        "ppi_low": max(value - z * se, lo),
        "ppi_high": min(value + z * se, hi),
        "ppi_se": se,
    }
