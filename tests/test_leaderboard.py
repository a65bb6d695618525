"""Tests for itemscore.leaderboard: values, ranks, rank ranges, tie groups, coverage."""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import pytest
import scipy.stats

from itemscore import (
    ConfigError,
    ItemResult,
    ItemScore,
    Leaderboard,
    LeaderboardRow,
    Metric,
    MetricContext,
    RunResult,
    aggregate,
    leaderboard,
    register,
    score,
)
from itemscore._leaderboard import decide_pairs, rank_intervals
from itemscore._registry import unregister


def _items(model: str, right: list[bool] | np.ndarray, **extra: Any) -> list[ItemResult]:
    """Items whose exact_match is ``right[i]``."""
    return [
        ItemResult(id=f"q{i}", output="yes" if r else "no", expected="yes", model=model, **extra)
        for i, r in enumerate(list(right))
    ]


def _run(rights: dict[str, list[bool] | np.ndarray], **kwargs: Any) -> RunResult:
    items = [item for model, right in rights.items() for item in _items(model, right)]
    return score(items, ["exact_match", "token_f1", "f1"], suite_id="t", **kwargs)


def _share(k: int, n: int = 10) -> list[bool]:
    return [True] * k + [False] * (n - k)


# --------------------------------------------------------------------------- ranks


def test_equal_values_share_the_smallest_rank() -> None:
    """Ranks by value: 0.8, 0.5, 0.5, 0.2 rank 1, 2, 2, 4; rows best first."""
    run = _run({"d": _share(2), "b": _share(5), "a": _share(8), "c": _share(5)})
    board = leaderboard(run, "exact_match")
    assert [(r.model, r.rank) for r in board.rows] == [("a", 1), ("b", 2), ("c", 2), ("d", 4)]
    assert [r.value for r in board.rows] == [0.8, 0.5, 0.5, 0.2]


def test_rank_intervals_walk_tie_groups_from_each_groups_first_model() -> None:
    """rank_low/rank_high count decided pairs; a group opens when its first model is beaten."""
    scores = np.array([0.1, 0.9, 0.5, 0.4, 0.3])
    better = np.zeros((5, 5), dtype=bool)
    better[1, [0, 2, 3, 4]] = True  # the best beats everyone
    better[2, 0] = True  # 0.5 beats 0.1, and nothing else is decided
    order, rank, low, high, group = rank_intervals(scores, better)
    assert order.tolist() == [1, 2, 3, 4, 0]
    assert rank.tolist() == [5, 1, 2, 3, 4]
    assert low.tolist() == [3, 1, 2, 2, 2]
    assert high.tolist() == [5, 1, 4, 5, 5]
    # 0.4 and 0.3 are undecided against 0.5 (the group's first): one group; 0.1 is beaten by it.
    assert group.tolist() == [3, 1, 2, 2, 2]


def test_lower_is_better_metric_ranks_ascending() -> None:
    """A lower-is-better mean ranks its smallest value first; decisions follow that sign."""

    class Length(Metric):
        metric_id = "lb_length"
        description = "Output length."
        higher_is_better = False
        aggregation = "mean"

        def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore | None:
            return self.ok(float(len(item.output or "")))

    register(Length)
    try:
        items = [
            ItemResult(id=f"q{i}", output="x" * (i % 3 + n), model=m)
            for m, n in (("long", 20), ("short", 1), ("mid", 10))
            for i in range(30)
        ]
        board = leaderboard(score(items, ["lb_length"], suite_id="t"), "lb_length")
    finally:
        unregister("lb_length")
    assert not board.higher_is_better
    assert [r.model for r in board.rows] == ["short", "mid", "long"]
    assert [(r.rank_low, r.rank_high, r.tie_group) for r in board.rows] == [
        (1, 1, 1),
        (2, 2, 2),
        (3, 3, 3),
    ]
    assert board.beats["short"] == ("long", "mid")


# --------------------------------------------------------------------------- values


