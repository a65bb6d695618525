"""Files and URLs the reader cannot trust to hold still, to end, or to name a usable backend.

A file rewritten while its parts are planned and read is refused, naming it, rather than read
as parts of two versions (issue 2); a stream given as Parquet is copied within
``max_json_bytes`` and its copy removed whatever ends the run (issue 8); a URL whose fsspec
backend cannot be opened is an error naming the URL and the way out (issue 14).
"""

from __future__ import annotations

import io
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from itemscore import ConfigError, InputError
from itemscore.cli import cli
from itemscore.inputs import Part, Source, open_source, read_part

N = 400


def _one_line(message: str) -> str:
    return " ".join(message.split())  # messages may be wrapped to the terminal


# -- issue 2: a file that changes during a run ------------------------------------------------


def _qa(path: Path, *, good: bool, swapped: bool = False) -> Path:
    """Four row groups of questions: every output right (``good``) or every one wrong.

    ``swapped`` writes the same column chunks, byte for byte, under swapped names: only the
    footer differs.
    """
    ids = [f"q{i:03d}" for i in range(N)]
    outputs = [f"a{i:03d}" for i in range(N)]
    expected = outputs if good else [f"b{i:03d}" for i in range(N)]
    names = ["id", "expected", "output"] if swapped else ["id", "output", "expected"]
    table = pa.table(dict(zip(names, [ids, outputs, expected])))
    pq.write_table(table, path, row_group_size=N // 4, compression="none")
    return path


def _rewrite(path: Path, new: Path, *, same_time: bool) -> None:
    """Write ``new`` over ``path`` in place, as ``cp`` does (same inode, truncated first).

    ``same_time`` keeps the old modification time, as a rewrite within one tick of the file
    system's clock does: then only the bytes (or the footer) tell the versions apart.
    """
    before = os.stat(path)
    shutil.copyfile(new, path)
    if same_time:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    else:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 2_000_000_000))


def _read(part: Part) -> list[dict[str, object]]:
    return [row for batch in read_part(part).batches() for row in batch.to_pylist()]


def _plan_read_rewrite_read(path: Path, new: Path, *, same_time: bool) -> list[str]:
    """Plan parts, read the first, rewrite the file, go on planning and reading: the outputs.

    The engine reads each part as soon as it is planned, so a worker may hold the first part
    of the old file while the planner goes on into the new one.
    """
    seen: list[str] = []
    with open_source(path) as source:
        parts = source.iter_parts(4)
        seen += [str(row["expected"]) for row in _read(next(parts))]
        _rewrite(path, new, same_time=same_time)
        for part in parts:
            seen += [str(row["expected"]) for row in _read(part)]
    return seen


@pytest.mark.parametrize("same_time", [False, True], ids=["later-mtime", "same-mtime"])
def test_a_parquet_file_rewritten_while_its_parts_are_planned_is_refused(
    tmp_path: Path, same_time: bool
) -> None:
    """Half old, half new is never read: the planner or the next part's reader says so."""
    path = _qa(tmp_path / "d.parquet", good=True)
    new = _qa(tmp_path / "new.parquet", good=False)
    assert path.stat().st_size == new.stat().st_size  # only the time can tell, or the bytes
    with pytest.raises(InputError) as caught:
        _plan_read_rewrite_read(path, new, same_time=same_time)
    message = str(caught.value)
    assert message.startswith(f"{path}: the file changed while")
    assert "run again" in message
    assert caught.value.path == str(path)


