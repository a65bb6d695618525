"""Reducers: pass@k as the Codex paper and inspect_ai compute it, the other rules, the registry."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

import itemscore
from itemscore import ItemResult, hookimpl, score
from itemscore._exceptions import ConfigError, ItemscoreError
from itemscore._reducers import (
    Attempts,
    check_reduce,
    pass_at_k,
    pass_power_k,
    reduce_at_least,
    reduce_maj_at,
    reduce_majority,
    reduce_max,
    reduce_mean,
    reduce_min,
    reducers,
    resolve_reducer,
)


def codex_pass_at_k(n: int, c: int, k: int) -> float:
    """The estimator exactly as printed in Chen et al. (2021), fig. 3."""
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def attempts_of(
    rows: list[list[bool]],
    values: list[list[float]] | None = None,
    answers: list[list[int]] | None = None,
    binary: bool = True,
) -> Attempts:
    """Attempts from per-question lists (ok flags, values, answer codes)."""
    sizes = [len(r) for r in rows]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    ok = np.array([x for r in rows for x in r], dtype=bool)
    flat_values = (
        ok.astype(float) if values is None else np.array([v for r in values for v in r], float)
    )
    codes = np.array([a for r in (answers or [[0] * s for s in sizes]) for a in r], np.int64)
    return Attempts(offsets, ok, flat_values, binary, lambda: codes)


# -- pass@k and pass^k --------------------------------------------------------------------------


def test_pass_at_k_equals_the_codex_estimator_on_a_grid() -> None:
    """pass@k = 1 - C(n-c, k)/C(n, k) as the Codex paper computes it, to 1e-12, n up to 40."""
    grid = [(n, c, k) for n in range(1, 41) for c in range(n + 1) for k in range(1, n + 1)]
    n = np.array([g[0] for g in grid], dtype=np.int64)
    c = np.array([g[1] for g in grid], dtype=np.int64)
    for k in sorted({g[2] for g in grid}):
        pick = np.array([g[2] == k for g in grid])
        got = pass_at_k(n[pick], c[pick], k)
        want = [codex_pass_at_k(int(a), int(b), k) for a, b in zip(n[pick], c[pick])]
        assert np.max(np.abs(got - np.array(want))) <= 1e-12
        exact = [
            1 - math.comb(int(a) - int(b), k) / math.comb(int(a), k)
            for a, b in zip(n[pick], c[pick])
        ]
        assert np.max(np.abs(got - np.array(exact))) <= 1e-12


def test_pass_power_k_is_the_share_of_k_draws_all_right() -> None:
    """pass^k = C(c, k)/C(n, k) (draws without replacement), to 1e-12 on a grid."""
    for n in range(1, 31):
        for k in range(1, n + 1):
            c = np.arange(n + 1, dtype=np.int64)
            got = pass_power_k(np.full(n + 1, n, dtype=np.int64), c, k)
            want = np.array([math.comb(int(x), k) / math.comb(n, k) for x in c])
            assert np.max(np.abs(got - want)) <= 1e-12


def _inspect_scores(values: list[float]) -> list[Any]:
    from inspect_ai.scorer import Score

    return [Score(value=v) for v in values]


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_pass_at_and_pass_k_equal_inspect_ais_reducers(k: int) -> None:
    """On the same attempts, itemscore's pass@k and pass^k equal inspect_ai's pass_at and pass_k."""
    from inspect_ai.scorer import pass_at, pass_k

    rng = np.random.default_rng(k)
    rows = [list(rng.random(int(rng.integers(k, 12))) < rng.random()) for _ in range(200)]
    attempts = attempts_of(rows)
    mine_at = resolve_reducer(f"pass@{k}")(attempts)
    mine_power = resolve_reducer(f"pass^{k}")(attempts)
    theirs_at = [pass_at(k)(_inspect_scores([float(x) for x in r])).value for r in rows]
    theirs_power = [pass_k(k)(_inspect_scores([float(x) for x in r])).value for r in rows]
    np.testing.assert_allclose(mine_at, theirs_at, rtol=0, atol=1e-12)
    np.testing.assert_allclose(mine_power, theirs_power, rtol=0, atol=1e-12)


def test_a_run_with_pass_at_k_gives_the_mean_of_the_codex_estimator_over_questions() -> None:
    """The measurement of pass@3 is the mean over questions of each question's pass@3."""
    rng = np.random.default_rng(7)
    items, want = [], []
    for q in range(40):
        n = int(rng.integers(3, 9))
        right = rng.random(n) < rng.random()
        want.append(codex_pass_at_k(n, int(right.sum()), 3))
        items += [
            ItemResult(id=f"q{q}", output="yes" if r else "no", expected="yes", attempt=j)
            for j, r in enumerate(right)
        ]
    result = score(items, ["exact_match"], reduce=["mean", "pass@3"])
    m = result.measurements["default.exact_match[pass@3]"]
    assert m.value == pytest.approx(float(np.mean(want)), abs=1e-12)
    assert m.n == 40
    assert m.extra["reducer[pass@3]"] == 1.0


