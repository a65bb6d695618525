"""Plans and typed settings: configured once, stored typed, round-tripped, with provenance."""

from __future__ import annotations

import datetime
import math
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import ClassVar

import pytest

import itemscore
from itemscore import (
    ConfigError,
    Estimate,
    ItemResult,
    ItemScore,
    Metric,
    MetricContext,
    RunPlan,
    RunSettings,
    Status,
    Suite,
)
from itemscore._registry import unregister


class Counting(Metric):
    """Counts how often it is configured.

    Args:
        flag: Anything.
    """

    metric_id = "counting_test"
    configured = 0

    def __init__(self, flag: bool = False) -> None:
        type(self).configured += 1
        self.flag = flag

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        return self.ok() if item.output else self.fail()


class Corpus(Metric):
    """A corpus metric: share of outputs starting with an answer, as the reference shows.

    Args:
        explode: Raise from compute.
    """

    metric_id = "corpus_test"
    calls = 0

    def __init__(self, explode: bool = False) -> None:
        self.explode = explode

    def compute(
        self, predictions: Sequence[str | None], references: Sequence[tuple[str, ...] | None]
    ) -> itemscore.MetricResult:
        type(self).calls += 1
        if self.explode:
            raise RuntimeError("corpus boom")
        scores: list[float | None] = []
        for output, refs in zip(predictions, references):
            if not refs:
                scores.append(None)
            elif output is None:
                scores.append(0.0)
            else:
                scores.append(float(any(output.startswith(r) for r in refs)))
        values = [s for s in scores if s is not None]
        mean = sum(values) / len(values) if values else None
        return self.result(mean, per_row=scores, n_scored=len(values), extra={"rows": len(scores)})


class NotANumber(Metric):
    """An aggregate that returns NaN."""

    metric_id = "nan_test"

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        return self.ok()

    def aggregate(self, scores: Sequence[ItemScore], ctx: MetricContext) -> Estimate:
        return Estimate(value=math.nan, n=len(scores))


class Mutator(Metric):
    """Tries to change the item it scores."""

    metric_id = "mutator_test"
    required_inputs = ()

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        item.metadata.pop("latency")  # type: ignore[attr-defined]
        return self.ok()


class SeesLatency(Metric):
    """Ok when the item still has its latency."""

    metric_id = "sees_latency_test"
    required_inputs = ()

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        return self.ok() if "latency" in item.metadata else self.fail()


class Clustered(Metric):
    """Records the clusters its aggregate was given."""

    metric_id = "clustered_test"
    required_inputs = ()
    seen: ClassVar[list[Sequence[str | None] | None]] = []

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        return self.ok(float(len(item.output or "")))

    def aggregate(self, scores: Sequence[ItemScore], ctx: MetricContext) -> Estimate:
        type(self).seen.append(None if ctx.clusters is None else list(ctx.clusters))
        return Estimate(value=float(len(scores)), n=len(scores))


METRICS = (Counting, Corpus, NotANumber, Mutator, SeesLatency, Clustered)


@pytest.fixture(autouse=True)
def _registered() -> Iterator[None]:
    for cls in METRICS:
        itemscore.register(cls)
    yield
    for cls in METRICS:
        unregister(cls.metric_id)


def make_items(n: int = 12) -> list[ItemResult]:
    return [
        ItemResult(
            id=str(i),
            output=None if i % 5 == 0 else f"yes {i}",
            expected=None if i % 4 == 3 else "yes",
        )
        for i in range(n)
    ]


# -- plans ------------------------------------------------------------------------------------


def test_a_plan_configures_each_metric_once() -> None:
    """score(), run() and rescore() take the plan as it is: no metric is configured again."""
    Counting.configured = 0
    the_plan = itemscore.plan(["counting_test"], extra_metrics=[{"name": "exact_match"}])
    assert isinstance(the_plan, RunPlan)
    assert the_plan.labels == ["counting_test", "exact_match"]
    result = itemscore.score(make_items(), the_plan)

    class S(Suite):
        suite_id = "s"
        metrics = ()

    itemscore.run(S(), make_items(), extra_metrics=the_plan)
    itemscore.rescore(result, the_plan)
    assert Counting.configured == 1


def test_plan_drops_repeated_extra_metrics_and_refuses_label_clashes() -> None:
    the_plan = itemscore.plan(["exact_match"], extra_metrics=["exact_match", "token_f1"])
    assert the_plan.labels == ["exact_match", "token_f1"]
    with pytest.raises(ConfigError, match="label 'exact_match'"):
        itemscore.plan(["exact_match"], extra_metrics=[{"name": "exact_match", "nfkc": False}])


def test_a_run_does_not_change_its_metrics() -> None:
    """The label comes from the context: an instance used under two labels stays as it was."""
    metric = itemscore.plan([{"name": "exact_match", "label": "em2"}]).metrics[0].metric
    before = dict(vars(metric))
    itemscore.score(make_items(), itemscore.plan([{"name": "exact_match", "label": "em2"}]))
    assert vars(metric) == before
    assert metric.label == "exact_match"


