"""``itemscore.compare`` on two results of 1M items each, with three metrics.

The two results hold the same 1M ids (one model each) with ``exact_match`` (a ratio: McNemar
and Newcombe), ``token_f1`` (a mean: paired t) and ``f1`` over three classes (its own
aggregate: a paired bootstrap of 2000 resamples). They are built directly as score columns,
the form a run produces, so that the figure is the comparison alone (no scoring, no JSON).

Run directly (``python benchmarks/bench_compare.py``) or through ``benchmarks/run.py``.
"""

from __future__ import annotations

import time

import numpy as np

from itemscore import ItemResult, Measurement, RunResult, compare
from itemscore._columns import ScoreColumn
from itemscore._settings import RunSettings
from itemscore.engine._table import RunTable

N_ITEMS = 1_000_000
SEED = 20240611
LABELS = ("positive", "negative", "neutral")


def _result(model: str, ids: list[str], gold: np.ndarray, skill: float, seed: int) -> RunResult:
    rng = np.random.default_rng(seed)
    n = len(ids)
    right = rng.random(n) < skill
    failed = rng.random(n) < 0.01
    states = np.where(failed, 3, np.where(right, 0, 1)).astype(np.uint8)
    exact = ScoreColumn(
        "exact_match", states.tobytes(), [None if f else float(r) for r, f in zip(right, failed)]
    )
    overlap = np.where(right, 1.0, rng.integers(0, 4, n) / 4.0)
    token_states = np.where(failed, 3, np.where(overlap == 1.0, 0, 1)).astype(np.uint8)
    token = ScoreColumn(
        "token_f1",
        token_states.tobytes(),
        [None if f else float(v) for v, f in zip(overlap, failed)],
    )
    wrong = (gold + rng.integers(1, 3, n)) % 3
    pred = np.where(right, gold, wrong)
    extras_of = {(g, p): {"gold": LABELS[g], "pred": LABELS[p]} for g in range(3) for p in range(3)}
    f1 = ScoreColumn(
        "f1",
        states.tobytes(),
        [None if f else float(r) for r, f in zip(right, failed)],
        None,
        [None if f else extras_of[(g, p)] for g, p, f in zip(gold, pred, failed)],
    )
    items = [ItemResult(id=i, output="x", model=model) for i in ids]
    columns = {"exact_match": exact, "token_f1": token, "f1": f1}
    configs = (
        {"name": "exact_match", "label": "exact_match", "options": {}},
        {"name": "token_f1", "label": "token_f1", "options": {}},
        {"name": "f1", "label": "f1", "options": {}},
    )
    table = RunTable.of_items(items, {label: c.arrow for label, c in columns.items()})
    kinds = {"exact_match": "ratio", "token_f1": "mean", "f1": "custom"}
    measurements = {
        f"bench.{label}": Measurement(
            key=f"bench.{label}", suite="bench", metric=label, model=model, aggregation=kind
        )
        for label, kind in kinds.items()
    }
    return RunResult(
        items=table.scored_items(),
        measurements=measurements,
        by_model={model: measurements},
        settings=RunSettings(suite_id="bench"),
        metric_configs=configs,
    )


def main() -> None:
    rng = np.random.default_rng(SEED)
    ids = [f"q{i}" for i in range(N_ITEMS)]
    gold = rng.integers(0, 3, N_ITEMS)
    start = time.perf_counter()
    before = _result("model", ids, gold, 0.70, SEED + 1)
    after = _result("model", ids, gold, 0.71, SEED + 2)
    print(f"built two results of {N_ITEMS:,} items: {time.perf_counter() - start:.1f} s (setup)")
    compare(before, after)  # warm-up: imports, plugin discovery
    times, cpu = [], []
    for _ in range(3):
        start, start_cpu = time.perf_counter(), time.process_time()
        out = compare(before, after)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    # CPU time next to wall time: on a shared machine the wall clock also counts waiting.
    print(
        f"compare(2 x {N_ITEMS:,} items, 3 metrics incl. f1 bootstrap): "
        f"wall best {min(times):.2f} s, median {sorted(times)[1]:.2f} s; "
        f"CPU best {min(cpu):.2f} s (target < 2 s)"
    )
    for c in out:
        print(
            f"  {c.metric:12s} {c.difference:+.4f} [{c.ci_low:+.4f}, {c.ci_high:+.4f}] "
            f"p={c.p_value:.3g} n_pairs={c.n_pairs:,} {c.method}"
        )


if __name__ == "__main__":
    main()
