"""Executors: the same results serial, on a process pool and on Dask; lost workers; checks."""

from __future__ import annotations

import concurrent.futures
import json
import os
import pickle
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import pytest

import itemscore
from itemscore import ConfigError, ItemResult, ItemScore, Metric, MetricContext, Status
from itemscore._registry import unregister
from itemscore.executors import EXECUTORS, resolve_executor

BUILTIN = [
    "exact_match",
    "token_f1",
    "answered_rate",
    {"name": "accuracy", "labels": ["positive", "negative", "neutral"]},
    {"name": "f1", "labels": ["positive", "negative", "neutral"], "average": "weighted"},
    {"name": "exact_match", "label": "em_strict", "ignore_case": False},
]
PLUGIN = ["starts_with", {"name": "output_length", "unit": "characters"}]


def make_items(n: int = 300) -> list[ItemResult]:
    """Two models, groups, clusters, failed requests and rows without an answer key."""
    words = ["positive", "Negative.", "neutral", "it is positive", "東京", "Ünïcode", ""]
    return [
        ItemResult(
            id=f"q{i // 2}",
            model=f"m{i % 2}",
            output=None if i % 17 == 3 else words[i % len(words)] + (" x" if i % 5 == 0 else ""),
            expected=None if i % 23 == 7 else ("positive", "negative")[i % 2],
            group=f"g{i % 4}",
            cluster=f"c{i // 10}",
            metadata={"i": i, "tags": ["a", "b"]},
        )
        for i in range(n)
    ]


def assert_same(a: itemscore.RunResult, b: itemscore.RunResult) -> None:
    assert a.measurements == b.measurements
    assert a.by_model == b.by_model
    assert list(a.items) == list(b.items)


@pytest.fixture(scope="module")
def serial_result() -> itemscore.RunResult:
    return itemscore.score(make_items(), itemscore.plan(BUILTIN + PLUGIN), seed=3)


def test_process_pool_gives_the_serial_results(serial_result: itemscore.RunResult) -> None:
    """Every built-in metric and the example plugin: identical values, states, intervals."""
    result = itemscore.score(make_items(), BUILTIN + PLUGIN, seed=3, executor="process", workers=2)
    assert_same(serial_result, result)
    assert result.settings.executor == "process"
    assert result.settings.workers == 2


@pytest.mark.slow
def test_dask_local_cluster_gives_the_serial_results(serial_result: itemscore.RunResult) -> None:
    """A Dask LocalCluster of 2 workers, started and closed by the run: identical results."""
    pytest.importorskip("distributed")
    result = itemscore.score(make_items(), BUILTIN + PLUGIN, seed=3, executor="dask", workers=2)
    assert_same(serial_result, result)
    assert result.settings.executor == "dask"


@pytest.mark.slow
def test_dask_client_is_used_and_left_open(serial_result: itemscore.RunResult) -> None:
    """A given client runs the shards; the run does not close it."""
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address="127.0.0.1:0"
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        result = itemscore.score(
            make_items(), itemscore.plan(BUILTIN + PLUGIN), seed=3, executor="dask", client=client
        )
        assert client.status == "running"
    assert_same(serial_result, result)
    assert result.settings.workers is None  # the client's cluster has the workers it has


# -- lost workers and failing shards ----------------------------------------------------------


class Killer(Metric):
    """Kills its worker process on the item with id ``kill_on`` (only outside the driver).

    Args:
        kill_on: The item id whose scoring kills the worker.
    """

    metric_id = "killer_test"
    required_inputs = ()

    def __init__(self, kill_on: str = "") -> None:
        self.kill_on = kill_on
        self.driver = os.getpid()

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        if item.id == self.kill_on and os.getpid() != self.driver:
            os._exit(13)
        return self.ok()


class BrokenShard(Metric):
    """``required_inputs`` itself raises: a failure outside any metric call."""

    metric_id = "broken_shard_test"

    @property  # type: ignore[override]
    def required_inputs(self) -> tuple[str, ...]:
        raise RuntimeError("cannot read my inputs")

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        return self.ok()


@pytest.fixture(autouse=True)
def _registered() -> Iterator[None]:
    for cls in (Killer, BrokenShard):
        itemscore.register(cls)
    yield
    for cls in (Killer, BrokenShard):
        unregister(cls.metric_id)


def plain_items(n: int) -> list[ItemResult]:
    return [ItemResult(id=f"i{i}", output="x", expected="x") for i in range(n)]


