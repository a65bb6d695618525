"""The command line refuses before any work what cannot go well, and says the fix.

Issue 15.1 (inputs and files itemscore did not write), 15.5 (options that cannot apply), 15.6
(messages that leave the user alone), 16.19 (names from data on the terminal), 16.21 (a full
disk names the report and the folder).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import itemscore
from itemscore.cli import cli

SCRIPT = Path(sys.executable).parent / "itemscore"


def invoke(*args: str | Path, cwd: Path | None = None) -> Any:
    """Run the command line in this process; ``cwd`` is changed for the call."""
    old = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    finally:
        os.chdir(old)


def run_cli(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ITEMSCORE_")}
    return subprocess.run(
        [str(SCRIPT), *map(str, args)], capture_output=True, env=environ, cwd=cwd, timeout=120,
        check=False,
    )  # fmt: skip


def rows(path: Path, lines: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return rows(
        tmp_path / "outputs.jsonl",
        [{"id": str(i), "output": "a", "expected": "a" if i % 2 else "b"} for i in range(4)],
    )


def snapshot(folder: Path) -> dict[str, Any]:
    """Every entry under ``folder``: its bytes, its link target, or that it is a folder."""
    seen: dict[str, Any] = {}
    for path in sorted(folder.rglob("*")):
        key = os.fspath(path.relative_to(folder))
        if path.is_symlink():
            seen[key] = ("link", os.readlink(path))
        elif path.is_dir():
            seen[key] = "folder"
        else:
            seen[key] = path.read_bytes()
    return seen


# -- 15.1: nothing a user made is ever replaced -------------------------------------------------


def test_out_folder_holding_the_data_file_is_refused_before_scoring(data: Path) -> None:
    """`score items.jsonl --out .` would make the data a link to the report: exit 2, kept."""
    folder = data.parent / "d"
    folder.mkdir()
    shutil.copy(data, folder / "items.jsonl")
    before = snapshot(folder)
    result = invoke(
        "score", "items.jsonl", "-m", "exact_match", "--out", ".", "--report", "jsonl", cwd=folder
    )
    assert result.exit_code == 2
    assert result.stderr == (
        "Error: --out .: items.jsonl is the data file of this run, and the report items.jsonl "
        "written into . would replace it. Write the reports into another folder, or move "
        "items.jsonl out of . first.\n"
    )
    assert snapshot(folder) == before


def test_a_users_file_under_a_report_name_is_kept(data: Path, tmp_path: Path) -> None:
    """A user's own summary.csv: exit 2 naming it and the fix; it is never deleted."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.csv").write_text("my numbers", encoding="utf-8")
    result = invoke("score", data, "-m", "exact_match", "--out", out)
    assert result.exit_code == 2
    assert f"{out / 'summary.csv'} is a file itemscore did not write" in result.stderr
    assert "Move or rename the file, write into another folder" in result.stderr
    assert snapshot(out) == {"summary.csv": b"my numbers"}
    kept = invoke("score", data, "-m", "exact_match", "--out", out, "--report", "json", "-q")
    assert kept.exit_code == 0, kept.output
    assert (out / "summary.csv").read_text(encoding="utf-8") == "my numbers"


def test_the_configuration_file_is_an_input_too(data: Path, tmp_path: Path) -> None:
    """A configuration file where a report would go is refused at the YAML `out:` key."""
    out = tmp_path / "out"
    out.mkdir()
    config = out / "table.tex"  # an odd name, but the user's file all the same
    config.write_text(f"data: ../{data.name}\nmetrics: [exact_match]\nout: .\n", encoding="utf-8")
    result = invoke("run", config)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {config}:3:6: {config} is the configuration file")


def test_rescore_into_its_own_folder_replaces_its_own_set(data: Path, tmp_path: Path) -> None:
    """The documented `rescore out/results.json --out out` still works: the set is itemscore's."""
    out = tmp_path / "out"
    assert invoke("score", data, "-m", "exact_match", "--out", out, "-q").exit_code == 0
    result = invoke("rescore", out / "results.json", "-m", "token_f1", "--out", out, "-q")
    assert result.exit_code == 0, result.output
    saved = itemscore.RunResult.load_json(out / "results.json")
    assert set(saved.measurements) == {"default.exact_match", "default.token_f1"}


def test_an_input_inside_the_state_folder_is_refused(data: Path, tmp_path: Path) -> None:
    """Scoring a file of the current set into its own folder would pull it from under the run."""
    out = tmp_path / "out"
    assert invoke("score", data, "-m", "exact_match", "--out", out, "-q").exit_code == 0
    inside = next((out / ".itemscore").glob("set-*")) / "items.parquet"
    result = invoke("score", inside, "-m", "exact_match", "--out", out, "--report", "json")
    assert result.exit_code == 2
    assert "is the data file of this run, and the next report set" in result.stderr


