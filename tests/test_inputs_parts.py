"""Sources in parts: what workers read by themselves equals what one reader reads whole."""

from __future__ import annotations

import hashlib
import json
import pickle
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from itemscore import InputError
from itemscore.inputs import open_source, read_items, read_part

LINES = [
    {"output": f"answer {n}", "expected": ["a", "b"] if n % 3 else "a", "n": n} for n in range(400)
]


def _jsonl(path: Path, rows: list[dict[str, object]], *, blank_every: int = 0) -> Path:
    out = []
    for index, row in enumerate(rows):
        out.append(json.dumps(row) + "\n")
        if blank_every and index % blank_every == 0:
            out.append("\n  \n")  # blank lines: counted as lines, not as rows
    path.write_text("".join(out), encoding="utf-8")
    return path


def _table(parts: list[object]) -> pa.Table:
    batches = []
    for part in parts:
        batches += list(read_part(part).batches())  # type: ignore[arg-type]
    return pa.Table.from_batches(batches)


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_json_lines_parts_read_as_the_whole(tmp_path: Path, n: int) -> None:
    """Split at line starts: the parts' rows, lines and row-number ids are the whole file's."""
    path = _jsonl(tmp_path / "d.jsonl", LINES, blank_every=37)
    with open_source(path) as source:
        whole = _table([source.whole()])
        parts = source.parts(n)
        assert len(parts) == n
        assert _table(parts).to_pylist() == whole.to_pylist()
        assert source.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    ids = whole.column("id").to_pylist()
    assert ids == [str(k) for k in range(1, 401)]  # blank lines do not count as rows
    assert whole.column("_line").to_pylist()[:3] == [1, 4, 5]


def test_rows_are_counted_across_blocks_whatever_starts_a_line(tmp_path: Path) -> None:
    """Odd lines spread over several read blocks: each part's rows are the whole read's.

    Blank, blank-looking, CRLF and indented lines sit in the middle block only, so blocks
    with and without them are counted.
    """
    import random

    rng = random.Random(7)
    shapes = ["{}\n", "\n", "  \n", "\r\n", "\t\n", "  {}\n", "{}\r\n", "\r\n\r\n"]
    out, rows, size = [], 0, 0
    while size < 5 << 20:  # past two of the reader's 2 MiB blocks
        odd = 2 << 20 <= size < 3 << 20 and rng.random() < 0.3  # blocks with and without
        shape = rng.choice(shapes) if odd else "{}\n"
        line = shape.replace("{}", json.dumps({"output": f"{rows} " + "x" * rng.randrange(200)}))
        out.append(line)
        size += len(line)
        rows += "{}" in shape
    out.append(json.dumps({"output": f"{rows} last"}))  # no line end
    path = tmp_path / "shapes.jsonl"
    path.write_bytes("".join(out).encode())
    with open_source(path) as source:
        whole = _table([source.whole()])
        parts = source.parts(5)
        assert _table(parts).column("id").to_pylist() == whole.column("id").to_pylist()
    numbers = [int(text.split()[0]) for text in whole.column("output").to_pylist()]
    assert numbers == list(range(rows + 1))
    assert whole.column("id").to_pylist() == [str(k) for k in range(1, rows + 2)]


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_each_part_is_yielded_as_soon_as_it_is_planned(tmp_path: Path, suffix: str) -> None:
    """Workers may start on the first part while the rest of the file is still being read.

    The file's SHA-256 is known only once the last part is planned; the parts are those of
    :meth:`parts`.
    """
    path = tmp_path / f"d{suffix}"
    if suffix == ".jsonl":
        _jsonl(path, LINES, blank_every=37)
    else:
        rows = [{**row, "expected": ["a"]} for row in LINES]
        pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=50)
    with open_source(path) as source:
        planning = source.iter_parts(4)
        first = next(planning)
        assert source.sha256 is None  # the file is not read to its end yet
        assert first.index == 0
        rest = list(planning)
        assert source.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
        assert source.n_bytes == path.stat().st_size
    with open_source(path) as again:
        assert [first, *rest] == again.parts(4)


def test_rows_are_numbered_across_files_of_several_parts(tmp_path: Path) -> None:
    """Parquet files of several row groups each: row numbers run on from file to file."""
    folder = tmp_path / "runs"
    folder.mkdir()
    plain = [{"output": row["output"], "expected": ["a"]} for row in LINES]  # no ids
    pq.write_table(pa.Table.from_pylist(plain[:150]), folder / "a.parquet", row_group_size=40)
    pq.write_table(pa.Table.from_pylist(plain[150:]), folder / "b.parquet", row_group_size=40)
    with open_source(folder) as source:
        parts = source.parts(6)
        files = [part.pieces[0].file for part in parts]
        assert files == sorted(files)
        assert files.count(0) > 1
        assert files.count(1) > 1
        assert _table(parts).column("id").to_pylist() == [str(k) for k in range(1, 401)]
        assert source.n_bytes == sum(p.stat().st_size for p in folder.iterdir())


