"""``llm_judge`` against a stub endpoint that answers every request in 50 ms.

1. 10,000 items with ``concurrency`` 32 and an empty cache: compared with the ideal
   10,000 x 0.05 / 32 s (the endpoint's latency alone, every slot always busy); the target is at
   most 1.25x the ideal.
2. The same run again, every reply from the cache: the target is under 1 s.

The stub runs in a process of its own, as a real endpoint would, so that its event loop does not
share the judge's interpreter lock. Run directly (``python benchmarks/bench_judge.py [N]``) or
through ``benchmarks/run.py``.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from itemscore import ItemResult, score

N_ITEMS = 10_000
LATENCY = 0.05
CONCURRENCY = 32
TARGET_RATIO = 1.25
TARGET_CACHED_S = 1.0


def make_items(n: int) -> list[ItemResult]:
    """Short open-ended answers with a question and a reference each."""
    return [
        ItemResult(
            id=f"q{i}",
            input=f"Explain item {i} in one sentence.",
            output=f"Item {i} is explained here, briefly and correctly.",
            expected=[f"reference explanation {i}"],
        )
        for i in range(n)
    ]


def start_stub(latency: float) -> tuple[subprocess.Popen[str], str]:
    """The stub endpoint in a subprocess, and its base URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "itemscore.metrics_builtin.judge.stub", "--port", "0",
         "--delay", str(latency)],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    return proc, line.rsplit(" ", 1)[-1].strip()


def timed_run(
    items: list[ItemResult], base_url: str, cache: Path
) -> tuple[float, dict[str, float]]:
    spec = {
        "name": "llm_judge",
        "model": "stub",
        "base_url": base_url,
        "api_key_env": None,
        "cache": str(cache),
        "concurrency": CONCURRENCY,
    }
    start, cpu = time.perf_counter(), time.process_time()
    result = score(items, [spec])
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    m = result.measurements["default.llm_judge"]
    assert m.counts["error"] == 0, m.counts
    return elapsed, cpu, dict(m.extra)


def main(n: int = N_ITEMS) -> None:
    items = make_items(n)
    ideal = n * LATENCY / CONCURRENCY
    proc, base_url = start_stub(LATENCY)
    try:
        with tempfile.TemporaryDirectory() as folder:
            cache = Path(folder) / "judge-cache.sqlite3"
            cold, cold_cpu, extra = timed_run(items, base_url, cache)
            assert extra["requests"] == n, extra
            warm, warm_cpu, extra = timed_run(items, base_url, cache)
            assert extra["requests"] == 0, extra
            assert extra["cache_hits"] == n, extra
    finally:
        proc.terminate()
        proc.wait()
    ratio = cold / ideal
    missed = "" if ratio <= TARGET_RATIO else "  MISSED"
    print(
        f"llm_judge, {n:,} items, stub answering in {LATENCY * 1000:.0f} ms, "
        f"concurrency {CONCURRENCY}:"
    )
    print(
        f"  cold (every item a request): {cold:7.2f} s   ideal {ideal:.2f} s   "
        f"ratio {ratio:.2f}x (target <= {TARGET_RATIO}x){missed}   CPU {cold_cpu:.2f} s"
    )
    print(
        f"  from the cache (no request): {warm:7.2f} s   "
        f"(target < {TARGET_CACHED_S:.0f} s){'' if warm < TARGET_CACHED_S else '  MISSED'}"
        f"   CPU {warm_cpu:.2f} s"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else N_ITEMS)