def test_values_and_intervals_are_each_models_own_on_all_questions() -> None:
    """With every question shared, values and Wilson intervals equal the run's measurements."""
    rng = np.random.default_rng(4)
    run = _run({m: rng.random(60) < p for m, p in (("a", 0.3), ("b", 0.6), ("c", 0.7))})
    board = leaderboard(run, "exact_match", confidence=0.9)
    assert board.n_pairs == 60
    assert board.n_unpaired == 0
    for row in board.rows:
        k = round(row.value * 60)
        own = aggregate.ratio(k, 60, "wilson", 0.9)
        assert (row.value, row.ci_low, row.ci_high, row.n) == (own.value, own.low, own.high, 60)
        assert row.value == run.by_model[row.model]["t.exact_match"].value


def test_mean_metric_interval_is_t() -> None:
    """A mean metric's interval is the Student t interval of its per-question values."""
    run = _run({"a": _share(3), "b": _share(6)})
    board = leaderboard(run, "token_f1")
    for row in board.rows:
        m = run.by_model[row.model]["t.token_f1"]
        assert row.value == pytest.approx(m.value, abs=1e-12)
        x = np.array([1.0] * round(row.value * 10) + [0.0] * (10 - round(row.value * 10)))
        low, high = scipy.stats.t.interval(0.95, 9, x.mean(), scipy.stats.sem(x))
        assert (row.ci_low, row.ci_high) == pytest.approx((max(low, 0.0), min(high, 1.0)))


def test_models_pair_on_questions_every_model_scored() -> None:
    """A question one model skipped (no answer key) leaves the leaderboard for every model."""
    items = _items("a", _share(6)) + _items("b", _share(4)) + _items("c", _share(5))
    items[10 + 2] = attrs.evolve(items[12], expected=None)  # b's q2: skipped
    items = [*items, ItemResult(id="extra", output="yes", expected="yes", model="a")]
    board = leaderboard(score(items, ["exact_match"], suite_id="t"), "exact_match")
    assert board.n_pairs == 9
    assert board.n_unpaired == 2
    values = {r.model: r.value for r in board.rows}
    assert values == {"a": 5 / 9, "b": 3 / 9, "c": 4 / 9}


def test_a_list_of_runs_ranks_as_one_run() -> None:
    """Runs of one model each give the same board as one run of all the models."""
    rng = np.random.default_rng(5)
    rights = {m: rng.random(80) < p for m, p in (("a", 0.4), ("b", 0.55), ("c", 0.75))}
    together = leaderboard(_run(rights), "exact_match")
    apart = leaderboard([_run({m: r}) for m, r in rights.items()], "exact_match")
    assert apart.rows == together.rows
    assert apart.critical_value == together.critical_value


def test_attempts_are_reduced_by_the_runs_first_reducer() -> None:
    """With attempts, a model's value is its measurement under the run's first reducer."""
    rng = np.random.default_rng(6)
    items = [
        ItemResult(
            id=f"q{q}", output="yes" if rng.random() < p else "no", expected="yes",
            model=m, attempt=j,
        )
        for m, p in (("a", 0.3), ("b", 0.5))
        for q in range(40)
        for j in range(3)
    ]  # fmt: skip
    run = score(items, ["exact_match"], suite_id="t", reduce=["max", "mean"])
    board = leaderboard(run, "exact_match")
    assert board.n_pairs == 40
    for row in board.rows:
        assert row.value == pytest.approx(run.by_model[row.model]["t.exact_match"].value)


def test_clusters_give_cluster_robust_intervals() -> None:
    """Questions with clusters: each interval is cluster_ratio's, and the board counts them."""
    rng = np.random.default_rng(7)
    clusters = [f"c{i // 5}" for i in range(50)]
    items = [item for m, p in (("a", 0.4), ("b", 0.7)) for item in _items(m, rng.random(50) < p)]
    items = [attrs.evolve(item, cluster=clusters[i % 50]) for i, item in enumerate(items)]
    board = leaderboard(score(items, ["exact_match"], suite_id="t"), "exact_match")
    assert board.n_clusters == 10
    right = {m: np.array([i.output == "yes" for i in items if i.model == m]) for m in "ab"}
    for row in board.rows:
        own = aggregate.cluster_ratio(right[row.model], clusters)
        assert (row.ci_low, row.ci_high) == (own.low, own.high)


# --------------------------------------------------------------------------- deciding pairs


