"""Data files named by URL, through fsspec: in-memory files, file:// URLs on a pool, the CLI."""

from __future__ import annotations

import concurrent.futures
import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import itemscore
from itemscore import ConfigError, InputError
from itemscore.inputs import open_source, read_part

SCRIPT = Path(sys.executable).parent / "itemscore"

METRICS = ["exact_match", "token_f1", "answered_rate"]
ROWS: list[dict[str, object]] = [
    {
        "id": f"q{i}",
        "model": f"m{i % 2}",
        "output": None if i % 11 == 0 else f"a {i % 7}",
        "expected": ["a 1", "a 2"] if i % 5 else f"a {i % 7}",
        "group": f"g{i % 3}",
    }
    for i in range(600)
]


def _jsonl(rows: list[dict[str, object]]) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def _csv(rows: list[dict[str, object]]) -> bytes:
    lines = ["id,model,output,expected"]
    lines += [f"{r['id']},{r['model']},{r['output'] or ''},{r['group']}" for r in rows]
    return ("\n".join(lines) + "\n").encode()


def _parquet(rows: list[dict[str, object]], path: Path) -> bytes:
    table = pa.Table.from_pylist([{**r, "expected": str(r["expected"])} for r in rows])
    pq.write_table(table, path, row_group_size=100)  # six row groups: parts of several
    return path.read_bytes()


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[str]:
    """A folder of fsspec's in-memory file system, of this test's own, removed after it."""
    root = f"memory://itemscore-tests/{tmp_path.name}"
    yield root
    fs = fsspec.filesystem("memory")
    if fs.exists(root):
        fs.rm(root, recursive=True)


def _put(url: str, data: bytes) -> str:
    with fsspec.open(url, "wb") as handle:
        handle.write(data)
    return url


def _same(a: itemscore.RunResult, b: itemscore.RunResult) -> None:
    assert a.measurements == b.measurements
    assert list(a.items) == list(b.items)


@pytest.mark.parametrize("suffix", ["jsonl", "csv", "parquet"])
def test_a_memory_url_scores_as_the_local_file(tmp_path: Path, memory: str, suffix: str) -> None:
    """JSON lines, CSV and Parquet at a URL: the local file's measurements and items."""
    local = tmp_path / f"d.{suffix}"
    if suffix == "parquet":
        data = _parquet(ROWS, local)
    else:
        data = _jsonl(ROWS) if suffix == "jsonl" else _csv(ROWS)
        local.write_bytes(data)
    url = _put(f"{memory}/d.{suffix}", data)
    _same(itemscore.score(local, METRICS), itemscore.score(url, METRICS))


@pytest.mark.parametrize("suffix", ["jsonl", "parquet"])
def test_parts_of_a_url_read_as_the_local_parts(tmp_path: Path, memory: str, suffix: str) -> None:
    """Planned at the URL: the same byte ranges, row groups, hashes and batches as locally."""
    local = tmp_path / f"d.{suffix}"
    if suffix == "parquet":
        data = _parquet(ROWS, local)
    else:
        data = _jsonl(ROWS)
        local.write_bytes(data)
    url = _put(f"{memory}/d.{suffix}", data)
    with open_source(local) as here, open_source(url) as there:
        mine, theirs = here.parts(3), there.parts(3)
        assert len(theirs) == 3
        assert {piece.path for part in theirs for piece in part.pieces} == {url}
        for a, b in zip(mine, theirs, strict=True):
            here_piece, there_piece = a.pieces[0], b.pieces[0]
            fields = ("start", "stop", "row_groups", "first_line", "first_row", "sha256")
            assert [getattr(here_piece, f) for f in fields] == [
                getattr(there_piece, f) for f in fields
            ]
            assert [x.to_pylist() for x in read_part(a).batches()] == [
                x.to_pylist() for x in read_part(b).batches()
            ]
        assert here.sha256 == there.sha256


