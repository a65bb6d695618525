"""The command line against the Python API, and its start-up time.

1. ``itemscore score FILE -m exact_match -m token_f1 -m answered_rate -q`` on a generated
   100k-line JSONL file (SQuAD-like short answers, ~5% failed requests), against
   ``itemscore.score`` on the same items already in memory. The difference is the command
   line's overhead: start-up, reading and parsing the file into items (timed separately), and
   planning the metrics.
2. Start-up, as whole processes against ``python -c pass`` (issue 17: ``itemscore metrics
   --json`` at most 15x, with no cache of any kind): each command is paired with a run of the
   baseline, the two in alternating order, round after round; the figure is the median of the
   per-pair ratios (and the median times). Listing imports every installed metric to read its
   id and description; it is also timed with ``ITEMSCORE_DISABLE_PLUGIN_AUTOLOAD=1`` (the
   built-ins only).

Nothing is asserted: machines are noisy. Run directly (``python benchmarks/bench_cli.py``;
``python benchmarks/bench_cli.py startup`` for the second part alone) or through
``benchmarks/run.py``.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import itemscore
from itemscore.inputs import read_items

N_ITEMS = 100_000
SEED = 20240611
METRICS = ("exact_match", "token_f1", "answered_rate")
SCRIPT = Path(sys.executable).parent / "itemscore"
WORDS = [
    "paris",
    "london",
    "tower",
    "river",
    "king",
    "queen",
    "war",
    "peace",
    "empire",
    "france",
    "england",
    "spain",
    "rome",
    "city",
    "north",
    "south",
    "east",
    "west",
    "church",
    "castle",
    "bridge",
    "museum",
    "garden",
    "palace",
    "island",
    "mountain",
    "lake",
    "1848",
    "1914",
]


def write_jsonl(path: Path, n: int, seed: int = SEED) -> None:
    """n rows of short answers: 1-3 valid spellings each, ~5% failed requests."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(n):
            core = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))
            expected = [core] + [f"the {core}"] * rng.randint(0, 1)
            roll = rng.random()
            output: str | None
            if roll < 0.05:
                output = None
            elif roll < 0.5:
                output = rng.choice([core, core.upper(), f"{core}."])
            else:
                output = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))
            row = {"id": f"q{i}", "output": output, "expected": expected, "latency_ms": i % 997}
            handle.write(json.dumps(row) + "\n")


def best(fn: Callable[[], Any], runs: int) -> float:
    """The best wall time of ``runs`` calls, in seconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def run(args: Sequence[str]) -> None:
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main() -> None:
    """Print the CLI-versus-API figures and the start-up figures."""
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("note: PYTHONDONTWRITEBYTECODE is set, so every start-up compiles the modules anew")
    with tempfile.TemporaryDirectory(prefix="itemscore-bench-cli-") as folder:
        path = Path(folder) / "outputs.jsonl"
        write_jsonl(path, N_ITEMS)
        size_mb = path.stat().st_size / 1e6
        print(f"score: {N_ITEMS:,} JSONL lines ({size_mb:.1f} MB), metrics {', '.join(METRICS)}")

        read = best(lambda: read_items(path), 3)
        items = read_items(path)
        api = best(lambda: itemscore.score(items, list(METRICS)), 3)
        args = [str(SCRIPT), "score", str(path), "-q"]
        for metric in METRICS:
            args += ["-m", metric]
        cli = best(lambda: run(args), 3)

    print(f"  itemscore.score on items in memory   {api:7.3f} s")
    print(f"  reading + parsing into items         {read:7.3f} s")
    print(f"  itemscore score FILE (command line)  {cli:7.3f} s")
    print(
        f"  overhead: {cli - api:.3f} s ({cli / api:.2f}x the API), of which "
        f"{read:.3f} s reading ({read / N_ITEMS * 1e6:.1f} us per line)"
    )

    startup()


def startup(rounds: int = 21) -> None:
    """Paired start-up ratios: each command over a ``python -c pass`` run next to it, medians."""
    python = sys.executable
    baseline = [python, "-c", "pass"]
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ITEMSCORE_")}
    builtins_only = {**environ, "ITEMSCORE_DISABLE_PLUGIN_AUTOLOAD": "1"}
    commands: dict[str, tuple[list[str], dict[str, str]]] = {
        "python -c 'import itemscore'": ([python, "-c", "import itemscore"], environ),
        "itemscore --version": ([str(SCRIPT), "--version"], environ),
        "itemscore metrics --json": ([str(SCRIPT), "metrics", "--json"], environ),
        "  (built-ins only)": ([str(SCRIPT), "metrics", "--json"], builtins_only),
        "itemscore plugins --json": ([str(SCRIPT), "plugins", "--json"], environ),
        "itemscore metrics": ([str(SCRIPT), "metrics"], environ),
    }

    def timed(args: list[str], env: dict[str, str]) -> float:
        start = time.perf_counter()
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL, env=env)
        return time.perf_counter() - start

    for args, env in [(baseline, environ), *commands.values()]:  # compiles the bytecode
        timed(args, env)
    times: dict[str, list[float]] = {label: [] for label in commands}
    bases: dict[str, list[float]] = {label: [] for label in commands}
    for round_ in range(rounds):
        for label, (args, env) in commands.items():
            if round_ % 2:  # alternated, so that neither side of a pair always runs first
                times[label].append(timed(args, env))
                bases[label].append(timed(baseline, environ))
            else:
                bases[label].append(timed(baseline, environ))
                times[label].append(timed(args, env))
    pass_ms = statistics.median(t for ts in bases.values() for t in ts) * 1000
    print(
        f"start-up ({rounds} alternated pairs each; medians; python -c pass {pass_ms:.1f} ms; "
        "target <= 15x for metrics --json):"
    )
    for label in commands:
        ratio = statistics.median(t / b for t, b in zip(times[label], bases[label], strict=True))
        print(f"  {label:32s} {statistics.median(times[label]) * 1000:7.1f} ms  {ratio:5.2f}x")


if __name__ == "__main__":
    if sys.argv[1:] == ["startup"]:
        startup()
    else:
        main()
