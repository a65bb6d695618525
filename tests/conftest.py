"""Fake plugin installations, shared by the registry, plugin, hook and entry-point tests.

Test modules cannot import this file at run time (``--import-mode=importlib``, no package):
they get the helpers through the fixtures, and name the types under ``TYPE_CHECKING`` only.
"""

from __future__ import annotations

import os
import sys
import textwrap
import uuid
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

import itemscore
from itemscore._entrypoints import AUTOLOAD_ENV

# A defaults file in the home folder of whoever runs the tests must not change their numbers;
# the tests of that file set up one of their own (tests/test_cli_user_config.py).
os.environ["ITEMSCORE_NO_USER_CONFIG"] = "1"

METRICS_GROUP = "itemscore.metrics"
PLUGINS_GROUP = "itemscore.plugins"

#: What :meth:`Plugins.metric` writes: metric ``M``, ok when the output is in upper case.
METRIC_SOURCE = """
from itemscore import Metric

class M(Metric):
    metric_id = {metric_id!r}
    description = "Test metric {metric_id}."

    def score_item(self, item, ctx):
        return self.ok() if item.output and item.output.isupper() else self.fail()
"""


class FakeDist:
    """The part of ``importlib.metadata.Distribution`` itemscore reads."""

    def __init__(self, name: str, version: str = "1.0") -> None:
        self.metadata = {"Name": name}
        self.version = version


class Plugins:
    """Fake installed plugins: modules in a temporary folder, entry points pointing at them."""

    def __init__(self, folder: Path, prefix: str) -> None:
        self.folder = folder
        self.prefix = prefix
        self.eps: list[Any] = []
        #: Whether itemscore's own entry points stay installed next to the fakes.
        self.own = True

    def module(self, name: str, source: str) -> str:
        """Write module ``<prefix>_<name>`` and return its full name."""
        full = f"{self.prefix}_{name}"
        (self.folder / f"{full}.py").write_text(textwrap.dedent(source))
        return full

    def entry_point(
        self,
        name: str,
        value: str,
        dist: str | None = "fake-dist",
        group: str = METRICS_GROUP,
        *,
        version: str = "1.0",
    ) -> None:
        """Declare an entry point of distribution ``dist`` (``None``: of no distribution)."""
        ep: Any = metadata.EntryPoint(name=name, value=value, group=group)
        self.eps.append(ep if dist is None else ep._for(FakeDist(dist, version)))

    def metric(
        self, ep_name: str, metric_id: str, dist: str = "fake-dist", *, module: str | None = None
    ) -> str:
        """Declare a metric class in its own module (or ``module``), with an entry point."""
        source = METRIC_SOURCE.format(metric_id=metric_id)
        mod = self.module(module or metric_id.replace("-", "_"), source)
        self.entry_point(ep_name, f"{mod}:M", dist)
        return mod

    def add(self, ep_name: str, source: str, dist: str = "fake-dist", module: str = "") -> str:
        """Write a plugin module and declare it in ``itemscore.plugins``; return the module."""
        full = self.module(module or ep_name.replace("-", "_"), source)
        self.entry_point(ep_name, full, dist, PLUGINS_GROUP)
        return full

    def imported(self, module: str) -> bool:
        """Whether the module was imported."""
        return module in sys.modules


@pytest.fixture
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Autoload on, no registry or plugin manager left from before, none left after."""
    monkeypatch.delenv(AUTOLOAD_ENV, raising=False)
    itemscore.reset_registry()
    yield
    itemscore.reset_registry()


@pytest.fixture
def plugins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_registry: None
) -> Iterator[Plugins]:
    """Installed entry points of the itemscore groups: itemscore's own + the fakes of the test.

    ``importlib.metadata.entry_points`` is patched, as pluggy's tests patch
    ``importlib.metadata.distributions``; other groups, and calls without a group, are real.
    """
    real = metadata.entry_points
    fake = Plugins(tmp_path, f"fake_{uuid.uuid4().hex[:8]}")

    def entry_points(**params: Any) -> Any:
        found = real(**params)
        group = params.get("group")
        if not isinstance(group, str) or not group.startswith("itemscore."):
            return found
        own = [ep for ep in found if fake.own and ep.dist and ep.dist.name == "itemscore"]
        return own + [ep for ep in fake.eps if ep.group == group]

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield fake
    for name in [m for m in sys.modules if m.startswith(fake.prefix)]:
        del sys.modules[name]
