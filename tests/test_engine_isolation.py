"""Isolation from what kills, hangs or bloats a worker: one item costs that item only.

- an item that kills its worker (``os._exit``) is found by cutting its shard in two until it
  is alone: it is an ``error`` naming the lost worker, every other item is scored;
- a run that is killed or stopped leaves no worker, no lock on its output folder and no
  temporary folder behind;
- every run has an item time limit unless switched off, and workers may have a memory limit:
  what exceeds either is an ``error`` item, never a dead run.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import sys
from collections.abc import Iterator
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

import itemscore
from itemscore import ItemResult, Status

WORKERS = Path(__file__).parent / "workers"


@pytest.fixture
def worker_metrics(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The module of metrics that worker processes (Dask's too) can import."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(WORKERS), *sys.path]))
    monkeypatch.syspath_prepend(str(WORKERS))
    import itemscore_isolation_workers  # type: ignore[import-not-found]

    return itemscore_isolation_workers


def plain_items(n: int) -> list[ItemResult]:
    return [ItemResult(id=f"i{i}", output="x", expected="x") for i in range(n)]


def write_jsonl(path: Path, n: int) -> Path:
    rows = [{"id": f"q{i}", "output": "a", "expected": "a"} for i in range(n)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def errors_of(result: itemscore.RunResult, label: str) -> dict[str, str | None]:
    """Item id -> reason of every item that is not ``ok`` under ``label``."""
    return {
        item.id: item.scores[label].reason
        for item in result.items
        if item.scores[label].status is not Status.OK
    }


def assert_lost_alone(reason: str | None, item_id: str) -> None:
    assert reason is not None
    assert reason.startswith("worker lost: "), reason
    assert reason.endswith(f"(item {item_id!r})"), reason


# -- 1. an item that kills its worker -------------------------------------------------------


def test_an_item_that_kills_its_worker_costs_that_item_only(worker_metrics: Any) -> None:
    """Process pool, items in memory: two killers in one shard, one in another."""
    killers = ("i45", "i47", "i300")
    result = itemscore.score(
        plain_items(400),
        [worker_metrics.KillsOn(",".join(killers)), "exact_match"],
        executor="process",
        workers=2,
    )
    assert [item.id for item in result.items] == [f"i{i}" for i in range(400)]
    for label in ("kills_on_test", "exact_match"):  # the item's worker died for every metric
        lost = errors_of(result, label)
        assert sorted(lost) == sorted(killers)
        for item_id, reason in lost.items():
            assert_lost_alone(reason, item_id)
        assert result.measurements[f"default.{label}"].n == 397


def test_an_item_that_kills_its_worker_while_reading_a_file_costs_that_item_only(
    tmp_path: Path, worker_metrics: Any
) -> None:
    """Process pool, a file read by the workers in parts, items kept in memory."""
    path = write_jsonl(tmp_path / "d.jsonl", 600)
    result = itemscore.score(
        path, [worker_metrics.KillsOn("q45,q400"), "exact_match"], executor="process", workers=2
    )
    assert [item.id for item in result.items] == [f"q{i}" for i in range(600)]
    lost = errors_of(result, "kills_on_test")
    assert sorted(lost) == ["q400", "q45"]
    for item_id, reason in lost.items():
        assert_lost_alone(reason, item_id)
    assert result.measurements["default.exact_match"].n == 598


def test_the_items_file_written_as_the_run_goes_holds_every_item_once(
    tmp_path: Path, worker_metrics: Any
) -> None:
    """The command line's way (items.parquet written as parts arrive): in order, once each."""
    from itemscore._run import score_opened
    from itemscore.engine._files import Keep
    from itemscore.inputs import open_source

    path = write_jsonl(tmp_path / "d.jsonl", 300)
    out = tmp_path / "items.parquet"
    with open_source(path, None) as source:
        result = score_opened(
            source,
            [worker_metrics.KillsOn("q7"), "exact_match"],
            keep=Keep("parquet", out),
            executor="process",
            workers=2,
        )
    table = pq.read_table(out)
    assert table.column("id").to_pylist() == [f"q{i}" for i in range(300)]
    states = table.column("score:kills_on_test").combine_chunks().field("status").to_pylist()
    assert [i for i, state in enumerate(states) if state != 0] == [7]
    assert result.measurements["default.kills_on_test"].counts[Status.ERROR] == 1


