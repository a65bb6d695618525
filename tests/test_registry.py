"""Tests for itemscore._registry: lookup, lazy loading, broken plugins, collisions, @register."""

from __future__ import annotations

from collections.abc import Iterator
from importlib import metadata
from typing import TYPE_CHECKING, Any

import pytest

import itemscore
from itemscore import (
    ConfigError,
    ItemResult,
    ItemScore,
    Metric,
    MetricCollisionError,
    MetricContext,
    PluginLoadError,
    Registry,
    UnknownMetricError,
    hookimpl,
    register,
)
from itemscore._entrypoints import AUTOLOAD_ENV
from itemscore._registry import _REGISTERED, default_registry, unregister

if TYPE_CHECKING:
    from conftest import Plugins

BUILTIN_TARGET = "itemscore.metrics_builtin.answered_rate:AnsweredRate"


@pytest.fixture(autouse=True)
def clean_registrations() -> Iterator[None]:
    """Forget the ``@register`` calls a test makes."""
    before = dict(_REGISTERED)
    yield
    _REGISTERED.clear()
    _REGISTERED.update(before)
    itemscore.reset_registry()


def _item(output: str | None = "YES") -> ItemResult:
    return ItemResult(id="1", output=output, expected="YES")


# -- lookup -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("answered_rate", id="by-id"),
        pytest.param("answered-rate", id="by-entry-point-name"),
    ],
)
def test_a_metric_is_found_by_id_and_by_entry_point_name(plugins: Plugins, name: str) -> None:
    """The built-in is found under its id and its differing entry-point name."""
    from itemscore.metrics_builtin.answered_rate import AnsweredRate

    registry = Registry()
    assert registry.get(name) is AnsweredRate
    info = registry.find(name)
    assert (info.id, info.entry_point, info.distribution) == (
        "answered_rate",
        "answered-rate",
        "itemscore",
    )
    assert info.target == BUILTIN_TARGET
    assert info.version == metadata.version("itemscore")


def test_measurements_use_the_id_when_asked_by_entry_point_name(plugins: Plugins) -> None:
    """A metric asked for by entry-point name is labelled by its id in the run."""
    result = itemscore.score([_item()], ["answered-rate"], suite_id="s")
    assert list(result.measurements) == ["s.answered_rate"]
    assert result.items[0].scores["answered_rate"].status == "ok"


def test_a_metric_with_hyphens_in_its_id_is_found_by_id(plugins: Plugins) -> None:
    """An id with hyphens is found through an entry point spelt with underscores."""
    plugins.metric("shout_case", "shout-case")
    assert Registry().get("shout-case").metric_id == "shout-case"


# -- laziness -----------------------------------------------------------------------------------


def test_nothing_is_imported_before_a_metric_is_asked_for(plugins: Plugins) -> None:
    """Building a registry (and listing entry points) imports no plugin module."""
    wanted = plugins.metric("shout", "shout")
    Registry()
    assert not plugins.imported(wanted)


def test_a_lookup_loads_every_metric_and_a_raising_plugin_breaks_nothing(
    plugins: Plugins,
) -> None:
    """Looking a metric up imports every metric plugin; one that raises is recorded, not fatal.

    Every plugin is loaded because a metric's id is a class attribute: only then is it known
    that no other plugin claims the id asked for.
    """
    wanted = plugins.metric("shout", "shout")
    other = plugins.metric("quiet", "quiet")
    tripwire = plugins.module("tripwire", "raise RuntimeError('no')\n")
    plugins.entry_point("tripwire", f"{tripwire}:M")
    registry = Registry()
    assert registry.get("shout").metric_id == "shout"
    assert plugins.imported(wanted)
    assert plugins.imported(other)
    broken = [i for i in registry.infos() if i.status == "broken"]
    assert [(i.entry_point, i.error) for i in broken] == [("tripwire", "RuntimeError: no")]


def test_a_metric_is_found_by_entry_point_name_when_its_id_differs(plugins: Plugins) -> None:
    """Looking a metric up by its entry-point name gives the class it names."""
    plugins.metric("upper-case", "upper_case_v2", module="upper")
    plugins.metric("quiet", "quiet")
    assert Registry().get("upper-case").metric_id == "upper_case_v2"


