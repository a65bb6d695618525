"""``itemscore verify --data FILE`` hashes a regular file; a stream or a device is refused.

A recorded SHA-256 is checked by hashing FILE to its end: ``/dev/zero`` or an endless pipe has
none, and ``verify`` used to read it forever. Each command runs in a subprocess with a timeout,
so a regression fails instead of hanging the suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).parent / "itemscore"
GOLDEN = Path(__file__).parent / "golden"
DATA = GOLDEN / "small.jsonl"
TIMEOUT = 60
#: An endless writer: a pipe that never ends.
ENDLESS = "import sys\nwhile True:\n    sys.stdout.buffer.write(b'{}\\n' * 8192)\n"


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("ITEMSCORE_")}


def run_cli(*args: str | Path, stdin: int | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        env=_env(),
        stdin=stdin if stdin is not None else subprocess.DEVNULL,
        timeout=TIMEOUT,
        check=False,
    )


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("set") / "o"
    proc = run_cli("score", DATA, "-m", "exact_match", "--out", out)
    assert proc.returncode == 0, proc.stderr
    return out / "results.json"


def _refused(proc: subprocess.CompletedProcess[str], name: str) -> None:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert f"--data {name}: not a regular file" in proc.stderr
    assert "save it to a file first and give that file to --data" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_regular_file_and_a_link_to_it_are_checked(results: Path, tmp_path: Path) -> None:
    """The scored file, or a link to it, agrees; another regular file is a difference."""
    link = tmp_path / "link.jsonl"
    link.symlink_to(DATA)
    for data in (DATA, link):
        proc = run_cli("verify", results, "--data", data)
        assert proc.returncode == 0, proc.stderr
        assert "the data file's hash agree" in proc.stdout
    other = tmp_path / "other.jsonl"
    other.write_bytes(DATA.read_bytes() + b"\n")
    proc = run_cli("verify", results, "--data", other)
    assert proc.returncode == 1
    assert f"{other} is not the file the results were computed from" in proc.stdout


def test_dev_zero_is_refused(results: Path) -> None:
    """/dev/zero never ends: exit 2 saying it is not a regular file, at once."""
    _refused(run_cli("verify", results, "--data", "/dev/zero"), "/dev/zero")


def test_a_named_pipe_without_a_writer_is_refused(results: Path, tmp_path: Path) -> None:
    """A FIFO nobody writes to: refused, not waited on at its opening."""
    fifo = tmp_path / "data.jsonl"
    os.mkfifo(fifo)
    _refused(run_cli("verify", results, "--data", fifo), str(fifo))


@pytest.fixture
def endless() -> Iterator[subprocess.Popen[bytes]]:
    writer = subprocess.Popen(
        [sys.executable, "-c", ENDLESS], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        yield writer
    finally:
        writer.kill()
        writer.wait(timeout=TIMEOUT)
        assert writer.stdout is not None
        writer.stdout.close()


def test_an_endless_pipe_is_refused(results: Path, endless: subprocess.Popen[bytes]) -> None:
    """--data /dev/stdin fed by a writer that never stops: refused, never read to its end."""
    assert endless.stdout is not None
    proc = run_cli("verify", results, "--data", "/dev/stdin", stdin=endless.stdout.fileno())
    _refused(proc, "/dev/stdin")