def test_a_parquet_file_cut_short_while_its_parts_are_planned_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file that ends before the row groups its footer named: the planner stops and says so.

    The file is cut to two bytes just after its footer was read, so the planner meets its
    end before the first row group (a read that gives nothing must end the planning).
    """
    import itemscore.inputs.parquet as parquet

    path = _qa(tmp_path / "d.parquet", good=True)
    opened = parquet._open

    def open_then_cut(*args: object) -> object:
        result = opened(*args)  # type: ignore[arg-type]
        with open(path, "r+b") as handle:
            handle.truncate(2)
        return result

    monkeypatch.setattr(parquet, "_open", open_then_cut)
    with open_source(path) as source, pytest.raises(InputError, match="the file changed while"):
        list(source.iter_parts(4))


def test_a_json_lines_file_rewritten_while_its_parts_are_planned_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same pin holds for JSON lines: its size and modification time as planned.

    Lines of 64 bytes in blocks of 1,024 put each part's end at the end of a block, so
    the planner reads the rest of the file only after the rewrite: its later parts hash the
    new bytes as planned, and only the pin tells the versions apart.
    """
    import itemscore.inputs.jsonl as jsonl

    monkeypatch.setattr(jsonl, "_BLOCK", 1024)

    def lines(letter: str) -> str:
        rows = [{"id": f"q{i:03d}", "output": f"a{i:03d}", "expected": f"{letter}{i:03d}"}
                for i in range(255)]  # fmt: skip
        return "".join(json.dumps(row).ljust(63) + "\n" for row in rows)

    path, new = tmp_path / "d.jsonl", tmp_path / "new.jsonl"
    path.write_text(lines("a"), encoding="utf-8")
    new.write_text(lines("b"), encoding="utf-8")
    with pytest.raises(InputError, match="its size or modification time is not what it was"):
        _plan_read_rewrite_read(path, new, same_time=False)


def test_a_parquet_part_read_under_another_footer_is_refused(tmp_path: Path) -> None:
    """Plan, change only the footer (same size, same time, same row groups), read: refused.

    The column chunks are the planned bytes, so their hashes agree; the footer, which says
    what they are, does not.
    """
    path = _qa(tmp_path / "d.parquet", good=False)
    new = _qa(tmp_path / "new.parquet", good=False, swapped=True)
    old_bytes, new_bytes = path.read_bytes(), new.read_bytes()
    with open_source(path) as source:
        parts = source.parts(4)
    last = parts[-1].pieces[0]
    assert last.stop is not None
    assert old_bytes[: last.stop] == new_bytes[: last.stop]  # the planned bytes, unchanged
    _rewrite(path, new, same_time=True)
    for part in parts:
        with pytest.raises(InputError, match="its footer is not the one its parts were planned"):
            _read(part)


def test_a_footer_past_the_first_read_is_pinned_whole(tmp_path: Path) -> None:
    """A schema of hundreds of long names (a footer past 64 KiB) is pinned to its first byte."""
    width = 600
    names = [f"c{i:04d}_" + "x" * 90 for i in range(width)]
    columns = {"id": [f"q{i}" for i in range(8)], "output": ["a"] * 8, "expected": ["a"] * 8}
    columns.update({name: [i] * 8 for i, name in enumerate(names)})
    path = tmp_path / "wide.parquet"
    pq.write_table(pa.table(columns), path, store_schema=False)
    data = path.read_bytes()
    footer = int.from_bytes(data[-8:-4], "little") + 8
    assert footer > 96 << 10
    first = data.index(names[0].encode(), len(data) - footer)
    assert len(data) - first > 64 << 10  # the first name is beyond pyarrow's first read
    with open_source(path) as source:
        (part,) = source.parts(1)
    assert len(_read(part)) == 8
    changed = tmp_path / "changed.parquet"
    changed.write_bytes(data[:first] + b"d" + data[first + 1 :])  # another name, same size
    _rewrite(path, changed, same_time=True)
    with pytest.raises(InputError, match="its footer is not the one"):
        _read(part)


