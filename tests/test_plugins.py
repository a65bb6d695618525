"""Tests for itemscore._plugins: the plugin manager and the ``itemscore.plugins`` group."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import pluggy
import pytest

import itemscore
from itemscore import ItemResult, hookimpl
from itemscore._entrypoints import AUTOLOAD_ENV

if TYPE_CHECKING:
    from conftest import Plugins

GROUP = "itemscore.plugins"

OBSERVER = """
from itemscore import hookimpl

FINISHED = []

@hookimpl
def itemscore_run_finished(result):
    FINISHED.append(result)
"""


def _score_once() -> itemscore.RunResult:
    return itemscore.score([ItemResult(id="1", output="x")], ["answered_rate"])


def test_the_manager_is_an_itemscore_plugin_manager_with_the_hookspecs(plugins: Plugins) -> None:
    """plugin_manager() is a pluggy PluginManager for project 'itemscore' with every hook."""
    pm = itemscore.plugin_manager()
    assert isinstance(pm, pluggy.PluginManager)
    assert pm.project_name == "itemscore"
    for hook in (
        "itemscore_add_metrics",
        "itemscore_run_started",
        "itemscore_item_scored",
        "itemscore_run_finished",
        "itemscore_export_formats",
    ):
        assert getattr(pm.hook, hook).spec is not None


def test_the_manager_is_shared_until_reset(plugins: Plugins) -> None:
    """plugin_manager() returns one manager per process; reset_registry() builds a new one."""
    first = itemscore.plugin_manager()
    assert itemscore.plugin_manager() is first
    itemscore.reset_registry()
    assert itemscore.plugin_manager() is not first


def test_a_plugin_from_the_entry_point_group_is_loaded_and_called(plugins: Plugins) -> None:
    """A module declared in itemscore.plugins is registered under its entry-point name."""
    module = plugins.add("observer", OBSERVER)
    pm = itemscore.plugin_manager()
    assert pm.has_plugin("observer")
    assert pm.get_plugin("observer") is sys.modules[module]
    result = _score_once()
    assert [result] == sys.modules[module].FINISHED


def test_an_object_in_a_module_can_be_the_plugin(plugins: Plugins) -> None:
    """An entry point may name an object (module:attr) whose methods are the hooks."""
    source = """
    from itemscore import hookimpl

    class Counter:
        def __init__(self):
            self.started = 0

        @hookimpl
        def itemscore_run_started(self, suite_id, config, n_items):
            self.started += 1

    COUNTER = Counter()
    """
    module = plugins.add("counter", source, module="counter_mod")
    plugins.eps.pop()
    plugins.entry_point("counter", f"{module}:COUNTER", group=GROUP)
    _score_once()
    _score_once()
    assert sys.modules[module].COUNTER.started == 2


@pytest.mark.parametrize(
    ("source", "error"),
    [
        pytest.param("raise RuntimeError('plugin exploded')\n", "RuntimeError: plugin exploded",
                     id="raises-on-import"),
        pytest.param("import not_a_module_anywhere_x\n", "ModuleNotFoundError",
                     id="missing-dependency"),
        pytest.param(
            "from itemscore import hookimpl\n"
            "@hookimpl\ndef itemscore_run_started(suite_id, wrong_argument):\n    pass\n",
            "PluginValidationError", id="hook-with-a-wrong-signature",
        ),
    ],
)  # fmt: skip
def test_a_broken_plugin_is_recorded_and_the_others_still_load(
    plugins: Plugins, source: str, error: str
) -> None:
    """A plugin that fails to load or register lands in .broken; later plugins still load."""
    plugins.add("aaa-broken", source, dist="broken-dist")
    good = plugins.add("zzz-observer", OBSERVER)
    pm = itemscore.plugin_manager()
    (broken,) = pm.broken
    assert broken.ref.name == "aaa-broken"
    assert broken.ref.distribution == "broken-dist"
    assert error in broken.error
    assert not pm.has_plugin("aaa-broken")
    assert pm.has_plugin("zzz-observer")
    result = _score_once()
    assert [result] == sys.modules[good].FINISHED


def test_a_plugin_from_the_same_distribution_found_twice_loads_once(plugins: Plugins) -> None:
    """One distribution seen twice on sys.path registers its plugin once, with no error."""
    module = plugins.add("observer", OBSERVER)
    plugins.entry_point("observer", module, group=GROUP)
    pm = itemscore.plugin_manager()
    assert pm.broken == []
    result = _score_once()
    assert [result] == sys.modules[module].FINISHED


def test_two_distributions_with_one_plugin_name_are_not_silently_dropped(
    plugins: Plugins,
) -> None:
    """Two distributions declaring one plugin name: both load, or the clash is reported."""
    first = plugins.add("report", OBSERVER, dist="dist-a", module="report_a")
    second = plugins.add("report", OBSERVER, dist="dist-b", module="report_b")
    pm = itemscore.plugin_manager()
    loaded = [m for m in (first, second) if pm.is_registered(sys.modules.get(m))]
    reported = [b.ref.distribution for b in pm.broken]
    assert len(loaded) == 2 or reported == ["dist-b"]


def test_disabled_autoload_loads_no_third_party_plugin(
    plugins: Plugins, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ITEMSCORE_DISABLE_PLUGIN_AUTOLOAD=1 no itemscore.plugins entry point is imported."""
    module = plugins.add("observer", OBSERVER)
    monkeypatch.setenv(AUTOLOAD_ENV, "1")
    itemscore.reset_registry()
    pm = itemscore.plugin_manager()
    assert not pm.has_plugin("observer")
    assert module not in sys.modules
    _score_once()
    assert module not in sys.modules


def test_in_process_plugins_work_with_autoload_disabled(
    plugins: Plugins, monkeypatch: pytest.MonkeyPatch
) -> None:
    """plugin_manager().register(obj) works whatever the autoload switch says."""
    monkeypatch.setenv(AUTOLOAD_ENV, "1")
    itemscore.reset_registry()
    seen: list[int] = []

    class Plugin:
        @hookimpl
        def itemscore_run_started(self, n_items: int) -> None:
            seen.append(n_items)

    itemscore.plugin_manager().register(Plugin())
    _score_once()
    assert seen == [1]


def test_plugins_load_only_when_the_manager_is_first_used(plugins: Plugins) -> None:
    """Declaring a plugin imports nothing until plugin_manager() is called."""
    module = plugins.add("observer", OBSERVER)
    assert module not in sys.modules
    itemscore.plugin_manager()
    assert module in sys.modules
