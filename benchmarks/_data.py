"""The benchmark data: the QA files of ``../shared/bench/gen_data.py``, made once when missing.

Every benchmark that reads a QA file gets it here, written into ``benchmarks/data/``
(git-ignored). The shared folder is found next to the checkout, two levels up from a worktree,
or at ``ITEMSCORE_SHARED_BENCH``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["DATA", "qa_file", "shared_bench"]

#: Where generated files are written.
DATA = Path(__file__).resolve().parent / "data"
_CANDIDATES = [Path(__file__).resolve().parents[k] / "shared" / "bench" for k in (2, 3)]


def shared_bench() -> Path | None:
    """The shared benchmark folder (generator and plain loops), if this checkout has one."""
    for folder in (Path(os.environ.get("ITEMSCORE_SHARED_BENCH", "")), *_CANDIDATES):
        if str(folder) and (folder / "gen_data.py").is_file():
            return folder
    return None


def qa_file(size: str) -> Path:
    """``benchmarks/data/qa-SIZE.jsonl`` (``100k``, ``1m``...), generated when missing."""
    path = DATA / f"qa-{size}.jsonl"
    if path.exists():
        return path
    shared = shared_bench()
    if shared is None:
        raise SystemExit(f"benchmarks: ../shared/bench/gen_data.py not found; cannot make {path}")
    DATA.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, str(shared / "gen_data.py"), "--size", size, "--task", "qa",
         "--out", str(DATA)],
        check=True,
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    return path
