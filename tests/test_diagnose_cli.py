"""``itemscore diagnose``: its tables on a real run with groups, --json, and bad inputs (exit 2).

The expected flags come from the truth table the run is built from, and the signal-to-noise
figures from Heineman et al.'s definition computed here with numpy, not from the diagnosis.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from itemscore import ItemResult, RunResult, score
from itemscore.cli._app import cli

MODELS = ("a", "b", "c", "d")
N_ITEMS = 30
#: Every model gives this same answer to these items, which the key rejects.
MISKEYED = {"q3", "q4", "q5"}
SCRIPT = Path(sys.executable).parent / "itemscore"


def _right(model: int, item: int) -> bool:
    """Items 0-2: every model right; 3-5: none (miskeyed); the rest by the model's strength."""
    if item < 3:
        return True
    if item < 6:
        return False
    return (item + 2 * model) % 5 < 1 + model


def _items() -> list[ItemResult]:
    items = []
    for i, model in enumerate(MODELS):
        for j in range(N_ITEMS):
            if _right(i, j):
                output = "yes"
            elif f"q{j}" in MISKEYED:
                output = "paris"
            else:  # wrong answers scatter: no agreement against the key
                output = f"no {model}"
            items.append(
                ItemResult(id=f"q{j}", model=model, group=f"g{j % 3}", output=output,
                           expected="yes")
            )  # fmt: skip
    return items


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("diagnose")
    return score(_items(), ["exact_match"], suite_id="diag").save_json(folder / "results.json")


def invoke(*args: str | Path) -> tuple[int, str]:
    run = CliRunner().invoke(cli, ["diagnose", *map(str, args)])
    return run.exit_code, run.output


def _snr(items: range) -> tuple[float, float, float]:
    """(signal, noise, snr) by the paper's definition over ``items`` (item numbers)."""
    x = np.array([[float(_right(i, j)) for j in items] for i in range(len(MODELS))])
    means = x.mean(axis=1)
    se = x.std(axis=1, ddof=1) / np.sqrt(x.shape[1])
    signal = float(np.max(np.abs(means[:, None] - means[None, :])) / means.mean())
    noise = float(se.mean() / means.mean())
    return signal, noise, signal / noise


def _section(text: str, title: str) -> list[str]:
    """The item ids listed under ``title: N items``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{title}: "))
    ids = []
    for line in lines[start + 1 :]:
        if not line.startswith("  "):
            break
        ids.append(line.split()[0])
    return ids


def test_diagnose_prints_its_tables_for_a_run_with_groups(saved: Path) -> None:
    """Exit 0; the headline SNR, the three flag tables and the noisy subtasks, lowest first."""
    code, text = invoke(saved)
    assert code == 0, text
    signal, noise, snr = _snr(range(N_ITEMS))
    assert text.splitlines()[0] == (
        f"exact_match: 4 models, {N_ITEMS} items; signal {signal:.3f}, noise {noise:.3f}, "
        f"SNR {snr:.1f}"
    )
    everyone = [j for j in range(N_ITEMS) if all(_right(i, j) for i in range(4))]
    no_one = [j for j in range(N_ITEMS) if not any(_right(i, j) for i in range(4))]
    assert set(_section(text, "Saturated")) == {f"q{j}" for j in everyone}
    assert set(_section(text, "Never solved")) == {f"q{j}" for j in no_one}
    assert set(_section(text, "Suspected label errors")) == MISKEYED
    assert f"Suspected label errors: {len(MISKEYED)} items" in text
    assert "models agree on 'paris'" in text
    lines = text.splitlines()
    head = lines.index("Noisy subtasks (lowest signal-to-noise first):")
    rows = lines[head + 1 : head + 4]
    by_snr = sorted(range(3), key=lambda g: _snr(range(g, N_ITEMS, 3))[2])
    assert [r.split()[0] for r in rows] == [f"g{g}" for g in by_snr]
    for row in rows:
        g = int(row.split()[0][1:])
        s, n, r = _snr(range(g, N_ITEMS, 3))
        assert row == f"  g{g}  items 10  SNR {r:.1f}  signal {s:.3f}  noise {n:.3f}"


def test_top_limits_each_table(saved: Path) -> None:
    """--top 1: one item per table, the counts unchanged."""
    code, text = invoke(saved, "--top", "1")
    assert code == 0, text
    assert _section(text, "Suspected label errors") == ["q3"]
    assert f"Suspected label errors: {len(MISKEYED)} items" in text


def test_json_is_the_whole_diagnosis(saved: Path) -> None:
    """--json prints Diagnosis.to_dict(): overall and per-group SNR, every item with flags."""
    code, text = invoke(saved, "--json")
    assert code == 0, text
    data = json.loads(text)
    assert data == json.loads(json.dumps(RunResult.load_json(saved).diagnose().to_dict()))
    signal, noise, snr = _snr(range(N_ITEMS))
    assert data["overall"]["snr"] == pytest.approx(snr, rel=1e-12)
    assert data["overall"]["signal"] == pytest.approx(signal, rel=1e-12)
    assert data["overall"]["noise"] == pytest.approx(noise, rel=1e-12)
    assert len(data["items"]) == N_ITEMS
    assert {g["group"] for g in data["groups"]} == {"g0", "g1", "g2"}
    flagged = {i["id"] for i in data["items"] if "label_error" in i["flags"]}
    assert flagged == MISKEYED


def test_an_unknown_metric_exits_2_and_suggests_the_label(saved: Path) -> None:
    code, text = invoke(saved, "-m", "exact_mach")
    assert code == 2
    assert str(saved) in text
    assert "'exact_mach'" in text
    assert "Did you mean 'exact_match'?" in text
    assert "Traceback" not in text


def test_a_run_without_model_names_exits_2_naming_the_role(tmp_path: Path) -> None:
    path = score(
        [ItemResult(id=str(i), output="a", expected="a") for i in range(3)], ["exact_match"]
    ).save_json(tmp_path / "results.json")
    code, text = invoke(path)
    assert code == 2
    assert str(path) in text
    assert "give the items the role `model`" in text


def test_a_run_of_one_model_exits_2_saying_what_to_add(tmp_path: Path) -> None:
    path = score(
        [ItemResult(id=str(i), model="x", output="a", expected="a") for i in range(3)],
        ["exact_match"],
    ).save_json(tmp_path / "results.json")
    code, text = invoke(path)
    assert code == 2
    assert "at least two models; the run has 'x'" in text
    assert "Score the other models' outputs of the same items into the same run" in text


def test_a_file_that_is_no_results_file_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text('{"a": 1}')
    code, text = invoke(path)
    assert code == 2
    assert str(path) in text
    assert "RunResult.save_json" in text


def test_a_negative_top_is_refused(saved: Path) -> None:
    """--top -1 would silently drop each table's last item: it is a usage error."""
    code, text = invoke(saved, "--top", "-1")
    assert code == 2
    assert "--top" in text
    assert "-1" in text


def test_the_installed_command_exits_2_on_stderr(saved: Path) -> None:
    """Through the real console script: the message on stderr, nothing on stdout."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ITEMSCORE_")}
    run = subprocess.run(
        [str(SCRIPT), "diagnose", str(saved), "--metric", "bleu"],
        capture_output=True, text=True, env=environ, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr.startswith("Error: ")
    assert "'bleu' is no label" in run.stderr or "('bleu') is no label" in run.stderr
