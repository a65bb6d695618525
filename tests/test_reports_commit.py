"""The report set is all or nothing across crashes and kills; killed runs leave nothing behind.

Issue 7, holes 13 and 14: a ``kill -9`` at any point of an export leaves the previous complete
set or the new complete set, and the next export removes what the killed one left.
"""

from __future__ import annotations

import fcntl
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import itemscore
from itemscore import ItemResult, RunResult
from itemscore.reports import BUILTIN_FORMATS, export
from itemscore.reports._commit import STATE_DIR, clean_stale

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the atomic switch needs POSIX links")

NAMES = list(BUILTIN_FORMATS.values())


def result_for(suite: str, n: int = 6) -> RunResult:
    data = [
        ItemResult(id=str(i), model=f"m{i % 2}", output="x" * (i % 3), expected=("x",))
        for i in range(n)
    ]
    return itemscore.score(data, ["exact_match", "answered_rate"], suite_id=suite)


def visible(out: Path) -> dict[str, bytes | None]:
    """What a reader sees in ``out``: each report's bytes, or None when absent."""
    seen: dict[str, bytes | None] = {}
    for name in NAMES:
        try:
            seen[name] = _report_bytes(out / name)
        except FileNotFoundError:
            seen[name] = None
    return seen


def _report_bytes(path: Path) -> bytes:
    """A report's bytes; a report that is a folder (eee/): its files' names and bytes."""
    if not path.is_dir():
        return path.read_bytes()
    files = sorted(p for p in path.rglob("*") if p.is_file())
    return b"".join(p.relative_to(path).as_posix().encode() + b"\0" + p.read_bytes() for p in files)


def leftovers(out: Path) -> list[str]:
    """Temporary links and sets other than the current one."""
    state = out / STATE_DIR
    current = os.readlink(state / "current") if (state / "current").is_symlink() else None
    found = [p.name for p in out.iterdir() if "itemscore-new" in p.name]
    if state.is_dir():
        found += [
            p.name
            for p in state.iterdir()
            if "itemscore-new" in p.name
            or (p.name.startswith("set-") and p.is_dir() and p.name != current)
        ]
    return found


def test_reports_are_links_into_one_current_set(tmp_path: Path) -> None:
    """Every report is a link through .itemscore/current into one complete set folder."""
    export(result_for("one"), tmp_path)
    state = tmp_path / STATE_DIR
    target = os.readlink(state / "current")
    assert target.startswith("set-")
    for name in NAMES:
        assert os.readlink(tmp_path / name) == f"{STATE_DIR}/current/{name}"
        assert (state / target / name).is_file() or (state / target / name).is_dir()
    assert leftovers(tmp_path) == []


def test_a_smaller_set_removes_the_reports_it_does_not_have(tmp_path: Path) -> None:
    """A new set never sits beside files of an older one: formats it lacks disappear."""
    export(result_for("one"), tmp_path)
    export(result_for("two"), tmp_path, ["json", "csv"])
    assert sorted(p.name for p in tmp_path.iterdir()) == [STATE_DIR, "results.json", "summary.csv"]
    assert len(list((tmp_path / STATE_DIR).glob("set-*"))) == 1
    assert RunResult.load_json(tmp_path / "results.json").suite_id == "two"


def test_plain_report_files_from_older_versions_are_adopted(tmp_path: Path) -> None:
    """Reports written as plain files are replaced by the new set, nothing else is touched."""
    (tmp_path / "summary.csv").write_text("old")
    (tmp_path / "table.tex").write_text("old")
    (tmp_path / "notes.txt").write_text("mine")
    export(result_for("new"), tmp_path, ["csv", "json"])
    assert (tmp_path / "summary.csv").read_text().startswith("suite,")
    assert not (tmp_path / "table.tex").exists()
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert leftovers(tmp_path) == []


