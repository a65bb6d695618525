"""Tests for plugins_example/: a third-party package found only through its entry points."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

import itemscore
from itemscore import ItemResult, OptionError, Registry, Status, UnknownMetricError
from itemscore._entrypoints import AUTOLOAD_ENV

ROOT = Path(__file__).parents[1]
DIST = "itemscore-example"
METRIC_IDS = {"starts_with": "starts-with", "output_length": "output-length"}


# Every installed plugin, autoload on, no registry or plugin manager left from before.
pytestmark = pytest.mark.usefixtures("fresh_registry")


def _python(code: str, **env: str) -> str:
    """Run ``code`` in a fresh, isolated interpreter with the test's environment plus ``env``."""
    done = subprocess.run(
        [sys.executable, "-I", "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **env},
    )
    return done.stdout.strip()


# -- discovery ----------------------------------------------------------------------------------


def test_the_distribution_declares_both_metrics_and_the_plugin() -> None:
    """itemscore-example's metadata declares its metrics and its hook plugin."""
    eps = metadata.distribution(DIST).entry_points
    metrics = {ep.name: ep.value for ep in eps if ep.group == "itemscore.metrics"}
    plugins = {ep.name: ep.value for ep in eps if ep.group == "itemscore.plugins"}
    assert metrics == {
        "starts-with": "itemscore_example.metrics:StartsWith",
        "output-length": "itemscore_example.metrics:OutputLength",
    }
    assert plugins == {"example-markdown": "itemscore_example.plugin"}


def test_the_registry_lists_the_metrics_under_the_example_distribution() -> None:
    """Registry().infos() names itemscore-example, its version and the entry points."""
    infos = {i.id: i for i in Registry().infos() if i.id in METRIC_IDS}
    assert set(infos) == set(METRIC_IDS)
    for metric_id, info in infos.items():
        assert info.distribution == DIST
        assert info.version == metadata.version(DIST)
        assert info.entry_point == METRIC_IDS[metric_id]
        assert (info.source, info.status) == ("entry-point", "ok")


def test_itemscore_imports_the_example_only_to_resolve_metrics() -> None:
    """Importing itemscore imports no plugin; asking for any metric imports every metric plugin.

    A metric's id is a class attribute: only with every metric plugin loaded is it known that
    no other claims the id asked for.
    """
    out = _python(
        """
        import sys
        import itemscore
        print("itemscore_example.metrics" in sys.modules)
        itemscore.score([itemscore.ItemResult(id="1", output="x")], ["answered_rate"])
        print("itemscore_example.metrics" in sys.modules)
        """
    )
    assert out.splitlines() == ["False", "True"]


def test_the_host_source_does_not_name_the_example() -> None:
    """No module of itemscore refers to itemscore_example: it is found by entry points only."""
    for folder in ("core", "metrics_builtin"):
        for path in (ROOT / folder).rglob("*.py"):
            assert "itemscore_example" not in path.read_text(encoding="utf-8"), path


def test_with_autoload_disabled_the_example_ids_are_unknown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ITEMSCORE_DISABLE_PLUGIN_AUTOLOAD=1 hides the example, even once its module is imported."""
    import itemscore_example.metrics  # noqa: F401 - importing must not register anything

    monkeypatch.setenv(AUTOLOAD_ENV, "1")
    itemscore.reset_registry()
    for name in (*METRIC_IDS, *METRIC_IDS.values()):
        with pytest.raises(UnknownMetricError):
            itemscore.score([ItemResult(id="1", output="x", expected="x")], [name])
    assert not itemscore.plugin_manager().has_plugin("example-markdown")


def test_with_autoload_disabled_in_a_fresh_process_the_example_is_not_listed() -> None:
    """A process started with autoload off neither lists nor imports the example."""
    out = _python(
        """
        import sys
        import itemscore
        ids = sorted(i.id for i in itemscore.Registry().infos())
        print(ids)
        print(any(m.startswith("itemscore_example") for m in sys.modules))
        """,
        **{AUTOLOAD_ENV: "1"},
    )
    ids_line, imported = out.splitlines()
    assert "starts_with" not in ids_line
    assert "output_length" not in ids_line
    assert "answered_rate" in ids_line
    assert imported == "False"


# -- starts_with --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "expected", "options", "status"),
    [
        pytest.param("Paris is the capital", ("Paris",), {}, "ok", id="prefix"),
        pytest.param("  paris.", ("Paris",), {}, "ok", id="leading-space-and-case"),
        pytest.param("paris", ("Paris",), {"ignore_case": False}, "fail", id="case-kept"),
        pytest.param("The capital is Paris", ("Paris",), {}, "fail", id="not-at-start"),
        pytest.param("Lyon", ("Paris", "Lyon"), {}, "ok", id="second-answer"),
        pytest.param("Parisian food", ("Paris",), {}, "ok", id="prefix-inside-word"),
        pytest.param("Parisian food", ("Paris",), {"match": "word"}, "fail", id="word-inside"),
        pytest.param("Paris, France", ("Paris",), {"match": "word"}, "ok", id="word-punct"),
        pytest.param("Paris", ("Paris",), {"match": "word"}, "ok", id="word-whole-output"),
        pytest.param("STRASSE 5", ("straße",), {}, "ok", id="casefold"),
        pytest.param(None, ("Paris",), {}, "fail", id="failed-request"),
        pytest.param("Paris", None, {}, "skip", id="no-answer-key"),
        pytest.param("Paris", ("  ",), {}, "skip", id="blank-answers"),
    ],
)
def test_starts_with_scores_each_item(
    output: str | None, expected: tuple[str, ...] | None, options: dict[str, Any], status: str
) -> None:
    """starts_with: ok when the output starts with an answer; fail on failure; skip without key."""
    item = ItemResult(id="1", output=output, expected=expected)
    result = itemscore.score([item], [{"name": "starts_with", **options}])
    score = result.items[0].scores["starts_with"]
    assert score.status == status
    if status == "ok":
        assert score.value == 1.0
        assert score.extra["matched"] in (expected or ())


def test_starts_with_aggregates_the_share_of_ok_among_scored() -> None:
    """The measurement is ok / (ok + fail), skips and failed requests counted as the rules say."""
    items = [
        ItemResult(id="1", output="Paris", expected="Paris"),
        ItemResult(id="2", output="Rome", expected="Paris"),
        ItemResult(id="3", output=None, expected="Paris"),
        ItemResult(id="4", output="Paris", expected=None),
        ItemResult(id="5", output="paris!", expected="Paris"),
    ]
    m = itemscore.score(items, ["starts-with"], suite_id="geo").measurements["geo.starts_with"]
    # ok: 1 and 5; fail: 2 and the failed request 3; skip: 4 (no answer key).
    assert dict(m.counts) == {Status.OK: 2, Status.FAIL: 2, Status.SKIP: 1, Status.ERROR: 0}
    assert m.n == 4
    assert m.value == pytest.approx(2 / 4)
    assert m.ci_method == "wilson"
    assert m.ci_low is not None
    assert m.ci_high is not None
    assert m.ci_low < 0.5 < m.ci_high
    assert m.higher_is_better is True


# -- output_length ------------------------------------------------------------------------------


LENGTH_ITEMS = [
    ItemResult(id="1", output="The cat sat", expected="x"),
    ItemResult(id="2", output="  one  ", expected=None),
    ItemResult(id="3", output="今日は 晴れ", expected=None),
    ItemResult(id="4", output=None, expected="x"),
    ItemResult(id="5", output="a b c d e f g"),
]


@pytest.mark.parametrize(
    ("options", "lengths"),
    [
        # Whitespace words; every Japanese character is a token of its own.
        pytest.param({}, [3, 1, 5, 7], id="tokens"),
        pytest.param({"unit": "characters"}, [11, 3, 6, 13], id="characters"),
        pytest.param({"unit": "characters", "strip": False}, [11, 7, 6, 13], id="unstripped"),
    ],
)
def test_output_length_measures_every_answered_item(
    options: dict[str, Any], lengths: list[int]
) -> None:
    """Every answered item gets its length; a failed request is skipped; no answer key needed."""
    result = itemscore.score(LENGTH_ITEMS, [{"name": "output_length", **options}])
    scores = [i.scores["output_length"] for i in result.items]
    assert [s.status for s in scores] == ["ok", "ok", "ok", "skip", "ok"]
    assert [s.value for s in scores if s.status == "ok"] == [float(n) for n in lengths]
    m = result.measurements["default.output_length"]
    assert m.value is not None
    assert m.value == pytest.approx(statistics.mean(lengths))
    assert m.n == len(lengths)
    assert m.higher_is_better is False
    assert m.extra["p50"] == pytest.approx(statistics.median(lengths))
    p90 = statistics.quantiles(lengths, n=10, method="inclusive")[8]
    assert m.extra["p90"] == pytest.approx(p90)
    assert m.ci_method == "normal"
    assert m.ci_low is not None
    assert m.ci_high is not None
    z = statistics.NormalDist().inv_cdf(0.975)
    half_width = z * statistics.stdev(lengths) / len(lengths) ** 0.5
    assert m.ci_high - m.value == pytest.approx(half_width)


def test_output_length_breaks_down_by_group_with_percentiles() -> None:
    """Per-group measurements carry the same shape, percentiles included."""
    items = [
        ItemResult(id="1", output="a b", group="short"),
        ItemResult(id="2", output="a", group="short"),
        ItemResult(id="3", output="a b c d", group="long"),
    ]
    m = itemscore.score(items, ["output_length"]).measurements["default.output_length"]
    assert set(m.groups) == {"short", "long"}
    assert m.groups["short"].value == pytest.approx(1.5)
    assert m.groups["short"].extra["p50"] == pytest.approx(1.5)
    assert m.groups["long"].extra["p90"] == pytest.approx(4.0)


def test_output_length_falls_back_to_one_item_at_a_time_when_the_batch_raises() -> None:
    """If score_items raises, each item is scored alone: one bad item costs one error score."""
    from itemscore_example.metrics import OutputLength

    class Fragile(OutputLength):
        metric_id = "fragile_length"

        def length(self, output: str) -> int:
            if output == "boom":
                raise ValueError("cannot measure this output")
            return super().length(output)

    items = [
        ItemResult(id="1", output="a b"),
        ItemResult(id="2", output="boom"),
        ItemResult(id="3", output="a b c"),
    ]
    scores = [i.scores["fragile_length"] for i in itemscore.score(items, [Fragile()]).items]
    assert [(s.status, s.value) for s in scores] == [("ok", 2.0), ("error", None), ("ok", 3.0)]
    assert scores[1].reason == "ValueError: cannot measure this output"


def test_output_length_with_nothing_scored_has_no_value() -> None:
    """Only failed requests: no value, no percentiles, every item skipped."""
    items = [ItemResult(id="1", output=None), ItemResult(id="2", output=None)]
    m = itemscore.score(items, ["output_length"]).measurements["default.output_length"]
    assert m.value is None
    assert m.error is None
    assert m.counts[Status.SKIP] == 2
    assert "p50" not in m.extra


# -- options ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "fragments"),
    [
        pytest.param({"name": "starts_with", "match": "words"},
                     ["`match`", "'words'", "'prefix', 'word'", "Did you mean 'word'?"],
                     id="literal-typo"),
        pytest.param({"name": "starts_with", "ignore_case": "yes"},
                     ["`ignore_case`", "'yes'", "boolean"], id="wrong-type"),
        pytest.param({"name": "starts_with", "ignorecase": True},
                     ["no option `ignorecase`", "Did you mean 'ignore_case'?", "`match`"],
                     id="unknown-option"),
        pytest.param({"name": "output_length", "unit": "bytes"},
                     ["`unit`", "'bytes'", "'tokens', 'characters'"], id="unit"),
    ],
)  # fmt: skip
def test_a_bad_option_is_an_option_error_before_scoring(
    spec: dict[str, Any], fragments: list[str]
) -> None:
    """A wrong option value or name raises OptionError naming it and the allowed values."""
    with pytest.raises(OptionError) as caught:
        itemscore.score([ItemResult(id="1", output="x", expected="x")], [spec])
    for fragment in fragments:
        assert fragment in str(caught.value)


def test_the_options_are_described_from_the_docstring() -> None:
    """Metric.options() reads each option's type, default and description."""
    starts_with = Registry().get("starts_with").options()
    assert list(starts_with) == ["ignore_case", "match"]
    assert starts_with["ignore_case"].default is True
    assert starts_with["match"].choices == ("prefix", "word")
    assert starts_with["match"].description.startswith("``prefix`` accepts any prefix")
    length = Registry().get("output_length").options()
    assert length["unit"].choices == ("tokens", "characters")
    assert length["unit"].default == "tokens"
    assert "tokenize" in length["unit"].description


def test_one_metric_twice_with_labels() -> None:
    """The example metric can run twice under two labels with different options."""
    items = [ItemResult(id="1", output="Parisian", expected="Paris")]
    result = itemscore.score(
        items,
        [
            {"name": "starts_with", "label": "prefix"},
            {"name": "starts_with", "label": "word", "match": "word"},
        ],
    )
    assert result.items[0].scores["prefix"].status == "ok"
    assert result.items[0].scores["word"].status == "fail"


# -- the hook plugin ----------------------------------------------------------------------------


def test_the_example_plugin_is_loaded_and_offers_markdown(tmp_path: Path) -> None:
    """The itemscore.plugins entry point registers the plugin; its md writer writes a table."""
    pm = itemscore.plugin_manager()
    assert pm.has_plugin("example-markdown")
    formats: dict[str, Any] = {}
    for mapping in pm.hook.itemscore_export_formats():
        formats.update(mapping)
    items = [
        ItemResult(id="1", output="Paris", expected="Paris", group="eu"),
        ItemResult(id="2", output=None, expected="Rome", group="eu"),
        ItemResult(id="3", output="x", expected=None, group="us"),
    ]
    result = itemscore.score(items, ["starts_with"], suite_id="geo")
    path = tmp_path / "results.mdtable"
    formats["mdtable"](result, path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("| measurement |")
    rows = {line.split(" | ")[0].lstrip("| "): line for line in lines[2:]}
    assert set(rows) == {"geo.starts_with", "geo.starts_with [eu]", "geo.starts_with [us]"}
    m = result.measurements["geo.starts_with"]
    assert f"| {m.value:.4f} |" in rows["geo.starts_with"]
    assert f"[{m.ci_low:.4f}, {m.ci_high:.4f}]" in rows["geo.starts_with"]
