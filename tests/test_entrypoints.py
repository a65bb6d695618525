"""Tests for itemscore._entrypoints: walking entry-point groups with their distributions."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import zipfile
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import itemscore
from itemscore import _distributions, _entrypoints
from itemscore._entrypoints import AUTOLOAD_ENV, autoload_enabled, entry_points

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


# -- reading entry_points.txt without importlib.metadata -------------------------------------


#: Run in a fresh interpreter: dask, imported by other tests, brings importlib_metadata, which
#: takes over distribution discovery from the standard library's finder for the whole process.
COMPARE = """
import json, sys
from importlib import metadata
import itemscore
from itemscore import _distributions, _entrypoints

group, path = sys.argv[1], json.loads(sys.argv[2])
if path is not None:
    sys.path[:] = path
ours = _entrypoints._read_distributions(group)
if ours is not None:
    ours = [(ep.name, ep.value, ep.group, name, version) for ep, name, version in ours]
try:
    declared = [(ep.name, ep.value, ep.group, n, v) for ep, n, v in _entrypoints._declared(group)]
except Exception as exc:
    declared = type(exc).__name__
theirs = []
try:
    for ep in metadata.entry_points(group=group):
        name, version = (ep.dist.metadata["Name"], ep.dist.version) if ep.dist else (None, None)
        theirs.append((ep.name, ep.value, ep.group, name, version))
except Exception as exc:
    theirs = type(exc).__name__