# -- 15.5: options that cannot apply --------------------------------------------------------------


def test_report_without_out_is_a_usage_error(data: Path, tmp_path: Path) -> None:
    """`--report html` without `--out` would write nothing: exit 2 before scoring."""
    result = invoke("score", data, "-m", "exact_match", "--report", "html")
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: --report html names reports to write, but no ")
    config = tmp_path / "run.yaml"
    config.write_text(f"data: {data.name}\nmetrics: [exact_match]\nreports: [csv]\n")
    from_yaml = invoke("run", config)
    assert from_yaml.exit_code == 2
    assert from_yaml.stderr.startswith(f"Error: {config}:3:10: `reports: [csv]` names reports")


def test_a_seed_that_changes_nothing_is_a_warning(data: Path) -> None:
    """--seed with closed-form intervals only: said on stderr; with a bootstrap, silent."""
    result = invoke("score", data, "-m", "exact_match", "--seed", "7")
    assert result.exit_code == 0
    assert "Warning: --seed 7 changed nothing" in result.stderr
    used = invoke("score", data, "-m", "token_f1", "--seed", "7", "--ci", "bootstrap")
    assert used.exit_code == 0
    assert "--seed" not in used.stderr


def test_compare_by_group_without_groups_is_a_warning(tmp_path: Path) -> None:
    """compare --by-group on items without groups says that the table has no group rows."""
    two = rows(
        tmp_path / "two.jsonl",
        [
            {"id": str(i), "model": m, "output": "a", "expected": "a" if i % 2 else "b"}
            for m in ("x", "y")
            for i in range(6)
        ],
    )
    assert invoke("score", two, "-m", "exact_match", "--out", tmp_path / "o", "-q").exit_code == 0
    result = invoke("compare", tmp_path / "o" / "results.json", "--by-group")
    assert result.exit_code == 0
    assert "Warning: --by-group adds one row per group, but the items of " in result.stderr


# -- 15.6: messages that leave the user alone ------------------------------------------------------


@pytest.mark.parametrize("command", ["rescore", "verify"])
def test_a_data_file_given_for_results_says_what_to_run(data: Path, command: str) -> None:
    """rescore/verify of a JSONL data file: not "not valid JSON", but what it is and the fix."""
    result = invoke(command, data)
    assert result.exit_code == 2
    assert f"{data} looks like a data file (JSON lines), not an itemscore results" in result.stderr
    fix = "--data" if command == "verify" else f"itemscore score {data} -m METRIC"
    assert fix in result.stderr
    assert "Extra data" not in result.stderr


def test_out_that_cannot_be_created_is_a_sentence(data: Path) -> None:
    """`--out /proc/nope`: no raw FileNotFoundError; exit 2, nothing scored."""
    if not Path("/proc/self").exists():
        pytest.skip("needs /proc")
    result = invoke("score", data, "-m", "exact_match", "--out", "/proc/nope")
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: The output folder /proc/nope cannot be created")
    assert "FileNotFoundError" not in result.stderr


@pytest.mark.parametrize("source", ["yaml", "map"])
def test_a_missing_mapped_column_is_blamed_where_it_was_mapped(tmp_path: Path, source: str) -> None:
    """A bad `columns:` entry is reported at its YAML key; `--map` only when --map was used."""
    table = tmp_path / "o.csv"
    table.write_text("id,output,expected\n1,a,a\n", encoding="utf-8")
    if source == "yaml":
        config = tmp_path / "run.yaml"
        config.write_text("data: o.csv\nmetrics: [exact_match]\ncolumns:\n  output: nope\n")
        result = invoke("run", config)
        start = f"Error: {config}:4:11 (`columns: output: nope`): {table}:1: the file has no"
        assert "--map" not in result.stderr
    else:
        result = invoke("score", table, "-m", "exact_match", "--map", "output=nope")
        start = f"Error: --map output=nope: {table}:1: the file has no column 'nope'"
    assert result.exit_code == 2
    assert result.stderr.startswith(start), result.stderr


def test_a_missing_mapped_jsonl_key_is_placed_at_the_yaml_key(data: Path, tmp_path: Path) -> None:
    """The same for a JSON lines row without the mapped key."""
    config = tmp_path / "run.yaml"
    config.write_text(f"data: {data.name}\nmetrics: [exact_match]\ncolumns:\n  group: topic\n")
    result = invoke("run", config)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {config}:4:10 (`columns: group: topic`): ")


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.mark.parametrize(
    ("address", "message"),
    [
        ("127.0.0.1:notaport", "is not a Dask scheduler address: the port 'notaport' is not"),
        ("tcp://127.0.0.1", "is not a Dask scheduler address: the port is missing"),
        ("ftp://127.0.0.1:21", "the protocol 'ftp' is not one of"),
        ("CLOSED", "no Dask scheduler answers at tcp://127.0.0.1:"),
    ],
)
def test_dask_addresses_are_checked_before_any_work(
    data: Path, tmp_path: Path, address: str, message: str
) -> None:
    """A malformed or unreachable --dask address is exit 2 with the fix, nothing written."""
    pytest.importorskip("distributed")
    if address == "CLOSED":
        address = f"tcp://127.0.0.1:{closed_port()}"
    out = tmp_path / "out"
    result = invoke("score", data, "-m", "exact_match", "--dask", address, "--out", out)
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: --dask: ")
    assert message in result.stderr
    assert "ValueError" not in result.stderr
    assert not out.exists()


