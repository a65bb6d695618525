"""The items file of a report set is read only when it is a plain file beside results.json.

``results.json`` refers to its items by name (``{"file": "items.parquet", ...}``): a symbolic
link there (to ``/dev/zero``, or to a real items file elsewhere), a named pipe, a device or a
folder is refused with a message naming results.json, the file and what is read instead. Every
load runs in a subprocess with a timeout and an address-space limit, so a reader that followed
``/dev/zero`` or waited on a pipe fails the test instead of taking the machine.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).parent / "itemscore"
GOLDEN = Path(__file__).parent / "golden"
TIMEOUT = 60
#: Address space of each subprocess: far above a load of the small set, far below /dev/zero's.
MEMORY = 1 << 30

LOAD = """
import sys
import itemscore
try:
    itemscore.RunResult.load_json(sys.argv[1])
except itemscore.ResultsFormatError as exc:
    print(exc)
    sys.exit(2)
print("loaded")
"""

LINK = "is a symbolic link; itemscore reads only a plain file beside results.json"
NOT_PLAIN = (
    "is not a plain file (a folder, a pipe or a device); itemscore reads only a plain file "
    "beside results.json."
)


def _bounded() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def _run(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ITEMSCORE_")}
    return subprocess.run(
        [str(a) for a in argv],
        capture_output=True,
        text=True,
        env=environ,
        stdin=subprocess.DEVNULL,
        timeout=TIMEOUT,
        check=False,
        preexec_fn=_bounded,  # safe: the test process starts no threads of its own
    )


@pytest.fixture(scope="module")
def report_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("set") / "o"
    proc = _run(SCRIPT, "score", GOLDEN / "small.jsonl", "-m", "exact_match", "--out", out)
    assert proc.returncode == 0, proc.stderr
    return out


def _device(path: Path, report_set: Path) -> None:
    try:  # the character device /dev/zero is (1, 5); making one needs the right to
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 5))
    except PermissionError:
        pytest.skip("making a device node needs privileges this test does not have")


ENTRIES: dict[str, tuple[Callable[[Path, Path], None], str]] = {
    "link-to-dev-zero": (lambda p, s: p.symlink_to("/dev/zero"), LINK),
    "link-to-an-items-file-elsewhere": (lambda p, s: p.symlink_to(s / "items.parquet"), LINK),
    "named-pipe": (lambda p, s: os.mkfifo(p), NOT_PLAIN),
    "device": (_device, NOT_PLAIN),
    "folder": (lambda p, s: p.mkdir(), NOT_PLAIN),
}


def _copy(report_set: Path, folder: Path, entry: str, name: str) -> Path:
    """results.json of ``report_set`` in ``folder``, its items file ``name`` made as ``entry``."""
    folder.mkdir()
    document = json.loads((report_set / "results.json").read_text(encoding="utf-8"))
    document["items"]["file"] = name
    results = folder / "results.json"
    results.write_text(json.dumps(document), encoding="utf-8")
    ENTRIES[entry][0](folder / name, report_set)
    return results


@pytest.mark.parametrize("name", ["items.parquet", "items.jsonl"])
@pytest.mark.parametrize("entry", list(ENTRIES))
def test_load_refuses_an_items_file_that_is_not_plain(
    report_set: Path, tmp_path: Path, entry: str, name: str
) -> None:
    """RunResult.load_json raises ResultsFormatError naming results.json and the file."""
    results = _copy(report_set, tmp_path / "copy", entry, name)
    proc = _run(sys.executable, "-c", LOAD, results)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout.strip().startswith(f"{results}: its items file {name} {ENTRIES[entry][1]}")


@pytest.mark.parametrize("entry", list(ENTRIES))
def test_verify_refuses_an_items_file_that_is_not_plain(
    report_set: Path, tmp_path: Path, entry: str
) -> None:
    """itemscore verify exits 2 with the same message, and nothing else is read."""
    results = _copy(report_set, tmp_path / "copy", entry, "items.parquet")
    proc = _run(SCRIPT, "verify", results)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert f"Error: {results}: its items file items.parquet {ENTRIES[entry][1]}" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_plain_items_file_loads(report_set: Path, tmp_path: Path) -> None:
    """The same copy with the real items file beside it loads and verifies (exit 0)."""
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("results.json", "items.parquet"):
        shutil.copyfile(report_set / name, copy / name)
    proc = _run(sys.executable, "-c", LOAD, copy / "results.json")
    assert (proc.returncode, proc.stdout.strip()) == (0, "loaded"), proc.stderr
    assert _run(SCRIPT, "verify", copy / "results.json").returncode == 0