def test_a_lost_worker_costs_only_the_item_that_killed_it() -> None:
    """The shard whose worker died is cut in two until the killer is alone; the rest scored."""
    items = plain_items(80)
    result = itemscore.score(
        items,
        [{"name": "killer_test", "kill_on": "i45"}, "exact_match"],
        executor="process",
        workers=2,
    )
    killer = [item.scores["killer_test"] for item in result.items]
    lost = [s for s in killer if s.status is Status.ERROR]
    assert len(lost) == 1
    assert str(lost[0].reason).startswith("worker lost: ")
    assert str(lost[0].reason).endswith("(item 'i45')")
    assert result.items[45].scores["killer_test"].status is Status.ERROR
    ok_items = [i for i, s in enumerate(killer) if s.status is Status.OK]
    assert all(result.items[i].scores["exact_match"].status is Status.OK for i in ok_items)
    assert result.measurements["default.killer_test"].counts[Status.ERROR] == len(lost)


def test_lost_shards_are_retried_as_the_settings_say() -> None:
    """retries=1: the lost shard is tried again (and lost again here), and recorded."""
    result = itemscore.score(
        plain_items(40),
        [{"name": "killer_test", "kill_on": "i5"}],
        executor="process",
        workers=2,
        retries=1,
    )
    assert result.settings.retries == 1
    assert result.items[5].scores["killer_test"].reason.startswith("worker lost: ")  # type: ignore[union-attr]


@pytest.mark.parametrize("executor", ["serial", "process"])
def test_a_shard_raising_outside_any_metric_gives_its_items_errors(executor: str) -> None:
    """The run finishes; the shard's items say why."""
    workers = 2 if executor == "process" else None
    result = itemscore.score(
        plain_items(30), ["broken_shard_test"], executor=executor, workers=workers
    )
    reasons = {item.scores["broken_shard_test"].reason for item in result.items}
    assert reasons == {"shard failed: RuntimeError: cannot read my inputs"}
    assert result.measurements["default.broken_shard_test"].counts[Status.ERROR] == 30


# -- checks before scoring ----------------------------------------------------------------------


class Unpicklable(Metric):
    """Holds a lock: cannot be sent to another process."""

    metric_id = "unpicklable_test"

    def __init__(self) -> None:
        self.lock = threading.Lock()

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        return self.ok()


def test_a_metric_that_cannot_be_pickled_is_refused_before_scoring() -> None:
    """The error names the metric and suggests the serial executor."""
    with pytest.raises(ConfigError, match=r"'unpicklable_test'.*executor='serial'"):
        itemscore.score(plain_items(3), [Unpicklable()], executor="process", workers=2)
    # serial needs no pickling
    result = itemscore.score(plain_items(3), [Unpicklable()])
    assert result.measurements["default.unpicklable_test"].value == 1.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"workers": 2}, "does not apply to the serial executor"),
        ({"executor": "process", "client": object()}, "applies only to executor='dask'"),
        ({"executor": "proces"}, "did you mean 'process'"),
        ({"executor": "process", "workers": 0}, "must be a positive integer or 'auto'"),
        ({"retries": -1}, "`retries` (-1)"),
    ],
    ids=["workers-serial", "client-process", "misspelt", "zero-workers", "negative-retries"],
)
def test_executor_options_that_do_not_apply_are_errors(
    kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError) as info:
        itemscore.score(plain_items(2), ["exact_match"], **kwargs)  # type: ignore[arg-type]
    assert message.lower() in str(info.value).lower()


def test_workers_auto_is_the_cores() -> None:
    result = itemscore.score(plain_items(4), ["exact_match"], executor="process", workers="auto")
    assert result.settings.workers == os.cpu_count()


def test_every_registered_executor_opens_and_closes() -> None:
    """The registry names one module per executor; each opens an executor and closes it."""
    for name in EXECUTORS:
        if name in ("dask", "ray", "spark"):
            continue  # started by the Dask tests above, Ray's and Spark's by their own
        spec = resolve_executor(name, workers=None if name == "serial" else 1)
        engine = spec.open()
        try:
            assert engine.name == name
            assert engine.executor.submit(sum, [1, 2]).result() == 3
        finally:
            engine.close()


