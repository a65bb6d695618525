"""A leaderboard of real lm-eval logs: its values, decided pairs, rank ranges and tie groups.

The data are tests/data/leaderboard/: eight models on the task ``arith_gen`` (120 sums and
products), each run written by lm-evaluation-harness itself (``lm_eval run --log_samples``)
offline, with scripted models whose answers follow a seeded item-response model
(tests/data/harness/make_logs.py, target ``leaderboard``; the README beside the data says
how). Nothing in the logs was edited by hand.

The board itemscore builds from them is checked against references computed here by other
means: the values against the headline lm-eval wrote in each results file; the pointwise
decisions against scipy's paired t test; the max-t critical value against the bootstrap
quantile recomputed resample by resample on the resampled questions themselves; the decided
pairs against exact McNemar tests (``scipy.stats.binomtest`` on the discordant questions),
alone and with Holm's correction; the rank ranges and tie groups against their definitions.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from click.testing import CliRunner
from statsmodels.stats.proportion import proportion_confint

import itemscore
from itemscore import Leaderboard, RunResult

DATA = Path(__file__).parent / "data" / "leaderboard"
RESULTS = DATA / "results"
#: The key of the headline in lm-eval's results file: the metric, then the filter.
HEADLINE = "exact_match,strict-match"
ALPHA = 0.05

#: The board of the logs at 95%, max-t, seed 0, as ``Leaderboard.to_markdown(digits=3)``
#: prints it; docs/leaderboards.md shows the same table.
MAX_T_BOARD = """\
| Rank | Model | exact_match | 95% CI | Rank range | Tie group |
|---:|---|---:|---|---|---:|
| 1 | model-c | 0.842 | [0.766, 0.896] | 1-3 | 1 |
| 2 | model-a | 0.792 | [0.711, 0.855] | 1-4 | 1 |
| 2 | model-f | 0.792 | [0.711, 0.855] | 1-3 | 1 |
| 4 | model-h | 0.667 | [0.578, 0.745] | 3-7 | 2 |
| 5 | model-b | 0.633 | [0.544, 0.714] | 4-7 | 2 |
| 6 | model-d | 0.550 | [0.461, 0.636] | 4-7 | 2 |
| 7 | model-e | 0.517 | [0.428, 0.604] | 4-8 | 2 |
| 8 | model-g | 0.367 | [0.286, 0.456] | 7-8 | 3 |

120 shared questions; rank ranges at 95%, simultaneous over every pair (max-t); higher is better.
"""
#: The same with ``method="none"``: pointwise, narrower ranges, one tie group more.
POINTWISE_BOARD = """\
| Rank | Model | exact_match | 95% CI | Rank range | Tie group |
|---:|---|---:|---|---|---:|
| 1 | model-c | 0.842 | [0.766, 0.896] | 1-3 | 1 |
| 2 | model-a | 0.792 | [0.711, 0.855] | 1-3 | 1 |
| 2 | model-f | 0.792 | [0.711, 0.855] | 1-3 | 1 |
| 4 | model-h | 0.667 | [0.578, 0.745] | 4-5 | 2 |
| 5 | model-b | 0.633 | [0.544, 0.714] | 4-6 | 2 |
| 6 | model-d | 0.550 | [0.461, 0.636] | 5-7 | 3 |
| 7 | model-e | 0.517 | [0.428, 0.604] | 6-7 | 3 |
| 8 | model-g | 0.367 | [0.286, 0.456] | 8-8 | 4 |

120 shared questions; rank ranges at 95%, pointwise; higher is better.
"""

Pair = tuple[str, str]


# --------------------------------------------------------------------------- references


def _samples_file(model: str) -> Path:
    (path,) = (RESULTS / model).glob("samples_arith_gen_*.jsonl")
    return path


def harness_verdicts() -> dict[str, dict[str, float]]:
    """Model -> question id -> lm-eval's own ``exact_match``, from the raw lines of its log."""
    out: dict[str, dict[str, float]] = {}
    for folder in sorted(RESULTS.iterdir()):
        lines = _samples_file(folder.name).read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines]
        out[folder.name] = {row["doc"]["id"]: float(row["exact_match"]) for row in rows}
    return out


