"""Tests for itemscore.arena: Bradley-Terry parity, win rates, bias, judges, input errors."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv
import pyarrow.parquet
import pytest
import scipy.optimize
from statsmodels.stats.proportion import proportion_confint

from itemscore import Arena, ConfigError, InputError, Rating, arena
from itemscore._arena import krippendorff_alpha

ELO = 400.0 / math.log(10.0)


def _judgments(
    strengths: list[float], n: int, *, seed: int = 0, ties: float = 0.2, bias: float = 0.0
) -> list[dict[str, Any]]:
    """Random judgments among models of the given log strengths, some of them ties."""
    rng = np.random.default_rng(seed)
    k = len(strengths)
    theta = np.asarray(strengths)
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    p = 1.0 / (1.0 + np.exp(-(theta[a] - theta[b] + bias)))
    u = rng.random(n)
    winner = np.where(u < ties, "tie", np.where(rng.random(n) < p, "a", "b"))
    return [
        {"id": f"p{i}", "model_a": f"m{x}", "model_b": f"m{y}", "winner": w}
        for i, (x, y, w) in enumerate(zip(a.tolist(), b.tolist(), winner.tolist()))
    ]


def _scipy_ratings(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Ratings by scipy.optimize.minimize on the per-judgment log-likelihood (ties: half)."""
    models = sorted({r["model_a"] for r in rows} | {r["model_b"] for r in rows})
    index = {m: i for i, m in enumerate(models)}
    a = np.array([index[r["model_a"]] for r in rows])
    b = np.array([index[r["model_b"]] for r in rows])
    share_a = np.array([{"a": 1.0, "b": 0.0, "tie": 0.5}[r["winner"]] for r in rows])

    def nll(free: np.ndarray) -> tuple[float, np.ndarray]:
        theta = np.concatenate([[0.0], free])  # the first model's strength fixed at 1
        d = theta[a] - theta[b]
        p = 1.0 / (1.0 + np.exp(-d))
        value = -np.sum(share_a * np.log(p) + (1.0 - share_a) * np.log1p(-p))
        g = share_a - p  # d(loglik)/d(d) per judgment
        grad = np.zeros(len(models))
        np.add.at(grad, a, -g)
        np.add.at(grad, b, g)
        return float(value), grad[1:]

    fit = scipy.optimize.minimize(
        nll, np.zeros(len(models) - 1), jac=True, method="BFGS", options={"gtol": 1e-11}
    )
    theta = np.concatenate([[0.0], fit.x])
    theta -= theta.mean()
    return {m: 1000.0 + ELO * t for m, t in zip(models, theta.tolist())}


# --------------------------------------------------------------------------- ratings


@pytest.mark.parametrize("seed", range(4))
def test_bradley_terry_equals_a_scipy_maximum_likelihood_fit(seed: int) -> None:
    """Ratings equal an independent scipy fit of the per-judgment likelihood to 1e-6."""
    rows = _judgments([0.0, 0.4, -0.3, 1.2, 0.1], 400, seed=seed)
    result = arena(rows, n_resamples=20)
    expected = _scipy_ratings(rows)
    assert set(result.ratings) == set(expected)
    for model, rating in result.ratings.items():
        assert rating.rating == pytest.approx(expected[model], abs=1e-6)
    assert np.mean([r.rating for r in result.ratings.values()]) == pytest.approx(1000.0)


def test_ratings_are_best_first_with_intervals_around_them() -> None:
    """Ratings come best first; each interval holds its rating; clear gaps are decided."""
    rows = _judgments([0.0, 1.5, -1.5], 3000, seed=1)
    result = arena(rows, n_resamples=200)
    assert isinstance(result, Arena)
    assert list(result.ratings) == ["m1", "m0", "m2"]
    for r in result.ratings.values():
        assert isinstance(r, Rating)
        assert r.ci_low is not None
        assert r.ci_high is not None
        assert r.ci_low < r.rating < r.ci_high
    assert [(r.rank, r.rank_low, r.rank_high, r.tie_group) for r in result.ratings.values()] == [
        (1, 1, 1, 1),
        (2, 2, 2, 2),
        (3, 3, 3, 3),
    ]
    assert result.n_failed == 0
    again = arena(rows, n_resamples=200)
    assert again == result  # seeded


