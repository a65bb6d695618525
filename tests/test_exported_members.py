"""The public names: every ``__all__`` is sorted, complete and importable."""

from __future__ import annotations

import importlib
import subprocess
import sys
from importlib import metadata
from types import ModuleType

import pytest

import itemscore

PUBLIC_MODULES = ["itemscore", "itemscore.text", "itemscore.aggregate", "itemscore.hookspecs"]

#: The names DESIGN.md's public contract requires of the top-level package.
REQUIRED = {
    "itemscore": {
        "Metric",
        "MetricContext",
        "MetricSpec",
        "ItemResult",
        "ItemScore",
        "Status",
        "Estimate",
        "Measurement",
        "Suite",
        "RunResult",
        "run",
        "score",
        "rescore",
        "register",
    },
    "itemscore.text": {"Normalizer", "tokenize", "extract_label"},
    "itemscore.aggregate": {"ratio", "mean", "geomean", "percentiles"},
    "itemscore.hookspecs": {"hookimpl"},
}


def _module(name: str) -> ModuleType:
    return importlib.import_module(name)


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_all_is_sorted_and_unique(name: str) -> None:
    """__all__ is sorted (as sorted() orders it) with no name twice."""
    exported = list(_module(name).__all__)
    assert exported == sorted(exported)
    assert len(exported) == len(set(exported))


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_every_exported_name_exists(name: str) -> None:
    """Each name in __all__ is an attribute of the module."""
    module = _module(name)
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert missing == []


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_the_contract_names_are_exported(name: str) -> None:
    """__all__ holds at least the names the public contract promises."""
    assert REQUIRED[name] <= set(_module(name).__all__)


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_star_import_gives_exactly_all(name: str) -> None:
    """``from module import *`` binds exactly the names of __all__."""
    namespace: dict[str, object] = {}
    exec(f"from {name} import *", namespace)
    namespace.pop("__builtins__")
    assert set(namespace) == set(_module(name).__all__)


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_exported_objects_are_not_private(name: str) -> None:
    """No exported name starts with an underscore, except __version__."""
    private = [n for n in _module(name).__all__ if n.startswith("_") and n != "__version__"]
    assert private == []


def test_version_comes_from_the_installed_metadata() -> None:
    """itemscore.__version__ is the installed distribution's version."""
    assert itemscore.__version__ == metadata.version("itemscore")
    assert "__version__" in itemscore.__all__


def test_import_itemscore_loads_nothing_python_has_not() -> None:
    """`import itemscore` adds itself and __future__ to what Python loads at start-up.

    The public names are imported on first use, so a command pays only for what it uses.
    """
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import itemscore\n"
        "added = sorted(set(sys.modules) - before)\n"
        "print(' '.join(added))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert set(proc.stdout.split()) <= {"itemscore", "__future__"}