def _reference_max_t(
    x: np.ndarray, codes: np.ndarray, seed: int, n_resamples: int, confidence: float
) -> float:
    """The max-t critical value, one replicate and one pair at a time, from the definition."""
    g = int(codes.max()) + 1
    k = x.shape[1]
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(g, np.full(g, 1.0 / g), size=n_resamples)

    def stats(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per pair (i < j): the difference of means and its cluster-robust variance."""
        item_w = w[codes].astype(float)
        diffs, variances = [], []
        for i in range(k):
            for j in range(i + 1, k):
                dq = x[:, i] - x[:, j]
                n = item_w.sum()
                d = (item_w * dq).sum() / n
                cluster_sums = np.zeros(g)
                np.add.at(cluster_sums, codes, dq - d)
                var = g / (g - 1) * (w * cluster_sums**2).sum() / n**2
                diffs.append(d)
                variances.append(var)
        return np.array(diffs), np.array(variances)

    d, var = stats(np.ones(g, dtype=int))
    keep = var > 1e-20
    maxima = []
    for w in draws:
        d_star, var_star = stats(w)
        ok = keep & (var_star > 1e-20)
        t = np.abs(d_star - d)[ok] / np.sqrt(var_star[ok])
        maxima.append(t.max() if t.size else 0.0)
    return float(np.quantile(maxima, confidence))


@pytest.mark.parametrize("with_clusters", [False, True], ids=["questions", "clusters"])
def test_max_t_critical_value_equals_a_loop_over_replicates(with_clusters: bool) -> None:
    """The vectorised bootstrap equals the replicate-by-replicate definition to 1e-9."""
    rng = np.random.default_rng(8)
    x = (rng.random((60, 4)) < [0.3, 0.5, 0.5, 0.7]).astype(float)
    x[:, 3] = rng.random(60)  # one model with continuous values
    clusters = [f"c{i // 3}" for i in range(60)] if with_clusters else None
    codes = np.arange(60) // 3 if with_clusters else np.arange(60)
    _, critical = decide_pairs(x, clusters, confidence=0.9, method="max-t", seed=3, n_resamples=150)
    assert critical == pytest.approx(_reference_max_t(x, codes, 3, 150, 0.9), abs=1e-9)


def test_questions_with_equal_verdicts_are_drawn_as_one_pattern_with_the_same_law() -> None:
    """Drawing the distinct rows of verdicts gives the law of drawing questions.

    Right-or-wrong verdicts have few distinct rows; drawing those rows, each as likely as its
    questions together, is the multinomial over the questions added up: the same critical value
    as drawing question by question, up to Monte Carlo error (20,000 resamples each).
    """
    rng = np.random.default_rng(5)
    x = (rng.random((400, 3)) < [0.4, 0.5, 0.55]).astype(float)
    assert len({tuple(row) for row in x.tolist()}) <= 8
    for seed in (1, 2):
        by_question = _reference_max_t(x, np.arange(400), seed, 20_000, 0.9)
        _, by_pattern = decide_pairs(
            x, None, confidence=0.9, method="max-t", seed=seed + 10, n_resamples=20_000
        )
        assert by_pattern == pytest.approx(by_question, abs=0.05)


def test_none_decides_each_pair_by_its_paired_t_test() -> None:
    """``method="none"`` decides a pair exactly when scipy's paired t test rejects."""
    rng = np.random.default_rng(9)
    x = rng.normal([0.0, 0.1, 0.15, 0.3, 0.32], 1.0, size=(150, 5))
    decided, critical = decide_pairs(x, None, confidence=0.95, method="none", seed=0, n_resamples=1)
    assert critical == pytest.approx(scipy.stats.t.ppf(0.975, 149))
    for i in range(5):
        for j in range(5):
            if i != j:
                p = scipy.stats.ttest_rel(x[:, i], x[:, j]).pvalue
                assert bool(decided[i, j]) == (p < 0.05)
                if decided[i, j]:
                    assert decided[i, j] == np.sign(x[:, i].mean() - x[:, j].mean())


def test_identical_and_constantly_different_models() -> None:
    """Identical models are never decided; a constant difference is a sign test over units."""
    x = np.zeros((12, 3))
    x[:, 1] = 1.0  # right on every question: beats the others on all 12
    decided, _ = decide_pairs(x, None, confidence=0.95, method="max-t", seed=0, n_resamples=50)
    assert decided.tolist() == [[0, -1, 0], [1, 0, 1], [0, -1, 0]]
    decided, _ = decide_pairs(x[:4], None, confidence=0.95, method="max-t", seed=0, n_resamples=50)
    assert not decided.any()  # 2 / 2^4 = 0.125: four questions prove nothing


def _simulate(
    n_sims: int, method: str, *, n: int = 200, n_resamples: int = 200
) -> tuple[float, float]:
    """Share of simulations where some true rank falls outside its range; mean range width.

    Five models, three truly equal (0.6 / 0.6 / 0.6, then 0.5 and 0.75); questions differ in
    difficulty, so the models' answers are correlated as on a real benchmark.
    """
    rng = np.random.default_rng(2024)
    ability = np.array([0.4, 0.4, 0.4, 0.0, 1.1])
    true_rank = np.array([2, 2, 2, 5, 1])
    misses, width = 0, 0.0
    for sim in range(n_sims):
        difficulty = rng.normal(0.0, 1.0, size=n)
        logit = ability[None, :] - difficulty[:, None]
        x = (rng.random((n, 5)) < 1.0 / (1.0 + np.exp(-logit))).astype(float)
        decided, _ = decide_pairs(
            x, None, confidence=0.95, method=method, seed=sim, n_resamples=n_resamples
        )
        _, _, low, high, _ = rank_intervals(x.mean(axis=0), decided > 0)
        misses += bool(np.any((true_rank < low) | (true_rank > high)))
        width += float(np.mean(high - low)) / n_sims
    return misses / n_sims, width


@pytest.mark.slow
def test_max_t_rank_ranges_hold_every_true_rank_at_the_stated_confidence() -> None:
    """Family-wise: some true rank outside its range in at most 5% of simulations (max-t).

    ``method="none"`` is pointwise: on the same data its ranges miss more often than 5%.
    """
    fwer, width = _simulate(300, "max-t")
    assert fwer <= 0.05
    assert width < 3.0  # and the ranges still say something (the trivial range 1-5 is 4 wide)
    pointwise, _ = _simulate(300, "none")
    assert pointwise > 0.05
    assert pointwise > fwer


# --------------------------------------------------------------------------- the record


def test_board_fields_frame_and_markdown() -> None:
    """The board says how it was made; to_frame and to_markdown show every row."""
    run = _run({"a": _share(9, 40), "b": _share(20, 40), "c": _share(30, 40)})
    board = leaderboard(run, "exact_match", seed=3, n_resamples=200)
    assert isinstance(board, Leaderboard)
    assert all(isinstance(r, LeaderboardRow) for r in board.rows)
    assert (board.method, board.confidence, board.n_pairs, board.metric) == (
        "max-t",
        0.95,
        40,
        "exact_match",
    )
    assert (board.n_resamples, board.seed) == (200, 3)
    assert board.critical_value is not None
    assert board.critical_value > 1.96
    frame = board.to_frame()
    assert list(frame.columns) == [f.name for f in attrs.fields(LeaderboardRow)]
    assert frame["model"].tolist() == ["c", "b", "a"]
    text = board.to_markdown()
    assert text.splitlines()[0].startswith("| Rank | Model | exact_match | 95% CI")
    assert "| 1 | c | 0.7500 | [" in text
    assert "(max-t)" in text
    again = leaderboard(run, "exact_match", seed=3, n_resamples=200)
    assert again == board  # seeded: the same board
    none = leaderboard(run, "exact_match", method="none")
    assert none.n_resamples == 0
    assert "pointwise" in none.to_markdown()


def test_one_model_is_a_board_of_one_row() -> None:
    """One model: rank 1 of 1, no pair to decide."""
    board = leaderboard([_run({"solo": _share(5)})], "exact_match")
    assert [(r.model, r.rank, r.rank_low, r.rank_high, r.tie_group) for r in board.rows] == [
        ("solo", 1, 1, 1, 1)
    ]
    assert board.critical_value is None


# --------------------------------------------------------------------------- errors


@pytest.fixture
def two() -> RunResult:
    return _run({"a": _share(3), "b": _share(6)})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"method": "maxt"}, r"`method` \('maxt'\) must be one of 'max-t', 'none'\. Did you mean"),
        ({"confidence": 1.5}, r"`confidence` \(1\.5\)"),
        ({"n_resamples": 0}, r"`n_resamples`"),
    ],
    ids=["method", "confidence", "n_resamples"],
)
def test_bad_options_are_named(two: RunResult, kwargs: dict[str, Any], message: str) -> None:
    """A bad option is an error naming it and the allowed values."""
    with pytest.raises(ConfigError, match=message):
        leaderboard(two, "exact_match", **kwargs)