def harness_headlines() -> dict[str, tuple[float, int]]:
    """Model -> (the headline lm-eval wrote in its results file, the documents it counted)."""
    out = {}
    for folder in sorted(RESULTS.iterdir()):
        (path,) = folder.glob("results_*.json")
        results = json.loads(path.read_text(encoding="utf-8"))
        out[results["model_name"]] = (
            results["results"]["arith_gen"][HEADLINE],
            results["n-samples"]["arith_gen"]["effective"],
        )
    return out


@pytest.fixture(scope="module")
def verdicts() -> tuple[list[str], np.ndarray]:
    """The models (sorted) and the questions-by-models matrix of lm-eval's verdicts."""
    by_model = harness_verdicts()
    models = sorted(by_model)
    ids = sorted(by_model[models[0]])
    assert all(sorted(by_model[m]) == ids for m in models)  # every model answered every one
    return models, np.array([[by_model[m][q] for m in models] for q in ids])


@pytest.fixture(scope="module")
def result() -> RunResult:
    """The eight logs read with lm-eval's own verdicts (rules='harness') and scored."""
    items = itemscore.read_items(RESULTS, format="lm-eval", rules="harness")
    return itemscore.score(items, ["exact_match"], suite_id="arith_gen")


@pytest.fixture(scope="module")
def max_t(result: RunResult) -> Leaderboard:
    return itemscore.leaderboard(result, "exact_match")


@pytest.fixture(scope="module")
def pointwise(result: RunResult) -> Leaderboard:
    return itemscore.leaderboard(result, "exact_match", method="none")


def decided(board: Leaderboard) -> set[Pair]:
    """The pairs the board decided, each as (better, worse)."""
    return {(a, b) for a, worse in board.beats.items() for b in worse}


def pairs_of(models: list[str]) -> list[tuple[int, int]]:
    return list(itertools.combinations(range(len(models)), 2))


def oriented(models: list[str], x: np.ndarray, i: int, j: int) -> Pair:
    """The pair as (better, worse) by value on the questions."""
    return (models[i], models[j]) if x[:, i].mean() > x[:, j].mean() else (models[j], models[i])


def paired_t(x: np.ndarray, i: int, j: int) -> tuple[float, float]:
    """|t| and p of scipy's paired t test; (0, 1) when the two never differ (no test to run)."""
    if np.array_equal(x[:, i], x[:, j]):
        return 0.0, 1.0
    test = scipy.stats.ttest_rel(x[:, i], x[:, j])
    return abs(float(test.statistic)), float(test.pvalue)


def mcnemar_p(x: np.ndarray, i: int, j: int) -> float:
    """The exact McNemar test: a binomial test on the questions one got right and not the other."""
    only_i = int(((x[:, i] == 1) & (x[:, j] == 0)).sum())
    only_j = int(((x[:, i] == 0) & (x[:, j] == 1)).sum())
    return 1.0 if only_i + only_j == 0 else scipy.stats.binomtest(only_i, only_i + only_j).pvalue


def holm(pvalues: dict[Pair, float], alpha: float) -> set[Pair]:
    """The pairs Holm's step-down procedure rejects at family-wise level ``alpha``."""
    ordered = sorted(pvalues, key=pvalues.__getitem__)
    out: set[Pair] = set()
    for k, pair in enumerate(ordered):
        if pvalues[pair] >= alpha / (len(ordered) - k):
            break
        out.add(pair)
    return out


