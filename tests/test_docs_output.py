"""Every console example marked ``<!-- checked -->`` in the docs shows what the command prints.

A fenced ``console`` block right under a line ``<!-- checked -->`` is a session: each
``$ itemscore ...`` line is run in a fresh folder holding the example files below, at 100
columns, and what it prints (stdout and stderr) must be the lines under it; a block whose last
line is ``...`` shows only the start of the output. ``$ echo $?`` prints the exit code of the
command before it. ``<!-- checked: demo -->`` first writes ``itemscore demo --out demo``;
``<!-- checked: demo 120 columns -->`` also runs at 120 columns.

To regenerate the outputs after a change of what the commands print, run this file with
``ITEMSCORE_UPDATE_DOCS=1``: each checked block is rewritten with what the command prints now
(a ``...`` block keeps as many lines as it had).
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

import itemscore
from itemscore import _registry
from itemscore.cli import cli

ROOT = Path(__file__).parents[1]
PAGES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
MARK = re.compile(
    r"^<!-- checked(?:: (?P<setup>[a-z-]+))?(?: (?P<width>\d+) columns)? -->\n"
    r"```console\n(?P<body>.*?)^```$",
    re.M | re.S,
)
UPDATE = os.environ.get("ITEMSCORE_UPDATE_DOCS") == "1"

#: The files the examples name, written into each session's folder.
FILES = {
    "outputs.jsonl": '{"id": "1", "output": "Paris", "expected": "Paris"}\n'
    '{"id": "2", "output": {"text": "Rome"}, "expected": "Rome"}\n',
    "out.jsonl": '{"id": "1", "output": "a", "expected": "a"}\n',
    # The worked example of docs/attempts.md: four questions, three attempts each.
    "attempts.jsonl": "".join(
        f'{{"id": "{q}", "attempt": {j}, "output": "{o}", "expected": "{e}"}}\n'
        for q, e, outs in [
            ("q1", "Paris", ["Paris", "Paris", "Lyon"]),
            ("q2", "4", ["4", "5", "4"]),
            ("q3", "Mars", ["Venus", "Venus", "Venus"]),
            ("q4", "Au", ["Au", "Au", "Au"]),
        ]
        for j, o in enumerate(outs, 1)
    ),
    "qa.jsonl": "".join(
        f'{{"id": "{i}", "model": "alpha", "output": "{o}", "expected": {e}, "group": "{g}"}}\n'
        for i, (o, e, g) in enumerate(
            [
                ("Paris", '"paris"', "geo"),
                ("Rome", '"Rome"', "geo"),
                ("H2O", '"h2o"', "sci"),
                ("CO2", '"O2"', "sci"),
                ("Mars", "null", "sci"),
            ]
        )
    ),
}


def _sessions() -> list[tuple[Path, int, str | None, str, int]]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in MARK.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            width = int(match.group("width") or 100)
            found.append((page, line, match.group("setup"), match.group("body"), width))
    return found


def _run(
    args: list[str], folder: Path, monkeypatch: pytest.MonkeyPatch, width: int = 100
) -> tuple[str, int]:
    monkeypatch.chdir(folder)
    env = {"COLUMNS": str(width), "NO_COLOR": "1"}
    out = CliRunner().invoke(cli, args, env=env)
    return out.output, out.exit_code


def _replay(
    body: str, folder: Path, monkeypatch: pytest.MonkeyPatch, width: int
) -> tuple[str, str]:
    """The block as written, and as the commands print it now (same commands, same cuts)."""
    expected: list[str] = []
    actual: list[str] = []
    chunks = re.split(r"^(\$ .*)\n", body, flags=re.M)
    code = 0
    for i in range(1, len(chunks), 2):
        command, shown = chunks[i], chunks[i + 1]
        expected += [command, *shown.splitlines()]
        actual.append(command)
        words = shlex.split(command[2:])
        if words == ["echo", "$?"]:
            printed = f"{code}\n"
        else:
            assert words[0] == "itemscore", command
            printed, code = _run(words[1:], folder, monkeypatch, width)
        lines = [line.rstrip() for line in printed.splitlines()]
        shown_lines = shown.splitlines()
        if shown_lines and shown_lines[-1] == "...":
            lines = [*lines[: len(shown_lines) - 1], "..."]
        actual += lines
    return "\n".join(x.rstrip() for x in expected), "\n".join(actual)


SESSIONS = _sessions()


@pytest.mark.parametrize(
    ("page", "line", "setup", "body", "width"),
    SESSIONS,
    ids=[f"{p.name}:{n}" for p, n, *_ in SESSIONS],
)
def test_console_example_is_what_the_command_prints(
    page: Path, line: int, setup: str | None, body: str, width: int, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest,
) -> None:  # fmt: skip
    monkeypatch.delenv("ITEMSCORE_DEBUG", raising=False)
    # No third-party plugin, whatever this process loaded before: the examples show what an
    # installation of itemscore alone prints.
    monkeypatch.setenv("ITEMSCORE_DISABLE_PLUGIN_AUTOLOAD", "1")
    # Nor a metric another test module registered in this process (listings would show it).
    monkeypatch.setattr(_registry, "_REGISTERED", {})
    itemscore.reset_registry()
    request.addfinalizer(itemscore.reset_registry)
    for name, content in FILES.items():
        (tmp_path / name).write_text(content, encoding="utf-8")
    if setup == "demo":
        _run(["demo", "--out", "demo"], tmp_path, monkeypatch)
    written, printed = _replay(body, tmp_path, monkeypatch, width)
    if UPDATE and written != printed:
        text = page.read_text(encoding="utf-8")
        page.write_text(text.replace(body, printed + "\n", 1), encoding="utf-8")
        return
    assert printed == written, f"{page.name}:{line}: the example's output is out of date"


def test_the_docs_have_checked_examples() -> None:
    """The demo, a metric's detail, a comparison and the error examples are checked."""
    commands = " ".join(body for _, _, _, body, _ in SESSIONS)
    for command in ("itemscore demo", "itemscore metrics show", "itemscore compare"):
        assert f"$ {command}" in commands


def _latex_example() -> str:
    import itemscore
    from itemscore.reports.table_tex import latex_table

    data = [
        itemscore.ItemResult(id=str(i), model=m, output=o, expected=e)
        for m, outputs in (("alpha", "aabab"), ("beta_2 & co", "abbbb"))
        for i, (o, e) in enumerate(zip(outputs, "aabaa"))
    ]
    return latex_table(itemscore.score(data, ["exact_match", "answered_rate"], suite_id="qa"))


def test_the_table_tex_example_is_what_latex_table_writes() -> None:
    """docs/cli.md's ``latex`` block is table.tex for the run it describes."""
    page = ROOT / "docs" / "cli.md"
    text = page.read_text(encoding="utf-8")
    block = re.search(r"^```latex\n(.*?)^```$", text, flags=re.M | re.S)
    assert block is not None
    now = _latex_example()
    if UPDATE and block.group(1) != now:
        page.write_text(text[: block.start(1)] + now + text[block.end(1) :], encoding="utf-8")
        return
    assert block.group(1) == now, "docs/cli.md: the table.tex example is out of date"
