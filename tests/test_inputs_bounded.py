"""Bounded reads (issue 16, items 1-3, 19, 20): streams read once, hashes of the bytes read.

Also: bounded lines and documents, duplicate keys refused, names from files escaped.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from itemscore import ConfigError, InputError
from itemscore.inputs import Limits, open_source, read_items, read_part

ROWS = [{"id": f"q{n}", "output": "x", "expected": "x"} for n in range(50)]
TEXT = "".join(json.dumps(row) + "\n" for row in ROWS)


def _run(
    code: str, *, timeout: float = 60, memory: int | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter, bounded in time (and address space)."""
    prelude = ""
    if memory is not None:
        prelude = f"import resource\nresource.setrlimit(resource.RLIMIT_AS, ({memory}, {memory}))\n"
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _feed(fifo: Path, data: bytes) -> threading.Thread:
    """A writer that opens the pipe once, writes ``data`` and closes it."""

    def write() -> None:
        with open(fifo, "wb") as handle:
            handle.write(data)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


# -- 1, 2: a stream is read once; the hash is of the bytes read ------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_named_pipe_is_read_once_and_hashed(tmp_path: Path) -> None:
    """A FIFO named .jsonl is read (not hung on) and its hash is that of what it carried."""
    fifo = tmp_path / "p.jsonl"
    os.mkfifo(fifo)
    code = f"""
        import json, sys
        from itemscore.inputs import open_source, read_part
        with open_source({str(fifo)!r}) as source:
            reader = read_part(source.whole())
            n = sum(batch.num_rows for batch in reader.batches())
            print(json.dumps([n, reader.sha256, source.format]))
    """
    writer = subprocess.Popen(["sh", "-c", f"cat > {fifo}"], stdin=subprocess.PIPE)
    assert writer.stdin is not None
    writer.stdin.write(TEXT.encode())
    writer.stdin.close()
    done = _run(code, timeout=60)
    writer.wait(timeout=10)
    assert done.returncode == 0, done.stderr
    n, sha256, fmt = json.loads(done.stdout)
    assert (n, fmt) == (50, "jsonl")
    assert sha256 == hashlib.sha256(TEXT.encode()).hexdigest()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_read_items_from_a_pipe_does_not_hang(tmp_path: Path) -> None:
    """The format sniffer never consumes the pipe: read_items reads every row from it."""
    fifo = tmp_path / "p.jsonl"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"cat > {fifo}"], stdin=subprocess.PIPE)
    assert writer.stdin is not None
    writer.stdin.write(TEXT.encode())
    writer.stdin.close()
    code = f"""
        from itemscore.inputs import read_items
        print(len(read_items({str(fifo)!r})))
    """
    done = _run(code, timeout=60)
    writer.wait(timeout=10)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "50"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_the_copy_of_a_stream_is_private_and_removed(tmp_path: Path) -> None:
    """A stream is copied once into a 0600 file of a 0700 folder, removed at the end."""
    fifo = tmp_path / "p.jsonl"
    os.mkfifo(fifo)
    thread = _feed(fifo, TEXT.encode())
    with open_source(fifo) as source:
        copy = Path(source.files[0][0])
        assert copy != fifo
        assert copy.stat().st_mode & 0o777 == 0o600
        assert copy.parent.stat().st_mode & 0o777 == 0o700
        assert source.sha256 == hashlib.sha256(TEXT.encode()).hexdigest()
        assert source.files[0][1] == str(fifo)  # messages name the pipe, not the copy
    thread.join(timeout=10)
    assert not copy.exists()
    assert not copy.parent.exists()


def test_the_hash_is_of_the_bytes_read(tmp_path: Path) -> None:
    """reader.sha256 is that of the file's bytes, computed while reading them."""
    path = tmp_path / "d.jsonl"
    path.write_text(TEXT, encoding="utf-8")
    with open_source(path) as source:
        reader = read_part(source.whole())
        assert sum(batch.num_rows for batch in reader.batches()) == 50
    assert reader.sha256 == hashlib.sha256(TEXT.encode()).hexdigest()
    assert reader.n_bytes == len(TEXT.encode())
    assert reader.n_rows == 50


