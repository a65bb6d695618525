"""YAML configurations that are hostile or odd: aliases, tags, odd keys, deep nesting."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from itemscore import ConfigError
from itemscore.cli._config import load_config
from itemscore.cli._grammar import yaml_value

SCRIPT = Path(sys.executable).parent / "itemscore"

#: 421 bytes that expand to 9^9 strings when an alias is followed (the "billion laughs").
BOMB = """\
data: d.jsonl
metrics:
  - name: f1
    a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
    b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
    c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
    d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
    e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
    f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
    g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
    h: [*g,*g,*g,*g,*g,*g,*g,*g,*g]
"""


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_an_alias_bomb_is_refused_at_the_first_alias(tmp_path: Path) -> None:
    """Aliases are refused where they appear, before anything is expanded (issue 7.12)."""
    config = write(tmp_path / "bomb.yaml", BOMB)
    assert len(BOMB) < 450
    with pytest.raises(ConfigError) as info:
        load_config(config)
    assert str(info.value).startswith(f"{config}:5:12: not valid YAML: an alias (*a)")


def test_aliases_are_refused_in_metric_options_too() -> None:
    """-m values use the same dialect: no aliases."""
    with pytest.raises(ConfigError, match="alias"):
        yaml_value("[&a x, *a]")


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        (
            "data: !!python/object/apply:os.system ['echo owned']\n",
            "1:7",
            "the tag '!!python/object/apply:os.system' is not allowed",
        ),
        ("seed: !!binary aGk=\n", "1:7", "the tag '!!binary' is not allowed"),
        ("? !!python/tuple [a, b]\n: 1\n", "1:3", "the tag '!!python/tuple' is not allowed"),
        ("? [a, b]\n: 1\n", "1:3", "a key must be a plain name, not a list"),
        ("metrics: " + "[" * 60 + "]" * 60 + "\n", "1:", "nest more than 50 levels"),
    ],
    ids=["python-tag", "binary-tag", "tagged-key", "list-key", "deep"],
)
def test_tags_and_odd_keys_name_the_file_and_line(
    tmp_path: Path, text: str, where: str, message: str
) -> None:
    """A tag, a non-scalar key or deep nesting is a ConfigError at file:line:column."""
    config = write(tmp_path / "run.yaml", text)
    with pytest.raises(ConfigError) as info:
        load_config(config)
    assert str(info.value).startswith(f"{config}:{where}")
    assert message in str(info.value)
    assert "None" not in str(info.value)


def test_a_python_tag_exits_2_naming_the_config(tmp_path: Path) -> None:
    """End to end: `run` on a config with a !!python tag exits 2 naming file and line."""
    config = write(
        tmp_path / "run.yaml",
        "data: d.jsonl\nmetrics: [answered_rate]\nseed: !!python/name:os.system\n",
    )
    (tmp_path / "d.jsonl").write_text('{"output": "x"}\n', encoding="utf-8")
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ITEMSCORE_")}
    proc = subprocess.run(
        [str(SCRIPT), "run", str(config)],
        capture_output=True,
        text=True,
        env=environ,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"Error: {config}:3:7: not valid YAML: the tag")
    assert "<unicode string>" not in proc.stderr


def test_every_run_flag_has_a_key(tmp_path: Path) -> None:
    """by_group, workers and dask are keys like the other flags."""
    write(tmp_path / "d.jsonl", '{"output": "x"}\n')
    config = write(tmp_path / "run.yaml", "data: d.jsonl\nby_group: true\nworkers: 2\n")
    request = load_config(config)
    assert (request.by_group, request.workers) == (True, 2)
    with pytest.raises(ConfigError, match="`by_group` \\('yes'\\) must be true or false"):
        load_config(write(tmp_path / "bad.yaml", "by_group: yes\n"))
