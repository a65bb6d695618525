"""Tests for itemscore._entrypoints: entry-point groups with their distributions, switches, loads.

The installed entry points are faked by patching ``importlib.metadata.entry_points`` (the
``plugins`` fixture of conftest.py); ``tests/test_cli_plugins.py`` installs real distributions.
"""

from __future__ import annotations

import sys
from importlib import metadata
from typing import TYPE_CHECKING

import pytest

from itemscore import _entrypoints
from itemscore._entrypoints import (
    AUTOLOAD_ENV,
    DISABLE_ENV,
    autoload_enabled,
    disable,
    disabled_entry_points,
    entry_points,
    load,
)

if TYPE_CHECKING:
    from conftest import Plugins

GROUP = "itemscore.metrics"


@pytest.fixture
def fakes(plugins: Plugins) -> Plugins:
    """Replace every installed entry point, itemscore's own too, with the ones the test declares."""
    plugins.own = False
    return plugins


@pytest.mark.parametrize(
    ("value", "enabled"),
    [
        pytest.param(None, True, id="unset"),
        pytest.param("", True, id="empty"),
        pytest.param("0", True, id="zero"),
        pytest.param("false", True, id="false"),
        pytest.param("1", False, id="one"),
        pytest.param("true", False, id="true"),
        pytest.param(" YES ", False, id="yes-padded"),
    ],
)
def test_autoload_follows_the_environment_variable(
    monkeypatch: pytest.MonkeyPatch, value: str | None, enabled: bool
) -> None:
    """ITEMSCORE_DISABLE_PLUGIN_AUTOLOAD set to a true value disables autoloading."""
    if value is None:
        monkeypatch.delenv(AUTOLOAD_ENV, raising=False)
    else:
        monkeypatch.setenv(AUTOLOAD_ENV, value)
    assert autoload_enabled() is enabled


def test_each_entry_point_keeps_its_distribution_name_and_version(fakes: Plugins) -> None:
    """A ref carries the declaring distribution's name and version, and the entry point."""
    fakes.entry_point("upper", "pkg.mod:Upper", "upper-metrics", version="2.3.1")
    (ref,) = entry_points(GROUP)
    assert (ref.name, ref.value) == ("upper", "pkg.mod:Upper")
    assert (ref.distribution, ref.version) == ("upper-metrics", "2.3.1")
    assert ref.builtin is False


def test_an_entry_point_without_a_distribution_has_none(fakes: Plugins) -> None:
    """An entry point not tied to a distribution is kept, with distribution None."""
    fakes.entry_point("loose", "pkg.mod:Loose", None)
    (ref,) = entry_points(GROUP)
    assert (ref.distribution, ref.version, ref.builtin) == (None, None, False)


def test_only_the_requested_group_is_returned(fakes: Plugins) -> None:
    """Entry points of other groups are not returned."""
    fakes.entry_point("a", "pkg:A", "pkg")
    fakes.entry_point("b", "pkg:B", "pkg", group="itemscore.plugins")
    assert [r.name for r in entry_points(GROUP)] == ["a"]
    assert [r.name for r in entry_points("itemscore.plugins")] == ["b"]


def test_the_same_distribution_found_twice_is_listed_once(fakes: Plugins) -> None:
    """One distribution seen in two sys.path folders gives one ref per entry point."""
    fakes.entry_point("upper", "pkg.mod:Upper", "upper-metrics", version="1.0")
    fakes.entry_point("upper", "pkg.mod:Upper", "upper-metrics", version="1.0")
    assert [(r.name, r.distribution) for r in entry_points(GROUP)] == [("upper", "upper-metrics")]


def test_two_distributions_with_one_entry_point_name_are_both_kept(fakes: Plugins) -> None:
    """Unlike pluggy, a taken entry-point name does not hide the other distribution's."""
    fakes.entry_point("upper", "a.mod:Upper", "dist-a")
    fakes.entry_point("upper", "b.mod:Upper", "dist-b")
    assert sorted(r.distribution or "" for r in entry_points(GROUP)) == ["dist-a", "dist-b"]


@pytest.mark.parametrize(
    "host_name",
    [
        pytest.param("itemscore", id="canonical"),
        pytest.param("ItemScore", id="capitalised"),
    ],
)
def test_itemscore_own_entry_points_come_first(fakes: Plugins, host_name: str) -> None:
    """The host's entry points sort before third-party ones, each part by name."""
    fakes.entry_point("aaa", "third:A", "third")
    fakes.entry_point("zzz", "itemscore.x:Z", host_name)
    fakes.entry_point("mmm", "itemscore.x:M", host_name)
    refs = entry_points(GROUP)
    assert [r.name for r in refs] == ["mmm", "zzz", "aaa"]
    assert [r.builtin for r in refs] == [True, True, False]


