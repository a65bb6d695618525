"""Hostile and broken input files (issue 7): every problem an InputError naming file:line."""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path
from typing import Any

import pytest
import tomllib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from itemscore import ConfigError, InputError
from itemscore.inputs import FORMATS, REGISTRY, read_items, to_items

ROOT = Path(__file__).resolve().parents[1]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# -- 3: one JSON value per line, nothing else -------------------------------------------------


def test_two_objects_and_a_string_across_lines_are_refused(tmp_path: Path) -> None:
    """The file that passed as two items, one answering "},{", is an error at line 1."""
    text = '{"id":"1","output":"a"},{"id":"2","output":"}\n{","x":"y"}\n'
    path = write(tmp_path, "d.jsonl", text)
    with pytest.raises(InputError, match=r"d\.jsonl:1:24: not valid JSON \(Extra data\)"):
        read_items(path)


def test_an_object_spanning_two_lines_is_refused(tmp_path: Path) -> None:
    """Each line must be complete on its own, even when the lines together parse."""
    text = '{"id":"1","output":"a","x":[{}\n{}]},{"id":"2","output":"b"}\n'
    path = write(tmp_path, "d.jsonl", text)
    with pytest.raises(InputError, match=r"d\.jsonl:1:\d+: not valid JSON"):
        read_items(path)


def test_crlf_lines_and_blank_lines_are_fine(tmp_path: Path) -> None:
    """Windows line ends and blank lines are not errors; line numbers still count them."""
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'{"id": "a", "output": "x"}\r\n\r\n  {"id": "a", "output": "y"}\r\n')
    with pytest.raises(InputError, match=r"d\.jsonl:3:4: the id 'a' appears twice"):
        read_items(path)


# -- 5: lone surrogates -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "column"),
    [
        ('{"id": "a", "output": "a\\ud800"}', 25),
        ('{"id": "a", "output": "\\udc00b"}', 24),
        ('{"id": "a", "output": "x", "n\\ud83d": 1}', 30),
    ],
    ids=["high", "low", "in-a-key"],
)
def test_lone_surrogates_are_refused_at_read(tmp_path: Path, line: str, column: int) -> None:
    """A lone surrogate escape cannot be written as UTF-8: refused where it stands."""
    path = write(tmp_path, "d.jsonl", '{"id": "z", "output": "ok"}\n' + line + "\n")
    with pytest.raises(InputError, match=rf"d\.jsonl:2:{column}: .*lone surrogate"):
        read_items(path)


def test_surrogate_pairs_and_escaped_backslashes_are_fine(tmp_path: Path) -> None:
    """A paired escape is one character; an escaped backslash before `ud800` is plain text."""
    path = write(
        tmp_path,
        "d.jsonl",
        '{"id": "a", "output": "\\ud83d\\ude00"}\n{"id": "b", "output": "\\\\ud800"}\n',
    )
    assert [item.output for item in read_items(path)] == ["\U0001f600", "\\ud800"]


def test_lone_surrogate_in_a_json_list(tmp_path: Path) -> None:
    """The JSON list reader refuses them too, at the element's line."""
    path = write(
        tmp_path, "d.json", '[\n{"id": "a", "output": "x"},\n{"id": "b", "output": "\\ud800"}]'
    )
    with pytest.raises(InputError, match=r"d\.json:3:24: .*lone surrogate"):
        read_items(path)


# -- 6: deep nesting and long numbers ---------------------------------------------------------


@pytest.mark.parametrize("name", ["d.jsonl", "d.json"])
def test_deep_nesting_is_an_input_error(tmp_path: Path, name: str) -> None:
    """100k nested lists: an InputError naming the line, not a RecursionError."""
    nested = '{"id": "b", "output": "x", "deep": ' + "[" * 100_000 + "]" * 100_000 + "}"
    body = '{"id": "a", "output": "x"}\n' + nested + "\n"
    if name.endswith(".json"):
        body = "[" + body.replace("\n", ",\n", 1) + "]"
    path = write(tmp_path, name, body)
    with pytest.raises(InputError, match=rf"{name}:2:1: .*nested too deeply"):
        read_items(path)