def test_any_concurrent_futures_executor_is_used_as_it_is() -> None:
    """A caller's thread pool scores the shards; results equal serial; the pool stays open."""
    items = make_items(50)
    a = itemscore.score(items, BUILTIN)
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        b = itemscore.score(items, BUILTIN, executor=pool)
        assert pool.submit(lambda: 1).result() == 1  # not shut down by the run
    assert_same(a, b)
    assert b.settings.executor == "ThreadPoolExecutor"
    assert b.settings.workers == 3


def test_workers_start_reading_before_the_file_is_planned_to_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first part goes to a worker before the driver has found where the second begins."""
    from itemscore.inputs import Source

    path = tmp_path / "d.jsonl"
    rows = [{"id": f"q{n}", "output": "a", "expected": ["a", "b"]} for n in range(600)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    events: list[tuple[str, int]] = []
    planning = Source.iter_parts

    def noted(self: Source, n: int) -> Iterator[Any]:
        for part in planning(self, n):
            events.append(("planned", part.index))
            yield part

    class Noting(concurrent.futures.ThreadPoolExecutor):
        def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
            if fn.__name__ == "read_part_task":
                events.append(("read", args[0].index))
            return super().submit(fn, *args, **kwargs)

    monkeypatch.setattr(Source, "iter_parts", noted)
    with Noting(2) as pool:
        pooled = itemscore.score(path, ["exact_match"], executor=pool)
    assert events.index(("read", 0)) < events.index(("planned", 1))
    assert sorted(events) == [(e, k) for e in ("planned", "read") for k in range(6)]
    assert pooled.measurements == itemscore.score(path, ["exact_match"]).measurements


@pytest.mark.parametrize("workers", [2, 3])
def test_every_worker_gets_as_many_parts_as_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """Every worker gets a whole number of parts, so none waits while another scores the last.

    By size alone, the file would be cut into one part more than four per worker.
    """
    import itemscore.engine._files as files

    path = tmp_path / "d.jsonl"
    rows = [{"id": f"q{n}", "output": "a", "expected": ["a", "b"]} for n in range(2000)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    by_size = 4 * workers + 1  # parts of PART_BYTES
    monkeypatch.setattr(files, "PART_BYTES", path.stat().st_size // by_size + 1)
    reads: list[int] = []

    class Noting(concurrent.futures.ThreadPoolExecutor):
        def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
            if fn.__name__ == "read_part_task":
                reads.append(args[0].index)
            return super().submit(fn, *args, **kwargs)

    with Noting(workers) as pool:
        pooled = itemscore.score(path, ["exact_match"], executor=pool)
    assert reads == list(range(5 * workers))
    assert pooled.measurements == itemscore.score(path, ["exact_match"]).measurements


#: The real read task, while a test puts :func:`_dies_reading_once` in its place.
_READING: dict[str, Any] = {}


def _dies_reading(part: Any, *args: Any) -> Any:
    """A read task whose worker dies on the second part: once, or every time (a marker each)."""
    marker = Path(os.environ["ITEMSCORE_TEST_DIED"])
    in_worker = os.getpid() != int(os.environ["ITEMSCORE_TEST_PARENT"])
    if (
        part.index == 1
        and in_worker
        and (os.environ["ITEMSCORE_TEST_DIES"] == "always" or not marker.exists())
    ):
        with marker.open("a") as deaths:
            deaths.write("died\n")
        os._exit(1)
    return _READING["task"](part, *args)


@pytest.mark.parametrize("dies", ["once", "always"])
def test_a_worker_dying_while_parts_are_planned_and_read_costs_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dies: str
) -> None:
    """A pool that breaks in the read pass, the plan not done yet, costs nothing.

    Once: a fresh pool reads the part again. Every time: after its retries the driver reads
    the part itself. Every item is scored either way.
    """
    from itemscore.engine import _files

    path = tmp_path / "d.jsonl"
    rows = [{"id": f"q{n}", "output": "a", "expected": "a" if n % 3 else "b"} for n in range(600)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    marker = tmp_path / "died"
    monkeypatch.setenv("ITEMSCORE_TEST_DIED", str(marker))
    monkeypatch.setenv("ITEMSCORE_TEST_PARENT", str(os.getpid()))
    monkeypatch.setenv("ITEMSCORE_TEST_DIES", dies)
    monkeypatch.setitem(_READING, "task", _files.read_part_task)
    monkeypatch.setattr(_files, "read_part_task", _dies_reading)
    serial = itemscore.score(path, ["exact_match"])  # read here: no death
    assert not marker.exists()
    pooled = itemscore.score(
        path, ["exact_match"], executor="process", workers=2, retries=1, deadline=120
    )
    deaths = marker.read_text().count("died")  # workers did die, reading
    assert deaths == 1 if dies == "once" else deaths >= 2
    assert pooled.measurements == serial.measurements
    assert [item.id for item in pooled.items] == [row["id"] for row in rows]
    assert pooled.measurements["default.exact_match"].counts[Status.ERROR] == 0


def test_a_plan_that_fails_midway_stops_the_run_with_its_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parts already read are dropped; the error is the plan's; the caller's pool stays."""
    from itemscore import InputError
    from itemscore.inputs import Source

    path = tmp_path / "d.jsonl"
    path.write_text("".join(f'{{"output": "a", "expected": "a", "n": {n}}}\n' for n in range(600)))
    planning = Source.iter_parts

    def failing(self: Source, n: int) -> Iterator[Any]:
        for part in planning(self, n):
            if part.index == 2:
                raise InputError("d.jsonl: the second half is gone")
            yield part

    monkeypatch.setattr(Source, "iter_parts", failing)
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # where the spool goes
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        with pytest.raises(InputError, match="the second half is gone"):
            itemscore.score(path, ["exact_match"], executor=pool)
        assert pool.submit(lambda: 1).result() == 1
    assert not list((tmp_path / "tmp").iterdir())


