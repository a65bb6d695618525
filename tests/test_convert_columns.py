"""Rows from Python go column by column, Arrow first, to the items the converter's rules give.

The converter's rules for one value (``Converter.convert``, row by row) are the reference: the
column path (:func:`~itemscore.inputs._vector.rows_to_items`, behind ``to_items``, and the
readers' :class:`~itemscore.inputs._vector.RowBuilder`) must give the same items, or the same
error, for any rows.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from itemscore import InputError, ItemResult
from itemscore._schema import batch_to_items
from itemscore.inputs import Converter, Rows, to_items
from itemscore.inputs._vector import RowBuilder, rows_to_items

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6)
BLANKISH = st.sampled_from(["", " ", "\u3000", "a|b", " a | |b ", "null", "7"])
VALUE = st.one_of(
    st.none(),
    TEXT,
    BLANKISH,
    st.integers(-(2**65), 2**65),
    st.booleans(),
    st.floats(allow_infinity=False),
    st.lists(st.one_of(st.none(), TEXT, BLANKISH, st.integers(-9, 9)), max_size=3),
    st.dictionaries(st.sampled_from(["k"]), TEXT, max_size=1),
)
#: Columns of one kind each (the vectorised case), of valid values of several kinds, or of
#: any value (the rule per value, and its errors).
ONE_KIND = st.sampled_from(
    [
        TEXT,
        BLANKISH,
        st.integers(0, 40),
        st.lists(TEXT, max_size=3),
        st.none() | TEXT,
        st.sampled_from(["1", " 2 ", "x"]),
        st.one_of(st.none(), TEXT, st.integers(0, 9), st.booleans(), st.floats(0, 9)),
        VALUE,
    ]
)
KEYS = ["id", "output", "expected", "input", "group", "model", "attempt", "n", "metadata"]


#: Values every text role takes (texts, numbers, booleans, missing), of one kind or several.
TEXTUAL = st.sampled_from(
    [
        TEXT,
        BLANKISH,
        st.integers(0, 40),
        st.none() | TEXT,
        st.one_of(st.none(), TEXT, st.integers(0, 9), st.booleans(), st.floats(0, 9)),
    ]
)
ATTEMPT = st.sampled_from(
    [st.integers(-1, 5), st.sampled_from(["1", " 2 ", "\u0663"]), st.none() | st.integers(0, 3)]
)


@st.composite
def python_rows(draw: Any) -> list[dict[str, Any]]:
    kinds = {key: draw(ONE_KIND) for key in KEYS}
    if draw(st.integers(0, 3)):  # mostly rows that follow the rules, to get past the first error
        kinds.update({key: draw(TEXTUAL) for key in ("id", "output", "input", "group", "model")})
        kinds["attempt"] = draw(ATTEMPT)
    ids = draw(st.sampled_from(["unique", "numbers", "drawn"]))
    rows = []
    for index in range(draw(st.integers(1, 6))):
        row: dict[str, Any] = {}
        for key in KEYS:
            if draw(st.integers(0, 19 if key == "output" else 4)):
                row[key] = draw(kinds[key])
        if ids == "unique":
            row["id"] = f"r{index}"
        elif ids == "numbers":
            row["id"] = index
        rows.append(row)
    return rows


OPTIONS = st.fixed_dictionaries(
    {
        "columns": st.sampled_from([None, {"expected": "n"}, {"id": "id"}, {"group": "input"}]),
        "answer_delimiter": st.sampled_from([None, "|"]),
        "null_output": st.sampled_from([None, "null"]),
    }
)


def _by_rows(rows: list[dict[str, Any]], options: dict[str, Any]) -> list[ItemResult] | str:
    converter = Converter(options["columns"], **_rules(options))
    try:
        return converter.convert(Rows("", rows, range(1, len(rows) + 1), "row"))
    except InputError as exc:
        return str(exc)


def _rules(options: dict[str, Any]) -> dict[str, Any]:
    return {k: options[k] for k in ("answer_delimiter", "null_output")}


def _same(a: list[ItemResult] | str, b: list[ItemResult] | str) -> None:
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
        return
    assert [_roles(item) for item in a] == [_roles(item) for item in b]
    assert [_plain(item.metadata) for item in a] == [_plain(item.metadata) for item in b]


def _roles(item: ItemResult) -> tuple[Any, ...]:
    return (item.id, item.output, item.expected, item.input, item.group, item.model, item.attempt)


def _plain(value: Any) -> Any:
    """A value with NaN made comparable (NaN != NaN) and read-only mappings as dicts."""
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if hasattr(value, "items"):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


@settings(max_examples=400, deadline=None)
@given(rows=python_rows(), options=OPTIONS)
def test_rows_from_python_give_what_the_rules_give_row_by_row(
    rows: list[dict[str, Any]], options: dict[str, Any]
) -> None:
    """``to_items`` (by columns) equals the converter row by row: items, or the same error."""
    try:
        by_columns: list[ItemResult] | str = to_items(rows, options["columns"], **_rules(options))
    except InputError as exc:
        by_columns = str(exc)
    _same(by_columns, _by_rows(rows, options))


@settings(max_examples=300, deadline=None)
@given(rows=python_rows(), options=OPTIONS)
def test_a_readers_rows_give_the_roles_the_rules_give(
    rows: list[dict[str, Any]], options: dict[str, Any]
) -> None:
    """A reader's rows: the same roles as the rules row by row, or an error both ways."""
    converter = Converter(options["columns"], **_rules(options))
    chunk = Rows("d.jsonl", rows, range(1, len(rows) + 1), "line")
    try:
        batch = RowBuilder(converter).build(chunk, 1)
    except InputError:
        assert isinstance(_by_rows(rows, options), str)
        return
    reference = _by_rows(rows, options)
    if isinstance(reference, str):
        assert "appears twice" in reference  # ids are checked for a whole source, not here
        return
    assert [_roles(item) for item in batch_to_items(batch)] == [_roles(i) for i in reference]


def test_rows_mixing_items_and_dicts_are_taken_row_by_row() -> None:
    """An ItemResult among dicts is taken as it is; the dicts follow the rules."""
    item = ItemResult(id="a", output="x")
    got = rows_to_items(Converter(), Rows("", [item, {"output": 7}], [1, 2], "row"))
    assert got[0] is item
    assert (got[1].id, got[1].output) == ("2", "7")


def test_the_first_error_in_row_order_is_named() -> None:
    """Row 1's bad output is named before row 2's bad id, though ids are read first."""
    rows = [{"id": "a", "output": {"k": 1}}, {"id": True, "output": "y"}]
    with pytest.raises(InputError, match=r"^Row 1: 'output' must be text"):
        to_items(rows)


def test_a_duplicate_id_before_a_bad_value_is_named_first() -> None:
    rows = [{"id": "a", "output": "x"}, {"id": "a", "output": "y"}, {"id": "c", "output": [1]}]
    with pytest.raises(InputError, match=r"^Row 2: the id 'a' appears twice"):
        to_items(rows)


def test_lone_surrogates_from_python_are_kept() -> None:
    """Arrow cannot hold them: such rows are taken row by row, the text as given."""
    (item,) = to_items([{"id": "a", "output": "x\ud800"}])
    assert item.output == "x\ud800"
