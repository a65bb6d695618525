"""Tests for itemscore._entrypoints: walking entry-point groups with their distributions."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from itemscore._entrypoints import AUTOLOAD_ENV, autoload_enabled, entry_points

GROUP = "itemscore.metrics"


class FakeDist:
    """The part of ``importlib.metadata.Distribution`` itemscore reads."""

    def __init__(self, name: str, version: str = "1.0") -> None:
        self.metadata = {"Name": name}
        self.version = version


def make_ep(name: str, value: str, dist: FakeDist | None, group: str = GROUP) -> Any:
    ep: Any = metadata.EntryPoint(name=name, value=value, group=group)
    return ep if dist is None else ep._for(dist)


@pytest.fixture
def fake_eps(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Replace every installed entry point with the ones the test appends to the list."""
    fakes: list[Any] = []
    monkeypatch.setattr(
        metadata, "entry_points", lambda **p: [ep for ep in fakes if ep.group == p["group"]]
    )
    monkeypatch.delenv(AUTOLOAD_ENV, raising=False)
    return fakes


@pytest.fixture
def module_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, str]]:
    """A folder on sys.path and a unique module-name prefix; its modules are forgotten after."""
    prefix = f"fake_{uuid.uuid4().hex[:8]}"
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path, prefix
    for name in [m for m in sys.modules if m.startswith(prefix)]:
        del sys.modules[name]


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


def test_each_entry_point_keeps_its_distribution_name_and_version(fake_eps: list[Any]) -> None:
    """A ref carries the declaring distribution's name and version, and the entry point."""
    fake_eps.append(make_ep("upper", "pkg.mod:Upper", FakeDist("upper-metrics", "2.3.1")))
    (ref,) = entry_points(GROUP)
    assert (ref.name, ref.value) == ("upper", "pkg.mod:Upper")
    assert (ref.distribution, ref.version) == ("upper-metrics", "2.3.1")
    assert ref.builtin is False


def test_an_entry_point_without_a_distribution_has_none(fake_eps: list[Any]) -> None:
    """An entry point not tied to a distribution is kept, with distribution None."""
    fake_eps.append(make_ep("loose", "pkg.mod:Loose", None))
    (ref,) = entry_points(GROUP)
    assert (ref.distribution, ref.version, ref.builtin) == (None, None, False)


def test_only_the_requested_group_is_returned(fake_eps: list[Any]) -> None:
    """Entry points of other groups are not returned."""
    dist = FakeDist("pkg")
    fake_eps.append(make_ep("a", "pkg:A", dist))
    fake_eps.append(make_ep("b", "pkg:B", dist, group="itemscore.plugins"))
    assert [r.name for r in entry_points(GROUP)] == ["a"]
    assert [r.name for r in entry_points("itemscore.plugins")] == ["b"]


def test_the_same_distribution_found_twice_is_listed_once(fake_eps: list[Any]) -> None:
    """One distribution seen in two sys.path folders gives one ref per entry point."""
    fake_eps.append(make_ep("upper", "pkg.mod:Upper", FakeDist("upper-metrics", "1.0")))
    fake_eps.append(make_ep("upper", "pkg.mod:Upper", FakeDist("upper-metrics", "1.0")))
    assert [(r.name, r.distribution) for r in entry_points(GROUP)] == [("upper", "upper-metrics")]


def test_two_distributions_with_one_entry_point_name_are_both_kept(fake_eps: list[Any]) -> None:
    """Unlike pluggy, a taken entry-point name does not hide the other distribution's."""
    fake_eps.append(make_ep("upper", "a.mod:Upper", FakeDist("dist-a")))
    fake_eps.append(make_ep("upper", "b.mod:Upper", FakeDist("dist-b")))
    assert sorted(r.distribution or "" for r in entry_points(GROUP)) == ["dist-a", "dist-b"]


@pytest.mark.parametrize(
    "host_name",
    [
        pytest.param("itemscore", id="canonical"),
        pytest.param("ItemScore", id="capitalised"),
    ],
)
def test_itemscore_own_entry_points_come_first(fake_eps: list[Any], host_name: str) -> None:
    """The host's entry points sort before third-party ones, each part by name."""
    fake_eps.append(make_ep("aaa", "third:A", FakeDist("third")))
    fake_eps.append(make_ep("zzz", "itemscore.x:Z", FakeDist(host_name)))
    fake_eps.append(make_ep("mmm", "itemscore.x:M", FakeDist(host_name)))
    refs = entry_points(GROUP)
    assert [r.name for r in refs] == ["mmm", "zzz", "aaa"]
    assert [r.builtin for r in refs] == [True, True, False]


@pytest.mark.parametrize(
    "how",
    [pytest.param("env", id="environment"), pytest.param("argument", id="argument")],
)
def test_disabled_autoload_keeps_only_itemscore_entry_points(
    fake_eps: list[Any], monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """With autoload off, third-party and distribution-less entry points are left out."""
    fake_eps.append(make_ep("answered-rate", "itemscore.m:A", FakeDist("itemscore")))
    fake_eps.append(make_ep("upper", "third:Upper", FakeDist("third")))
    fake_eps.append(make_ep("loose", "loose:Loose", None))
    if how == "env":
        monkeypatch.setenv(AUTOLOAD_ENV, "1")
        refs = entry_points(GROUP)
    else:
        refs = entry_points(GROUP, autoload=False)
    assert [r.name for r in refs] == ["answered-rate"]
    assert len(entry_points(GROUP, autoload=True)) == 3


def test_listing_entry_points_imports_nothing(
    fake_eps: list[Any], module_dir: tuple[Path, str]
) -> None:
    """Walking a group never imports the modules the entry points name."""
    folder, prefix = module_dir
    (folder / f"{prefix}_plugin.py").write_text("Thing = 'loaded'\n")
    fake_eps.append(make_ep("p", f"{prefix}_plugin:Thing", FakeDist("p")))
    refs = entry_points(GROUP)
    assert [r.name for r in refs] == ["p"]
    assert f"{prefix}_plugin" not in sys.modules
    assert refs[0].entry_point.load() == "loaded"
    assert f"{prefix}_plugin" in sys.modules


def test_the_real_builtin_entry_point_is_found() -> None:
    """The root pyproject declares answered-rate in itemscore.metrics, from itemscore."""
    refs = {r.name: r for r in entry_points(GROUP, autoload=False)}
    assert refs["answered-rate"].value == "itemscore.metrics_builtin.answered_rate:AnsweredRate"
    assert refs["answered-rate"].builtin
    assert refs["answered-rate"].version == metadata.version("itemscore")
