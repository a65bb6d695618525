"""What the command line prints: result tables, the metrics list, and a progress bar (rich)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TextIO

from ._docgen import describe_aggregation
from ._records import Measurement, Status
from ._result import RunResult
from .reports._summary import method_name
from .reports._text import printable

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from ._options import OptionInfo
    from ._registry import MetricInfo

__all__ = [
    "format_interval",
    "format_value",
    "make_console",
    "metric_detail",
    "metrics_tables",
    "progress_bar",
    "progress_wanted",
    "result_tables",
    "safe_text",
]

#: ``progress(done, total)``, as the runner calls it.
ProgressCallback = Callable[[int, int], None]

_DIGITS = 4
_MIN_WIDTH = 120  # rich's default of 80 columns for pipes and files squeezes the tables


def make_console(file: TextIO | None = None) -> Console:
    """A rich console on ``file`` (default stdout); at least 120 columns wide when not a terminal.

    Colour follows rich's rules (``NO_COLOR``, ``FORCE_COLOR``, whether ``file`` is a terminal).
    """
    from rich.console import Console

    stream = file if file is not None else sys.stdout
    console = Console(file=stream, highlight=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(file=stream, highlight=False, width=max(console.width, _MIN_WIDTH))
    return console


def format_value(value: float | None) -> str:
    """A measurement's value for the terminal: four decimals, or an em dash for none."""
    return "—" if value is None else f"{value:.{_DIGITS}f}"


def format_interval(low: float | None, high: float | None) -> str:
    """``[low, high]`` with four decimals, or an empty string when there is no interval."""
    if low is None or high is None:
        return ""
    return f"[{low:.{_DIGITS}f}, {high:.{_DIGITS}f}]"


def safe_text(text: object) -> Text:
    r"""Text from the data for a rich table: never read as markup, controls shown as escapes.

    ``[bold red]`` and ``[/]`` stay literal text; ``\x1b[2J`` shows as those characters
    instead of clearing the screen.
    """
    from rich.text import Text

    return Text(printable(str(text)))


def _row(m: Measurement, name: str | Text) -> list[Any]:
    from .reports._summary import n_text

    counts = m.counts
    return [
        safe_text(name) if isinstance(name, str) else name,
        format_value(m.value),
        format_interval(m.ci_low, m.ci_high),
        safe_text(method_name(m.ci_method)),
        n_text(m),
        str(counts.get(Status.OK, 0)),
        str(counts.get(Status.FAIL, 0)),
        str(counts.get(Status.SKIP, 0)),
        str(counts.get(Status.ERROR, 0)),
        safe_text(m.error) if m.error else "",
    ]


def result_tables(result: RunResult, *, by_group: bool = False) -> list[Table]:
    """One table per model: each measurement with its interval, method, n and the four counts.

    With ``by_group``, a grouped measurement's own row is labelled ``pooled (micro)`` (all its
    items at once) and followed by a ``macro`` row (the unweighted mean over its groups, with its
    interval) and one row per group; a group with fewer scored items than the runner's threshold
    is marked with a dagger, explained in a note under the table. The last column holds the
    error of a measurement whose aggregate failed; it is left out when there is none. Every
    text from the data (suite, model, label, group, error) is shown as plain text.
    """
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from .metrics_builtin.cost import cost_per_success_rows
    from .reports._summary import (
        BOLD_NOTE,
        MACRO_NAME,
        POOLED_NAME,
        SMALL_GROUP_MARK,
        TIMES,
        bold_cells,
        is_small_group,
        macro_of,
        reducer_name,
        small_group_note,
    )

    per_success = cost_per_success_rows(result)
    tables: list[Table] = []
    confidence = float(result.config.get("confidence", 0.95))
    bold = bold_cells(result)
    for model, measurements in result.by_model.items():
        rows: list[tuple[list[Any], bool]] = []
        flagged = False
        for m in measurements.values():
            grouped = by_group and bool(m.groups)
            head = safe_text(m.metric)
            reducer = reducer_name(m)
            if reducer is not None:
                head.append(f" [{reducer}]")
            if grouped:
                head.append(f" · {POOLED_NAME}")
            row = _row(m, head)
            if (model, m.metric) in bold:
                row[1] = Text(row[1], style="bold")
            rows.append((row, False))
            if not grouped:
                continue
            macro = macro_of(m)
            if macro is not None:
                value, low, high, n_groups = macro
                label = f"  {MACRO_NAME} (mean of {n_groups} groups)"
                interval = format_interval(low, high)
                rows.append(
                    ([label, format_value(value), interval, "", "", "", "", "", "", ""], False)
                )
            for group, gm in m.groups.items():
                group_name = safe_text(f"  {group}")
                if is_small_group(gm):
                    group_name.append(f" {SMALL_GROUP_MARK}")
                    flagged = True
                rows.append((_row(gm, group_name), True))
        for c in per_success:  # what one success cost; n: the successes
            if c.model == model and (c.group is None or by_group):
                name = f"{c.label} ({c.success})" if c.group is None else f"  {c.group}"
                cells: list[Any] = [safe_text(name), format_value(c.value), "", ""]
                rows.append(([*cells, str(c.successes), "", "", "", "", ""], c.group is not None))
        with_errors = any(cells[-1] for cells, _ in rows)
        title = f"{result.suite_id}" + (f" · {model}" if model is not None else "")
        any_bold = any((model, m.metric) in bold for m in measurements.values())
        notes = [BOLD_NOTE.format(level=f"{confidence * 100:g}%")] if any_bold else []
        if flagged:
            notes.append(small_group_note())
        if any("n_attempts" in m.extra for m in measurements.values()):
            notes.append(f"n: questions {TIMES} attempts per question; \\[reducer]: how reduced.")
        note = "\n".join(notes) or None
        table = Table(
            title=safe_text(title),
            box=box.SIMPLE_HEAD,
            title_justify="left",
            caption=note,
            caption_justify="left",
        )
        table.add_column("metric", no_wrap=True)
        table.add_column("value", justify="right", no_wrap=True)
        table.add_column(f"{confidence * 100:g}% interval", justify="right", no_wrap=True)
        table.add_column("method", no_wrap=True)
        for name in ("n", "ok", "fail", "skip", "error"):
            table.add_column(name, justify="right")
        if with_errors:
            table.add_column("aggregate error", overflow="fold")
        for cells, is_group in rows:
            shown = cells if with_errors else cells[:-1]
            table.add_row(*shown, style="dim" if is_group else None)
        tables.append(table)
    return tables