@pytest.mark.parametrize("name", ["d.jsonl", "d.json"])
def test_a_5000_digit_id_is_an_input_error(tmp_path: Path, name: str) -> None:
    """A number past Python's digit limit: an InputError naming the line."""
    body = '{"id": "a", "output": "x"}\n{"id": ' + "7" * 5000 + ', "output": "x"}\n'
    if name.endswith(".json"):
        body = "[" + body.replace("\n", ",\n", 1) + "]"
    path = write(tmp_path, name, body)
    with pytest.raises(InputError, match=rf"{name}:2:1: a number .*cannot be read"):
        read_items(path)


def test_a_huge_integer_id_from_python_is_an_input_error() -> None:
    """The same from Python rows: the id cannot become text."""
    with pytest.raises(InputError, match="Row 1: the id is a whole number too long"):
        to_items([{"id": 10**5000, "output": "x"}])


# -- 15: CSV quotes, empty files, boolean ids --------------------------------------------------


def test_unclosed_csv_quote_is_reported_where_it_opens(tmp_path: Path) -> None:
    """The quote opened on line 2 swallows the rest of the file: reported at line 2."""
    path = write(tmp_path, "d.csv", 'id,output\n1,"open\n2,x\n3,y\n4,z\n')
    with pytest.raises(InputError, match=r"d\.csv:2: bad CSV quoting: a quoted field .* never"):
        read_items(path)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("d.jsonl", ""),
        ("d.jsonl", "\n  \n"),
        ("d.csv", ""),
        ("d.csv", "id,output\n"),
        ("d.tsv", "id\toutput\n\n"),
        ("d.json", "[]"),
    ],
    ids=["jsonl", "jsonl-blank", "csv", "csv-header-only", "tsv-header-only", "json"],
)
def test_a_file_without_rows_is_an_error_in_every_format(
    tmp_path: Path, name: str, text: str
) -> None:
    """Empty JSON lines and empty CSV behave alike: an error, never an empty report."""
    path = write(tmp_path, name, text)
    with pytest.raises(InputError, match=rf"{name}:1: the file is empty"):
        read_items(path)


def test_an_empty_parquet_file_is_an_error(tmp_path: Path) -> None:
    """Parquet too: no rows is an error."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "d.parquet"
    pq.write_table(
        pa.table({"id": pa.array([], pa.string()), "output": pa.array([], pa.string())}), path
    )
    with pytest.raises(InputError, match=r"d\.parquet: the file is empty"):
        read_items(path)


@pytest.mark.parametrize("value", [True, False])
def test_a_boolean_id_is_shown_as_json(tmp_path: Path, value: bool) -> None:
    """A boolean id is an error that shows it as JSON writes it, never Python's True."""
    path = write(tmp_path, "d.jsonl", json.dumps({"id": value, "output": "x"}) + "\n")
    with pytest.raises(InputError) as info:
        read_items(path)
    message = str(info.value)
    assert f"the id {json.dumps(value)} is a boolean" in message
    assert "True" not in message
    assert "False" not in message


# -- 1: pyarrow and untrusted Parquet ----------------------------------------------------------


def test_pyarrow_is_pinned_past_the_code_execution_fix() -> None:
    """pyarrow 14.0.0 runs code from crafted files (CVE-2023-47248): 14.0.1 at least.

    pyarrow is a required dependency; the ``parquet`` extra stays, empty, for old commands.
    """
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "pyarrow>=14.0.1" in project["project"]["dependencies"]
    assert project["project"]["optional-dependencies"]["parquet"] == []
    dev = (ROOT / "requirements-dev.txt").read_text(encoding="utf-8").splitlines()
    assert any(line.split("#")[0].strip() == "pyarrow>=14.0.1" for line in dev)


def test_an_old_pyarrow_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With pyarrow older than 14.0.1 (and no hotfix), Parquet is not read at all."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"id": ["a"], "output": ["x"]}), path)
    monkeypatch.setattr(pa, "__version__", "14.0.0")
    monkeypatch.setitem(sys.modules, "pyarrow_hotfix", None)
    with pytest.raises(ConfigError, match=r"CVE-2023-47248.*pip install 'pyarrow>=14\.0\.1'"):
        read_items(path)