def test_a_question_with_fewer_than_k_attempts_is_an_error_for_that_reducer_only() -> None:
    """pass@5 on a question with 3 scored attempts: an error saying so; mean still scores it."""
    items = [ItemResult(id="a", output="x", expected="x", attempt=j) for j in range(5)]
    items += [ItemResult(id="b", output="x", expected="x", attempt=j) for j in range(3)]
    result = score(items, ["exact_match"], reduce=["mean", "pass@5", "maj@5", "at_least:5"])
    for name in ("pass@5", "maj@5", "at_least:5"):
        m = result.measurements[f"default.exact_match[{name}]"]
        assert (m.n, m.counts["error"]) == (1, 1)
    assert result.measurements["default.exact_match"].n == 2
    from itemscore.engine._questions import LabelAttempts, Questions

    table = result.table
    reduced, _ = LabelAttempts.of(Questions.of(table), table, "exact_match", binary=True).reduce(
        resolve_reducer("pass@5")
    )
    assert reduced.field("reason").to_pylist() == [
        None,
        "pass@5 needs at least 5 scored attempts; this question has 3",
    ]


# -- the other reducers -------------------------------------------------------------------------


def test_mean_max_min_at_least_on_right_and_wrong_attempts() -> None:
    """mean: share right; max: any right; min: all right; at_least:2: two or more right."""
    rows = [[True, False, True], [False, False], [True], [True, True, True, False]]
    attempts = attempts_of(rows)
    assert reduce_mean(attempts).tolist() == [2 / 3, 0.0, 1.0, 0.75]
    picked_max = reduce_max(attempts)
    picked_min = reduce_min(attempts)
    assert attempts.ok[picked_max].tolist() == [True, False, True, True]
    assert attempts.ok[picked_min].tolist() == [False, False, True, False]
    assert picked_max.tolist() == [0, 3, 5, 6]  # the first attempt with the best credit
    assert reduce_at_least(attempts, 2).tolist() == [1.0, 0.0, 0.0, 1.0]


def test_max_and_min_of_partial_credit_pick_the_best_and_worst_value() -> None:
    """For a value metric, max and min pick the attempt with the highest and lowest value."""
    attempts = attempts_of(
        [[True, True, True], [True, True]], values=[[0.2, 0.9, 0.9], [0.5, 0.1]], binary=False
    )
    assert reduce_max(attempts).tolist() == [1, 3]
    assert reduce_min(attempts).tolist() == [0, 4]
    assert reduce_mean(attempts).tolist() == pytest.approx([2.0 / 3, 0.3])


def _counter_majority(answers: list[int]) -> int:
    """The reference rule: collections.Counter.most_common's first (ties: first seen)."""
    winner = Counter(answers).most_common(1)[0][0]
    return answers.index(winner)


def test_majority_picks_the_most_frequent_answer_and_ties_go_to_the_first_given() -> None:
    """On random answers, majority picks what Counter.most_common picks (ties: first seen)."""
    rng = np.random.default_rng(3)
    answers = [list(rng.integers(0, 4, int(rng.integers(1, 9)))) for _ in range(500)]
    attempts = attempts_of([[True] * len(a) for a in answers], answers=answers)
    picked = reduce_majority(attempts)
    starts = attempts.offsets[:-1]
    assert (picked - starts).tolist() == [_counter_majority([int(x) for x in a]) for a in answers]
    heads = reduce_maj_at(attempts, 3)
    want = [_counter_majority([int(x) for x in a[:3]]) for a in answers]
    assert (heads - starts).tolist() == want