# -- settings -----------------------------------------------------------------------------------


def test_settings_are_typed_and_checked() -> None:
    settings = RunSettings(suite_id="qa", confidence=0.9, ci_method="t", seed=4)
    assert settings.to_dict()["ci_method"] == "t"
    assert RunSettings.from_dict({**settings.to_dict(), "unknown": 1}) == settings
    with pytest.raises(ConfigError, match=r"`confidence` \(1.5\) must be in \(0, 1\)"):
        RunSettings(confidence=1.5)
    with pytest.raises(ConfigError, match=r"(?i)did you mean 'wilson'"):
        RunSettings(ci_method="wilsn")


def test_settings_and_provenance_round_trip_through_results_json(tmp_path: Path) -> None:
    result = itemscore.score(make_items(), ["exact_match"], suite_id="qa", seed=7, confidence=0.9)
    assert result.settings == RunSettings(suite_id="qa", seed=7, confidence=0.9)
    result = result.with_provenance(command="itemscore score x.jsonl")
    loaded = itemscore.RunResult.load_json(result.save_json(tmp_path / "results.json"))
    assert loaded.settings == result.settings
    assert loaded.provenance == result.provenance
    assert loaded.config["confidence"] == 0.9
    assert loaded.labels == ["exact_match"]


def test_provenance_says_where_the_result_comes_from() -> None:
    result = itemscore.score(make_items(), ["exact_match", "starts_with"])
    prov = result.provenance
    created = datetime.datetime.fromisoformat(prov["created"].replace("Z", "+00:00"))
    assert created.tzinfo is not None
    assert prov["duration_s"] >= 0
    assert prov["itemscore_version"] == itemscore.__version__
    assert prov["python"] == ".".join(map(str, sys.version_info[:3]))
    assert prov["packages"] == {"itemscore": itemscore.__version__, "itemscore-example": "0.1.0"}
    more = result.with_provenance(data={"rows": 12})
    assert more.provenance["data"] == {"rows": 12}
    assert "data" not in result.provenance


# -- corpus metrics -----------------------------------------------------------------------------


def test_corpus_metric_rows_become_item_scores() -> None:
    """per_row -> item scores (None -> skip); value and extra -> the measurement."""
    items = make_items()
    result = itemscore.score(items, ["corpus_test"])
    m = result.measurements["default.corpus_test"]
    scores = [item.scores["corpus_test"] for item in result.items]
    assert [s.status for s in scores] == [
        Status.SKIP if i % 4 == 3 else Status.OK for i in range(len(items))
    ]
    values = [s.value for s in scores if s.value is not None]
    assert m.value == pytest.approx(sum(values) / len(values))
    assert m.n == len(values)
    assert m.extra == {"rows": 12.0}


def test_corpus_metric_exception_is_its_measurement_error() -> None:
    metrics = [{"name": "corpus_test", "explode": True}, "exact_match"]
    result = itemscore.score(make_items(), metrics)
    assert result.measurements["default.corpus_test"].error == "RuntimeError: corpus boom"
    assert result.measurements["default.exact_match"].error is None
    assert {i.scores["corpus_test"].status for i in result.items} == {Status.ERROR}


def test_corpus_metric_runs_once_on_the_driver_under_a_process_pool() -> None:
    Corpus.calls = 0
    serial = itemscore.score(make_items(40), ["corpus_test", "exact_match"])
    assert Corpus.calls == 1
    pooled = itemscore.score(
        make_items(40), ["corpus_test", "exact_match"], executor="process", workers=2
    )
    assert Corpus.calls == 2
    assert pooled.measurements == serial.measurements


def test_corpus_metric_per_model_and_per_group() -> None:
    items = [
        ItemResult(id=str(i), output="yes", expected="yes" if i % 3 else "no", model=m, group=g)
        for i in range(12)
        for m in ("a", "b")
        for g in (("g1",) if i % 2 else ("g2",))
    ]
    result = itemscore.score(items, ["corpus_test"])
    by_a = result.by_model["a"]["default.corpus_test"]
    assert by_a.value == pytest.approx(8 / 12)
    assert set(by_a.groups) == {"g1", "g2"}


# -- isolation of inputs, non-finite aggregates, groups and clusters ---------------------------


@pytest.mark.parametrize("executor", ["serial", "process"])
def test_a_metric_cannot_change_the_items(executor: str) -> None:
    """Mutating metadata fails for that metric only; later metrics, reports, caller unchanged."""
    raw = {"latency": 1.5, "tags": ["x"]}
    items = [ItemResult(id=str(i), output="a", metadata=raw) for i in range(6)]
    workers = 2 if executor == "process" else None
    result = itemscore.score(
        items, ["mutator_test", "sees_latency_test"], executor=executor, workers=workers
    )
    assert {i.scores["mutator_test"].status for i in result.items} == {Status.ERROR}
    assert result.measurements["default.sees_latency_test"].value == 1.0
    assert raw == {"latency": 1.5, "tags": ["x"]}
    assert all(item.metadata["latency"] == 1.5 for item in result.items)
    with pytest.raises(AttributeError):
        items[0].metadata["tags"].append("y")  # nested values are read-only too