def test_listing_loads_every_plugin(plugins: Plugins) -> None:
    """infos() imports every entry point, in a stable order sorted by id."""
    first = plugins.metric("zeta", "zeta")
    second = plugins.metric("alpha", "alpha")
    infos = Registry().infos()
    assert plugins.imported(first)
    assert plugins.imported(second)
    ids = [i.id or "" for i in infos]
    assert ids == sorted(ids)
    assert {"alpha", "zeta", "answered_rate"} <= set(ids)


# -- broken plugins -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "error"),
    [
        pytest.param("raise RuntimeError('boom at import')\n", "RuntimeError: boom at import",
                     id="raises-on-import"),
        pytest.param("import not_a_module_anywhere_x\n", "ModuleNotFoundError",
                     id="missing-dependency"),
        pytest.param("def f(:\n", "SyntaxError", id="syntax-error"),
        pytest.param("class M:\n    metric_id = 'x'\n",
                     "is not a subclass of itemscore.Metric", id="not-a-metric"),
        pytest.param("from itemscore import Metric\nclass M(Metric):\n    pass\n",
                     "has no `metric_id`", id="metric-without-id"),
        pytest.param("M = 42\n", "is not a subclass of itemscore.Metric", id="not-a-class"),
    ],
)  # fmt: skip
def test_a_broken_plugin_is_listed_with_its_error_and_breaks_nothing(
    plugins: Plugins, source: str, error: str
) -> None:
    """A plugin that cannot load is listed as broken, with the reason; the others still work."""
    broken = plugins.module("broken", source)
    plugins.entry_point("broken-metric", f"{broken}:M", dist="broken-dist")
    plugins.metric("shout", "shout")
    registry = Registry()
    infos = registry.infos()
    assert infos[-1].status == "broken"
    (bad,) = [i for i in infos if i.status == "broken"]
    assert (bad.id, bad.entry_point, bad.distribution) == (None, "broken-metric", "broken-dist")
    assert bad.error is not None
    assert error in bad.error
    assert bad.cls is None
    assert {"shout", "answered_rate"} <= {i.id for i in infos if i.status == "ok"}
    assert registry.get("shout").metric_id == "shout"
    result = itemscore.score([_item()], ["shout", "answered_rate"])
    assert result.items[0].scores["shout"].status == "ok"


def test_asking_for_a_broken_plugin_raises_plugin_load_error(plugins: Plugins) -> None:
    """A broken plugin asked for by name raises PluginLoadError naming it and the cause."""
    broken = plugins.module("broken", "raise RuntimeError('boom at import')\n")
    plugins.entry_point("broken-metric", f"{broken}:M", dist="broken-dist")
    with pytest.raises(PluginLoadError) as caught:
        Registry().get("broken-metric")
    message = str(caught.value)
    assert "'broken-metric'" in message
    assert "broken-dist" in message
    assert "RuntimeError: boom at import" in message
    assert isinstance(caught.value, ImportError)


def test_a_broken_plugin_is_loaded_once(plugins: Plugins) -> None:
    """A failing entry point is tried once per registry, not on every lookup."""
    log = plugins.folder / "imports.log"
    broken = plugins.module(
        "broken",
        f"with open({str(log)!r}, 'a') as f:\n    f.write('x')\nraise RuntimeError('x')\n",
    )
    plugins.entry_point("broken-metric", f"{broken}:M")
    registry = Registry()
    for _ in range(3):
        with pytest.raises(PluginLoadError):
            registry.get("broken-metric")
    registry.infos()
    assert log.read_text() == "x"


def test_an_unknown_name_hints_at_broken_plugins(plugins: Plugins) -> None:
    """When nothing matches and some plugin is broken, the error says so."""
    broken = plugins.module("broken", "raise RuntimeError('x')\n")
    plugins.entry_point("broken-metric", f"{broken}:M")
    with pytest.raises(UnknownMetricError, match=r"failed to load \('broken-metric'\)"):
        Registry().get("nothing_like_this")