def test_parts_are_picklable(tmp_path: Path) -> None:
    """A part travels to a worker: it pickles, and reads the same there."""
    path = _jsonl(tmp_path / "d.jsonl", LINES)
    with open_source(path) as source:
        parts = source.parts(3)
        copies = [pickle.loads(pickle.dumps(part)) for part in parts]
        assert copies == parts
        assert _table(copies).equals(_table(parts))


def test_an_error_in_a_later_part_names_its_line(tmp_path: Path) -> None:
    """A worker's messages name the line in the whole file."""
    rows = [json.dumps(row) for row in LINES]
    rows[300] = '{"output": }'
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    with open_source(path) as source:
        parts = source.parts(4)
        (holding,) = [
            part
            for part, after in zip(parts, [*parts[1:], None])
            if part.pieces[0].first_line <= 301
            and (after is None or after.pieces[0].first_line > 301)
        ]
        assert holding.pieces[0].first_line > 1
        with pytest.raises(InputError, match=r"d\.jsonl:301:12: not valid JSON"):
            list(read_part(holding).batches())


def test_parquet_parts_are_runs_of_row_groups(tmp_path: Path) -> None:
    """A Parquet file splits between row groups; the rows are numbered in the whole file."""
    path = tmp_path / "d.parquet"
    rows = [{**row, "expected": ["a"]} for row in LINES]
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=50)
    with open_source(path) as source:
        whole = _table([source.whole()])
        parts = source.parts(3)
        assert len(parts) == 3
        assert all(part.pieces[0].row_groups for part in parts)
        assert _table(parts).to_pylist() == whole.to_pylist()
        assert source.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert whole.column("_line").to_pylist() == list(range(1, 401))


def test_several_files_are_parts_of_their_own(tmp_path: Path) -> None:
    """A list, a glob or a folder: one part per file at least, rows numbered across them."""
    folder = tmp_path / "runs"
    folder.mkdir()
    _jsonl(folder / "a.jsonl", LINES[:100])
    _jsonl(folder / "b.jsonl", LINES[100:250])
    (folder / "_SUCCESS").write_text("", encoding="utf-8")  # what writers leave: left out
    for given in (folder, str(folder / "*.jsonl"), [folder / "a.jsonl", folder / "b.jsonl"]):
        with open_source(given) as source:
            assert [name for _, name in source.files] == [
                str(folder / "a.jsonl"),
                str(folder / "b.jsonl"),
            ]
            parts = source.parts(2)
            assert [part.pieces[0].file for part in parts] == [0, 1]
            ids = _table(parts).column("id").to_pylist()
            assert ids == [str(k) for k in range(1, 251)]
            assert _table([source.whole()]).column("id").to_pylist() == ids
    assert len(read_items(folder)) == 250


def test_a_repeat_across_files_names_both(tmp_path: Path) -> None:
    """The whole-source checks take each part's keys in order and name the other file."""
    a = _jsonl(tmp_path / "a.jsonl", [{"id": "q1", "output": "x"}, {"id": "q2", "output": "x"}])
    b = _jsonl(tmp_path / "b.jsonl", [{"id": "q3", "output": "x"}, {"id": "q1", "output": "y"}])
    with open_source([a, b]) as source:
        checks = source.checks()
        for part in source.parts(2):
            reader = read_part(part)
            for _ in reader.batches():
                pass
            checks.add(reader.keys())
        with pytest.raises(InputError) as caught:
            checks.finish()
    assert str(caught.value).startswith(
        f"{b}:2:2: the id 'q1' appears twice (first at line 1 of {a})."
    )


def test_the_checks_want_an_answer_key_where_a_metric_needs_one(tmp_path: Path) -> None:
    """No row with an answer key, and a metric that needs one: today's message."""
    path = _jsonl(tmp_path / "d.jsonl", [{"id": "q1", "output": "x"}])
    with open_source(path) as source:
        reader = read_part(source.whole())
        list(reader.batches())
        checks = source.checks()
        checks.add(reader.keys())
        checks.finish()  # no metric needs one
        with pytest.raises(InputError, match=r"no row has an answer key.*'exact_match' needs one"):
            checks.finish(needing=["exact_match"])


def test_csv_files_in_a_folder(tmp_path: Path) -> None:
    """CSV files are never split inside, and count their rows for the next one's ids."""
    (tmp_path / "a.csv").write_text('output\n"two\nlines"\ny\n', encoding="utf-8")
    (tmp_path / "b.csv").write_text("output\nz\n", encoding="utf-8")
    with open_source(tmp_path) as source:
        table = _table(source.parts(4))
    assert table.column("id").to_pylist() == ["1", "2", "3"]
    assert table.column("_line").to_pylist() == [2, 4, 2]


def test_files_of_two_formats_are_refused(tmp_path: Path) -> None:
    """One source, one format."""
    _jsonl(tmp_path / "a.jsonl", LINES[:2])
    (tmp_path / "b.csv").write_text("output\nz\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"The files of one source must share a format"):
        open_source(tmp_path)


def test_a_folder_without_data_files_says_so(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    with pytest.raises(InputError, match=r"The folder .* holds no data file"):
        open_source(tmp_path)