def test_a_non_finite_aggregate_is_a_measurement_error() -> None:
    m = itemscore.score(make_items(), ["nan_test"]).measurements["default.nan_test"]
    assert m.error is not None
    assert "non-finite" in m.error
    assert m.value is None


def test_grouped_measurements_carry_the_macro_value_and_flag_small_groups() -> None:
    items = [
        ItemResult(id=str(i), output="yes" if i % 3 else "no", expected="yes", group=g)
        for i, g in enumerate(["big"] * 60 + ["small"] * 10)
    ]
    m = itemscore.score(items, ["exact_match"]).measurements["default.exact_match"]
    big, small = m.groups["big"], m.groups["small"]
    assert big.value is not None
    assert small.value is not None
    assert m.extra["macro"] == pytest.approx((big.value + small.value) / 2)
    assert m.extra["macro_low"] < m.extra["macro"] < m.extra["macro_high"]
    assert "small_group" not in big.extra
    assert small.extra["small_group"] == 1.0


def test_clusters_reach_the_aggregate_aligned_with_the_scores() -> None:
    Clustered.seen = []
    items = [
        ItemResult(id=str(i), output="x", model=m, cluster=f"c{i % 3}")
        for i in range(6)
        for m in ("a", "b")
    ]
    itemscore.score(items, ["clustered_test"])
    per_model = [i.cluster for i in items if i.model == "a"]
    assert per_model in Clustered.seen
    assert [i.cluster for i in items] in Clustered.seen
    assert itemscore.score(make_items(), ["clustered_test"])
    assert Clustered.seen[-1] is None


def test_clustered_items_get_cluster_robust_intervals() -> None:
    """Default ratio and mean aggregates use the clusters: n_clusters and the design effect."""
    from itemscore import aggregate

    items = [
        ItemResult(
            id=str(i), output="yes" if i % 7 < 4 else "no", expected="yes", cluster=f"c{i // 6}"
        )
        for i in range(60)
    ]
    result = itemscore.score(items, ["exact_match", "token_f1"])
    em = result.measurements["default.exact_match"]
    expected = aggregate.cluster_ratio(
        [i % 7 < 4 for i in range(60)], [f"c{i // 6}" for i in range(60)]
    )
    assert (em.value, em.ci_low, em.ci_high) == (expected.value, expected.low, expected.high)
    assert em.extra["n_clusters"] == 10.0
    assert "design_effect" in result.measurements["default.token_f1"].extra


def test_macro_of_default_aggregates_is_aggregate_macro_mean() -> None:
    from itemscore import aggregate

    groups = [("a", "b", "c")[i % 3] if i < 45 else "a" for i in range(60)]
    items = [
        ItemResult(id=str(i), output="yes" if i % 4 else "no", expected="yes", group=g)
        for i, g in enumerate(groups)
    ]
    m = itemscore.score(items, ["exact_match"]).measurements["default.exact_match"]
    expected = aggregate.macro_mean(
        [float(i % 4 != 0) for i in range(60)], groups, bounds=(0.0, 1.0)
    )
    assert m.extra["macro"] == expected.value
    assert (m.extra["macro_low"], m.extra["macro_high"]) == (expected.low, expected.high)


def test_metrics_with_equal_normalisers_share_one_per_shard() -> None:
    """exact_match and f1 share their default normaliser; token_f1's differs."""
    from itemscore.engine._shard import score_shard
    from itemscore.text import Normalizer

    assert itemscore.plan(["exact_match", "f1"]).equal_normalizers() == [Normalizer()]
    assert itemscore.plan(["exact_match", "token_f1"]).equal_normalizers() == []
    calls: list[str] = []

    class Spy(Metric):
        metric_id = "spy_test"
        required_inputs = ()

        def __init__(self) -> None:
            self.normalizer = Normalizer()

        def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
            raise AssertionError("the batch path is used")

        def score_items(self, items: Sequence[ItemResult], ctx: MetricContext) -> list[ItemScore]:
            normalize = ctx.normalizer(self.normalizer)
            calls.append(normalize("A.") + str(normalize is self.normalizer))
            return [self.ok() for _ in items]

    items = make_items()
    shared = itemscore.plan([Spy(), "exact_match"])
    score_shard(shared, items, RunSettings())
    alone = itemscore.plan([Spy()])
    score_shard(alone, items, RunSettings())
    assert calls == ["aFalse", "aTrue"]
    both = itemscore.score(items, ["exact_match", "f1"]).measurements["default.exact_match"]
    assert both == itemscore.score(items, ["exact_match"]).measurements["default.exact_match"]
