"""After every scoring command, errors are said on stderr, and a metric that scored nothing exits 1.

Issue 15.3: a judge at a closed port used to print `—`, nothing on stderr, and exit 0.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import itemscore
from itemscore import ItemResult, ItemScore, Metric, MetricContext
from itemscore.cli._outcome import error_summary, seed_unused

SCRIPT = Path(sys.executable).parent / "itemscore"


def run_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ITEMSCORE_")}
    environ["OPENAI_API_KEY"] = "sk-test-not-a-key"
    return subprocess.run(
        [str(SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        env=environ,
        timeout=120,
        check=False,
    )


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def data_file(tmp_path: Path, models: tuple[str, ...] = ("m",), n: int = 3) -> Path:
    path = tmp_path / "outputs.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        for model in models:
            for i in range(n):
                row = {"id": str(i), "model": model, "output": "a", "expected": "a"}
                handle.write(json.dumps(row) + "\n")
    return path


def judge(port: int) -> str:
    return f"llm_judge:base_url=http://127.0.0.1:{port}/v1,model=x,max_retries=0,cache=false"


@pytest.mark.parametrize("command", ["score", "run"])
def test_a_metric_whose_every_item_errored_exits_1_with_its_reason(
    tmp_path: Path, command: str
) -> None:
    """The judge at a closed port: 3 of 3 items error, the reason said once, exit 1, reports."""
    pytest.importorskip("httpx")
    data = data_file(tmp_path)
    out = tmp_path / "out"
    if command == "score":
        proc = run_cli("score", data, "-m", judge(closed_port()), "-m", "exact_match", "--out", out)
    else:
        config = tmp_path / "run.yaml"
        config.write_text(
            f"data: {data.name}\nmetrics:\n  - '{judge(closed_port())}'\n  - exact_match\n"
            "out: out\n",
            encoding="utf-8",
        )
        proc = run_cli("run", config)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines.pop(0).startswith("Wrote results.json, ")
    assert lines[0].startswith("Error: llm_judge: 3 of 3 items error — connection error (")
    assert lines[0].endswith("(1 distinct reason).")
    assert "ConnectError" in lines[0]
    assert lines[1] == (
        "Error: llm_judge scored no item: every item not skipped errored. The reports were "
        "written; the exit code is 1."
    )
    assert "exact_match" not in proc.stderr  # a metric without errors is not mentioned
    saved = itemscore.RunResult.load_json(out / "results.json")
    assert saved.measurements["default.llm_judge"].counts[itemscore.Status.ERROR] == 3
    assert saved.measurements["default.exact_match"].value == 1.0


def test_rescore_says_so_too(tmp_path: Path) -> None:
    """rescore of a metric that errors on every item: the same summary, exit 1."""
    pytest.importorskip("httpx")
    data = data_file(tmp_path)
    out = tmp_path / "out"
    assert run_cli("score", data, "-m", "exact_match", "--out", out, "-q").returncode == 0
    proc = run_cli("rescore", out / "results.json", "-m", judge(closed_port()), "-q")
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("Error: llm_judge: 3 of 3 items error — ")


class _Flaky(Metric):
    """Errors on some items, with reasons that differ; ok on the others."""

    metric_id = "flaky_outcome_test"
    description = "Errors on ids that are multiples of three."
    reproducibility_class = "deterministic"
    required_inputs = ("output",)
    higher_is_better = True
    aggregation = "ratio"

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore | None:
        number = int(item.id)
        if number % 3 == 0:
            raise TimeoutError(f"slow {number % 2}")
        return self.ok()


def test_the_summary_counts_and_orders_the_reasons() -> None:
    """Counts come from the measurements, reasons most frequent first, per model."""
    items = [ItemResult(id=str(i), output="x", model=m) for m in ("a", "b") for i in range(12)]
    result = itemscore.score(items, [_Flaky()])
    summary = error_summary(result)
    assert not summary.failed  # some items were scored
    by_model = {m.model: m for m in summary.metrics}
    assert set(by_model) == {"a", "b"}
    errors = by_model["a"]
    assert (errors.errors, errors.items, errors.distinct) == (4, 12, 2)
    assert errors.reasons == (("TimeoutError: slow 0", 2), ("TimeoutError: slow 1", 2))
    line = errors.line(several_models=True)
    assert line.startswith("Warning: flaky_outcome_test · a: 4 of 12 items error — ")
    assert "TimeoutError: slow 0 (2 items); TimeoutError: slow 1 (2 items)" in line
    assert line.endswith("(2 distinct reasons).")
    clean = itemscore.score(items, ["answered_rate"])
    assert error_summary(clean).lines() == []


def test_a_failing_aggregate_fails_the_run() -> None:
    """A measurement whose aggregate raised is said and makes the command exit 1."""

    class BadAggregate(_Flaky):
        metric_id = "bad_aggregate_outcome_test"

        def aggregate(self, scores: object, ctx: MetricContext) -> itemscore.Estimate:
            raise ArithmeticError("no closed form")

    items = [ItemResult(id=str(i), output="x") for i in range(1, 3)]
    summary = error_summary(itemscore.score(items, [BadAggregate()]))
    assert summary.failed
    assert summary.lines()[0] == (
        "Error: bad_aggregate_outcome_test: its aggregate failed: ArithmeticError: no closed form"
    )


def test_seed_unused_knows_what_draws() -> None:
    """No bootstrap interval and only closed-form aggregates: the seed changes nothing."""
    items = [ItemResult(id=str(i), output="x", expected="x" if i % 2 else "y") for i in range(8)]
    assert seed_unused(itemscore.score(items, ["exact_match"]))
    assert not seed_unused(itemscore.score(items, ["token_f1"], ci_method="bootstrap"))
    assert not seed_unused(itemscore.score(items, ["f1"]))  # its own aggregate resamples
