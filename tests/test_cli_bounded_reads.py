"""Pipes and endless inputs on the command line (issue 16, items 1-3): exit 2, in bounded time.

`itemscore score` reads a named pipe once, into a private copy that keeps the bounds of
docs/security.md (``max_line_bytes`` for JSON lines, ``max_json_bytes`` for a whole document);
past a bound it exits 2 naming the bound and the option that raises it. Each command runs in a
subprocess with a timeout (a hang fails the test instead of stalling it) and a bounded address
space (an input held whole fails it too).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import threading
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).parent / "itemscore"
MEMORY = 1 << 30  # the address space of each command: far below what an endless read takes
pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def run_cli(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ITEMSCORE_")}
    return subprocess.run(
        [str(SCRIPT), *map(str, args), "--no-user-config"],
        capture_output=True,
        text=True,
        env=environ,
        cwd=cwd,
        timeout=120,
        preexec_fn=_limit_memory,
        check=False,
    )


def _feed(fifo: Path, data: bytes) -> threading.Thread:
    """A writer that opens the pipe, writes ``data`` until the reader stops, and closes it."""

    def write() -> None:
        try:
            with open(fifo, "wb") as handle:
                handle.write(data)
        except BrokenPipeError:  # the reader stopped at its bound: what the test wants
            pass

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def _one_line(message: str) -> str:
    return " ".join(message.split())  # the message may be wrapped to the terminal


def test_a_pipe_with_a_line_past_the_bound_is_exit_2(tmp_path: Path) -> None:
    fifo = tmp_path / "p.jsonl"
    os.mkfifo(fifo)
    rows = [{"id": "a", "output": "x", "expected": "x"}, {"id": "b", "output": "y" * 5000}]
    writer = _feed(fifo, "".join(json.dumps(row) + "\n" for row in rows * 50).encode())
    done = run_cli(
        "score", fifo, "-m", "exact_match", "--read-option", "max_line_bytes=1000", cwd=tmp_path
    )
    writer.join(timeout=30)
    assert not writer.is_alive()
    assert done.returncode == 2, done.stderr
    stderr = _one_line(done.stderr)
    assert f"{fifo}:2: the line is longer than 1,000 bytes (the bound max_line_bytes)" in stderr
    assert "--read-option max_line_bytes=4000" in stderr


def test_a_pipe_holding_a_document_past_the_bound_is_exit_2(tmp_path: Path) -> None:
    """A JSON document from a pipe is copied whole before it is read, up to max_json_bytes."""
    fifo = tmp_path / "p.json"
    os.mkfifo(fifo)
    rows = [{"id": f"q{n}", "output": "x", "expected": "x"} for n in range(2000)]
    data = json.dumps(rows).encode()
    assert len(data) > 20_000
    writer = _feed(fifo, data)
    done = run_cli(
        "score", fifo, "-m", "exact_match", "--format", "json",
        "--read-option", "max_json_bytes=20000", cwd=tmp_path,
    )  # fmt: skip
    writer.join(timeout=30)
    assert not writer.is_alive()
    assert done.returncode == 2, done.stderr
    stderr = _one_line(done.stderr)
    assert f"{fifo}: the stream holds more than 20,000 bytes (the bound max_json_bytes)" in stderr
    assert "--read-option max_json_bytes=80000" in stderr


def test_dev_zero_is_exit_2_naming_the_bound(tmp_path: Path) -> None:
    done = run_cli(
        "score", "/dev/zero", "-m", "exact_match", "--format", "jsonl",
        "--read-option", "max_line_bytes=4096", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    stderr = _one_line(done.stderr)
    assert "/dev/zero:1: the line is longer than 4,096 bytes (the bound max_line_bytes)" in stderr
    assert "a stream such as /dev/zero never ends one" in stderr
    assert "--read-option max_line_bytes=16384" in stderr


def test_dev_zero_with_the_bound_from_a_configuration(tmp_path: Path) -> None:
    """``read_options:`` of --config sets the same bound; a .jsonl name links to /dev/zero."""
    link = tmp_path / "zero.jsonl"
    link.symlink_to("/dev/zero")
    config = tmp_path / "run.yaml"
    config.write_text('read_options:\n  max_line_bytes: "8192"\n', encoding="utf-8")
    done = run_cli("score", link, "-m", "exact_match", "--config", config, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    stderr = _one_line(done.stderr)
    assert f"{link}:1: the line is longer than 8,192 bytes (the bound max_line_bytes)" in stderr
    assert "--read-option max_line_bytes=32768" in stderr