@pytest.mark.slow
def test_an_item_that_kills_its_dask_worker_costs_that_item_only(worker_metrics: Any) -> None:
    """A local Dask cluster: the lost task is cut in two until the killer is alone."""
    pytest.importorskip("distributed")
    result = itemscore.score(
        plain_items(80), [worker_metrics.KillsOn("i45")], executor="dask", workers=2
    )
    lost = errors_of(result, "kills_on_test")
    assert list(lost) == ["i45"]
    assert_lost_alone(lost["i45"], "i45")
    assert result.measurements["default.kills_on_test"].n == 79


def _dies_on(numbers: list[int]) -> list[int]:
    """A task of numbers whose worker "dies" (its pool breaks) when it holds a negative one."""
    if any(n < 0 for n in numbers):
        raise BrokenProcessPool("A child process terminated abruptly")
    return [n * n for n in numbers]


def _number_tasks(numbers: list[int]) -> Any:
    from itemscore.engine._dispatch import Lost, Split, Task

    def task(start: int, stop: int) -> Task:
        def split() -> Split:
            middle = (start + stop) // 2

            def join(a: Any, b: Any) -> list[Any]:
                return [*(a if isinstance(a, list) else [a]), *(b if isinstance(b, list) else [b])]

            return Split(task(start, middle), task(middle, stop), join)

        return Task(
            _dies_on, (numbers[start:stop],), f"numbers {start}-{stop}",
            split if stop - start > 1 else None,
        )  # fmt: skip

    return task, Lost


def test_a_task_cut_in_two_ends_once_with_its_halves_joined_in_order() -> None:
    """run_tasks: the caller sees each of its tasks once, under its own index, in item order."""
    from itemscore.engine._dispatch import run_tasks
    from itemscore.executors._engine import Engine

    numbers = list(range(40))
    numbers[13] = -1
    numbers[29] = -2
    task, lost_type = _number_tasks(numbers)
    pools: list[concurrent.futures.Executor] = []

    def fresh() -> concurrent.futures.Executor:
        pools.append(concurrent.futures.ThreadPoolExecutor(2))
        return pools[-1]

    engine = Engine("process", fresh(), workers=2, parallel=True, renew=fresh,
                    close=lambda pool: pool.shutdown())  # fmt: skip
    results: dict[int, list[Any]] = {}

    def on_done(index: int, result: Any) -> None:
        assert index not in results
        results[index] = result if isinstance(result, list) else [result]

    try:
        tasks = [task(0, 20), task(20, 40)]
        run_tasks(engine, tasks, retries=1, deadline=60, on_done=on_done)
    finally:
        engine.close()
    flat = [*results[0], *results[1]]
    assert len(flat) == 40
    for i, value in enumerate(flat):
        if i in (13, 29):
            assert isinstance(value, lost_type)
            assert value.reason.endswith(f"(numbers {i}-{i + 1})")
        else:
            assert value == i * i


class _Payload:
    """An argument a task holds (a shard's items), to see when it is let go."""


def _payload_size(payload: _Payload) -> int:
    return 1


