"""Pairwise judgments: Bradley-Terry ratings, rank ranges, win rates and the judge's biases.

:func:`arena` reads judgments -- "model a and model b answered the same prompt; the judge
preferred a, b, or neither" -- and rates every model:

- **Ratings** are the maximum-likelihood Bradley-Terry fit, ``P(i beats j) = p_i / (p_i +
  p_j)``, a tie counting as half a win to each side, found by Newton's method on the log-
  likelihood (converged to steps below 1e-12 in the log strength). They are on the Elo scale,
  ``1000 + 400 · log10(p_i)`` with the strengths scaled so that the mean rating is 1000.
- **Intervals** come from a seeded bootstrap over judgments (over ``id`` when the judgments
  carry one: every judgment of a drawn id comes along). Judgments are first counted into one
  cell per (model a, model b, verdict); a resample is a vector of cell counts (a multinomial
  draw, or a sum of the drawn ids' counts), so a resample costs the cells, not the
  judgments. Each model's interval is the percentile interval of its bootstrap ratings.
- **Ranks** follow :func:`~itemscore.leaderboard`: a pair of models is decided when
  ``|r_i - r_j| / se_ij`` exceeds the critical value, ``se_ij`` the bootstrap standard
  deviation of the pair's difference. With ``method="max-t"`` (default) the critical value is
  the ``confidence`` quantile of the bootstrap ``max_ij |(r*_ij - r_ij) / se_ij|``, so every
  rank range holds at once; with ``"none"`` it is the normal quantile, pair by pair.
- A resample in which some model (or set of models) never lost, or never won, has no finite
  fit (its strength runs off to infinity). Such a resample counts against every bound: it is
  a rating below every lower end and above every upper end (an end that more than
  ``(1 - confidence) / 2`` of the resamples push away is ``None``), and a maximum above any
  critical value. ``Arena.n_failed`` says how many there were. The judgments themselves must
  have a finite fit: otherwise :func:`arena` raises an error naming the models.
"""

from __future__ import annotations

import functools
import math
import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from ._exceptions import ConfigError, InputError, did_you_mean, one_of
from ._leaderboard import check_options, rank_intervals
from .aggregate import ratio
from .stats._estimate import EMPTY, Estimate, _freeze_mapping
from .stats._intervals import _z

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from .inputs import Rows

__all__ = ["Arena", "Rating", "arena", "krippendorff_alpha"]

#: The roles of a judgment and whether each is required.
ROLES: dict[str, bool] = {
    "model_a": True,
    "model_b": True,
    "winner": True,
    "id": False,
    "judge": False,
}
#: Verdicts as written in the data (lower case, stripped) and what they mean. Besides
#: ``a``, ``b`` and ``tie``, Chatbot Arena's spellings are read as they are published.
VERDICTS: dict[str, int] = {
    "a": 0,
    "b": 1,
    "tie": 2,
    "model_a": 0,
    "model_b": 1,
    "tie (bothbad)": 2,
}
#: Bootstrap resamples.
N_RESAMPLES = 1000
#: Points of the Elo scale per unit of natural-log strength.
_ELO = 400.0 / math.log(10.0)
#: Newton stops when no log strength moves by more than this.
_TOL = 1e-12
_MAX_ITER = 200
#: Replicates fitted at once (their Hessians are ``block x K x K``).
_BLOCK = 256


@attrs.frozen(kw_only=True)
class Rating:
    """One model's Bradley-Terry rating with its interval and rank range."""

    #: The model's name.
    model: str
    #: Bradley-Terry strength on the Elo scale: ``1000 + 400 · log10(strength)``, mean 1000.
    rating: float
    #: Lower end of the bootstrap percentile interval (``None``: unbounded).
    ci_low: float | None = None
    #: Upper end of the bootstrap percentile interval (``None``: unbounded).
    ci_high: float | None = None
    #: 1 = best, by rating; equal ratings share the smallest rank.
    rank: int = 1
    #: The best rank the model could hold at the arena's confidence.
    rank_low: int = 1
    #: The worst rank the model could hold at the arena's confidence.
    rank_high: int = 1
    #: 1-based group of models that cannot be told apart from the group's first model.
    tie_group: int = 1

    def to_dict(self) -> dict[str, Any]:
        """The rating as JSON-ready data."""
        return attrs.asdict(self)


