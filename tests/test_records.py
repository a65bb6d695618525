"""Records: cross-field rules, converters, named constructors."""

from __future__ import annotations

import math
import pickle

import attrs
import numpy as np
import pytest

from itemscore import Estimate, ItemResult, ItemScore, Measurement, Status


@pytest.mark.parametrize("status", ["ok", "fail"])
@pytest.mark.parametrize("value", [None, math.nan, math.inf], ids=str)
def test_scored_status_needs_a_finite_value(status: str, value: float | None) -> None:
    """ok and fail without a finite value cannot be built."""
    with pytest.raises(ValueError, match="needs a finite value"):
        ItemScore(metric="m", status=status, value=value)


@pytest.mark.parametrize("status", ["skip", "error"])
def test_unscored_status_carries_no_value(status: str) -> None:
    """skip and error with a value cannot be built; the message points to `extra`."""
    with pytest.raises(ValueError, match=r"carries no value.*`extra`"):
        ItemScore(metric="m", status=status, value=1.0)


def test_status_accepts_plain_strings_and_rejects_others() -> None:
    """Plain strings become Status; unknown ones list the four states."""
    assert ItemScore(metric="m", status="ok", value=1).status is Status.OK
    with pytest.raises(ValueError, match="'ok', 'fail', 'skip', 'error'"):
        ItemScore(metric="m", status="okay", value=1.0)


def test_value_is_converted_to_float() -> None:
    """Ints, bools-as-numbers and numpy scalars become plain floats."""
    assert type(ItemScore.ok("m", 1).value) is float
    assert type(ItemScore.ok("m", np.float32(0.5)).value) is float
    with pytest.raises(TypeError, match="must be a number"):
        ItemScore.ok("m", "high")  # type: ignore[arg-type]


def test_named_constructors() -> None:
    """The four constructors build the four states with their defaults."""
    assert (ItemScore.ok("m").value, ItemScore.fail("m").value) == (1.0, 0.0)
    skip = ItemScore.skip("m", "no key")
    assert (skip.status, skip.reason, skip.value) == (Status.SKIP, "no key", None)
    error = ItemScore.error("m", "ValueError: x", extra={"traceback": "t"})
    assert (error.status, error.extra["traceback"]) == (Status.ERROR, "t")
    assert [s.scored for s in (ItemScore.ok("m"), ItemScore.fail("m"), skip, error)] == [
        True,
        True,
        False,
        False,
    ]


def test_status_prints_as_its_value() -> None:
    """Status is a str enum that prints as its value."""
    assert str(Status.SKIP) == "skip"
    assert Status.OK == "ok"


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("Paris", ("Paris",)),
        (["a", "b"], ("a", "b")),
        (("a",), ("a",)),
        ("", None),
        ([], None),
        (None, None),
    ],
    ids=["string", "list", "tuple", "empty-string", "empty-list", "none"],
)
def test_expected_is_normalised(given: object, stored: tuple[str, ...] | None) -> None:
    """A plain string becomes a 1-tuple; empty means no answer key."""
    item = ItemResult(id="1", output="x", expected=given)  # type: ignore[arg-type]
    assert item.expected == stored
    assert item.has_answer_key is (stored is not None)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"id": "", "output": "x"}, "`id`"),
        ({"id": 3, "output": "x"}, "`id`"),
        ({"id": "a", "output": 3}, "`output` \\(3\\) must be a string or None"),
        ({"id": "a", "output": "x", "expected": [1]}, "`expected` must hold strings"),
        ({"id": "a", "output": "x", "expected": {"a": 1}}, "not a mapping"),
        ({"id": "a", "output": "x", "group": 1}, "`group`"),
    ],
    ids=["empty-id", "int-id", "int-output", "int-answer", "mapping-answer", "int-group"],
)
def test_item_fields_are_type_checked(fields: dict[str, object], message: str) -> None:
    """Wrong field types are refused with the field's name."""
    with pytest.raises(TypeError, match=message):
        ItemResult(**fields)  # type: ignore[arg-type]


def test_with_scores_copies_every_other_field() -> None:
    """with_scores changes scores only."""
    item = ItemResult(
        id="1",
        output="o",
        expected="e",
        input="i",
        group="g",
        model="m",
        metadata={"latency": 1.5},
    )
    scored = item.with_scores({"m": ItemScore.ok("m")})
    assert attrs.evolve(scored, scores={}) == item
    assert scored.scores["m"].status is Status.OK
    assert not item.scores


def test_records_are_frozen() -> None:
    """Records cannot be changed after construction."""
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        ItemScore.ok("m").value = 0.0  # type: ignore[misc]


def test_estimate_ci_and_measurement_counts() -> None:
    """Estimate.ci pairs the bounds; Measurement.counts always has the four states."""
    assert Estimate(value=0.5, low=0.4, high=0.6, n=10).ci == (0.4, 0.6)
    m = Measurement(key="s.m", suite="s", metric="m", counts={"ok": 3, Status.SKIP: 1})
    assert dict(m.counts) == {Status.OK: 3, Status.FAIL: 0, Status.SKIP: 1, Status.ERROR: 0}


def test_attempt_is_a_whole_number_or_none() -> None:
    """An attempt is a whole number of at least 0; anything else is refused when built."""
    assert ItemResult(id="q", output="a", attempt=2).attempt == 2
    assert ItemResult(id="q", output="a").attempt is None
    for bad in (-1, 1.0, True, "2"):
        with pytest.raises(TypeError, match="attempt"):
            ItemResult(id="q", output="a", attempt=bad)


def test_attempt_survives_pickling_and_with_scores() -> None:
    """The attempt is kept when an item is pickled (workers) or given scores."""
    item = ItemResult(id="q", output="a", attempt=3, metadata={"k": [1]})
    assert pickle.loads(pickle.dumps(item)) == item
    assert item.with_scores({}).attempt == 3