def test_a_finished_task_lets_its_arguments_go() -> None:
    """run_tasks keeps no argument of a task done: a shard's items are freed as it ends."""
    import gc
    import weakref

    from itemscore.engine._dispatch import Task, run_tasks
    from itemscore.executors._engine import Engine

    refs: list[weakref.ref[_Payload]] = []

    def tasks() -> Iterator[Task]:
        for index in range(12):
            payload = _Payload()
            refs.append(weakref.ref(payload))
            yield Task(_payload_size, (payload,), f"task {index}", None)
            del payload

    pool = concurrent.futures.ThreadPoolExecutor(2)
    engine = Engine("process", pool, workers=2, parallel=True, close=lambda p: p.shutdown())
    alive: list[int] = []

    def on_done(index: int, result: Any) -> None:
        assert result == 1
        gc.collect()
        alive.append(sum(ref() is not None for ref in refs))

    try:
        run_tasks(engine, tasks(), retries=0, deadline=None, on_done=on_done)
    finally:
        engine.close()
    assert len(alive) == 12
    assert max(alive) <= 2 * 2 + 1  # the window of tasks in flight, and the one just taken


def test_cutting_stops_after_its_budget_when_every_item_kills(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A worker that dies on anything is not cut down to each item: the budget ends it."""
    from itemscore.engine import _dispatch
    from itemscore.executors._engine import Engine

    monkeypatch.setattr(_dispatch, "BISECTIONS", 3)
    task, lost_type = _number_tasks([-1] * 64)
    renewed: list[int] = []

    def fresh() -> concurrent.futures.Executor:
        renewed.append(1)
        return concurrent.futures.ThreadPoolExecutor(1)

    engine = Engine("process", fresh(), workers=1, parallel=True, renew=fresh,
                    close=lambda pool: pool.shutdown())  # fmt: skip
    results: list[Any] = []
    try:
        _dispatch.run_tasks(
            engine, [task(0, 64)], retries=1, deadline=60, on_done=lambda i, r: results.append(r)
        )
    finally:
        engine.close()
    assert len(results) == 1
    assert all(isinstance(piece, lost_type) for piece in results[0])
    assert len(results[0]) == 4  # three cuts: four pieces, each lost whole
    assert len(renewed) < 20


# -- 7. workers, locks and temporary folders outlive no run ----------------------------------

LINUX = Path("/proc/self/stat").exists()


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux ``/proc``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_bytes()
            except OSError:
                continue
            if int(stat[stat.rfind(b")") + 2 :].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting to be reaped is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def _wait_until(check: Any, seconds: float = 30.0) -> bool:
    import time

    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        if check():
            return True
        time.sleep(0.05)
    return bool(check())


def _start_slow_run(tmp_path: Path, out: Path) -> tuple[Any, list[int]]:
    """A command-line run on two workers that takes a while; once both workers score."""
    import subprocess

    data = write_jsonl(tmp_path / "d.jsonl", 400)
    (tmp_path / "tmp").mkdir(exist_ok=True)
    env = {
        **os.environ,
        "TMPDIR": str(tmp_path / "tmp"),
        "PYTHONPATH": os.pathsep.join([str(WORKERS), *sys.path]),
    }
    main = subprocess.Popen(
        [sys.executable, str(WORKERS / "itemscore_isolation_workers.py"), "score", str(data),
         "-m", "slow_test", "--workers", "2", "--out", str(out)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    workers: list[int] = []

    def scoring() -> bool:
        workers[:] = _children(main.pid)
        return len(workers) == 2 and (out / ".itemscore" / "lock").exists()

    assert _wait_until(scoring), main.communicate(timeout=30)
    return main, workers


@pytest.mark.skipif(not LINUX, reason="finds the workers through /proc")
def test_sigterm_stops_the_run_as_ctrl_c_does_and_leaves_nothing(tmp_path: Path) -> None:
    """SIGTERM: the workers stop, the spool and the output folder the run made are removed."""
    import signal

    out = tmp_path / "out"
    main, workers = _start_slow_run(tmp_path, out)
    main.send_signal(signal.SIGTERM)
    _, err = main.communicate(timeout=60)
    assert main.returncode == 1, err  # as after Ctrl-C
    assert "Aborted!" in err
    assert _wait_until(lambda: not any(_running(pid) for pid in workers), 10)
    assert list((tmp_path / "tmp").iterdir()) == []  # no itemscore-spool-* left
    assert not out.exists()  # made by the run, nothing in it: removed


@pytest.mark.skipif(not LINUX, reason="finds the workers through /proc")
def test_workers_of_a_killed_run_end_and_free_its_output_folder(tmp_path: Path) -> None:
    """kill -9 of the run: its workers end with it, and the next run into the folder writes."""
    import signal
    import subprocess

    out = tmp_path / "out"
    main, workers = _start_slow_run(tmp_path, out)
    main.send_signal(signal.SIGKILL)
    main.communicate(timeout=60)
    assert _wait_until(lambda: not any(_running(pid) for pid in workers), 10)
    again = subprocess.run(
        [sys.executable, str(WORKERS / "itemscore_isolation_workers.py"), "score",
         str(tmp_path / "d.jsonl"), "-m", "exact_match", "--out", str(out)],
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(WORKERS), *sys.path])},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert (out / "results.json").exists()


def test_a_forked_child_does_not_keep_the_claim_on_the_output_folder(tmp_path: Path) -> None:
    """A worker forked while the folder is claimed does not hold it after its parent lets go."""
    import multiprocessing

    from itemscore._commit import claim

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform")
    context = multiprocessing.get_context("fork")
    held = claim(tmp_path / "out", command=["first"])
    started = context.Event()
    child = context.Process(target=_started_then_asleep, args=(started,))
    child.start()
    try:
        assert started.wait(30)  # the child runs: what it does as it starts is done
        held.release()
        claim(tmp_path / "out", command=["second"]).release()  # refused while the child held it
    finally:
        child.kill()
        child.join()


def _started_then_asleep(started: Any) -> None:
    """A forked child that says it runs, then waits to be killed."""
    import time

    started.set()
    time.sleep(60)


def _dead_pid() -> int:
    import subprocess

    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


@pytest.mark.skipif(not LINUX, reason="process start times come from /proc")
@pytest.mark.parametrize(
    ("who", "taken"),
    [
        pytest.param("dead", True, id="its-pid-is-gone"),
        pytest.param("reused", True, id="its-pid-runs-another-process"),
        pytest.param("old-file", True, id="dead-pid-no-start-time-recorded"),
        pytest.param("alive", False, id="its-holder-lives"),
        pytest.param("other-host", False, id="another-machines-process"),
    ],
)
def test_a_lock_whose_holder_is_gone_is_taken_over(tmp_path: Path, who: str, taken: bool) -> None:
    """The lock is held (as an orphan worker held it), but names a process that is gone."""
    import fcntl
    import socket

    from itemscore._commit import FolderBusyError, _process_start, claim

    state = tmp_path / "out" / ".itemscore"
    state.mkdir(parents=True)
    pid = os.getpid() if who in ("alive", "reused", "other-host") else _dead_pid()
    info: dict[str, Any] = {"pid": pid, "started": "2026-01-01 00:00:00 UTC", "command": ["x"]}
    if who != "old-file":
        info["pid_start"] = _process_start(pid) or 0
        info["host"] = socket.gethostname()
    if who == "reused":
        info["pid_start"] += 1
    if who == "other-host":
        info["host"] = "not-" + socket.gethostname()
    (state / "lock").write_text(json.dumps(info), encoding="utf-8")
    with open(state / "lock", "rb") as orphan:  # the lock stays held, as by an orphan
        fcntl.flock(orphan.fileno(), fcntl.LOCK_EX)
        if taken:
            claim(tmp_path / "out", command=["next"]).release()
        else:
            with pytest.raises(FolderBusyError, match=f"pid {pid}"):
                claim(tmp_path / "out", command=["next"])


def _reads_slowly(part: Any, *args: Any) -> Any:
    """A read task that takes a moment, and says when it started and ended."""
    import time

    log = Path(os.environ["ITEMSCORE_TEST_READS"])
    with log.open("a") as out:
        out.write(f"start {part.index}\n")
    time.sleep(0.3)
    try:
        return _SLOW_READ["task"](part, *args)
    finally:
        with log.open("a") as out:
            out.write(f"end {part.index}\n")


_SLOW_READ: dict[str, Any] = {}


def test_a_plan_that_fails_waits_for_the_reads_running_before_removing_the_spool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The error is raised once no read task is left writing into the spool folder."""
    import tempfile
    import time

    from itemscore import InputError
    from itemscore.engine import _files
    from itemscore.inputs import Source

    path = write_jsonl(tmp_path / "d.jsonl", 600)
    planning = Source.iter_parts

    def failing(self: Source, n: int) -> Iterator[Any]:
        for part in planning(self, n):
            if part.index == 2:
                time.sleep(0.1)  # the reads of the first parts are under way
                raise InputError("d.jsonl: the second half is gone")
            yield part

    log = tmp_path / "reads"
    monkeypatch.setenv("ITEMSCORE_TEST_READS", str(log))
    monkeypatch.setattr(Source, "iter_parts", failing)
    monkeypatch.setitem(_SLOW_READ, "task", _files.read_part_task)
    monkeypatch.setattr(_files, "read_part_task", _reads_slowly)
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        with pytest.raises(InputError, match="the second half is gone"):
            itemscore.score(path, ["exact_match"], executor=pool)
        lines = log.read_text().splitlines()  # as the run ended, before the pool's shutdown
    started = sorted(line for line in lines if line.startswith("start"))
    assert started
    assert sorted(line for line in lines if line.startswith("end")) == [
        line.replace("start", "end") for line in started
    ]
    assert not list((tmp_path / "tmp").iterdir())


# -- 10. default time limit, worker memory limit ---------------------------------------------


def test_every_run_has_an_item_time_limit_unless_switched_off() -> None:
    """300 s by default, recorded in the settings; 0, 'none' and 'off' switch it off."""
    from itemscore._settings import DEFAULT_ITEM_TIMEOUT, RunSettings

    result = itemscore.score(plain_items(5), ["exact_match"])
    assert result.settings.item_timeout == DEFAULT_ITEM_TIMEOUT == 300.0
    assert RunSettings.from_dict(result.settings.to_dict()).item_timeout == 300.0
    for off in (None, 0, 0.0, "none", "off"):
        assert RunSettings(item_timeout=off).item_timeout is None
    assert (
        itemscore.score(plain_items(5), ["exact_match"], item_timeout=0).settings.item_timeout
        is None
    )


def test_the_default_limit_gives_way_to_the_judges_own_bound_but_a_set_one_holds() -> None:
    """The judge bounds each item itself (timeout x attempts + waits): the default yields."""
    pytest.importorskip("httpx")
    from itemscore._registry import default_registry
    from itemscore.engine._shard import item_limit

    judge = default_registry().get("llm_judge")(
        model="m", base_url="http://127.0.0.1:9/v1", api_key_env=None
    )
    plain = default_registry().get("exact_match")()
    assert judge.item_time_bound is not None
    assert judge.item_time_bound > (judge.max_retries + 1) * judge.timeout >= 300
    assert item_limit(judge, 300.0) == judge.item_time_bound
    assert item_limit(plain, 300.0) == 300.0
    assert item_limit(judge, 30.0) == 30.0  # the user's limit holds
    assert item_limit(judge, None) is None


def test_a_leaking_metric_is_bounded_by_the_worker_memory_limit(worker_metrics: Any) -> None:
    """Past the limit the leaking metric's items are MemoryError errors; the run finishes."""
    import pyarrow  # noqa: F401 - in the address space the workers are forked with

    itemscore.score(plain_items(4), ["exact_match"], executor="process", workers=2)
    size = next(
        int(line.split()[1]) << 10
        for line in Path("/proc/self/status").read_text().splitlines()
        if line.startswith("VmSize")
    ) if LINUX else 2 << 30  # fmt: skip
    limit = size + (600 << 20)  # room for about 30 leaks of 20 MB per worker
    result = itemscore.score(
        plain_items(200),
        [worker_metrics.Leaks(20), "exact_match"],
        executor="process",
        workers=2,
        worker_memory=limit,
    )
    assert result.settings.worker_memory == limit
    leaks = [item.scores["leaks_test"] for item in result.items]
    errors = [s for s in leaks if s.status is Status.ERROR]
    assert errors  # bounded...
    assert len(errors) < 200  # ...not every item lost
    assert {s.reason for s in errors} == {"MemoryError"}
    assert result.measurements["default.exact_match"].n == 200  # the other metric unharmed


def test_worker_memory_is_refused_where_no_worker_runs_and_sizes_are_checked() -> None:
    """Serially the caller's process would be limited: an error, before any item."""
    from itemscore._settings import RunSettings

    with pytest.raises(itemscore.ConfigError, match="serial executor scores in this process"):
        itemscore.score(plain_items(3), ["exact_match"], worker_memory="2G")
    assert RunSettings(worker_memory="2G").worker_memory == 2 << 30
    assert RunSettings(worker_memory="512MiB").worker_memory == 512 << 20
    assert RunSettings(worker_memory="none").worker_memory is None
    with pytest.raises(itemscore.ConfigError, match="at least 64M"):
        RunSettings(worker_memory="2X")


def test_the_command_line_switches_the_item_time_limit_off_and_sets_worker_memory(
    tmp_path: Path,
) -> None:
    """--item-timeout none and --worker-memory 2G are recorded in results.json."""
    import subprocess

    data = write_jsonl(tmp_path / "d.jsonl", 20)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(WORKERS), *sys.path])}
    script = str(WORKERS / "itemscore_isolation_workers.py")
    runs = {
        "default": [],
        "off": ["--item-timeout", "none", "--workers", "1", "--worker-memory", "2G"],
    }
    settings = {}
    for name, extra in runs.items():
        out = tmp_path / name
        done = subprocess.run(
            [sys.executable, script, "score", str(data), "-m", "exact_match", "--out", str(out),
             *extra],
            env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        settings[name] = json.loads((out / "results.json").read_text())["settings"]
    assert settings["default"]["item_timeout"] == 300.0
    assert settings["default"]["worker_memory"] is None
    assert settings["off"]["item_timeout"] is None
    assert settings["off"]["worker_memory"] == 2 << 30


_TRACED_TIMEOUT = """
import concurrent.futures, sys, threading, time
import itemscore
from itemscore import Metric, register

def trace(frame, event, arg):  # as coverage's or a debugger's trace function does
    return trace

@register
class Stuck(Metric):
    metric_id = "stuck_traced"
    description = "Never returns on item 3."
    required_inputs = ("output",)
    aggregation = "ratio"

    def score_item(self, item, ctx):
        while item.id == "3":
            time.sleep(0.005)
        return self.ok()

threading.settrace(trace)
sys.settrace(trace)
with concurrent.futures.ThreadPoolExecutor(1) as pool:
    rows = [{"id": str(i), "output": "a", "expected": ["a"]} for i in range(8)]
    result = itemscore.score(rows, ["stuck_traced"], item_timeout=0.3, executor=pool)
print([s.status.value for s in (item.scores["stuck_traced"] for item in result.items)])
"""


def test_an_item_timed_out_on_a_thread_under_a_trace_function_does_not_hang() -> None:
    """Under a trace function (coverage, debuggers) the time limit off the main thread holds.

    Taking back a raised exception with ``PyThreadState_SetAsyncExc(thread, NULL)`` left the
    scoring thread spinning at its next call under tracing; the run never ended.
    """
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", _TRACED_TIMEOUT],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(["ok"] * 3 + ["error"] + ["ok"] * 4)
