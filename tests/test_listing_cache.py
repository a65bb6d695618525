"""The listing cache of ``itemscore metrics --json`` and ``plugins --json``.

The cache answers only with what click would print: every test compares the cached answer with
the same command run through click (``ITEMSCORE_NO_CACHE=1``), byte for byte, exit code and
stderr too. Whether the cache answered is seen without timing: each fake plugin module appends
a line to a log outside ``sys.path`` when it is imported, and the cache answers without
importing any plugin.

The fake sites are aged (mtime a minute back) once written: the cache keeps out any output
that depends on a file younger than two seconds. Changes are not aged: a stale entry would be
read whatever the age of the file.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import itemscore
from itemscore.cli import _listing_cache

SCRIPT = Path(sys.executable).parent / "itemscore"
LISTINGS = (("metrics", "--json"), ("plugins", "--json"))

METRIC = """
import pathlib

with open({log!r}, "a") as log:
    log.write(__name__ + "\\n")

from itemscore import Metric


class M(Metric):
    metric_id = {metric_id!r}
    description = {description!r}

    def score_item(self, item, ctx):
        return self.ok()
"""

SUITE = """
with open({log!r}, "a") as log:
    log.write(__name__ + "\\n")

from itemscore import Suite


class S(Suite):
    suite_id = "cached_suite"
    metrics = ("answered_rate",)
