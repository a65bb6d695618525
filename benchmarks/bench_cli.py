"""The command line against the Python API, and its start-up time.

1. ``itemscore score FILE -m exact_match -m token_f1 -m answered_rate -q`` on a generated
   100k-line JSONL file (SQuAD-like short answers, ~5% failed requests), against
   ``itemscore.score`` on the same items already in memory. The difference is the command
   line's overhead: start-up, reading and parsing the file into items (timed separately), and
   planning the metrics.
2. Start-up, as whole processes against ``python -c pass`` (issue 8.10: at most 3x for
   ``import itemscore`` and ``itemscore metrics --json``): each command and the baseline run
   in turn, round after round, and each ratio is the best time over the best baseline time.
   ``metrics --json`` answers from the listing cache while nothing it depends on changed
   (``itemscore.cli._listing_cache``; the first run fills it). Listing through the plugins
   imports every installed metric (to read its description): that is timed too, with
   ``ITEMSCORE_NO_CACHE=1``, with and without ``ITEMSCORE_DISABLE_PLUGIN_AUTOLOAD=1`` (the
   built-ins only).

Every figure is the best of several runs. Run directly (``python benchmarks/bench_cli.py``) or
through ``benchmarks/run.py``. Nothing is asserted: machines are noisy.
"""

from __future__ import annotations

import json
import os
import random
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


def startup(rounds: int = 9) -> None:
    """Paired start-up ratios: each command's best time over ``python -c pass``'s best."""
    python = sys.executable
    listing = [str(SCRIPT), "metrics", "--json"]
    no_cache = {**os.environ, "ITEMSCORE_NO_CACHE": "1"}
    builtins_only = {**no_cache, "ITEMSCORE_DISABLE_PLUGIN_AUTOLOAD": "1"}
    commands: dict[str, tuple[list[str], dict[str, str] | None]] = {
        "python -c pass": ([python, "-c", "pass"], None),
        "python -c 'import itemscore'": ([python, "-c", "import itemscore"], None),
        "itemscore --version": ([str(SCRIPT), "--version"], None),
        "itemscore metrics --json": (listing, None),
        "  (no cache)": (listing, no_cache),
        "  (no cache, built-ins only)": (listing, builtins_only),
        "itemscore plugins --json": ([str(SCRIPT), "plugins", "--json"], None),
        "itemscore metrics": ([str(SCRIPT), "metrics"], None),
    }
    for args, env in commands.values():  # fills the listing cache
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL, env=env)
    best = dict.fromkeys(commands, float("inf"))
    for _ in range(rounds):  # interleaved, so that load on the machine hits every command alike
        for label, (args, env) in commands.items():
            start = time.perf_counter()
            subprocess.run(args, check=True, stdout=subprocess.DEVNULL, env=env)
            best[label] = min(best[label], time.perf_counter() - start)
    baseline = best["python -c pass"]
    print(f"start-up (best of {rounds} interleaved rounds; target <= 3.0x for the 2nd and 4th):")
    for label, seconds in best.items():
        print(f"  {label:32s} {seconds * 1000:7.1f} ms  {seconds / baseline:5.2f}x")


if __name__ == "__main__":
    main()