def test_a_file_changed_after_planning_is_an_error(tmp_path: Path) -> None:
    """A part whose bytes no longer have the planned hash: the file changed while read."""
    path = tmp_path / "d.jsonl"
    path.write_text(TEXT * 20, encoding="utf-8")
    with open_source(path) as source:
        parts = source.parts(2)
        assert len(parts) == 2
        path.write_text((TEXT * 20).replace('"x"', '"y"'), encoding="utf-8")
        with pytest.raises(InputError, match=r"d\.jsonl: the file changed while it was read"):
            list(read_part(parts[0]).batches())


# -- 3: bounded lines, records and documents -------------------------------------------------


def test_a_line_past_the_bound_is_named(tmp_path: Path) -> None:
    """A line longer than max_line_bytes: an input error naming file and line."""
    path = tmp_path / "d.jsonl"
    long = json.dumps({"id": "b", "output": "x" * 5000})
    path.write_text(TEXT + long + "\n" + TEXT.replace('"q', '"r'), encoding="utf-8")
    with pytest.raises(InputError, match=r"d\.jsonl:51: the line is longer than 1,000 bytes"):
        read_items(path, max_line_bytes=1000)
    assert len(read_items(path)) == 101  # the default bound (64 MiB) takes it


def test_dev_zero_as_a_jsonl_file_ends_within_memory(tmp_path: Path) -> None:
    """A stream without line ends (/dev/zero): an error at line 1, in bounded memory.

    The reader runs with 1 GiB of address space for a 4 MiB bound.
    """
    link = tmp_path / "zero.jsonl"
    link.symlink_to("/dev/zero")
    code = f"""
        from itemscore import InputError
        from itemscore.inputs import read_items
        try:
            read_items({str(link)!r}, max_line_bytes=4 << 20)
        except InputError as exc:
            print(exc)
    """
    done = _run(code, timeout=120, memory=1 << 30)
    assert done.returncode == 0, done.stderr
    assert f"{link}:1: the line is longer than 4,194,304 bytes" in done.stdout


def test_a_regular_file_without_line_ends_ends_within_memory(tmp_path: Path) -> None:
    """The same for a regular file: never more than about the bound in memory."""
    path = tmp_path / "d.jsonl"
    with path.open("wb") as handle:
        for _ in range(64):
            handle.write(b"x" * (1 << 20))
    code = f"""
        from itemscore import InputError
        from itemscore.inputs import read_items
        try:
            read_items({str(path)!r}, max_line_bytes=2 << 20)
        except InputError as exc:
            print(exc)
    """
    done = _run(code, timeout=120, memory=1 << 30)
    assert done.returncode == 0, done.stderr
    assert "d.jsonl:1: the line is longer than 2,097,152 bytes" in done.stdout


def test_a_csv_record_past_the_bound_is_named(tmp_path: Path) -> None:
    """An unclosed quote that swallows the file stops at the bound, at its first line."""
    path = tmp_path / "d.csv"
    path.write_text('id,output\n1,"open\n' + "2,x\n" * 2000, encoding="utf-8")
    with pytest.raises(InputError, match=r"d\.csv:2: the record is longer than 1,000 bytes"):
        read_items(path, max_line_bytes=1000)


def test_a_json_file_past_the_bound_is_refused(tmp_path: Path) -> None:
    """A JSON list is parsed whole: past max_json_bytes it is an error saying how to go on."""
    path = tmp_path / "d.json"
    path.write_text(json.dumps(ROWS), encoding="utf-8")
    with pytest.raises(InputError, match=r"d\.json: the file is larger than 100 bytes"):
        read_items(path, max_json_bytes=100)
    assert len(read_items(path)) == 50


def test_the_bounds_are_checked(tmp_path: Path) -> None:
    """A bound that is not a whole number of at least 1 is a configuration error."""
    path = tmp_path / "d.jsonl"
    path.write_text(TEXT, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"`max_line_bytes` \(0\) must be a whole number"):
        read_items(path, max_line_bytes=0)
    with pytest.raises(ConfigError, match=r"`max_line_bytes` \('big'\)"):
        read_items(path, max_line_bytes="big")
    assert len(read_items(path, max_line_bytes="100000")) == 50  # text, as the CLI gives it
    source = open_source(path, limits=Limits(max_line_bytes=10))
    with pytest.raises(InputError, match=r"d\.jsonl:1: the line is longer than 10 bytes"):
        list(read_part(source.whole()).batches())


