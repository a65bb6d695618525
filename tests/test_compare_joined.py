"""Runs compared from their join, a bucket of ids at a time (issue 37.2).

``compare`` of ratio and mean metrics reads each run a part at a time, splits its rows into
buckets by a hash of the id (files in a temporary folder for large runs) and adds up each
bucket's counts and tallies. Its comparisons must be the same to the bit however many buckets,
whether the two sides are two runs or two models of one, and equal statsmodels' and scipy's.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

import itemscore.comparison._joined as joined
from itemscore import ConfigError, ItemResult, RunResult, compare, score
from itemscore.cli import cli

METRICS = ["exact_match", "token_f1"]


def _items(model: str, seed: int, n: int = 300, *, skip: int = 0) -> list[ItemResult]:
    """Items of one model: right, wrong or partly right, some unanswered, in three groups."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        kind = int(rng.integers(0, 5))
        output = ("answer", "wrong", "the answer here", "answer x x", None)[kind]
        expected = None if skip and i % skip == 0 else "answer"  # no answer key: skip
        group = None if i % 7 == 0 else f"g{i % 3}"
        out.append(
            ItemResult(id=f"q{i}", output=output, expected=expected, model=model, group=group)
        )
    return out


def _run(items: list[ItemResult], suite_id: str = "t") -> RunResult:
    return score(items, METRICS, suite_id=suite_id)


@pytest.fixture(scope="module")
def runs() -> dict[str, RunResult]:
    a, b = _items("a", 1), _items("b", 2, skip=11)[:-20]  # b lacks 20 ids: unpaired
    return {"a": _run(a), "b": _run(b), "both": _run(a + b)}


def test_two_runs_equal_one_run_and_the_references(runs: dict[str, RunResult]) -> None:
    """compare(A, B) equals compare(A + B), and statsmodels' McNemar and scipy's paired t."""
    import scipy.stats
    from statsmodels.stats.contingency_tables import mcnemar

    together = compare(runs["both"])
    apart = compare(runs["a"], runs["b"])
    assert apart == together
    assert {c.method for c in apart} == {"mcnemar-exact, newcombe-10", "paired-t"}
    assert all(c.groups for c in apart)
    assert apart[0].n_unpaired > 20  # skips, and the ids only a has
    a, b = runs["a"].table, runs["b"].table
    n = len(b)  # b's ids are a's first ids
    for c in apart:
        codes_a, codes_b = a.codes(c.metric)[:n], b.codes(c.metric)
        scored = (codes_a < 2) & (codes_b < 2)
        assert c.n_pairs == int(scored.sum())
        assert c.n_unpaired == n - c.n_pairs + (len(a) - n)
        if c.metric == "exact_match":
            ok_a, ok_b = codes_a[scored] == 0, codes_b[scored] == 0
            table = [[np.sum(ok_a & ok_b), np.sum(ok_a & ~ok_b)],
                     [np.sum(~ok_a & ok_b), np.sum(~ok_a & ~ok_b)]]  # fmt: skip
            assert c.p_value == pytest.approx(mcnemar(table, exact=True).pvalue, abs=1e-12)
        else:
            values_a = a.values(c.metric)[:n][scored]
            values_b = b.values(c.metric)[scored]
            reference = scipy.stats.ttest_rel(values_b, values_a)
            interval = reference.confidence_interval(0.95)
            assert c.p_value == pytest.approx(reference.pvalue, abs=1e-12)
            assert (c.ci_low, c.ci_high) == pytest.approx((interval.low, interval.high), abs=1e-12)