@pytest.mark.parametrize("widest", [8, 40])
def test_majority_counts_and_sorting_agree_on_every_question(widest: int) -> None:
    """Few attempts per question are counted pairwise, many sorted: the same rule both ways."""
    rng = np.random.default_rng(widest)
    answers = [list(rng.integers(0, 5, int(rng.integers(1, widest + 1)))) for _ in range(300)]
    answers[0] = list(rng.integers(0, 5, widest))
    attempts = attempts_of([[True] * len(a) for a in answers], answers=answers)
    starts = attempts.offsets[:-1]
    want = [_counter_majority([int(x) for x in a]) for a in answers]
    assert (reduce_majority(attempts) - starts).tolist() == want


def test_majority_votes_on_normalised_answers_and_scores_the_winner() -> None:
    """'Paris', 'paris.' and 'Lyon': Paris wins (normalised as exact_match does), and is right."""
    outputs = ["Lyon", "Paris", "paris.", "Lyon ", "PARIS"]
    items = [
        ItemResult(id="q", output=o, expected="Paris", attempt=j) for j, o in enumerate(outputs)
    ]
    result = score(items, ["exact_match"], reduce=["majority", "maj@4", "min"])
    assert result.measurements["default.exact_match"].value == 1.0
    # First four: Lyon twice, Paris twice: the tie goes to Lyon, given first.
    assert result.measurements["default.exact_match[maj@4]"].value == 0.0
    assert result.measurements["default.exact_match[min]"].value == 0.0


def test_majority_votes_on_the_extracted_answer_with_the_extract_option() -> None:
    """With extract, the answers voted on are the extracted ones, not the whole outputs."""
    outputs = ["I think 41.", "So it is 42.", "Hence 42", "Maybe 41"]
    items = [ItemResult(id="q", output=o, expected="42", attempt=j) for j, o in enumerate(outputs)]
    result = score(items, [{"name": "exact_match", "extract": "last_number"}], reduce="majority")
    # 41 twice and 42 twice: the tie goes to 41, given first.
    assert result.measurements["default.exact_match"].value == 0.0
    # A third 42 wins; voting on the whole outputs, all different, the first (41) would.
    items.append(ItemResult(id="q", output="42!", expected="42", attempt=9))
    result = score(items, [{"name": "exact_match", "extract": "last_number"}], reduce="majority")
    assert result.measurements["default.exact_match"].value == 1.0


def test_pass_at_k_on_a_partial_credit_metric_is_an_error_naming_the_fix() -> None:
    """pass@2 on token_f1 (no right or wrong): that measurement is an error saying what to use."""
    items = [ItemResult(id="q", output="a b", expected="a", attempt=j) for j in range(3)]
    result = score(items, ["token_f1"], reduce=["mean", "pass@2"])
    error = result.measurements["default.token_f1[pass@2]"].error
    assert error is not None
    assert "partial credit" in error
    assert "'max'" in error
    assert result.measurements["default.token_f1"].error is None


# -- names and settings ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("asked", "message"),
    [
        ("pss@5", "Did you mean 'pass@5'?"),
        ("majorty", "Did you mean 'majority'?"),
        ("pass@K", "give K a number"),
        ("pass@0", "at least 1"),
        ("mean,mean", "twice"),
        ("", "names no reducer"),
        (["mean", 3], "a reducer is a name"),
        ({"mean"}, "must be ordered"),
        (5, "must be a reducer name or a list"),
    ],
)
def test_bad_reducers_are_config_errors_before_anything_is_scored(asked: Any, message: str) -> None:
    """Unknown names get a did-you-mean; K must be a number of at least 1; no repeats."""
    with pytest.raises(ConfigError, match=message):
        check_reduce(asked)
    with pytest.raises(ConfigError, match=message):
        score([ItemResult(id="1", output="x")], ["answered_rate"], reduce=asked)


def test_reduce_is_one_setting_saved_and_read_back() -> None:
    """reduce= on score, in a plan and in RunSettings is one tuple; results.json keeps it."""
    items = [ItemResult(id="q", output="x", expected="x", attempt=j) for j in range(2)]
    planned = itemscore.plan(["exact_match"], reduce="mean,pass@2")
    assert planned.reduce == ("mean", "pass@2")
    result = score(items, planned)
    assert result.settings.reduce == ("mean", "pass@2")
    assert result.settings.to_dict()["reduce"] == ["mean", "pass@2"]
    again = itemscore.RunResult.from_dict(result.to_dict())
    assert again.settings == result.settings
    with pytest.raises(ConfigError, match="given twice"):
        score(items, planned, reduce="max")
    assert score(items, planned, reduce=["mean", "pass@2"]).settings.reduce == ("mean", "pass@2")