def test_unknown_label_suggests_the_close_one(two: RunResult) -> None:
    """A label the run does not have lists its labels and suggests the close one."""
    with pytest.raises(ConfigError, match=r"no metric labelled 'exact_mach'.*Did you mean"):
        leaderboard(two, "exact_mach")


def test_a_metric_with_its_own_aggregate_is_refused(two: RunResult) -> None:
    """f1 is not a mean over questions: the error says so instead of ranking a wrong number."""
    with pytest.raises(ConfigError, match=r"'f1' .* not a mean over questions"):
        leaderboard(two, "f1")


def test_a_model_in_two_runs_is_refused(two: RunResult) -> None:
    """Each model once: the same name in two runs names both places."""
    with pytest.raises(ConfigError, match=r"'a' appears in `results\[0\]` and `results\[1\]`"):
        leaderboard([two, _run({"a": _share(4)})], "exact_match")


def test_a_run_without_model_names_is_refused() -> None:
    """Rows need names: a run whose items name no model is an error saying how to fix it."""
    run = score([ItemResult(id="q", output="yes", expected="yes")], ["exact_match"], suite_id="t")
    with pytest.raises(ConfigError, match=r"names no model.*role `model`"):
        leaderboard(run, "exact_match")


@pytest.mark.parametrize("results", [[], "results.json", [None]], ids=["empty", "path", "none"])
def test_results_must_be_runs(results: Any) -> None:
    """An empty list, a path or something else is an error saying what to pass."""
    with pytest.raises(ConfigError, match=r"RunResult"):
        leaderboard(results, "exact_match")


