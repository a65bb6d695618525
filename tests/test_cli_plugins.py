"""The command line with installed plugins: collisions, broken entries, switching plugins off.

Each test installs fake distributions into a folder put on ``PYTHONPATH`` (a ``.dist-info``
with entry points, and the modules they name), then runs the installed console script.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).parent / "itemscore"

SHOUT = """
from itemscore import Metric


class M(Metric):
    metric_id = {metric_id!r}
    description = "Test metric {metric_id}."

    def score_item(self, item, ctx):
        return self.ok() if item.output and item.output.isupper() else self.fail()
"""

SUITE = """
from itemscore import Suite


class MySuite(Suite):
    suite_id = "my_suite"
    metrics = ("answered_rate",)

    def items(self, raw):
        from itemscore import ItemResult

        for row in raw:
            yield ItemResult(id=str(row["qid"]), output=row["answer"], expected=None)
"""


def install(site: Path, dist: str, entry_points: str, modules: dict[str, str]) -> None:
    """A distribution ``dist`` with ``entry_points.txt`` and its modules, in ``site``."""
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))
    for name, source in modules.items():
        (site / f"{name}.py").write_text(textwrap.dedent(source))


def run_cli(
    *args: str | Path, site: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ITEMSCORE_")}
    if site is not None:
        environ["PYTHONPATH"] = str(site)
    environ.update(env or {})
    return subprocess.run(
        [str(SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        env=environ,
        timeout=120,
        check=False,
    )


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "1", "output": "YES", "expected": "yes"}\n', encoding="utf-8")
    return path


def test_two_distributions_claiming_one_id_are_listed_and_metrics_exits_0(tmp_path: Path) -> None:
    """`metrics` and `metrics --json` exit 0 and list both claims of the id (issue 7.10)."""
    site = tmp_path / "site"
    for dist in ("dup-a", "dup-b"):
        module = f"{dist.replace('-', '_')}_metric"
        install(
            site,
            dist,
            f"[itemscore.metrics]\nshout = {module}:M\n",
            {module: SHOUT.format(metric_id="shout")},
        )
    listed = run_cli("metrics", "--json", site=site)
    assert listed.returncode == 0, listed.stderr
    claims = [e for e in json.loads(listed.stdout) if e["id"] == "shout"]
    assert sorted(e["distribution"] for e in claims) == ["dup-a", "dup-b"]
    for entry in claims:
        assert entry["status"] == "broken"
        assert len(entry["collision"]) == 2
        assert "'dup-a'" in entry["error"]
        assert "'dup-b'" in entry["error"]
    assert any(e["id"] == "exact_match" and e["status"] == "ok" for e in json.loads(listed.stdout))
    table = run_cli("metrics", site=site)
    assert table.returncode == 0, table.stderr
    assert "claimed twice" in table.stdout


def test_a_plugin_taking_token_f1_under_another_name_collides(tmp_path: Path, data: Path) -> None:
    """-m token_f1 with a plugin declaring that id: an error naming both (issue 7.11).

    Never silently the built-in; switching the plugin off (by entry point or distribution)
    makes it the built-in again.
    """
    site = tmp_path / "site"
    install(
        site,
        "impostor",
        "[itemscore.metrics]\nmy-tf1 = impostor_tf1:M\n",
        {"impostor_tf1": SHOUT.format(metric_id="token_f1")},
    )
    proc = run_cli("score", data, "-m", "token_f1", "--json", site=site)
    assert proc.returncode == 1
    assert "Metric id 'token_f1' is claimed twice" in proc.stderr
    assert "'impostor'" in proc.stderr
    assert "'itemscore'" in proc.stderr
    off = {"ITEMSCORE_DISABLE_PLUGINS": "my-tf1"}
    by_env = run_cli("score", data, "-m", "token_f1", "--json", site=site, env=off)
    assert by_env.returncode == 0, by_env.stderr
    assert json.loads(by_env.stdout)["measurements"][0]["value"] == 1.0
    by_flag = run_cli("-p", "no:impostor", "score", data, "-m", "token_f1", "-q", site=site)
    assert by_flag.returncode == 0, by_flag.stderr


def test_a_broken_suite_entry_never_breaks_a_fine_suite(tmp_path: Path, data: Path) -> None:
    """A broken itemscore.suites entry does not stop --suite of a fine suite (issue 7.11).

    The fine suite's items() reads the rows; asking for the broken one names its entry point
    and distribution.
    """
    site = tmp_path / "site"
    install(
        site,
        "suites-dist",
        """\
        [itemscore.suites]
        aaa-broken = suites_missing_module:Nothing
        my-suite = suites_fine:MySuite
        """,
        {"suites_fine": SUITE},
    )
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"qid": 7, "answer": "x"}\n{"qid": 8, "answer": null}\n', encoding="utf-8")
    proc = run_cli("score", rows, "--suite", "my_suite", "--json", site=site)
    assert proc.returncode == 0, proc.stderr
    (measurement,) = json.loads(proc.stdout)["measurements"]
    assert measurement["key"] == "my_suite.answered_rate"
    assert measurement["value"] == 0.5  # the suite's items(): `answer` is the output
    broken = run_cli("score", data, "--suite", "aaa-broken", "-m", "answered_rate", site=site)
    assert broken.returncode == 1
    assert "suite entry point 'aaa-broken'" in broken.stderr
    assert "'suites-dist'" in broken.stderr
    assert "suites_missing_module" in broken.stderr


def test_plugins_lists_every_entry_point_with_its_status(tmp_path: Path) -> None:
    """`plugins --json`: metrics, suites and hook plugins, healthy, broken and disabled."""
    site = tmp_path / "site"
    install(
        site,
        "mixed",
        """\
        [itemscore.metrics]
        shout = mixed_metric:M
        gone = mixed_missing:M

        [itemscore.suites]
        lost-suite = mixed_missing_suite:S

        [itemscore.plugins]
        hooky = mixed_missing_hooks
        """,
        {"mixed_metric": SHOUT.format(metric_id="shout")},
    )
    proc = run_cli("plugins", "--json", site=site, env={"ITEMSCORE_DISABLE_PLUGINS": "gone"})
    assert proc.returncode == 0, proc.stderr
    rows = {(r["kind"], r["entry_point"]): r for r in json.loads(proc.stdout)}
    assert rows[("metric", "shout")]["status"] == "ok"
    assert rows[("metric", "shout")]["distribution"] == "mixed"
    assert rows[("metric", "shout")]["version"] == "1.0"
    assert rows[("metric", "exact_match")]["status"] == "ok"
    assert rows[("metric", "gone")]["status"] == "disabled"
    assert rows[("suite", "demo-qa")]["status"] == "ok"
    assert rows[("suite", "lost-suite")]["status"] == "broken"
    assert "mixed_missing_suite" in rows[("suite", "lost-suite")]["error"]
    assert rows[("hooks", "hooky")]["status"] == "broken"
    table = run_cli("plugins", site=site)
    assert table.returncode == 0, table.stderr
    assert "lost-suite" in table.stdout


def test_a_broken_hook_plugin_is_a_warning_on_every_command(tmp_path: Path, data: Path) -> None:
    """score, demo and rescore each warn about a hook plugin that failed to load."""
    site = tmp_path / "site"
    install(site, "hooks-dist", "[itemscore.plugins]\nhooky = hooks_missing\n", {})
    score = run_cli("score", data, "-m", "answered_rate", "--out", tmp_path / "o", site=site)
    assert score.returncode == 0, score.stderr
    assert "Warning: the plugin 'hooky' of distribution 'hooks-dist' failed to load" in (
        score.stderr
    )
    demo = run_cli("demo", "--json", site=site)
    assert "Warning: the plugin 'hooky'" in demo.stderr
    rescore = run_cli("rescore", tmp_path / "o" / "results.json", "--json", site=site)
    assert "Warning: the plugin 'hooky'" in rescore.stderr


def test_unknown_metric_says_when_autoload_is_off(data: Path) -> None:
    """With ITEMSCORE_DISABLE_PLUGIN_AUTOLOAD=1, "No metric is named" says so."""
    proc = run_cli(
        "score", data, "-m", "starts_with", env={"ITEMSCORE_DISABLE_PLUGIN_AUTOLOAD": "1"}
    )
    assert proc.returncode == 2
    assert "No metric is named 'starts_with'" in proc.stderr
    assert "Plugin autoload is off (ITEMSCORE_DISABLE_PLUGIN_AUTOLOAD is set)" in proc.stderr


def test_p_needs_no_colon_name(data: Path) -> None:
    """-p takes no:NAME only."""
    proc = run_cli("-p", "impostor", "metrics", "--json")
    assert proc.returncode == 2
    assert "must be no:NAME" in proc.stderr


LISTED_MODULES = """
import atexit, json, sys

atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))
from itemscore.cli import main

main(sys.argv[1:])
"""


@pytest.mark.parametrize("command", ["metrics", "plugins"])
def test_a_json_listing_imports_the_metrics_and_nothing_heavy(tmp_path: Path, command: str) -> None:
    """`metrics --json`/`plugins --json` import each metric, not numpy, rich or the runner.

    Listing reads each metric's id and description, class attributes: the metric modules are
    imported, what they import inside their methods is not.
    """
    site = tmp_path / "site"
    install(site, "lazy", "[itemscore.metrics]\nshout = lazy_metric:M\n",
            {"lazy_metric": SHOUT.format(metric_id="shout")})  # fmt: skip
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ITEMSCORE_")}
    proc = subprocess.run(
        [sys.executable, "-c", LISTED_MODULES, command, "--json"],
        capture_output=True, text=True, timeout=120, check=False,
        env={**environ, "PYTHONPATH": str(site)},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert any(e.get("id") == "shout" for e in json.loads(proc.stdout))
    modules = set(json.loads(proc.stderr.splitlines()[-1]))
    assert {"lazy_metric", "itemscore.metrics_builtin.exact_match"} <= modules
    heavy = {"numpy", "scipy", "pandas", "pyarrow", "rich", "itemscore._run"}
    assert heavy.isdisjoint(modules)
