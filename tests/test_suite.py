"""Suites: rows to items, bundled data, lookup by entry point."""

from __future__ import annotations

import pytest

from itemscore import InputError, ItemResult, Suite, UnknownSuiteError, get_suite
from itemscore.inputs import item_from_row


def test_rows_become_items_with_metadata() -> None:
    """Known keys fill the fields; other keys, and a nested metadata mapping, go to metadata."""
    item = item_from_row(
        {
            "id": 7,
            "output": "x",
            "expected": ["a", "b"],
            "group": "g",
            "latency": 1.2,
            "metadata": {"cost": 3},
        },
        0,
    )
    assert item == ItemResult(
        id="7",
        output="x",
        expected=("a", "b"),
        group="g",
        metadata={"latency": 1.2, "cost": 3},
    )


def test_missing_id_becomes_the_row_number() -> None:
    """Rows without an id are numbered from 1."""
    assert item_from_row({"output": "x"}, 4).id == "5"


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (["x"], "Row 3: the row is a list; rows must be mappings"),
        ({"id": "a"}, "Row 3: the row has no 'output' key"),
        ({"id": "a", "output": {"x": 1}}, r"Row 3: 'output' must be text.*not an object"),
        ({"id": True, "output": "x"}, "Row 3: the id true is a boolean"),
    ],
    ids=["not-a-mapping", "no-output", "bad-output", "boolean-id"],
)
def test_bad_rows_name_the_row(row: object, message: str) -> None:
    """Malformed rows are input errors naming the row."""
    with pytest.raises(InputError, match=message):
        item_from_row(row, 2)


def test_number_output_becomes_its_json_text_as_in_files() -> None:
    """One rule for suites and files: a number output is its JSON text, NaN is missing."""
    assert item_from_row({"output": 0.5}, 0).output == "0.5"
    assert item_from_row({"output": float("nan")}, 0).output is None


def test_default_items_passes_items_through() -> None:
    """Suite.items accepts ItemResult objects as they are."""
    item = ItemResult(id="a", output="x")
    assert list(Suite().items([item, {"output": "y"}])) == [item, ItemResult(id="2", output="y")]


def test_suite_without_data_says_so() -> None:
    """load_data on a suite without bundled data is an input error."""
    with pytest.raises(InputError, match="bundles no data"):
        list(Suite().load_data())


def test_unknown_suite_suggests() -> None:
    """An unknown suite name is a lookup error listing installed suites."""
    with pytest.raises(UnknownSuiteError, match="No suite is named 'no-such-suite'"):
        get_suite("no-such-suite")