"""


class Site:
    """A folder on PYTHONPATH with fake distributions, and a log of the plugin imports."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / "site"
        self.path.mkdir()
        #: An empty folder before ``path`` on PYTHONPATH.
        self.front = root / "front"
        self.front.mkdir()
        self.log = root / "imports.log"
        self.cache = root / "cache"
        self.env = {
            "PYTHONPATH": os.pathsep.join([str(self.front), str(self.path)]),
            "XDG_CACHE_HOME": str(self.cache),
            "PYTHONDONTWRITEBYTECODE": "1",
        }

    def install(self, dist: str, entry_points: str, modules: dict[str, str]) -> None:
        """A distribution with its entry points and modules (``{log}`` filled in)."""
        info = self.path / f"{dist.replace('-', '_')}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))
        for name, source in modules.items():
            self.module(name, source)

    def module(self, name: str, source: str) -> None:
        (self.path / f"{name}.py").write_text(textwrap.dedent(source))

    def metric(self, name: str, metric_id: str, description: str) -> None:
        (self.path / f"{name}.py").write_text(
            METRIC.format(log=str(self.log), metric_id=metric_id, description=description)
        )

    def age(self) -> None:
        """Every file and folder of the site a minute old (their ctime is still now)."""
        past = (os.stat(self.root).st_mtime_ns // 10**9 - 60) * 10**9
        for folder, names, files in os.walk(self.path):
            for name in [*names, *files]:
                os.utime(os.path.join(folder, name), ns=(past, past))
        for folder in (self.front, self.path):
            os.utime(folder, ns=(past, past))

    def imports(self) -> int:
        """How many plugin modules were imported so far."""
        return len(self.log.read_text().splitlines()) if self.log.exists() else 0

    def environ(self, env: dict[str, str] | None = None) -> dict[str, str]:
        environ = {k: v for k, v in os.environ.items() if not k.startswith("ITEMSCORE_")}
        return {**environ, **self.env, **(env or {})}

    def listing(self, *args: str, env: dict[str, str] | None = None) -> tuple[int, bytes, bytes]:
        """Exit code, stdout and stderr of ``itemscore ARGS``."""
        proc = subprocess.run(
            [str(SCRIPT), *args], capture_output=True, env=self.environ(env), timeout=120
        )
        return proc.returncode, proc.stdout, proc.stderr

    def through_click(
        self, *args: str, env: dict[str, str] | None = None
    ) -> tuple[int, bytes, bytes]:
        """The same, never from the cache."""
        return self.listing(*args, env={**(env or {}), _listing_cache.NO_CACHE_ENV: "1"})

    def into_closed_pipe(self, *args: str, env: dict[str, str] | None = None) -> tuple[int, bytes]:
        """Exit code and stderr of ``itemscore ARGS`` writing to a pipe nobody reads."""
        read, write = os.pipe()
        os.close(read)
        try:
            proc = subprocess.run(
                [str(SCRIPT), *args], stdout=write, stderr=subprocess.PIPE,
                env=self.environ(env), timeout=120, check=False,
            )  # fmt: skip
        finally:
            os.close(write)
        return proc.returncode, proc.stderr

    def cache_files(self) -> list[Path]:
        folder = self.cache / "itemscore"
        return sorted(folder.iterdir()) if folder.exists() else []


@pytest.fixture
def site(tmp_path: Path) -> Site:
    """A site with a good metric, two distributions claiming one id, broken entries, a suite."""
    fake = Site(tmp_path)
    log = str(fake.log)
    fake.install(
        "cached-good",
        """\
        [itemscore.metrics]
        cached-shout = cached_good:M
        cached-gone = cached_missing_module:M

        [itemscore.suites]
        cached-suite = cached_suite:S

        [itemscore.plugins]
        cached-broken-hooks = cached_missing_hooks
        """,
        {},
    )
    fake.metric("cached_good", "cached_shout", "Shouts, cached.")
    (fake.path / "cached_suite.py").write_text(SUITE.format(log=log))
    for dist in ("cached-dup-a", "cached-dup-b"):
        module = f"{dist.replace('-', '_')}_metric"
        fake.install(dist, f"[itemscore.metrics]\ndup = {module}:M\n", {})
        fake.metric(module, "cached_dup", f"Claimed by {dist}.")
    fake.age()
    _settle_sources()
    return fake


def _settle_sources() -> None:
    """Wait until itemscore's own files are old enough to be cached (just edited: 2 s at most)."""
    package = Path(itemscore.__file__).parent  # stat() follows the editable install's links
    newest = max(path.stat().st_mtime_ns for path in package.rglob("*.py"))
    wait = (newest + _listing_cache.SETTLE_NS - time.time_ns()) / 1e9
    if wait > 0:
        time.sleep(wait + 0.1)


@pytest.mark.parametrize("args", LISTINGS, ids=" ".join)
def test_the_cached_answer_is_the_bytes_click_prints(site: Site, args: tuple[str, ...]) -> None:
    """Collisions and broken entries listed alike; the second run imports no plugin."""
    expected = site.through_click(*args)
    assert expected[0] == 0
    entries = json.loads(expected[1])
    assert any(e.get("status") == "broken" for e in entries)
    assert not site.cache_files()
    assert site.listing(*args) == expected  # through click, stored
    assert len(site.cache_files()) == 1
    imported = site.imports()
    assert imported >= 3
    for _ in range(2):
        assert site.listing(*args) == expected
    assert site.imports() == imported  # answered by the cache


def test_the_listings_collisions_and_broken_entries_are_kept(site: Site) -> None:
    """The cached metrics --json still lists both claims of one id, and the broken entry."""
    site.listing("metrics", "--json")
    code, out, err = site.listing("metrics", "--json")
    assert (code, err) == (0, b"")
    entries = json.loads(out)
    claims = [e for e in entries if e["id"] == "cached_dup"]
    assert sorted(e["distribution"] for e in claims) == ["cached-dup-a", "cached-dup-b"]
    assert all(len(e["collision"]) == 2 for e in claims)
    gone = [e for e in entries if e["entry_point"] == "cached-gone"]
    assert gone[0]["status"] == "broken"
    assert "cached_missing_module" in gone[0]["error"]


def _changes(site: Site) -> dict[str, Callable[[], None]]:
    """Changes after which the listing must differ, each applied by calling it."""

    def edit_module() -> None:
        site.metric("cached_good", "cached_shout_edited", "Shouts, edited in place.")

    def same_size_same_mtime() -> None:  # as `cp -p`, `rsync -t` or unpacking an archive
        module = site.path / "cached_good.py"
        before = module.stat()
        site.metric("cached_good", "cached_shout", "Shouts, cachet.")
        site.metric("cached_good", "cached_shouT", "Shouts, cached.")
        assert module.stat().st_size == before.st_size
        os.utime(module, ns=(before.st_atime_ns, before.st_mtime_ns))

    def edit_entry_points() -> None:
        info = site.path / "cached_good-1.0.dist-info" / "entry_points.txt"
        info.write_text(info.read_text().replace("cached-shout", "cached-shout-renamed"))

    def install() -> None:
        site.install("cached-new", "[itemscore.metrics]\nnewcomer = cached_new:M\n", {})
        site.metric("cached_new", "newcomer", "Installed after.")

    def uninstall() -> None:
        shutil.rmtree(site.path / "cached_dup_b-1.0.dist-info")

    def shadow_module() -> None:
        package = site.path / "cached_good"
        package.mkdir()
        (package / "__init__.py").write_text(
            METRIC.format(log=str(site.log), metric_id="cached_shadow", description="Shadowed.")
        )

    def shadow_from_an_earlier_folder() -> None:
        (site.front / "cached_good.py").write_text(
            METRIC.format(log=str(site.log), metric_id="cached_front", description="In front.")
        )

    return {
        "shadow_from_an_earlier_folder": shadow_from_an_earlier_folder,
        "edit_module": edit_module,
        "same_size_same_mtime": same_size_same_mtime,
        "edit_entry_points": edit_entry_points,
        "install": install,
        "uninstall": uninstall,
        "shadow_module": shadow_module,
    }


@pytest.mark.parametrize(
    "change",
    [
        "edit_module",
        "same_size_same_mtime",
        "edit_entry_points",
        "install",
        "uninstall",
        "shadow_module",
        "shadow_from_an_earlier_folder",
    ],
)
def test_every_change_is_seen(site: Site, change: str) -> None:
    """An edited, installed, removed or shadowed plugin changes the answer at once."""
    before = {args: site.through_click(*args) for args in LISTINGS}
    for args in LISTINGS:
        site.listing(*args)
        imported = site.imports()
        assert site.listing(*args) == before[args]
        assert site.imports() == imported  # from the cache
    _changes(site)[change]()
    for args in LISTINGS:
        now = site.through_click(*args)
        assert now != before[args]
        imported = site.imports()
        assert site.listing(*args) == now
        assert site.imports() > imported  # through click
        assert site.listing(*args) == now


def test_the_environment_is_part_of_the_key(site: Site) -> None:
    """ITEMSCORE_DISABLE_PLUGINS and autoload change the answer; each set-up keeps its own."""
    setups: list[dict[str, str]] = [{}, {"ITEMSCORE_DISABLE_PLUGINS": "cached-good"}]
    setups.append({"ITEMSCORE_DISABLE_PLUGIN_AUTOLOAD": "1"})
    for _ in range(2):
        for env in setups:
            for args in LISTINGS:
                assert site.listing(*args, env=env) == site.through_click(*args, env=env)
    answers = {site.listing("metrics", "--json", env=env)[1] for env in setups}
    assert len(answers) == 3


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty", "folder"])
def test_a_damaged_cache_file_is_ignored(site: Site, damage: str) -> None:
    """A cache file cut short, altered, replaced or unreadable: click lists, and it is rewritten."""
    expected = site.through_click("metrics", "--json")
    site.listing("metrics", "--json")
    (path,) = site.cache_files()
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        path.write_bytes(data.replace(b"Shouts, cached.", b"Shouts, cachet."))
    elif damage == "garbage":
        path.write_bytes(bytes(range(256)) * 50)
    elif damage == "empty":
        path.write_bytes(b"")
    else:
        path.unlink()
        path.mkdir()
    imported = site.imports()
    assert site.listing("metrics", "--json") == expected
    assert site.imports() > imported
    if damage != "folder":
        assert site.listing("metrics", "--json") == expected
        assert path.read_bytes() == data


def test_a_cache_folder_that_cannot_be_written_is_silent(site: Site) -> None:
    """XDG_CACHE_HOME naming a file: nothing cached, nothing said, the same answer."""
    blocker = site.root / "not-a-folder"
    blocker.write_text("")
    env = {"XDG_CACHE_HOME": str(blocker)}
    expected = site.through_click("metrics", "--json", env=env)
    for _ in range(2):
        assert site.listing("metrics", "--json", env=env) == expected


def test_the_cache_lives_in_xdg_cache_home_else_home(site: Site) -> None:
    """$XDG_CACHE_HOME/itemscore; a relative XDG_CACHE_HOME is ignored for ~/.cache/itemscore."""
    site.listing("metrics", "--json")
    assert [p.parent for p in site.cache_files()] == [site.cache / "itemscore"]
    home = site.root / "home"
    home.mkdir()
    env = {"XDG_CACHE_HOME": "relative/cache", "HOME": str(home)}
    expected = site.through_click("metrics", "--json", env=env)
    assert site.listing("metrics", "--json", env=env) == expected
    assert len(list((home / ".cache" / "itemscore").iterdir())) == 1
    assert not (site.root / "relative").exists()


def test_what_cannot_be_known_from_files_is_never_cached(site: Site) -> None:
    """A plugin printing as it loads, or adding metrics by hook: listed through click each time."""
    site.module("cached_noisy", "print('hello from a plugin')\n")
    site.module(
        "cached_adder",
        """\
        from itemscore import Metric, hookimpl


        class Added(Metric):
            metric_id = "cached_added"

            def score_item(self, item, ctx):
                return self.ok()


        @hookimpl
        def itemscore_add_metrics():
            return [Added]
        """,
    )
    for module, dist in (("cached_noisy", "cached-noisy"), ("cached_adder", "cached-adder")):
        site.install(dist, f"[itemscore.plugins]\n{module} = {module}\n", {})
        site.age()
        for args in LISTINGS:
            expected = site.through_click(*args)
            for _ in range(2):
                assert site.listing(*args) == expected
            if module == "cached_noisy":
                assert expected[1].startswith(b"hello from a plugin\n")
            else:
                assert b'"cached_added"' in expected[1]
        assert not site.cache_files()
        shutil.rmtree(site.path / f"{dist.replace('-', '_')}-1.0.dist-info")


def test_a_broken_pipe_ends_as_through_click(site: Site) -> None:
    """stdout closed by its reader: exit 1 and nothing on stderr, cached or not."""
    expected = site.into_closed_pipe("metrics", "--json", env={_listing_cache.NO_CACHE_ENV: "1"})
    assert expected == (1, b"")
    site.listing("metrics", "--json")
    assert site.cache_files()
    imported = site.imports()
    assert site.into_closed_pipe("metrics", "--json") == expected
    assert site.imports() == imported


def test_the_cached_answer_loads_neither_click_nor_plugins(site: Site) -> None:
    """The console script's module answers without importing click, attrs or pluggy."""
    report = site.root / "modules.json"
    code = (
        "import atexit, json, sys\n"
        f"atexit.register(lambda: open({str(report)!r}, 'w').write(json.dumps([*sys.modules])))\n"
        "from itemscore.cli import main\n"
        "main(['metrics', '--json'])\n"
    )
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ITEMSCORE_")}
    environ.update(site.env)
    work = site.root / "work"
    work.mkdir()
    site.age()
    past = os.stat(site.path).st_mtime_ns
    os.utime(work, ns=(past, past))

    def run() -> list[str]:
        subprocess.run(
            [sys.executable, "-c", code], cwd=work, env=environ, check=True, capture_output=True
        )
        return list(json.loads(report.read_text()))

    assert "click" in run()
    modules = run()
    for heavy in ("click", "attrs", "pluggy", "importlib.metadata", "itemscore._registry"):
        assert heavy not in modules


def test_main_in_a_process_that_imported_itemscore_never_uses_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In-process registrations may exist: main() lists through click and stores nothing."""
    from itemscore.cli import main

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    for _ in range(2):
        with pytest.raises(SystemExit) as done:
            main(["metrics", "--json"])
        assert done.value.code == 0
        assert any(e["id"] == "exact_match" for e in json.loads(capsys.readouterr().out))
    assert not (tmp_path / "itemscore").exists()


def test_the_cache_file_is_named_by_command_interpreter_and_set_up() -> None:
    """One file per listing and interpreter, in one of a few slots per set-up."""
    first = _listing_cache.cache_file(["metrics", "--json"], [("A", "1")])
    assert first is not None
    assert os.path.basename(first).startswith("metrics-json-")
    other = _listing_cache.cache_file(["plugins", "--json"], [("A", "1")])
    assert other is not None
    assert os.path.basename(other).startswith("plugins-json-")
    slots = {_listing_cache.cache_file(["metrics", "--json"], [("A", str(i))]) for i in range(500)}
    assert len(slots) == _listing_cache.SLOTS


# -- the same, in this process (the parts a subprocess hides from coverage) -------------------


@pytest.fixture
def in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This process made eligible: no stateful module counts, files settle at once.

    Finders that other tests' imports left (importlib_metadata's, with dask) are set aside.
    """
    path_finder = sys.modules["_frozen_importlib_external"].PathFinder
    finders = [f for f in sys.meta_path if f is path_finder or not hasattr(f, "find_distributions")]
    monkeypatch.setattr(sys, "meta_path", finders)
    monkeypatch.setattr(_listing_cache, "_STATEFUL", ())
    monkeypatch.setattr(_listing_cache, "SETTLE_NS", 0)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv(_listing_cache.NO_CACHE_ENV, raising=False)
    return tmp_path / "itemscore"


def _record(args: list[str], *writes: str) -> None:
    recorder = _listing_cache.serve(args)
    assert recorder is not None
    try:
        for text in writes:
            sys.stdout.write(text)
        recorder.store()
    finally:
        recorder.release()


def test_serve_answers_what_a_recorder_stored(
    in_process: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A miss records and stores; the next serve prints it and exits 0; a damaged file misses."""
    args = ["metrics", "--json"]
    _record(args, "", '[{"id": "x"}]\n')
    assert capsys.readouterr().out == '[{"id": "x"}]\n'
    with pytest.raises(SystemExit) as done:
        _listing_cache.serve(args)
    assert done.value.code == 0
    assert capsys.readouterr() == ('[{"id": "x"}]\n', "")
    (path,) = in_process.iterdir()
    path.write_bytes(path.read_bytes().replace(b'"x"', b'"y"'))
    recorder = _listing_cache.serve(args)
    assert recorder is not None
    recorder.release()


@pytest.mark.parametrize("writes", [("[]\n", "more\n"), ("a\0b\n",)], ids=["two writes", "nul"])
def test_anything_but_one_clean_write_is_not_stored(
    in_process: Path, writes: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    _record(["metrics", "--json"], *writes)
    assert not in_process.exists()


def test_stderr_or_bytes_written_around_the_record_are_not_stored(
    in_process: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recorder = _listing_cache.serve(["plugins", "--json"])
    assert recorder is not None
    try:
        sys.stderr.write("a warning\n")
        sys.stdout.writelines(["[]\n"])
        recorder.store()
        assert not in_process.exists()
        recorder.err.parts.clear()
        assert sys.stdout.buffer is not None
        recorder.store()
    finally:
        recorder.release()
    assert not in_process.exists()
    assert sys.stdout is not recorder.out


def test_a_hook_adding_metrics_keeps_the_listing_out(
    in_process: Path, fresh_registry: None, capsys: pytest.CaptureFixture[str]
) -> None:
    from itemscore import hookimpl, plugin_manager

    class Adder:
        @hookimpl
        def itemscore_add_metrics(self) -> list[type]:
            return []

    recorder = _listing_cache.serve(["metrics", "--json"])
    assert recorder is not None
    plugin_manager().register(Adder())
    try:
        sys.stdout.write("[]\n")
        recorder.store()
    finally:
        recorder.release()
    assert not in_process.exists()


def test_when_the_cache_stays_out(
    in_process: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """ITEMSCORE_NO_CACHE, itemscore already loaded, another distribution finder, no home."""
    args = ["metrics", "--json"]
    monkeypatch.setenv(_listing_cache.NO_CACHE_ENV, "1")
    assert _listing_cache.serve(args) is None
    monkeypatch.delenv(_listing_cache.NO_CACHE_ENV)
    monkeypatch.setattr(_listing_cache, "_STATEFUL", ("itemscore._entrypoints",))
    assert _listing_cache.serve(args) is None
    monkeypatch.setattr(_listing_cache, "_STATEFUL", ())

    class Finder:
        @staticmethod
        def find_distributions(*args: object, **kwargs: object) -> list[object]:
            return []

    finders = sys.meta_path
    monkeypatch.setattr(sys, "meta_path", [Finder(), *finders])
    assert _listing_cache.serve(args) is None
    monkeypatch.setattr(sys, "meta_path", finders)
    monkeypatch.setenv("XDG_CACHE_HOME", "")
    monkeypatch.setenv("HOME", "relative")
    assert _listing_cache.cache_file(args) is None
    assert _listing_cache.serve(args) is None


def test_answer_ends_as_click_on_a_broken_pipe_or_another_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class Failing:
        encoding = "utf-8"

        def __init__(self, error: OSError) -> None:
            self.error = error

        def write(self, text: str) -> int:
            raise self.error

        def flush(self) -> None:
            raise self.error

    stderr = sys.stderr
    monkeypatch.setattr(sys, "stdout", Failing(BrokenPipeError(32, "Broken pipe")))
    with pytest.raises(SystemExit) as done:
        _listing_cache.answer("[]\n")
    assert done.value.code == 1
    sys.stdout.flush()  # silent now, as at exit
    assert sys.stdout.encoding == "utf-8"
    monkeypatch.setattr(sys, "stderr", stderr)
    monkeypatch.setattr(sys, "stdout", Failing(OSError(28, "No space left on device")))
    monkeypatch.setenv("ITEMSCORE_DEBUG", "0")
    with pytest.raises(SystemExit) as done:
        _listing_cache.answer("[]\n")
    assert done.value.code == 1
    assert "Error: OSError: [Errno 28] No space left on device" in capsys.readouterr().err


# -- itemscore --version without click -------------------------------------------------------

CLICK_VERSION = (
    "import sys\n"
    "from itemscore.cli._app import cli\n"
    "cli.main(sys.argv[1:], prog_name='itemscore')\n"
)


def test_version_prints_what_click_prints(site: Site) -> None:
    """`itemscore --version` prints as click's --version, even into a closed pipe, without click."""
    by_click = subprocess.run(
        [sys.executable, "-c", CLICK_VERSION, "--version"], capture_output=True, check=False
    )
    assert by_click.stdout.startswith(b"itemscore, version ")
    assert site.listing("--version") == (by_click.returncode, by_click.stdout, by_click.stderr)
    read, write = os.pipe()
    os.close(read)
    try:
        closed = [
            subprocess.run(args, stdout=write, stderr=subprocess.PIPE, check=False).returncode
            for args in ([sys.executable, "-c", CLICK_VERSION, "--version"],
                         [str(SCRIPT), "--version"])
        ]  # fmt: skip
    finally:
        os.close(write)
    assert closed == [1, 1]
    report = site.root / "modules.json"
    code = (
        "import atexit, json, sys\n"
        f"atexit.register(lambda: open({str(report)!r}, 'w').write(json.dumps([*sys.modules])))\n"
        "from itemscore.cli import main\n"
        "main(['--version'])\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    modules = json.loads(report.read_text())
    assert "click" not in modules
    assert "importlib.metadata" not in modules


def test_import_itemscore_loads_nothing_python_has_not() -> None:
    """`import itemscore` adds itself and __future__ to what Python loads at start-up."""
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import itemscore\n"
        "added = sorted(set(sys.modules) - before)\n"
        "print(' '.join(added))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert set(proc.stdout.split()) <= {"itemscore", "__future__"}
