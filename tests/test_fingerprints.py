"""Item fingerprints: the CRC-32 of the input and of the answer key, whatever holds the items."""

from __future__ import annotations

import zlib

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from itemscore import ItemResult
from itemscore._schema import items_to_batch
from itemscore.engine._table import FINGERPRINT, keys_of

# Arrow holds UTF-8 text: no lone surrogates.
_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)
_ITEM = st.tuples(st.none() | _TEXT, st.none() | st.lists(_TEXT, max_size=3))


def _expected(text: str | None, answers: list[str] | None) -> int:
    """The fingerprint as its definition states it, from zlib alone."""
    high = 0 if text is None else zlib.crc32(text.encode()) or 1
    low = zlib.crc32("\x1f".join(answers).encode()) or 1 if answers else 0
    return (high << 32) | low


@settings(max_examples=60, deadline=None)
@given(st.lists(_ITEM, max_size=40), st.integers(0, 5))
def test_arrow_columns_and_items_give_the_same_fingerprints(
    rows: list[tuple[str | None, list[str] | None]], cut: int
) -> None:
    """A list of items, a batch, a sliced batch, large types and chunks: one fingerprint each."""
    items = [
        ItemResult(id=f"q{i}", output="a", input=text, expected=answers)
        for i, (text, answers) in enumerate(rows)
    ]
    want = [_expected(item.input, None if item.expected is None else list(item.expected))
            for item in items]  # fmt: skip
    batch = items_to_batch(items)
    large = batch.cast(
        pa.schema(
            [
                field.with_type(pa.large_string())
                if field.name == "input"
                else field.with_type(pa.large_list(pa.large_string()))
                if field.name == "expected"
                else field
                for field in batch.schema
            ]
        )
    )
    chunked = pa.Table.from_batches([batch.slice(0, cut), batch.slice(cut)])
    assert keys_of(items).column(FINGERPRINT).to_pylist() == want
    for holder in (batch, large, chunked):
        assert keys_of(holder).column(FINGERPRINT).to_pylist() == want
    assert keys_of(batch.slice(cut)).column(FINGERPRINT).to_pylist() == want[cut:]


def test_a_missing_input_or_answer_key_counts_as_zero_and_an_empty_text_does_not() -> None:
    batch = items_to_batch(
        [
            ItemResult(id="a", output="x"),
            ItemResult(id="b", output="x", input="", expected=[""]),
            ItemResult(id="c", output="x", input="q", expected=["1", "2"]),
        ]
    )
    prints = keys_of(batch).column(FINGERPRINT).to_pylist()
    assert prints[0] == 0
    assert prints[1] == (1 << 32) | 1  # the CRC-32 of no bytes is 0: 1 tells it from missing
    assert prints[2] == (zlib.crc32(b"q") << 32) | zlib.crc32(b"1\x1f2")
