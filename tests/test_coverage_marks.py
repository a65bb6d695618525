"""Tables flag an interval whose coverage receipt is below the floor, and say why under them.

The receipts come from real runs (a Wald interval at a small share, a normal interval on a
very skewed small sample); the coverages they must show are computed here independently:
from scipy's binomial distribution over every count, never from the receipt code.
"""

from __future__ import annotations

import html
import io
import math
import re

import numpy as np
import pytest
import scipy.stats
from rich.console import Console

from itemscore import ItemResult, ItemScore, Metric, MetricContext, RunResult, score
from itemscore._terminal import result_tables
from itemscore.reports.report_html import report_html
from itemscore.reports.results_md import markdown_table

MARK = "\u2021"
DOCS = "docs/aggregation.md#the-receipt-in-extra"
Z = scipy.stats.norm.ppf(0.975)


class Value(Metric):
    """The output read as a number; the mean of them, with the run's interval."""

    metric_id = "test_coverage_marks_value"
    required_inputs = ("output",)
    aggregation = "mean"

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        return self.ok(float(str(item.output)))


def _terminal(result: RunResult, *, by_group: bool = False, layout: str | None = None) -> str:
    console = Console(width=400, file=io.StringIO(), color_system=None)
    for table in result_tables(result, by_group=by_group, width=400, layout=layout):
        console.print(table)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    return re.sub(r"\s+", " ", text)  # the notes may wrap


def _wald_coverage(n: int, p: float) -> float:
    """Exact coverage of the clipped Wald interval at the share ``p``: every k, scipy's pmf."""
    k = np.arange(n + 1)
    share = k / n
    half = Z * np.sqrt(share * (1 - share) / n)
    low, high = np.clip(share - half, 0, 1), np.clip(share + half, 0, 1)
    pmf = scipy.stats.binom.pmf(k, n, p)
    return float(np.sum(pmf[(low <= p) & (p <= high)]))


def _wilson_coverage(n: int, p: float) -> float:
    """Exact coverage of the Wilson interval at ``p`` (statsmodels' bounds, every k)."""
    low, high = _wilson_bounds(n)
    pmf = scipy.stats.binom.pmf(np.arange(n + 1), n, p)
    return float(np.sum(pmf[(low <= p) & (p <= high)]))


def _wilson_bounds(n: int) -> tuple[np.ndarray, np.ndarray]:
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(np.arange(n + 1), n, alpha=0.05, method="wilson")
    return np.asarray(low), np.asarray(high)


def _wald_bounds(n: int) -> tuple[np.ndarray, np.ndarray]:
    share = np.arange(n + 1) / n
    half = Z * np.sqrt(share * (1 - share) / n)
    return np.clip(share - half, 0, 1), np.clip(share + half, 0, 1)


def _worst_coverage(n: int, k: int, bounds: tuple[np.ndarray, np.ndarray]) -> float:
    """The lowest exact coverage for a share inside the interval of ``k`` of ``n`` (scipy pmf).

    Coverage is a sum of binomial probabilities that jumps only at the intervals' ends and
    is unimodal between them: its infimum is next to a jump or an end, so the shares 1e-9
    either side of each (inside the interval) find it.
    """
    lows, highs = bounds
    low, high = lows[k], highs[k]
    ends = np.concatenate([lows, highs, [low, high]])
    ends = ends[(ends >= low) & (ends <= high)]
    shares = np.clip(np.concatenate([ends - 1e-9, ends, ends + 1e-9]), low, high)
    pmf = scipy.stats.binom.pmf(np.arange(n + 1)[None, :], n, shares[:, None])
    inside = (lows[None, :] <= shares[:, None]) & (shares[:, None] <= highs[None, :])
    return float((pmf * inside).sum(axis=1).min())


def _share_items(n: int, right: int, model: str | None = None) -> list[ItemResult]:
    return [
        ItemResult(id=str(i), model=model, output="yes" if i < right else "no", expected="yes")
        for i in range(n)
    ]


def test_an_undercovering_proportion_is_marked_with_its_exact_coverage() -> None:
    """1 of 20 right with a Wald interval: ‡ after the interval, the worst exact coverage below.

    Its interval [0, 0.15] holds shares just above 0, where Wald covers almost never (the
    interval of 0 of 20 is the point [0, 0]): the note gives that worst case, not the 92.5%
    at 1/20.
    """
    result = score(_share_items(20, 1), ["exact_match"], ci_method="normal")
    expected = _worst_coverage(20, 1, _wald_bounds(20))
    assert expected < 0.001 < 0.94 > _wald_coverage(20, 1 / 20)
    note = (
        f"{MARK} exact_match: interval covers {100 * expected:.1f}% at worst (< 94%) at its n, "
        f"for a nominal 95%: see {DOCS}."
    )
    text = _terminal(result)
    assert f"{MARK}[0.00, 0.15]" in text
    assert note in text
    page = report_html(result)
    assert page.count('class="num undercovers"') == 1
    assert html.escape(note.replace("exact_match:", "Exact match · all items:")) in page
    md = markdown_table(result)
    assert f"|{MARK}[0.00, 0.15]|" in md
    assert note.replace("exact_match:", "Exact match:") in md


