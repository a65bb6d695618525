"""Runs: configuration checks, isolation, batch and async paths, groups, models, rescore."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator, Sequence

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import itemscore
from itemscore import (
    ConfigError,
    Estimate,
    InputError,
    ItemResult,
    ItemScore,
    Metric,
    MetricContext,
    OptionError,
    Status,
    Suite,
    UnknownMetricError,
)
from itemscore._registry import unregister


class Echo(Metric):
    """Ok when the output equals the first expected answer."""

    metric_id = "echo_test"
    required_inputs = ("expected",)

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        assert item.expected is not None
        return self.ok() if item.output == item.expected[0] else self.fail()


class Faulty(Echo):
    """Echo, but raises on the items whose id is in ``fail_on``.

    Args:
        fail_on: Item ids to raise on.
    """

    metric_id = "faulty_test"

    def __init__(self, fail_on: list[str] | None = None) -> None:
        self.fail_on = set(fail_on or ())

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        if item.id in self.fail_on:
            raise RuntimeError(f"boom on {item.id}")
        return super().score_item(item, ctx)


class Length(Metric):
    """Mean output length.

    Args:
        scale: Multiplier.
        mode: How to count.
    """

    metric_id = "length_test"
    aggregation = "mean"
    higher_is_better = False

    def __init__(self, scale: float = 1.0, mode: str = "chars") -> None:
        self.scale = scale
        self.mode = mode

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        assert item.output is not None
        return self.ok(len(item.output) * self.scale)


@pytest.fixture(autouse=True)
def _registered() -> Iterator[None]:
    for cls in (Echo, Faulty, Length):
        itemscore.register(cls)
    yield
    for cls in (Echo, Faulty, Length):
        unregister(cls.metric_id)


def make_items(n: int = 20, **overrides: object) -> list[ItemResult]:
    return [
        ItemResult(
            id=f"q{i}",
            output=None if i % 5 == 4 else ("yes" if i % 2 else "no"),
            expected=None if i % 7 == 6 else "yes",
            **overrides,  # type: ignore[arg-type]
        )
        for i in range(n)
    ]


def statuses(result: itemscore.RunResult, label: str) -> list[Status]:
    return [item.scores[label].status for item in result.items]


# -- configuration -----------------------------------------------------------------------------


def test_unknown_metric_suggests_close_names() -> None:
    """A misspelt metric name is an error before scoring, with a suggestion."""
    with pytest.raises(UnknownMetricError, match="Did you mean 'echo_test'"):
        itemscore.score(make_items(), ["echo_tset"])


def test_unknown_option_lists_valid_ones() -> None:
    """An unknown option names the valid ones and the closest match."""
    with pytest.raises(OptionError) as info:
        itemscore.score(make_items(), [{"name": "length_test", "scal": 2.0}])
    message = str(info.value)
    assert "`scal`" in message
    assert "Did you mean 'scale'" in message
    assert "`mode`" in message


def test_option_of_wrong_type_names_it() -> None:
    """A value of the wrong type names the option, the value and the expected type."""
    with pytest.raises(OptionError, match=r"`scale` \('big'\) must be a number"):
        itemscore.score(make_items(), [{"name": "length_test", "scale": "big"}])


def test_options_are_checked_before_any_item_is_scored() -> None:
    """A bad second metric stops the run before the first metric scores anything."""
    calls: list[str] = []

    class Spy(Echo):
        metric_id = "spy_test"

        def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
            calls.append(item.id)
            return super().score_item(item, ctx)

    with pytest.raises(OptionError):
        itemscore.score(make_items(), [Spy, {"name": "length_test", "nope": 1}])
    assert calls == []


def test_duplicate_labels_are_refused() -> None:
    """Using a metric twice without a label is an error that shows how to fix it."""
    with pytest.raises(ConfigError, match="give one a `label`"):
        itemscore.score(make_items(), ["length_test", {"name": "length_test", "scale": 2.0}])


def test_same_metric_twice_with_labels() -> None:
    """A metric used twice with distinct labels gives two measurements."""
    result = itemscore.score(
        make_items(),
        ["length_test", {"name": "length_test", "label": "double", "scale": 2.0}],
        suite_id="s",
    )
    single = result.measurements["s.length_test"].value
    double = result.measurements["s.double"].value
    assert single is not None
    assert double == pytest.approx(2 * single)


def test_duplicate_item_ids_are_refused() -> None:
    """Two items with one id are an input error naming the id and both positions."""
    items = [ItemResult(id="a", output="x"), ItemResult(id="a", output="y")]
    with pytest.raises(InputError, match=r"Row 2: the id 'a' appears twice \(first at row 1\)"):
        itemscore.score(items, ["answered_rate"])


def test_ids_are_unique_per_model() -> None:
    """Two models may answer one question id; one model may not answer it twice."""
    both = [ItemResult(id="q", output="x", model="a"), ItemResult(id="q", output="y", model="b")]
    assert itemscore.score(both, ["answered_rate"]).models == ["a", "b"]
    twice = [*both, ItemResult(id="q", output="z", model="b")]
    with pytest.raises(
        InputError, match=r"Row 3: the id 'q' appears twice for model 'b' \(first at row 2\)"
    ):
        itemscore.score(twice, ["answered_rate"])


def test_non_items_are_refused() -> None:
    """Rows must be mappings or items; the error says so."""
    with pytest.raises(InputError, match="Row 1: the row is a list; rows must be mappings"):
        itemscore.score([["a", "x"]], ["answered_rate"])


@pytest.mark.parametrize("confidence", [0, 1, 1.5, -0.1], ids=str)
def test_confidence_must_be_inside_zero_one(confidence: float) -> None:
    """Confidence levels outside (0, 1) are refused."""
    with pytest.raises(ConfigError, match=r"`confidence` .* must be in \(0, 1\)"):
        itemscore.score(make_items(), ["answered_rate"], confidence=confidence)


def test_unknown_ci_method_is_refused() -> None:
    """An unknown interval method is refused with a suggestion."""
    with pytest.raises(ConfigError, match="Did you mean 'wilson'"):
        itemscore.score(make_items(), ["answered_rate"], ci_method="wilsn")


def test_no_metrics_is_an_error() -> None:
    """A run needs at least one metric."""
    with pytest.raises(ConfigError, match="No metrics"):
        itemscore.score(make_items(), [])


def test_metric_init_rejecting_values_becomes_option_error() -> None:
    """A metric's own __init__ check surfaces as an OptionError naming the metric."""

    class Picky(Echo):
        metric_id = "picky_test"

        def __init__(self, k: int = 1) -> None:
            if k < 1:
                raise ValueError("`k` must be at least 1.")

    itemscore.register(Picky)
    try:
        with pytest.raises(OptionError, match="'picky_test' rejected its options"):
            itemscore.score(make_items(), [{"name": "picky_test", "k": 0}])
    finally:
        unregister("picky_test")


