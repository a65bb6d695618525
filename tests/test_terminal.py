"""Terminal output: result tables, the metrics list, one metric's detail, the progress bar."""

from __future__ import annotations

import io
import pathlib
import sys
from collections.abc import Sequence
from typing import Any

import pytest
from rich.console import Console

import itemscore
from itemscore import Estimate, ItemResult, ItemScore, Metric, MetricContext, MetricInfo
from itemscore._terminal import (
    format_interval,
    format_value,
    make_console,
    metric_detail,
    metrics_tables,
    progress_bar,
    progress_wanted,
    result_tables,
    yaml_text,
)


class Broken(Metric):
    """Fails to aggregate."""

    metric_id = "test_terminal_broken"
    required_inputs = ()

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        return self.ok()

    def aggregate(self, scores: Sequence[ItemScore], ctx: MetricContext) -> Estimate:
        raise ValueError("cannot aggregate")


class WithOptions(Metric):
    """A metric with options.

    Args:
        mode: How to compare.
        limit: Largest length.
    """

    metric_id = "test_terminal_options"
    description = "Says yes."
    required_inputs = ("output", "expected")
    higher_is_better = False

    def __init__(self, mode: str = "fast", limit: int | None = None) -> None:
        self.mode = mode
        self.limit = limit

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        return self.ok()


def render(*renderables: Any) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=160, color_system=None)
    for renderable in renderables:
        console.print(renderable)
    return buffer.getvalue()


def line_with(text: str, needle: str) -> list[str]:
    """The cells of the first table line containing ``needle``."""
    return next(line for line in text.splitlines() if needle in line).split()


@pytest.mark.parametrize(
    ("value", "text"),
    [(None, "—"), (0.5, "0.5000"), (1 / 3, "0.3333"), (0.000512, "0.0005120"), (35.21, "35.21")],
    ids=["none", "half", "third", "small", "large"],
)
def test_format_value(value: float | None, text: str) -> None:
    """A value alone has four significant digits; a missing value is a dash."""
    assert format_value(value) == text


def test_format_interval() -> None:
    """An interval is [low, high] to one digit past its width's first; half is none."""
    assert format_interval(0.1, 0.25) == "[0.10, 0.25]"
    assert format_interval(0.000491, 0.000513) == "[0.000491, 0.000513]"
    assert format_interval(None, 0.2) == ""


def test_one_table_per_model_with_counts() -> None:
    """Each model gets a table: label, value, interval, method, n and the four state counts."""
    data = [
        ItemResult(id="1", model="a", output="x", expected=("x",)),
        ItemResult(id="2", model="a", output=None, expected=("x",)),
        ItemResult(id="3", model="a", output="y", expected=None),
        ItemResult(id="4", model="b", output="x", expected=("x",)),
    ]
    result = itemscore.score(data, ["exact_match"], suite_id="s")
    tables = result_tables(result, layout="wide")
    assert [str(t.title) for t in tables] == ["s · a", "s · b"]
    text = render(tables[0])
    m = result.by_model["a"]["s.exact_match"]
    assert m.ci_low is not None
    assert m.ci_high is not None
    # Interval width ~0.85: one decimal past its first digit, two decimals.
    # n = 2 scored (1 ok, 1 fail), 1 skipped for want of an answer key, 0 errors.
    assert line_with(text, "exact_match") == [
        "exact_match",
        "0.50",
        f"\u2021[{m.ci_low:.2f},",  # 1 of 2: Wilson covers 88.3% at worst inside it
        f"{m.ci_high:.2f}]",
        "Wilson",
        "2",
        "1",
        "1",
        "1",
        "0",
    ]
    assert "aggregate error" not in text


def test_groups_appear_only_when_asked() -> None:
    """--by-group adds a row per group under its measurement."""
    data = [
        ItemResult(id="1", output="x", group="g1"),
        ItemResult(id="2", output=None, group="g2"),
    ]
    result = itemscore.score(data, ["answered_rate"])
    plain = render(*result_tables(result))
    grouped = render(*result_tables(result, by_group=True))
    assert "g1" not in plain
    assert line_with(grouped, "g1")[:3] == ["g1", "†", "1.00"]  # one item: a small group
    assert line_with(grouped, "g2")[:3] == ["g2", "†", "0.00"]