def test_items_and_scores_pickle() -> None:
    """Items and scores cross process boundaries unchanged (read-only mappings included)."""
    result = itemscore.score(make_items(20), ["exact_match", "token_f1"])
    items = list(result.items)
    assert pickle.loads(pickle.dumps(items)) == items


def test_shards_cover_every_item_once() -> None:
    from itemscore._run import _bounds

    engine = resolve_executor("process", workers=2).open()
    try:
        for n in (0, 1, 7, 8, 9, 1000, 100_000):
            bounds = _bounds(n, engine)
            assert sum(stop - start for start, stop in bounds) == n
            assert all(stop > start for start, stop in bounds)
            assert [b[0] for b in bounds[1:]] == [b[1] for b in bounds[:-1]]
    finally:
        engine.close()


# -- workers that die between shards, items that never end, metrics that exit (15.7, 16.12-13)


class DiesOnce(Metric):
    """The first worker to score a shard dies a moment after returning it, while idle.

    Args:
        marker: A file that only the first worker to see it creates.
        delay: Seconds between returning the shard and dying; 0: at once, mid-shard.
    """

    metric_id = "dies_once_test"
    required_inputs = ()

    def __init__(self, marker: str = "", delay: float = 0.3) -> None:
        self.marker = marker
        self.delay = delay
        self.driver = os.getpid()

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        if os.getpid() != self.driver:
            try:
                fd = os.open(self.marker, os.O_CREAT | os.O_EXCL)
            except FileExistsError:
                pass
            else:
                os.close(fd)
                if not self.delay:
                    os._exit(13)
                threading.Timer(self.delay, os._exit, (13,)).start()
        return self.ok()


class Hangs(Metric):
    """Never returns on the item with id ``on`` (sleeps), scores the others ok.

    Args:
        on: The item id it hangs on.
    """

    metric_id = "hangs_test"
    required_inputs = ()

    def __init__(self, on: str = "") -> None:
        self.on = on

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        if item.id == self.on:
            while True:  # a metric that never returns (back in Python every few ms)
                time.sleep(0.005)
        return self.ok()


class Exits(Metric):
    """Calls ``sys.exit(3)`` on the item with id ``on``.

    Args:
        on: The item id it exits on.
    """

    metric_id = "exits_test"
    required_inputs = ()

    def __init__(self, on: str = "") -> None:
        self.on = on

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        if item.id == self.on:
            sys.exit(3)
        return self.ok()


@pytest.fixture
def _more_metrics() -> Iterator[None]:
    for cls in (DiesOnce, Hangs, Exits):
        itemscore.register(cls)
    yield
    for cls in (DiesOnce, Hangs, Exits):
        unregister(cls.metric_id)