def test_a_url_that_changed_since_it_was_planned_is_an_error(memory: str) -> None:
    """The hash of the bytes a part reads is checked against the plan, as for a local file."""
    url = _put(f"{memory}/d.jsonl", _jsonl(ROWS))
    with open_source(url) as source:
        parts = source.parts(2)
        changed = _jsonl(ROWS).replace(b'"a 3"', b'"b 3"')
        _put(url, changed)
        with pytest.raises(InputError, match="changed while it was read"):
            list(read_part(parts[0]).batches())


def test_a_line_at_fault_is_named_at_its_url(memory: str) -> None:
    """Line numbers in messages count from the file's start in every part."""
    lines = _jsonl(ROWS).splitlines(keepends=True)
    lines[450] = b'{"output": "broken",\n'
    url = _put(f"{memory}/d.jsonl", b"".join(lines))
    with open_source(url) as source:
        parts = source.parts(3)
    with pytest.raises(InputError) as caught:
        [list(read_part(part).batches()) for part in parts]
    assert f"{url}:451" in str(caught.value)


def test_a_glob_and_a_folder_of_memory_partitions(memory: str) -> None:
    """Partitions at URLs: a glob and a folder give every file's rows, in sorted order.

    Hidden names (``_SUCCESS``, ``.crc``) and other extensions are left out, as locally, and
    a folder is read recursively.
    """
    _put(f"{memory}/runs/part-1.jsonl", _jsonl(ROWS[300:]))
    _put(f"{memory}/runs/part-0.jsonl", _jsonl(ROWS[:300]))
    _put(f"{memory}/runs/_SUCCESS", b"")
    _put(f"{memory}/runs/.part-0.jsonl.crc", b"\x00\x01")
    _put(f"{memory}/runs/notes.txt", b"not data")
    _put(f"{memory}/deep/a/part-0.jsonl", _jsonl(ROWS[:300]))
    _put(f"{memory}/deep/b/part-1.jsonl", _jsonl(ROWS[300:]))
    whole = itemscore.score(ROWS, METRICS)
    by_glob = itemscore.score(f"{memory}/runs/*.jsonl", METRICS)
    by_folder = itemscore.score(f"{memory}/runs", METRICS)
    deep = itemscore.score(f"{memory}/deep", METRICS)
    for result in (by_glob, by_folder, deep):
        assert result.measurements == whole.measurements
        assert [item.id for item in result.items] == [row["id"] for row in ROWS]
    with open_source(f"{memory}/runs") as source:
        folder = memory.removeprefix("memory://")
        assert [name for _, name in source.files] == [
            f"memory:///{folder}/runs/part-{i}.jsonl" for i in (0, 1)
        ]


def test_a_glob_of_urls_matching_nothing_says_so(memory: str) -> None:
    _put(f"{memory}/runs/_SUCCESS", b"")
    with pytest.raises(InputError, match="holds no data file"):
        open_source(f"{memory}/runs/*.jsonl")


def test_a_missing_url_is_a_missing_file(memory: str) -> None:
    """The error a missing local file gives: FileNotFoundError naming the URL as written."""
    url = f"{memory}/nothing-here.jsonl"
    with pytest.raises(FileNotFoundError) as caught:
        itemscore.score(url, METRICS)
    assert caught.value.filename == url


def test_without_fsspec_a_url_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "fsspec", None)  # import fsspec: ImportError
    with pytest.raises(ConfigError) as caught:
        itemscore.score("s3://bucket/runs/d.jsonl", METRICS)
    message = str(caught.value)
    assert "s3://bucket/runs/d.jsonl" in message
    assert "pip install 'fsspec>=2023.1' s3fs" in message
    local = tmp_path / "d.jsonl"  # a local file needs no fsspec
    local.write_bytes(_jsonl(ROWS[:20]))
    assert len(itemscore.score(local, METRICS).items) == 20


def test_a_missing_backend_names_its_package(monkeypatch: pytest.MonkeyPatch) -> None:
    """fsspec's ImportError for a protocol whose backend is absent becomes a sentence."""

    def no_backend(url: str) -> None:
        raise ImportError("Install s3fs to access S3")

    monkeypatch.setattr(fsspec.core, "url_to_fs", no_backend)
    with pytest.raises(ConfigError) as caught:
        open_source("s3://bucket/d.jsonl")
    message = str(caught.value)
    assert "s3://" in message
    assert "pip install s3fs" in message
    assert "Install s3fs to access S3" in message