class _Touch:
    """Unpickling this creates a file: proof that code ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (Path.touch, (self.marker,))


def test_a_pickled_extension_column_is_refused_unread(tmp_path: Path) -> None:
    """A column declaring arrow.py_extension_type is refused; its pickle never runs."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    marker = tmp_path / "ran"
    field = pa.field(
        "payload",
        pa.binary(),
        metadata={
            b"ARROW:extension:name": b"arrow.py_extension_type",
            b"ARROW:extension:metadata": pickle.dumps(_Touch(marker)),
        },
    )
    table = pa.table(
        [pa.array([b"x"]), pa.array(["a"]), pa.array(["y"])],
        schema=pa.schema([field, pa.field("id", pa.string()), pa.field("output", pa.string())]),
    )
    path = tmp_path / "d.parquet"
    pq.write_table(table, path)
    with pytest.raises(InputError, match=r"d\.parquet: column 'payload' declares a pickled"):
        read_items(path)
    assert not marker.exists()


# -- hostile strings through every reader ------------------------------------------------------

HOSTILE = st.one_of(
    st.text(),
    st.sampled_from(
        [
            "[/]",
            "[bold red]x[/bold red]",
            "[link=file:///etc/passwd]x[/link]",
            "\x1b[2J\x1b[31m",
            '=HYPERLINK("http://x")',
            "+1",
            "-1",
            "@SUM(A1)",
            "\tx",
            "\\input{/etc/passwd}",
            "% & $ # _ { } ~ ^ \\",
            "../../etc/passwd",
            "a/b\\c",
            "\r\n",
            "\x00\x85\u2028\u2029",
            '"},{"',
            "\ufeff",
        ]
    ),
)


def _write_rows(tmp_path: Path, fmt: str, rows: list[dict[str, str]]) -> Path:
    path = tmp_path / f"d.{fmt}"
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    elif fmt == "json":
        path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    elif fmt in ("csv", "tsv"):
        import csv

        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, list(rows[0]), delimiter="," if fmt == "csv" else "\t")
            writer.writeheader()
            writer.writerows(rows)
    else:
        pa = pytest.importorskip("pyarrow")
        pq = pytest.importorskip("pyarrow.parquet")
        pq.write_table(pa.Table.from_pylist(rows), path)
    return path


# Formats of harness logs (records readers) have their own hostile-text tests.
@pytest.mark.parametrize("fmt", [f for f in FORMATS if not REGISTRY[f].records])
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(strings=st.lists(HOSTILE, min_size=4, max_size=4))
def test_hostile_strings_through_every_reader(tmp_path: Path, fmt: str, strings: list[str]) -> None:
    """Hostile text in any field: read as it is, or an InputError naming the file and line.

    Markup, control characters, formula prefixes, LaTeX, paths and lone surrogates: never
    another kind of crash.
    """
    output, group, model, extra = strings
    row = {"id": "q1", "output": output, "group": group, "model": model, "note": extra}
    try:
        path = _write_rows(tmp_path, fmt, [row])
    except UnicodeEncodeError:  # a lone surrogate: no UTF-8 writer takes it (JSON escapes it)
        return
    try:
        (item,) = read_items(path)
    except InputError as exc:
        message = str(exc)
    else:
        message = ""
    if message:
        assert message.startswith(f"{path}:"), message
        return
    if fmt in ("jsonl", "json", "parquet"):
        assert item.output == output
        assert item.metadata["note"] == extra


# -- the command line: exit 2 and the place, for each of the above ------------------------------


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("d.jsonl", "", "d.jsonl:1: the file is empty"),
        ("d.jsonl", '{"id": "a", "output": "a\\ud800"}\n', "d.jsonl:1:25: "),
        ("d.jsonl", "[" * 100_000 + "\n", "d.jsonl:1:1: "),
        ("d.jsonl", '{"id": ' + "9" * 5000 + ', "output": "x"}\n', "d.jsonl:1:1: "),
        ("d.csv", 'id,output\n1,"open\n2,x\n', "d.csv:2: "),
    ],
    ids=["empty", "surrogate", "nested", "long-id", "unclosed-quote"],
)
def test_the_command_line_exits_2_naming_the_place(
    tmp_path: Path, name: str, text: str, where: str
) -> None:
    """Bad files end `itemscore score` with exit 2 and FILE:LINE, never a traceback."""
    import subprocess

    path = write(tmp_path, name, text)
    script = Path(sys.executable).parent / "itemscore"
    done = subprocess.run(
        [str(script), "score", name, "-m", "answered_rate"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert where in done.stderr
    assert "Traceback" not in done.stderr
    assert path.exists()