@pytest.mark.usefixtures("_more_metrics")
def test_a_worker_killed_while_idle_costs_nothing(tmp_path: Path) -> None:
    """A worker that dies between shards breaks the pool: a fresh one scores what was left."""
    marker = tmp_path / "died"
    result = itemscore.score(
        plain_items(400),
        [{"name": "dies_once_test", "marker": str(marker)}, "exact_match"],
        executor="process",
        workers=2,
    )
    assert marker.exists()  # a worker did die
    for label in ("dies_once_test", "exact_match"):
        assert result.measurements[f"default.{label}"].counts[Status.ERROR] == 0
        assert result.measurements[f"default.{label}"].n == 400


@pytest.mark.usefixtures("_more_metrics")
def test_a_worker_killed_mid_shard_once_is_saved_by_the_retry(tmp_path: Path) -> None:
    """A worker that dies on its first item: its shard is tried again and every item scored."""
    marker = tmp_path / "died"
    result = itemscore.score(
        plain_items(400),
        [{"name": "dies_once_test", "marker": str(marker), "delay": 0}, "exact_match"],
        executor="process",
        workers=2,
        retries=1,
        # Bounds the test: a pool left waiting on the dead worker would end in errors here.
        deadline=120,
    )
    assert marker.exists()  # a worker did die, in the middle of its first shard
    assert [item.id for item in result.items] == [f"i{i}" for i in range(400)]
    for label in ("dies_once_test", "exact_match"):
        scores = [item.scores[label] for item in result.items]
        assert all(s.status is Status.OK for s in scores), {s.reason for s in scores}
        assert result.measurements[f"default.{label}"].n == 400


@pytest.mark.usefixtures("_more_metrics")
@pytest.mark.parametrize("executor", ["serial", "process", "thread"])
def test_an_item_that_never_ends_is_an_error_after_item_timeout(executor: str) -> None:
    """item_timeout: the stuck item is an error saying so; every other item is scored."""
    options: dict[str, Any] = {"executor": executor}
    if executor == "process":
        options["workers"] = 2
    pool = concurrent.futures.ThreadPoolExecutor(1) if executor == "thread" else None
    if pool is not None:
        options["executor"] = pool
    started = time.monotonic()
    try:
        result = itemscore.score(
            plain_items(30), [{"name": "hangs_test", "on": "i7"}], item_timeout=0.5, **options
        )
    finally:
        if pool is not None:
            pool.shutdown()
    assert time.monotonic() - started < 60
    stuck = result.items[7].scores["hangs_test"]
    assert stuck.status is Status.ERROR
    assert stuck.reason == "ItemTimeout: timed out after 0.5 s (item_timeout)"
    assert result.measurements["default.hangs_test"].n == 29


@pytest.mark.usefixtures("_more_metrics")
def test_a_deadline_ends_the_run_with_errors_for_what_was_not_scored() -> None:
    """deadline: a pool stuck past it is stopped; the stuck shard's items say why."""
    started = time.monotonic()
    result = itemscore.score(
        plain_items(40),
        [{"name": "hangs_test", "on": "i3"}],
        executor="process",
        workers=2,
        deadline=2,
    )
    assert time.monotonic() - started < 60
    reasons = {s.reason for s in (i.scores["hangs_test"] for i in result.items) if s.reason}
    assert any(r.startswith("the run's deadline of 2 s passed") for r in reasons), reasons
    assert result.items[3].scores["hangs_test"].status is Status.ERROR
    assert result.measurements["default.hangs_test"].n >= 30


@pytest.mark.usefixtures("_more_metrics")
@pytest.mark.parametrize("executor", ["serial", "process"])
def test_a_metric_calling_sys_exit_stops_the_run_and_says_which(
    executor: str, capfd: pytest.CaptureFixture[str]
) -> None:
    """SystemExit passes through (the contract), after a message naming metric and item."""
    workers = 2 if executor == "process" else None
    with pytest.raises(SystemExit) as info:
        itemscore.score(
            plain_items(20),
            [{"name": "exits_test", "on": "i4"}],
            executor=executor,
            workers=workers,
        )
    assert info.value.code == 3
    err = capfd.readouterr().err
    assert "metric 'exits_test' called sys.exit(3) while scoring item 'i4'" in err


@pytest.mark.usefixtures("_more_metrics")
def test_a_deadline_holds_on_the_serial_executor_too() -> None:
    """Serially the deadline stops the stuck item, and the items after it are errors too."""
    started = time.monotonic()
    result = itemscore.score(plain_items(10), [{"name": "hangs_test", "on": "i2"}], deadline=1)
    assert time.monotonic() - started < 30
    states = [i.scores["hangs_test"].status for i in result.items]
    assert states[:2] == [Status.OK, Status.OK]
    assert set(states[2:]) == {Status.ERROR}
    assert result.items[2].scores["hangs_test"].reason == (
        "DeadlinePassed: the run's deadline passed while this item was scored"
    )


