"""Reading in chunks: large files streamed, ids checked across chunks, places kept exact."""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from itemscore import ConfigError, InputError, ItemResult
from itemscore.inputs import REGISTRY, InputFormat, iter_items, jsonl, read_items


def jsonl_file(tmp_path: Path, rows: list[dict[str, Any]], name: str = "d.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def test_chunks_hold_at_most_chunk_size_items(tmp_path: Path) -> None:
    """25 rows in chunks of 10: 10, 10, 5, the same items read_items gives."""
    path = jsonl_file(tmp_path, [{"id": str(n), "output": "x"} for n in range(25)])
    chunks = list(iter_items(path, chunk_size=10))
    assert [len(chunk) for chunk in chunks] == [10, 10, 5]
    assert [item for chunk in chunks for item in chunk] == read_items(path)


def test_rows_without_ids_are_numbered_across_chunks(tmp_path: Path) -> None:
    """Row numbers continue from chunk to chunk."""
    path = jsonl_file(tmp_path, [{"output": "x"}] * 5)
    chunks = list(iter_items(path, chunk_size=2))
    assert [item.id for chunk in chunks for item in chunk] == ["1", "2", "3", "4", "5"]


def test_a_duplicate_id_in_a_later_chunk_names_the_first_line(tmp_path: Path) -> None:
    """Uniqueness is checked over the whole file, not per chunk."""
    rows = [{"id": str(n), "output": "x"} for n in range(6)] + [{"id": "1", "output": "y"}]
    path = jsonl_file(tmp_path, rows)
    with pytest.raises(
        InputError, match=r"d\.jsonl:7:2: the id '1' appears twice \(first at line 2\)"
    ):
        list(iter_items(path, chunk_size=3))


@pytest.mark.parametrize("block", [1, 5, 7, 64])
def test_block_boundaries_keep_lines_and_characters_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    """Lines longer than a block and characters of several bytes read the same."""
    monkeypatch.setattr(jsonl, "_BLOCK", block)
    rows = [
        {"id": "é", "output": "東京"},
        {"id": "b", "output": "ไทย " * 20},
        {"id": "c", "output": ""},
    ]
    path = jsonl_file(tmp_path, rows)
    items = read_items(path)
    assert [(i.id, i.output) for i in items] == [(r["id"], r["output"]) for r in rows]


def test_a_bad_byte_after_the_first_block_is_named_at_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Line and column stay exact when the bad byte sits in a later block."""
    monkeypatch.setattr(jsonl, "_BLOCK", 16)
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'{"id": "a", "output": "x"}\n{"id": "b", "output": "caf\xe9"}\n')
    with pytest.raises(InputError, match=r"d\.jsonl:2:27: the file is not valid UTF-8"):
        read_items(path)


def test_a_file_without_a_final_line_break(tmp_path: Path) -> None:
    """The last line counts without its line break."""
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "a", "output": "x"}\n{"id": "b", "output": "y"}', "utf-8")
    assert [item.id for item in read_items(path)] == ["a", "b"]


def test_csv_is_streamed_with_its_line_numbers(tmp_path: Path) -> None:
    """CSV rows keep their first line across chunks, multi-line fields included."""
    path = tmp_path / "d.csv"
    path.write_text('id,output\n1,"a\nb"\n2,x\n3,y\n2,z\n', "utf-8")
    chunks = iter_items(path, chunk_size=1)
    assert next(chunks)[0].output == "a\nb"
    with pytest.raises(
        InputError, match=r"d\.csv:6: column 'id': the id '2' appears twice \(first at line 4\)"
    ):
        list(chunks)


def test_parquet_is_read_in_batches(tmp_path: Path) -> None:
    """Parquet rows come batch by batch, numbered across batches."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"output": ["a", "b", "c"]}), path)
    chunks = list(iter_items(path, chunk_size=2))
    assert [[i.id for i in chunk] for chunk in chunks] == [["1", "2"], ["3"]]


def test_chunk_size_must_be_positive(tmp_path: Path) -> None:
    """A chunk size below 1 is a configuration error."""
    path = jsonl_file(tmp_path, [{"output": "x"}])
    with pytest.raises(ConfigError, match=r"`chunk_size` \(0\) must be"):
        list(iter_items(path, chunk_size=0))


def test_a_records_format_registers_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A harness-log reader returning dicts keyed by role plugs in with one registry entry."""
    module = types.ModuleType("fake_harness.logs")

    def read_fake(path: Path, *, split: str = "test") -> list[dict[str, Any]]:
        return [
            {"id": "1", "model": "m", "output": "x", "expected": "x", "split": split},
            {"id": "1", "model": "m", "output": True},
        ]

    module.read_fake = read_fake  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fake_harness.logs", module)
    monkeypatch.setitem(
        REGISTRY, "fake", InputFormat("fake", (), "fake_harness.logs:read_fake", records=True)
    )  # type: ignore[index]
    path = tmp_path / "log.jsonl"
    path.write_text("", "utf-8")
    with pytest.raises(
        InputError,
        match=r"log\.jsonl: record 2: the id '1' appears twice for model 'm' \(first at record 1\)",
    ):
        read_items(path, format="fake")
    with pytest.raises(ConfigError, match=r"has no option 'splt'.*Did you mean 'split'"):
        read_items(path, format="fake", splt="dev")
    assert read_fake(path)[0]["split"] == "test"


def test_reader_options_are_checked() -> None:
    """An option the format's reader does not take is a configuration error naming its own."""
    with pytest.raises(
        ConfigError,
        match=r"The csv reader has no option 'delimiter'; it takes none\. It keeps the bounds "
        r"'max_line_bytes', 'max_columns', options too\.",
    ):
        read_items("x.csv", delimiter=";")
    with pytest.raises(ConfigError, match="The parquet reader has no option 'max_line_bytes'"):
        read_items("x.parquet", max_line_bytes=10)


def test_items_in_chunks_are_plain_items(tmp_path: Path) -> None:
    """What a chunk holds is ItemResult objects, ready to score."""
    path = jsonl_file(tmp_path, [{"id": "a", "output": "x", "expected": ["x", "y"]}])
    (chunk,) = iter_items(path)
    assert chunk == [ItemResult(id="a", output="x", expected=("x", "y"))]


def test_chunks_come_before_the_rest_of_the_file_is_read(tmp_path: Path) -> None:
    """Streaming: the first chunk arrives before a fault further down is even parsed."""
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "a", "output": "x"}\n{"id": "b", "output": "y"}\nnot json\n', "utf-8")
    chunks = iter_items(path, chunk_size=1)
    assert [item.id for item in next(chunks)] == ["a"]
    assert [item.id for item in next(chunks)] == ["b"]
    with pytest.raises(InputError, match=r"d\.jsonl:3:1: not valid JSON"):
        next(chunks)