@attrs.frozen(kw_only=True)
class Arena:
    """Models rated from pairwise judgments (see :func:`arena`)."""

    #: Model -> its rating, best first.
    ratings: Mapping[str, Rating] = attrs.field(converter=_freeze_mapping)
    #: Model -> opponent -> share of their decided judgments (ties left out) the model won;
    #: only pairs with at least one decided judgment appear.
    win_rates: Mapping[str, Mapping[str, float]] = attrs.field(converter=_freeze_mapping)
    #: Share of decided judgments won by side a (the answer shown first), Wilson interval.
    position_bias: Estimate
    #: Judgments read.
    n_judgments: int
    #: Judgments that were ties.
    n_ties: int
    #: Confidence level of the intervals and rank ranges.
    confidence: float
    #: How pairs were decided: ``"max-t"`` (simultaneous) or ``"none"`` (pointwise).
    method: str
    #: Bootstrap resamples.
    n_resamples: int
    #: Seed of the bootstrap.
    seed: int
    #: Resamples without a finite fit (counted against every bound).
    n_failed: int = 0
    #: The units resampled: distinct ids, or ``None`` when judgments were resampled.
    n_ids: int | None = None
    #: The critical value of ``|r_i - r_j| / se_ij`` (``inf`` when fewer than two resamples fit:
    #: no pair is decided).
    critical_value: float | None = None
    #: Judge -> the arena of that judge's judgments alone (with a ``judge`` column).
    by_judge: Mapping[str, Arena] = attrs.field(default=EMPTY, converter=_freeze_mapping)
    #: Judge -> why that judge's judgments alone have no ratings (no finite fit).
    judge_errors: Mapping[str, str] = attrs.field(default=EMPTY, converter=_freeze_mapping)
    #: Krippendorff's alpha (nominal) of the judges' verdicts on the same (id, pair of
    #: models); ``None`` without ``judge`` and ``id``, or when no unit has two verdicts.
    judge_agreement: float | None = None

    def to_frame(self) -> Any:
        """The ratings as a pandas DataFrame, one row per model, best first."""
        import pandas as pd  # here: pandas is needed only by who asks for a frame

        columns = [field.name for field in attrs.fields(Rating)]
        return pd.DataFrame([r.to_dict() for r in self.ratings.values()], columns=columns)


# --------------------------------------------------------------------------- reading


@attrs.frozen
class _Judgments:
    """Judgments as columns: model codes, verdicts, ids and judges."""

    models: list[str]
    a: NDArray[np.intp]
    b: NDArray[np.intp]
    verdict: NDArray[np.intp]
    ids: list[str | None] | None
    judges: list[str | None] | None

    def subset(self, rows: NDArray[np.intp]) -> _Judgments:
        """The judgments at ``rows``, with only the models they name."""
        used = np.union1d(self.a[rows], self.b[rows])
        recode = np.full(len(self.models), -1, dtype=np.intp)
        recode[used] = np.arange(used.size)
        pick = rows.tolist()
        return _Judgments(
            models=[self.models[i] for i in used.tolist()],
            a=recode[self.a[rows]],
            b=recode[self.b[rows]],
            verdict=self.verdict[rows],
            ids=None if self.ids is None else [self.ids[i] for i in pick],
            judges=None if self.judges is None else [self.judges[i] for i in pick],
        )


def _check_columns(columns: Mapping[str, str] | None) -> dict[str, str]:
    names = {role: role for role in ROLES}
    if columns is None:
        return names
    if not isinstance(columns, Mapping):
        raise ConfigError(
            f"`columns` ({type(columns).__name__}) must map roles to column names, such as "
            "{'model_a': 'left', 'winner': 'verdict'}."
        )
    for role, column in columns.items():
        if role not in ROLES:
            raise ConfigError(
                f"`columns` names the role {role!r}; the roles of a judgment are "
                f"{one_of(ROLES)}.{did_you_mean(str(role), ROLES)}"
            )
        if not isinstance(column, str) or not column:
            raise ConfigError(f"`columns[{role!r}]` ({column!r}) must be a column name.")
        names[role] = column
    return names