def test_saved_results_load_without_the_plugin_whose_reducer_they_used() -> None:
    """A results document naming a reducer no plugin here adds still loads; rescoring says."""
    items = [ItemResult(id="q", output="x", expected="x", attempt=j) for j in range(2)]
    data = score(items, ["exact_match"]).to_dict()
    data["settings"]["reduce"] = ["mean", "best_of@2"]
    loaded = itemscore.RunResult.from_dict(data)
    assert loaded.settings.reduce == ("mean", "best_of@2")
    with pytest.raises(ConfigError, match="best_of@2"):
        itemscore.rescore(loaded)


# -- plugins ------------------------------------------------------------------------------------


class BestOf:
    """A plugin reducer with a number: the last of the first k attempts stands for the question."""

    @hookimpl
    def itemscore_reducers(self) -> Mapping[str, Any]:
        def last_of(attempts: Attempts, k: int) -> Any:
            return attempts.offsets[:-1] + np.minimum(attempts.sizes, k) - 1

        def share_right(attempts: Attempts) -> Any:
            return attempts.successes / attempts.sizes

        return {"last_of@K": last_of, "share_right": share_right}


@pytest.mark.usefixtures("plugins")
def test_a_plugin_reducer_is_used_by_name_like_a_built_in_one() -> None:
    """A reducer from itemscore_reducers is found by its name, with its number, in a run."""
    itemscore.plugin_manager().register(BestOf(), name="best-of")
    outputs = ["no", "yes", "no", "yes"]
    items = [ItemResult(id="q", output=o, expected="yes", attempt=j) for j, o in enumerate(outputs)]
    result = score(items, ["exact_match"], reduce=["share_right", "last_of@2", "last_of@3"])
    assert result.measurements["default.exact_match"].value == 0.5
    assert result.measurements["default.exact_match[last_of@2]"].value == 1.0
    assert result.measurements["default.exact_match[last_of@3]"].value == 0.0
    assert resolve_reducer("last_of@2").plugin == "best-of"
    with pytest.raises(ConfigError, match="Did you mean 'last_of@2'"):
        check_reduce("lastof@2")


@pytest.mark.usefixtures("plugins")
def test_a_plugin_may_not_take_a_built_in_name_or_an_odd_one() -> None:
    """A plugin reducer named like a built-in one, or with a bad name, is an error naming it."""

    class Clash:
        @hookimpl
        def itemscore_reducers(self) -> Mapping[str, Any]:
            return {"pass@K": lambda attempts, k: attempts.sizes * 0.0}

    itemscore.plugin_manager().register(Clash(), name="clash")
    with pytest.raises(
        ItemscoreError, match="'clash' adds the reducer 'pass@K', which is built in"
    ):
        reducers()
    # A run of built-in reducers only does not ask the plugins: it is not broken by one.
    assert check_reduce(["mean", "pass@2"]) == ("mean", "pass@2")
    itemscore.plugin_manager().unregister(name="clash")

    class Odd:
        @hookimpl
        def itemscore_reducers(self) -> Mapping[str, Any]:
            return {"best of/2": lambda attempts: attempts.sizes * 0.0}

    itemscore.plugin_manager().register(Odd(), name="odd")
    with pytest.raises(ItemscoreError, match="'odd' adds the reducer 'best of/2'"):
        check_reduce("best_of@2")


@pytest.mark.usefixtures("plugins")
@pytest.mark.parametrize(
    ("returned", "message"),
    [
        (lambda a: np.zeros(a.n_questions + 1), "one number per question"),
        (lambda a: np.full(a.n_questions, 99, dtype=np.int64), "picked the attempt 99"),
        (lambda a: np.array(["x"] * a.n_questions), "must return floats"),
        (lambda a: np.full(a.n_questions, np.inf), "infinite"),
    ],
)
def test_a_reducer_that_returns_junk_spoils_its_measurement_only(
    returned: Any, message: str
) -> None:
    """A reducer's bad return is that measurement's error; the others are made as usual."""

    class Junk:
        @hookimpl
        def itemscore_reducers(self) -> Mapping[str, Any]:
            return {"junk": returned}

    itemscore.plugin_manager().register(Junk(), name="junk")
    items = [ItemResult(id=q, output="x", expected="x", attempt=j) for q in "ab" for j in range(2)]
    result = score(items, ["exact_match"], reduce=["mean", "junk"])
    error = result.measurements["default.exact_match[junk]"].error
    assert error is not None
    assert message in error
    assert result.measurements["default.exact_match"].value == 1.0