def _yes(value: bool) -> str:
    return "yes" if value else "no"


def metrics_tables(infos: Sequence[MetricInfo]) -> list[Table]:
    """The installed metrics as a table, and the broken plugins (with their error) as another."""
    from rich import box
    from rich.table import Table

    table = Table(title="Installed metrics", box=box.SIMPLE_HEAD, title_justify="left")
    table.add_column("id", no_wrap=True)
    table.add_column("entry point", no_wrap=True)
    table.add_column("package")
    table.add_column("class", no_wrap=True)
    table.add_column("higher\nbetter", no_wrap=True)
    table.add_column("description", min_width=30, ratio=1)
    broken = Table(title="Broken plugins", box=box.SIMPLE_HEAD, title_justify="left")
    for name in ("entry point", "package", "target"):
        broken.add_column(name, no_wrap=True)
    broken.add_column("error", overflow="fold", style="red")
    for info in infos:
        package = _package(info)
        if info.status == "broken" or info.cls is None:
            broken.add_row(
                *(safe_text(x) for x in (info.entry_point or "", package, info.target)),
                safe_text(info.error or ""),
            )
            continue
        cls = info.cls
        table.add_row(
            safe_text(info.id or ""),
            safe_text(info.entry_point or f"({info.source})"),
            safe_text(package),
            safe_text(cls.reproducibility_class),
            _yes(cls.higher_is_better),
            safe_text(cls.description),
        )
    return [table, broken] if broken.row_count else [table]


def _package(info: MetricInfo) -> str:
    if info.distribution is None:
        return "(in-process)"
    return f"{info.distribution} {info.version}" if info.version else info.distribution


def metric_detail(info: MetricInfo) -> list[Any]:
    """Renderables describing one metric: what it is, how it aggregates, and its options."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    cls = info.cls
    assert cls is not None
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="bold", no_wrap=True)
    facts.add_column(overflow="fold")
    facts.add_row("metric", cls.metric_id)
    facts.add_row("description", cls.description or "(none)")
    facts.add_row("from", info.origin)
    facts.add_row("needs answer key", _yes("expected" in cls.required_inputs))
    facts.add_row("required inputs", ", ".join(cls.required_inputs) or "(none)")
    facts.add_row("aggregation", describe_aggregation(cls))
    facts.add_row("higher is better", _yes(cls.higher_is_better))
    facts.add_row("reproducibility", cls.reproducibility_class)
    options = cls.options()
    if not options:
        return [facts, Text("\nNo options.")]
    table = Table(title="Options", box=box.SIMPLE_HEAD, title_justify="left")
    table.add_column("option", no_wrap=True)
    table.add_column("type")
    table.add_column("default", no_wrap=True)
    table.add_column("description", overflow="fold")
    for name, option in options.items():
        table.add_row(name, option.type_name, option_default(option), option.description)
    return [facts, Text(""), table]


def option_default(option: OptionInfo) -> str:
    """An option's default as it would be written in YAML (``required`` when it has none)."""
    if option.required:
        return "required"
    return yaml_text(option.default)


def yaml_text(value: Any) -> str:
    """A value as YAML flow text: ``true``, ``null``, ``[a, b]``, ``'macro'``-free strings."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(yaml_text(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {yaml_text(v)}" for k, v in value.items()) + "}"
    return str(value)


def progress_wanted(*, quiet: bool = False, json_output: bool = False) -> bool:
    """Whether to show a progress bar: stderr is a terminal, output is for people, not CI."""
    if quiet or json_output or os.environ.get("CI"):
        return False
    return sys.stderr.isatty()


class ProgressBar:
    """What :func:`progress_bar` yields: call it as ``progress(done, total)`` while scoring.

    :meth:`reading` shows the rows read so far, before scoring starts.
    """

    def __init__(self, bar: Any, task: Any, description: str) -> None:
        self._bar, self._task, self._description = bar, task, description

    def __call__(self, done: int, total: int) -> None:
        self._bar.update(self._task, completed=done, total=total, description=self._description)

    def reading(self, rows: int) -> None:
        """``rows`` read so far (the total is not known until the end of the file)."""
        self._bar.update(self._task, completed=rows, total=None, description="reading")


@contextmanager
def progress_bar(enabled: bool, description: str = "scoring") -> Iterator[ProgressBar | None]:
    """A rich progress bar on stderr, fed by the runner's ``progress(done, total)``.

    Yields ``None`` when ``enabled`` is false, so the runner skips the callback entirely.
    """
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(file=sys.stderr),
        transient=True,
    ) as bar:
        yield ProgressBar(bar, bar.add_task(description, total=None), description)
