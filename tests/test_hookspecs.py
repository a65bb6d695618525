"""Tests for itemscore.hookspecs: the hooks, their arguments, and when runs call them."""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pluggy
import pytest

import itemscore
from itemscore import ItemResult, ItemScore, RunResult, Suite, hookimpl, hookspecs

HOOKS = (
    "itemscore_add_metrics",
    "itemscore_run_started",
    "itemscore_item_scored",
    "itemscore_run_finished",
    "itemscore_export_formats",
    "itemscore_reducers",
)


# No fake declared: itemscore's own entry points only, third-party ones hidden, so only the
# plugins a test registers are active.
pytestmark = pytest.mark.usefixtures("plugins")


class Recorder:
    """Records every run hook call, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    @hookimpl
    def itemscore_run_started(self, suite_id: str, config: Mapping[str, Any], n_items: int) -> None:
        self.calls.append(("started", {"suite_id": suite_id, "config": config, "n": n_items}))

    @hookimpl
    def itemscore_item_scored(self, item: ItemResult, score: ItemScore) -> None:
        self.calls.append(("scored", {"item": item, "score": score}))

    @hookimpl
    def itemscore_run_finished(self, result: RunResult) -> None:
        self.calls.append(("finished", {"result": result}))

    def named(self, name: str) -> list[dict[str, Any]]:
        return [args for call, args in self.calls if call == name]


@pytest.fixture
def recorder() -> Recorder:
    """A recording plugin registered in-process."""
    rec = Recorder()
    itemscore.plugin_manager().register(rec, name="recorder")
    return rec


ITEMS = [
    ItemResult(id="a", output="yes"),
    ItemResult(id="b", output=None),
    ItemResult(id="c", output=""),
]
METRICS = ["answered_rate", {"name": "answered_rate", "label": "answered_again"}]


# -- the specifications -------------------------------------------------------------------------


@pytest.mark.parametrize("name", HOOKS)
def test_every_hook_is_specified_and_documented(name: str) -> None:
    """Each extension point is a hook specification of project 'itemscore' with a docstring."""
    function = getattr(hookspecs, name)
    assert getattr(function, "itemscore_spec", None) is not None
    assert inspect.getdoc(function)


def test_the_hook_names_carry_the_project_prefix() -> None:
    """Every specification in the module is one of the known itemscore_ hooks."""
    specs = {
        name
        for name, obj in vars(hookspecs).items()
        if callable(obj) and getattr(obj, "itemscore_spec", None) is not None
    }
    assert specs == set(HOOKS)


def test_hookimpl_is_the_itemscore_marker() -> None:
    """itemscore.hookimpl marks implementations for project 'itemscore'."""
    assert itemscore.hookimpl is hookspecs.hookimpl
    assert hookspecs.hookimpl.project_name == "itemscore"


def test_an_implementation_with_an_unknown_argument_is_rejected() -> None:
    """A hook implementation asking for an argument the spec lacks fails to register."""

    class Wrong:
        @hookimpl
        def itemscore_run_started(self, suite_id: str, wrong_argument: int) -> None:
            """Asks for an argument no run passes."""

    with pytest.raises(pluggy.PluginValidationError, match="wrong_argument"):
        itemscore.plugin_manager().register(Wrong())


def test_an_implementation_may_take_a_subset_of_the_arguments() -> None:
    """Implementations name only the arguments they use."""
    seen: list[int] = []

    class Subset:
        @hookimpl
        def itemscore_run_started(self, n_items: int) -> None:
            seen.append(n_items)

    itemscore.plugin_manager().register(Subset())
    itemscore.score(ITEMS, ["answered_rate"])
    assert seen == [len(ITEMS)]


# -- the run hooks ------------------------------------------------------------------------------


def test_run_started_gets_the_suite_the_config_and_the_item_count(recorder: Recorder) -> None:
    """itemscore_run_started fires once, with the suite id, the saved config and n items."""
    result = itemscore.score(ITEMS, METRICS, suite_id="qa")
    (started,) = recorder.named("started")
    assert started["suite_id"] == "qa"
    assert started["n"] == len(ITEMS)
    assert dict(started["config"]) == dict(result.config)
    assert [m["label"] for m in started["config"]["metrics"]] == [
        "answered_rate",
        "answered_again",
    ]


def test_item_scored_fires_once_per_item_per_metric(recorder: Recorder) -> None:
    """itemscore_item_scored fires for every (item, metric) pair, with the labelled score."""
    result = itemscore.score(ITEMS, METRICS)
    scored = recorder.named("scored")
    pairs = Counter((s["item"].id, s["score"].metric) for s in scored)
    assert pairs == Counter(
        {(i.id, label): 1 for i in ITEMS for label in ("answered_rate", "answered_again")}
    )
    for call in scored:
        assert call["score"] == result.items[ITEMS.index(call["item"])].scores[call["score"].metric]
        assert call["item"].scores == {}


def test_item_scored_sees_skips_and_errors_too(recorder: Recorder) -> None:
    """Every state reaches the hook: a required input missing (skip) and a raising metric."""

    class Picky(itemscore.Metric):
        metric_id = "picky"
        required_inputs = ("expected",)

        def score_item(self, item: ItemResult, ctx: itemscore.MetricContext) -> ItemScore:
            raise ValueError("cannot score")

    items = [ItemResult(id="x", output="1", expected="1"), ItemResult(id="y", output="2")]
    itemscore.score(items, [Picky])
    statuses = {s["item"].id: s["score"].status for s in recorder.named("scored")}
    assert statuses == {"x": "error", "y": "skip"}


def test_run_finished_gets_the_returned_result_last(recorder: Recorder) -> None:
    """itemscore_run_finished fires once, after every item, with the very result returned."""
    result = itemscore.score(ITEMS, METRICS)
    names = [call for call, _ in recorder.calls]
    assert names[0] == "started"
    assert names[-1] == "finished"
    assert names.count("finished") == 1
    assert recorder.named("finished")[0]["result"] is result


def test_run_of_a_suite_fires_the_hooks_with_its_id(recorder: Recorder) -> None:
    """run(suite, rows) reports the suite's id and its item count."""

    class Tiny(Suite):
        suite_id = "tiny"
        metrics = ("answered_rate",)

    result = itemscore.run(Tiny(), [{"output": "a"}, {"output": None}])
    (started,) = recorder.named("started")
    assert (started["suite_id"], started["n"]) == ("tiny", 2)
    assert len(recorder.named("scored")) == 2
    assert recorder.named("finished")[0]["result"] is result


