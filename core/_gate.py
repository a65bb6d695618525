"""The sequential gate: is the candidate worse than the baseline by more than a margin?

``gate(baseline, candidate, metric=M, margin=D)`` pairs the two runs' items by id and
follows the mean paired difference ``μ = E[b - a]`` (for a lower-is-better metric, ``a - b``:
positive is always the candidate's gain) with an **anytime-valid confidence sequence**
(Howard, Ramdas, McAuliffe and Sekhon 2021, "Time-uniform, nonparametric, nonasymptotic
confidence sequences", the two-sided normal-mixture boundary): with ``t`` pairs, ``S_t`` the
sum of the differences, ``sigma = (hi - lo)`` of the score's range (the differences lie in
``[-sigma, sigma]``, so each is sub-Gaussian with variance proxy ``sigma²``),
``v = sigma² t`` and ``rho`` the mixture's precision,

    ``|S_t - t μ| <= sqrt((v + rho) · (2 log(1/alpha) + log((v + rho) / rho)))``  for all t at once,

with probability at least ``1 - alpha``. So the gate may be run again as items arrive, as often
as one likes, without raising its error rate: the sequence holds at every look together,
where a fixed-n interval checked at each look errs far more often (15-20% at ten looks).
``rho`` is set so that the boundary is narrowest at :data:`TUNED_FOR` pairs.

Verdicts, with ``[L, U]`` the sequence at the current ``t`` and ``D`` the margin:
``"not worse"`` when ``L > -D`` (exit 0), ``"worse"`` when ``U < -D`` (exit 1), else
``"inconclusive"`` (exit 3). The half-width ``(U - L) / 2`` is the smallest margin the
current pairs can decide: a candidate that scores exactly like the baseline is "not worse"
only for a margin above it (:func:`pairs_needed` says how many pairs a margin takes).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from ._exceptions import ConfigError, did_you_mean, one_of

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ._result import RunResult

__all__ = [
    "EXIT_CODES",
    "GateResult",
    "gate",
    "mixture_radius",
    "pairs_needed",
]

#: Pairs at which the confidence sequence is tuned to be narrowest.
TUNED_FOR = 500
#: Exit code of each verdict on the command line.
EXIT_CODES = {"not worse": 0, "worse": 1, "inconclusive": 3}


@attrs.frozen(kw_only=True)
class GateResult:
    """The gate's verdict with the confidence sequence it rests on."""

    #: ``"not worse"``, ``"worse"`` or ``"inconclusive"``.
    verdict: str
    #: The metric label.
    metric: str
    #: Pairs scored on both sides.
    n_pairs: int
    #: The mean gain of the candidate (``b - a``, or ``a - b`` when lower is better).
    gain: float | None
    #: Lower end of the confidence sequence of the gain at ``n_pairs``.
    low: float | None
    #: Upper end.
    high: float | None
    #: The margin ``D``: "worse" means a gain below ``-D``.
    margin: float
    #: ``1 - alpha`` of the sequence.
    confidence: float
    #: How the sequence was made.
    method: str = "normal-mixture confidence sequence (Howard et al. 2021)"
    #: The model gated (``None``: each run's only model, or runs without model names).
    model: str | None = None
    #: Half-width of the sequence at ``n_pairs``: the smallest margin these pairs can decide
    #: (a candidate scoring exactly like the baseline is "not worse" only above it).
    half_width: float | None = None
    #: Pairs at which the half-width falls below ``margin`` (``None`` for a margin of 0).
    pairs_needed: int | None = None

    @property
    def exit_code(self) -> int:
        """0 not worse, 1 worse, 3 inconclusive."""
        return EXIT_CODES[self.verdict]

    def margin_note(self) -> str | None:
        """Why an inconclusive verdict cannot be helped by these pairs, or ``None``.

        Said when the margin is within the sequence's half-width: then no gain these pairs
        could show makes the candidate "not worse", and only more pairs (or a wider margin)
        can.
        """
        if self.verdict != "inconclusive" or self.half_width is None:
            return None
        if self.margin > self.half_width:
            return None
        needed = (
            f" A margin of {self.margin:g} needs about {self.pairs_needed:,} pairs when the "
            "two score alike."
            if self.pairs_needed is not None
            else " A margin of 0 can never be shown."
        )
        return (
            f"With these {self.n_pairs:,} pairs, a margin below {self.half_width:.4f} cannot be "
            "shown: the interval's half-width is the smallest margin this data can decide." + needed
        )

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready data, with its exit code."""
        return {**attrs.asdict(self), "exit_code": self.exit_code}


def _rho(sigma: float, alpha: float, tuned_for: int) -> float:
    """The mixture precision that makes the boundary narrowest at ``tuned_for`` pairs."""
    v = sigma * sigma * tuned_for
    grid = v * np.logspace(-4, 2, 600)
    radius = np.sqrt((v + grid) * (2.0 * math.log(1.0 / alpha) + np.log((v + grid) / grid)))
    return float(grid[int(np.argmin(radius))])


def mixture_radius(
    t: int | NDArray[np.int64], sigma: float, alpha: float, tuned_for: int = TUNED_FOR
) -> Any:
    """Half-width of the confidence sequence of a mean after ``t`` observations.

    ``sqrt((v + rho)(2 log(1/alpha) + log((v + rho)/rho))) / t`` with ``v = sigma² t``.
    """
    rho = _rho(sigma, alpha, tuned_for)
    v = sigma * sigma * np.asarray(t, dtype=np.float64)
    bound = np.sqrt((v + rho) * (2.0 * math.log(1.0 / alpha) + np.log((v + rho) / rho)))
    return bound / np.asarray(t, dtype=np.float64)


def pairs_needed(
    margin: float, sigma: float, alpha: float, tuned_for: int = TUNED_FOR
) -> int | None:
    """The fewest pairs at which the sequence's half-width falls below ``margin``.

    The half-width shrinks as pairs are added, so a bisection finds it; ``None`` when no
    count does (a margin of 0, or one beyond a trillion pairs).
    """
    limit = 10**12
    if margin <= 0 or float(mixture_radius(limit, sigma, alpha, tuned_for)) >= margin:
        return None
    low, high = 0, limit  # radius(low) >= margin > radius(high)
    while high - low > 1:
        mid = (low + high) // 2
        if mid > 0 and float(mixture_radius(mid, sigma, alpha, tuned_for)) < margin:
            high = mid
        else:
            low = mid
    return high


def _models(result: RunResult) -> list[str]:
    return [m for m in result.by_model if m is not None]


def _pick_model(baseline: RunResult, candidate: RunResult, model: str | None) -> None:
    """Check that ``model`` names one model in each run (or is needed and missing)."""
    sides = (("baseline", _models(baseline)), ("candidate", _models(candidate)))
    if model is None:
        for which, models in sides:
            if len(models) > 1:
                other_which, other = sides[1] if which == "baseline" else sides[0]
                differs = len(other) > 1 and set(other) != set(models)
                raise ConfigError(
                    f"The {which} results hold several models ({one_of(models)}), and the gate "
                    f"compares one model with one: pick it with `--model NAME`, e.g. "
                    f"`--model {models[0]}`"
                    + (f" (the {other_which} results hold {one_of(other)})." if differs else ".")
                )
        return
    for which, models in sides:
        if not models or model in models:
            continue
        if len(models) == 1:
            raise ConfigError(
                f"`--model` ({model!r}) is no model of the {which} results, which hold only "
                f"{models[0]!r}."
            )
        raise ConfigError(
            f"`--model` ({model!r}) is no model of the {which} results; its models are "
            f"{one_of(models)}.{did_you_mean(model, models)}"
        )


def _check_label(result: RunResult, label: str, which: str) -> None:
    """``label`` must be a label of the run."""
    labels = list(result.labels)
    if label not in labels:
        raise ConfigError(
            f"`--metric` ({label!r}) is no label of the {which} results; its labels are "
            f"{one_of(labels)}.{did_you_mean(label, labels)}"
        )


def _range(result: RunResult, label: str) -> tuple[float, float]:
    """The range every score of ``label`` lies in: [0, 1] for a ratio, else the metric's."""
    from .comparison import score_range

    bounds = score_range(result, label)
    if bounds is None:
        raise ConfigError(
            f"The gate needs scores within known bounds, and {label!r} has none (its metric "
            "sets no `value_bounds`, or is not installed here): a confidence sequence of an "
            "unbounded mean can be made arbitrarily wrong by one outlier."
        )
    return bounds