# -- isolation ---------------------------------------------------------------------------------


def test_injected_faults_touch_only_their_items() -> None:
    """Raising on chosen items gives exactly those errors; every other score is unchanged."""
    items = make_items(30)
    clean = itemscore.score(items, [{"name": "faulty_test"}, "answered_rate"])
    chosen = ["q1", "q3", "q10"]
    faulty = itemscore.score(items, [{"name": "faulty_test", "fail_on": chosen}, "answered_rate"])
    for before, after in zip(clean.items, faulty.items, strict=True):
        assert after.scores["answered_rate"] == before.scores["answered_rate"]
        if after.id in chosen:
            score = after.scores["faulty_test"]
            assert score.status is Status.ERROR
            assert score.value is None
            assert score.reason == f"RuntimeError: boom on {after.id}"
            assert "score_item" in score.extra["traceback"]
        else:
            assert after.scores["faulty_test"] == before.scores["faulty_test"]
    m = faulty.measurements["default.faulty_test"]
    assert m.counts[Status.ERROR] == len(chosen)
    assert m.n == clean.measurements["default.faulty_test"].n - len(chosen)


@pytest.mark.parametrize(
    ("returned", "reason"),
    [
        (42, "TypeError: score_item returned int"),
        ("ok", "TypeError: score_item returned str"),
    ],
    ids=["int", "str"],
)
def test_wrong_return_type_is_an_error_score(returned: object, reason: str) -> None:
    """A metric returning something other than ItemScore or None gets an error score."""

    class Wrong(Echo):
        metric_id = "wrong_test"

        def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
            return returned  # type: ignore[return-value]

    result = itemscore.score(make_items(3), [Wrong])
    for item in result.items:
        score = item.scores["wrong_test"]
        if item.expected is not None:
            assert score.status is Status.ERROR
            assert score.reason is not None
            assert score.reason.startswith(reason)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf], ids=str)