# -- 20: duplicate keys ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "second"),
    [
        ('{"id": "a", "output": "x", "id": "b"}', '"id": "b"'),
        ('{"id": "a", "output": "x", "meta": {"k": 1, "k": 2}}', '"k": 2'),
        ('{"id": "a", "output": "x", "out\\u0070ut": "y"}', None),
    ],
    ids=["top-level", "nested", "escaped"],
)
def test_a_key_given_twice_is_refused(tmp_path: Path, line: str, second: str | None) -> None:
    """JSON readers disagree on which value of a repeated key wins: refused, at its place.

    The place is the second occurrence; a key written with escapes is named at the line.
    """
    column = line.index(second) + 1 if second is not None else 1
    path = tmp_path / "d.jsonl"
    path.write_text(TEXT + line + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_items(path)
    assert str(caught.value).startswith(f"{path}:51:{column}: the key ")
    assert "appears twice in one object" in str(caught.value)
    assert (caught.value.line, caught.value.column) == (51, column)


def test_a_key_given_twice_in_a_json_list_is_refused(tmp_path: Path) -> None:
    """The JSON list reader refuses them too."""
    path = tmp_path / "d.json"
    second = ' {"id": "b", "output": "x", "id": "c"}]'
    path.write_text('[{"id": "a", "output": "x"},\n' + second, "utf-8")
    column = second.index('"id": "c"') + 1
    with pytest.raises(InputError, match=rf"d\.json:2:{column}: the key 'id' appears twice"):
        read_items(path)


def test_colons_in_texts_are_not_duplicates(tmp_path: Path) -> None:
    """A line with more colons than keys is read again, and passes when no key repeats."""
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "a", "output": "Answer: 12:30", "meta": {"k": 1}}\n', "utf-8")
    (item,) = read_items(path)
    assert item.output == "Answer: 12:30"


# -- 19: names from data files are escaped in messages -------------------------------------

ESC = "\x1b]52;c;aGk=\x07"  # OSC 52: writes the clipboard in some terminals


def _assert_escaped(message: str) -> None:
    assert "\x1b" not in message
    assert "\x07" not in message
    assert "\\x1b]52" in message


def test_jsonl_keys_are_escaped(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"id": "a", ESC: "x"}) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_items(path)
    _assert_escaped(str(caught.value))


def test_csv_header_names_are_escaped(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text(f"id,{ESC}\n1,x\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_items(path)
    _assert_escaped(str(caught.value))


def test_parquet_column_names_are_escaped(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"id": ["a"], ESC: ["x"], "\u202eoutput": ["y"]}), path)
    with pytest.raises(InputError) as caught:
        read_items(path)
    _assert_escaped(str(caught.value))
    assert "\u202e" not in str(caught.value)
    assert "\\u202e" in str(caught.value)


@pytest.mark.parametrize("arrow", [True, False], ids=["arrow-path", "row-path"])
def test_rows_with_keys_of_their_own_are_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, arrow: bool
) -> None:
    """Every row with keys of its own would make the reading quadratic: max_columns stops it."""
    from itemscore.inputs import jsonl

    monkeypatch.setattr(jsonl, "ARROW", arrow)
    path = tmp_path / "d.jsonl"
    rows = [{"id": f"q{n}", "output": "x", f"key{n}": n} for n in range(300)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    with pytest.raises(InputError, match=r"d\.jsonl:101: the rows hold more than 100 different"):
        read_items(path, max_columns=100)
    assert len(read_items(path)) == 300


def test_a_csv_header_past_max_columns_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    header = ["id", "output", *(f"c{n}" for n in range(20))]
    path.write_text(",".join(header) + "\n" + ",".join(["1"] * 22) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"d\.csv:1: the rows hold more than 10 different"):
        read_items(path, max_columns=10)


def test_parquet_columns_past_max_columns_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    pq.write_table(
        pa.table({"id": ["a"], "output": ["x"], **{f"c{n}": [n] for n in range(20)}}), path
    )
    with pytest.raises(InputError, match=r"d\.parquet: the rows hold more than 10 different"):
        read_items(path, max_columns=10)