def test_equal_models_share_a_tie_group() -> None:
    """Two models of equal strength, well above a third: one tie group, ranks 1-2."""
    rows = _judgments([1.0, 1.0, -1.0], 1500, seed=2)
    top = list(arena(rows, n_resamples=300).ratings.values())[:2]
    assert {r.model for r in top} == {"m0", "m1"}
    assert [(r.rank_low, r.rank_high, r.tie_group) for r in top] == [(1, 2, 1), (1, 2, 1)]


def test_win_rates_are_exact_on_a_small_table() -> None:
    """Win rates count decided judgments either side; ties are left out."""
    rows = [
        {"model_a": "x", "model_b": "y", "winner": "a"},
        {"model_a": "x", "model_b": "y", "winner": "a"},
        {"model_a": "y", "model_b": "x", "winner": "a"},
        {"model_a": "y", "model_b": "x", "winner": "tie"},
        {"model_a": "x", "model_b": "z", "winner": "b"},
        {"model_a": "z", "model_b": "y", "winner": "b"},
        {"model_a": "z", "model_b": "y", "winner": "TIE"},
        {"model_a": "x", "model_b": "z", "winner": "a"},
    ]
    result = arena(rows, n_resamples=20)
    assert result.win_rates == {
        "x": {"y": 2 / 3, "z": 1 / 2},
        "y": {"x": 1 / 3, "z": 1.0},
        "z": {"x": 1 / 2, "y": 0.0},
    }
    assert (result.n_judgments, result.n_ties) == (8, 2)


def test_position_bias_is_the_wilson_share_of_side_a() -> None:
    """Decided judgments won by side a, with statsmodels' Wilson interval."""
    rows = _judgments([0.0, 0.2, 0.4], 2000, seed=3, bias=0.4)
    result = arena(rows, n_resamples=20)
    decided = [r for r in rows if r["winner"] != "tie"]
    k = sum(r["winner"] == "a" for r in decided)
    bias = result.position_bias
    assert bias.value == k / len(decided)
    assert bias.n == len(decided)
    low, high = proportion_confint(k, len(decided), alpha=0.05, method="wilson")
    assert (bias.low, bias.high) == pytest.approx((low, high), abs=1e-12)
    assert bias.low > 0.5  # the simulated judge prefers the side shown first


def test_ids_resample_whole_prompts() -> None:
    """Judgments repeated under one id add no precision; repeated under new ids they do."""
    rows = _judgments([0.0, 0.5, 1.0], 600, seed=4)
    width = _width(arena(rows, n_resamples=400))
    twice_same = [dict(r) for r in rows for _ in range(2)]
    twice_new = [dict(r, id=f"{r['id']}-{j}") for r in rows for j in range(2)]
    same = arena(twice_same, n_resamples=400)
    assert same.n_ids == 600
    assert _width(same) == pytest.approx(width, rel=0.15)
    assert _width(arena(twice_new, n_resamples=400)) == pytest.approx(
        width / math.sqrt(2), rel=0.15
    )


def _width(result: Arena) -> float:
    return float(
        np.mean([r.ci_high - r.ci_low for r in result.ratings.values()])  # type: ignore[operator]
    )


def test_resamples_without_a_finite_fit_count_against_the_bounds() -> None:
    """Few judgments: resamples where a model never lost leave that end unbounded."""
    rows = [
        {"model_a": "x", "model_b": "y", "winner": "a"},
        {"model_a": "y", "model_b": "x", "winner": "a"},
        {"model_a": "x", "model_b": "y", "winner": "a"},
    ]
    result = arena(rows, n_resamples=200)
    assert result.n_failed > 0.025 * 200
    assert all(r.ci_low is None and r.ci_high is None for r in result.ratings.values())
    assert all((r.rank_low, r.rank_high) == (1, 2) for r in result.ratings.values())


# --------------------------------------------------------------------------- input


