"""How often the interval of a run with attempts covers the truth, by simulation.

For each number of attempts per question and each within-question correlation, 2,000 runs of
200 questions are simulated at once (each run a group of one run table, made with numpy) and
measured by itemscore's own engine; the share of runs whose interval holds the true accuracy
(0.6) is printed next to what Wilson over the attempts taken as independent items gives. These
are the figures of docs/attempts.md.

Run: ``python benchmarks/coverage_attempts.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def main() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "simulation", Path(__file__).parents[1] / "tests" / "test_attempts.py"
    )
    assert spec is not None
    assert spec.loader is not None
    simulation = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(simulation)

    from itemscore import aggregate
    from itemscore._plan import plan
    from itemscore._settings import RunSettings
    from itemscore.engine._measure import measure_all

    truth, runs = simulation.TRUTH, simulation.REPETITIONS
    print("| attempts | correlation | question-level interval | attempts as items (Wilson) |")
    print("| ---: | ---: | ---: | ---: |")
    for attempts in (1, 2, 3, 5, 10):
        for rho in (0.0, 0.3, 0.6, 0.9):
            table, right = simulation.simulated_table(attempts, rho, seed=1000 + attempts)
            headline, _ = measure_all(plan(["exact_match"]), table, RunSettings(), {})
            groups = headline["default.exact_match"].groups
            low = np.array([groups[str(r)].ci_low for r in range(runs)])
            high = np.array([groups[str(r)].ci_high for r in range(runs)])
            covered = np.mean((low <= truth) & (truth <= high))
            k = right.sum(axis=1)
            nl, nh = aggregate.ratio_interval(k, np.full(runs, right.shape[1]))
            naive = np.mean((nl <= truth) & (truth <= nh))
            print(f"| {attempts} | {rho:.1f} | {covered:.1%} | {naive:.1%} |", flush=True)


if __name__ == "__main__":
    main()