def test_failed_aggregate_shows_its_error() -> None:
    """A measurement whose aggregate raised shows ``error``, and its message under the table."""
    result = itemscore.score([ItemResult(id="1", output="x")], [Broken, "answered_rate"])
    text = render(*result_tables(result))
    assert line_with(text, "test_terminal_broken")[1] == "error"
    assert "test_terminal_broken: the aggregate failed: ValueError: cannot aggregate" in text


def test_metrics_table_lists_metrics_and_broken_plugins() -> None:
    """Installed metrics go in one table; a broken plugin, with its error, in another."""
    infos = [
        MetricInfo(
            id="test_terminal_options", target="m:WithOptions", source="register", cls=WithOptions
        ),
        MetricInfo(
            id=None,
            entry_point="bad-one",
            target="nowhere:Thing",
            distribution="bad-dist",
            version="2.0",
            status="broken",
            error="ModuleNotFoundError: No module named 'nowhere'",
        ),
    ]
    tables = metrics_tables(infos)
    assert [t.title for t in tables] == ["Installed metrics", "Broken plugins"]
    text = render(*tables)
    assert line_with(text, "test_terminal_options")[:5] == [
        "test_terminal_options",
        "(register)",
        "(in-process)",
        "deterministic",
        "no",
    ]
    assert "bad-dist 2.0" in text
    assert "No module named 'nowhere'" in text
    assert len(metrics_tables(infos[:1])) == 1


def test_metric_detail_shows_options_with_defaults() -> None:
    """`metrics show` lists each option with its type, default and description."""
    info = MetricInfo(id="test_terminal_options", target="m:W", source="register", cls=WithOptions)
    text = render(*metric_detail(info))
    assert line_with(text, "needs answer key")[-1] == "yes"
    assert line_with(text, "higher is better")[-1] == "no"
    assert "Says yes." in text
    assert line_with(text, "mode ") == ["mode", "string", "fast", "How", "to", "compare."]
    assert line_with(text, "limit")[-3:] == ["null", "Largest", "length."]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "null"),
        (True, "true"),
        (3, "3"),
        (("a", "b"), "[a, b]"),
        ({"k": False}, "{k: false}"),
    ],
    ids=["null", "bool", "int", "list", "mapping"],
)
def test_yaml_text(value: Any, text: str) -> None:
    """Defaults are shown as one would write them in YAML or in -m."""
    assert yaml_text(value) == text


def test_progress_only_for_people_at_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bar shows on a terminal, never under --json, --quiet or in CI."""
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert progress_wanted() is True
    assert progress_wanted(quiet=True) is False
    assert progress_wanted(json_output=True) is False
    monkeypatch.setenv("CI", "true")
    assert progress_wanted() is False
    monkeypatch.delenv("CI")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    assert progress_wanted() is False


def test_disabled_progress_gives_no_callback() -> None:
    """Without a bar the runner gets no callback at all (no per-item cost)."""
    with progress_bar(False) as callback:
        assert callback is None


def test_progress_bar_follows_the_runner(capsys: pytest.CaptureFixture[str]) -> None:
    """The runner's progress(done, total) calls drive the bar to completion."""
    data = [ItemResult(id=str(i), output="x") for i in range(5)]
    seen: list[tuple[int, int]] = []
    with progress_bar(True) as callback:
        assert callback is not None
        callback.reading(5)
        task = callback._bar.tasks[0]
        assert (task.description, task.completed, task.total) == ("reading", 5, None)

        def spy(done: int, total: int) -> None:
            seen.append((done, total))
            callback(done, total)

        itemscore.score(data, ["answered_rate"], progress=spy)
        assert (task.description, task.completed, task.total) == ("scoring", 5, 5)
    assert seen[-1] == (5, 5)


