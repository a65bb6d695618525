"""Everyday runs: too few attempts for a reducer, the coverage flag's level, the progress bars."""

from __future__ import annotations

import json
import re
from pathlib import Path

import attrs
import pytest
from click.testing import CliRunner

from itemscore import ConfigError, ItemResult, rescore, score
from itemscore.cli import cli


def write_attempts(path: Path, attempts: list[int], *, models: tuple[str, ...] = ()) -> Path:
    """A JSON lines file of questions ``q0, q1, ...`` with ``attempts[q]`` attempts each."""
    rows = [
        {"id": f"q{q}", "attempt": j, "output": "a" if (q + j) % 3 else "b", "expected": "a"}
        | ({"model": model} if model else {})
        for model in models or (None,)
        for q, n in enumerate(attempts)
        for j in range(n)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def invoke(*args: str) -> tuple[int, str, str]:
    """The command line's exit code, stdout and stderr."""
    run = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return run.exit_code, run.stdout, run.stderr


# -- item 2: a reducer that needs more attempts than the data has --------------------------------


def test_pass_at_8_on_five_attempts_says_the_cause_once_and_exits_2(tmp_path: Path) -> None:
    """pass@8 over 200 questions of 5 attempts: one sentence with the counts, exit 2, no table."""
    data = write_attempts(tmp_path / "att.jsonl", [5] * 200)
    code, out, err = invoke("score", str(data), "-m", "exact_match", "--reduce", "pass@8")
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith(
        "Error: --reduce: pass@8 needs at least 8 attempts per question; these have 5."
    )
    assert "pass@5" in err  # the largest K the data allows
    assert "distinct reason" not in err


def test_pass_at_2_on_a_file_without_attempts_says_to_map_the_column(tmp_path: Path) -> None:
    """No attempt column: the message says so and names --map attempt=COLUMN."""
    data = tmp_path / "plain.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": str(i), "output": "a", "expected": "a"}) + "\n" for i in range(9)
        ),
        encoding="utf-8",
    )
    code, _, err = invoke("score", str(data), "-m", "exact_match", "--reduce", "pass@2")
    assert code == 2
    assert "pass@2 needs at least 2 attempts per question" in err
    assert "no attempt column" in err
    assert "--map attempt=COLUMN" in err


@pytest.mark.parametrize("reducer", ["pass^6", "maj@6", "at_least:6"])
def test_every_reducer_with_k_is_refused_when_no_question_has_k_attempts(
    tmp_path: Path, reducer: str
) -> None:
    """pass^K, maj@K and at_least:K follow the same rule as pass@K; the config names its line."""
    data = write_attempts(tmp_path / "att.jsonl", [3, 4, 5])
    config = tmp_path / "run.yaml"
    config.write_text(
        f"data: {data.name}\nmetrics: [exact_match]\nreduce: [mean, '{reducer}']\n",
        encoding="utf-8",
    )
    code, _, err = invoke("run", str(config))
    assert code == 2
    assert "run.yaml:3:" in err
    assert f"{reducer} needs at least 6 attempts per question; these have 3 to 5." in err


def test_the_library_refuses_before_scoring_and_rescore_keeps_what_was_saved() -> None:
    """score() raises ConfigError (setting 'reduce'); rescore with the saved reducers does not."""
    items = [ItemResult(id=f"q{q}", output="a", expected="a", attempt=j) for q in range(4)
             for j in range(2)]  # fmt: skip
    with pytest.raises(ConfigError, match=r"pass@3 needs at least 3 attempts") as caught:
        score(items, ["exact_match"], reduce="pass@3")
    assert caught.value.setting == "reduce"
    result = score(items, ["exact_match"], reduce="pass@2")
    with pytest.raises(ConfigError, match=r"these have 2"):
        rescore(result, reduce="pass@4")
    assert rescore(result).measurements["default.exact_match"].value == 1.0


def test_some_questions_short_stay_errors_and_the_summary_names_the_reason(
    tmp_path: Path,
) -> None:
    """Questions with 3 or 4 attempts of pass@5 are errors; stderr names why, by question."""
    data = write_attempts(tmp_path / "mixed.jsonl", [3] * 5 + [4] * 3 + [8] * 12, models=("a", "b"))
    code, out, err = invoke("score", str(data), "-m", "exact_match", "--reduce", "pass@5")
    assert code == 0
    assert "exact_match [pass@5]" in out
    lines = err.splitlines()
    assert lines == [
        f"Warning: exact_match · {model}: 8 of 20 questions error — pass@5 needs at least 5 "
        "scored attempts; this question has 3 (5 questions); pass@5 needs at least 5 scored "
        "attempts; this question has 4 (3 questions) (2 distinct reasons)."
        for model in ("a", "b")
    ]


# -- item 3: the coverage flag at the run's confidence level -------------------------------------