def test_non_finite_value_is_an_error_score(value: float) -> None:
    """A non-finite value never reaches an aggregate: the item records an error."""

    class NaN(Echo):
        metric_id = "nan_test"

        def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
            return self.ok(value)

    result = itemscore.score([ItemResult(id="a", output="x", expected="x")], [NaN])
    score = result.items[0].scores["nan_test"]
    assert score.status is Status.ERROR
    assert "finite" in (score.reason or "")


def test_none_is_recorded_as_skip() -> None:
    """Returning None leaves the item unscored: skip, outside the denominator."""

    class Abstain(Echo):
        metric_id = "abstain_test"

        def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore | None:
            return None if item.id == "a" else self.ok()

    items = [ItemResult(id=i, output="x", expected="x") for i in "abc"]
    result = itemscore.score(items, [Abstain])
    assert statuses(result, "abstain_test") == [Status.SKIP, Status.OK, Status.OK]
    assert result.measurements["default.abstain_test"].n == 2


@pytest.mark.parametrize("exc", [KeyboardInterrupt, SystemExit], ids=lambda e: e.__name__)
def test_interrupts_are_not_swallowed(exc: type[BaseException]) -> None:
    """KeyboardInterrupt and SystemExit stop the run."""

    class Stop(Echo):
        metric_id = "stop_test"

        def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
            raise exc

    with pytest.raises(exc):
        itemscore.score(make_items(3), [Stop])


def test_label_is_forced_onto_scores() -> None:
    """ItemScore.metric is the run's label, whatever the metric put there."""

    class Sloppy(Echo):
        metric_id = "sloppy_test"

        def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
            return ItemScore.ok("something else")

    result = itemscore.score(make_items(3), [{"name": "answered_rate", "label": "ar"}, Sloppy])
    assert {item.scores["sloppy_test"].metric for item in result.items} == {"sloppy_test"}
    assert {item.scores["ar"].metric for item in result.items} == {"ar"}


def test_required_inputs_skip_with_reason() -> None:
    """Items missing a required input are skipped, with the reason recorded."""
    result = itemscore.score(make_items(), ["echo_test"])
    for item in result.items:
        score = item.scores["echo_test"]
        if item.expected is None:
            assert score.status is Status.SKIP
            assert score.reason == "no answer key (expected is empty)"
        else:
            assert score.scored


def test_required_metadata_input() -> None:
    """A required input that is not an item field is looked up in metadata."""

    class Cost(Length):
        metric_id = "cost_test"
        required_inputs = ("cost",)

        def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
            return self.ok(float(item.metadata["cost"]))

    items = [
        ItemResult(id="a", output="x", metadata={"cost": 2}),
        ItemResult(id="b", output="x"),
    ]
    result = itemscore.score(items, [Cost])
    assert statuses(result, "cost_test") == [Status.OK, Status.SKIP]
    assert result.items[1].scores["cost_test"].reason == "missing required input: cost"


def test_aggregate_failure_spoils_only_its_measurement() -> None:
    """An aggregate that raises sets that measurement's error; the others are unaffected."""

    class BadAggregate(Echo):
        metric_id = "bad_aggregate_test"

        def aggregate(self, scores: Sequence[ItemScore], ctx: MetricContext) -> Estimate:
            raise ZeroDivisionError("no luck")

    result = itemscore.score(make_items(), [BadAggregate, "answered_rate"])
    bad = result.measurements["default.bad_aggregate_test"]
    assert bad.error == "ZeroDivisionError: no luck"
    assert bad.value is None
    assert bad.n > 0
    good = result.measurements["default.answered_rate"]
    assert good.error is None
    assert good.value == pytest.approx(16 / 20)


def test_aggregate_returning_junk_is_an_error() -> None:
    """An aggregate must return an Estimate."""

    class Junk(Echo):
        metric_id = "junk_test"

        def aggregate(self, scores: Sequence[ItemScore], ctx: MetricContext) -> Estimate:
            return 0.5  # type: ignore[return-value]

    result = itemscore.score(make_items(), [Junk])
    assert "expected itemscore.Estimate" in (result.measurements["default.junk_test"].error or "")


# -- batch and async ---------------------------------------------------------------------------


class Batched(Echo):
    """Echo with a batch path that can be told to fail."""

    metric_id = "batched_test"

    def __init__(self, break_batch: bool = False, short: bool = False) -> None:
        self.break_batch = break_batch
        self.short = short
        self.batch_calls = 0

    def score_items(
        self, items: Sequence[ItemResult], ctx: MetricContext
    ) -> Sequence[ItemScore | None]:
        self.batch_calls += 1
        if self.break_batch:
            raise ValueError("batch broke")
        out = [self.score_item(item, ctx) for item in items]
        return out[:-1] if self.short else out


