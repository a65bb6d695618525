"""Isolation from what kills, hangs or bloats a worker: one item costs that item only.

- an item that kills its worker (``os._exit``) is found by cutting its shard in two until it
  is alone: it is an ``error`` naming the lost worker, every other item is scored;
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import sys
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
    from itemscore.engine._files import Keep
    from itemscore.engine._runner import score_opened
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
