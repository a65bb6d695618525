"""docs/cli.md's configuration section says what the code does: its keys, example and errors.

The key table must list exactly ``CONFIG_KEYS``, in order; the YAML example must load; and each
``$ itemscore run FILE`` in the section's console block must print the ``Error:`` line shown
under it (a line ending in ``...`` is compared up to there). So a key added to the reader
without its documentation, or a message changed without its example, fails here.
"""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import Path

import pytest
from click.testing import CliRunner

from itemscore.cli import cli
from itemscore.cli._config import CONFIG_KEYS, load_config

CLI_MD = Path(__file__).parents[1] / "docs" / "cli.md"

#: The files the console examples run, by name.
EXAMPLE_FILES = {
    "run.yaml": "data: data.jsonl\nmetircs: [f1]\n",
    "bad.yaml": (
        "data: data.jsonl\nmetrics:\n  - name: f1\n    labels: [a, b]\n    averge: macro\n"
    ),
}


@pytest.fixture(autouse=True)
def _no_tracebacks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Messages are compared whole: no ITEMSCORE_DEBUG traceback before them."""
    monkeypatch.delenv("ITEMSCORE_DEBUG", raising=False)


def _section() -> str:
    text = CLI_MD.read_text(encoding="utf-8")
    start = text.index("\n## Configuration files\n")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def _blocks(section: str, info: str) -> list[str]:
    return re.findall(rf"^```{info}\n(.*?)^```$", section, flags=re.M | re.S)


def test_the_key_table_lists_every_key_in_order() -> None:
    keys = re.findall(r"^\| `([a-z_]+)` \|", _section(), flags=re.M)
    assert tuple(keys) == CONFIG_KEYS


def test_the_yaml_example_loads(tmp_path: Path) -> None:
    (example,) = _blocks(_section(), "yaml")
    (tmp_path / "outputs.csv").write_text("qid,response,gold\n1,a,a\n", encoding="utf-8")
    config = tmp_path / "run.yaml"
    config.write_text(example, encoding="utf-8")
    request = load_config(config)
    assert set(request.setting_where) >= {"workers", "retries", "by_group"}


def _examples() -> list[tuple[str, str]]:
    (console,) = _blocks(_section(), "console")
    lines = console.splitlines()
    pairs = []
    for command, shown in pairwise(lines):
        if command.startswith("$ itemscore run "):
            pairs.append((command.removeprefix("$ itemscore run "), shown))
    return pairs


def test_the_section_shows_error_examples() -> None:
    assert [name for name, _ in _examples()] == list(EXAMPLE_FILES)


@pytest.mark.parametrize(("name", "shown"), _examples())
def test_each_error_example_is_what_the_command_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, shown: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data.jsonl").write_text('{"id": "1", "output": "a"}\n', encoding="utf-8")
    (tmp_path / name).write_text(EXAMPLE_FILES[name], encoding="utf-8")
    outcome = CliRunner().invoke(cli, ["run", name])
    assert outcome.exit_code == 2
    printed = outcome.stderr.strip()
    if shown.endswith("..."):
        assert printed.startswith(shown.removesuffix("..."))
    else:
        assert printed == shown