@pytest.mark.parametrize(
    "how",
    [pytest.param("env", id="environment"), pytest.param("argument", id="argument")],
)
def test_disabled_autoload_keeps_only_itemscore_entry_points(
    fakes: Plugins, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """With autoload off, third-party and distribution-less entry points are left out."""
    fakes.entry_point("answered-rate", "itemscore.m:A", "itemscore")
    fakes.entry_point("upper", "third:Upper", "third")
    fakes.entry_point("loose", "loose:Loose", None)
    if how == "env":
        monkeypatch.setenv(AUTOLOAD_ENV, "1")
        refs = entry_points(GROUP)
    else:
        refs = entry_points(GROUP, autoload=False)
    assert [r.name for r in refs] == ["answered-rate"]
    assert len(entry_points(GROUP, autoload=True)) == 3


def test_listing_entry_points_imports_nothing(fakes: Plugins) -> None:
    """Walking a group never imports the modules the entry points name."""
    module = fakes.module("plugin", "Thing = 'loaded'\n")
    fakes.entry_point("p", f"{module}:Thing", "p")
    refs = entry_points(GROUP)
    assert [r.name for r in refs] == ["p"]
    assert module not in sys.modules
    assert refs[0].entry_point.load() == "loaded"
    assert module in sys.modules


def test_the_real_builtin_entry_point_is_found() -> None:
    """The root pyproject declares answered-rate in itemscore.metrics, from itemscore."""
    refs = {r.name: r for r in entry_points(GROUP, autoload=False)}
    assert refs["answered-rate"].value == "itemscore.metrics_builtin.answered_rate:AnsweredRate"
    assert refs["answered-rate"].builtin
    assert refs["answered-rate"].version == metadata.version("itemscore")


# -- switching entry points off ----------------------------------------------------------------


@pytest.fixture
def nothing_disabled(monkeypatch: pytest.MonkeyPatch) -> None:
    """No ``-p no:NAME`` left from another test, none left after; the variable unset."""
    monkeypatch.setattr(_entrypoints, "_DISABLED", set())
    monkeypatch.delenv(DISABLE_ENV, raising=False)


@pytest.mark.parametrize(
    ("names", "left"),
    [
        pytest.param("upper", ["lower", "other"], id="entry-point"),
        pytest.param("Upper_Metrics", ["other"], id="distribution-any-spelling"),
        pytest.param("upper-metrics:lower", ["other", "upper"], id="distribution-and-name"),
        pytest.param(" upper , other ,", ["lower"], id="several-padded"),
        pytest.param("", ["lower", "other", "upper"], id="empty"),
    ],
)
def test_itemscore_disable_plugins_switches_entry_points_off(
    fakes: Plugins, monkeypatch: pytest.MonkeyPatch, nothing_disabled: None, names: str,
    left: list[str],
) -> None:  # fmt: skip
    """ITEMSCORE_DISABLE_PLUGINS names entry points or distributions; they are listed as off."""
    fakes.entry_point("upper", "pkg:Upper", "upper-metrics")
    fakes.entry_point("lower", "pkg:Lower", "upper-metrics")
    fakes.entry_point("other", "pkg:Other", "other-metrics")
    monkeypatch.setenv(DISABLE_ENV, names)
    assert sorted(r.name for r in entry_points(GROUP)) == left
    off = sorted(r.name for r in disabled_entry_points(GROUP))
    assert off == sorted({"upper", "lower", "other"} - set(left))


def test_p_no_name_switches_off_for_the_rest_of_the_process(
    fakes: Plugins, nothing_disabled: None
) -> None:
    """disable() (-p no:NAME) adds to the variable's names; a blank name switches nothing off."""
    fakes.entry_point("upper", "pkg:Upper", "upper-metrics")
    fakes.entry_point("other", "pkg:Other", "other-metrics")
    disable(["other-metrics", "  "])
    assert [r.name for r in entry_points(GROUP)] == ["upper"]
    assert [(r.name, r.distribution) for r in disabled_entry_points(GROUP)] == [
        ("other", "other-metrics")
    ]


def test_with_autoload_off_third_party_entry_points_are_listed_as_disabled(
    fakes: Plugins, monkeypatch: pytest.MonkeyPatch, nothing_disabled: None
) -> None:
    """ITEMSCORE_DISABLE_PLUGIN_AUTOLOAD=1: what it leaves out is listed as switched off."""
    fakes.entry_point("answered-rate", "itemscore.m:A", "itemscore")
    fakes.entry_point("upper", "third:Upper", "third")
    monkeypatch.setenv(AUTOLOAD_ENV, "1")
    assert [r.name for r in disabled_entry_points(GROUP)] == ["upper"]
    assert [r.name for r in disabled_entry_points(GROUP, autoload=True)] == []


# -- loading ------------------------------------------------------------------------------------


def test_a_failed_load_is_recorded_not_raised_and_tried_once(fakes: Plugins) -> None:
    """load() turns an import error into a one-line description, and imports once per process."""
    log = fakes.folder / "imports.log"
    module = fakes.module(
        "broken",
        f"with open({str(log)!r}, 'a') as f:\n    f.write('x')\nraise RuntimeError('boom')\n",
    )
    fakes.entry_point("broken", f"{module}:M", "broken-dist")
    (ref,) = entry_points(GROUP)
    first = load(ref)
    assert (first.ok, first.obj, first.error) == (False, None, "RuntimeError: boom")
    assert load(ref) is first
    assert log.read_text() == "x"


def test_a_load_gives_the_object_the_entry_point_names(fakes: Plugins) -> None:
    """A dotted attribute after the colon is followed, as importlib.metadata does."""
    module = fakes.module("nested", "class Outer:\n    class Inner:\n        pass\n")
    fakes.entry_point("nested", f"{module}:Outer.Inner", "nested-dist")
    (ref,) = entry_points(GROUP)
    loaded = load(ref)
    assert loaded.ok
    assert loaded.obj is sys.modules[module].Outer.Inner


def test_a_keyboard_interrupt_while_loading_passes_through(fakes: Plugins) -> None:
    """Only exceptions become diagnostics: an interrupt stops the command."""
    module = fakes.module("interrupt", "raise KeyboardInterrupt\n")
    fakes.entry_point("interrupt", f"{module}:M", "interrupt-dist")
    (ref,) = entry_points(GROUP)
    with pytest.raises(KeyboardInterrupt):
        load(ref)