def ranks_by_definition(
    values: dict[str, float], wins: set[Pair]
) -> dict[str, tuple[int, int, int, int]]:
    """Model -> (rank, rank_low, rank_high, tie group), from the definitions in the docs."""
    models = sorted(values, key=lambda m: (-values[m], m))
    k = len(models)
    out = {}
    group, first = 0, None
    for m in models:
        if first is None or (first, m) in wins:
            group, first = group + 1, m
        out[m] = (
            1 + sum(values[o] > values[m] for o in models),
            1 + sum((o, m) in wins for o in models),
            k - sum((m, o) in wins for o in models),
            group,
        )
    return out


def rows_of(board: Leaderboard) -> dict[str, tuple[int, int, int, int]]:
    return {r.model: (r.rank, r.rank_low, r.rank_high, r.tie_group) for r in board.rows}


# --------------------------------------------------------------------------- the tests


def test_values_are_lm_evals_own_headlines(max_t: Leaderboard) -> None:
    """Every model's value is the accuracy lm-eval wrote in its results file, to 1e-12."""
    headlines = harness_headlines()
    assert len(max_t.rows) == len(headlines) == 8
    assert max_t.n_pairs == 120
    assert max_t.n_unpaired == 0
    for row in max_t.rows:
        value, n = headlines[row.model]
        assert row.value == pytest.approx(value, abs=1e-12), row.model
        assert row.n == n == 120
        # The Wilson interval of the model's own share of right answers, by statsmodels.
        low, high = proportion_confint(round(value * n), n, alpha=ALPHA, method="wilson")
        assert (row.ci_low, row.ci_high) == pytest.approx((low, high), abs=1e-12)


def test_pointwise_decisions_are_scipys_paired_t_tests(
    pointwise: Leaderboard, verdicts: tuple[list[str], np.ndarray]
) -> None:
    """method='none' decides exactly the pairs whose paired t test has p < 0.05 (22 of 28).

    On these logs the exact McNemar test at 0.05 decides the same 22 pairs; the rank ranges
    and tie groups follow from the decided pairs by their definitions.
    """
    models, x = verdicts
    pairs = pairs_of(models)
    by_t = {oriented(models, x, i, j) for i, j in pairs if paired_t(x, i, j)[1] < ALPHA}
    by_mcnemar = {oriented(models, x, i, j) for i, j in pairs if mcnemar_p(x, i, j) < ALPHA}
    assert decided(pointwise) == by_t
    assert len(by_t) == 22
    assert by_mcnemar == by_t
    values = dict(zip(models, x.mean(axis=0).tolist()))
    assert rows_of(pointwise) == ranks_by_definition(values, by_t)
    assert pointwise.critical_value == pytest.approx(scipy.stats.t.ppf(0.975, 119), rel=1e-12)


def test_max_t_critical_value_is_the_bootstrap_quantile_recomputed(
    max_t: Leaderboard, verdicts: tuple[list[str], np.ndarray]
) -> None:
    """c is the 95% quantile of max |d* - d| / se* over pairs, computed here resample by resample.

    The resamples are the documented ones (numpy's default_rng(0); per resample, a multinomial
    draw of the 120 questions taken as their distinct rows of verdicts, in order of first
    appearance, each as likely as its questions together); here each resample's questions are
    materialised and every pair's standard error is the sample standard deviation of its
    differences over sqrt(n), as scipy's paired t test has it. The pairs decided are those
    whose |t| exceeds c.
    """
    models, x = verdicts
    g = x.shape[0]
    pairs = pairs_of(models)
    diffs = np.column_stack([x[:, i] - x[:, j] for i, j in pairs])
    d = diffs.mean(axis=0)
    rows = [tuple(row) for row in x.tolist()]
    distinct = list(dict.fromkeys(rows))  # in order of first appearance
    first = np.array([rows.index(row) for row in distinct])
    counts = np.array([rows.count(row) for row in distinct])
    weights = np.random.default_rng(0).multinomial(g, counts / g, size=1000)
    maxima = []
    for w in weights:
        sample = diffs[np.repeat(first, w)]
        se = sample.std(axis=0, ddof=1) / np.sqrt(g)
        spread = se > 0  # a pair whose resampled questions never differ has no t
        maxima.append(np.max(np.abs(sample.mean(axis=0) - d)[spread] / se[spread]))
    critical = float(np.quantile(maxima, 0.95))
    assert max_t.critical_value == pytest.approx(critical, rel=1e-9)
    by_t = {oriented(models, x, i, j) for i, j in pairs if paired_t(x, i, j)[0] > critical}
    assert decided(max_t) == by_t
    values = dict(zip(models, x.mean(axis=0).tolist()))
    assert rows_of(max_t) == ranks_by_definition(values, by_t)


