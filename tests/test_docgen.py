"""Tests for the generated metrics reference (itemscore._docgen, docs/reference/metrics.md)."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from itemscore import (
    ItemResult,
    ItemScore,
    Metric,
    MetricContext,
    MetricInfo,
    PluginLoadError,
    Registry,
    register,
)
from itemscore._docgen import main, render_default, render_metric, render_metrics_reference
from itemscore._registry import unregister

REFERENCE = Path(__file__).parents[1] / "docs" / "reference" / "metrics.md"
BUILTIN_IDS = [
    "accuracy", "answered_rate", "bleu", "brier", "choice", "chrf", "cost", "ece",
    "exact_match", "f1", "includes", "llm_judge", "numeric_match", "rouge", "ter", "token_f1",
]  # fmt: skip
#: Metrics that score without an answer key.
KEYLESS = {"answered_rate", "cost", "llm_judge"}


def builtin_classes() -> list[type[Metric]]:
    infos = [i for i in Registry(autoload=False).infos() if i.source == "entry-point"]
    return [i.cls for i in infos if i.cls is not None]


def section(text: str, metric_id: str) -> str:
    """The part of the page under ``## <metric_id>``, up to the next metric."""
    start = text.index(f"\n## {metric_id}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_committed_reference_is_up_to_date() -> None:
    """docs/reference/metrics.md is exactly what the code generates; regenerate it if not."""
    assert REFERENCE.read_text(encoding="utf-8") == render_metrics_reference(), (
        "docs/reference/metrics.md is out of date: run "
        "`python -m itemscore._docgen docs/reference/metrics.md`."
    )


def test_every_builtin_has_a_section_in_id_order() -> None:
    """One section per built-in metric, sorted by id."""
    text = render_metrics_reference()
    headings = [line[3:] for line in text.splitlines() if line.startswith("## ")]
    assert headings == BUILTIN_IDS
    assert sorted(c.metric_id for c in builtin_classes()) == BUILTIN_IDS


def test_every_option_of_every_builtin_appears() -> None:
    """Each option is a table row of its metric's section, with type, default and description."""
    text = render_metrics_reference()
    for cls in builtin_classes():
        part = section(text, cls.metric_id)
        assert cls.description in part
        for name, option in cls.options().items():
            rows = [line for line in part.splitlines() if line.startswith(f"| `{name}` |")]
            assert len(rows) == 1, f"{cls.metric_id}: option {name} is missing"
            assert render_default(option.default) in rows[0]
            assert option.description
            assert option.description in rows[0]


@pytest.mark.parametrize(
    ("metric_id", "needs_key"),
    [(metric_id, metric_id not in KEYLESS) for metric_id in BUILTIN_IDS],
)
def test_facts_line(metric_id: str, needs_key: bool) -> None:
    """Each section says whether the metric needs an answer key and whether higher is better."""
    flag = "yes" if needs_key else "no"
    better = "no" if metric_id in ("brier", "cost", "ece", "ter") else "yes"
    part = section(render_metrics_reference(), metric_id)
    assert f"Needs an answer key: {flag}. Higher is better: {better}." in part


@pytest.mark.parametrize(
    ("metric_id", "aggregation"),
    [
        ("exact_match", "Aggregation: ratio"),
        ("accuracy", "Aggregation: ratio"),
        ("token_f1", "Aggregation: mean"),
        ("f1", "Aggregation: custom (F1 over the gold labels"),
    ],
)
def test_aggregation_line(metric_id: str, aggregation: str) -> None:
    """The aggregation is named; an overridden aggregate is described by its docstring."""
    assert aggregation in section(render_metrics_reference(), metric_id)


def test_rows_read_like_the_reference_page() -> None:
    """Types and defaults are written as the reference writes them."""
    text = render_metrics_reference()
    f1 = section(text, "f1")
    assert '| `average` | `macro`, `micro`, `weighted` | `"macro"` |' in f1
    assert "| `labels` | list of strings | none |" in f1
    assert "| `ignore_case` | boolean | `true` |" in f1
    assert "| `ignore_punctuation` | boolean | `false` |" in f1
    assert "| `remove_articles` | boolean | `false` |" in section(text, "token_f1")
    assert "No options." in section(text, "answered_rate")


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        pytest.param(True, "`true`", id="true"),
        pytest.param(False, "`false`", id="false"),
        pytest.param(None, "none", id="none"),
        pytest.param("macro", '`"macro"`', id="string"),
        pytest.param(3, "`3`", id="integer"),
        pytest.param(["a", "b"], '`["a", "b"]`', id="list"),
        pytest.param(inspect.Parameter.empty, "required", id="required"),
    ],
)
def test_render_default(value: Any, shown: str) -> None:
    """Defaults are rendered as `true`, `"macro"`, none..."""
    assert render_default(value) == shown


@pytest.fixture
def registered_metric() -> Iterator[None]:
    @register
    class Registered(Metric):
        metric_id = "docgen_registered_probe"
        description = "Registered in-process only."

        def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
            return self.ok()

    yield
    unregister("docgen_registered_probe")


@pytest.mark.usefixtures("registered_metric")
def test_only_builtins_are_listed() -> None:
    """In-process registrations and installed plugins never appear on the page."""
    text = render_metrics_reference()
    assert "docgen_registered_probe" not in text
    assert "itemscore_example" not in text
    assert "output_length" not in text


def test_main_writes_and_checks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """main writes the page; --check passes on it and fails with a message once it changes."""
    page = tmp_path / "docs" / "metrics.md"
    assert main(["--check", str(page)]) == 1
    assert "does not exist" in capsys.readouterr().err
    assert main([str(page)]) == 0
    assert page.read_text(encoding="utf-8") == render_metrics_reference()
    assert main(["--check", str(page)]) == 0
    page.write_text(page.read_text(encoding="utf-8") + "edited by hand\n", encoding="utf-8")
    assert main(["--check", str(page)]) == 1
    err = capsys.readouterr().err
    assert "out of date" in err
    assert "python -m itemscore._docgen" in err


def test_broken_builtin_stops_generation(monkeypatch: pytest.MonkeyPatch) -> None:
    """A built-in that cannot be loaded is an error naming it, never a silent gap on the page."""
    broken = MetricInfo(
        id=None,
        entry_point="exact_match",
        target="itemscore.metrics_builtin.exact_match:Gone",
        status="broken",
        error="AttributeError: Gone",
    )
    monkeypatch.setattr(Registry, "infos", lambda self: [broken])
    with pytest.raises(PluginLoadError, match=r"exact_match.*Gone"):
        render_metrics_reference()


def test_unloaded_metric_cannot_be_rendered() -> None:
    """render_metric needs a loaded class."""
    with pytest.raises(PluginLoadError, match="not loaded"):
        render_metric(MetricInfo(id="x", status="broken", error="ImportError: x"))