def test_rescore_fires_the_hooks_for_the_metrics_it_scores(recorder: Recorder) -> None:
    """rescore() is a run too: started, one call per item for each new metric, finished."""
    first = itemscore.score(ITEMS, ["answered_rate"], suite_id="qa")
    recorder.calls.clear()
    again = itemscore.rescore(first, [{"name": "answered_rate", "label": "answered_again"}])
    (started,) = recorder.named("started")
    assert (started["suite_id"], started["n"]) == ("qa", len(ITEMS))
    assert {s["score"].metric for s in recorder.named("scored")} == {"answered_again"}
    assert len(recorder.named("scored")) == len(ITEMS)
    assert recorder.named("finished")[0]["result"] is again


def test_an_error_in_item_scored_stops_the_run() -> None:
    """An observer that raises is not isolated: the run stops with its exception."""

    class Broken:
        @hookimpl
        def itemscore_item_scored(self, item: ItemResult, score: ItemScore) -> None:
            raise RuntimeError("observer broke")

    itemscore.plugin_manager().register(Broken())
    with pytest.raises(RuntimeError, match="observer broke"):
        itemscore.score(ITEMS, ["answered_rate"])


class _CountingCaller:
    """Stands in for the item_scored hook caller, counting calls."""

    def __init__(self, caller: Any) -> None:
        self.caller = caller
        self.calls = 0

    def get_hookimpls(self) -> list[Any]:
        return list(self.caller.get_hookimpls())

    def __call__(self, **kwargs: Any) -> Any:
        self.calls += 1
        return self.caller(**kwargs)


@pytest.mark.parametrize(
    ("implemented", "expected_calls"),
    [
        pytest.param(False, 0, id="nobody-implements-it"),
        pytest.param(True, len(ITEMS) * len(METRICS), id="a-plugin-implements-it"),
    ],
)
def test_item_scored_is_called_per_item_only_when_implemented(
    monkeypatch: pytest.MonkeyPatch, implemented: bool, expected_calls: int
) -> None:
    """A per-item hook nobody implements is never called; implemented, once per score."""
    pm = itemscore.plugin_manager()
    if implemented:
        pm.register(Recorder())
    else:

        class OnlyStart:
            @hookimpl
            def itemscore_run_started(self) -> None:
                """Implements another hook, so the manager is not empty."""

        pm.register(OnlyStart())
    spy = _CountingCaller(pm.hook.itemscore_item_scored)
    monkeypatch.setattr(pm.hook, "itemscore_item_scored", spy)
    itemscore.score(ITEMS, METRICS)
    assert spy.calls == expected_calls


# -- the other hooks ----------------------------------------------------------------------------


def test_export_formats_are_collected_from_every_plugin(tmp_path: Path) -> None:
    """itemscore_export_formats returns one mapping per plugin; the writers get (result, path)."""
    written: list[tuple[RunResult, Path]] = []

    def write_fake(result: RunResult, path: Path) -> None:
        written.append((result, path))

    class Html:
        @hookimpl
        def itemscore_export_formats(self) -> Mapping[str, Any]:
            return {"html": write_fake}

    class Tsv:
        @hookimpl
        def itemscore_export_formats(self) -> Mapping[str, Any]:
            return {"tsv": write_fake}

    pm = itemscore.plugin_manager()
    pm.register(Html())
    pm.register(Tsv())
    formats: dict[str, Any] = {}
    for mapping in pm.hook.itemscore_export_formats():
        formats.update(mapping)
    assert set(formats) == {"html", "tsv"}
    result = itemscore.score(ITEMS, ["answered_rate"])
    formats["html"](result, tmp_path / "results.html")
    assert written == [(result, tmp_path / "results.html")]


def test_add_metrics_is_asked_once_per_registry() -> None:
    """itemscore_add_metrics is called when the registry is built, not on every lookup."""
    calls: list[int] = []

    class Quiet(itemscore.Metric):
        metric_id = "quiet_hooked"

        def score_item(self, item: ItemResult, ctx: itemscore.MetricContext) -> ItemScore:
            return self.ok()

    class Adder:
        @hookimpl
        def itemscore_add_metrics(self) -> list[type[itemscore.Metric]]:
            calls.append(1)
            return [Quiet]

    itemscore.plugin_manager().register(Adder())
    registry = itemscore.Registry()
    for _ in range(3):
        assert registry.get("quiet_hooked") is Quiet
    registry.infos()
    assert calls == [1]