@pytest.mark.parametrize("rows", [1, 7, 64])
def test_any_number_of_buckets_gives_the_same_numbers(
    runs: dict[str, RunResult], rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Buckets on disk (300 rows, ``rows`` a bucket) give the comparisons of one bucket."""
    whole = compare(runs["a"], runs["b"])
    monkeypatch.setattr(joined, "BUCKET_ROWS", rows)
    made: list[str] = []
    real = joined._Buckets.__init__

    def spy(self: Any, k: int, folder: Path | None) -> None:
        made.append(str(folder))
        real(self, k, folder)

    monkeypatch.setattr(joined._Buckets, "__init__", spy)
    assert compare(runs["a"], runs["b"]) == whole
    assert len(made) == 2
    assert "None" not in made
    assert not any(Path(folder).exists() for folder in made)  # and they are gone


def test_several_models_pair_by_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs of the same two models pair model by model, in buckets or not."""
    first = _run(_items("x", 3) + _items("y", 4))
    second = _run(_items("x", 5) + _items("y", 6, skip=5))
    whole = compare(first, second)
    assert [(c.baseline, c.candidate) for c in whole[:2]] == [
        ("x @ a", "x @ b"),
        ("y @ a", "y @ b"),
    ]
    reference = compare(_run(_items("x", 3) + _items("y", 5)))  # x: the same rows, one run
    assert whole[0].difference == reference[0].difference
    assert whole[0].ci_low == reference[0].ci_low
    monkeypatch.setattr(joined, "BUCKET_ROWS", 50)
    assert compare(first, second) == whole


def test_different_items_are_named_as_the_rows_path_names_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Pairs with other inputs: one message, in memory, joined, and joined in buckets."""
    base = _items("a", 1, 60)
    other = [
        ItemResult(id=i.id, output=i.output, expected="answer", model="b", group=i.group,
                   input=f"changed {n}" if n % 9 == 4 else None)
        for n, i in enumerate(_items("b", 2, 60))
    ]  # fmt: skip
    with pytest.raises(ConfigError) as rows_path:
        compare(_run(base + other))
    with pytest.raises(ConfigError) as one_bucket:
        compare(_run(base), _run(other))
    monkeypatch.setattr(joined, "BUCKET_ROWS", 4)
    with pytest.raises(ConfigError) as buckets:
        compare(_run(base), _run(other))
    assert str(one_bucket.value) == str(rows_path.value) == str(buckets.value)
    assert "7 paired items" in str(buckets.value)
    assert "'q4', 'q13'" in str(buckets.value)
    allowed = compare(_run(base), _run(other), allow_different_inputs=True)
    assert allowed[0].n_pairs + allowed[0].n_unpaired == 60


def test_no_shared_id_is_refused() -> None:
    """Runs over different questions: nothing to pair, said as the rows path says it."""
    renamed = [ItemResult(id=f"z{n}", output="answer", expected="answer") for n in range(5)]
    with pytest.raises(ConfigError, match="share no id"):
        compare(_run(_items("a", 1, 5)), _run(renamed))


def test_saved_runs_in_parts_compare_as_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs written by two workers in parts and read back compare like the runs in memory."""
    import json

    import itemscore.engine._files as files

    rows = {
        side: [
            {"id": i.id, "model": i.model, "group": i.group, "output": i.output,
             "expected": i.expected}
            for i in _items(side, seed, 2_000, skip=skip)
        ]
        for side, seed, skip in (("a", 1, 0), ("b", 2, 13))
    }  # fmt: skip
    folders = []
    for side, found in rows.items():
        data = tmp_path / f"{side}.jsonl"
        data.write_text("".join(json.dumps(r) + "\n" for r in found), encoding="utf-8")
        monkeypatch.setattr(files, "PART_BYTES", data.stat().st_size // 5 + 1)
        out = tmp_path / f"out-{side}"
        args = ["score", str(data), "--out", str(out), "-q", "--workers", "2"]
        for metric in METRICS:
            args += ["-m", metric]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        assert len(list((out / "items.parquet").iterdir())) > 1
        folders.append(out / "results.json")
    loaded = [RunResult.load_json(path) for path in folders]
    suite = loaded[0].suite_id
    expected = compare(*(_run([ItemResult(**r) for r in rows[s]], suite) for s in ("a", "b")))
    assert compare(*loaded) == expected
    monkeypatch.setattr(joined, "BUCKET_ROWS", 300)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    assert compare(*loaded) == expected
    assert not list(scratch.iterdir())  # the buckets' folder is gone


def test_gate_joins_the_runs_the_same_way(
    runs: dict[str, RunResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gate's gain is the mean of the pairs' differences, in buckets or not."""
    from itemscore._gate import gate

    whole = gate(runs["a"], runs["b"], metric="token_f1", margin=0.05)
    a, b = (runs[side].table for side in ("a", "b"))
    n = len(b)  # b's ids are a's first ids
    codes_a, codes_b = a.codes("token_f1")[:n], b.codes("token_f1")
    scored = (codes_a < 2) & (codes_b < 2)
    gains = b.values("token_f1")[scored] - a.values("token_f1")[:n][scored]
    assert whole.n_pairs == gains.size
    assert whole.gain == pytest.approx(float(gains.mean()), abs=1e-15)
    monkeypatch.setattr(joined, "BUCKET_ROWS", 16)
    assert gate(runs["a"], runs["b"], metric="token_f1", margin=0.05) == whole


def test_the_models_of_one_run_in_buckets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three models of one run: a baseline in two pairs, the same numbers in buckets."""
    run = _run(_items("x", 3) + _items("y", 4, skip=6) + _items("z", 5))
    every_pair = compare(run)
    against_x = compare(run, baseline="x")
    assert [(c.baseline, c.candidate) for c in against_x[:2]] == [("x", "y"), ("x", "z")]
    monkeypatch.setattr(joined, "BUCKET_ROWS", 40)
    assert compare(run) == every_pair
    assert compare(run, baseline="x") == against_x