WORKERS = Path(__file__).parent / "workers"


@pytest.mark.slow
def test_a_dask_worker_killed_mid_run_costs_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 15.8: one Dask worker dies while scoring; its shard runs again elsewhere."""
    pytest.importorskip("distributed")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(WORKERS), *sys.path]))
    monkeypatch.syspath_prepend(str(WORKERS))
    from itemscore_test_workers import KillsItsWorkerOnce  # type: ignore[import-not-found]

    marker = tmp_path / "died"
    result = itemscore.score(
        plain_items(2_000),
        [KillsItsWorkerOnce(str(marker)), "exact_match"],
        executor="dask",
        workers=2,
    )
    assert marker.exists()  # a worker did die
    for label in ("kills_its_worker_once_test", "exact_match"):
        measurement = result.measurements[f"default.{label}"]
        assert measurement.counts[Status.ERROR] == 0
        assert measurement.n == 2_000


_ONLY_HERE = """
from itemscore import Metric


class OnlyHere(Metric):
    metric_id = "only_here_test"
    required_inputs = ("output",)

    def score_item(self, item, ctx):
        return self.ok(1.0)
"""


@pytest.mark.slow
def test_a_metric_the_dask_workers_cannot_import_is_an_error_not_a_hang(tmp_path: Path) -> None:
    """A metric defined where workers cannot import it: a clear error, the run does not wait.

    Its module is imported here from a folder then taken off ``sys.path``, so no worker finds
    it, however pytest was started (``python -m pytest`` puts the working folder, and so this
    test module, on the path that Dask's spawned workers inherit).
    """
    pytest.importorskip("distributed")
    (tmp_path / "itemscore_only_here.py").write_text(_ONLY_HERE, encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        import itemscore_only_here  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(tmp_path))
    itemscore.register(itemscore_only_here.OnlyHere)
    try:
        with pytest.raises(ConfigError, match="cannot be loaded in a worker process") as info:
            itemscore.score(plain_items(50), ["only_here_test"], executor="dask", workers=1)
    finally:
        unregister("only_here_test")
        sys.modules.pop("itemscore_only_here", None)
    assert "install the package that defines it where the workers run" in str(info.value)


class _BreaksOnSubmit(concurrent.futures.ThreadPoolExecutor):
    """A pool broken from its ``broken_at``-th submit on (0: never), as when a worker died."""

    def __init__(self, broken_at: int, submitted: list[int]) -> None:
        super().__init__(2)
        self.broken_at = broken_at
        self.calls = 0
        self.submitted = submitted

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        self.calls += 1
        self.submitted.append(self.calls)
        if self.broken_at and self.calls >= self.broken_at:
            raise BrokenProcessPool("A child process terminated abruptly")
        return super().submit(fn, *args, **kwargs)


@pytest.mark.parametrize("broken_at", [1, 3, 6])
def test_a_pool_that_breaks_between_two_submits_is_renewed_and_no_task_is_lost(
    broken_at: int,
) -> None:
    """A worker may die after the wait and before the next submit: the run goes on."""
    from itemscore.engine._dispatch import Task, run_tasks
    from itemscore.executors._engine import Engine

    submitted: list[int] = []
    pools: list[_BreaksOnSubmit] = []

    def fresh() -> concurrent.futures.Executor:
        pools.append(_BreaksOnSubmit(broken_at if not pools else 0, submitted))
        return pools[-1]

    engine = Engine("process", fresh(), workers=2, parallel=True, renew=fresh,
                    close=lambda pool: pool.shutdown())  # fmt: skip
    results: dict[int, Any] = {}
    tasks = [Task(pow, (n, 2), f"task {n}") for n in range(10)]
    try:
        run_tasks(engine, tasks, retries=0, deadline=60,
                  on_done=lambda index, result: results.setdefault(index, result))  # fmt: skip
    finally:
        engine.close()
    assert results == {n: n * n for n in range(10)}  # every task ran once, none lost
    assert len(pools) == 2  # renewed once
    assert pools[1].calls == 10 - (broken_at - 1)  # the task refused was submitted again


def test_a_pool_that_never_takes_a_task_is_an_error_not_a_loop() -> None:
    from itemscore.engine._dispatch import Task, run_tasks
    from itemscore.executors._engine import Engine

    submitted: list[int] = []

    def fresh() -> concurrent.futures.Executor:
        return _BreaksOnSubmit(1, submitted)  # broken at its first submit

    engine = Engine("process", fresh(), workers=2, parallel=True, renew=fresh,
                    close=lambda pool: pool.shutdown())  # fmt: skip
    with pytest.raises(BrokenProcessPool):
        run_tasks(engine, [Task(pow, (2, 2), "task")], retries=0, deadline=60,
                  on_done=lambda index, result: None)  # fmt: skip
    engine.close()
    assert len(submitted) == 4  # the first pool and three fresh ones


def test_each_cluster_option_reaches_its_executor_from_the_registry(tmp_path: Path) -> None:
    """--dask and --ray, and a configuration's `dask:` and `ray:`, become score's keywords."""
    from itemscore.cli._config import load_config
    from itemscore.cli._pipeline import _executor_settings
    from itemscore.cli._request import RunRequest
    from itemscore.executors import cluster_flags

    assert {name: c.keyword for name, c in cluster_flags().items()} == {
        "dask": "client",
        "ray": "address",
    }
    settings = _executor_settings(RunRequest(clusters={"dask": "tcp://h:1"}))
    assert settings == {"executor": "dask", "client": "tcp://h:1"}
    assert _executor_settings(RunRequest(clusters={"ray": "auto"})) == {
        "executor": "ray",
        "address": "auto",
    }
    with pytest.raises(ConfigError, match=r"^--ray: choose --dask or --ray \(one cluster\)"):
        _executor_settings(RunRequest(clusters={"dask": "a", "ray": "b"}))
    with pytest.raises(ConfigError, match="--executor is 'spark'"):
        _executor_settings(RunRequest(clusters={"ray": "auto"}, executor="spark"))
    config = tmp_path / "run.yaml"
    config.write_text("data: d.jsonl\nray: auto\n", encoding="utf-8")
    (tmp_path / "d.jsonl").write_text('{"id": "1", "output": "a"}\n', encoding="utf-8")
    request = load_config(config)
    assert request.clusters == {"ray": "auto"}
    with pytest.raises(ConfigError, match=r"run\.yaml:2:6: choose --workers"):
        _executor_settings(RunRequest(clusters={"ray": "auto"}, workers=2,
                                      setting_where=request.setting_where))  # fmt: skip


def test_a_cluster_keyword_applies_to_its_own_executor_only() -> None:
    with pytest.raises(ConfigError, match="`address` applies only to executor='ray'"):
        resolve_executor("process", address="auto")
    with pytest.raises(ConfigError, match="`session` configures executor='spark'"):
        resolve_executor(concurrent.futures.ThreadPoolExecutor(1), session=object())
    with pytest.raises(TypeError, match="'bogus'"):
        resolve_executor("serial", bogus=1)
    assert resolve_executor("process", workers=2).cluster is None
    assert list(EXECUTORS) == ["serial", "process", "dask", "ray", "spark"]


def test_an_executor_is_one_module_found_by_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module dropped into the executors' folder is an executor, named by its file."""
    import itemscore.executors as executors

    (tmp_path / "threads.py").write_text(
        "import concurrent.futures\n"
        "from itemscore.executors._engine import Engine\n"
        "CLUSTER = None\n"
        "def check_options(workers, cluster):\n"
        "    pass\n"
        "def open_executor(workers, cluster):\n"
        "    pool = concurrent.futures.ThreadPoolExecutor(workers or 2)\n"
        "    return Engine('threads', pool, workers=workers or 2, parallel=True,\n"
        "                  close=lambda e: e.shutdown())\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(executors, "__path__", [*executors.__path__, str(tmp_path)])
    found = executors._found()
    assert list(found) == ["serial", "process", "threads", "dask", "ray", "spark"]
    monkeypatch.setattr(executors, "EXECUTORS", found)
    items = [ItemResult(id=str(i), output="a", expected="a" if i % 2 else "b") for i in range(40)]
    result = itemscore.score(items, ["exact_match"], executor="threads", workers=2)
    assert result.settings.executor == "threads"
    assert [m.value for m in result.measurements.values()] == [0.5]
    monkeypatch.delitem(sys.modules, "itemscore.executors.threads")
