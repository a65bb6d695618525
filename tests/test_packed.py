"""Packed items and lists: what a streamed run keeps, compressed, instead of item objects."""

from __future__ import annotations

import pickle
import threading
from types import MappingProxyType

import pytest

from itemscore import ItemResult
from itemscore._packed import PackedItems, PackedList, Picked, pack_list


def make_items(n: int, start: int = 0) -> list[ItemResult]:
    return [
        ItemResult(
            id=f"q{i}",
            output=None if i % 7 == 3 else f"answer {i} 東京",
            expected=None if i % 5 == 2 else (f"answer {i}", "other"),
            input=f"question {i}" if i % 2 else None,
            group=f"g{i % 3}" if i % 4 else None,
            model=f"m{i % 2}",
            cluster=f"c{i // 10}" if i % 3 else None,
            metadata={"i": i, "tags": ["a", "b"], "nested": {"x": [1, 2.5, None]}} if i % 2 else {},
        )
        for i in range(start, start + n)
    ]


def chunked(items: list[ItemResult], size: int) -> list[list[ItemResult]]:
    return [items[at : at + size] for at in range(0, len(items), size)]


def test_items_come_back_equal_in_order() -> None:
    items = make_items(250)
    packed = PackedItems(chunked(items, 40))
    assert len(packed) == 250
    assert packed.n_chunks == 7
    assert list(packed) == items
    assert [list(chunk) for chunk in packed.chunks()] == chunked(items, 40)
    assert packed == items  # a Sequence compares by content


def test_indexing_and_slicing_like_a_list() -> None:
    items = make_items(100)
    packed = PackedItems(chunked(items, 30))
    for index in (0, 29, 30, 31, 59, 99, -1, -100):
        assert packed[index] == items[index]
    assert packed[25:65:3] == items[25:65:3]
    assert packed[::-7] == items[::-7]
    with pytest.raises(IndexError):
        packed[100]
    with pytest.raises(IndexError):
        packed[-101]


def test_rebuilt_metadata_is_read_only_and_nested_values_survive() -> None:
    item = PackedItems([make_items(2)])[1]
    assert item.metadata == {"i": 1, "tags": ("a", "b"), "nested": {"x": (1, 2.5, None)}}
    with pytest.raises(TypeError):
        item.metadata["i"] = 2  # type: ignore[index]
    assert isinstance(item.metadata, MappingProxyType)


def test_fields_kept_beside_the_blocks() -> None:
    items = make_items(60)
    packed = PackedItems(chunked(items, 25))
    assert packed.field("model") == [i.model for i in items]
    assert packed.field("group") == [i.group for i in items]
    assert packed.field("cluster") == [i.cluster for i in items]
    assert packed.n_answer_keys == sum(i.expected is not None for i in items)
    # Equal texts share one object, so a million items cost a pointer each.
    models = packed.field("model")
    assert models is not None
    assert models[0] is models[2]


def test_a_field_no_item_has_costs_nothing() -> None:
    plain = [ItemResult(id=str(i), output="x") for i in range(30)]
    packed = PackedItems(chunked(plain, 10))
    assert packed.field("model") is None
    assert packed.field("group") is None
    late = ItemResult(id="late", output="x", group="g", cluster="c")
    packed.append([late])
    assert packed.field("group") == [None] * 30 + ["g"]
    assert packed.field("cluster") == [None] * 30 + ["c"]
    assert packed.field("model") is None
    assert len(packed) == 31


def test_blocks_are_smaller_than_the_items_text() -> None:
    items = make_items(2000)
    packed = PackedItems(chunked(items, 1000))
    text = sum(len(repr(item)) for item in items)
    assert 0 < packed.packed_bytes < text / 4


def test_metadata_marshal_cannot_write_is_pickled() -> None:
    from fractions import Fraction

    items = [ItemResult(id="a", output="x", metadata={"f": Fraction(1, 3)})]
    assert list(PackedItems([items])) == items


def test_metadata_nothing_can_write_is_kept_as_items() -> None:
    lock = threading.Lock()
    items = [ItemResult(id="a", output="x", metadata={"lock": lock})]
    packed = PackedItems([items, make_items(3)])
    assert packed[0].metadata["lock"] is lock
    assert list(packed)[1:] == make_items(3)
    with pytest.raises(TypeError):
        pickle.dumps(lock)


def test_empty_chunks_are_skipped() -> None:
    packed = PackedItems([[], make_items(2), []])
    assert len(packed) == 2
    assert packed.n_chunks == 1
    assert list(PackedItems()) == []


def test_iteration_hands_out_fresh_items_per_pass() -> None:
    packed = PackedItems([make_items(3)])
    first, second = list(packed), list(packed)
    assert first == second
    assert first[0] is not second[0]


def test_packed_list_joins_packed_plain_and_missing_parts() -> None:
    a = [{"n": i, "t": "x" * (i % 3)} for i in range(10)]
    b: list[dict[str, object] | None] = [None, {"n": 99}]
    joined = PackedList.join([pack_list(a) or a, b, [None] * 3, []])
    assert joined is not None
    expected = [*a, *b, None, None, None]
    assert len(joined) == len(expected)
    assert list(joined) == expected
    assert [joined[i] for i in range(-len(expected), len(expected))] == expected * 2
    assert joined[3:9:2] == expected[3:9:2]
    with pytest.raises(IndexError):
        joined[len(expected)]
    again = PackedList.join([joined, a])
    assert again is not None
    assert list(again) == expected + a


def test_packed_list_copies_read_only_mappings() -> None:
    values = [MappingProxyType({"a": 1}), None]
    packed = pack_list(values)
    assert isinstance(packed, PackedList)
    assert list(packed) == [{"a": 1}, None]


def test_pack_list_keeps_what_cannot_be_packed() -> None:
    values = [{"lock": threading.Lock()}]
    assert pack_list(values) is values
    assert pack_list(None) is None
    assert pack_list([]) == []


def test_picked_reads_the_base_at_the_indices() -> None:
    base = list("abcdefgh")
    picked = Picked(base, [6, 1, 1, 4])
    assert list(picked) == ["g", "b", "b", "e"]
    assert picked[1:3] == ["b", "b"]
    assert picked[-1] == "e"
    assert len(picked) == 4


def test_blocks_between_gives_whole_blocks_only() -> None:
    items = make_items(100)
    packed = PackedItems(chunked(items, 30))  # blocks start at 0, 30, 60, 90
    from itemscore._packed import unpack_items

    both = packed.blocks_between(30, 90)
    assert both is not None
    assert len(both) == 2
    assert unpack_items(both) == items[30:90]
    last = packed.blocks_between(90, 100)
    assert last is not None
    assert unpack_items(last) == items[90:]
    assert packed.blocks_between(0, 45) is None  # ends inside a block
    assert packed.blocks_between(10, 30) is None  # starts inside a block
    lock = threading.Lock()
    odd = PackedItems([items[:10], [ItemResult(id="x", output="y", metadata={"l": lock})]])
    assert odd.blocks_between(0, 11) is None  # the second is kept as items


def test_a_packed_list_pickles_without_its_cache() -> None:
    values = [{"n": i} for i in range(20)]
    packed = pack_list(values)
    assert isinstance(packed, PackedList)
    assert packed[3] == {"n": 3}  # fills the cache
    again = pickle.loads(pickle.dumps(packed))
    assert list(again) == values
    assert again._cached_at == -1