def _worst_wilson_coverage(k: int, n: int, confidence: float) -> float:
    """The least coverage of Wilson's interval over a fine grid of truths inside it (k of n).

    An independent reference: statsmodels' Wilson bounds for every count and scipy's binomial
    probabilities; a grid's minimum lies at or just above the exact infimum.
    """
    import numpy as np
    from scipy.stats import binom
    from statsmodels.stats.proportion import proportion_confint

    alpha = 1 - confidence
    counts = np.arange(n + 1)
    low, high = proportion_confint(counts, n, alpha=alpha, method="wilson")
    truths = np.linspace(low[k], high[k], 4001)
    covered = (low[None, :] <= truths[:, None]) & (truths[:, None] <= high[None, :])
    return float((binom.pmf(counts[None, :], n, truths[:, None]) * covered).sum(axis=1).min())


def write_ratio_runs(path: Path, runs: dict[str, tuple[int, int]]) -> Path:
    """One model per entry ``model: (right, n)``: ``right`` of ``n`` items exactly right."""
    rows = [
        {"id": f"{model}{i}", "model": model, "output": "x" if i < right else "y", "expected": "x"}
        for model, (right, n) in runs.items()
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_a_90_percent_interval_is_flagged_against_89_percent_not_94(tmp_path: Path) -> None:
    """--confidence 0.9: Wilson at 89.6% worst is not flagged, at 88.1% it is (< 89%)."""
    assert _worst_wilson_coverage(75, 151, 0.9) == pytest.approx(0.896, abs=0.0015)
    assert _worst_wilson_coverage(25, 50, 0.9) == pytest.approx(0.8806, abs=0.0015)
    data = write_ratio_runs(tmp_path / "two.jsonl", {"a": (75, 151), "b": (25, 50)})
    code, out, _ = invoke("score", str(data), "-m", "exact_match", "--confidence", "0.9")
    assert code == 0
    row = next(line for line in out.splitlines() if line.strip().startswith("exact_match"))
    assert "0.50 [0.43, 0.56]" in row  # a: no mark
    assert "0.50 \u2021[0.39, 0.61]" in row  # b: marked
    text = " ".join(out.split())
    assert (
        "\u2021 exact_match · b: interval covers 88.1% at worst (< 89%) at its n, for a nominal "
        "90%" in text
    )
    assert "exact_match · a" not in text
    assert "94%" not in text


def test_a_configuration_at_90_percent_flags_the_same_way(tmp_path: Path) -> None:
    """`confidence: 0.9` in a configuration: the one interval at 88.1% is the one flagged."""
    data = write_ratio_runs(tmp_path / "two.jsonl", {"a": (75, 151), "b": (25, 50)})
    config = tmp_path / "run.yaml"
    config.write_text(
        f"data: {data.name}\nmetrics: [exact_match]\nconfidence: 0.9\n", encoding="utf-8"
    )
    code, out, _ = invoke("run", str(config))
    assert code == 0
    assert out.count("\u2021") == 2  # the mark and its note
    assert "exact_match · b: interval covers 88.1% at worst (< 89%)" in " ".join(out.split())


@pytest.mark.parametrize(
    ("confidence", "floor"), [(0.95, 0.94), (0.9, 0.89), (0.99, 0.98), (0.8, 0.79)]
)
def test_the_floor_is_one_point_below_the_nominal_level(confidence: float, floor: float) -> None:
    """coverage_floor computes the threshold from the level; the flag uses the estimate's."""
    from itemscore import Estimate, aggregate

    assert aggregate.coverage_floor(confidence) == floor
    just_below = Estimate(
        value=0.5, low=0.4, high=0.6, n=50, method="wilson", confidence=confidence,
        extra={"coverage": 0.99, "coverage_min": floor - 0.0004},
    )  # fmt: skip
    at_floor = attrs.evolve(just_below, extra={"coverage": 0.99, "coverage_min": floor})
    assert aggregate.coverage_flag(just_below) == (
        f"interval covers {100 * (floor - 0.0004):.2f}% at worst (< {100 * floor:g}%)"
    )
    assert aggregate.coverage_flag(at_floor) is None


def test_the_demo_says_what_helps_once_per_table_after_the_list() -> None:
    """`itemscore demo`: each table lists its flagged cells, then one line of what helps."""
    run = CliRunner().invoke(cli, ["demo"], env={"COLUMNS": "100", "NO_COLOR": "1"})
    assert run.exit_code == 0, run.output
    lines = [line.rstrip() for line in run.stdout.splitlines()]
    starts = [i for i, line in enumerate(lines) if line.startswith("\u2021 The interval covers")]
    helps = [i for i, line in enumerate(lines) if line.startswith("What helps:")]
    assert len(starts) == len(helps) == 2  # one per suite's table
    for start, help_at in zip(starts, helps):
        listed = " ".join(lines[start:help_at])
        assert listed.endswith("at worst.")  # the list comes first, whole
        advice = " ".join(lines[help_at : help_at + 2])
        assert "more items" in advice
        assert "--ci clopper-pearson" in advice  # the ratio method that holds its level
    means = " ".join(lines[helps[0] : helps[0] + 2])
    assert "for means --ci auto" in means  # demo_qa's token_f1 is a flagged normal mean
    assert "for means" not in " ".join(lines[helps[1] : helps[1] + 2])
    assert run.stdout.count("What helps:") == 2


def test_clopper_pearson_clears_every_ratio_flag_the_advice_names() -> None:
    """The advice is honest: where Wilson is flagged, Clopper-Pearson's worst holds the level."""
    from itemscore import aggregate

    for k, n in [(17, 18), (5, 18), (19, 20), (0, 40), (25, 50)]:
        for confidence in (0.9, 0.95):
            flagged = aggregate.ratio_coverage_min(
                n, *_bounds(k, n, "wilson", confidence), "wilson", confidence
            )
            held = aggregate.ratio_coverage_min(
                n, *_bounds(k, n, "clopper-pearson", confidence), "clopper-pearson", confidence
            )
            assert flagged < aggregate.coverage_floor(confidence) <= confidence <= held + 1e-12


def _bounds(k: int, n: int, method: str, confidence: float) -> tuple[float, float]:
    from itemscore import aggregate

    estimate = aggregate.ratio(k, n, method, confidence)
    assert estimate.low is not None
    assert estimate.high is not None
    return estimate.low, estimate.high


# -- item 6: the progress bar names its phases and counts items ----------------------------------

#: What a terminal shows of a control sequence: nothing.
_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
#: A complete bar, as rich draws it without colours (the part still to go is left blank).
_FULL_BAR = "\u2501" * 40


def _frames(stream: str) -> list[str]:
    """Every line the terminal drew, in order: each redraw after a carriage return is one."""
    return [part.rstrip() for part in re.split(r"[\r\n]", _CONTROL.sub("", stream)) if part]


def test_progress_counts_items_names_each_phase_finishes_it_and_prints_notes_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2,500 rows, 2 metrics, --out: rows read, 2,500 items (not 5,000), each bar complete."""
    monkeypatch.setattr("itemscore._terminal.progress_wanted", lambda **_: True)
    data = tmp_path / "d.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": str(i), "output": "ab"[i % 2], "expected": "a"}) + "\n"
            for i in range(2500)
        ),
        encoding="utf-8",
    )
    run = CliRunner().invoke(
        cli,
        ["score", str(data), "-m", "exact_match", "-m", "answered_rate", "--by-group",
         "--out", str(tmp_path / "out"), "--report", "csv"],
        env={"TTY_COMPATIBLE": "1", "NO_COLOR": "1", "COLUMNS": "100"},
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    frames = _frames(run.stderr)

    def last(phase: str) -> str:
        return [frame for frame in frames if frame.startswith(phase + " ")][-1]

    assert re.fullmatch(rf"reading {_FULL_BAR} 2,500/2,500 rows \d:\d\d:\d\d", last("reading"))
    assert re.fullmatch(rf"scoring {_FULL_BAR} 2,500/2,500 items \d:\d\d:\d\d", last("scoring"))
    assert re.fullmatch(
        rf"writing the reports {_FULL_BAR} +\d:\d\d:\d\d", last("writing the reports")
    )
    assert not [f for f in frames if f.startswith("writing the reports") and "/" in f]
    assert "5,000" not in run.stderr  # items x metrics is never shown
    assert "5000" not in run.stderr
    # The --by-group warning arrives while the bar shows: on a line of its own, whole.
    warning = [frame for frame in frames if "--by-group shows no groups" in frame]
    assert warning == [
        "Warning: --by-group shows no groups: no item has a `group`. Name the group column "
        "with --map group=COLUMN."
    ]
    # The bar's line is erased (cursor up, erase line) before the warning is written.
    assert "\x1b[1A\x1b[2KWarning: --by-group" in run.stderr
    assert "group=COLUMN.\n" in run.stderr


def test_rescore_counts_the_items_of_every_saved_metric(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`itemscore rescore results.json` of a run with 3 metrics: 40 items, not 120 scores."""
    data = write_attempts(tmp_path / "d.jsonl", [1] * 40)
    out = tmp_path / "out"
    code, _, _ = invoke(
        "score", str(data), "-m", "exact_match", "-m", "answered_rate", "-m", "token_f1",
        "--out", str(out), "--report", "json",
    )  # fmt: skip
    assert code == 0
    monkeypatch.setattr("itemscore._terminal.progress_wanted", lambda **_: True)
    run = CliRunner().invoke(
        cli,
        ["rescore", str(out / "results.json")],
        env={"TTY_COMPATIBLE": "1", "NO_COLOR": "1", "COLUMNS": "100"},
    )
    assert run.exit_code == 0, run.output
    scoring = [frame for frame in _frames(run.stderr) if frame.startswith("scoring ")]
    assert re.fullmatch(rf"scoring {_FULL_BAR} 40/40 items \d:\d\d:\d\d", scoring[-1])
    assert "120" not in run.stderr