def _files(rows: list[dict[str, Any]], folder: Path) -> list[Path]:
    jsonl = folder / "j.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    table = pa.Table.from_pylist(rows)
    csv = folder / "j.csv"
    pyarrow.csv.write_csv(table, csv)
    parquet = folder / "j.parquet"
    pyarrow.parquet.write_table(table, parquet)
    return [jsonl, csv, parquet]


def test_files_frames_and_dicts_rate_alike(tmp_path: Path) -> None:
    """JSONL, CSV, Parquet, a DataFrame and dicts give one arena; columns= maps names."""
    import pandas as pd

    rows = _judgments([0.0, 0.3, 0.6], 200, seed=5)
    expected = arena(rows, n_resamples=50)
    renamed = [
        {"left": r["model_a"], "right": r["model_b"], "v": r["winner"], "q": r["id"]} for r in rows
    ]
    mapping = {"model_a": "left", "model_b": "right", "winner": "v", "id": "q"}
    assert arena(renamed, mapping, n_resamples=50) == expected
    assert arena(pd.DataFrame(rows), n_resamples=50) == expected
    for path in _files(rows, tmp_path):
        assert arena(path, n_resamples=50) == expected
        assert arena(str(path), n_resamples=50) == expected


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"winner": "left"}, r"^Row 3: the winner 'left' must be 'a', 'b' or 'tie'"),
        ({"model_b": "m_same"}, r"^Row 3: the model 'm_same' is on both sides"),
        ({"winner": None}, r"^Row 3: the winner of this judgment \(column 'winner'\) is missing"),
    ],
    ids=["unknown-winner", "both-sides", "missing-winner"],
)
def test_bad_judgments_name_their_row(change: dict[str, Any], message: str) -> None:
    """A bad row is an InputError that names the row and says what is allowed."""
    rows = [
        {"model_a": "m1", "model_b": "m2", "winner": "a"},
        {"model_a": "m2", "model_b": "m1", "winner": "b"},
        {"model_a": "m_same", "model_b": "m3", "winner": "tie"},
    ]
    rows[2] = {**rows[2], **change}
    with pytest.raises(InputError, match=message):
        arena(rows)


def test_a_bad_winner_in_a_file_names_file_and_line(tmp_path: Path) -> None:
    """In a JSONL file, the message starts with FILE:LINE."""
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"model_a": "x", "model_b": "y", "winner": "a"}\n'
        '{"model_a": "x", "model_b": "y", "winner": "draw"}\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError, match=r"bad\.jsonl:2.*winner 'draw' must be"):
        arena(path)


@pytest.mark.parametrize("empty", [[], "frame"], ids=["list", "frame"])
def test_no_judgments_is_an_error(empty: Any) -> None:
    """Nothing to rate is an error, not an empty arena."""
    import pandas as pd

    data = pd.DataFrame(columns=["model_a", "model_b", "winner"]) if empty == "frame" else empty
    with pytest.raises(InputError, match=r"no judgments to rate"):
        arena(data)


def test_no_finite_fit_names_the_models_that_never_lost() -> None:
    """A model that won every judgment has no finite rating: the error names it."""
    rows = [
        {"model_a": "champ", "model_b": "x", "winner": "a"},
        {"model_a": "y", "model_b": "champ", "winner": "b"},
        {"model_a": "x", "model_b": "y", "winner": "a"},
        {"model_a": "y", "model_b": "x", "winner": "a"},
    ]
    with pytest.raises(InputError, match=r"'champ' never lost"):
        arena(rows)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"columns": {"winer": "w"}}, r"role 'winer'.*Did you mean 'winner'"),
        ({"method": "max_t"}, r"`method` \('max_t'\) must be one of"),
        ({"n_resamples": -1}, r"`n_resamples`"),
    ],
    ids=["role", "method", "resamples"],
)
def test_bad_options(kwargs: dict[str, Any], message: str) -> None:
    """Bad options are ConfigErrors naming them."""
    with pytest.raises(ConfigError, match=message):
        arena([{"model_a": "x", "model_b": "y", "winner": "a"}], **kwargs)


def test_judgments_of_an_unread_type_are_refused() -> None:
    """A number is not judgments: the error lists what is read."""
    with pytest.raises(ConfigError, match=r"path to a JSONL, CSV or Parquet file"):
        arena(42)


