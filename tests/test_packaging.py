"""Packaging: the folders install as ``itemscore`` only, and built-ins use only the public API."""

from __future__ import annotations

import ast
import configparser
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


def _python_isolated(code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` with ``-I``: no current folder, no PYTHON* variables on sys.path."""
    return subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )


@pytest.mark.parametrize("name", ["core", "metrics_builtin"])
def test_the_source_folders_are_not_importable_by_their_own_names(name: str) -> None:
    """Nothing named core or metrics_builtin is installed at the top level."""
    done = _python_isolated(f"import {name}")
    assert done.returncode != 0
    assert f"No module named '{name}'" in done.stderr


@pytest.mark.parametrize("name", ["itemscore", "itemscore.metrics_builtin.answered_rate"])
def test_the_installed_names_import_in_the_same_conditions(name: str) -> None:
    """The same isolated interpreter does import the installed package names."""
    done = _python_isolated(f"import {name}")
    assert done.returncode == 0, done.stderr


def _imported_modules(path: Path) -> Iterator[tuple[int, str]]:
    """Every module ``path`` imports (absolute names; relative ones start with dots)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            prefix = "." * node.level
            if node.module:
                yield node.lineno, prefix + node.module
            for alias in node.names:  # `from itemscore import _registry` is private too
                yield node.lineno, f"{prefix}{node.module or ''}.{alias.name}".replace("..", ".")


def _private_import(module: str) -> bool:
    """Whether ``module`` is off limits to a metric: itemscore's private modules or folders.

    The built-ins' own package (``itemscore.metrics_builtin``, e.g. a shared helper module) is
    theirs to import, as a third-party plugin imports its own modules.
    """
    parts = module.split(".")
    if module.startswith("."):
        return True  # relative: reaches into the host's folders by file layout
    if parts[0] in ("core", "metrics_builtin"):
        return True
    if parts[:2] == ["itemscore", "metrics_builtin"]:
        return False
    return parts[0] == "itemscore" and any(p.startswith("_") for p in parts[1:])


BUILTIN_FILES = sorted((ROOT / "metrics_builtin").glob("*.py"))


@pytest.mark.parametrize("path", BUILTIN_FILES, ids=[p.name for p in BUILTIN_FILES])
def test_builtin_metrics_import_only_the_public_api(path: Path) -> None:
    """metrics_builtin/*.py import from itemscore's public modules, like a third-party plugin."""
    private = [
        f"{path.name}:{line}: {module}"
        for line, module in _imported_modules(path)
        if _private_import(module)
    ]
    assert private == []


@pytest.mark.parametrize(
    ("module", "private"),
    [
        pytest.param("itemscore", False, id="facade"),
        pytest.param("itemscore.text", False, id="text"),
        pytest.param("itemscore.aggregate.ratio", False, id="aggregate-name"),
        pytest.param("itemscore._registry", True, id="private-module"),
        pytest.param("itemscore._registry.register", True, id="from-private"),
        pytest.param("itemscore._metric", True, id="private-metric"),
        pytest.param(".._records", True, id="relative"),
        pytest.param("core", True, id="folder-name"),
        pytest.param("metrics_builtin.f1", True, id="builtin-folder-name"),
        pytest.param("itemscore.metrics_builtin._comparison", False, id="own-package"),
    ],
)
def test_the_private_import_rule_itself(module: str, private: bool) -> None:
    """The check above flags private and folder imports and lets the public API through."""
    assert _private_import(module) is private


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built the way a release is built, from a copy of the sources.

    Building in a copy keeps the tree's ``build/`` (the editable install's link tree) out of it,
    so a module deleted from the tree can never linger in the wheel.
    """
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    for name in ("core", "metrics_builtin"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "-q", "-w", str(out), str(source)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (path,) = out.glob("itemscore-*.whl")
    return path


@pytest.mark.slow
def test_the_wheel_holds_only_the_itemscore_package(wheel: Path) -> None:
    """Every file of the wheel is under itemscore/ or its .dist-info folder."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    outside = [n for n in names if not n.startswith(("itemscore/", "itemscore-"))]
    assert outside == []
    dist_info = {n.split("/")[0] for n in names if n.startswith("itemscore-")}
    assert len(dist_info) == 1
    assert dist_info.pop().endswith(".dist-info")
    assert not any(n.startswith(("core/", "metrics_builtin/")) for n in names)


@pytest.mark.slow
def test_the_wheel_holds_the_typing_marker_builtins_and_demo_data(wheel: Path) -> None:
    """py.typed, the built-in metrics and the bundled demo data ship in the wheel."""
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert "itemscore/py.typed" in names
    assert "itemscore/__init__.py" in names
    assert "itemscore/metrics_builtin/__init__.py" in names
    assert "itemscore/metrics_builtin/answered_rate.py" in names
    demo = sorted((ROOT / "core" / "demo_data").glob("*"))
    assert demo, "core/demo_data holds no files"
    assert {f"itemscore/demo_data/{p.name}" for p in demo if p.is_file()} <= names
    builtins = {f"itemscore/metrics_builtin/{p.name}" for p in BUILTIN_FILES}
    assert builtins <= names


@pytest.mark.slow
def test_the_wheel_declares_the_builtin_entry_points(wheel: Path) -> None:
    """entry_points.txt declares answered-rate in itemscore.metrics, and the command."""
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt")]
        text = archive.read(name).decode("utf-8")
    parser = configparser.ConfigParser(delimiters=("=",))
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(text)
    metrics = dict(parser["itemscore.metrics"])
    assert metrics["answered-rate"] == "itemscore.metrics_builtin.answered_rate:AnsweredRate"
    assert parser["console_scripts"]["itemscore"] == "itemscore.cli:main"
