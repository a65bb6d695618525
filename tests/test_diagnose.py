"""Item diagnostics and signal-to-noise: injected label errors, SNR by its definition."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from itemscore import ConfigError, ItemResult, RunResult, score


def synthetic(seed: int, n_items: int = 500, n_models: int = 20, n_errors: int = 10) -> tuple[
    list[ItemResult], set[str]
]:  # fmt: skip
    """A short-answer benchmark: a Rasch model of 20 models; 10 keys swapped for a wrong one."""
    rng = np.random.default_rng(seed)
    choices = 10
    ability = rng.normal(0.5, 1.0, n_models)
    difficulty = rng.normal(0.0, 1.0, n_items)
    keys = rng.integers(0, choices, n_items)
    wrong = rng.choice(n_items, n_errors, replace=False)
    shown = keys.copy()
    shown[wrong] = (keys[wrong] + rng.integers(1, choices, n_errors)) % choices
    items = []
    for m in range(n_models):
        right = rng.random(n_items) < 1 / (1 + np.exp(-(ability[m] - difficulty)))
        answers = np.where(right, keys, (keys + rng.integers(1, choices, n_items)) % choices)
        items += [
            ItemResult(
                id=f"q{j}",
                output=f"answer {answers[j]}",
                expected=f"answer {shown[j]}",
                model=f"m{m}",
                group=f"g{j % 5}",
            )
            for j in range(n_items)
        ]
    return items, {f"q{j}" for j in wrong}


@pytest.fixture(scope="module")
def runs() -> list[tuple[RunResult, set[str]]]:
    out = []
    for seed in range(4):
        items, wrong = synthetic(seed)
        out.append((score(items, ["exact_match"]), wrong))
    return out


def test_injected_label_errors_rank_in_the_top_2_percent(
    runs: list[tuple[RunResult, set[str]]],
) -> None:
    """Over four synthetic runs, at least 90% of the swapped keys are in the top 2% of items."""
    found = total = 0
    for result, wrong in runs:
        diagnosis = result.diagnose("exact_match")
        top = {item.id for item in diagnosis.items[: len(diagnosis.items) // 50]}
        found += len(top & wrong)
        total += len(wrong)
        flagged = {item.id for item in diagnosis.flagged("label_error")}
        assert len(flagged & wrong) >= len(flagged) // 2  # most flags are real errors
    assert found / total >= 0.9


def test_snr_is_the_papers_definition(runs: list[tuple[RunResult, set[str]]]) -> None:
    """signal = max|m_j - m_k| / mean, noise = mean(se_j) / mean, snr = signal / noise."""
    result, _ = runs[0]
    diagnosis = result.diagnose()
    for group in (None, "g2"):
        scores, errors = [], []
        for model in result.models:
            values = [
                item.scores["exact_match"].value
                for item in result.items
                if item.model == model and (group is None or item.group == group)
            ]
            x = np.asarray(values, dtype=float)
            scores.append(x.mean())
            errors.append(x.std(ddof=1) / np.sqrt(x.size))
        m = np.asarray(scores)
        signal = max(abs(a - b) for a in m for b in m) / m.mean()
        noise = np.mean(errors) / m.mean()
        got = (
            diagnosis.overall
            if group is None
            else next(g for g in diagnosis.groups if g.group == group)
        )
        assert got.signal == pytest.approx(signal, rel=1e-12)
        assert got.noise == pytest.approx(noise, rel=1e-12)
        assert got.snr == pytest.approx(signal / noise, rel=1e-12)
    snrs = [g.snr for g in diagnosis.groups]
    assert snrs == sorted(snrs)  # the noisy-subtasks table: lowest first


def test_difficulty_discrimination_and_flags() -> None:
    """Difficulty is the share right; discrimination scipy's point-biserial with rest totals."""
    table = {  # model -> right/wrong on q0..q4
        "a": [1, 1, 1, 0, 0],
        "b": [1, 1, 0, 0, 0],
        "c": [1, 0, 1, 1, 0],
        "d": [1, 0, 0, 0, 0],
    }
    items = [
        ItemResult(id=f"q{j}", output="yes" if ok else "no", expected="yes", model=model)
        for model, oks in table.items()
        for j, ok in enumerate(oks)
    ]
    diagnosis = score(items, ["exact_match"]).diagnose()
    by_id = {item.id: item for item in diagnosis.items}
    assert by_id["q0"].flags == ("saturated",)
    # Every model gave the same rejected answer: never solved, and the key is suspect too.
    assert by_id["q4"].flags == ("never_solved", "label_error")
    assert by_id["q4"].suspected_answer == "no"
    assert by_id["q1"].difficulty == 0.5
    matrix = np.array(list(table.values()), dtype=float)
    rest = (matrix.sum(axis=1) - matrix[:, 1]) / 4
    expected = scipy.stats.pointbiserialr(matrix[:, 1], rest).statistic
    assert by_id["q1"].discrimination == pytest.approx(expected, abs=1e-12)
    assert by_id["q0"].discrimination is None
    assert diagnosis.to_dict()["items"][0]["id"] in by_id


def test_diagnose_needs_models_and_a_known_label() -> None:
    """One model, or an unknown label, is a clear error."""
    one = score([ItemResult(id="1", output="a", expected="a")], ["exact_match"])
    with pytest.raises(ConfigError, match="several models"):
        one.diagnose()
    two = score(
        [ItemResult(id="1", output="a", expected="a", model=m) for m in ("x", "y")],
        ["exact_match"],
    )
    with pytest.raises(ConfigError, match="Did you mean 'exact_match'"):
        two.diagnose("exact_mach")
