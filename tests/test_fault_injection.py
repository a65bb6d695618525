"""Fault injection: hostile metrics cost exactly their own items' scores, on every executor.

A plugin raises on a seeded 1% of items, returns wrong types, NaN, mutates its inputs, fails
asynchronously and in batches. Each fault must become exactly one ``error`` score, and every
other score (of the faulty metric on other items, of every other metric) must be identical to
a run without the faults.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Iterator, Sequence

import pytest

import itemscore
from itemscore import ItemResult, ItemScore, Metric, MetricContext, Status
from itemscore._registry import unregister

N = 2000
SEED = 20241130
BAD = frozenset(f"i{k}" for k in random.Random(SEED).sample(range(N), N // 100))
WRONG_TYPE = frozenset(f"i{k}" for k in range(7, N, 301))
NAN = frozenset(f"i{k}" for k in range(11, N, 397))
MUTATE = frozenset(f"i{k}" for k in range(13, N, 499))


def _verdict(metric: Metric, item: ItemResult) -> ItemScore:
    return metric.ok() if (item.output or "").endswith(("0", "2", "4")) else metric.fail()


class Hostile(Metric):
    """Raises on BAD, returns junk on WRONG_TYPE, NaN on NAN, mutates metadata on MUTATE."""

    metric_id = "hostile_test"
    required_inputs = ()

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        if item.id in BAD:
            raise RuntimeError(f"injected fault on {item.id}")
        if item.id in WRONG_TYPE:
            return "not a score"  # type: ignore[return-value]
        if item.id in NAN:
            return self.ok(math.nan)
        if item.id in MUTATE:
            item.metadata.pop("latency")  # type: ignore[attr-defined]
        return _verdict(self, item)


class HostileAsync(Metric):
    """An async metric failing on BAD."""

    metric_id = "hostile_async_test"
    required_inputs = ()

    async def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        await asyncio.sleep(0)
        if item.id in BAD:
            raise ValueError(f"async fault on {item.id}")
        return _verdict(self, item)


class HostileBatch(Metric):
    """A batch that raises whenever it holds a BAD item; one by one, only BAD items raise."""

    metric_id = "hostile_batch_test"
    required_inputs = ()

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        if item.id in BAD:
            raise KeyError(item.id)
        return _verdict(self, item)

    def score_items(self, items: Sequence[ItemResult], ctx: MetricContext) -> list[ItemScore]:
        if any(item.id in BAD for item in items):
            raise RuntimeError("the batch holds a bad item")
        return [_verdict(self, item) for item in items]


class LatencySeen(Metric):
    """Ok when the item still carries its latency: what a later metric sees."""

    metric_id = "latency_seen_test"
    required_inputs = ()

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        return self.ok() if item.metadata.get("latency") == 0.5 else self.fail()


HOSTILE = (Hostile, HostileAsync, HostileBatch)


@pytest.fixture(autouse=True)
def _registered() -> Iterator[None]:
    for cls in (*HOSTILE, LatencySeen):
        itemscore.register(cls)
    yield
    for cls in (*HOSTILE, LatencySeen):
        unregister(cls.metric_id)


def make_items() -> list[ItemResult]:
    return [
        ItemResult(
            id=f"i{k}",
            output=None if k % 29 == 0 else f"answer {k}",
            expected=None if k % 31 == 0 else f"answer {k - k % 3}",
            metadata={"latency": 0.5},
        )
        for k in range(N)
    ]


FAIR = ["exact_match", "token_f1", "answered_rate", "starts_with", "latency_seen_test"]


@pytest.mark.parametrize("executor", ["serial", "process"])
def test_faults_cost_exactly_their_own_scores(executor: str) -> None:
    items = make_items()
    workers = 2 if executor == "process" else None
    clean = itemscore.score(items, FAIR)
    dirty = itemscore.score(
        items,
        ["hostile_test", "hostile_async_test", "hostile_batch_test", *FAIR],
        executor=executor,
        workers=workers,
    )
    expected_errors = {
        "hostile_test": BAD | WRONG_TYPE | NAN | MUTATE,
        "hostile_async_test": BAD,
        "hostile_batch_test": BAD,
    }
    for label, bad_ids in expected_errors.items():
        m = dirty.measurements[f"default.{label}"]
        assert m.counts[Status.ERROR] == len(bad_ids), label
        errors = {item.id for item in dirty.items if item.scores[label].status is Status.ERROR}
        assert errors == bad_ids, label
        for item in dirty.items:  # every other item: the verdict a fault-free metric gives
            if item.id not in bad_ids:
                assert item.scores[label].value == (
                    1.0 if (item.output or "").endswith(("0", "2", "4")) else 0.0
                )
    reasons = {
        item.id: item.scores["hostile_test"].reason
        for item in dirty.items
        if item.scores["hostile_test"].status is Status.ERROR
    }
    assert all(reasons[i].startswith("RuntimeError: injected fault") for i in BAD)  # type: ignore[union-attr]
    assert all("returned str" in str(reasons[i]) for i in WRONG_TYPE)
    assert all("finite" in str(reasons[i]) for i in NAN)
    assert all("AttributeError" in str(reasons[i]) for i in MUTATE)
    # Every fair metric: identical scores and measurements to the run without the faults.
    for label in FAIR:
        assert dirty.measurements[f"default.{label}"] == clean.measurements[f"default.{label}"]
        assert [i.scores[label] for i in dirty.items] == [i.scores[label] for i in clean.items]
    assert dirty.measurements["default.latency_seen_test"].value == 1.0
    assert all(item.metadata["latency"] == 0.5 for item in items)
