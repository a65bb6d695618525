"""Tests for itemscore.aggregate: parity with statsmodels/scipy, edges, validation, properties."""

from __future__ import annotations

import math
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.proportion import proportion_confint
from statsmodels.stats.weightstats import DescrStatsW

from itemscore import ConfigError, Estimate, aggregate
from itemscore.aggregate import (
    GEOMEAN_METHODS,
    MEAN_METHODS,
    RATIO_METHODS,
    geomean,
    mean,
    percentile_interval,
    percentiles,
    ratio,
    ratio_interval,
    resample_counts,
)
from itemscore.stats import _bootstrap

#: Our method names and statsmodels' for the same interval.
STATSMODELS_NAME = {
    "wilson": "wilson",
    "normal": "normal",
    "clopper-pearson": "beta",
    "jeffreys": "jeffreys",
    "agresti-coull": "agresti_coull",
}
CONFIDENCES = (0.9, 0.95, 0.99)
NS = (1, 2, 5, 10, 30, 100, 1000, 12345, 10**6)
GRID = sorted({(k, n) for n in NS for k in (0, 1, 2, n // 3, n // 2, n - 1, n) if 0 <= k <= n})
TOL = 1e-12


@st.composite
def counts(draw: st.DrawFn, max_n: int = 10**6) -> tuple[int, int]:
    """A pair ``(k, n)`` with ``0 <= k <= n <= max_n``, edges included."""
    n = draw(st.integers(0, max_n))
    k = draw(st.one_of(st.sampled_from((0, n)), st.integers(0, n)))
    return k, n


confidences = st.floats(min_value=0.01, max_value=0.999)
finite_values = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


def _statsmodels(k: int, n: int, method: str, confidence: float) -> tuple[float, float]:
    low, high = proportion_confint(k, n, alpha=1 - confidence, method=STATSMODELS_NAME[method])
    return float(low), float(high)


# --------------------------------------------------------------------------- module surface


#: The ratio methods statsmodels' proportion_confint has too.
STATSMODELS_RATIO_METHODS = ("wilson", "normal", "clopper-pearson", "jeffreys", "agresti-coull")


def test_all_is_sorted_and_complete() -> None:
    """`__all__` is sorted and names only what the module defines."""
    assert list(aggregate.__all__) == sorted(aggregate.__all__, key=lambda s: (not s.isupper(), s))
    for name in aggregate.__all__:
        assert hasattr(aggregate, name)


def test_method_constants() -> None:
    """The method tuples list the documented methods, default first."""
    assert RATIO_METHODS == (
        "wilson", "normal", "clopper-pearson", "jeffreys", "agresti-coull", "mid-p", "auto",
    )  # fmt: skip
    assert MEAN_METHODS == ("normal", "t", "bootstrap", "bca", "auto")
    assert GEOMEAN_METHODS == ("normal", "t", "auto")


def test_import_does_not_import_scipy() -> None:
    """Importing the module, and a Wilson ratio, leave scipy unimported (CLI start-up)."""
    code = (
        "import sys; import itemscore.aggregate as a; a.ratio(3, 10); a.mean([1.0, 2.0]); "
        "print('scipy' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"


# --------------------------------------------------------------------------- ratio: parity


@pytest.mark.parametrize("confidence", CONFIDENCES, ids=lambda c: f"conf={c}")
@pytest.mark.parametrize("method", ["wilson", "normal", "clopper-pearson", "agresti-coull"])
def test_ratio_matches_statsmodels(method: str, confidence: float) -> None:
    """Wilson, Wald, Clopper-Pearson and Agresti-Coull equal statsmodels to 1e-12 on the grid."""
    for k, n in GRID:
        est = ratio(k, n, method, confidence)
        low, high = _statsmodels(k, n, method, confidence)
        assert est.value == k / n
        assert est.low == pytest.approx(low, abs=TOL), (k, n)
        assert est.high == pytest.approx(high, abs=TOL), (k, n)


@pytest.mark.parametrize("confidence", CONFIDENCES, ids=lambda c: f"conf={c}")
def test_ratio_jeffreys_matches_statsmodels_inside(confidence: float) -> None:
    """Jeffreys equals statsmodels except the end that would exclude k/n at k=0 and k=n."""
    for k, n in GRID:
        est = ratio(k, n, "jeffreys", confidence)
        low, high = _statsmodels(k, n, "jeffreys", confidence)
        # statsmodels leaves the beta quantiles there, which exclude k/n; Brown, Cai and
        # DasGupta (2001) set them to 0 and 1, and so does itemscore.
        if k == 0:
            assert low > 0.0
            low = 0.0
        if k == n:
            assert high < 1.0
            high = 1.0
        assert est.low == pytest.approx(low, abs=TOL), (k, n)
        assert est.high == pytest.approx(high, abs=TOL), (k, n)


@pytest.mark.parametrize(
    ("method", "k", "n", "expected"),
    [
        pytest.param("normal", 0, 10, (0.0, 0.0), id="wald-degenerate-at-0"),
        pytest.param("normal", 10, 10, (1.0, 1.0), id="wald-degenerate-at-n"),
        pytest.param("normal", 1, 10, (0.0, 0.2859385096913685), id="wald-clipped-at-0"),
        pytest.param("agresti-coull", 0, 10, (0.0, 0.3208873057505458), id="ac-clipped-at-0"),
        pytest.param("agresti-coull", 10, 10, (0.6791126942494543, 1.0), id="ac-clipped-at-1"),
        pytest.param("clopper-pearson", 0, 1, (0.0, 0.975), id="cp-k0-n1"),
        pytest.param("clopper-pearson", 1, 1, (0.025, 1.0), id="cp-k1-n1"),
        pytest.param("wilson", 0, 10, (0.0, 0.27753279986288926), id="wilson-k0"),
        pytest.param("jeffreys", 0, 10, (0.0, 0.2171962675092106), id="jeffreys-k0"),
        pytest.param("jeffreys", 10, 10, (0.7828037324907894, 1.0), id="jeffreys-kn"),
    ],
)
def test_ratio_edges(method: str, k: int, n: int, expected: tuple[float, float]) -> None:
    """At k=0 and k=n the bounds are statsmodels', clipped to [0, 1] and containing k/n."""
    est = ratio(k, n, method)
    assert est.ci == pytest.approx(expected, abs=TOL)


def test_statsmodels_edge_behaviour_we_rely_on() -> None:
    """Statsmodels clips Wald/AC/Wilson, pins Clopper-Pearson at 0/1 and leaves Jeffreys alone."""
    assert proportion_confint(1, 10, method="normal")[0] == 0.0
    assert proportion_confint(0, 10, method="agresti_coull")[0] == 0.0
    assert proportion_confint(0, 10, method="beta")[0] == 0.0
    assert proportion_confint(10, 10, method="beta")[1] == 1.0
    assert proportion_confint(0, 10, method="jeffreys")[0] > 0.0
    assert proportion_confint(10, 10, method="jeffreys")[1] < 1.0


@pytest.mark.parametrize("method", RATIO_METHODS)
def test_ratio_returns_plain_floats(method: str) -> None:
    """Every number in the Estimate is a Python float, never a numpy scalar."""
    est = ratio(np.int64(3), np.int64(10), method)
    assert isinstance(est, Estimate)
    assert all(type(x) is float for x in (est.value, est.low, est.high, est.confidence))
    assert type(est.n) is int
    assert est.method == (method if method != "auto" else "mid-p (auto: n = 10 < 15)")
    assert est.n == 10


@pytest.mark.parametrize("method", RATIO_METHODS)
def test_ratio_n_zero_is_none(method: str) -> None:
    """No trials give value, low and high None, with the method and confidence kept."""
    est = ratio(0, 0, method, 0.9)
    assert (est.value, est.low, est.high, est.n) == (None, None, None, 0)
    assert (est.method, est.confidence) == (method, 0.9)


# --------------------------------------------------------------------------- ratio_interval


@pytest.mark.parametrize("confidence", CONFIDENCES, ids=lambda c: f"conf={c}")
@pytest.mark.parametrize("method", RATIO_METHODS)
def test_ratio_interval_equals_scalar(method: str, confidence: float) -> None:
    """The vectorised form equals the scalar one element by element, NaN where n = 0."""
    ks = np.array([k for k, _ in GRID] + [0])
    ns = np.array([n for _, n in GRID] + [0])
    low, high = ratio_interval(ks, ns, method, confidence)
    assert low.shape == high.shape == ks.shape
    assert low.dtype == high.dtype == np.float64
    for i, (k, n) in enumerate(zip(ks.tolist(), ns.tolist())):
        if n == 0:
            assert math.isnan(low[i])
            assert math.isnan(high[i])
            continue
        est = ratio(k, n, method, confidence)
        assert low[i] == pytest.approx(est.low, abs=1e-15), (k, n)
        assert high[i] == pytest.approx(est.high, abs=1e-15), (k, n)


@pytest.mark.parametrize("method", RATIO_METHODS)
def test_ratio_interval_scalars_give_0d_arrays(method: str) -> None:
    """Scalar k and n give 0-d arrays, NaN for n = 0."""
    low, high = ratio_interval(3, 10, method)
    assert isinstance(low, np.ndarray)
    assert low.shape == high.shape == ()
    assert (float(low), float(high)) == pytest.approx(ratio(3, 10, method).ci, abs=1e-15)
    empty_low, empty_high = ratio_interval(0, 0, method)
    assert math.isnan(empty_low)
    assert math.isnan(empty_high)


def test_ratio_interval_broadcasts() -> None:
    """A scalar n broadcasts against an array of k, and integral floats are accepted."""
    low, high = ratio_interval([0.0, 5.0, 10.0], 10)
    assert low.shape == (3,)
    assert high[1] == pytest.approx(ratio(5, 10).high, abs=1e-15)


# --------------------------------------------------------------------------- ratio: properties


@settings(deadline=None)
@given(kn=counts(), method=st.sampled_from(RATIO_METHODS), confidence=confidences)
def test_ratio_interval_contains_value(kn: tuple[int, int], method: str, confidence: float) -> None:
    """For any 0 <= k <= n <= 10**6: 0 <= low <= k/n <= high <= 1."""
    k, n = kn
    est = ratio(k, n, method, confidence)
    if n == 0:
        assert est.value is None
        return
    assert est.value is not None
    assert est.low is not None
    assert est.high is not None
    assert 0.0 <= est.low <= est.value <= est.high <= 1.0


@settings(deadline=None, max_examples=50)
@given(kn=counts(max_n=1000), method=st.sampled_from(RATIO_METHODS))
def test_ratio_wider_at_higher_confidence(kn: tuple[int, int], method: str) -> None:
    """A 99% interval contains the 90% one."""
    k, n = kn
    narrow, wide = ratio(k, n, method, 0.9), ratio(k, n, method, 0.99)
    if n:
        assert wide.low is not None
        assert narrow.low is not None
        assert wide.high is not None
        assert narrow.high is not None
        assert wide.low <= narrow.low + 1e-15
        assert narrow.high <= wide.high + 1e-15


# --------------------------------------------------------------------------- ratio: validation


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        pytest.param(
            {"confidence": 1.5}, ConfigError, "`confidence` (1.5) must be in (0, 1).", id="conf>1"
        ),
        pytest.param(
            {"confidence": 0.0}, ConfigError, "`confidence` (0.0) must be in (0, 1).", id="conf=0"
        ),
        pytest.param(
            {"confidence": float("nan")},
            ConfigError,
            "`confidence` (nan) must be in (0, 1).",
            id="conf-nan",
        ),
        pytest.param(
            {"confidence": "0.9"},
            TypeError,
            "`confidence` ('0.9') must be a number, not str.",
            id="conf-str",
        ),
        pytest.param(
            {"method": "wilsn"},
            ConfigError,
            "`method` ('wilsn') must be one of 'wilson', 'normal', 'clopper-pearson', "
            "'jeffreys', 'agresti-coull', 'mid-p', 'auto'. Did you mean 'wilson'?",
            id="method-typo",
        ),
        pytest.param(
            {"method": "agresti_coull"},
            ConfigError,
            "Did you mean 'agresti-coull'?",
            id="method-statsmodels-name",
        ),
        pytest.param(
            {"method": "exact"},
            ConfigError,
            "'agresti-coull', 'mid-p', 'auto'.",
            id="method-no-hint",
        ),
        pytest.param(
            {"method": 3}, ConfigError, "`method` (3) must be one of 'wilson',", id="method-int"
        ),
        pytest.param(
            {"k": 7, "n": 5}, ValueError, "`k` (7) must be between 0 and `n` (5).", id="k>n"
        ),
        pytest.param(
            {"k": -1, "n": 5}, ValueError, "`k` (-1) must be between 0 and `n` (5).", id="k<0"
        ),
        pytest.param(
            {"k": 0, "n": -2}, ValueError, "`n` (-2) must be a non-negative integer.", id="n<0"
        ),
        pytest.param(
            {"k": 1.5}, TypeError, "`k` (1.5) must be an integer, not float.", id="k-float"
        ),
        pytest.param(
            {"n": True}, TypeError, "`n` (True) must be an integer, not bool.", id="n-bool"
        ),
    ],
)
def test_ratio_validation(kwargs: dict[str, object], error: type[Exception], message: str) -> None:
    """Bad options and counts raise with a full-sentence message naming the value."""
    call: dict[str, object] = {"k": 3, "n": 10, **kwargs}
    with pytest.raises(error) as info:
        ratio(**call)  # type: ignore[arg-type]
    assert message in str(info.value)


def test_ratio_validates_options_before_counts() -> None:
    """A bad method is reported even when the counts are bad too (options come first)."""
    with pytest.raises(ConfigError, match="`method`"):
        ratio(7, 5, "wilsn")


def test_numpy_scalars_print_as_plain_numbers() -> None:
    """Messages show numpy scalars as plain numbers, not np.float64(...)."""
    with pytest.raises(ConfigError) as info:
        ratio(1, 2, confidence=np.float64(1.5))
    assert str(info.value) == "`confidence` (1.5) must be in (0, 1)."
    with pytest.raises(ConfigError) as info:
        mean([1.0, 2.0], seed=np.int64(-2))
    assert str(info.value) == "`seed` (-2) must be a non-negative integer."


def test_config_errors_are_value_errors() -> None:
    """ConfigError is caught by `except ValueError`."""
    with pytest.raises(ValueError, match="must be in"):
        ratio(1, 2, confidence=2)


@pytest.mark.parametrize(
    ("k", "n", "error", "message"),
    [
        pytest.param(
            [1, 7],
            [5, 5],
            ValueError,
            "1 pair is not, the first is `k` (7) with `n` (5)",
            id="k>n",
        ),
        pytest.param([1, 2], [-1, -3], ValueError, "2 values are not, the first is -1", id="n<0"),
        pytest.param([1.5], [3], TypeError, "`k` must hold integers; got 1.5", id="k-frac"),
        pytest.param([1], [float("nan")], TypeError, "`n` must hold integers; got nan", id="n-nan"),
        pytest.param([True], [3], TypeError, "`k` must hold integers, not bool", id="k-bool"),
        pytest.param(["a"], [3], TypeError, "`k` must hold integers, not <U1", id="k-str"),
        pytest.param([1, 2, 3], [4, 5], ValueError, "cannot be broadcast together", id="shapes"),
    ],
)
def test_ratio_interval_validation(
    k: object, n: object, error: type[Exception], message: str
) -> None:
    """The vectorised form names how many values are wrong and the first one."""
    with pytest.raises(error) as info:
        ratio_interval(k, n)  # type: ignore[arg-type]
    assert message in str(info.value)


def test_ratio_interval_validates_options() -> None:
    """The vectorised form checks method and confidence first."""
    with pytest.raises(ConfigError, match=r"Did you mean 'jeffreys'\?"):
        ratio_interval([1], [2], "jefreys")
    with pytest.raises(ConfigError, match=r"`confidence` \(1\) must be in \(0, 1\)\."):
        ratio_interval([1], [2], confidence=1)


# --------------------------------------------------------------------------- mean


SAMPLES = {
    "small": [2.0, 3.5, 1.25, 8.0],
    "pair": [0.0, 1.0],
    "scores": [0.1, 0.9, 0.4, 0.4, 0.75, 0.3, 1.0, 0.0, 0.55, 0.6],
    "gauss-200": np.random.default_rng(7).normal(10.0, 3.0, 200).tolist(),
    "constant": [4.0] * 5,
}


@pytest.mark.parametrize("confidence", CONFIDENCES, ids=lambda c: f"conf={c}")
@pytest.mark.parametrize("name", list(SAMPLES))
def test_mean_normal_matches_statsmodels(name: str, confidence: float) -> None:
    """The normal interval equals DescrStatsW(x).zconfint_mean to 1e-12."""
    x = SAMPLES[name]
    est = mean(x, "normal", confidence)
    low, high = DescrStatsW(np.asarray(x)).zconfint_mean(alpha=1 - confidence)
    assert est.value == pytest.approx(float(np.mean(x)), abs=TOL)
    assert est.low == pytest.approx(low, abs=TOL)
    assert est.high == pytest.approx(high, abs=TOL)
    assert est.n == len(x)


@pytest.mark.parametrize("confidence", CONFIDENCES, ids=lambda c: f"conf={c}")
@pytest.mark.parametrize("name", [name for name in SAMPLES if name != "constant"])
def test_mean_t_matches_scipy(name: str, confidence: float) -> None:
    """The t interval equals scipy.stats.t.interval(conf, n-1, mean, sem) to 1e-12."""
    x = np.asarray(SAMPLES[name])
    est = mean(x, "t", confidence)
    sem = float(np.std(x, ddof=1)) / math.sqrt(x.size)
    low, high = scipy.stats.t.interval(confidence, x.size - 1, loc=np.mean(x), scale=sem)
    assert est.low == pytest.approx(low, abs=TOL)
    assert est.high == pytest.approx(high, abs=TOL)


@pytest.mark.parametrize("method", ["normal", "t"])
def test_mean_constant_values_give_a_point_interval(method: str) -> None:
    """Identical values have no spread: the interval is the mean itself (scipy's t gives NaN)."""
    assert mean([4.0] * 5, method).ci == (4.0, 4.0)


def test_mean_t_wider_than_normal() -> None:
    """For a small sample the t interval is wider than the normal one."""
    normal, t = mean(SAMPLES["small"], "normal"), mean(SAMPLES["small"], "t")
    assert t.low is not None
    assert normal.low is not None
    assert t.low < normal.low


@pytest.mark.parametrize("method", MEAN_METHODS)
def test_mean_empty_and_single(method: str) -> None:
    """No values give value None; a single value gives the value and no interval."""
    empty = mean([], method)
    assert (empty.value, empty.low, empty.high, empty.n) == (None, None, None, 0)
    single = mean(np.array([2.5]), method)
    assert (single.value, single.low, single.high, single.n) == (2.5, None, None, 1)
    assert single.method == (method if method != "auto" else "t (auto: n = 1 < 30)")


@pytest.mark.parametrize("method", MEAN_METHODS)
def test_mean_returns_plain_floats(method: str) -> None:
    """Every number in the Estimate is a Python float."""
    est = mean(np.array([1.0, 2.0, 4.0], dtype=np.float32), method)
    assert all(type(x) is float for x in (est.value, est.low, est.high))


def test_bootstrap_reproducible_for_a_seed() -> None:
    """The same seed gives the same interval; another seed gives another."""
    x = SAMPLES["gauss-200"]
    first = mean(x, "bootstrap", seed=1)
    assert mean(x, "bootstrap", seed=1) == first
    other = mean(x, "bootstrap", seed=2)
    assert other.ci != first.ci
    assert other.value == first.value


def test_bootstrap_contains_mean_and_is_close_to_normal() -> None:
    """For a reasonable sample the bootstrap interval holds the mean and resembles the normal."""
    x = SAMPLES["gauss-200"]
    boot, normal = mean(x, "bootstrap"), mean(x, "normal")
    assert boot.low is not None
    assert boot.high is not None
    assert boot.value is not None
    assert boot.low < boot.value < boot.high
    assert boot.low == pytest.approx(normal.low, rel=0.02)
    assert boot.high == pytest.approx(normal.high, rel=0.02)


def test_bootstrap_blocks_larger_than_a_resample(monkeypatch: pytest.MonkeyPatch) -> None:
    """A resample longer than a block is drawn block by block, still reproducibly."""
    monkeypatch.setattr(_bootstrap, "_BOOTSTRAP_BLOCK", 7)
    x = np.arange(20.0)
    first = mean(x, "bootstrap", n_resamples=50, seed=3)
    assert first == mean(x, "bootstrap", n_resamples=50, seed=3)
    assert first.low is not None
    assert first.high is not None
    assert 0.0 <= first.low < 9.5 < first.high <= 19.0


def test_bootstrap_memory_is_bounded() -> None:
    """A million values never allocate n x n_resamples at once."""
    x = np.random.default_rng(0).exponential(size=10**6)
    tracemalloc.start()
    try:
        est = mean(x, "bootstrap", n_resamples=20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 48 * 2**20  # 20 resamples at once would be 160 MB of indices alone
    assert est.low is not None
    assert est.high is not None
    assert est.low < est.high


@settings(deadline=None)
@given(
    values=st.lists(finite_values, min_size=2, max_size=60),
    method=st.sampled_from(("normal", "t")),
    confidence=confidences,
)
def test_mean_interval_contains_mean(values: list[float], method: str, confidence: float) -> None:
    """The normal and t intervals always contain the mean."""
    est = mean(values, method, confidence)
    assert est.low is not None
    assert est.value is not None
    assert est.high is not None
    assert est.low <= est.value <= est.high


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        pytest.param(
            {"values": [1.0, float("nan"), float("inf"), 2.0]},
            ValueError,
            "`values` holds 2 non-finite values (NaN or infinity); the first is nan at index 1.",
            id="non-finite",
        ),
        pytest.param(
            {"values": [float("-inf")]},
            ValueError,
            "`values` holds 1 non-finite value (NaN or infinity); the first is -inf at index 0.",
            id="one-non-finite",
        ),
        pytest.param(
            {"method": "bootstrapp"},
            ConfigError,
            "`method` ('bootstrapp') must be one of 'normal', 't', 'bootstrap', 'bca', 'auto'. "
            "Did you mean 'bootstrap'?",
            id="method-typo",
        ),
        pytest.param(
            {"confidence": -0.1}, ConfigError, "`confidence` (-0.1) must be in (0, 1).", id="conf"
        ),
        pytest.param(
            {"seed": -1}, ConfigError, "`seed` (-1) must be a non-negative integer.", id="seed<0"
        ),
        pytest.param(
            {"seed": "x"}, TypeError, "`seed` ('x') must be an integer, not str.", id="seed-str"
        ),
        pytest.param(
            {"n_resamples": 0}, ConfigError, "`n_resamples` (0) must be at least 1.", id="resamples"
        ),
        pytest.param(
            {"values": [[1.0, 2.0]]},
            ValueError,
            "`values` must be one-dimensional, got shape (1, 2).",
            id="2d",
        ),
        pytest.param(
            {"values": "123"},
            TypeError,
            "`values` must be a sequence of numbers, not a string.",
            id="string",
        ),
        pytest.param(
            {"values": [1.0, "a"]}, TypeError, "`values` must be a sequence of numbers:", id="mixed"
        ),
    ],
)
def test_mean_validation(kwargs: dict[str, object], error: type[Exception], message: str) -> None:
    """Bad values and options raise with a message naming the count or the value."""
    call: dict[str, object] = {"values": [1.0, 2.0], **kwargs}
    with pytest.raises(error) as info:
        mean(**call)  # type: ignore[arg-type]
    assert message in str(info.value)


# --------------------------------------------------------------------------- geomean


@pytest.mark.parametrize(
    "values",
    [
        pytest.param([1.0, 4.0], id="pair"),
        pytest.param([1, 2, 3, 4, 5, 6, 7], id="ints"),
        pytest.param([1e-3, 5.0, 2e4, 0.25], id="wide-range"),
        pytest.param(np.random.default_rng(1).lognormal(0.0, 1.0, 500), id="lognormal-500"),
    ],
)
@pytest.mark.parametrize("method", GEOMEAN_METHODS)
def test_geomean_matches_scipy(values: list[float], method: str) -> None:
    """The value equals scipy.stats.gmean; the interval is the exponentiated log interval."""
    est = geomean(values, method)
    assert est.value == pytest.approx(float(scipy.stats.gmean(values)), rel=TOL, abs=TOL)
    logs = np.log(np.asarray(values, dtype=float))
    if method == "normal":
        low, high = DescrStatsW(logs).zconfint_mean(alpha=0.05)
    else:
        sem = float(np.std(logs, ddof=1)) / math.sqrt(logs.size)
        low, high = scipy.stats.t.interval(0.95, logs.size - 1, loc=np.mean(logs), scale=sem)
    assert est.low == pytest.approx(math.exp(low), rel=TOL)
    assert est.high == pytest.approx(math.exp(high), rel=TOL)
    assert est.low is not None
    assert est.value is not None
    assert est.high is not None
    assert 0.0 < est.low < est.value < est.high
    assert type(est.value) is float


def test_geomean_empty_and_single() -> None:
    """No values give value None; a single value gives the value and no interval."""
    assert geomean([]).value is None
    single = geomean([3.0], "t")
    assert single.value == pytest.approx(3.0, rel=TOL)
    assert single.ci == (None, None)
    assert (single.n, single.method) == (1, "t")


@pytest.mark.parametrize(
    ("values", "message"),
    [
        pytest.param(
            [1.0, 0.0, -2.0, 3.0],
            "`values` holds 2 values <= 0 and the geometric mean needs positive values; "
            "the first is 0.0 at index 1.",
            id="zero-and-negative",
        ),
        pytest.param(
            [-0.5],
            "`values` holds 1 value <= 0 and the geometric mean needs positive values; "
            "the first is -0.5 at index 0.",
            id="one-negative",
        ),
        pytest.param([1.0, float("nan")], "1 non-finite value", id="nan"),
    ],
)
def test_geomean_rejects_non_positive(values: list[float], message: str) -> None:
    """Values <= 0 raise, naming how many and the first one."""
    with pytest.raises(ValueError, match=r"`values` holds \d+ ") as info:
        geomean(values)
    assert message in str(info.value)


def test_geomean_validates_method() -> None:
    """Bootstrap is not a geomean method; the message lists the ones that are."""
    with pytest.raises(ConfigError, match=r"must be one of 'normal', 't', 'auto'\.$"):
        geomean([1.0], "bootstrap")


# --------------------------------------------------------------------------- percentiles


def test_percentiles_default() -> None:
    """p50, p90 and p99 with numpy's linear method; the value is the first."""
    x = list(range(1, 101))
    est = percentiles(x)
    expected = np.percentile(x, [50, 90, 99])
    assert dict(est.extra) == pytest.approx(
        {"p50": expected[0], "p90": expected[1], "p99": expected[2]}, abs=TOL
    )
    assert est.value == est.extra["p50"]
    assert (est.n, est.method, est.ci) == (100, "none", (None, None))
    assert all(type(v) is float for v in est.extra.values())


def test_percentiles_keys_use_g_format() -> None:
    """Keys read p99.9, p0 and p100; the value follows the first q given."""
    est = percentiles([3.0, 1.0, 2.0], qs=(99.9, 0, 100.0))
    assert list(est.extra) == ["p99.9", "p0", "p100"]
    assert est.value == est.extra["p99.9"]
    assert (est.extra["p0"], est.extra["p100"]) == (1.0, 3.0)


def test_percentiles_empty() -> None:
    """No values: value None, no extra."""
    est = percentiles([])
    assert (est.value, est.n, dict(est.extra)) == (None, 0, {})


@pytest.mark.parametrize(
    ("qs", "error", "message"),
    [
        pytest.param((50, 150), ConfigError, "`qs` (150) must be between 0 and 100.", id="q>100"),
        pytest.param((-1,), ConfigError, "`qs` (-1) must be between 0 and 100.", id="q<0"),
        pytest.param((), ConfigError, "`qs` must hold at least one percentile.", id="empty"),
        pytest.param(("50",), TypeError, "`qs` holds '50', which is not a number.", id="str-q"),
        pytest.param(50, TypeError, "`qs` (50) must be a sequence of numbers.", id="scalar"),
    ],
)
def test_percentiles_validation(qs: object, error: type[Exception], message: str) -> None:
    """A q outside [0, 100] raises, before the values are looked at."""
    with pytest.raises(error) as info:
        percentiles([float("nan")], qs)  # type: ignore[arg-type]
    assert str(info.value) == message


@given(
    values=st.lists(finite_values, min_size=1, max_size=50),
    qs=st.lists(st.integers(0, 1000), min_size=1, max_size=10).map(
        lambda qs: sorted({q / 10 for q in qs})
    ),
)
def test_percentiles_monotone_in_q(values: list[float], qs: list[float]) -> None:
    """A higher q never gives a lower percentile."""
    est = percentiles(values, qs)
    results = [est.extra[f"p{q:g}"] for q in qs]
    assert results == sorted(results)
    assert min(values) <= results[0]
    assert results[-1] <= max(values)


# --------------------------------------------------------------------------- building blocks


def test_resample_counts_shape_total_and_seed() -> None:
    """Rows keep the total, empty cells stay empty, and the seed fixes the draws."""
    cells = [30, 5, 0, 15]
    draws = resample_counts(cells, 500, seed=4)
    assert draws.shape == (500, 4)
    assert draws.dtype == np.int64
    assert (draws.sum(axis=1) == 50).all()
    assert (draws[:, 2] == 0).all()
    assert draws[:, 0].mean() == pytest.approx(30, rel=0.05)
    assert np.array_equal(draws, resample_counts(cells, 500, seed=4))
    assert not np.array_equal(draws, resample_counts(cells, 500, seed=5))


def test_resample_counts_all_zero() -> None:
    """All-zero counts give all-zero rows."""
    draws = resample_counts(np.zeros(3, dtype=int), 4)
    assert draws.shape == (4, 3)
    assert not draws.any()


@pytest.mark.parametrize(
    ("counts", "kwargs", "error", "message"),
    [
        pytest.param([3, -1], {}, ValueError, "the first negative is -1 at index 1", id="negative"),
        pytest.param([[1, 2]], {}, ValueError, "must be one-dimensional", id="2d"),
        pytest.param([1.5, 2], {}, TypeError, "`counts` must hold integers; got 1.5", id="frac"),
        pytest.param([1, 2], {"n_resamples": 0}, ConfigError, "`n_resamples` (0)", id="zero"),
        pytest.param([1, 2], {"seed": -3}, ConfigError, "`seed` (-3)", id="seed"),
    ],
)
def test_resample_counts_validation(
    counts: object, kwargs: dict[str, int], error: type[Exception], message: str
) -> None:
    """Bad counts and options raise with the offending value."""
    with pytest.raises(error) as info:
        resample_counts(counts, **kwargs)  # type: ignore[arg-type]
    assert message in str(info.value)


def test_f1_bootstrap_recipe() -> None:
    """Resampled confusion cells, a metric per row and percentile_interval make an interval."""
    tp, fp, fn, _tn = resample_counts([40, 10, 5, 45], 1000, seed=0).T
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = 2 * tp / (2 * tp + fp + fn)
    low, high = percentile_interval(f1)
    point = 2 * 40 / (2 * 40 + 10 + 5)
    assert low is not None
    assert high is not None
    assert low < point < high


def test_percentile_interval_matches_numpy_and_ignores_nan() -> None:
    """Bounds are numpy's linear percentiles of the non-NaN samples."""
    samples = np.concatenate([np.arange(101.0), [np.nan] * 7])
    low, high = percentile_interval(samples, 0.9)
    assert (low, high) == pytest.approx((5.0, 95.0), abs=TOL)
    assert type(low) is float
    assert type(high) is float


def test_percentile_interval_all_nan() -> None:
    """No sample that is not NaN gives (None, None)."""
    assert percentile_interval([np.nan, np.nan]) == (None, None)
    assert percentile_interval([]) == (None, None)


def test_percentile_interval_validation() -> None:
    """Confidence is checked and samples must be numbers."""
    with pytest.raises(ConfigError, match=r"`confidence` \(95\) must be in \(0, 1\)\."):
        percentile_interval([1.0], 95)
    with pytest.raises(TypeError, match="`samples` must hold numbers"):
        percentile_interval(["x"])


# --------------------------------------------------------------------------- honest edges


@pytest.mark.parametrize("method", MEAN_METHODS)
def test_bounded_constant_mean_never_has_zero_width(method: str) -> None:
    """50 values of 1.0 in [0, 1] get the Wilson bound of 50 of 50, not [1, 1]."""
    est = mean([1.0] * 50, method, bounds=(0.0, 1.0))
    wilson = ratio(50, 50)
    assert est.value == 1.0
    assert (est.low, est.high) == pytest.approx((wilson.low, wilson.high), abs=TOL)
    assert est.low is not None
    assert est.low < 1.0
    assert est.method == "wilson"


@pytest.mark.parametrize("method", MEAN_METHODS)
@pytest.mark.parametrize("value", [0.0, 0.25, 1.0])
def test_bounded_mean_of_one_value_has_an_interval(method: str, value: float) -> None:
    """A single bounded value gets a Wilson interval of positive width, inside the bounds."""
    est = mean([value], method, bounds=(0.0, 1.0))
    assert est.low is not None
    assert est.high is not None
    assert 0.0 <= est.low <= value <= est.high <= 1.0
    assert est.high - est.low > 0.1


def test_bounded_mean_maps_the_bound_back_to_its_range() -> None:
    """For values in [0, 10] the fallback is the Wilson bound of the share, scaled by 10."""
    est = mean([10.0] * 20, bounds=(0.0, 10.0))
    wilson = ratio(20, 20)
    assert (est.low, est.high) == pytest.approx((10 * wilson.low, 10 * wilson.high), abs=1e-9)


def test_bounded_mean_with_spread_is_clipped_not_replaced() -> None:
    """Varying values keep the asked method; only the ends are clipped to the bounds."""
    est = mean([1.0] * 9 + [0.5], "normal", bounds=(0.0, 1.0))
    plain = mean([1.0] * 9 + [0.5], "normal")
    assert est.method == "normal"
    assert est.low == pytest.approx(plain.low, abs=TOL)
    assert est.high == 1.0


def test_bounded_mean_rejects_values_outside() -> None:
    """A value outside ``bounds`` is an error naming it."""
    with pytest.raises(ValueError, match=r"outside `bounds`.*1\.5 at index 1"):
        mean([0.5, 1.5], bounds=(0.0, 1.0))
    with pytest.raises(ConfigError, match="lo < hi"):
        mean([0.5], bounds=(1.0, 0.0))


def test_mean_of_huge_values_is_finite() -> None:
    """A finite input has a finite mean: [1e308, 1e308] does not overflow to inf."""
    assert mean([1e308, 1e308]).value == 1e308
    est = mean([1e308, -1e308, 1e308], "normal")
    assert est.value is not None
    assert math.isfinite(est.value)
    assert est.value == pytest.approx(1e308 / 3, rel=1e-12)
    boot = mean([1e308, 5e307, 1e308], "bootstrap")
    assert boot.low is not None
    assert math.isfinite(boot.low)


def _wilson_coverage(n: int, p: float, confidence: float = 0.95) -> float:
    """Exact coverage of the Wilson interval: the binomial probability of the k that cover p."""
    k = np.arange(n + 1)
    low, high = ratio_interval(k, np.full(n + 1, n), "wilson", confidence)
    covers = (low <= p) & (p <= high)
    return float(scipy.stats.binom.pmf(k, n, p)[covers].sum())


def test_wilson_coverage_is_what_the_docs_say(capsys: pytest.CaptureFixture[str]) -> None:
    """The figures in docs/aggregation.md: Wilson's exact coverage, with its dips near 0."""
    assert _wilson_coverage(10, 0.01) == pytest.approx(0.99**10, abs=1e-12)  # 0.904
    ps = np.linspace(0.001, 0.999, 999)
    rows = []
    for n in (10, 30, 100, 1000):
        cover = np.array([_wilson_coverage(n, p) for p in ps])
        inner = cover[(ps >= 0.1) & (ps <= 0.9)]
        rows.append((n, float(cover.mean()), float(cover.min()), float(inner.min())))
    with capsys.disabled():
        print("\nWilson 95% exact coverage: n, mean over p, min over p, min over 0.1<=p<=0.9")
        for n, avg, low, inner_low in rows:
            print(f"  n={n:5d}  mean={avg:.3f}  min={low:.3f}  min(0.1..0.9)={inner_low:.3f}")
    for n, avg, low, inner_low in rows:
        assert 0.94 <= avg <= 0.96, n  # close to nominal on average
        assert low < 0.93, n  # but it dips below nominal near p = 0 and 1, for every n
        assert inner_low > 0.91, n  # and stays nearer nominal away from the edges


# --------------------------------------------------------------------------- clusters


def _statsmodels_cluster(x: np.ndarray, g: np.ndarray, confidence: float) -> tuple[float, ...]:
    import statsmodels.api as sm

    fit = sm.OLS(x, np.ones((x.size, 1))).fit(
        cov_type="cluster", cov_kwds={"groups": g}, use_t=True
    )
    low, high = fit.conf_int(alpha=1 - confidence)[0]
    return float(fit.params[0]), float(fit.bse[0]), float(low), float(high)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("confidence", CONFIDENCES, ids=lambda c: f"conf={c}")
def test_cluster_mean_matches_statsmodels(seed: int, confidence: float) -> None:
    """Value, clustered SE and t(G-1) interval equal statsmodels OLS cluster to 1e-10."""
    rng = np.random.default_rng(seed)
    n, g = int(rng.integers(20, 400)), int(rng.integers(2, 40))
    groups = rng.integers(0, g, n)
    x = rng.normal(0, 1, g)[groups] + rng.normal(0, 2, n)
    value, se, low, high = _statsmodels_cluster(x, groups, confidence)
    est = aggregate.cluster_mean(x, [f"c{c}" for c in groups], confidence=confidence)
    assert est.value == pytest.approx(value, abs=1e-10)
    assert est.extra["se_cluster"] == pytest.approx(se, abs=1e-10)
    assert est.low == pytest.approx(low, abs=1e-10)
    assert est.high == pytest.approx(high, abs=1e-10)
    assert est.extra["n_clusters"] == len(set(groups.tolist()))
    naive = float(np.std(x, ddof=1)) / math.sqrt(n)
    assert est.extra["design_effect"] == pytest.approx((se / naive) ** 2, rel=1e-10)
    assert est.method == "cluster-t"


@pytest.mark.parametrize("seed", range(5))
def test_cluster_ratio_se_matches_statsmodels(seed: int) -> None:
    """The clustered SE of a 0/1 share is statsmodels' OLS cluster SE; Wilson uses n/deff."""
    rng = np.random.default_rng(100 + seed)
    n, g = int(rng.integers(50, 500)), int(rng.integers(5, 50))
    groups = rng.integers(0, g, n)
    x = (rng.random(n) < rng.uniform(0.2, 0.8, g)[groups]).astype(float)
    _, se, _, _ = _statsmodels_cluster(x, groups, 0.95)
    est = aggregate.cluster_ratio(x.astype(bool), groups.astype(str).tolist())
    p = float(x.mean())
    deff = se**2 / (p * (1 - p) / n)
    t = scipy.stats.t.isf(0.025, len(set(groups.tolist())) - 1)
    alpha = 2 * scipy.stats.norm.sf(t)  # statsmodels' z = norm.isf(alpha / 2) is then t
    low, high = proportion_confint(p * n / deff, n / deff, alpha=alpha, method="wilson")
    assert est.value == pytest.approx(p, abs=1e-12)
    assert est.extra["se_cluster"] == pytest.approx(se, abs=1e-10)
    assert est.extra["design_effect"] == pytest.approx(deff, rel=1e-10)
    assert (est.low, est.high) == pytest.approx((low, high), abs=1e-10)
    assert est.method == "wilson-cluster"
    normal = aggregate.cluster_ratio(x, groups.astype(str).tolist(), method="normal")
    assert normal.low == pytest.approx(max(0.0, p - t * se), abs=1e-10)


def test_clusters_of_none_are_singletons() -> None:
    """Items without a cluster are clusters of their own: the naive SE (up to n/(n-1))."""
    x = np.array([0.1, 0.5, 0.9, 0.3, 0.7])
    est = aggregate.cluster_mean(x, [None] * 5)
    assert est.extra["n_clusters"] == 5
    naive = float(np.std(x, ddof=1)) / math.sqrt(5)
    assert est.extra["se_cluster"] == pytest.approx(naive, rel=1e-12)
    assert est.extra["design_effect"] == pytest.approx(1.0, rel=1e-12)


def test_cluster_edges() -> None:
    """Empty gives None, one cluster gives no interval, no spread falls back to Wilson over G."""
    assert aggregate.cluster_mean([], []).value is None
    assert aggregate.cluster_ratio([], []).value is None
    one = aggregate.cluster_mean([1.0, 2.0], ["a", "a"])
    assert one.value == 1.5
    assert one.ci == (None, None)
    flat = aggregate.cluster_mean([1.0] * 6, list("aabbcc"), bounds=(0.0, 1.0))
    all_ok = aggregate.cluster_ratio([1] * 6, list("aabbcc"))
    assert all_ok.low is not None
    assert all_ok.low < ratio(3, 3).low  # 3 trials, and t(2) quantiles
    assert all_ok.extra["design_effect"] == 2.0
    # The same 0/1 data as a bounded mean: the same fallback, the same interval.
    assert (flat.low, flat.high) == pytest.approx((all_ok.low, all_ok.high), abs=TOL)
    assert flat.method == all_ok.method == "wilson-cluster (no spread: 1 trial per cluster)"
    assert flat.extra["design_effect"] == 2.0
    with pytest.raises(ValueError, match="one cluster per value"):
        aggregate.cluster_mean([1.0], ["a", "b"])
    with pytest.raises(ValueError, match="must hold 0 or 1"):
        aggregate.cluster_ratio([0.5], ["a"])


@pytest.mark.parametrize("method", RATIO_METHODS)
def test_cluster_ratio_every_method_contains_the_value(method: str) -> None:
    """Every ratio method works over the effective sample size and contains k / n."""
    rng = np.random.default_rng(3)
    groups = rng.integers(0, 12, 120)
    x = rng.random(120) < 0.3
    est = aggregate.cluster_ratio(x, groups.tolist(), method=method)
    assert est.low is not None
    assert est.high is not None
    assert 0.0 <= est.low <= est.value <= est.high <= 1.0
    expected = "wilson-cluster (auto: n = 93.4 >= 40)" if method == "auto" else f"{method}-cluster"
    assert est.method.startswith(expected)


def test_clustered_interval_covers_where_the_naive_one_does_not(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """With intra-cluster correlation, the clustered 95% interval covers ~95%, naive far less."""
    rng = np.random.default_rng(2024)
    reps, n_clusters, size = 1000, 40, 10
    clusters = np.repeat(np.arange(n_clusters), size).astype(str).tolist()
    covered = {"cluster": 0, "naive": 0}
    truth = float(np.mean(np.clip(0.6 + rng.normal(0, 0.2, 1_000_000), 0.01, 0.99)))
    for _ in range(reps):
        p_cluster = np.clip(0.6 + rng.normal(0, 0.2, n_clusters), 0.01, 0.99)
        x = rng.random(n_clusters * size) < np.repeat(p_cluster, size)
        c = aggregate.cluster_ratio(x, clusters)
        naive = ratio(int(x.sum()), x.size)
        covered["cluster"] += c.low <= truth <= c.high  # type: ignore[operator]
        covered["naive"] += naive.low <= truth <= naive.high  # type: ignore[operator]
    cluster_cov, naive_cov = covered["cluster"] / reps, covered["naive"] / reps
    with capsys.disabled():
        print(
            f"\ncoverage of 95% intervals, ICC data: clustered {cluster_cov:.3f}, "
            f"naive Wilson {naive_cov:.3f}"
        )
    assert 0.92 <= cluster_cov <= 0.98
    assert naive_cov < 0.85


def _cluster_reference(
    x: np.ndarray, g: np.ndarray, method: str, confidence: float
) -> tuple[float, float]:
    """The clustered interval from statsmodels and scipy alone: t(G-1) quantile, n / deff trials.

    The SE is statsmodels' OLS cluster SE; the interval is statsmodels' ``proportion_confint``
    over ``n / deff`` trials at ``alpha = 2·Φ(-t)``, so that its normal quantile is the t one
    (Jeffreys from scipy's beta quantiles: statsmodels uses ``beta.interval(1 - alpha)``,
    which loses a tail of 1e-37). A tail that underflows (2 clusters at 99%) leaves the
    closed forms to their textbook formulas with ``z = t``.
    """
    n, p = x.size, float(x.mean())
    n_clusters = len(set(g.tolist()))
    _, se, _, _ = _statsmodels_cluster(x, g, 0.95)
    deff = se**2 / (p * (1 - p) / n)
    k_eff, n_eff = p * n / deff, n / deff
    t = float(scipy.stats.t.isf((1 - confidence) / 2, n_clusters - 1))
    tail = float(scipy.stats.norm.sf(t))
    if method == "jeffreys":
        low = scipy.stats.beta.ppf(tail, k_eff + 0.5, n_eff - k_eff + 0.5)
        high = scipy.stats.beta.isf(tail, k_eff + 0.5, n_eff - k_eff + 0.5)
    elif tail > 0:
        low, high = proportion_confint(
            k_eff, n_eff, alpha=2 * tail, method=STATSMODELS_NAME[method]
        )
    elif method == "wilson":  # Wilson (1927): the score interval
        center = (p + t * t / (2 * n_eff)) / (1 + t * t / n_eff)
        half = t * math.sqrt(p * (1 - p) / n_eff + t * t / (4 * n_eff**2)) / (1 + t * t / n_eff)
        low, high = center - half, center + half
    elif method == "agresti-coull":
        n_c = n_eff + t * t
        p_c = (k_eff + t * t / 2) / n_c
        low, high = (
            p_c - t * math.sqrt(p_c * (1 - p_c) / n_c),
            p_c + t * math.sqrt(p_c * (1 - p_c) / n_c),
        )
    else:  # normal, and the beta methods with a tail of 0: the whole range
        half = t * se if method == "normal" else 1.0
        low, high = p - half, p + half
    return min(max(float(low), 0.0), p), max(min(float(high), 1.0), p)


CLUSTER_SAMPLES = {
    "issue-2-clusters": ([1, 0, 1, 1, 0, 0], ["a"] * 3 + ["b"] * 3),
    "3-clusters": ([1, 0, 1, 1, 1, 0, 0, 0, 1, 0], list("aaaabbbccc")),
    "5-clusters": ([1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 1], list("aabbbcccddeeeee")),
}


@pytest.mark.parametrize("confidence", CONFIDENCES, ids=lambda c: f"conf={c}")
@pytest.mark.parametrize("method", STATSMODELS_RATIO_METHODS)
@pytest.mark.parametrize("name", list(CLUSTER_SAMPLES))
def test_cluster_ratio_with_few_clusters_matches_statsmodels(
    name: str, method: str, confidence: float
) -> None:
    """2 clusters at 95% (3 at 99%) have a t quantile whose normal level rounds to 1.0.

    The interval comes from the t quantile itself, equal to the statsmodels/scipy reference
    to 1e-12, where it used to raise (``value=None`` for any ratio metric with 2 clusters) or
    be off by up to 1.2e-9.
    """
    successes, clusters = CLUSTER_SAMPLES[name]
    est = aggregate.cluster_ratio(successes, clusters, method=method, confidence=confidence)
    x = np.asarray(successes, dtype=float)
    codes = np.unique(np.asarray(clusters), return_inverse=True)[1]
    low, high = _cluster_reference(x, codes, method, confidence)
    assert est.value == pytest.approx(x.mean(), abs=1e-15)
    assert (est.low, est.high) == pytest.approx((low, high), abs=1e-12)
    assert est.method == f"{method}-cluster"
    assert type(est.low) is float
    assert type(est.high) is float


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("method", STATSMODELS_RATIO_METHODS)
def test_cluster_ratio_matches_statsmodels_to_1e_12(seed: int, method: str) -> None:
    """Random clustered data, 2 to 12 clusters, every method: 1e-12 against the reference."""
    rng = np.random.default_rng(500 + seed)
    g = int(rng.integers(2, 13))
    groups = np.sort(rng.integers(0, g, 80))
    x = (rng.random(80) < rng.uniform(0.2, 0.8, g)[groups]).astype(float)
    confidence = (0.9, 0.95, 0.99, 0.999)[seed]
    est = aggregate.cluster_ratio(
        x, groups.astype(str).tolist(), method=method, confidence=confidence
    )
    codes = np.unique(groups, return_inverse=True)[1]
    assert (est.low, est.high) == pytest.approx(
        _cluster_reference(x, codes, method, confidence), abs=1e-12
    )


EQUAL_SHARES = [
    ([1, 0, 1] * 3, ["a"] * 3 + ["b"] * 3 + ["c"] * 3),  # the example: se 2.6e-17
    ([1, 0, 0, 0, 1] * 4, [c for c in "abcd" for _ in range(5)]),
    ([0, 1, 1, 1, 0, 1, 0] * 6, [c for c in "abcdef" for _ in range(7)]),
    ([1, 1, 0] * 7, [c for c in "abcdefg" for _ in range(3)]),
]


@pytest.mark.parametrize(("successes", "clusters"), EQUAL_SHARES)
def test_clusters_of_equal_shares_never_give_a_zero_width_interval(
    successes: list[int], clusters: list[str]
) -> None:
    """Every cluster with the same share: se is exactly 0 and each cluster counts as a trial.

    In floating point the cluster sums are 1e-16, not 0, which used to give a design effect
    of 1e-32 and an interval of zero width; the fallback is named in ``method``.
    """
    n_clusters = len(set(clusters))
    est = aggregate.cluster_ratio(successes, clusters)
    assert est.extra["se_cluster"] == 0.0
    assert est.method == "wilson-cluster (no spread: 1 trial per cluster)"
    assert est.extra["design_effect"] == len(successes) / n_clusters
    p = sum(successes) / len(successes)
    t = scipy.stats.t.isf(0.025, n_clusters - 1)
    low, high = proportion_confint(
        p * n_clusters, n_clusters, alpha=2 * scipy.stats.norm.sf(t), method="wilson"
    )
    assert (est.low, est.high) == pytest.approx((low, high), abs=1e-12)
    as_mean = aggregate.cluster_mean(successes, clusters, bounds=(0.0, 1.0))
    assert as_mean.extra["se_cluster"] == 0.0
    assert (as_mean.low, as_mean.high) == pytest.approx((low, high), abs=1e-12)
    assert as_mean.method == est.method


def test_cluster_mean_of_equal_cluster_means_is_not_zero_width() -> None:
    """Clusters [0.1, 0.2, 0.3] three times: no spread between them, whatever rounding says."""
    values, clusters = [0.1, 0.2, 0.3] * 3, ["a"] * 3 + ["b"] * 3 + ["c"] * 3
    bounded = aggregate.cluster_mean(values, clusters, bounds=(0.0, 1.0))
    assert bounded.extra["se_cluster"] == 0.0
    assert bounded.low is not None
    assert bounded.high is not None
    assert bounded.high - bounded.low > 0.5
    assert bounded.method == "wilson-cluster (no spread: 1 trial per cluster)"
    free = aggregate.cluster_mean(values, clusters)
    assert free.method == "cluster-t (no spread)"


def test_cluster_fallbacks_are_named_in_the_method() -> None:
    """One cluster: one trial at the normal quantile, or no interval; each says so."""
    one = aggregate.cluster_ratio([1, 0, 1, 1], ["a"] * 4)
    assert one.method == "wilson-cluster (1 cluster: 1 trial, normal quantile)"
    assert (one.low, one.high) == pytest.approx(
        proportion_confint(0.75, 1, alpha=0.05, method="wilson"), abs=1e-12
    )
    assert aggregate.cluster_mean([0.2, 0.4], ["a", "a"]).method == (
        "cluster-t (1 cluster: no interval)"
    )
    bounded = aggregate.cluster_mean([0.2, 0.4], ["a", "a"], bounds=(0.0, 1.0))
    assert bounded.method == "wilson-cluster (1 cluster: 1 trial, normal quantile)"
    spread = aggregate.cluster_ratio([1, 0, 1, 1, 0, 1], list("aabbcc"))
    assert spread.method == "wilson-cluster"


# --------------------------------------------------------------------------- macro


def test_macro_mean_is_the_mean_of_group_means() -> None:
    """Value is the unweighted mean of group means; se² = Σ s_g²/n_g / K²."""
    rng = np.random.default_rng(5)
    groups = ["a"] * 50 + ["b"] * 5 + ["c"] * 20
    x = rng.random(75)
    est = aggregate.macro_mean(x, groups)
    parts = [x[:50], x[50:55], x[55:]]
    value = np.mean([p.mean() for p in parts])
    se = math.sqrt(sum(p.var(ddof=1) / p.size for p in parts)) / 3
    assert est.value == pytest.approx(value, abs=TOL)
    assert est.low == pytest.approx(value - 1.959963984540054 * se, abs=1e-10)
    assert est.extra["n_groups"] == 3
    assert est.n == 75


def test_macro_mean_edges() -> None:
    """Ungrouped values are left out; no spread with bounds gives a Wilson bound."""
    assert aggregate.macro_mean([1.0, 2.0], [None, None]).value is None
    est = aggregate.macro_mean([1.0, 1.0, 1.0, 0.0], ["a", "a", None, "b"], bounds=(0, 1))
    assert est.value == 0.5
    assert est.n == 3
    assert est.method == "macro-wilson"
    assert est.low is not None
    assert est.low < 0.5 < est.high  # type: ignore[operator]
    single = aggregate.macro_mean([0.2, 0.4, 0.9], ["a", "a", "b"])
    assert single.low is not None  # group b borrows the pooled variance
    with pytest.raises(ValueError, match="one group name"):
        aggregate.macro_mean([1.0], ["a", "b"])


def test_macro_mean_of_constant_groups_is_not_zero_width() -> None:
    """Groups of equal values (three 0.1s) have no spread, although their residuals are 1e-17."""
    est = aggregate.macro_mean([0.1] * 3 + [0.7] * 3, ["a"] * 3 + ["b"] * 3, bounds=(0, 1))
    assert est.method == "macro-wilson"
    assert est.low is not None
    assert est.high is not None
    assert est.high - est.low > 0.3
    expected = aggregate.macro_mean([0.1] * 3 + [0.7] * 3, ["a"] * 3 + ["b"] * 3)
    assert expected.low == expected.high  # unbounded: no spread, no width, as mean() gives


def test_a_custom_mean_whose_method_ratio_knows_gets_no_receipt_and_no_error() -> None:
    """A custom aggregate's normal interval over lengths (value 16, n 4) is not a share."""
    estimate = Estimate(value=16.0, low=10.0, high=22.0, n=4, method="normal")
    assert aggregate.coverage_receipt(estimate, kind="ratio") == {}
