"""``make bench``: time itemscore against plain-Python loops that compute the same numbers.

Each section prints its figures and ratios. Nothing here asserts a time: machines are noisy.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

SECTIONS = (
    "bench_pipeline",
    "bench_core",
    "bench_metrics",
    "bench_text_metrics",
    "bench_cli",
    "bench_inputs",
    "bench_readers",
    "bench_reports",
    "bench_judge",
    "bench_compare",
    "bench_bold",
    "bench_attempts",
    "bench_executors",
)


def main() -> None:
    """Run every benchmark section that exists, in order."""
    sys.path.insert(0, str(Path(__file__).parent))
    only = set(sys.argv[1:])
    for name in SECTIONS:
        if only and name not in only:
            continue
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        print(f"\n== {name} ==")
        module.main()


if __name__ == "__main__":
    main()