def _skewed_coverage(n: int, big: float) -> float:
    """Exact coverage of the normal interval for ``n`` draws from n - 1 ones and one ``big``.

    A sample is fixed by how many times it drew ``big``, a binomial count.
    """
    mean = (n - 1 + big) / n
    total = 0.0
    for c in range(n + 1):
        sample = np.array([big] * c + [1.0] * (n - c))
        m = sample.mean()
        half = Z * sample.std(ddof=1) / math.sqrt(n) if 0 < c < n else 0.0
        if m - half <= mean <= m + half:
            total += scipy.stats.binom.pmf(c, n, 1 / n)
    return total


def test_an_undercovering_mean_of_a_skewed_sample_is_marked() -> None:
    """Fourteen 1s and one 100, normal interval: its simulated receipt is far below 94%."""
    items = [ItemResult(id=str(i), output="100" if i == 0 else "1") for i in range(15)]
    result = score(items, [Value()], ci_method="normal", seed=3)
    m = result.measurements["default.test_coverage_marks_value"]
    exact = _skewed_coverage(15, 100.0)
    assert exact < 0.8
    reps = m.extra["coverage_reps"]
    assert abs(m.extra["coverage"] - exact) < 4 * math.sqrt(exact * (1 - exact) / reps)
    text = _terminal(result)
    assert MARK in text
    assert (
        f"{MARK} test_coverage_marks_value: interval covers {100 * m.extra['coverage']:.1f}% "
        f"simulated (< 94%) at its n, for a nominal 95%: see {DOCS}."
    ) in text
    page = report_html(result)
    assert page.count('class="num undercovers"') == 1
    assert "coverage-note" in page
    assert MARK in markdown_table(result)
    # every surface that shows the note says what helps, once per table (a mean: auto)
    advice = "What helps: more items; for means --ci auto (t below 30 values, BCa near a bound)."
    assert text.count(advice) == 1
    assert markdown_table(result).count(advice) == 1
    assert page.count(f'<p class="meta coverage-note">{advice}</p>') >= 1


def test_with_several_models_the_mark_and_note_name_the_model_and_group() -> None:
    """Columns layout: only the flagged model's cell is marked, and its note names it."""
    items = [
        ItemResult(id=str(i), model=model, output="yes" if i < right else "no",
                   expected="yes", group="g" if i % 2 else "h")
        for model, n, right in (("weak", 20, 1), ("strong", 2000, 1200))
        for i in range(n)
    ]  # fmt: skip
    result = score(items, ["exact_match"], ci_method="normal")
    weak = result.by_model["weak"]["default.exact_match"]
    strong = result.by_model["strong"]["default.exact_match"]
    assert weak.extra["coverage_min"] < 0.94 <= strong.extra["coverage_min"]
    assert _worst_coverage(2000, 1200, _wald_bounds(2000)) >= 0.94
    text = _terminal(result, layout="columns")
    assert f"{MARK} exact_match · weak: interval covers" in text
    assert "· strong: interval covers" not in text
    grouped = _terminal(result, by_group=True, layout="columns")
    assert weak.groups["h"].extra["coverage_min"] < 0.94  # 1 of 10, Wald
    # Two flagged rows share one note: the mark's meaning once, then each row's coverage.
    shown = f"{100 * weak.groups['h'].extra['coverage_min']:.1f}% at worst"
    assert f"{MARK} The interval covers less than 94% at its n" in grouped
    assert f"exact_match · weak {100 * weak.extra['coverage_min']:.1f}% at worst;" in grouped
    assert f"exact_match, group h · weak {shown}." in grouped
    # 0 of 10: Wald's point interval [0, 0] covers no share above 0 (its coverage at the
    # estimate, 1.0, hid that): flagged too.
    assert weak.groups["g"].extra["coverage"] == 1.0
    assert weak.groups["g"].extra["coverage_min"] == 0.0
    assert "exact_match, group g · weak 0.0% at worst" in grouped
    page = report_html(result)
    assert "Exact match · weak: interval covers" in page
    assert "Exact match · strong: interval covers" not in page
    advice = "What helps: more items; for ratios --ci clopper-pearson, which never covers less"
    assert advice in page
    assert advice in markdown_table(result)


@pytest.mark.parametrize("by_group", [False, True])
def test_a_run_whose_intervals_cover_shows_no_mark(by_group: bool) -> None:
    """Wilson at 620 of 1000 (310 of 500 per group) covers 94%+ inside it: no mark, no note."""
    items = [
        ItemResult(id=str(i), output="yes" if i % 500 < 310 else "no", expected="yes",
                   group="a" if i < 500 else "b")
        for i in range(1000)
    ]  # fmt: skip
    assert _worst_coverage(1000, 620, _wilson_bounds(1000)) >= 0.94
    assert _worst_coverage(500, 310, _wilson_bounds(500)) >= 0.94
    result = score(items, ["exact_match"])
    text = _terminal(result, by_group=by_group)
    assert MARK not in text
    assert DOCS not in text
    page = report_html(result)
    assert "undercovers" not in page
    assert "coverage-note" not in page
    assert MARK not in markdown_table(result)
    assert "What helps" not in page + markdown_table(result) + text


def test_a_coverage_just_below_the_floor_never_reads_as_the_floor() -> None:
    """20 of 41 with Wilson covers 93.98% at worst: the note says so, never "94.0% (< 94%)"."""
    result = score(_share_items(41, 20), ["exact_match"])
    expected = _worst_coverage(41, 20, _wilson_bounds(41))
    assert f"{100 * expected:.1f}" == "94.0"
    assert expected < 0.94
    text = _terminal(result)
    assert f"interval covers {100 * expected:.2f}% at worst (< 94%)" in text
    assert "94.0%" not in text