def test_stale_sets_are_removed_only_when_their_writer_is_gone(tmp_path: Path) -> None:
    """A killed writer's set goes; a live writer's set, the current set and others' files stay."""
    export(result_for("one"), tmp_path)
    state = tmp_path / STATE_DIR
    dead = state / "set-20260101T000000-1-dead"
    dead.mkdir()
    (dead / ".lock").touch()
    (dead / "results.json").write_text("{}" * 1000)
    alive = state / "set-20260101T000000-2-live"
    alive.mkdir()
    with open(alive / ".lock", "wb") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)  # as a running writer holds it
        stale_link = tmp_path / ".summary.csv.itemscore-new-1234abcd"
        os.symlink("nowhere", stale_link)
        (state / "set-notes").write_text("a file, not a set folder")
        (tmp_path / ".other-tool-tmp").write_text("not ours")
        removed = clean_stale(tmp_path)
        assert sorted(p.name for p in removed) == sorted([dead.name, stale_link.name])
        assert alive.is_dir()
    assert (state / "set-notes").exists()
    assert (tmp_path / ".other-tool-tmp").exists()
    export(result_for("two"), tmp_path)  # the writer is gone now: its set goes too
    assert not alive.exists()
    assert leftovers(tmp_path) == []


def _export_and_die_at(out: Path, step: int, result: RunResult, formats: list[str]) -> int:
    """Fork a child that exports and kills itself (SIGKILL) at its ``step``-th file operation.

    Returns:
        The child's exit status: -SIGKILL when it was killed, 0 when it finished first.
    """
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        try:
            calls = [0]
            real = {name: getattr(os, name) for name in ("replace", "symlink", "link", "mkdir")}

            def dying(name: str) -> Any:
                def call(*args: Any, **kwargs: Any) -> Any:
                    calls[0] += 1
                    if calls[0] == step:
                        os.kill(os.getpid(), signal.SIGKILL)
                    return real[name](*args, **kwargs)

                return call

            for name in real:
                setattr(os, name, dying(name))
            export(result, out, formats)
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


@pytest.mark.parametrize("older_version", [False, True], ids=["links", "plain-files"])
def test_a_kill_at_any_step_leaves_the_old_or_the_new_set(
    tmp_path: Path, older_version: bool
) -> None:
    """SIGKILL at every file operation of an export: the folder shows one complete set."""
    old_result, new_result = result_for("old"), result_for("new", n=9)
    reference_old, reference_new = tmp_path / "ref-old", tmp_path / "ref-new"
    export(old_result, reference_old, ["json", "items", "csv", "xlsx"])
    export(new_result, reference_new, ["json", "items", "csv", "tex", "html"])
    old, new = visible(reference_old), visible(reference_new)
    killed = 0
    for step in range(1, 60):
        out = tmp_path / f"out-{step}"
        if older_version:  # as an earlier itemscore left it: plain files
            out.mkdir()
            for name, data in old.items():
                if data is not None:
                    (out / name).write_bytes(data)
        else:
            export(old_result, out, ["json", "items", "csv", "xlsx"])
        status = _export_and_die_at(out, step, new_result, ["json", "items", "csv", "tex", "html"])
        seen = visible(out)
        diff = [n for n in NAMES if seen[n] != old[n]], [n for n in NAMES if seen[n] != new[n]]
        assert seen in (old, new), f"mixed set after a kill at step {step}: {diff}"
        if status == 0:
            assert seen == new
            break
        killed += 1
        export(new_result, out, ["json", "items", "csv", "tex", "html"])  # the next run
        assert visible(out) == new
        assert leftovers(out) == []
    assert killed >= 5  # the loop did kill at every step before the export finished


def test_results_json_refers_to_items_jsonl_and_reads_back(tmp_path: Path) -> None:
    """With items.jsonl in the set, results.json holds a reference, not the items again."""
    result = result_for("qa")
    export(result, tmp_path, ["json", "items"])
    document = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert document["items"]["file"] == "items.jsonl"
    assert document["items"]["count"] == len(result.items)
    back = RunResult.load_json(tmp_path / "results.json")
    assert list(back.items) == list(result.items)
    alone = tmp_path / "alone"
    export(result, alone, ["json"])
    inline = json.loads((alone / "results.json").read_text(encoding="utf-8"))
    assert len(inline["items"]) == len(result.items)
    assert list(RunResult.load_json(alone / "results.json").items) == list(result.items)


def test_a_tampered_or_escaping_items_reference_is_refused(tmp_path: Path) -> None:
    """A results file from elsewhere cannot point outside its folder or at changed items."""
    export(result_for("qa"), tmp_path, ["json", "items"])
    path = tmp_path / "results.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("../items.jsonl", "/etc/passwd", "..", "a\\b"):
        document["items"]["file"] = name
        (copy / "results.json").write_text(json.dumps(document))
        with pytest.raises(itemscore.ResultsFormatError, match="must be a file name"):
            RunResult.load_json(copy / "results.json")
    document["items"]["file"] = "items.jsonl"
    (copy / "results.json").write_text(json.dumps(document))
    (copy / "items.jsonl").write_bytes((tmp_path / "items.jsonl").read_bytes() + b"\n{}")
    with pytest.raises(itemscore.ResultsFormatError, match="SHA-256 differs"):
        RunResult.load_json(copy / "results.json")
    (copy / "items.jsonl").unlink()
    with pytest.raises(itemscore.ResultsFormatError, match=r"copy results\.json together"):
        RunResult.load_json(copy / "results.json")