def test_the_command_line_refuses_a_parquet_file_rewritten_during_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Exit 2 naming the file, instead of a score of two files and the second one's hash.

    The file is rewritten right after its first part is planned: in a run that is when a
    worker may already be reading it. Parts are made small so that a serial run has several.
    """
    import itemscore.engine._files as engine_files

    path = _qa(tmp_path / "d.parquet", good=True)
    new = _qa(tmp_path / "new.parquet", good=False)  # scores 0.0 where the old one scores 1.0
    planned = Source.iter_parts

    def rewritten_after_the_first(self: Source, n: int) -> Iterator[Part]:
        for index, part in enumerate(planned(self, n)):
            yield part
            if index == 0:
                _rewrite(path, new, same_time=True)

    monkeypatch.setattr(engine_files, "PART_BYTES", 1024)
    monkeypatch.setattr(Source, "iter_parts", rewritten_after_the_first)
    done = CliRunner().invoke(
        cli, ["score", str(path), "-m", "exact_match", "--map", "id=id", "--no-user-config"]
    )
    assert done.exit_code == 2, done.output
    output = _one_line(done.output)
    assert f"{path}: the file changed while" in output


# -- issue 8: a stream given as Parquet -------------------------------------------------------

SCRIPT = Path(sys.executable).parent / "itemscore"
posix = pytest.mark.skipif(
    not hasattr(os, "mkfifo"), reason="named pipes, /dev/zero and file size limits are POSIX"
)


def _zeros(fifo: Path, size: int, stop: threading.Event | None = None) -> threading.Thread:
    """A writer of ``size`` zeros into ``fifo``; with ``stop``, it then holds the pipe open.

    Far more than the bound the reader is given, and still a few MiB: a reader that kept
    no bound copies it all and ends, instead of filling the disk.
    """

    def write() -> None:
        block = bytes(64 << 10)
        try:
            with open(fifo, "wb") as handle:
                for _ in range(size // len(block)):
                    handle.write(block)
                if stop is not None:
                    stop.wait(60)  # the pipe stays open: the reader waits for more
        except BrokenPipeError:  # the reader stopped at its bound: what the test wants
            pass

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def _copies(folder: Path) -> list[Path]:
    return sorted(folder.glob("itemscore-input-*"))


@posix
def test_a_stream_given_as_parquet_is_copied_within_max_json_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An endless pipe named ``.parquet`` stops at the bound, naming it; its copy is gone."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    fifo = tmp_path / "z.parquet"
    os.mkfifo(fifo)
    writer = _zeros(fifo, 4 << 20)
    with pytest.raises(InputError) as caught:
        open_source(fifo, max_json_bytes=100_000)
    writer.join(timeout=30)
    assert not writer.is_alive()
    message = _one_line(str(caught.value))
    assert message.startswith(f"{fifo}: the stream holds more than 100,000 bytes (the bound")
    assert "max_json_bytes" in message
    assert "--read-option max_json_bytes=400000" in message
    assert _copies(temp) == []


@posix
def test_dev_zero_as_parquet_on_the_command_line_is_exit_2(tmp_path: Path) -> None:
    """``ln -s /dev/zero z.parquet; itemscore score z.parquet``: exit 2, nothing left behind."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    link = tmp_path / "z.parquet"
    link.symlink_to("/dev/zero")
    done = _run_cli(
        "score", link, "-m", "exact_match", "--read-option", "max_json_bytes=2000000",
        cwd=tmp_path, temp=temp,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    stderr = _one_line(done.stderr)
    assert f"{link}: the stream holds more than 2,000,000 bytes (the bound max_json_bytes)" in (
        stderr
    )
    assert "--read-option max_json_bytes=8000000" in stderr
    assert _copies(temp) == []


def test_an_interrupted_copy_is_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C in the middle of a copy: the interrupt goes on, the copy does not stay."""
    import itemscore.inputs._files as files

    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))

    class Interrupted(io.RawIOBase):
        """Three blocks of a stream, then Ctrl-C."""

        def __init__(self) -> None:
            super().__init__()
            self.blocks = 0

        def readable(self) -> bool:
            return True

        def read(self, size: int = -1) -> bytes:
            self.blocks += 1
            if self.blocks > 3:
                assert len(_copies(temp)) == 1  # the copy exists, half written
                raise KeyboardInterrupt
            return b"x" * size

    def opened(path: object, mode: str = "r") -> Interrupted:
        return Interrupted()

    monkeypatch.setattr(files, "open", opened, raising=False)
    with pytest.raises(KeyboardInterrupt):
        files.copy_stream(
            "s.parquet", "s.parquet", "document", max_line_bytes=1, max_json_bytes=1 << 40
        )
    assert _copies(temp) == []


@posix
def test_sigterm_while_a_parquet_stream_is_copied_leaves_no_copy(tmp_path: Path) -> None:
    """``timeout``/``kill`` stop the command in the middle of a copy: the copy is removed."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    fifo = tmp_path / "z.parquet"
    os.mkfifo(fifo)
    stop = threading.Event()
    writer = _zeros(fifo, 3 << 20, stop)
    process = subprocess.Popen(
        [str(SCRIPT), "score", str(fifo), "-m", "exact_match", "--no-user-config"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env=_environment(temp), preexec_fn=_small_files,
    )  # fmt: skip
    try:
        for _ in range(3000):  # until the copy holds bytes (the writer then waits)
            copied = [p for c in _copies(temp) for p in c.iterdir() if p.stat().st_size]
            if copied or process.poll() is not None:
                break
            threading.Event().wait(0.01)
        assert copied, "the copy never began"
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=60)
    finally:
        stop.set()
        if process.poll() is None:
            process.kill()
            process.communicate()
    writer.join(timeout=30)
    assert process.returncode != 0
    assert _copies(temp) == []


def _environment(temp: Path) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ITEMSCORE_")}
    environ["TMPDIR"] = str(temp)
    return environ


def _small_files() -> None:
    """In the child: no file past 64 MiB (an unbounded copy of /dev/zero ends, not the disk)."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 20, 64 << 20))


def _run_cli(*args: str | Path, cwd: Path, temp: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *map(str, args), "--no-user-config"],
        capture_output=True, text=True, env=_environment(temp), cwd=cwd, timeout=120,
        preexec_fn=_small_files, check=False,
    )  # fmt: skip


# -- issue 14: a URL whose backend cannot be opened -------------------------------------------


@pytest.mark.parametrize(
    ("url", "said"),
    [
        pytest.param(
            "ftp://127.0.0.1:1/x.jsonl",  # port 1 of this machine: refused, no network needed
            "could not be read through fsspec's ftp:// backend: ConnectionRefusedError",
            id="refused",
        ),
        pytest.param(
            "reference://x",  # its file system needs a reference set no URL can name
            "fsspec's reference:// file system cannot be opened from a URL alone (TypeError:",
            id="needs-options",
        ),
    ],
)
def test_a_url_without_a_usable_backend_is_exit_2_naming_it(
    tmp_path: Path, url: str, said: str
) -> None:
    """The backend's bare error becomes a sentence naming the URL and what to do: exit 2."""
    done = _run_cli("score", url, "-m", "exact_match", cwd=tmp_path, temp=tmp_path)
    assert done.returncode == 2, done.stderr
    stderr = _one_line(done.stderr)
    assert stderr.startswith(f"Error: {url}")
    assert said in stderr
    assert "local" in stderr  # the way out: a local copy, or another URL
    assert "Traceback" not in stderr


def test_a_backend_that_cannot_be_made_is_a_config_error_with_its_cause() -> None:
    """From Python too: a ConfigError (a ValueError), the backend's error as its cause."""
    with pytest.raises(ConfigError) as caught:
        open_source("ftp://127.0.0.1:1/x.jsonl")
    assert isinstance(caught.value.__cause__, ConnectionRefusedError)
    assert "Check the URL (its host, port and path)" in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        open_source("reference://x")
    assert isinstance(caught.value.__cause__, TypeError)