# -- 16.19: names from data on the terminal --------------------------------------------------------


def test_names_from_data_never_reach_the_terminal_raw(tmp_path: Path) -> None:
    """Column names and model names with OSC/CSI sequences are shown as escapes, in every output."""
    osc = "\x1b]52;c;cHduZWQ=\x07"  # OSC 52 writes the clipboard in some terminals
    data = rows(
        tmp_path / "hostile.jsonl",
        [
            {
                "id": str(i),
                "model": f"m\x9b2J{i % 2}",  # a C1 CSI
                "output": "a",
                "expected": "a",
                f"sub{osc}ject": "math" if i % 2 else "art",
            }
            for i in range(8)
        ],
    )
    warned = run_cli("score", data, "-m", "exact_match", "--by-group")
    assert warned.returncode == 0, warned.stderr
    assert b"\x1b" not in warned.stderr
    assert b"sub\\x1b]52;c;cHduZWQ=\\x07ject" in warned.stderr  # the hint names it, escaped
    as_json = run_cli("score", data, "-m", "exact_match", "--json")
    assert as_json.returncode == 0, as_json.stderr
    assert "\x9b".encode() not in as_json.stdout
    models = {m["model"] for m in json.loads(as_json.stdout)["measurements"]}
    assert models == {"m\x9b2J0", "m\x9b2J1"}  # the same data, escaped as JSON does


# -- 16.21: a full disk names the report and the folder --------------------------------------------

_FULL = """
set -u
mount -t tmpfs -o size=192k tmpfs "$1" || exit 99
"$2" -m itemscore score "$3" -m exact_match --suite old --out "$1/out" -q || exit 98
"$2" -m itemscore score "$4" -m exact_match --suite new --out "$1/out" -q --report json \
    --report csv 2>"$1/json.err"
echo "json=$?"
"$2" -m itemscore score "$4" -m exact_match --suite new --out "$1/out" -q 2>"$1/all.err"
echo "all=$?"
cat "$1/json.err" "$1/all.err" >&2
rm "$1/json.err" "$1/all.err"
cd "$1/out" && find . | sort && head -c 400 summary.csv
"""


def test_a_full_disk_names_the_report_and_the_folder(data: Path, tmp_path: Path) -> None:
    """On a 192 KiB tmpfs (a mount namespace of its own): exit 1, the old set intact, named."""
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare (util-linux) for a private tmpfs")
    big = rows(
        tmp_path / "big.jsonl",
        [{"id": str(i), "output": "x" * 40, "expected": "x" * 40} for i in range(4_000)],
    )
    mount = tmp_path / "disk"
    mount.mkdir()
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ITEMSCORE_")}
    proc = subprocess.run(
        ["unshare", "-rm", "sh", "-c", _FULL, "sh", mount, sys.executable, data, big],
        capture_output=True, text=True, env=environ, timeout=300, check=False,
    )  # fmt: skip
    if proc.returncode == 99 or "unshare:" in proc.stderr:
        pytest.skip(f"no private tmpfs here: {proc.stderr.strip()}")
    assert proc.returncode == 0, proc.stderr
    assert "json=1" in proc.stdout
    assert "all=1" in proc.stdout
    out = f"{mount}/out"
    errors = proc.stderr.splitlines()
    assert errors[0].startswith(
        f"Error: Writing the report results.json into {out} failed: No space left on device "
        f"(writing {out}/.itemscore/set-"
    )
    assert errors[0].endswith(
        f"The new reports were removed; {out} shows the reports it showed before."
    )
    assert errors[1].startswith("Error: Writing the report ")
    assert (
        f" into {out} failed: No space left on device (writing {out}/.itemscore/set-" in (errors[1])
    )
    assert errors[1].endswith(
        f"The new reports were removed; {out} shows the reports it showed before."
    )
    listing = proc.stdout.split("all=1\n", 1)[1]
    sets = [
        line for line in listing.splitlines() if re.fullmatch(r"\./\.itemscore/set-[^/]+", line)
    ]
    assert len(sets) == 1  # the old set only, whole
    assert "\nold," in listing  # summary.csv is still the old run's