def test_a_records_reader_may_yield_its_records_and_mark_unreadable_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader that yields records as it reads: a record's "error" is its reason (_error)."""
    from itemscore.inputs import open_source, read_part

    module = types.ModuleType("fake_harness.stream")

    def read_stream(path: Path) -> Iterator[dict[str, Any]]:
        yield {"id": "1", "output": "x", "expected": "x", "split": "test"}
        yield {"id": "2", "output": None, "error": "log.jsonl:2: the document has no target."}

    module.read_stream = read_stream  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fake_harness.stream", module)
    monkeypatch.setitem(
        REGISTRY, "stream", InputFormat("stream", (), "fake_harness.stream:read_stream", True)
    )  # type: ignore[index]
    path = tmp_path / "log.jsonl"
    path.write_text("", "utf-8")
    with open_source(path, format="stream") as source:
        (batch,) = read_part(source.whole()).batches()
    assert batch.column("_error").to_pylist() == [None, "log.jsonl:2: the document has no target."]
    assert [f.name for f in batch.schema.field("metadata").type] == ["split"]
    with pytest.warns(UserWarning, match=r"log\.jsonl: 1 of 2 documents could not be read"):
        first, second = read_items(path, format="stream")
    assert "error" not in first.metadata
    assert second.metadata["error"] == "log.jsonl:2: the document has no target."