def _chunks(judgments: object) -> Iterable[Rows]:
    """The judgments' rows: read from a file, or handed over as a DataFrame or dicts."""
    from .inputs import Rows, read_rows

    if isinstance(judgments, (str, os.PathLike)):
        return read_rows(judgments)
    if hasattr(judgments, "to_dict") and hasattr(judgments, "columns"):
        rows = judgments.to_dict("records")
    elif isinstance(judgments, Iterable) and not isinstance(judgments, (bytes, Mapping)):
        rows = list(judgments)
    else:
        raise ConfigError(
            f"`judgments` ({type(judgments).__name__}) must be a path to a JSONL, CSV or "
            "Parquet file, a pandas DataFrame, or a list of dicts."
        )
    return [Rows(name="", rows=rows, lines=range(1, len(rows) + 1), unit="row")]


def _text(value: Any, is_missing: Callable[[Any], bool]) -> str | None:
    """A name read from a cell: text, or ``None`` when missing (None, NaN, blank)."""
    if type(value) is str:  # the common case, without the general test
        return value if value.strip() else None
    if is_missing(value):
        return None
    text = str(value)
    return text if text.strip() else None


def _read(judgments: object, columns: Mapping[str, str] | None) -> _Judgments:
    """Every judgment, checked; errors name the row (``FILE:LINE``, or ``Row N``)."""
    from .inputs import is_missing

    names = _check_columns(columns)
    code: dict[str, int] = {}
    a: list[int] = []
    b: list[int] = []
    verdicts: list[int] = []
    ids: list[str | None] = []
    judges: list[str | None] = []
    name = ""
    for chunk in _chunks(judgments):
        name = chunk.name
        for index, row in enumerate(chunk.rows):
            if not isinstance(row, Mapping):
                raise InputError(
                    f"{chunk.where(index)}: a judgment must be a mapping of column to value, "
                    f"not {type(row).__name__}."
                )
            cells = {role: _text(row.get(column), is_missing) for role, column in names.items()}
            for role, required in ROLES.items():
                if required and cells[role] is None:
                    raise InputError(
                        f"{chunk.where(index, names[role])}: the {role} of this judgment (column "
                        f"{names[role]!r}) is missing; every judgment needs model_a, model_b and "
                        "winner (map other column names with `columns=`)."
                    )
            model_a, model_b = str(cells["model_a"]), str(cells["model_b"])
            if model_a == model_b:
                raise InputError(
                    f"{chunk.where(index, names['model_b'])}: the model {model_a!r} is on both "
                    "sides of this judgment; a judgment compares two different models."
                )
            verdict = VERDICTS.get(str(cells["winner"]).strip().lower())
            if verdict is None:
                raise InputError(
                    f"{chunk.where(index, names['winner'])}: the winner {cells['winner']!r} "
                    "must be 'a', 'b' or 'tie' (the side whose answer the judge preferred)."
                )
            a.append(code.setdefault(model_a, len(code)))
            b.append(code.setdefault(model_b, len(code)))
            verdicts.append(verdict)
            ids.append(cells["id"])
            judges.append(cells["judge"])
    if not a:
        where = f"{name}: " if name else ""
        raise InputError(
            f"{where}there are no judgments to rate; give at least one row with model_a, "
            "model_b and winner."
        )
    return _Judgments(
        models=list(code),
        a=np.asarray(a, dtype=np.intp),
        b=np.asarray(b, dtype=np.intp),
        verdict=np.asarray(verdicts, dtype=np.intp),
        ids=ids if any(i is not None for i in ids) else None,
        judges=judges if any(j is not None for j in judges) else None,
    )


# --------------------------------------------------------------------------- Bradley-Terry


