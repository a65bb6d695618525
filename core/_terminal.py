"""What the command line prints: result tables, the metrics list, and a progress bar (rich)."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TextIO

from ._docgen import describe_aggregation, yes_no
from ._records import STATE_NAMES
from ._result import RunResult
from .display._format import format_interval, format_value
from .display._text import printable
from .summary._rows import Cell as _Cell
from .summary._rows import Row as _Row
from .summary._rows import block_decimals, value_str
from .summary._rows import interval_text as _interval_text
from .summary._rows import joined as _joined
from .summary._rows import result_rows as _rows
from .summary._rows import table_notes as _caption
from .summary._summary import confidence_of

if TYPE_CHECKING:
    from rich.box import Box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from ._registry import MetricInfo

__all__ = [
    "LAYOUTS",
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


def safe_text(text: object) -> Text:
    r"""Text from the data for a rich table: never read as markup, controls shown as escapes.

    ``[bold red]`` and ``[/]`` stay literal text; ``\x1b[2J`` shows as those characters
    instead of clearing the screen.
    """
    from rich.text import Text

    return Text(printable(str(text)))


def _lines_text(text: str) -> Text:
    """Several lines of notes as plain text: each line escaped, the line breaks kept."""
    from rich.text import Text

    return Text("\n".join(printable(line) for line in text.split("\n")))


#: The layouts of a result table, widest first: :func:`result_tables` takes the first that
#: fits the width. ``columns``: one column per model; ``wide``: one table per model, a column
#: per count; ``folded``: the four counts in one column; ``narrow``: intervals under values;
#: ``stacked``: one block of lines per measurement, which fits any width.
LAYOUTS = ("columns", "columns-narrow", "wide", "folded", "narrow", "stacked")


def _value_text(cell: _Cell | None, decimals: int) -> Text:
    from rich.text import Text

    if cell is None:
        return Text("")
    style = "red" if cell.error is not None else "bold" if cell.bold else ""
    return Text(value_str(cell, decimals), style=style)


def _name_text(row: _Row) -> Text:
    from .summary._summary import SMALL_GROUP_MARK

    text = safe_text(row.name)
    if row.small:
        text.append(f" {SMALL_GROUP_MARK}")
    return text


def _table(
    title: str | None,
    caption: str | None,
    columns: Sequence[tuple[str, str]],
    wrap: int | None = None,
    box: Box | None = None,
) -> Table:
    """A table of ``(header, justify)`` columns, ``SIMPLE_HEAD`` unless another ``box``.

    ``wrap``: the index of the one column whose cells may wrap (a name column).
    """
    from rich import box as boxes
    from rich.table import Table

    table = Table(
        title=None if title is None else safe_text(title),
        box=boxes.SIMPLE_HEAD if box is None else box,
        title_justify="left",
        caption=None if caption is None else _lines_text(caption),
        caption_justify="left",
    )
    for i, (header, justify) in enumerate(columns):
        # Only a name may wrap, between words, and only in the narrow layouts.
        wrap_this = i == wrap
        table.add_column(
            safe_text(header), justify=justify, no_wrap=not wrap_this,  # type: ignore[arg-type]
            overflow="fold" if wrap_this else "ellipsis",
        )  # fmt: skip
    return table


def _model_columns_table(
    result: RunResult,
    rows: Sequence[_Row],
    models: Sequence[str | None],
    stacked: bool,
    caption: str | None,
) -> Table:
    """Models as columns: one row per metric (and group), a cell per model."""
    level = f"{confidence_of(result) * 100:g}%"
    columns = [("metric", "left")]
    columns += [(str(model), "right") for model in models]
    if not stacked:
        columns.append(("method", "left"))
    columns.append(("n", "right"))
    not_scored = any(
        c is not None and c.counts is not None and (c.counts[2] or c.counts[3])
        for r in rows for c in r.cells
    )  # fmt: skip
    if not_scored:
        columns += [("skip", "right"), ("error", "right")]
    title = f"{result.suite_id} · value [{level} interval] per model"
    table = _table(title, caption, columns, wrap=0 if stacked else None)
    for row, d in zip(rows, block_decimals(rows)):
        cells: list[Any] = [_name_text(row)]
        for cell in row.cells:
            value = _value_text(cell, d)
            interval = _interval_text(cell, d)
            if interval:
                value.append(("\n" if stacked else " ") + interval)
            cells.append(value)
        present = [c for c in row.cells if c is not None]
        if not stacked:
            cells.append(_joined([c.method for c in present]))
        cells.append(_joined(["" if c.n is None else c.n for c in row.cells if c]))
        if not_scored:
            for i in (2, 3):
                cells.append(_joined([f"{c.counts[i]:,}" for c in present if c.counts is not None]))
        table.add_row(*cells, style="dim" if row.kind == "group" else None)
    return table


def _model_table(
    result: RunResult,
    rows: Sequence[_Row],
    model: str | None,
    layout: str,
    caption: str | None,
) -> Any:
    """One model's measurements in the ``wide``, ``folded``, ``narrow`` or ``stacked`` layout."""
    from rich.console import Group
    from rich.text import Text

    title = result.suite_id + (f" · {model}" if model is not None else "")
    level = f"{confidence_of(result) * 100:g}% interval"
    if layout == "stacked":
        parts: list[Any] = [Text(f"{printable(title)} · value [{level}]", style="bold")]
        for row, d in zip(rows, block_decimals(rows)):
            cell = row.cells[0]
            if cell is None:
                continue
            parts.append(_name_text(row))
            line = Text("    ")
            line.append_text(_value_text(cell, d))
            interval = _interval_text(cell, d)
            if interval:
                line.append(f" {interval}")
            if cell.method:
                line.append(f" {cell.method}")
            parts.append(line)
            counts = [] if cell.n is None else [f"n {cell.n}"]
            if cell.counts is not None:
                counts += [f"{name} {c:,}" for name, c in zip(STATE_NAMES, cell.counts)]
            if counts:
                parts.append(Text("    " + " · ".join(counts)))
        if caption:
            parts.append(Text(caption))
        return Group(*parts)
    columns = [("metric", "left"), ("value", "right")]
    if layout != "narrow":
        columns += [(level, "right"), ("method", "left")]
    columns.append(("n", "right"))
    if layout == "wide":
        columns += [(name, "right") for name in STATE_NAMES]
    else:
        columns.append(("/".join(STATE_NAMES), "right"))
    table = _table(title, caption, columns, wrap=0 if layout == "narrow" else None)
    for row, d in zip(rows, block_decimals(rows)):
        cell = row.cells[0]
        if cell is None:
            continue
        value = _value_text(cell, d)
        cells: list[Any] = [_name_text(row), value]
        interval = _interval_text(cell, d)
        if layout == "narrow":
            below = f"{interval} {cell.method}".strip() if interval else ""
            if below:
                value.append("\n" + below)
        else:
            cells += [interval, cell.method]
        cells.append("" if cell.n is None else cell.n)
        if layout == "wide":
            cells += [f"{c:,}" for c in cell.counts] if cell.counts else [""] * 4
        else:
            cells.append("" if cell.counts is None else "/".join(f"{c:,}" for c in cell.counts))
        table.add_row(*cells, style="dim" if row.kind == "group" else None)
    return table


def _width_of(renderable: Any) -> int:
    """The columns ``renderable`` needs to show every number and header uncut.

    Numbers and headers never wrap, so their columns need their widest cell; a name column
    that may wrap (the narrow layouts) needs only its longest word.
    """
    from rich.console import Console
    from rich.measure import Measurement as Measure
    from rich.table import Table

    console = Console(width=10_000, file=io.StringIO(), color_system=None)
    options = console.options
    full = Measure.get(console, options, renderable).maximum
    if not isinstance(renderable, Table) or renderable.columns[0].no_wrap:
        return full
    cells = [renderable.columns[0].header, *renderable.columns[0].cells]
    widest = max(Measure.get(console, options, c).maximum for c in cells)
    longest_word = max(Measure.get(console, options, c).minimum for c in cells)
    return full - widest + longest_word


def result_tables(
    result: RunResult,
    *,
    by_group: bool = False,
    width: int = 120,
    layout: str | None = None,
    bold: bool = True,
) -> list[Any]:
    """The run's tables: the widest layout of :data:`LAYOUTS` that fits ``width`` columns.

    With several models the first choice puts the models side by side (one row per metric,
    one column per model: value and interval, then method, n, and the skip and error counts
    when any); a layout for one model at a time (one table each) comes next when that is too
    wide. No layout ever cuts a number or a header: each is tried at its full width, and
    the ``stacked`` one, which wraps between words only, fits any width.

    With ``by_group``, a grouped measurement's own row is its value over all items, followed
    by the mean of its groups (with its interval) and one row per group; a group with fewer
    scored items than the runner's threshold is marked with a dagger, explained under the
    table. An interval whose coverage receipt is below the floor
    (:func:`itemscore.aggregate.coverage_flag`) has a double dagger before it, and a note under
    the table gives its coverage. A measurement whose aggregate failed shows ``error``, its
    message under the table.
    Derived measurements (the cost of one success) follow the metrics. Every text from the
    data (suite, model, label, group, error) is shown as plain text.

    Args:
        result: The run.
        by_group: Add the group rows.
        width: The columns available (the console's width).
        layout: One of :data:`LAYOUTS` to use whatever the width (tests, ``--layout``).
        bold: Set a model's significant lead in bold, with the note saying so under the
            table; ``False`` where bold cannot be seen (a pipe, a file): neither is shown.
    """
    models = list(result.by_model) or [None]
    several = len(models) > 1
    candidates = [x for x in LAYOUTS if several or not x.startswith("columns")]
    if layout is not None:
        if layout not in candidates:
            raise ValueError(
                f"`layout` ({layout!r}) must be one of {', '.join(map(repr, candidates))}"
                + (" (the columns layouts need several models)." if several else ".")
            )
        candidates = [layout]
    from .summary._summary import bold_cells

    leads = bold_cells(result) if bold else set()
    all_rows = _rows(result, models, by_group, leads) if several else None
    for i, choice in enumerate(candidates):
        last = i == len(candidates) - 1
        if choice.startswith("columns"):
            assert all_rows is not None
            caption = _caption(result, all_rows, methods=choice == "columns-narrow", models=models)
            table = _model_columns_table(
                result, all_rows, models, choice == "columns-narrow", caption
            )
            if last or _width_of(table) <= width:
                return [table]
            continue
        tables = []
        for model in models:
            rows = _rows(result, [model], by_group, leads)
            tables.append(_model_table(result, rows, model, choice, _caption(result, rows)))
        if last or all(_width_of(t) <= width for t in tables):
            return tables
    raise AssertionError("the stacked layout fits any width")  # pragma: no cover


#: The narrowest a description column may be before the metrics list is stacked.
_DESCRIPTION_MIN = 40


def metrics_tables(infos: Sequence[MetricInfo], *, width: int = 120) -> list[Table]:
    """The installed metrics as a table, and the broken plugins (with their error) as another.

    Descriptions wrap between words, never cut. When the fixed columns (id, entry point,
    package, class, higher better) leave less than 40 columns for them, each metric's facts
    are stacked in one column beside its description instead.
    """
    from rich import box
    from rich.table import Table
    from rich.text import Text

    rows = []
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
        rows.append(
            (
                info.id or "",
                info.entry_point or f"({info.source})",
                package,
                cls.reproducibility_class,
                yes_no(cls.higher_is_better),
                cls.description,
            )
        )
    headers = ("id", "entry point", "package", "class", "higher\nbetter")
    fixed = [max([len(r[i]) for r in rows] + [len(h) for h in headers[i].split("\n")])
             for i in range(5)]  # fmt: skip
    table = Table(title="Installed metrics", box=box.SIMPLE_HEAD, title_justify="left")
    if sum(fixed) + 2 * 6 + _DESCRIPTION_MIN <= width:
        for header in headers:
            table.add_column(header, no_wrap=True)
        table.add_column("description", ratio=1, overflow="fold")
        for row in rows:
            table.add_row(*(safe_text(x) for x in row))
    else:
        table.add_column("metric", no_wrap=True)
        table.add_column("description", ratio=1, overflow="fold")
        for metric_id, entry_point, package, kind, higher, description in rows:
            facts = safe_text(metric_id)
            facts.stylize("bold")
            direction = "higher is better" if higher == "yes" else "lower is better"
            lines = [f"entry point {entry_point}" if entry_point != metric_id else "", package,
                     kind, direction]  # fmt: skip
            for line in lines:
                if line:
                    facts.append_text(Text("\n" + printable(line), style="dim"))
            table.add_row(facts, safe_text(description))
    return [table, broken] if broken.row_count else [table]


def _package(info: MetricInfo) -> str:
    if info.distribution is None:
        return "(in-process)"
    return f"{info.distribution} {info.version}" if info.version else info.distribution


def fit_columns(table: Table, width: int) -> bool:
    """Size ``table``'s columns so that it fits ``width`` with no cell cut and no word split.

    rich squeezes a table that is too wide by narrowing its widest columns, even below their
    longest word, which it then splits (or cuts with an ellipsis). Here each column gets at
    least its longest word (all of a ``no_wrap`` column's text), and what is left is shared
    out evenly among the columns that wrap, none taking more than it needs (a short column
    is shown whole, a long description takes the rest). ``False``, with the table untouched,
    when even that does not fit: the caller stacks its cells instead.
    """
    from rich.console import Console
    from rich.measure import Measurement as Measure

    console = Console(width=10_000, file=io.StringIO(), color_system=None)
    options = console.options
    lows, highs = [], []
    for column in table.columns:
        cells = [column.header, *column.cells] if table.show_header else list(column.cells)
        sizes = [Measure.get(console, options, cell) for cell in cells] or [Measure(1, 1)]
        high = max(size.maximum for size in sizes)
        highs.append(high)
        lows.append(high if column.no_wrap else max(size.minimum for size in sizes))
    whole = Measure.get(console, options, table).maximum
    extra = whole - sum(highs)  # padding, edges and separators
    if whole <= width:
        return True
    if sum(lows) + extra > width:
        return False
    spare = width - extra - sum(lows)
    widths = list(lows)
    while spare > 0:
        short = [i for i, high in enumerate(highs) if widths[i] < high]
        if not short:
            break
        share = max(1, spare // len(short))
        for i in short:
            given = min(share, highs[i] - widths[i], spare)
            widths[i] += given
            spare -= given
    for column, column_width in zip(table.columns, widths):
        column.width = column_width
    return True


def _stacked(pairs: Sequence[tuple[str, str]]) -> Any:
    """``name`` on a line of its own, its text under it: a grid too wide for the terminal."""
    from rich.console import Group
    from rich.padding import Padding
    from rich.text import Text

    parts: list[Any] = []
    for name, text in pairs:
        parts.append(Text(printable(name), style="bold"))
        parts.append(Padding(_lines_text(text), (0, 0, 0, 4)))
    return Group(*parts)


def metric_detail(info: MetricInfo, *, width: int = 120) -> list[Any]:
    """Renderables describing one metric: what it is, how it aggregates, and its options.

    Text wraps between words, never cut; when the facts or the options do not fit ``width``
    side by side, each is stacked: its name on one line, its text under it.
    """
    from rich import box
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    cls = info.cls
    assert cls is not None
    pairs = [
        ("metric", cls.metric_id),
        ("description", cls.description or "(none)"),
        ("from", info.origin),
        ("needs answer key", yes_no("expected" in cls.required_inputs)),
        ("required inputs", ", ".join(cls.required_inputs) or "(none)"),
        ("aggregation", describe_aggregation(cls)),
        ("higher is better", yes_no(cls.higher_is_better)),
        ("reproducibility", cls.reproducibility_class),
    ]
    facts: Any = Table.grid(padding=(0, 2))
    facts.add_column(style="bold", no_wrap=True)
    facts.add_column()
    for name, text in pairs:
        facts.add_row(safe_text(name), safe_text(text))
    if not fit_columns(facts, width):
        facts = _stacked(pairs)
    options = cls.options()
    if not options:
        return [facts, Text("\nNo options.")]
    table: Any = Table(title="Options", box=box.SIMPLE_HEAD, title_justify="left")
    table.add_column("option", no_wrap=True)
    table.add_column("type")
    table.add_column("default", no_wrap=True)
    table.add_column("description")
    rows = [
        (n, o.type_name, "required" if o.required else yaml_text(o.default), o.description)
        for n, o in options.items()
    ]
    for row in rows:
        table.add_row(*map(safe_text, row))
    if not fit_columns(table, width):
        stacked = [(n, f"{kind} · default {default}\n{text}") for n, kind, default, text in rows]
        table = Group(Text("Options", style="italic"), Text(""), _stacked(stacked))
    return [facts, Text(""), table]


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

    One line names the phase and counts in its unit: ``reading`` (rows read so far, the total
    unknown until the end of the file), the scoring phase (items: the runner counts items x
    metrics, :meth:`count_items` says how many metrics that is; scores until it has), then
    steps of unknown length (:meth:`stage`: the paired tests, the reports), which show the
    time they take and no count. When a phase ends its bar is drawn complete before the next
    one takes the line. Notes printed while the bar shows go through :meth:`above`, on lines
    of their own.
    """

    def __init__(self, bar: Any, task: Any, description: str) -> None:
        self._bar, self._task, self._description = bar, task, description
        self._phase: str | None = None
        self._per_item: int | None = None

    def count_items(self, metrics: int) -> None:
        """The run scores ``metrics`` metrics per item: the bar counts items, not both."""
        self._per_item = max(metrics, 1)

    def __call__(self, done: int, total: int) -> None:
        per = self._per_item
        # Without the number of metrics, the runner's count is what it is: one per score.
        unit = "scores" if per is None else "items"
        per = per or 1
        self._enter(self._description, unit, total // per)
        self._bar.update(self._task, completed=done // per, total=total // per)

    def reading(self, rows: int) -> None:
        """``rows`` read so far (the total is not known until the end of the file)."""
        self._enter("reading", "rows")
        self._bar.update(self._task, completed=rows)

    def stage(self, description: str) -> None:
        """A step after scoring whose length is unknown (the paired tests, the reports)."""
        self._enter(description, None)

    def above(self, notice: Callable[[str], None]) -> Callable[[str], None]:
        """``notice`` printing its message on a line of its own, the bar drawn again below."""

        def printed(message: str) -> None:
            self._bar.stop()  # the bar's line is cleared, the message gets a line of its own
            try:
                notice(message)
            finally:
                self._bar.start()

        return printed

    def finish(self) -> None:
        """Draw the current phase's bar complete: its count as it ended, the bar full."""
        if self._phase is None:
            return
        task = self._current()
        total = task.total if task.total is not None else max(task.completed, 1)
        self._bar.update(self._task, completed=total, total=total)
        self._bar.refresh()

    def _current(self) -> Any:
        return next(task for task in self._bar.tasks if task.id == self._task)

    def _enter(self, phase: str, unit: str | None, total: int | None = None) -> None:
        """Start ``phase`` on the line (counting ``unit`` up to ``total``), the last finished."""
        if phase == self._phase:
            return
        self.finish()
        self._phase = phase
        self._bar.reset(self._task, description=phase, completed=0, total=total, unit=unit)
        if total is None:  # reset() keeps the old total; None pulses (the length is unknown)
            self._current().total = None


def _phase_columns() -> list[Any]:
    """The bar's count and time columns (rich is imported only when a bar is shown)."""
    from rich.progress import ProgressColumn, TimeElapsedColumn, TimeRemainingColumn
    from rich.text import Text

    class CountColumn(ProgressColumn):
        """``12,000/200,000 items``, ``150,000 rows`` while the total is unknown, or nothing."""

        def render(self, task: Any) -> Text:
            unit = task.fields.get("unit")
            if unit is None:
                return Text("")
            done = f"{int(task.completed):,}"
            count = done if task.total is None else f"{done}/{int(task.total):,}"
            return Text(f"{count} {unit}", style="progress.download")

    class TimeColumn(ProgressColumn):
        """The time left while a count runs; the time taken by a step or a finished phase."""

        def __init__(self) -> None:
            super().__init__()
            self.elapsed, self.remaining = TimeElapsedColumn(), TimeRemainingColumn()

        def render(self, task: Any) -> Text:
            if task.total is None or task.finished or task.fields.get("unit") is None:
                return self.elapsed.render(task)
            return self.remaining.render(task)

    return [CountColumn(), TimeColumn()]


@contextmanager
def progress_bar(enabled: bool, description: str = "scoring") -> Iterator[ProgressBar | None]:
    """A rich progress bar on stderr, fed by the runner's ``progress(done, total)``.

    Yields ``None`` when ``enabled`` is false, so the runner skips the callback entirely.
    The last phase is drawn complete before the bar goes (it leaves no line behind).
    """
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        *_phase_columns(),
        console=Console(file=sys.stderr),
        transient=True,
    ) as bar:
        shown = ProgressBar(bar, bar.add_task(description, total=None, unit=None), description)
        yield shown
        shown.finish()
