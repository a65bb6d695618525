"""MetricSpec: the forms a metric can be named in."""

from __future__ import annotations

import pytest

from itemscore import ConfigError, MetricSpec


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("f1", MetricSpec("f1")),
        ("  f1 ", MetricSpec("f1")),
        ({"name": "f1", "average": "micro"}, MetricSpec("f1", None, {"average": "micro"})),
        (
            {"name": "f1", "label": "f1_w", "options": {"average": "weighted"}},
            MetricSpec("f1", "f1_w", {"average": "weighted"}),
        ),
        (MetricSpec("x", "y"), MetricSpec("x", "y")),
    ],
    ids=["name", "padded-name", "inline-options", "nested-options", "spec"],
)
def test_parse_accepts_every_documented_form(given: object, expected: MetricSpec) -> None:
    """Names, mappings (options inline or nested) and specs all parse."""
    assert MetricSpec.parse(given) == expected


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("", "must not be empty"),
        ({"average": "micro"}, "needs a `name`"),
        ({"name": "f1", "label": ""}, "`label` of metric 'f1'"),
        ({"name": "f1", "options": ["a"]}, "`options` of metric 'f1' must be a mapping"),
        (3, "not int"),
    ],
    ids=["empty", "no-name", "empty-label", "options-not-mapping", "number"],
)
def test_parse_refuses_malformed_specs(given: object, message: str) -> None:
    """Malformed specs are configuration errors saying what is wrong."""
    with pytest.raises(ConfigError, match=message):
        MetricSpec.parse(given)


def test_to_dict_round_trips() -> None:
    """to_dict gives the mapping form parse accepts."""
    spec = MetricSpec("f1", "f1_w", {"average": "weighted"})
    assert spec.to_dict() == {"name": "f1", "label": "f1_w", "average": "weighted"}
    assert MetricSpec.parse(spec.to_dict()) == spec
    assert MetricSpec("f1").to_dict() == {"name": "f1"}
