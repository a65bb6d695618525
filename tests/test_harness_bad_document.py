"""A harness document that cannot be read is an ``error`` item on every path (issue 19, item 1).

Scoring the file (``itemscore score``, ``itemscore.score(path)``) and scoring what
``itemscore.read_items`` gave (``itemscore.score(items)``) agree: the document is ``error`` for
every metric, with the reader's reason, counted in the measurement; reading it warns. The logs
are real ones of tests/data/harness, one document of each damaged in a copy.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

import itemscore
from itemscore import RunResult, Status
from itemscore.inputs._zip_member import read_member

HARNESS = Path(__file__).parent / "data" / "harness"
LM_RUN = HARNESS / "lm-eval" / "results" / "scripted-a"
QA_EVAL = HARNESS / "inspect" / "capitals_qa_scripted-a.eval"
SCRIPT = Path(sys.executable).parent / "itemscore"
METRICS = ["exact_match", "token_f1"]


def _lm_eval_log(tmp_path: Path) -> tuple[Path, str]:
    """The lm-eval run with its second document's responses not a list; the reason expected."""
    folder = tmp_path / "scripted-a"
    shutil.copytree(LM_RUN, folder)
    (path,) = folder.glob("samples_capitals_gen_*.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[1])
    row["resps"] = 5
    lines[1] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    reason = (
        f"{path}:2: task 'capitals_gen': 'resps' and 'filtered_resps' must be lists, one entry "
        "per request."
    )
    return path, reason


def _inspect_log(tmp_path: Path) -> tuple[Path, str]:
    """The inspect log with its first sample member not JSON; the reason expected."""
    bounds = {"max_bytes": 1 << 30, "max_ratio": 1 << 20, "ratio_floor": 0}
    with zipfile.ZipFile(QA_EVAL) as archive, QA_EVAL.open("rb") as raw:
        members = {
            i.filename: read_member(archive, raw, i, str(QA_EVAL), **bounds)
            for i in archive.infolist()
        }
    samples = sorted(n for n in members if n.startswith("samples/"))
    members[samples[0]] = b"{"
    path = tmp_path / QA_EVAL.name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in members.items():
            out.writestr(name, data)
    reason = (
        f"{path}: task 'capitals_qa': member {samples[0]}:1:2: not valid JSON (Expecting "
        "property name enclosed in double quotes)."
    )
    return path, reason


Damaged = Callable[[Path], tuple[Path, str]]
LOGS = pytest.mark.parametrize("damaged", [_lm_eval_log, _inspect_log], ids=["lm-eval", "inspect"])


def _assert_one_error(result: RunResult, reason: str) -> None:
    for metric in METRICS:
        measurement = result.measurements[f"default.{metric}"]
        assert measurement.counts[Status.ERROR] == 1, measurement.counts
        assert measurement.counts[Status.SKIP] == 0, measurement.counts
        assert measurement.n == 3
    (bad,) = [item for item in result.items if item.output is None]
    for metric in METRICS:
        score = bad.scores[metric]
        assert (score.status, score.value, score.reason) == (Status.ERROR, None, reason)


@LOGS
def test_read_items_then_score_makes_the_document_an_error(
    tmp_path: Path, damaged: Damaged
) -> None:
    path, reason = damaged(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        items = itemscore.read_items(path)
    assert len(items) == 4
    _assert_one_error(itemscore.score(items, METRICS), reason)


@LOGS
def test_read_items_warns_of_the_document(tmp_path: Path, damaged: Damaged) -> None:
    path, reason = damaged(tmp_path)
    with pytest.warns(UserWarning, match="could not be read") as caught:
        itemscore.read_items(path)
    (warning,) = caught
    assert str(warning.message) == (
        f"{path}: 1 of 4 documents could not be read; each is scored error for every metric. "
        f"The first: {reason}"
    )


@LOGS
def test_scoring_the_file_makes_the_document_an_error(tmp_path: Path, damaged: Damaged) -> None:
    path, reason = damaged(tmp_path)
    _assert_one_error(itemscore.score(path, METRICS), reason)


@LOGS
def test_the_command_line_counts_and_warns(tmp_path: Path, damaged: Damaged) -> None:
    path, reason = damaged(tmp_path)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ITEMSCORE_")}
    done = subprocess.run(
        [str(SCRIPT), "score", str(path), "-m", "exact_match", "--json", "--no-user-config"],
        capture_output=True,
        text=True,
        env=environ,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (measurement,) = json.loads(done.stdout)["measurements"]
    assert (measurement["counts"]["error"], measurement["counts"]["skip"]) == (1, 0)
    assert measurement["n"] == 3
    assert "exact_match: 1 of 4 items error" in " ".join(done.stderr.split())
    assert reason[:60] in " ".join(done.stderr.split())  # the terminal shows its start


@LOGS
def test_items_read_back_keep_the_reason_in_metadata(tmp_path: Path, damaged: Damaged) -> None:
    """The reason stays in ``metadata["error"]``, a text like any other."""
    path, reason = damaged(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        items = itemscore.read_items(path)
    (bad,) = [item for item in items if item.output is None]
    assert bad.metadata["error"] == reason
    assert isinstance(bad.metadata["error"], str)


def test_an_error_column_of_the_data_is_no_error(tmp_path: Path) -> None:
    """Rows with an ``error`` of their own (a JSON lines column) are scored as they are."""
    path = tmp_path / "d.jsonl"
    rows = [{"id": "a", "output": "x", "expected": "x", "error": "timeout at the API"}]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    items = itemscore.read_items(path)
    assert items[0].metadata["error"] == "timeout at the API"
    for result in (itemscore.score(items, METRICS), itemscore.score(path, METRICS)):
        (item,) = result.items
        assert item.scores["exact_match"].status == Status.OK


def test_the_document_is_an_error_in_worker_processes_too(tmp_path: Path) -> None:
    """Items sent to a process pool keep what marks them unreadable."""
    path, reason = _lm_eval_log(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        items = itemscore.read_items(path)
    _assert_one_error(itemscore.score(items, METRICS, executor="process", workers=2), reason)
