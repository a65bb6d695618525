"""The sequential gate: anytime-valid under repeated looks, its CLI exit codes, the fixture."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from itemscore import ItemResult, RunResult, score
from itemscore._gate import gate, mixture_radius
from itemscore.cli import cli

pytest_plugins = ["itemscore.pytest_plugin"]

LOOKS = np.arange(100, 1001, 100)
Z = 1.959963984540054


def test_repeated_looks_keep_the_error_rate_where_fixed_n_peeks_inflate_it() -> None:
    """At the margin itself every verdict is an error: ten looks, <= 5% vs the fixed-n 15-25%."""
    rng = np.random.default_rng(0)
    reps, margin = 2000, 0.05
    a = rng.random((reps, 1000)) < 0.70
    b = rng.random((reps, 1000)) < 0.65  # the candidate is worse by exactly the margin
    d = b.astype(float) - a
    sequence = np.zeros(reps, dtype=bool)
    fixed = np.zeros(reps, dtype=bool)
    for t in LOOKS:
        x = d[:, :t]
        m = x.mean(axis=1)
        radius = mixture_radius(int(t), 1.0, 0.05)
        se = x.std(axis=1, ddof=1) / np.sqrt(t)
        sequence |= (m - radius > -margin) | (m + radius < -margin)
        fixed |= (m - Z * se > -margin) | (m + Z * se < -margin)
    print(f"10 looks: sequence {sequence.mean():.3f}, fixed-n {fixed.mean():.3f}")
    assert sequence.mean() <= 0.05
    assert 0.15 <= fixed.mean() <= 0.25


def test_the_radius_is_howards_normal_mixture() -> None:
    """sqrt((v + rho)(2 log(1/alpha) + log((v + rho)/rho))) / t, holding for every t."""
    from itemscore._gate import _rho

    rho = _rho(1.0, 0.05, 500)
    for t in (10, 500, 10_000):
        v = float(t)
        expected = np.sqrt((v + rho) * (2 * np.log(20) + np.log((v + rho) / rho))) / t
        assert mixture_radius(t, 1.0, 0.05) == pytest.approx(expected, rel=1e-12)
    # Narrowest (relative to other rho) at the tuning point.
    others = [_rho(1.0, 0.05, n) for n in (50, 5000)]
    v = 500.0
    widths = [np.sqrt((v + r) * (2 * np.log(20) + np.log((v + r) / r))) for r in others]
    assert all(float(mixture_radius(500, 1.0, 0.05)) * 500 <= w + 1e-9 for w in widths)


def _run(p: float, n: int, seed: int, model: str) -> RunResult:
    rng = np.random.default_rng(seed)
    items = [
        ItemResult(id=f"q{i}", output="y" if ok else "n", expected="y", model=model)
        for i, ok in enumerate((rng.random(n) < p).tolist())
    ]
    return score(items, ["exact_match"])


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("gate")
    paths = {}
    for name, p, n in (("base", 0.8, 2000), ("same", 0.8, 2000), ("bad", 0.5, 2000),
                       ("few", 0.8, 20)):  # fmt: skip
        path = out / f"{name}.json"
        _run(p, n, {"base": 1, "same": 2, "bad": 3, "few": 4}[name], name).save_json(path)
        paths[name] = path
    return paths


@pytest.mark.parametrize(("candidate", "code"), [("same", 0), ("bad", 1), ("few", 3)])
def test_cli_exit_codes(saved: dict[str, Path], candidate: str, code: int) -> None:
    """0 not worse, 1 worse, 3 inconclusive; --json names the verdict."""
    args = ["gate", str(saved["base"]), str(saved[candidate]), "--metric", "exact_match",
            "--margin", "0.1", "--json"]  # fmt: skip
    run = CliRunner().invoke(cli, args)
    assert run.exit_code == code, run.output
    data = json.loads(run.output)
    assert data["exit_code"] == code
    assert data["verdict"] == {0: "not worse", 1: "worse", 3: "inconclusive"}[code]


def test_cli_bad_metric_is_exit_2(saved: dict[str, Path]) -> None:
    """An unknown label is bad usage, named with a did-you-mean."""
    args = ["gate", str(saved["base"]), str(saved["same"]), "--metric", "exact_mach",
            "--margin", "0.1"]  # fmt: skip
    run = CliRunner().invoke(cli, args)
    assert run.exit_code == 2
    assert "Did you mean 'exact_match'" in run.output


def test_the_fixture_fails_a_worse_candidate(
    saved: dict[str, Path], itemscore_gate: object
) -> None:
    """itemscore_gate passes the same model and fails a worse one."""
    check = itemscore_gate
    result = check(saved["base"], saved["same"], metric="exact_match", margin=0.1)  # type: ignore[operator]
    assert result.verdict == "not worse"
    with pytest.raises(pytest.fail.Exception, match="worse than the baseline"):
        check(saved["base"], saved["bad"], metric="exact_match", margin=0.1)  # type: ignore[operator]
    with pytest.raises(pytest.skip.Exception, match="cannot tell yet"):
        check(saved["base"], saved["few"], metric="exact_match", margin=0.1,  # type: ignore[operator]
              inconclusive="skip")  # fmt: skip


def test_gate_in_python_matches_the_cli(saved: dict[str, Path]) -> None:
    """The function and the command give one verdict."""
    result = gate(RunResult.load_json(saved["base"]), RunResult.load_json(saved["bad"]),
                  metric="exact_match", margin=0.1)  # fmt: skip
    assert result.verdict == "worse"
    assert result.high is not None
    assert result.high < -0.1
