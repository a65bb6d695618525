"""A plugin with a hook implementation: a Markdown report format.

Hooks are the extension points that are not metrics (see ``itemscore.hookspecs``). A plugin is
any module or object with functions named after the hooks and marked with
``itemscore.hookimpl``. This module is declared in the entry-point group ``itemscore.plugins``::

    [project.entry-points."itemscore.plugins"]
    example-markdown = "itemscore_example.plugin"

It implements one hook, ``itemscore_export_formats``, so that results can be written as a
Markdown table (``results.mdtable``) next to the formats itemscore writes itself. It implements no
per-item hook on purpose: a hook nobody implements costs a run nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from itemscore import Measurement, Status, hookimpl

if TYPE_CHECKING:  # annotations only: importing RunResult here slows every `itemscore` command
    from itemscore import RunResult

__all__ = ["itemscore_export_formats", "markdown_table", "write_markdown"]


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def _row(m: Measurement, name: str) -> str:
    interval = "" if m.ci_low is None or m.ci_high is None else f"[{m.ci_low:.4f}, {m.ci_high:.4f}]"
    value = f"error: {m.error}" if m.error is not None else _number(m.value)
    cells = [
        name,
        m.model or "",
        value,
        interval,
        str(m.n),
        str(m.counts.get(Status.SKIP, 0)),
        str(m.counts.get(Status.ERROR, 0)),
    ]
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def markdown_table(result: RunResult) -> str:
    """The measurements of ``result`` as a Markdown table, one row per measurement and group.

    Args:
        result: A finished run.

    Returns:
        The table, ending with a newline.
    """
    lines = [
        "| measurement | model | value | interval | n | skip | error |",
        "|---|---|---:|---|---:|---:|---:|",
    ]
    for by_key in result.by_model.values():
        for key, m in by_key.items():
            lines.append(_row(m, key))
            lines.extend(_row(g, f"{key} [{group}]") for group, g in m.groups.items())
    return "\n".join(lines) + "\n"


def write_markdown(result: RunResult, path: Path) -> None:
    """Write :func:`markdown_table` of ``result`` to ``path`` (UTF-8).

    Args:
        result: A finished run.
        path: Where to write, e.g. ``out/results.mdtable``.
    """
    Path(path).write_text(markdown_table(result), encoding="utf-8")


@hookimpl
def itemscore_export_formats() -> Mapping[str, Callable[[RunResult, Path], None]]:
    """Offer the ``mdtable`` report format: a Markdown table of the measurements."""
    return {"mdtable": write_markdown}
