"""Options read from __init__ signatures and checked against their hints."""

from __future__ import annotations

import inspect
from typing import Literal

import pytest

from itemscore import Metric, OptionError
from itemscore._options import coerce_value, describe_hint, option_infos


class Base(Metric):
    """A base documenting a shared option.

    Args:
        ignore_case: Compare case-insensitively.
    """


class Sample(Base):
    """A metric with one option of each kind.

    Args:
        average: How per-class scores are combined,
            continued on a second line.
        labels: Class labels.
        k: How many.
        threshold: A cut-off.
        name: A name.
    """

    metric_id = "sample_opts"

    def __init__(
        self,
        average: Literal["macro", "micro", "weighted"] = "macro",
        labels: list[str] | None = None,
        k: int = 1,
        threshold: float = 0.5,
        name: str = "x",
        ignore_case: bool = True,
        pair: tuple[str, ...] = (),
        anything=None,  # type: ignore[no-untyped-def]
    ) -> None:
        self.values = dict(locals())


def test_options_come_from_init_in_order() -> None:
    """Every keyword argument is an option, in signature order, with its default."""
    infos = option_infos(Sample)
    assert list(infos) == [
        "average",
        "labels",
        "k",
        "threshold",
        "name",
        "ignore_case",
        "pair",
        "anything",
    ]
    assert infos["average"].default == "macro"
    assert infos["average"].choices == ("macro", "micro", "weighted")
    assert infos["labels"].choices is None
    assert not infos["k"].required


def test_descriptions_merge_along_the_class_hierarchy() -> None:
    """Args sections of base classes document shared options; continuation lines join."""
    infos = option_infos(Sample)
    assert infos["ignore_case"].description == "Compare case-insensitively."
    assert infos["average"].description == (
        "How per-class scores are combined, continued on a second line."
    )
    assert infos["pair"].description == ""


@pytest.mark.parametrize(
    ("option", "type_name"),
    [
        ("average", "`macro`, `micro`, `weighted`"),
        ("labels", "list of strings or none"),
        ("k", "integer"),
        ("threshold", "number"),
        ("ignore_case", "boolean"),
        ("pair", "list of strings"),
        ("anything", "any"),
    ],
)
def test_type_names_read_like_the_reference(option: str, type_name: str) -> None:
    """Hints are worded for docs and errors."""
    assert option_infos(Sample)[option].type_name == type_name


def test_configure_converts_and_passes_values() -> None:
    """Good values pass; floats accept ints; tuples stay tuples, lists stay lists."""
    metric = Sample.configure({"threshold": 1, "labels": ("a", "b"), "pair": ["x"]})
    assert metric.values["threshold"] == 1.0
    assert type(metric.values["threshold"]) is float
    assert metric.values["labels"] == ["a", "b"]
    assert metric.values["pair"] == ("x",)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"average": "mean"}, "`average` ('mean') must be one of 'macro', 'micro', 'weighted'."),
        ({"average": "macr"}, "Did you mean 'macro'?"),
        ({"k": True}, "`k` (True) must be an integer, not bool."),
        ({"k": 1.5}, "`k` (1.5) must be an integer, not float."),
        ({"threshold": "high"}, "`threshold` ('high') must be a number, not str."),
        ({"threshold": float("nan")}, "must be a finite number"),
        ({"ignore_case": "yes"}, "`ignore_case` ('yes') must be a boolean, not str."),
        ({"labels": "positive"}, "must be a list of strings or none, not str."),
        ({"labels": ["a", 1]}, "`labels` (1) must be"),
        ({"name": None}, "`name` (None) must be a string"),
        ({"averag": "macro"}, "Did you mean 'average'?"),
    ],
    ids=[
        "literal",
        "literal-typo",
        "bool-for-int",
        "float-for-int",
        "str-for-float",
        "nan",
        "str-for-bool",
        "str-for-list",
        "bad-list-item",
        "none-not-allowed",
        "unknown-option",
    ],
)
def test_bad_values_name_the_option_and_the_allowed_values(
    options: dict[str, object], message: str
) -> None:
    """Each bad value is an OptionError in one grammar."""
    with pytest.raises(OptionError) as info:
        Sample.configure(options)
    assert message in str(info.value)


def test_unknown_option_lists_every_valid_one() -> None:
    """The error for an unknown option lists all options."""
    with pytest.raises(OptionError) as info:
        Sample.configure({"zzz": 1})
    assert "Valid options: `average`, `labels`, `k`" in str(info.value)


def test_required_option_must_be_given() -> None:
    """An option without a default is required."""

    class Needs(Metric):
        metric_id = "needs_opts"

        def __init__(self, labels: list[str]) -> None:
            self.labels = labels

    assert option_infos(Needs)["labels"].required
    with pytest.raises(OptionError, match="needs the option"):
        Needs.configure({})
    assert Needs.configure({"labels": ["a"]}).labels == ["a"]


def test_metric_without_init_has_no_options() -> None:
    """A metric without __init__ has no options, and any option is unknown."""

    class Plain(Metric):
        metric_id = "plain_opts"

    assert option_infos(Plain) == {}
    with pytest.raises(OptionError, match="Valid options: none"):
        Plain.configure({"x": 1})


def test_union_hints_try_each_arm() -> None:
    """int | str accepts either; other types are refused."""
    info = option_infos(Sample)["k"]
    union_info = type(info)(name="u", hint=int | str, default=0)
    assert coerce_value(union_info, 3) == 3
    assert coerce_value(union_info, "x") == "x"
    with pytest.raises(OptionError):
        coerce_value(union_info, 1.5)
    assert describe_hint(int | None) == "integer or none"
    assert option_infos(Sample)["k"].default is not inspect.Parameter.empty
