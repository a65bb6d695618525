"""RunResult: JSON round trips, schema checks, atomic writes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import itemscore
from itemscore import ItemResult, ResultsFormatError, RunResult
from itemscore._result import atomic_write_text


@pytest.fixture
def result() -> RunResult:
    items = [
        ItemResult(
            id=str(i),
            output=None if i == 3 else f"out {i}",
            expected=["a", "b"] if i % 2 else None,
            input="q",
            group="g1" if i < 3 else "g2",
            model="m1" if i % 3 else "m2",
            metadata={"latency": 0.5 * i, "tags": ["x"]},
        )
        for i in range(8)
    ]
    return itemscore.score(items, ["answered_rate", {"name": "answered_rate", "label": "ar"}])


def test_json_round_trip_is_lossless(result: RunResult, tmp_path: Path) -> None:
    """save_json then load_json gives back an equal result."""
    path = result.save_json(tmp_path / "out" / "results.json")
    loaded = RunResult.load_json(path)
    assert loaded == result
    assert loaded.items[3].scores["ar"].status == "fail"
    assert loaded.models == result.models == ["m2", "m1"]
    assert loaded.labels == ["answered_rate", "ar"]
    assert loaded.suite_id == "default"


def test_saved_document_is_versioned(result: RunResult, tmp_path: Path) -> None:
    """The file names its schema and version."""
    data = json.loads(result.save_json(tmp_path / "r.json").read_text())
    assert (data["schema"], data["version"]) == ("itemscore.results", 2)
    assert data["config"]["metrics"][1] == {
        "name": "answered_rate",
        "label": "ar",
        "options": {},
        "distribution": "itemscore",
        "version": itemscore.__version__,
    }


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", r"r\.json:1:2: not valid JSON"),
        ('{"schema": "other"}', "not an itemscore results file"),
        ('{"schema": "itemscore.results", "version": 99}', "version 99"),
        ('{"schema": "itemscore.results", "version": 1}', "damaged: KeyError"),
    ],
    ids=["bad-json", "other-schema", "newer-version", "missing-keys"],
)
def test_bad_files_are_reported(tmp_path: Path, content: str, message: str) -> None:
    """Unreadable results files raise ResultsFormatError naming the file."""
    path = tmp_path / "r.json"
    path.write_text(content)
    with pytest.raises(ResultsFormatError, match=message):
        RunResult.load_json(path)


def test_non_utf8_file_is_reported(tmp_path: Path) -> None:
    """A binary file is refused with a message, not a UnicodeDecodeError."""
    path = tmp_path / "r.json"
    path.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ResultsFormatError, match="not UTF-8"):
        RunResult.load_json(path)


def test_atomic_write_leaves_nothing_on_failure(tmp_path: Path) -> None:
    """A failed write leaves neither the target nor a temporary file."""
    target = tmp_path / "a.txt"
    with pytest.raises(TypeError):
        atomic_write_text(target, 42)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []
    atomic_write_text(target, "ok")
    assert target.read_text() == "ok"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


@pytest.mark.skipif(sys.platform == "win32", reason="no fcntl locks: stale temporaries are kept")
def test_save_removes_temporaries_a_killed_writer_left(result: RunResult, tmp_path: Path) -> None:
    """A killed save leaves ``.results.json.*.tmp``; the next save of that file removes it."""
    stale = tmp_path / ".results.json.k3j9x2.tmp"
    stale.write_text('{"half": ', encoding="utf-8")
    other = tmp_path / ".other.json.k3j9x2.tmp"  # another file's pattern: not ours to remove
    other.write_text("{", encoding="utf-8")
    result.save_json(tmp_path / "results.json")
    assert not stale.exists()
    assert other.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.json.k3j9x2.tmp", "results.json"]


@pytest.mark.skipif(sys.platform == "win32", reason="no fcntl locks")
def test_save_keeps_a_temporary_a_live_writer_holds(result: RunResult, tmp_path: Path) -> None:
    """Another writer still writing (holding its temporary's lock) keeps its file."""
    import fcntl

    live = tmp_path / ".results.json.live01.tmp"
    with open(live, "w", encoding="utf-8") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        result.save_json(tmp_path / "results.json")
        assert live.exists()
    result.save_json(tmp_path / "results.json")  # its writer is gone now
    assert not live.exists()
    assert RunResult.load_json(tmp_path / "results.json") == result