def gate(
    baseline: RunResult,
    candidate: RunResult,
    *,
    metric: str,
    margin: float,
    confidence: float = 0.95,
    model: str | None = None,
    names: tuple[str, str] = ("the baseline results", "the candidate results"),
) -> GateResult:
    """Whether ``candidate`` is worse than ``baseline`` on ``metric`` by more than ``margin``.

    Items pair by id; pairs where either side is skip or error are left out. Before any
    pair is made, the label must name the same metric and options on both sides, and every
    per-item score must be possible for that metric (a finite value within its range).

    Args:
        baseline: The run to hold the candidate against.
        candidate: The run under test.
        metric: The label gated on.
        margin: How much worse the candidate may be (``D``).
        confidence: ``1 - alpha`` of the confidence sequence.
        model: The model gated, in runs that hold several (a run of one model is used as
            it is when that model is ``model``).
        names: How messages name the two runs (the command line gives the file names).

    Raises:
        ConfigError: an unknown label, several models in one file and no ``model``, a
            ``model`` a run does not hold, an unbounded metric, a negative margin or a
            confidence level outside (0, 1).
        MetricMismatchError: the label names different metrics or options in the two runs
            (a :class:`ConfigError`).
        ResultsFormatError: a per-item score the metric cannot give (a value outside its
            range, not finite, or missing), naming the run, the item and the value.
    """
    if not (isinstance(margin, (int, float)) and math.isfinite(margin) and margin >= 0):
        raise ConfigError(f"`--margin` ({margin!r}) must be a non-negative number.")
    if not 0.0 < confidence < 1.0:
        raise ConfigError(f"`confidence` ({confidence!r}) must be in (0, 1).")
    _pick_model(baseline, candidate, model)
    _check_label(baseline, metric, "baseline")
    _check_label(candidate, metric, "candidate")
    from .comparison import check_same_metrics

    check_same_metrics(baseline, candidate, [metric], names=names)
    lo, hi = _range(baseline, metric)
    from ._score_values import check_score_values

    for side, name in ((baseline, names[0]), (candidate, names[1])):
        check_score_values(side, [metric], name, bounds_of=lambda _: (lo, hi))
    from .comparison import _higher_is_better
    from .comparison._joined import join

    # The runs joined a bucket of ids at a time: the gains' count and mean are all it needs.
    several = tuple(model is not None and len(_models(side)) > 1 for side in (baseline, candidate))
    joined = join(
        (baseline, candidate), [(model, model)], (several[0], several[1]),
        [(metric, metric, True)], check_items=False,
    )  # fmt: skip
    differences = joined.stats[(0, 0)].tallies(None)[2]
    sigma, alpha = hi - lo, 1.0 - confidence
    common: dict[str, Any] = {
        "metric": metric, "margin": float(margin), "confidence": confidence, "model": model,
        "pairs_needed": pairs_needed(float(margin), sigma, alpha),
    }  # fmt: skip
    n = differences.n
    if n == 0:
        return GateResult(verdict="inconclusive", n_pairs=0, gain=None, low=None, high=None,
                          **common)  # fmt: skip
    mean = differences.mean_sd()[0]
    gain = mean if _higher_is_better(baseline, metric) else -mean
    radius = float(mixture_radius(n, sigma, alpha))  # the anytime-valid interval of the gain
    low, high = gain - radius, gain + radius
    common["half_width"] = (high - low) / 2.0
    low, high = max(low, lo - hi), min(high, hi - lo)
    verdict = "not worse" if low > -margin else "worse" if high < -margin else "inconclusive"
    return GateResult(
        verdict=verdict, n_pairs=n, gain=gain, low=low, high=high,
        **common,
    )  # fmt: skip