def _wins(cells: NDArray[np.float64], k: int, *, ties: bool = True) -> NDArray[np.float64]:
    """``... x k x k`` from cell counts ``... x 3k²``: the judgments ``i`` won against ``j``.

    Cell ``(a, b, verdict)`` is ``(a * k + b) * 3 + verdict``; a tie counts half a win to
    each side (``ties=False``: ties are left out). Counts and halves add up exactly.
    """
    by = cells.reshape(*cells.shape[:-1], k, k, 3)
    won = by[..., 0] + np.swapaxes(by[..., 1], -1, -2)
    if not ties:
        return won
    return won + 0.5 * (by[..., 2] + np.swapaxes(by[..., 2], -1, -2))


def _has_fit(wins: NDArray[np.float64]) -> bool:
    """Whether a win matrix has a finite maximum-likelihood fit (Hunter 2004, Assumption 1).

    That is: in every split of the models into two sets, some model of each set won (or
    tied) against some model of the other -- the graph ``i -> j`` when ``i`` won against
    ``j`` is strongly connected.
    """
    from scipy.sparse.csgraph import connected_components

    n, _ = connected_components(wins > 0, directed=True, connection="strong")
    return int(n) == 1


def _loglik(theta: NDArray[np.float64], wins: NDArray[np.float64]) -> NDArray[np.float64]:
    """Bradley-Terry log-likelihood of log strengths ``theta`` (``... x k``)."""
    diff = theta[..., :, None] - theta[..., None, :]
    # log sigmoid(d) = -log1p(exp(-d)), written to stay finite for large |d|.
    log_p = -np.logaddexp(0.0, -diff)
    return np.asarray((wins * log_p).sum(axis=(-2, -1)))