# -- unknown names ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "suggestion"),
    [
        pytest.param("answerd_rate", "answered_rate", id="typo-in-id"),
        pytest.param("answered_rat", "answered_rate", id="truncated-id"),
        pytest.param("shuot", "shout", id="typo-in-plugin-id"),
    ],
)
def test_an_unknown_metric_suggests_the_closest_name(
    plugins: Plugins, name: str, suggestion: str
) -> None:
    """An unknown name raises UnknownMetricError with a did-you-mean and the installed ids."""
    plugins.metric("shout", "shout")
    with pytest.raises(UnknownMetricError) as caught:
        Registry().get(name)
    message = str(caught.value)
    assert f"No metric is named {name!r}." in message
    assert "Did you mean" in message
    assert repr(suggestion) in message.split("Did you mean", 1)[1].split("?")[0]
    assert "Installed metrics:" in message
    assert "answered_rate" in message
    assert isinstance(caught.value, LookupError)
    assert isinstance(caught.value, ConfigError)


def test_an_unknown_metric_in_a_run_fails_before_scoring(plugins: Plugins) -> None:
    """score() raises UnknownMetricError for an unknown name, whatever the other metrics."""
    with pytest.raises(UnknownMetricError, match="answered_rate"):
        itemscore.score([_item()], ["answered_rate", "answerd_rate"])


# -- collisions ---------------------------------------------------------------------------------


def test_one_id_from_two_distributions_is_an_error_naming_both(plugins: Plugins) -> None:
    """Two distributions whose entry points give one id: using it raises, naming both."""
    plugins.metric("shout", "shout", dist="dist-a", module="shout_a")
    plugins.metric("shout", "shout", dist="dist-b", module="shout_b")
    with pytest.raises(MetricCollisionError) as caught:
        Registry().get("shout")
    message = str(caught.value)
    assert "'shout'" in message
    assert "'dist-a'" in message
    assert "'dist-b'" in message
    assert caught.value.metric_id == "shout"
    assert len(caught.value.sources) == 2
    assert any("'dist-a'" in s for s in caught.value.sources)
    assert any("'dist-b'" in s for s in caught.value.sources)


def test_a_collision_is_listed_not_raised(plugins: Plugins) -> None:
    """infos() lists both claims of one id as broken, each naming both sources (issue 7.10)."""
    plugins.metric("shout", "shout", dist="dist-a", module="shout_a")
    plugins.metric("loud", "shout", dist="dist-b", module="shout_b")
    infos = Registry().infos()
    claims = [i for i in infos if i.id == "shout"]
    assert [(i.entry_point, i.status) for i in claims] == [("loud", "broken"), ("shout", "broken")]
    for info in claims:
        assert len(info.collision) == 2
        assert info.error is not None
        assert "'dist-a'" in info.error
        assert "'dist-b'" in info.error
    assert {i.id for i in infos if i.status == "ok"} >= {"exact_match", "answered_rate"}


def test_a_plugin_taking_a_builtin_id_under_another_name_collides(plugins: Plugins) -> None:
    """A plugin declaring id token_f1 under another entry point collides (issue 7.11).

    Asking for token_f1 is an error naming both, never silently the built-in.
    """
    plugins.metric("my-tf1", "token_f1", dist="impostor-dist")
    with pytest.raises(MetricCollisionError) as caught:
        Registry().get("token_f1")
    assert "'impostor-dist'" in str(caught.value)
    assert "'itemscore'" in str(caught.value)
    with pytest.raises(MetricCollisionError):
        itemscore.score([_item("YES")], ["token_f1"])


@pytest.mark.parametrize(
    "source",
    [
        "raise ImportError('gone')\n",
        "M = 3\n",
        "from itemscore import Metric\nclass M(Metric):\n    metric_id = 'em2'\n",
    ],
    ids=["broken", "not-a-metric", "another-id"],
)
def test_a_plugin_entry_point_named_like_a_builtin_breaks_nothing(
    plugins: Plugins, source: str
) -> None:
    """An entry point NAMED exact_match, broken or another metric, breaks nothing (issue 7.11).

    -m exact_match, the demo and the API still use the built-in.
    """
    module = plugins.module("squatter", source)
    plugins.entry_point("exact_match", f"{module}:M", dist="squatter-dist")
    assert Registry().get("exact_match").__module__ == "itemscore.metrics_builtin.exact_match"
    result = itemscore.score([ItemResult(id="1", output="a", expected="a")], ["exact_match"])
    assert result.items[0].scores["exact_match"].status == "ok"
    from itemscore._demo import demo_suites

    (qa,) = [s for s in demo_suites() if s.suite_id == "demo_qa"]
    assert itemscore.run(qa).measurements["demo_qa.exact_match"].value is not None