def test_no_shared_question_is_an_error() -> None:
    """Models scored on different questions share nothing to rank on."""
    a = _items("a", _share(3))
    b = [attrs.evolve(i, id=f"other{n}") for n, i in enumerate(_items("b", _share(3)))]
    with pytest.raises(ConfigError, match=r"No question was scored .* by every model"):
        leaderboard(score(a + b, ["exact_match"], suite_id="t"), "exact_match")


def test_different_questions_under_one_id_are_refused() -> None:
    """Items with one id but different answer keys are not the same question."""
    a = _items("a", _share(3))
    b = [attrs.evolve(i, expected="other") for i in _items("b", _share(3))]
    run = score(a + b, ["exact_match"], suite_id="t")
    with pytest.raises(ConfigError, match=r"different input or answer key"):
        leaderboard(run, "exact_match")
    assert leaderboard(run, "exact_match", allow_different_inputs=True).n_pairs == 10


def test_exported() -> None:
    """The public names are exported from itemscore."""
    import itemscore

    for name in ("leaderboard", "Leaderboard", "LeaderboardRow"):
        assert name in itemscore.__all__


def test_markdown_keeps_a_hostile_model_name_as_text() -> None:
    """A model name holding HTML, a link or a pipe is shown, never rendered or split."""
    from markdown_it import MarkdownIt

    hostile = "m</td><img src=x onerror=alert(1)>[x](http://e)|y\\"
    run = _run({hostile: _share(30, 40), "b": _share(10, 40)})
    text = leaderboard(run, "exact_match", n_resamples=50).to_markdown()
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    kinds = {t.type for t in tokens} | {c.type for t in tokens for c in t.children or []}
    assert not kinds & {"html_inline", "html_block", "image", "link_open"}
    shown = ["".join(c.content for c in t.children or []) for t in tokens if t.type == "inline"]
    assert hostile in shown
    assert sum(1 for t in tokens if t.type == "td_open") == 2 * 6