def _fit(wins: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Maximum-likelihood log strengths (mean 0) of a stack of win matrices (``B x k x k``).

    Newton's method on the log-likelihood, with step halving when a step lowers it; the
    Hessian is made invertible by adding the constant direction, along which the likelihood
    is flat. Returns the log strengths and, per matrix, whether it converged.
    """
    batch, k, _ = wins.shape
    games = wins + np.swapaxes(wins, 1, 2)
    won = wins.sum(axis=2)
    theta = np.zeros((batch, k))
    current = _loglik(theta, wins)
    done = np.zeros(batch, dtype=bool)
    flat = np.full((k, k), 1.0 / k)
    eye = np.eye(k, dtype=bool)
    for _ in range(_MAX_ITER):
        active = np.flatnonzero(~done)
        if active.size == 0:
            break
        t = theta[active]
        p = 1.0 / (1.0 + np.exp(-(t[:, :, None] - t[:, None, :])))
        g = won[active] - (games[active] * p).sum(axis=2)
        h = games[active] * p * (1.0 - p)
        info = np.where(eye, h.sum(axis=2)[:, :, None] * eye, -h) + flat
        step = np.linalg.solve(info, g[:, :, None])[:, :, 0]
        step -= step.mean(axis=1, keepdims=True)
        scale = np.ones(active.size)
        base = current[active]
        for _ in range(60):
            trial = t + scale[:, None] * step
            value = _loglik(trial, wins[active])
            worse = value < base - 1e-12 * np.abs(base)
            if not worse.any():
                break
            scale[worse] *= 0.5
        theta[active] = trial
        current[active] = value
        moved = np.max(np.abs(scale[:, None] * step), axis=1)
        done[active[moved < _TOL]] = True
    return theta - theta.mean(axis=1, keepdims=True), done


def _ratings(theta: NDArray[np.float64]) -> NDArray[np.float64]:
    return 1000.0 + _ELO * theta


# --------------------------------------------------------------------------- the bootstrap


def _cells(data: _Judgments) -> NDArray[np.float64]:
    k = len(data.models)
    index = (data.a * k + data.b) * 3 + data.verdict
    return np.bincount(index, minlength=3 * k * k).astype(np.float64)


def _resampled_cells(
    data: _Judgments, n_resamples: int, rng: np.random.Generator
) -> Iterable[NDArray[np.float64]]:
    """Blocks of resampled cell counts: judgments drawn with replacement, or whole ids."""
    import scipy.sparse

    k = len(data.models)
    n_cells = 3 * k * k
    counts = _cells(data)
    if data.ids is None:
        total = int(counts.sum())
        for start in range(0, n_resamples, _BLOCK):
            b = min(_BLOCK, n_resamples - start)
            yield rng.multinomial(total, counts / total, size=b).astype(np.float64)
        return
    units, g = _id_units(data.ids)
    index = (data.a * k + data.b) * 3 + data.verdict
    per_unit = scipy.sparse.csr_matrix(
        (np.ones(units.size), (units, index)), shape=(g, n_cells)
    ).T.tocsr()
    probs = np.full(g, 1.0 / g)
    block = max(1, min(_BLOCK, (1 << 22) // g))
    for start in range(0, n_resamples, block):
        b = min(block, n_resamples - start)
        weights = rng.multinomial(g, probs, size=b).astype(np.float64)
        yield np.asarray(per_unit @ weights.T).T


def _id_units(ids: list[str | None]) -> tuple[NDArray[np.intp], int]:
    """Each judgment's unit of resampling (its id; without one, itself), and the units' number."""
    code: dict[str | None, int] = {}
    units = np.fromiter(
        (code.setdefault(i, len(code)) if i is not None else -1 for i in ids),
        dtype=np.intp,
        count=len(ids),
    )
    alone = np.flatnonzero(units < 0)
    units[alone] = len(code) + np.arange(alone.size)
    return units, len(code) + alone.size


def _no_fit_error(wins: NDArray[np.float64], models: list[str], who: str) -> InputError:
    """The error for judgments whose Bradley-Terry fit runs off to infinity."""
    from scipy.sparse.csgraph import connected_components

    _, labels = connected_components(wins > 0, directed=True, connection="strong")
    # The component no other component beats: its models never lost to anyone outside it.
    outside = labels[None, :] != labels[:, None]
    beaten = {int(labels[j]) for i, j in zip(*np.nonzero((wins > 0) & outside))}
    top = sorted(set(labels.tolist()) - beaten)[0]
    names = [m for m, lab in zip(models, labels.tolist()) if lab == top]
    return InputError(
        f"{who} have no finite Bradley-Terry ratings: {one_of(names)} never lost (nor tied) "
        "a judgment against the other models, so their strength has no maximum-likelihood "
        "value. Add judgments where they lose or tie, or rate them apart."
    )


def _rate(
    data: _Judgments,
    *,
    confidence: float,
    method: str,
    seed: int,
    n_resamples: int,
    who: str = "The judgments",
) -> Arena:
    k = len(data.models)
    cells = _cells(data)
    wins = _wins(cells, k)
    if not _has_fit(wins):  # every judgment names two models: k is at least 2
        raise _no_fit_error(wins, data.models, who)
    theta, _ = _fit(wins[None])
    rating = _ratings(theta[0])
    rng = np.random.default_rng(seed)
    samples = np.full((n_resamples, k), np.nan)
    row = 0
    for block in _resampled_cells(data, n_resamples, rng):
        stack = _wins(block, k)
        fits = np.array([_has_fit(w) for w in stack])
        if fits.any():
            fitted, converged = _fit(stack[fits])
            chosen = np.flatnonzero(fits)
            fitted[~converged] = np.nan
            samples[row + chosen] = _ratings(fitted)
        row += len(stack)
    failed = np.isnan(samples).any(axis=1)
    low, high = _percentiles(samples, failed, confidence)
    decided, critical = _decide(rating, samples, failed, confidence, method)
    order, rank, rank_low, rank_high, group = rank_intervals(rating, decided)
    ratings = {
        data.models[i]: Rating(
            model=data.models[i],
            rating=float(rating[i]),
            ci_low=low[i],
            ci_high=high[i],
            rank=int(rank[i]),
            rank_low=int(rank_low[i]),
            rank_high=int(rank_high[i]),
            tie_group=int(group[i]),
        )
        for i in order.tolist()
    }
    won = np.bincount(data.verdict, minlength=3)
    return Arena(
        ratings=ratings,
        win_rates=_win_rates(_wins(cells, k, ties=False), data.models),
        position_bias=ratio(int(won[0]), int(won[0] + won[1]), "wilson", confidence),
        n_judgments=int(data.verdict.size),
        n_ties=int(won[2]),
        confidence=confidence,
        method=method,
        n_resamples=n_resamples,
        seed=seed,
        n_failed=int(failed.sum()),
        n_ids=None if data.ids is None else _id_units(data.ids)[1],
        critical_value=critical,
    )


def _win_rates(won: NDArray[np.float64], models: list[str]) -> dict[str, dict[str, float]]:
    decided = won + won.T
    out: dict[str, dict[str, float]] = {}
    for i, model in enumerate(models):
        rates = {
            models[j]: float(won[i, j] / decided[i, j])
            for j in range(len(models))
            if j != i and decided[i, j] > 0
        }
        if rates:
            out[model] = rates
    return out


def _percentiles(
    samples: NDArray[np.float64], failed: NDArray[np.bool_], confidence: float
) -> tuple[list[float | None], list[float | None]]:
    """Percentile interval ends per model; a failed resample lies beyond every end."""
    alpha = (1.0 - confidence) / 2.0
    # An end that falls on (or between) failed resamples is infinite, or NaN where numpy
    # interpolates from an infinity: either way no bound.
    with np.errstate(invalid="ignore"):
        lows = np.quantile(np.where(failed[:, None], -np.inf, samples), alpha, axis=0)
        highs = np.quantile(np.where(failed[:, None], np.inf, samples), 1.0 - alpha, axis=0)
    return (
        [float(v) if math.isfinite(v) else None for v in lows.tolist()],
        [float(v) if math.isfinite(v) else None for v in highs.tolist()],
    )


def _decide(
    rating: NDArray[np.float64],
    samples: NDArray[np.float64],
    failed: NDArray[np.bool_],
    confidence: float,
    method: str,
) -> tuple[NDArray[np.bool_], float]:
    """``better[i, j]``: ``i``'s rating is decided above ``j``'s; and the critical value."""
    k = rating.size
    better = np.zeros((k, k), dtype=bool)
    iu, ju = np.triu_indices(k, 1)
    d = rating[iu] - rating[ju]
    good = samples[~failed]
    if good.shape[0] < 2:
        return better, math.inf
    d_star = good[:, iu] - good[:, ju]
    se = d_star.std(axis=0, ddof=1)
    spread = se > 0
    if method == "max-t":
        stat = np.abs(d_star[:, spread] - d[spread]) / se[spread]
        maxima = np.concatenate([stat.max(axis=1), np.full(int(failed.sum()), np.inf)])
        with np.errstate(invalid="ignore"):  # a quantile among failed resamples: no bound
            critical = float(np.quantile(maxima, confidence)) if spread.any() else math.inf
        critical = critical if math.isfinite(critical) else math.inf
    else:
        critical = _z(confidence)
    win = spread & (np.abs(d) > critical * np.where(spread, se, 0.0))
    up = d > 0
    better[iu[win & up], ju[win & up]] = True
    better[ju[win & ~up], iu[win & ~up]] = True
    return better, critical


# --------------------------------------------------------------------------- judges


def krippendorff_alpha(units: Iterable[Sequence[Any]]) -> float | None:
    """Krippendorff's alpha for nominal values, from its definition (Krippendorff 2011).

    Every value of a unit is paired with every other value of that unit; the coincidence
    matrix ``o_ck`` adds ``1 / (m_u - 1)`` for each ordered pair of values ``(c, k)`` of a
    unit with ``m_u >= 2`` values (units with one value are left out). With ``n_c = Σ_k o_ck``
    and ``n = Σ_c n_c``: ``alpha = 1 - (n - 1) · (n - Σ_c o_cc) / (n² - Σ_c n_c²)``.

    Args:
        units: Per unit, the values the coders gave it (missing values left out).

    Returns:
        Alpha, or ``None`` when no unit has two values or only one value occurs at all
        (no disagreement is expected, and alpha is undefined).
    """
    agree = 0.0
    total = 0.0
    margins: dict[Any, float] = {}
    for values in units:
        m = len(values)
        if m < 2:
            continue
        for value, count in Counter(values).items():
            margins[value] = margins.get(value, 0.0) + count
            agree += count * (count - 1) / (m - 1)
        total += m
    expected = total * total - sum(c * c for c in margins.values())
    if total == 0 or expected <= 0:
        return None
    return 1.0 - (total - 1.0) * (total - agree) / expected


def _agreement(data: _Judgments) -> float | None:
    """Alpha of the judges' verdicts (the winning model, or a tie) per (id, pair of models)."""
    if data.ids is None or data.judges is None:
        return None
    units: dict[tuple[str, str, str], list[str]] = {}
    for row, (item, judge) in enumerate(zip(data.ids, data.judges)):
        if item is None or judge is None:
            continue
        a, b = data.models[data.a[row]], data.models[data.b[row]]
        verdict = int(data.verdict[row])
        value = "\x00tie" if verdict == 2 else (a if verdict == 0 else b)
        first, second = sorted((a, b))  # a unit is the pair, whichever side each was shown
        units.setdefault((item, first, second), []).append(value)
    return krippendorff_alpha(units.values())


# --------------------------------------------------------------------------- arena


def arena(
    judgments: object,
    columns: Mapping[str, str] | None = None,
    *,
    confidence: float = 0.95,
    method: str = "max-t",
    seed: int = 0,
    n_resamples: int = N_RESAMPLES,
) -> Arena:
    """Rate models from pairwise judgments with Bradley-Terry, with intervals and rank ranges.

    Each judgment names two models (``model_a``, shown first, and ``model_b``) and the
    ``winner``: ``"a"``, ``"b"`` or ``"tie"`` (any case; Chatbot Arena's ``"model_a"``,
    ``"model_b"`` and ``"tie (bothbad)"`` are read too). Optional roles: ``id`` (the prompt
    or item judged; the bootstrap then resamples ids, every judgment of an id together) and
    ``judge`` (who judged; then every judge is rated alone in ``by_judge`` and the judges'
    agreement is measured).

    The module's docstring says how ratings, intervals and ranks are computed.
    ``position_bias`` is the share of decided judgments won by side a, with its Wilson
    interval: a fair judge, with sides assigned at random, is near 0.5. ``judge_agreement``
    is Krippendorff's alpha (nominal) of the verdicts -- the winning model or a tie, whatever
    side it was shown on -- that different judges gave one id and pair of models.

    Args:
        judgments: A path to a JSONL, CSV or Parquet file, a pandas DataFrame, or dicts.
        columns: Role -> column name, for columns named otherwise (``{"winner": "verdict"}``).
        confidence: Confidence level of the intervals and rank ranges, in (0, 1).
        method: ``"max-t"`` (rank ranges hold for every model at once) or ``"none"``
            (pointwise).
        seed: Seed of the bootstrap.
        n_resamples: Bootstrap resamples.

    Raises:
        ConfigError: a bad option, unknown role in ``columns``, or ``judgments`` of a type
            that is not read.
        InputError: no judgments; a judgment with a missing model or winner, an unknown
            winner, or one model on both sides (the message names the row); judgments with
            no finite Bradley-Terry fit (the message names the models that never lost).
        OSError: the file cannot be read.
    """
    confidence, seed, n_resamples = check_options(confidence, method, seed, n_resamples)
    data = _read(judgments, columns)
    rate = functools.partial(
        _rate, confidence=confidence, method=method, seed=seed, n_resamples=n_resamples
    )
    result = rate(data)
    if data.judges is None:
        return result
    judges: dict[str, list[int]] = {}
    for row, judge in enumerate(data.judges):
        if judge is not None:
            judges.setdefault(judge, []).append(row)
    by_judge: dict[str, Arena] = {}
    errors: dict[str, str] = {}
    for judge in sorted(judges):
        rows = np.asarray(judges[judge], dtype=np.intp)
        try:
            by_judge[judge] = rate(data.subset(rows), who=f"The judgments of {judge!r} alone")
        except InputError as exc:
            errors[judge] = str(exc)
    return attrs.evolve(
        result, by_judge=by_judge, judge_errors=errors, judge_agreement=_agreement(data)
    )