@pytest.mark.parametrize(
    "options",
    [{}, {"break_batch": True}, {"short": True}],
    ids=["batch", "batch-raises", "batch-too-short"],
)
def test_batch_path_agrees_with_per_item_path(options: dict[str, bool]) -> None:
    """The batch path, and its per-item fallback, give the per-item scores."""
    items = make_items(25)
    expected = itemscore.score(items, ["echo_test"])
    metric = Batched.configure(options)
    got = itemscore.score(items, [metric])
    assert metric.batch_calls == 1
    assert [i.scores["batched_test"].status for i in got.items] == statuses(expected, "echo_test")


def test_batch_fallback_isolates_the_bad_item() -> None:
    """When the batch raises, per-item scoring isolates the one bad item."""

    class BatchFaulty(Batched):
        metric_id = "batch_faulty_test"

        def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
            if item.id == "q2":
                raise KeyError("q2")
            return super().score_item(item, ctx)

    result = itemscore.score(make_items(5), [BatchFaulty])
    assert statuses(result, "batch_faulty_test") == [
        Status.FAIL,
        Status.OK,
        Status.ERROR,
        Status.OK,
        Status.FAIL,
    ]


class Slow(Echo):
    """An async metric, as a judge-based one would be."""

    metric_id = "slow_test"
    reproducibility_class = "judge-based"

    async def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        await asyncio.sleep(0)
        if item.id == "q3":
            raise TimeoutError("judge timed out")
        assert item.expected is not None
        return self.ok() if item.output == item.expected[0] else self.fail()


def test_async_metric_is_isolated_and_ordered() -> None:
    """An async score_item is awaited per item, isolated, and results keep input order."""
    items = make_items(12)
    sync = itemscore.score(items, ["echo_test"])
    result = itemscore.score(items, [Slow])
    for a, b in zip(sync.items, result.items, strict=True):
        if b.id == "q3":
            assert b.scores["slow_test"].status is Status.ERROR
            assert b.scores["slow_test"].reason == "TimeoutError: judge timed out"
        else:
            assert b.scores["slow_test"].status is a.scores["echo_test"].status
    assert result.measurements["default.slow_test"].reproducibility_class == "judge-based"


def test_async_metric_inside_a_running_loop() -> None:
    """score() works when called from code already inside an event loop (notebooks)."""

    async def main() -> itemscore.RunResult:
        return itemscore.score(make_items(6), [Slow])

    result = asyncio.run(main())
    assert len(result.items) == 6


# -- groups, models, suites --------------------------------------------------------------------


def test_groups_and_models_give_breakdowns() -> None:
    """Several models give one dict each; groups give per-group measurements."""
    items = [
        ItemResult(id=f"{m}{i}", output="yes" if i < k else "no", expected="yes", group=g, model=m)
        for m, k in (("a", 3), ("b", 1))
        for i, g in enumerate(["x", "x", "y", "y"])
    ]
    result = itemscore.score(items, ["echo_test"], suite_id="s")
    assert result.models == ["a", "b"]
    a = result.by_model["a"]["s.echo_test"]
    b = result.by_model["b"]["s.echo_test"]
    assert (a.value, b.value) == (0.75, 0.25)
    assert a.model == "a"
    assert a.groups["x"].value == 1.0
    assert a.groups["y"].value == 0.5
    assert b.groups["y"].value == 0.0
    pooled = result.measurements["s.echo_test"]
    assert pooled.model is None
    assert pooled.value == 0.5
    assert pooled.n == 8


def test_single_model_measurements_are_that_models() -> None:
    """With one model, measurements and by_model[model] are the same numbers."""
    result = itemscore.score(make_items(model="m"), ["echo_test"])
    assert result.by_model["m"] == result.measurements
    assert result.measurements["default.echo_test"].model == "m"


def test_suite_binds_metrics_and_extra_metrics_add_more() -> None:
    """Bound metrics always run; extra_metrics add more; repeats are not scored twice."""

    class Mini(Suite):
        suite_id = "mini"
        metrics = ("echo_test", "answered_rate")

    rows = [{"id": "1", "output": "yes", "expected": "yes"}, {"output": None, "expected": "no"}]
    result = itemscore.run(Mini(), rows, extra_metrics=["answered_rate", "length_test"])
    assert list(result.measurements) == ["mini.echo_test", "mini.answered_rate", "mini.length_test"]
    assert [m["label"] for m in result.config["metrics"]] == [
        "echo_test",
        "answered_rate",
        "length_test",
    ]
    assert result.items[1].id == "2"  # no id column: the row number
    assert result.items[1].scores["length_test"].status is Status.SKIP


