"""The report set is all or nothing across crashes and kills; killed runs leave nothing behind.

Issue 7, holes 13 and 14: a ``kill -9`` at any point of an export leaves the previous complete
set or the new complete set, and the next export removes what the killed one left.
"""

from __future__ import annotations

import fcntl
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import itemscore
from itemscore import ItemResult, RunResult
from itemscore._commit import STATE_DIR, FolderBusyError, clean_stale
from itemscore.reports import BUILTIN_FORMATS, ON_REQUEST, export

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the atomic switch needs POSIX links")

NAMES = [f for name, f in BUILTIN_FORMATS.items() if name not in ON_REQUEST]


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


def test_files_itemscore_did_not_write_are_never_replaced(tmp_path: Path) -> None:
    """A plain file or a folder under a report's name stops the export before it writes."""
    (tmp_path / "summary.csv").write_text("mine")
    (tmp_path / "notes.txt").write_text("mine too")
    with pytest.raises(itemscore.ConfigError, match=r"summary\.csv is a file itemscore did not"):
        export(result_for("new"), tmp_path, ["csv", "json"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "summary.csv"]
    assert (tmp_path / "summary.csv").read_text() == "mine"
    export(result_for("one"), tmp_path, ["json", "tex"])  # names it does not take are free
    assert (tmp_path / "summary.csv").read_text() == "mine"
    assert (tmp_path / "notes.txt").read_text() == "mine too"


def test_a_report_of_an_older_set_is_removed_but_a_users_file_is_kept(tmp_path: Path) -> None:
    """Only links into the current set are removed when a smaller set replaces it."""
    export(result_for("one"), tmp_path, ["json", "csv"])
    (tmp_path / "table.tex").write_text("my own table")
    export(result_for("two"), tmp_path, ["json"])
    assert not os.path.lexists(tmp_path / "summary.csv")
    assert (tmp_path / "table.tex").read_text() == "my own table"


@pytest.mark.parametrize("kind", ["folder", "link-to-folder", "link-elsewhere"])
def test_a_report_name_taken_by_a_folder_or_foreign_link_is_refused(
    tmp_path: Path, kind: str
) -> None:
    """Issue 16.15: found before any work, nothing written, the folder named."""
    out = tmp_path / "out"
    out.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("keep")
    if kind == "folder":
        (out / "summary.csv").mkdir()
        name, message = "summary.csv", r"summary\.csv is a folder"
    elif kind == "link-to-folder":
        os.symlink(elsewhere, out / "results.json")
        name, message = "results.json", r"results\.json is a folder \(or a link to one\)"
    else:
        os.symlink(elsewhere / "keep.txt", out / "results.json")
        name, message = "results.json", r"results\.json is a file itemscore did not write"
    before = sorted(p.name for p in out.iterdir())
    with pytest.raises(itemscore.ConfigError, match=message):
        export(result_for("qa"), out)
    assert sorted(p.name for p in out.iterdir()) == before == [name]
    assert (elsewhere / "keep.txt").read_text() == "keep"


def _copy_following_links(source: Path, target: Path, how: str) -> None:
    if how == "copytree":
        shutil.copytree(source, target)  # follows links: symlinks=False
    else:
        subprocess.run(["cp", "-rL", str(source), str(target)], check=True)


@pytest.mark.parametrize("how", ["copytree", "cp-rL"])
def test_a_folder_copied_with_links_followed_is_refused_with_the_fix(
    tmp_path: Path, how: str
) -> None:
    """Issue 16.14: refused before any work, nothing touched; done as said, it works again."""
    source = tmp_path / "source"
    export(result_for("old"), source)
    copy = tmp_path / "copy"
    _copy_following_links(source, copy, how)
    assert (copy / STATE_DIR / "current").is_dir()
    before = {p.relative_to(copy): p.read_bytes() for p in copy.rglob("*") if p.is_file()}
    with pytest.raises(itemscore.ConfigError, match=r"copied with its links followed") as info:
        export(result_for("new"), copy)
    assert "symlinks=True" in str(info.value)
    after = {p.relative_to(copy): p.read_bytes() for p in copy.rglob("*") if p.is_file()}
    assert after == before
    shutil.rmtree(copy / STATE_DIR)  # the fix the message gives
    for name in NAMES:
        report = copy / name
        if report.is_dir() and not report.is_symlink():  # a report that is a folder (eee)
            shutil.rmtree(report)
        else:
            report.unlink(missing_ok=True)
    (copy / "results.mdtable").unlink(missing_ok=True)
    export(result_for("new"), copy)
    assert RunResult.load_json(copy / "results.json").suite_id == "new"
    assert leftovers(copy) == []


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


def test_a_kill_at_any_step_leaves_the_old_or_the_new_set(tmp_path: Path) -> None:
    """SIGKILL at every file operation of an export: the folder shows one complete set."""
    old_result, new_result = result_for("old"), result_for("new", n=9)
    reference_old, reference_new = tmp_path / "ref-old", tmp_path / "ref-new"
    export(old_result, reference_old, ["json", "items", "csv", "xlsx"])
    export(new_result, reference_new, ["json", "items", "csv", "tex", "html"])
    old, new = visible(reference_old), visible(reference_new)
    killed = 0
    for step in range(1, 60):
        out = tmp_path / f"out-{step}"
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


def test_results_json_refers_to_items_parquet_and_reads_back(tmp_path: Path) -> None:
    """With items.parquet in the set, results.json holds a reference, not the items again."""
    result = result_for("qa")
    export(result, tmp_path, ["json", "items"])
    document = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert document["items"]["file"] == "items.parquet"
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
    for name in ("../items.parquet", "/etc/passwd", "..", "a\\b"):
        document["items"]["file"] = name
        (copy / "results.json").write_text(json.dumps(document))
        with pytest.raises(itemscore.ResultsFormatError, match="must be a file name"):
            RunResult.load_json(copy / "results.json")
    document["items"]["file"] = "items.parquet"
    (copy / "results.json").write_text(json.dumps(document))
    (copy / "items.parquet").write_bytes((tmp_path / "items.parquet").read_bytes() + b"\n{}")
    with pytest.raises(itemscore.ResultsFormatError, match="SHA-256 differs"):
        RunResult.load_json(copy / "results.json")
    (copy / "items.parquet").unlink()
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


def test_a_failing_writer_fails_the_export_and_keeps_the_old_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer that fails (a full disk) fails the export, naming it; the old set stays."""
    import itemscore.reports.results_xlsx as results_xlsx

    export(result_for("old"), tmp_path)
    before = visible(tmp_path)

    def broken(result: RunResult, path: Path) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(results_xlsx, "write", broken)
    with pytest.raises(itemscore.ItemscoreError) as info:
        export(result_for("new"), tmp_path)
    assert f"results.xlsx into {tmp_path} failed: disk full (writing {tmp_path}/" in str(info.value)
    assert visible(tmp_path) == before
    assert leftovers(tmp_path) == []


_HOLDER = """
import sys
from pathlib import Path
import itemscore
from itemscore.reports import Export
from itemscore import ItemResult
data = [ItemResult(id="1", output="x", expected=("x",))]
result = itemscore.score(data, ["exact_match"], suite_id="first")
export = Export(Path(sys.argv[1]), ["json", "csv"])
print("claimed", flush=True)
sys.stdin.read()  # until the test closes the pipe
export.finish(result)
print("finished", flush=True)
"""


def test_a_second_writer_is_refused_while_the_first_holds_the_folder(tmp_path: Path) -> None:
    """Issue 15.2: a run into a folder another live process writes stops at once, untouched."""
    export(result_for("zero"), tmp_path)
    before = visible(tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "claimed\n"
        with pytest.raises(FolderBusyError, match=rf"pid {holder.pid}, since .*-c") as info:
            export(result_for("second"), tmp_path)
        assert "wait for the other to finish, or write into another folder" in str(info.value)
        assert visible(tmp_path) == before
        assert leftovers(tmp_path) == []
    finally:
        out, _ = holder.communicate("", timeout=60)
    assert out == "finished\n"
    assert RunResult.load_json(tmp_path / "results.json").suite_id == "first"
    export(result_for("third"), tmp_path)  # the folder is free again
    assert RunResult.load_json(tmp_path / "results.json").suite_id == "third"


def test_a_killed_holder_frees_the_folder(tmp_path: Path) -> None:
    """The claim goes with its process, even by SIGKILL: the next run writes as usual."""
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(tmp_path / "out")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    assert holder.stdout.readline() == "claimed\n"
    holder.kill()
    holder.communicate(timeout=60)
    export(result_for("next"), tmp_path / "out")
    assert RunResult.load_json(tmp_path / "out" / "results.json").suite_id == "next"
    assert leftovers(tmp_path / "out") == []


def test_concurrent_cli_runs_leave_one_complete_set(tmp_path: Path) -> None:
    """Issue 15.2: four `itemscore score` processes into one folder at once: one whole set.

    Each run either wins (exit 0) or is told another run holds the folder (exit 1) before it
    scores; the folder ends with the complete set of one winner, nothing mixed or left over.
    """
    data = tmp_path / "data.jsonl"
    with open(data, "w", encoding="utf-8") as handle:
        for i in range(3_000):
            row = {"id": str(i), "model": f"m{i % 2}", "output": "x" * (i % 3), "expected": "x"}
            handle.write(json.dumps(row) + "\n")
    out = tmp_path / "out"
    formats = [["json", "csv"], ["json", "tex"], ["json", "items", "csv"], ["json", "html"]]
    procs = []
    for index, chosen in enumerate(formats):
        reports = [arg for name in chosen for arg in ("--report", name)]
        command = [sys.executable, "-m", "itemscore", "score", str(data), "-m", "exact_match"]
        command += ["--suite", f"run{index}", "--out", str(out), "-q", *reports]
        procs.append(subprocess.Popen(command, stderr=subprocess.PIPE, text=True))
    errors = [proc.communicate(timeout=300)[1] for proc in procs]
    outcomes = [(proc.returncode, stderr) for proc, stderr in zip(procs, errors)]
    winners = [i for i, (code, _) in enumerate(outcomes) if code == 0]
    assert winners, outcomes
    for code, stderr in outcomes:
        assert code in (0, 1), stderr
        if code == 1:
            assert "is being written by another itemscore process (pid " in stderr
            assert "Traceback" not in stderr
    suite = RunResult.load_json(out / "results.json").suite_id
    index = int(suite.removeprefix("run"))
    assert index in winners
    expected = sorted(BUILTIN_FORMATS[name] for name in formats[index])
    assert sorted(p.name for p in out.iterdir() if p.name != STATE_DIR) == expected
    for name in expected:
        if name != "items.parquet":  # compressed, and the suite is in results.json only
            assert suite.encode() in (out / name).read_bytes()
    assert leftovers(out) == []


def test_without_links_a_manifest_tells_itemscores_files_from_the_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where links are missing (Windows), reports are plain files recorded by their SHA-256."""
    import itemscore._commit as commit

    monkeypatch.setattr(commit, "_atomic_possible", lambda: False)
    export(result_for("one"), tmp_path, ["json", "csv"])
    assert not (tmp_path / "summary.csv").is_symlink()
    export(result_for("two"), tmp_path, ["json", "csv"])  # its own files: replaced
    assert RunResult.load_json(tmp_path / "results.json").suite_id == "two"
    (tmp_path / "summary.csv").write_text("edited", encoding="utf-8")
    with pytest.raises(itemscore.ConfigError, match=r"summary\.csv is a file itemscore did not"):
        export(result_for("three"), tmp_path, ["json", "csv"])
    assert (tmp_path / "summary.csv").read_text(encoding="utf-8") == "edited"


def test_a_run_refused_before_the_holder_says_who_it_is_still_names_it(tmp_path: Path) -> None:
    """A holder locks the folder, then writes who it is: a run refused in between waits for it.

    Without the wait, four runs started at once told the losers only "another itemscore
    process", with no pid to look for.
    """
    import threading

    from itemscore._commit import busy_holder, claim

    out = tmp_path / "out"
    held = claim(out, command=["itemscore", "score", "x.jsonl"])
    lock = out / STATE_DIR / "lock"
    said = lock.read_bytes()
    with open(lock, "r+b") as handle:  # the moment between the holder's lock and its name
        handle.truncate()
    later = threading.Timer(0.3, lambda: lock.write_bytes(said))
    later.start()
    try:
        holder = busy_holder(out)
    finally:
        later.join()
        held.release()
    assert holder is not None
    assert f"another itemscore process (pid {os.getpid()}, since " in holder
    assert holder.endswith(": itemscore score x.jsonl)")
