"""Tallies: distinct values and counts, merged by addition, the same numbers however cut."""

from __future__ import annotations

import math
import statistics
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from itemscore.stats._tally import Tally, tally_rows

finite = st.floats(
    min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False, allow_subnormal=False
)


@settings(max_examples=200, deadline=None)
@given(st.lists(finite, min_size=2, max_size=60), st.data())
def test_a_merged_tally_equals_the_tally_of_the_whole_to_the_bit(
    values: list[float], data: st.DataObject
) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(values)), max_size=5)))
    pieces = np.split(np.array(values), cuts)
    merged = Tally.merged(Tally.of(piece) for piece in pieces)
    whole = Tally.of(np.array(values))
    assert merged.values.tolist() == whole.values.tolist()
    assert merged.counts.tolist() == whole.counts.tolist()
    assert merged.mean_sd() == whole.mean_sd()
    assert Tally.of(np.array(values[::-1])).mean_sd() == whole.mean_sd()


@settings(max_examples=200, deadline=None)
@given(st.lists(finite, min_size=2, max_size=60))
def test_the_mean_and_sd_match_exact_arithmetic(values: list[float]) -> None:
    m, sd = Tally.of(np.array(values)).mean_sd()
    exact = sum(map(Fraction, values)) / len(values)
    assert math.isclose(m, float(exact), rel_tol=1e-15, abs_tol=1e-300)
    reference = statistics.stdev(values)
    assert math.isclose(sd, reference, rel_tol=1e-12, abs_tol=1e-9 * max(map(abs, values)))


def test_negative_zero_is_zero_and_counts_add() -> None:
    tally = Tally.merged([Tally.of(np.array([-0.0, 1.0])), Tally.of(np.array([0.0, 0.5, 1.0]))])
    assert tally.values.tolist() == [0.0, 0.5, 1.0]
    assert math.copysign(1.0, tally.values[0]) == 1.0
    assert tally.counts.tolist() == [2, 1, 2]
    assert tally.n == 5
    assert tally.expanded().tolist() == [0.0, 0.0, 0.5, 1.0, 1.0]


def test_one_distinct_value_has_its_own_mean_and_no_spread() -> None:
    assert Tally.of(np.full(3, 0.1)).mean_sd() == (0.1, 0.0)


def test_huge_values_do_not_overflow() -> None:
    m, sd = Tally.of(np.array([1e308, 1e308, -1e308])).mean_sd()
    assert math.isclose(m, 1e308 / 3)
    assert math.isfinite(sd)


def test_rows_of_many_keys_sum_by_key_and_value() -> None:
    keys = np.array([1, 0, 1, 1, 0], np.int64)
    values = np.array([0.5, 1.0, 0.5, 0.0, 1.0])
    k, v, c = tally_rows(keys, values)
    assert list(zip(k.tolist(), v.tolist(), c.tolist())) == [(0, 1.0, 2), (1, 0.0, 1), (1, 0.5, 2)]
    again = tally_rows(np.concatenate([k, k]), np.concatenate([v, v]), np.concatenate([c, c]))
    assert again[2].tolist() == [4, 2, 4]
