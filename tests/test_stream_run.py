"""Streamed runs: packed items scored chunk by chunk give what a list of items gives."""

from __future__ import annotations

import gc
import weakref
from collections import Counter
from collections.abc import Sequence
from typing import Any, ClassVar

import pytest

import itemscore
from itemscore import ItemResult, ItemScore, Metric, MetricContext
from itemscore._packed import PackedItems, PackedList
from itemscore._plugins import plugin_manager
from itemscore.executors.process import ProcessExecutor

BUILTIN: list[Any] = [
    "exact_match",
    "token_f1",
    "answered_rate",
    {"name": "accuracy", "labels": ["positive", "negative", "neutral"]},
    {"name": "f1", "labels": ["positive", "negative", "neutral"], "average": "macro"},
]
PLUGIN = ["starts_with", {"name": "output_length", "unit": "characters"}]


class Corpus(Metric):
    """A corpus metric: the share of outputs equal to their first answer."""

    metric_id = "stream_corpus_test"

    def compute(
        self, predictions: Sequence[str | None], references: Sequence[tuple[str, ...] | None]
    ) -> itemscore.MetricResult:
        rows: list[float | None] = [
            None if not refs else float(out == refs[0])
            for out, refs in zip(predictions, references)
        ]
        values = [r for r in rows if r is not None]
        return self.result(sum(values) / len(values), per_row=rows, n_scored=len(values))


def make_items(n: int = 700) -> list[ItemResult]:
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


def packed(items: list[ItemResult], size: int = 50) -> PackedItems:
    return PackedItems(items[at : at + size] for at in range(0, len(items), size))


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> int:
    """Score streamed runs in chunks of 120 items, so a test run has several."""
    monkeypatch.setattr("itemscore._runner.STREAM_CHUNK", 120)
    return 120


def assert_same(a: itemscore.RunResult, b: itemscore.RunResult) -> None:
    assert a.measurements == b.measurements
    assert a.by_model == b.by_model
    assert list(a.items) == list(b.items)


@pytest.fixture(scope="module")
def listed() -> itemscore.RunResult:
    return itemscore.score(make_items(), [*BUILTIN, *PLUGIN, Corpus()], seed=5)


def test_packed_items_give_the_list_results(listed: itemscore.RunResult, small_chunks: int) -> None:
    result = itemscore.score(packed(make_items()), [*BUILTIN, *PLUGIN, Corpus()], seed=5)
    assert_same(listed, result)
    assert result.measurements["default.exact_match"].groups  # groups and models were seen
    assert set(result.by_model) == {"m0", "m1"}


def test_packed_items_on_a_process_pool_started_once(
    listed: itemscore.RunResult, small_chunks: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    pools: list[int] = []
    original = ProcessExecutor._pool

    def counting(self: ProcessExecutor, workers: int, *args: Any) -> Any:
        pools.append(workers)
        return original(self, workers, *args)

    monkeypatch.setattr(ProcessExecutor, "_pool", counting)
    result = itemscore.score(
        packed(make_items()), [*BUILTIN, *PLUGIN, Corpus()], seed=5, executor="process", workers=2
    )
    assert_same(listed, result)
    assert pools == [2]  # six chunks, one pool


def test_extras_of_a_streamed_run_are_kept_packed(small_chunks: int) -> None:
    result = itemscore.score(packed(make_items()), ["exact_match"])
    column = result.items._columns["exact_match"]  # type: ignore[attr-defined]
    assert isinstance(column.extras, PackedList)
    scores = [item.scores["exact_match"] for item in result.items]
    assert all("normalized" in s.extra for s in scores if s.status.scored)


def test_streamed_items_are_built_when_read_and_not_kept(small_chunks: int) -> None:
    result = itemscore.score(packed(make_items()), ["answered_rate"])
    first = next(iter(result.items))
    ref = weakref.ref(first)
    assert first == result.items[0]
    del first
    gc.collect()
    assert ref() is None
    assert list(result.items) == list(result.items)
    assert result.items[-1].id == make_items()[-1].id


def test_item_scored_hook_fires_once_per_item_and_metric(small_chunks: int) -> None:
    seen: Counter[tuple[str | None, str, str]] = Counter()

    class Spy:
        @itemscore.hookimpl
        def itemscore_item_scored(self, item: ItemResult, score: ItemScore) -> None:
            seen[(item.model, item.id, score.metric)] += 1

    spy = Spy()
    manager = plugin_manager()
    manager.register(spy)
    try:
        itemscore.score(packed(make_items(300)), ["answered_rate", Corpus()])
    finally:
        manager.unregister(spy)
    items = make_items(300)
    assert seen == Counter(
        {(i.model, i.id, m): 1 for i in items for m in ("answered_rate", "stream_corpus_test")}
    )


class Flaky(Metric):
    """Raises on every 50th item: isolation holds across chunks."""

    metric_id = "stream_flaky_test"
    required_inputs = ()

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        if int(item.metadata["i"]) % 50 == 0:
            raise RuntimeError("boom")
        return self.ok()


def test_errors_stay_with_their_items_across_chunks(small_chunks: int) -> None:
    result = itemscore.score(packed(make_items()), [Flaky()])
    states = [item.scores["stream_flaky_test"].status.value for item in result.items]
    assert [i for i, s in enumerate(states) if s == "error"] == list(range(0, 700, 50))


class MemoSpy(Metric):
    """Counts, in the run's memo, the batches it scored; records which memo it saw."""

    metric_id = "stream_memo_spy_test"
    required_inputs = ()
    seen: ClassVar[list[int | None]] = []

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        type(self).seen.append(None if ctx.memo is None else id(ctx.memo))
        if ctx.memo is not None:
            ctx.memo[ctx.label] = ctx.memo.get(ctx.label, 0) + 1
        return self.ok()


def test_the_memo_lives_across_the_chunks_of_a_serial_run(small_chunks: int) -> None:
    MemoSpy.seen = []
    itemscore.score(packed(make_items()), [MemoSpy()])
    assert len(MemoSpy.seen) == 700
    assert len(set(MemoSpy.seen)) == 1  # one memo for the six chunks
    assert None not in MemoSpy.seen


def test_comparison_caches_across_chunks_give_the_per_call_verdicts(small_chunks: int) -> None:
    """exact_match and token_f1 keep their caches in the memo: same scores as one call."""
    items = make_items()
    streamed = itemscore.score(packed(items), ["exact_match", "token_f1"])
    single = itemscore.score(items, ["exact_match", "token_f1"])
    assert list(streamed.items) == list(single.items)
    assert streamed.measurements == single.measurements