def test_kill_a_real_run_at_random_points(tmp_path: Path) -> None:
    """`itemscore score --out` killed (SIGKILL) at seeded random moments keeps the last set."""
    data = tmp_path / "data.jsonl"
    rng = random.Random(20261130)
    with open(data, "w", encoding="utf-8") as handle:
        for i in range(8_000):
            row = {"id": str(i), "model": f"m{i % 3}", "output": "x" * rng.randint(0, 3)}
            handle.write(json.dumps({**row, "expected": ["x"]}) + "\n")
    out = tmp_path / "out"

    def command(suite: str) -> list[str]:
        metrics = ["-m", "exact_match", "-m", "answered_rate"]
        options = ["--suite", suite, "--out", str(out), "-q"]
        return [sys.executable, "-m", "itemscore", "score", str(data), *metrics, *options]

    started = time.monotonic()
    subprocess.run(command("run0"), check=True, capture_output=True)
    duration = time.monotonic() - started
    complete = visible(out)
    for attempt in range(1, 4):
        proc = subprocess.Popen(command(f"run{attempt}"), stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.3, 1.0) * duration)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        seen = visible(out)
        suite = RunResult.load_json(out / "results.json").suite_id  # the set reads as a whole
        if seen != complete:  # the run finished before the kill: its set is the new one
            assert suite == f"run{attempt}"
            complete = seen
        assert all(suite.encode() in seen[n] for n in ("summary.csv", "table.tex"))  # type: ignore[operator]
    subprocess.run(command("last"), check=True, capture_output=True)
    assert leftovers(out) == []
    assert RunResult.load_json(out / "results.json").suite_id == "last"


_FORKED_EXPORT = """
import sys
from pathlib import Path
import itemscore, itemscore.reports as reports
import itemscore.reports.results_xlsx as results_xlsx
from itemscore import ItemResult
out, mode = Path(sys.argv[1]), sys.argv[2]
data = [ItemResult(id=str(i), model=f"m{i % 2}", output="x" * (i % 3), expected=("x",))
        for i in range(40)]
result = itemscore.score(data, ["exact_match", "answered_rate"], suite_id="same")
reports.PARALLEL_FROM = 0 if mode != "serial" else 10**9
if mode == "broken":
    def broken(result, path):
        raise OSError("disk full")
    results_xlsx.write = broken
try:
    reports.export(result, out)
except itemscore.ItemscoreError as exc:
    print(exc)
"""


def _forked_export(out: Path, mode: str) -> str:
    """Export in a fresh interpreter (no threads: the fork is taken), return what it printed."""
    return subprocess.run(
        [sys.executable, "-c", _FORKED_EXPORT, str(out), mode],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def test_two_process_writing_gives_the_same_reports(tmp_path: Path) -> None:
    """Large runs write xlsx and html in a forked process: byte for byte the same reports."""
    _forked_export(tmp_path / "serial", "serial")
    _forked_export(tmp_path / "forked", "forked")
    serial, forked = visible(tmp_path / "serial"), visible(tmp_path / "forked")
    assert all(data is not None for data in forked.values())
    for name in ("items.jsonl", "summary.csv", "table.tex", "results.xlsx"):
        assert forked[name] == serial[name], name
    created = re.compile(rb"created [0-9T:Z-]+")  # the run's own time differs
    assert created.sub(b"", forked["report.html"] or b"") == created.sub(
        b"", serial["report.html"] or b""
    )


def test_a_failure_in_the_writing_process_is_raised(tmp_path: Path) -> None:
    """A writer failing in the forked process fails the export; the old set stays."""
    export(result_for("old"), tmp_path)
    before = visible(tmp_path)
    printed = _forked_export(tmp_path, "broken")
    assert "Writing results.xlsx, report.html failed: OSError: disk full" in printed
    assert visible(tmp_path) == before
    assert leftovers(tmp_path) == []