def test_the_same_distribution_seen_twice_is_no_collision(plugins: Plugins) -> None:
    """One distribution found in two sys.path folders is deduplicated, not a collision."""
    module = plugins.metric("shout", "shout", dist="dist-a")
    plugins.entry_point("shout", f"{module}:M", dist="dist-a")
    registry = Registry()
    assert [i.id for i in registry.infos()].count("shout") == 1
    assert registry.get("shout").metric_id == "shout"


def test_a_registration_that_takes_an_installed_id_collides(plugins: Plugins) -> None:
    """@register of another class under an installed metric's id is reported, naming both."""

    @register
    class Impostor(Metric):
        metric_id = "answered_rate"

    with pytest.raises(MetricCollisionError) as caught:
        Registry().get("answered_rate")
    message = str(caught.value)
    assert "registered in-process" in message
    assert "Impostor" in message
    assert "'itemscore'" in message


def test_a_collision_elsewhere_does_not_break_an_unrelated_metric(plugins: Plugins) -> None:
    """A clash between two other plugins does not stop a lookup by entry-point name."""
    plugins.metric("shout", "shout", dist="dist-a", module="shout_a")
    plugins.metric("shout", "shout", dist="dist-b", module="shout_b")
    assert Registry().get("answered-rate").metric_id == "answered_rate"


# -- @register ----------------------------------------------------------------------------------


def _define(name: str) -> type[Metric]:
    """A fresh class object from the same definition each call (a re-run notebook cell)."""

    class NotebookMetric(Metric):
        metric_id = name

        def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
            return self.ok()

    return NotebookMetric


def test_register_makes_a_class_usable_by_id(plugins: Plugins) -> None:
    """A registered class is found by id, listed with source 'register', and scores."""
    cls = register(_define("nb_metric"))
    info = Registry().find("nb_metric")
    assert info.cls is cls
    assert (info.source, info.entry_point, info.distribution) == ("register", None, None)
    assert info in Registry().infos()
    result = itemscore.score([_item()], ["nb_metric"])
    assert result.measurements["default.nb_metric"].value == 1.0


def test_register_returns_the_class_unchanged(plugins: Plugins) -> None:
    """@register is a decorator that returns the very class it got."""
    cls = _define("nb_metric")
    assert register(cls) is cls


def test_running_the_same_definition_again_replaces_it(plugins: Plugins) -> None:
    """Registering a new class object from the same definition replaces the old one."""
    first = register(_define("nb_metric"))
    second = register(_define("nb_metric"))
    assert first is not second
    assert Registry().get("nb_metric") is second


def test_two_different_classes_under_one_id_collide(plugins: Plugins) -> None:
    """Registering another class under a taken id raises, naming both classes."""

    @register
    class First(Metric):
        metric_id = "taken_id"

    class Second(Metric):
        metric_id = "taken_id"

    with pytest.raises(MetricCollisionError) as caught:
        register(Second)
    message = str(caught.value)
    assert "First" in message
    assert "Second" in message
    assert "'taken_id'" in message
    assert Registry().get("taken_id") is First


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param(object, id="not-a-metric"),
        pytest.param(type("NoId", (Metric,), {}), id="no-metric-id"),
        pytest.param(42, id="not-a-class"),
    ],
)
def test_register_rejects_what_is_not_a_metric_class(obj: Any) -> None:
    """@register raises TypeError for anything but a Metric subclass with a metric_id."""
    with pytest.raises(TypeError, match=r"subclass of itemscore\.Metric|has no `metric_id`"):
        register(obj)


def test_unregister_forgets_a_registration(plugins: Plugins) -> None:
    """After unregister, the id is unknown again."""
    register(_define("nb_metric"))
    unregister("nb_metric")
    with pytest.raises(UnknownMetricError):
        Registry().get("nb_metric")


# -- autoload switch ----------------------------------------------------------------------------