def test_console_is_wide_when_not_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Piped output gets at least 120 columns, so tables are not squeezed to 80."""
    monkeypatch.delenv("COLUMNS", raising=False)
    assert make_console(io.StringIO()).width >= 120


def test_progress_bar_shows_reading_then_scoring(tmp_path: pathlib.Path) -> None:
    """Reading a file counts its rows on the bar, then scoring takes over with its total."""
    from itemscore._spec import MetricSpec
    from itemscore.cli._pipeline import score_request
    from itemscore.cli._request import MetricEntry, RunRequest

    data = tmp_path / "d.jsonl"
    data.write_text("".join(f'{{"output": "x{i}"}}\n' for i in range(25_000)), encoding="utf-8")
    calls: list[tuple[str, int, int | None]] = []

    class Spy:
        def __call__(self, done: int, total: int) -> None:
            calls.append(("scoring", done, total))

        def reading(self, rows: int) -> None:
            calls.append(("reading", rows, None))

    spy = Spy()
    entry = MetricEntry(MetricSpec("answered_rate"), "-m 'answered_rate'")
    request = RunRequest(data=data, metrics=[entry])
    score_request(request, progress=spy, reading=spy.reading)
    reads = [c for c in calls if c[0] == "reading"]
    counted = [rows for _, rows, _ in reads]
    assert counted == sorted(counted)
    assert counted[-1] == 25_000
    assert calls.index(reads[-1]) < calls.index(next(c for c in calls if c[0] == "scoring"))
    assert calls[-1] == ("scoring", 25_000, 25_000)


SUBJECTS = (
    "abstract_algebra",
    "high_school_european_history",
    "professional_medicine",
    "us_foreign_policy",
)
MODELS = ("llama-3.1-8b-instruct", "gpt-4o-mini-2024-07-18")


def _mmlu_like_run(n: int = 240) -> itemscore.RunResult:
    """Two models with long names, four MMLU subjects, a cost, a failed request and a skip."""
    data = []
    for m, model in enumerate(MODELS):
        for i in range(n):
            right = (i * (3 + m)) % 7 > 1
            data.append(
                ItemResult(
                    id=f"q{i}", model=model, group=SUBJECTS[i % len(SUBJECTS)],
                    output=None if i == 5 else ("B" if right else "C"),
                    expected=None if i == 7 else "B",
                    metadata={"cost": (0.00042 + 0.00031 * m) * (1 + (i % 5) / 10)},
                )
            )  # fmt: skip
    return itemscore.score(data, ["exact_match", "f1", "cost"], suite_id="mmlu")


def _shown(result: itemscore.RunResult, width: int, by_group: bool) -> tuple[str, list[Any]]:
    tables = result_tables(result, by_group=by_group, width=width)
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None)
    for table in tables:
        console.print(table)
    return buffer.getvalue(), tables


@pytest.mark.parametrize("by_group", [False, True], ids=["headline", "by-group"])
@pytest.mark.parametrize("width", [60, 80, 100, 120])
def test_tables_fit_the_width_and_never_cut_a_number(width: int, by_group: bool) -> None:
    """At 60-120 columns every line fits, and every value and interval end is shown whole."""
    from itemscore.display import _format

    result = _mmlu_like_run()
    text, _ = _shown(result, width, by_group)
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= width
    for model in MODELS:
        for key, m in result.by_model[model].items():
            shown = [m, *m.groups.values()] if by_group else [m]
            # A metric's group rows share its decimals: at least their own, at most the
            # most any row of that metric needs (any model's, as models may share a row).
            block = max(
                _format.decimals_for(y.value, y.ci_low, y.ci_high)
                for other in MODELS
                for y in [result.by_model[other][key], *result.by_model[other][key].groups.values()]
                if y.value is not None
            )
            for x in shown:
                assert x.value is not None
                assert x.ci_low is not None
                assert x.ci_high is not None
                d = _format.decimals_for(x.value, x.ci_low, x.ci_high)
                for number in (x.ci_low, x.ci_high):
                    assert any(_format.fixed(number, k) in text for k in range(d, block + 1)), x
    for name in (*MODELS, "exact_match", "Cost per success (exact_match)"):
        words = name.split()
        assert all(w in text for w in words)


@pytest.mark.parametrize(
    ("width", "layout"),
    [(160, "columns"), (120, "columns-narrow"), (100, "columns-narrow"), (60, "stacked")],
)
def test_models_side_by_side_until_too_narrow(width: int, layout: str) -> None:
    """Several models share one table while it fits; below that, one block per measurement."""
    result = _mmlu_like_run()
    text, tables = _shown(result, width, by_group=False)
    if layout.startswith("columns"):
        assert len(tables) == 1
        header = next(line for line in text.splitlines() if MODELS[0] in line)
        assert MODELS[1] in header
        narrow = layout == "columns-narrow"
        assert ("Interval methods:" in text) is narrow
    else:
        assert len(tables) == len(MODELS)
        assert "skip 1" in text  # the item without an answer key


def test_bold_marks_a_significant_lead_in_the_side_by_side_table() -> None:
    """The model whose lead is significant is bold in its column; the note says why."""
    result = _mmlu_like_run()
    table = result_tables(result, width=200)[0]
    styles = [str(c.style) for column in table.columns[1:3] for c in column.cells]
    assert "bold" in styles
    text, _ = _shown(result, 200, False)
    assert "Bold: the model's lead" in text
    assert "↓ lower is better." in text


def test_bold_cells_are_decided_once_per_result(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every table of a run asks for the bold cells; the paired tests run once."""
    import itemscore.comparison as compare_module
    from itemscore.reports.table_tex import latex_table
    from itemscore.summary._summary import bold_cells

    calls = []
    real = compare_module.significant_leaders

    def counting(result: Any) -> Any:
        calls.append(result)
        return real(result)

    monkeypatch.setattr(compare_module, "significant_leaders", counting)
    result = _mmlu_like_run(60)
    first = bold_cells(result)
    result_tables(result, width=100)
    latex_table(result)
    assert bold_cells(result) == first
    assert len(calls) == 1
    assert bold_cells(_mmlu_like_run(60)) == first  # another result is decided afresh
    assert len(calls) == 2


