"""The paired-bootstrap protocol of compare: a metric's resample count and its own paired test."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import numpy as np
import pytest

from itemscore import (
    ConfigError,
    Estimate,
    ItemResult,
    ItemScore,
    Metric,
    MetricContext,
    compare,
    register,
    score,
)
from itemscore._registry import unregister

CALLS: list[dict[str, Any]] = []


class _Mean(Metric):
    """A custom aggregate (the mean of values) whose compare goes through the bootstrap."""

    description = "Mean of the item value, aggregated by hand."
    aggregation = "mean"

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        return self.ok(float(item.output or 0))

    def aggregate(self, scores: Sequence[ItemScore], ctx: MetricContext) -> Estimate:
        values = [s.value for s in scores if s.scored and s.value is not None]
        return Estimate(value=float(np.mean(values)) if values else None, n=len(values))

    def paired_bootstrap(
        self,
        scores_a: Sequence[ItemScore | None],
        scores_b: Sequence[ItemScore | None],
        ctx: MetricContext,
        *,
        n_resamples: int = 2000,
        clusters: Sequence[str | None] | None = None,
    ) -> tuple[float, float, np.ndarray, np.ndarray]:
        a = np.array([s.value for s in scores_a if s is not None], dtype=float)
        b = np.array([s.value for s in scores_b if s is not None], dtype=float)
        rng = np.random.default_rng(ctx.seed)
        index = rng.integers(0, a.size, size=(n_resamples, a.size))
        CALLS.append({"kind": "bootstrap", "n": len(scores_a), "n_resamples": n_resamples})
        return float(a.mean()), float(b.mean()), a[index].mean(1), b[index].mean(1)


@pytest.fixture
def metrics() -> Iterator[None]:
    class WithTest(_Mean):
        metric_id = "protocol_with_test"
        paired_n_resamples: ClassVar[int] = 321

        def paired_p_value(
            self,
            scores_a: Sequence[ItemScore | None],
            scores_b: Sequence[ItemScore | None],
            ctx: MetricContext,
            *,
            clusters: Sequence[str | None] | None = None,
        ) -> tuple[float | None, str]:
            CALLS.append({"kind": "test", "n": len(scores_a), "clusters": clusters})
            return 0.0123 + len(scores_a) / 1000, "own-test"

    class NoP(_Mean):
        metric_id = "protocol_no_p"

        def paired_p_value(self, *args: Any, **kwargs: Any) -> tuple[float | None, str]:
            return None, "own-test"

    class BadCount(_Mean):
        metric_id = "protocol_bad_count"
        paired_n_resamples = "many"

    class BadTest(_Mean):
        metric_id = "protocol_bad_test"

        def paired_p_value(self, *args: Any, **kwargs: Any) -> Any:
            return 0.5

    for cls in (WithTest, NoP, BadCount, BadTest):
        register(cls)
    CALLS.clear()
    yield
    for cls in (WithTest, NoP, BadCount, BadTest):
        unregister(cls.metric_id)


def _result(metric: str) -> Any:
    rng = np.random.default_rng(3)
    items = []
    for model, shift in (("a", 0.0), ("b", 0.5)):
        for i in range(40):
            value = str(rng.normal(shift))
            group = "g1" if i < 25 else "g2"
            items.append(ItemResult(id=f"q{i}", output=value, model=model, group=group))
    return score(items, [metric], suite_id="t")


@pytest.mark.usefixtures("metrics")
def test_the_metrics_count_and_test_are_used_for_headline_and_groups() -> None:
    """paired_n_resamples goes to paired_bootstrap; paired_p_value replaces p, named in method."""
    (c,) = compare(_result("protocol_with_test"), baseline="a")
    assert c.method == "paired-bootstrap, own-test"
    assert c.p_value == pytest.approx(0.0123 + 40 / 1000)
    assert c.extra["n_resamples"] == 321
    assert c.groups["g1"].p_value == pytest.approx(0.0123 + 25 / 1000)
    assert c.groups["g2"].p_value == pytest.approx(0.0123 + 15 / 1000)
    assert c.groups["g1"].method == "paired-bootstrap, own-test"
    boots = [call for call in CALLS if call["kind"] == "bootstrap"]
    tests = [call for call in CALLS if call["kind"] == "test"]
    assert {call["n_resamples"] for call in boots} == {321}
    # The same arguments as the bootstrap: the headline and each group, once each.
    sizes = sorted(call["n"] for call in tests)
    assert sizes == sorted(call["n"] for call in boots) == [15, 25, 40]


@pytest.mark.usefixtures("metrics")
def test_a_test_without_a_p_value_leaves_the_bootstrap_p() -> None:
    """A metric test that gives no p-value is not named: the bootstrap's p stands."""
    (c,) = compare(_result("protocol_no_p"), baseline="a")
    assert c.method == "paired-bootstrap"
    assert c.p_value is not None
    assert c.extra["n_resamples"] == 2000


@pytest.mark.usefixtures("metrics")
@pytest.mark.parametrize(
    ("metric", "message"),
    [
        ("protocol_bad_count", "`paired_n_resamples` to 'many'"),
        ("protocol_bad_test", "`paired_p_value` returned 0.5"),
    ],
)
def test_a_broken_protocol_is_a_clear_error(metric: str, message: str) -> None:
    """A resample count that is no positive integer, or a test's malformed answer, is named."""
    with pytest.raises(ConfigError, match=message):
        compare(_result(metric), baseline="a")