def test_disabled_autoload_keeps_builtins_and_registrations_only(
    plugins: Plugins, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ITEMSCORE_DISABLE_PLUGIN_AUTOLOAD=1: third-party ids are unknown, the rest works."""
    module = plugins.metric("shout", "shout")
    register(_define("nb_metric"))
    monkeypatch.setenv(AUTOLOAD_ENV, "1")
    registry = Registry()
    assert registry.autoload is False
    infos = registry.infos()
    assert {i.distribution for i in infos if i.source == "entry-point"} == {"itemscore"}
    assert "nb_metric" in [i.id for i in infos if i.source == "register"]  # others: earlier tests'
    assert "answered_rate" in {i.id for i in infos}
    with pytest.raises(UnknownMetricError):
        registry.get("shout")
    assert not plugins.imported(module)
    result = itemscore.score([_item()], ["answered_rate", "nb_metric"])
    assert set(result.measurements) == {"default.answered_rate", "default.nb_metric"}


def test_the_default_registry_follows_the_autoload_switch(
    plugins: Plugins, monkeypatch: pytest.MonkeyPatch
) -> None:
    """default_registry() is rebuilt when the switch changes, so a plugin appears or vanishes."""
    plugins.metric("shout", "shout")
    assert default_registry().get("shout").metric_id == "shout"
    monkeypatch.setenv(AUTOLOAD_ENV, "1")
    with pytest.raises(UnknownMetricError):
        default_registry().get("shout")
    monkeypatch.delenv(AUTOLOAD_ENV)
    assert default_registry().get("shout").metric_id == "shout"


def test_reset_registry_sees_a_newly_installed_plugin(plugins: Plugins) -> None:
    """A plugin installed after the first lookup is found after reset_registry()."""
    assert "shout" not in {i.id for i in default_registry().infos()}
    plugins.metric("shout", "shout")
    itemscore.reset_registry()
    assert default_registry().get("shout").metric_id == "shout"


# -- metrics added by hooks ---------------------------------------------------------------------


class _Adder:
    def __init__(self, *classes: object) -> None:
        self.classes = classes

    @hookimpl
    def itemscore_add_metrics(self) -> list[object]:
        return list(self.classes)


def test_a_hook_adds_metrics_usable_by_id(plugins: Plugins) -> None:
    """Classes returned by itemscore_add_metrics are found by id and score in a run."""
    cls = _define("hooked")
    itemscore.plugin_manager().register(_Adder(cls), name="adder-plugin")
    info = Registry().find("hooked")
    assert info.cls is cls
    # Registered in-process, the plugin has no distribution to name.
    assert (info.source, info.plugin, info.distribution) == ("hook", "adder-plugin", None)
    result = itemscore.score([_item()], ["hooked"])
    assert result.items[0].scores["hooked"].status == "ok"


def test_a_hook_returning_junk_is_listed_as_broken(plugins: Plugins) -> None:
    """A hook returning a non-Metric is a broken entry; the metrics it got right still load."""
    itemscore.plugin_manager().register(_Adder(_define("hooked"), "junk"), name="bad-adder")
    infos = Registry().infos()
    (bad,) = [i for i in infos if i.status == "broken"]
    assert (bad.source, bad.plugin, bad.distribution) == ("hook", "bad-adder", None)
    assert bad.error is not None
    assert "'junk'" in bad.error
    assert Registry().get("answered_rate").metric_id == "answered_rate"


def test_a_hook_that_raises_is_listed_as_broken(plugins: Plugins) -> None:
    """A hook implementation that raises is reported like a broken entry point."""

    class Raising:
        @hookimpl
        def itemscore_add_metrics(self) -> list[object]:
            raise RuntimeError("no metrics today")

    itemscore.plugin_manager().register(Raising(), name="raising-adder")
    (bad,) = [i for i in Registry().infos() if i.status == "broken"]
    assert bad.error == "RuntimeError: no metrics today"


def test_a_hook_id_that_collides_with_an_entry_point_is_an_error(plugins: Plugins) -> None:
    """A hook-added class under an installed id collides, naming both sources."""
    itemscore.plugin_manager().register(_Adder(_define("answered_rate")), name="adder-plugin")
    with pytest.raises(MetricCollisionError, match="adder-plugin"):
        Registry().get("answered_rate")
    listed = [i for i in Registry().infos() if i.id == "answered_rate"]
    assert {i.status for i in listed} == {"broken"}


def test_reset_registry_forgets_hook_plugins(plugins: Plugins) -> None:
    """reset_registry() builds a new plugin manager, so in-process hook plugins are gone."""
    itemscore.plugin_manager().register(_Adder(_define("hooked")), name="adder-plugin")
    assert Registry().get("hooked").metric_id == "hooked"
    itemscore.reset_registry()
    with pytest.raises(UnknownMetricError):
        Registry().get("hooked")
