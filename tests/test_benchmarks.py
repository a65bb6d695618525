"""The benchmarks stay runnable.

``make bench`` is not part of the test run, but the private names it reaches for are: a rename
that breaks a benchmark breaks a test here.
"""

from __future__ import annotations

import ast
import importlib
import json
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _sections() -> list[str]:
    """The section names ``benchmarks/run.py`` runs, read from its ``SECTIONS``."""
    tree = ast.parse((BENCH / "run.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "SECTIONS":
            return list(ast.literal_eval(node.value))
    raise AssertionError("benchmarks/run.py has no SECTIONS")


@pytest.mark.parametrize("name", _sections())
def test_every_benchmark_section_imports(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each section imports what it measures (private names included) and has a ``main``."""
    monkeypatch.syspath_prepend(str(BENCH))
    module = importlib.import_module(name)
    assert callable(module.main)


def test_the_read_pass_of_the_pipeline_benchmark_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The read pass it times goes through the engine's own functions.

    It reads a small file (parse, convert, check) and prints its seconds.
    """
    monkeypatch.syspath_prepend(str(BENCH))
    bench_pipeline = importlib.import_module("bench_pipeline")
    path = tmp_path / "qa.jsonl"
    rows = [{"id": f"q{i}", "output": "a", "expected": "a"} for i in range(300)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    bench_pipeline._read_pass(str(path))
    assert float(capsys.readouterr().out) > 0
