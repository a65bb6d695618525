"""Ratio and mean measurements made from tallies that merge, equal to those made from rows.

A run's default ratio and mean measurements are made from each label's tally by (model,
group): state counts and the scored values' distinct values with counts, read a part at a
time. They must equal, to the bit, what the rows themselves give (``aggregate.ratio``,
``aggregate.mean``, the receipts and the macro mean), and a run over parts must never read a
label's whole column to make them.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

import itemscore
import itemscore.engine._measure as measure_module
from itemscore import ItemResult, aggregate
from itemscore.engine._table import RunTable


def _items(seed: int, *, models: int, groups: int) -> list[ItemResult]:
    rng = random.Random(seed)
    words = ["yes", "no", "the answer is yes", "maybe so", "yes indeed"]
    out = []
    for i in range(400):
        out.append(
            ItemResult(
                id=f"q{i}",
                model=f"m{i % models}" if models else None,
                group=f"g{rng.randrange(groups)}" if groups and rng.random() > 0.1 else None,
                expected=(rng.choice(words),),
                output=rng.choice([*words, None]),
            )
        )
    return out


def _by_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(measure_module, "_tallied_all", lambda *args, **kwargs: {})


@pytest.mark.parametrize("ci", [None, "t", "clopper-pearson", "jeffreys", "auto", "bootstrap"])
@pytest.mark.parametrize(("models", "groups"), [(0, 0), (1, 3), (3, 0), (2, 5)])
def test_tallied_measurements_equal_the_rows_to_the_bit(
    monkeypatch: pytest.MonkeyPatch, ci: str | None, models: int, groups: int
) -> None:
    items = _items(models * 10 + groups, models=models, groups=groups)
    metrics = ["exact_match", "token_f1", "answered_rate"]
    made: list[str] = []
    tallied_all = measure_module._tallied_all

    def spied(pm: Any, *args: Any) -> Any:
        found = tallied_all(pm, *args)
        made.extend(pm.label for _ in found.items())
        return found

    monkeypatch.setattr(measure_module, "_tallied_all", spied)
    tallied = itemscore.score(items, metrics, ci_method=ci)
    assert "exact_match" in made  # made from its tally
    assert "token_f1" in made  # a bootstrap too: it resamples the tally
    with monkeypatch.context() as patch:
        _by_rows(patch)
        rows = itemscore.score(items, metrics, ci_method=ci)
    assert tallied.measurements == rows.measurements
    assert tallied.by_model == rows.by_model
    f1 = tallied.measurements["default.token_f1"]
    assert f1.extra.get("coverage") is not None or f1.ci_method not in ("normal", "t")


def test_the_mean_equals_aggregate_mean_of_the_scored_values() -> None:
    items = _items(7, models=0, groups=0)
    result = itemscore.score(items, ["token_f1"])
    values = [
        s.value
        for s in (i.scores["token_f1"] for i in result.items)
        if s.status.value in ("ok", "fail")
    ]
    expected = aggregate.mean(values, bounds=(0.0, 1.0))
    m = result.measurements["default.token_f1"]
    assert (m.value, m.ci_low, m.ci_high) == (expected.value, expected.low, expected.high)
    receipt = aggregate.coverage_receipt(expected, kind="mean", values=values, bounds=(0.0, 1.0))
    assert m.extra["coverage"] == receipt["coverage"]


def test_a_run_over_parts_measures_without_reading_a_whole_column(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import itemscore.engine._files as files
    from itemscore._run import score_opened
    from itemscore.inputs import open_source

    data = tmp_path / "answers.jsonl"
    import json

    rows = [
        {"id": f"q{i}", "model": f"m{i % 2}", "group": f"g{i % 3}", "expected": "yes",
         "output": ("yes", "no", "yes it is", None)[i % 4]}
        for i in range(3000)
    ]  # fmt: skip
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    read: list[str] = []
    whole = RunTable._read_stored

    def watched(self: RunTable, label: str) -> Any:
        read.append(label)
        return whole(self, label)

    monkeypatch.setattr(RunTable, "_read_stored", watched)
    monkeypatch.setattr(files, "PART_BYTES", data.stat().st_size // 6 + 1)
    metrics = ["exact_match", "token_f1"]
    with open_source(data, None) as source:
        result = score_opened(
            source, metrics, keep=files.Keep("parquet", tmp_path / "items.parquet"),
            executor="process", workers=2,
        )  # fmt: skip
    assert result.table.stored == metrics
    assert read == []  # every measurement came from the parts' tallies
    serial = itemscore.score(result.items[:], metrics)
    assert result.measurements == serial.measurements
    assert result.by_model == serial.by_model