# --------------------------------------------------------------------------- judges


def test_krippendorff_alpha_on_the_textbook_example() -> None:
    """Krippendorff (2011), four coders, twelve units with gaps: nominal alpha = 0.743."""
    coders = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    ]
    units = [[c[u] for c in coders if c[u] is not None] for u in range(12)]
    alpha = krippendorff_alpha(units)
    assert alpha is not None
    assert round(alpha, 3) == 0.743
    assert krippendorff_alpha([[1], [2, 2], [3, 3]]) == 1.0
    assert krippendorff_alpha([[1, 1], [1, 1]]) is None  # one value only: undefined


def _judged(seed: int, n_items: int = 80) -> list[dict[str, Any]]:
    """Three judges on the same items; each flips some verdicts and sides."""
    rng = np.random.default_rng(seed)
    base = _judgments([0.0, 0.6, 1.2, 0.3], n_items, seed=seed)
    rows = []
    for judge, noise in (("j1", 0.1), ("j2", 0.3), ("j3", 0.5)):
        for r in base:
            winner = r["winner"]
            if rng.random() < noise:
                winner = str(rng.choice(["a", "b", "tie"]))
            if rng.random() < 0.5:  # shown the other way round: the verdict follows the side
                flipped = {"a": "b", "b": "a", "tie": "tie"}[winner]
                rows.append(
                    dict(r, model_a=r["model_b"], model_b=r["model_a"], winner=flipped, judge=judge)
                )
            else:
                rows.append(dict(r, winner=winner, judge=judge))
    return rows


def test_judge_agreement_equals_the_krippendorff_package() -> None:
    """Alpha over (id, pair) units of the verdicts equals krippendorff.alpha (nominal)."""
    krippendorff = pytest.importorskip("krippendorff")
    rows = _judged(6)
    result = arena(rows, n_resamples=50)
    judges = ["j1", "j2", "j3"]
    items = sorted({r["id"] for r in rows})
    codes: dict[str, float] = {}
    matrix = np.full((3, len(items)), np.nan)
    for r in rows:
        verdict = (
            "tie" if r["winner"] == "tie" else r["model_a" if r["winner"] == "a" else "model_b"]
        )
        matrix[judges.index(r["judge"]), items.index(r["id"])] = codes.setdefault(
            verdict, len(codes)
        )
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    assert result.judge_agreement == pytest.approx(expected, abs=1e-12)
    assert set(result.by_judge) == {"j1", "j2", "j3"}
    alone = arena([r for r in rows if r["judge"] == "j2"], n_resamples=50)
    for model, rating in alone.ratings.items():
        own = result.by_judge["j2"].ratings[model]
        assert own.rating == pytest.approx(rating.rating, abs=1e-9)
        assert (own.rank, own.rank_low, own.rank_high) == (
            rating.rank,
            rating.rank_low,
            rating.rank_high,
        )


def test_a_judge_without_a_finite_fit_is_reported_not_raised() -> None:
    """One judge's judgments alone may have no ratings: the others are still rated."""
    rows = _judged(7)
    rows += [
        {"model_a": "m0", "model_b": "m1", "winner": "a", "judge": "lone", "id": "z"},
    ]
    result = arena(rows, n_resamples=30)
    assert "lone" not in result.by_judge
    assert "never lost" in result.judge_errors["lone"]
    assert {"j1", "j2", "j3"} <= set(result.by_judge)


def test_agreement_needs_ids() -> None:
    """Without ids nothing says which verdicts are of one item: no agreement, no error."""
    rows = [{k: v for k, v in r.items() if k != "id"} for r in _judged(8, 30)]
    assert arena(rows, n_resamples=20).judge_agreement is None


def test_to_frame_lists_the_ratings_best_first() -> None:
    """to_frame has the Rating fields as columns, one row per model."""
    result = arena(_judgments([0.0, 1.0], 300, seed=9), n_resamples=50)
    frame = result.to_frame()
    assert list(frame.columns) == [
        "model", "rating", "ci_low", "ci_high", "rank", "rank_low", "rank_high", "tie_group",
    ]  # fmt: skip
    assert frame["model"].tolist() == list(result.ratings)