print(json.dumps({"ours": ours, "declared": declared, "theirs": theirs}))
"""


def _compare(group: str, path: list[str] | None = None) -> dict[str, Any]:
    """Our reading, what _declared gives, and importlib.metadata's, in a fresh interpreter."""
    proc = subprocess.run(
        [sys.executable, "-c", COMPARE, group, json.dumps(path)],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    found: dict[str, Any] = json.loads(proc.stdout)
    for key in ("ours", "declared", "theirs"):
        if isinstance(found[key], list):
            found[key] = [tuple(item) for item in found[key]]
    return found


@pytest.mark.parametrize(
    "group", ["itemscore.metrics", "itemscore.plugins", "itemscore.suites", "console_scripts"]
)
def test_this_environment_reads_as_importlib_metadata_reads_it(group: str) -> None:
    found = _compare(group)
    assert found["ours"] == found["theirs"] == found["declared"]
    assert found["ours"]


def test_our_reading_is_not_used_beside_another_distribution_finder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Finder:
        @staticmethod
        def find_distributions(*args: object, **kwargs: object) -> list[object]:
            return []

    monkeypatch.setattr(sys, "meta_path", [Finder(), *sys.meta_path])
    assert _entrypoints._read_distributions("itemscore.metrics") is None


def _dist(folder: Path, child: str, entry_points: str | None, metadata_text: str | None) -> None:
    info = folder / child
    info.mkdir(parents=True)
    if entry_points is not None:
        (info / "entry_points.txt").write_bytes(textwrap.dedent(entry_points).encode())
    if metadata_text is not None:
        name = "PKG-INFO" if child.endswith(".egg-info") else "METADATA"
        (info / name).write_bytes(textwrap.dedent(metadata_text).encode())


def test_odd_installations_read_as_importlib_metadata_reads_them(tmp_path: Path) -> None:
    """First of one name on sys.path wins, egg-info, comments, CRLF, extras, folded headers."""
    first, second = tmp_path / "first", tmp_path / "second"
    group = "itemscore.odd"
    _dist(
        first,
        "Odd_Name-1.0.dist-info",
        """\
        stray = before:any_section
        # a comment
        [console_scripts]
        odd = odd:main

        [itemscore.odd]
          spaced   =   odd.mod : Thing
        extras = odd.mod:Other [fast, small]
        # another = not:this
        dotted=odd:a.b.c
        """,
        "Metadata-Version: 2.1\nName: Odd_Name  \nVersion: 1.0\n"
        "Summary: folded\n  over two lines\nName: ignored\n\nName: body\n",
    )
    _dist(second, "odd.name-2.0.dist-info", "[itemscore.odd]\nlater = odd:Later\n",
          "Name: odd.name\nVersion: 2.0\n")  # fmt: skip
    _dist(first, "eggy-0.1.egg-info", "[itemscore.odd]\r\neggy = eggy:E\r\n",
          "Metadata-Version: 1.0\r\nName: eggy\r\nVersion: 0.1\r\n")  # fmt: skip
    (first / "shadow-1.0.egg-info").write_text("Metadata-Version: 1.0\nName: shadow\n")
    _dist(second, "shadow-3.0.dist-info", "[itemscore.odd]\nhidden = shadow:S\n",
          "Name: shadow\nVersion: 3.0\n")  # fmt: skip
    _dist(second, "other-1.0.dist-info", "[itemscore.other]\nx = y:Z\n", None)
    found = _compare(group, [str(first), str(tmp_path / "missing"), str(second)])
    ours = found["ours"]
    assert ours == found["theirs"] == found["declared"]
    assert {name for name, *_ in ours} == {"spaced", "extras", "dotted", "eggy"}
    assert ("spaced", "odd.mod : Thing", group, "Odd_Name  ", "1.0") in ours


@pytest.mark.parametrize(
    "layout", ["zip", "folded name", "no metadata", "upper-case suffix", "egg", "no equals sign"]
)
def test_what_importlib_metadata_reads_its_own_way_is_left_to_it(
    tmp_path: Path, layout: str
) -> None:
    """Zip files and eggs on sys.path, folded names, no METADATA: importlib.metadata reads all."""
    site = tmp_path / "site"
    site.mkdir()
    group = "itemscore.odd"
    entries = "[itemscore.odd]\nthing = pkg:Thing\n"
    path = [str(site)]
    if layout == "zip":
        archive = tmp_path / "dists.zip"
        with zipfile.ZipFile(archive, "w") as zipped:
            zipped.writestr("zipped-1.0.dist-info/METADATA", "Name: zipped\nVersion: 1.0\n")
            zipped.writestr("zipped-1.0.dist-info/entry_points.txt", entries)
        path.append(str(archive))
    elif layout == "folded name":
        _dist(site, "folded-1.0.dist-info", entries, "Name: folded\n  name\nVersion: 1.0\n")
    elif layout == "no metadata":
        _dist(site, "bare-1.0.dist-info", entries, None)
    elif layout == "upper-case suffix":
        _dist(site, "Upper-1.0.DIST-INFO", entries, "Name: Upper\nVersion: 1.0\n")
    elif layout == "egg":
        egg = tmp_path / "thing-1.0-py3.egg"
        _dist(egg, "EGG-INFO", entries, "Name: thing\nVersion: 1.0\n")
        path.append(str(egg))
    else:
        _dist(site, "noeq-1.0.dist-info", "[itemscore.odd]\nthing\n", "Name: n\nVersion: 1\n")
    found = _compare(group, path)
    assert found["ours"] is None
    assert found["declared"] == found["theirs"]
    assert (found["theirs"] == "TypeError") == (layout == "no equals sign")


@pytest.mark.parametrize(
    "value", ["json:dumps", "os.path:join", "os:path.join", "json", "json:nope", "no_such_mod_x:A",
              "not a value!", "json : dumps [extra]"],
)  # fmt: skip
def test_an_entry_point_loads_as_importlib_metadata_loads_it(value: str) -> None:
    ours = _entrypoints.EntryPoint(name="n", value=value, group="g")
    theirs = metadata.EntryPoint(name="n", value=value, group="g")
    outcomes = []
    for ep in (ours, theirs):
        try:
            outcomes.append(ep.load())
        except Exception as exc:  # noqa: BLE001 - the same error is expected
            outcomes.append((type(exc), str(exc)))
    assert outcomes[0] == outcomes[1]


# -- versions --------------------------------------------------------------------------------

VERSIONS = """
import json, sys
from importlib import metadata
from itemscore import _distributions

results = []
for name in json.loads(sys.argv[1]):
    answers = []
    for read in (_distributions.version, metadata.version):
        try:
            answers.append(read(name))
        except Exception as exc:
            answers.append(type(exc).__name__)
    results.append(answers)
print(json.dumps(results))
"""


def test_versions_read_as_importlib_metadata_reads_them() -> None:
    """Installed names in any spelling; a missing name fails alike (in a fresh interpreter)."""
    names = ["itemscore", "itemscore-example", "itemscore_example", "ITEMSCORE.Example", "attrs",
             "Click", "pluggy", "no-such-distribution-x"]  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-c", VERSIONS, json.dumps(names)],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    results = json.loads(proc.stdout)
    for name, (ours, theirs) in zip(names, results, strict=True):
        assert ours == theirs, name
    assert results[-1][0] == "PackageNotFoundError"
    assert results[0][0] == itemscore.__version__


@pytest.mark.parametrize(
    "name", ["a", "A-b", "a__b", "a.-_b", "-a", "a_", "__a..b--", "Zope.Interface", "x---y___z"]
)
def test_normalize_is_pep_503_with_underscores(name: str) -> None:
    assert _distributions.normalize(name) == re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")