def test_extra_metric_reusing_a_label_with_other_options_is_refused() -> None:
    """An extra metric that takes a bound label with other options is a conflict."""

    class Mini(Suite):
        suite_id = "mini"
        metrics = ("length_test",)

    with pytest.raises(ConfigError, match="'length_test'"):
        itemscore.run(
            Mini(), [{"output": "x"}], extra_metrics=[{"name": "length_test", "scale": 3.0}]
        )


def test_progress_reaches_the_total() -> None:
    """The progress callback ends at items x metrics."""
    seen: list[tuple[int, int]] = []
    itemscore.score(
        make_items(3000),
        ["echo_test", "answered_rate"],
        progress=lambda done, total: seen.append((done, total)),
    )
    assert seen[-1] == (6000, 6000)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_ci_method_reaches_the_aggregates() -> None:
    """The run's interval method is used where the aggregation supports it."""
    items = make_items(40)
    result = itemscore.score(items, ["echo_test", "length_test"], ci_method="t", confidence=0.9)
    assert result.measurements["default.length_test"].ci_method == "t"
    assert result.measurements["default.echo_test"].ci_method == "wilson"  # t is not for ratios
    assert result.measurements["default.echo_test"].confidence == 0.9


# -- rescore -----------------------------------------------------------------------------------


def test_rescore_adds_a_metric_and_keeps_the_others(tmp_path: object) -> None:
    """rescore adds new scores and measurements without touching the saved ones."""
    first = itemscore.score(make_items(), ["echo_test"], suite_id="s")
    more = itemscore.rescore(first, ["answered_rate"])
    assert list(more.measurements) == ["s.echo_test", "s.answered_rate"]
    assert more.measurements["s.echo_test"] == first.measurements["s.echo_test"]
    for old, new in zip(first.items, more.items, strict=True):
        assert new.scores["echo_test"] == old.scores["echo_test"]
        assert "answered_rate" in new.scores
    assert [m["label"] for m in more.config["metrics"]] == ["echo_test", "answered_rate"]


def test_rescore_recomputes_everything_by_default() -> None:
    """rescore(result) recomputes every configured metric with its saved options."""
    first = itemscore.score(make_items(), [{"name": "length_test", "label": "len", "scale": 3.0}])
    again = itemscore.rescore(first)
    assert again.measurements == first.measurements
    assert again.config["metrics"] == first.config["metrics"]


# -- properties --------------------------------------------------------------------------------

_outputs = st.one_of(st.none(), st.sampled_from(["yes", "no", ""]))
_expected = st.one_of(st.none(), st.sampled_from(["yes", "no"]))


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.tuples(_outputs, _expected, st.sampled_from(["a", "b", None])), max_size=40),
    fail_on=st.sets(st.integers(min_value=0, max_value=39)),
)
def test_counts_add_up_to_the_items(
    rows: list[tuple[str | None, str | None, str | None]], fail_on: set[int]
) -> None:
    """Every item gets one score per metric; the four counts add up to the items."""
    items = [
        ItemResult(id=str(i), output=o, expected=e, group=g) for i, (o, e, g) in enumerate(rows)
    ]
    metrics = [{"name": "faulty_test", "fail_on": [str(i) for i in fail_on]}, "answered_rate"]
    result = itemscore.score(items, metrics)
    for m in result.measurements.values():
        assert sum(m.counts.values()) == len(items)
        assert m.n == m.counts[Status.OK] + m.counts[Status.FAIL]
        assert sum(sum(g.counts.values()) for g in m.groups.values()) == sum(
            1 for item in items if item.group is not None
        )
        if m.value is None:
            assert m.n == 0
        else:
            assert m.ci_low is not None
            assert m.ci_high is not None
            assert 0 <= m.ci_low <= m.value <= m.ci_high <= 1
    for item in result.items:
        assert set(item.scores) == {"faulty_test", "answered_rate"}


def test_items_are_not_mutated() -> None:
    """The caller's items keep empty scores; the result holds scored copies."""
    items = make_items(4)
    result = itemscore.score(items, ["answered_rate"])
    assert all(not item.scores for item in items)
    assert [attrs.evolve(i, scores={}) for i in result.items] == items