def test_the_bar_names_the_steps_after_scoring(tmp_path: pathlib.Path) -> None:
    """After scoring, the bar says it is writing the reports, not sitting full and silent."""
    from itemscore._spec import MetricSpec
    from itemscore.cli._pipeline import score_request
    from itemscore.cli._request import MetricEntry, RunRequest

    data = tmp_path / "d.jsonl"
    data.write_text("".join(f'{{"output": "x{i}"}}\n' for i in range(20)), encoding="utf-8")
    stages: list[str] = []

    class Spy:
        def __call__(self, done: int, total: int) -> None:
            pass

        def stage(self, description: str) -> None:
            stages.append(description)

    request = RunRequest(data=data, out=tmp_path / "out", reports=["csv"])
    request.metrics.append(MetricEntry(MetricSpec("answered_rate"), "-m answered_rate"))
    score_request(request, progress=Spy())  # type: ignore[arg-type]
    assert stages == ["writing the reports"]


@pytest.mark.parametrize("width", [60, 80, 100, 120])
def test_the_metrics_list_wraps_descriptions_and_cuts_nothing(width: int) -> None:
    """`itemscore metrics` at 60-120 columns: every word of every description, no ellipsis."""
    from itemscore import Registry

    infos = [i for i in Registry().infos() if i.status == "ok" and i.cls is not None]
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None)
    for table in metrics_tables(infos, width=width):
        console.print(table)
    text = buffer.getvalue()
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= width
    words = set(text.split())
    for info in infos:
        assert info.cls is not None
        assert info.id in words
        missing = [w for w in info.cls.description.split() if w not in words]
        assert missing == [], (info.id, missing)


@pytest.mark.parametrize("width", [60, 80, 100, 120])
def test_demo_fits_the_terminal(width: int) -> None:
    """`itemscore demo --by-group` at 60-120 columns: no line too long, nothing cut."""
    from click.testing import CliRunner

    from itemscore.cli import cli

    out = CliRunner().invoke(cli, ["demo", "--by-group"], env={"COLUMNS": str(width)})
    assert out.exit_code == 0, out.output
    assert "…" not in out.stdout
    assert max(len(line) for line in out.stdout.splitlines()) <= width
    for header in ("model-a", "model-b", "exact_match", "token_f1", "accuracy"):
        assert header in out.stdout


def test_notes_under_a_table_are_lines_not_escapes() -> None:
    """The bold note and the small-group note are two lines, not one with a visible escape."""
    result = _mmlu_like_run(60)
    text, _ = _shown(result, 200, by_group=True)
    assert "\\x0a" not in text
    lines = text.splitlines()
    assert any(line.startswith("Bold: the model's lead") for line in lines)
    assert any(line.startswith("† fewer than 30 scored items") for line in lines)