def test_max_t_lies_between_holm_and_pointwise_mcnemar(
    max_t: Leaderboard, pointwise: Leaderboard, verdicts: tuple[list[str], np.ndarray]
) -> None:
    """Max-t decides what Holm-corrected McNemar tests decide, and less than each test alone.

    Max-t uses the correlation of the pairs' statistics, so it is no stricter than Holm's
    correction (on these logs it decides the same 17 pairs), and it controls the error over
    every pair, so it is stricter than deciding each pair alone.
    """
    models, x = verdicts
    pairs = pairs_of(models)
    p = {oriented(models, x, i, j): mcnemar_p(x, i, j) for i, j in pairs}
    by_holm = holm(p, ALPHA)
    by_bonferroni = {pair for pair, value in p.items() if value < ALPHA / len(p)}
    pointwise_mcnemar = {pair for pair, value in p.items() if value < ALPHA}
    assert by_bonferroni <= by_holm <= decided(max_t) <= pointwise_mcnemar
    assert decided(max_t) <= decided(pointwise)
    assert (len(by_bonferroni), len(by_holm), len(decided(max_t))) == (15, 17, 17)
    assert len(pointwise_mcnemar) == len(decided(pointwise)) == 22
    assert max_t.critical_value is not None
    assert pointwise.critical_value is not None
    assert max_t.critical_value > pointwise.critical_value


def test_the_board_and_its_tie_groups(max_t: Leaderboard, pointwise: Leaderboard) -> None:
    """The board of the logs: three tie groups at 95% simultaneously, four pointwise."""
    for board in (max_t, pointwise):
        groups = len({row.tie_group for row in board.rows})
        print(board.to_markdown(digits=3))
        print(f"{groups} tie groups ({board.method})\n")
    assert max_t.to_markdown(digits=3) == MAX_T_BOARD
    assert pointwise.to_markdown(digits=3) == POINTWISE_BOARD
    assert [row.tie_group for row in max_t.rows] == [1, 1, 1, 2, 2, 2, 2, 3]
    assert [row.tie_group for row in pointwise.rows] == [1, 1, 1, 2, 2, 3, 3, 4]


def test_the_docs_show_this_board() -> None:
    """docs/leaderboards.md's "On real logs" shows the board these logs give."""
    page = (Path(__file__).parents[1] / "docs" / "leaderboards.md").read_text(encoding="utf-8")
    assert MAX_T_BOARD in page


def test_the_command_line_ranks_the_logs_the_same(tmp_path: Path, max_t: Leaderboard) -> None:
    """`itemscore score` on the logs folder with rules=harness, then `itemscore leaderboard`."""
    from itemscore.cli import cli

    out = tmp_path / "run"
    args = ["score", str(RESULTS), "--read-option", "rules=harness", "-m", "exact_match"]
    args += ["--out", str(out), "--report", "json", "--quiet"]
    ran = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert ran.exit_code == 0, ran.output
    board = ["leaderboard", str(out / "results.json"), "-m", "exact_match", "--json"]
    ran = CliRunner().invoke(cli, board, catch_exceptions=False)
    assert ran.exit_code == 0, ran.output
    assert json.loads(ran.output) == [row.to_dict() for row in max_t.rows]
