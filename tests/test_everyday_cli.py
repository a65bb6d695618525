"""Everyday command-line use: install hints, narrow terminals, small messages, Markdown on stdout.

Each test runs the command a user types (click's runner in-process, or the console script in a
subprocess where a real pipe or terminal width matters).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from click.testing import CliRunner

from itemscore.cli import cli

ROOT = Path(__file__).parents[1]
SCRIPT = Path(sys.executable).parent / "itemscore"


def run_script(
    *args: str | Path, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the installed console script with ``stdin`` piped in."""
    environ = {k: v for k, v in os.environ.items() if k not in ("ITEMSCORE_DEBUG", "CI")}
    environ.update(env or {})
    return subprocess.run(
        [str(SCRIPT), *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        env=environ,
        timeout=120,
        check=False,
    )


def _rows(n: int, models: tuple[str, ...] = ()) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for i in range(n):
        for model in models or (None,):
            row: dict[str, object] = {"id": i, "output": "a" if i % 3 else "b", "expected": "a"}
            if model is not None:
                row["model"] = model
            rows.append(row)
    return rows


def jsonl(path: Path, n: int = 30, models: tuple[str, ...] = ()) -> Path:
    """A JSON lines file of ``n`` items (two in three right), per model when given."""
    path.write_text("".join(json.dumps(r) + "\n" for r in _rows(n, models)), encoding="utf-8")
    return path


# -- install hints name what pip can install ---------------------------------------------------


def _extra_requirements(extra: str) -> list[str]:
    """The installed itemscore's requirements of ``extra``, as its metadata writes them."""
    found = []
    for line in metadata.requires("itemscore") or []:
        requirement, _, marker = line.partition(";")
        if f'extra == "{extra}"' in marker:
            found.append(requirement.strip())
    return found


@pytest.mark.parametrize(
    ("package", "extra"),
    [
        ("XlsxWriter", "xlsx"),
        ("xlsxwriter", "xlsx"),
        ("rouge_score", "text"),
        ("sacrebleu", "text"),
        ("httpx", "judge"),
        ("distributed", "dask"),
        ("matplotlib", "plot"),
        ("pandas", "pandas"),
        ("fsspec", "remote"),
    ],
)
def test_install_hint_names_the_requirement_the_metadata_declares(package: str, extra: str) -> None:
    """The hint is the dependency with the version the extra asks for, read from the metadata."""
    from itemscore._extras import install_hint, requirement

    normal = re.sub(r"[-_.]+", "-", package).lower()
    declared = [
        r
        for r in _extra_requirements(extra)
        if re.sub(r"[-_.]+", "-", r).lower().startswith(normal)
    ]
    assert len(declared) == 1
    assert requirement(package) == declared[0]
    assert install_hint(package) == f"pip install '{declared[0]}'"


def test_install_hint_of_a_whole_extra_and_of_an_unknown_one() -> None:
    """An extra gives every requirement; an extra the metadata lacks gives the clone's command."""
    from itemscore._extras import install_hint

    judge = " ".join(f"'{r}'" for r in _extra_requirements("judge"))
    assert install_hint(extra="judge") == f"pip install {judge}"
    assert install_hint("s3fs") == "pip install s3fs"  # no requirement of itemscore: as named
    assert install_hint(extra="nothing") == (
        "pip install '.[nothing]' (in the folder of a clone of itemscore)"
    )


def test_report_xlsx_without_xlsxwriter_names_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`score F -m exact_match --out O --report xlsx` says `pip install 'XlsxWriter>=3.1'`."""
    monkeypatch.setitem(sys.modules, "xlsxwriter", None)
    data = jsonl(tmp_path / "d.jsonl")
    args = ["score", str(data), "-m", "exact_match", "--out", str(tmp_path / "o")]
    ran = CliRunner().invoke(cli, [*args, "--report", "xlsx"])
    assert ran.exit_code == 2
    wanted = _extra_requirements("xlsx")[0]
    assert f"Install it with: pip install '{wanted}'" in ran.output
    assert "itemscore[" not in ran.output


@pytest.mark.parametrize(("metric", "module"), [("bleu", "sacrebleu"), ("rouge", "rouge_score")])
def test_a_metric_without_its_dependency_names_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, metric: str, module: str
) -> None:
    """`itemscore score F -m bleu` without sacrebleu: exit 2, the pip command of the package."""
    for name in [m for m in list(sys.modules) if m.split(".")[0] == module]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, module, None)
    ran = CliRunner().invoke(cli, ["score", str(jsonl(tmp_path / "d.jsonl")), "-m", metric])
    assert ran.exit_code == 2
    from itemscore._extras import requirement

    assert f"Install it with: pip install '{requirement(module)}'" in ran.output
    assert "itemscore[" not in ran.output


def test_no_message_or_page_says_pip_install_itemscore_extra() -> None:
    """No source file or page says `pip install 'itemscore[...]'`: no index publishes it."""
    pattern = re.compile(r"pip install ['\"]?itemscore\[")
    said = []
    for folder in ("core", "metrics_builtin", "docs"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".py", ".md") and path.name != "_extras.py":
                for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                    if pattern.search(line) and "finds nothing" not in line:
                        said.append(f"{path.relative_to(ROOT)}:{number}")
    assert said == []


# -- narrow terminals: wrap between words, never cut -------------------------------------------


def _words_missing(output: str, texts: list[str]) -> list[str]:
    """The words of ``texts`` that ``output`` does not show whole (cut, split or dropped)."""
    shown = set(output.split())
    return sorted({word for text in texts for word in text.split() if word not in shown})


@pytest.mark.parametrize("columns", [60, 80])
def test_plugins_on_a_narrow_terminal_cuts_no_cell(columns: int) -> None:
    """`COLUMNS=80 itemscore plugins`: every kind, name and package whole, no `…`."""
    runner = CliRunner()
    listed = json.loads(runner.invoke(cli, ["plugins", "--json"]).output)
    ran = runner.invoke(cli, ["plugins"], env={"COLUMNS": str(columns)})
    assert ran.exit_code == 0, ran.output
    assert "…" not in ran.output
    assert max(map(len, ran.output.splitlines())) <= columns
    fields = ("kind", "entry_point", "id", "distribution", "version", "status")
    assert _words_missing(ran.output, [str(e[f]) for e in listed for f in fields if e[f]]) == []


@pytest.mark.parametrize("columns", [60, 80])
@pytest.mark.parametrize("name", ["exact_match", "llm_judge"])
def test_metrics_show_on_a_narrow_terminal_splits_no_word(columns: int, name: str) -> None:
    """`COLUMNS=60 itemscore metrics show exact_match`: descriptions wrap between words."""
    runner = CliRunner()
    detail = json.loads(runner.invoke(cli, ["metrics", "show", name, "--json"]).output)
    ran = runner.invoke(cli, ["metrics", "show", name], env={"COLUMNS": str(columns)})
    assert ran.exit_code == 0, ran.output
    assert "…" not in ran.output
    assert max(map(len, ran.output.splitlines())) <= columns
    texts = [detail["description"]]
    for option in detail["options"]:
        texts += [option["name"], option["type"], option["default_text"], option["description"]]
    assert _words_missing(ran.output, texts) == []


@pytest.mark.parametrize("columns", [60, 80])
def test_the_metrics_list_on_a_narrow_terminal_splits_no_word(columns: int) -> None:
    """`COLUMNS=60 itemscore metrics`: ids, packages and descriptions whole."""
    runner = CliRunner()
    listed = json.loads(runner.invoke(cli, ["metrics", "--json"]).output)
    ran = runner.invoke(cli, ["metrics"], env={"COLUMNS": str(columns)})
    assert "…" not in ran.output
    texts = [str(e[f]) for e in listed for f in ("id", "description", "distribution") if e[f]]
    assert _words_missing(ran.output, texts) == []