class NoCredentialsError(Exception):
    """What botocore raises when it finds no credentials (its message, not its class)."""


@pytest.fixture
def no_credentials(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """``s3://`` served by a file system that fails every call as s3fs does without keys."""
    from fsspec.spec import AbstractFileSystem

    calls: list[str] = []

    class Locked(AbstractFileSystem):  # type: ignore[misc]
        protocol = "s3"

        def _fail(self, name: str) -> None:
            calls.append(name)
            raise NoCredentialsError("Unable to locate credentials")

        def exists(self, path: str, **kwargs: object) -> bool:
            self._fail("exists")
            return False

        def isdir(self, path: str) -> bool:
            self._fail("isdir")
            return False

        def size(self, path: str) -> int:
            self._fail("size")
            return 0

        def _open(self, path: str, mode: str = "rb", **kwargs: object) -> object:
            self._fail("open")
            return None

    registered = importlib.import_module("fsspec.registry")._registry  # undone after the test
    monkeypatch.setitem(registered, "s3", Locked)
    yield calls
    Locked.clear_instance_cache()


def test_a_backend_without_credentials_names_the_url_and_where_keys_come_from(
    no_credentials: list[str], tmp_path: Path
) -> None:
    """The backend's own error (no URL, no way out) becomes a sentence, exit 2 on the CLI."""
    from click.testing import CliRunner

    from itemscore.cli import cli

    url = "s3://bucket/runs/d.jsonl"
    with pytest.raises(ConfigError) as caught:
        itemscore.score(url, METRICS)
    message = str(caught.value)
    assert message.startswith(f"{url} could not be read through fsspec's s3:// backend")
    assert "NoCredentialsError: Unable to locate credentials." in message
    assert "AWS_PROFILE" in message
    assert "~/.aws/credentials" in message
    assert isinstance(caught.value.__cause__, NoCredentialsError)
    with pytest.raises(ConfigError, match="could not be read through fsspec"):
        open_source("s3://bucket/runs/*.jsonl")  # a glob is listed: the same sentence
    done = CliRunner().invoke(cli, ["score", url, "-m", "exact_match"])
    assert done.exit_code == 2, done.output
    assert f"{url} could not be read" in done.output
    assert {"exists", "isdir"} <= set(no_credentials)


def test_an_unknown_protocol_is_named() -> None:
    with pytest.raises(ConfigError, match=r"no file system for the protocol nosuchproto://"):
        open_source("nosuchproto://bucket/d.jsonl")


def test_a_harness_log_at_a_url_is_refused_with_the_way_out(memory: str) -> None:
    """lm-eval's samples files (found by content) are read only from local files."""
    log = Path(__file__).parent / "data" / "harness" / "lm-eval-cases" / "results" / "scripted-a"
    sample = sorted(log.glob("samples_strict_gen_*.jsonl"))[0]
    url = _put(f"{memory}/samples_strict_gen.jsonl", sample.read_bytes())
    with pytest.raises(ConfigError, match=r"harness log \(lm-eval\).*download the log first"):
        open_source(url)


# -- file:// URLs read by a real process pool ---------------------------------------------------


def _log_opens(log: str) -> None:
    """In each worker: note every file fsspec opens, with the worker's process id."""
    from fsspec.implementations.local import LocalFileSystem

    original = LocalFileSystem._open

    def logged(self: LocalFileSystem, path: str, *args: object, **kwargs: object) -> object:
        with open(log, "a", encoding="utf-8") as out:
            out.write(f"{os.getpid()} {path}\n")
        return original(self, path, *args, **kwargs)

    LocalFileSystem._open = logged  # type: ignore[method-assign]


def test_workers_read_their_own_parts_of_a_file_url(tmp_path: Path) -> None:
    """Two worker processes open the file:// URL themselves; the results are the serial ones.

    The plan has several parts of the one file, each naming the URL; every worker of the pool
    logs its own opening of that file (the driver's planning read is not logged: the log is
    set up in the workers only).
    """
    local = tmp_path / "d.jsonl"
    local.write_bytes(_jsonl(ROWS))
    url = local.as_uri()
    with open_source(url) as source:
        pieces = [piece for part in source.parts(6) for piece in part.pieces]
    assert len(pieces) == 6
    assert {piece.path for piece in pieces} == {url}
    log = tmp_path / "opens.log"
    serial = itemscore.score(local, METRICS)
    with concurrent.futures.ProcessPoolExecutor(
        2, initializer=_log_opens, initargs=(str(log),)
    ) as pool:
        pooled = itemscore.score(url, METRICS, executor=pool)
    _same(serial, pooled)
    opens = [line.split(" ", 1) for line in log.read_text(encoding="utf-8").splitlines()]
    assert opens, "no worker opened the URL"
    assert {path for _, path in opens} == {str(local)}
    assert str(os.getpid()) not in {pid for pid, _ in opens}
    assert len(opens) >= 6  # each part opened by the worker that read it


def test_a_glob_of_file_urls_on_the_process_executor(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "part-0.jsonl").write_bytes(_jsonl(ROWS[:250]))
    (tmp_path / "runs" / "part-1.jsonl").write_bytes(_jsonl(ROWS[250:]))
    serial = itemscore.score(ROWS, METRICS)
    pooled = itemscore.score(
        (tmp_path / "runs").as_uri() + "/*.jsonl", METRICS, executor="process", workers=2
    )
    assert pooled.measurements == serial.measurements
    assert [item.id for item in pooled.items] == [row["id"] for row in ROWS]


# -- the command line ---------------------------------------------------------------------------


def run_cli(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The installed console script, without the caller's itemscore settings."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ITEMSCORE_")}
    command = [str(SCRIPT), *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=environ,
                          timeout=120, check=False)  # fmt: skip


def test_the_command_line_scores_a_file_url(tmp_path: Path) -> None:
    """`itemscore score file:///.../d.jsonl` gives the local file's results.json measurements."""
    local = tmp_path / "d.jsonl"
    local.write_bytes(_jsonl(ROWS))
    url = local.as_uri()
    assert url.startswith("file:///")
    by_url = run_cli("score", url, "--metric", "exact_match", "-q", "--out", "u", cwd=tmp_path)
    assert by_url.returncode == 0, by_url.stderr
    here = run_cli("score", local, "--metric", "exact_match", "-q", "--out", "l", cwd=tmp_path)
    assert here.returncode == 0, here.stderr
    results = [json.loads((tmp_path / d / "results.json").read_text()) for d in ("u", "l")]
    assert results[0]["measurements"] == results[1]["measurements"]
    missing = run_cli("score", url + ".gone", "--metric", "exact_match", cwd=tmp_path)
    assert missing.returncode == 2
    assert f"{url}.gone: no such file or folder" in missing.stderr
    replaced = tmp_path / "summary.csv"  # --out may not replace the file a URL names
    replaced.write_bytes(_csv(ROWS[:5]))
    refused = run_cli(
        "score", replaced.as_uri(), "-m", "exact_match", "--out", tmp_path, cwd=tmp_path
    )
    assert refused.returncode == 2
    assert "would replace it" in refused.stderr


def test_a_configuration_names_its_data_by_url(tmp_path: Path) -> None:
    """`data: file:///...` in a YAML configuration is read as the URL, not relative to it."""
    local = tmp_path / "d.jsonl"
    local.write_bytes(_jsonl(ROWS[:40]))
    (tmp_path / "conf").mkdir()
    config = tmp_path / "conf" / "run.yaml"
    config.write_text(
        f"data: {local.as_uri()}\nmetrics: [exact_match]\nout: ../o\n", encoding="utf-8"
    )
    done = run_cli("run", config, "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    assert [m["n"] for m in results["measurements"]] == [40]
