"""``itemscore metrics``, ``metrics show`` and ``plugins``: what is installed, and its state.

The JSON listings import neither rich nor the runner (start-up time: scripts call them).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from itemscore.cli import CONTEXT, Group

if TYPE_CHECKING:
    from itemscore._registry import MetricInfo

__all__ = ["metric_dict", "metrics", "plugin_rows", "plugins", "show"]


def metric_dict(info: MetricInfo) -> dict[str, Any]:
    """One metric as ``metrics --json`` prints it."""
    cls = info.cls
    return {
        "id": info.id,
        "entry_point": info.entry_point,
        "target": info.target,
        "distribution": info.distribution,
        "version": info.version,
        "source": info.source,
        "description": cls.description if cls is not None else None,
        "reproducibility_class": cls.reproducibility_class if cls is not None else None,
        "higher_is_better": cls.higher_is_better if cls is not None else None,
        "needs_answer_key": ("expected" in cls.required_inputs) if cls is not None else None,
        "aggregation": cls.aggregation if cls is not None else None,
        "status": info.status,
        "error": info.error,
        "collision": list(info.collision) or None,
    }


def _broken_hook_plugins() -> list[dict[str, Any]]:
    """Plugins of ``itemscore.plugins`` (hooks, not metrics) that failed to load."""
    from itemscore._plugins import plugin_manager

    return [
        {
            "id": None,
            "entry_point": b.ref.name,
            "target": b.ref.value,
            "distribution": b.ref.distribution,
            "version": b.ref.version,
            "source": "plugin",
            "description": None,
            "reproducibility_class": None,
            "higher_is_better": None,
            "needs_answer_key": None,
            "aggregation": None,
            "status": "broken",
            "error": b.error,
            "collision": None,
        }
        for b in plugin_manager().broken
    ]


@click.group(cls=Group, invoke_without_command=True, context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list instead of a table.")
@click.pass_context
def metrics(ctx: click.Context, as_json: bool) -> None:
    """List the installed metrics, and broken plugins with their error.

    `itemscore metrics show NAME` describes one metric and its options.
    """
    if ctx.invoked_subcommand is not None:
        return
    from itemscore._registry import Registry

    infos = Registry().infos()
    broken_plugins = _broken_hook_plugins()
    if as_json:
        entries = [*map(metric_dict, infos), *broken_plugins]
        click.echo(json.dumps(entries, indent=2, ensure_ascii=False))
        return
    from itemscore._terminal import make_console, metrics_tables

    console = make_console()
    tables = metrics_tables(infos, width=console.width)
    if broken_plugins:
        table = tables[-1] if len(tables) == 2 else _empty_broken_table(tables)
        for entry in broken_plugins:
            table.add_row(
                entry["entry_point"], entry["distribution"] or "", entry["target"], entry["error"]
            )
    for table in tables:
        console.print(table)


def _empty_broken_table(tables: list[Any]) -> Any:
    from rich import box
    from rich.table import Table

    broken = Table(title="Broken plugins", box=box.SIMPLE_HEAD, title_justify="left")
    for name in ("entry point", "package", "target"):
        broken.add_column(name, no_wrap=True)
    broken.add_column("error", overflow="fold", style="red")
    tables.append(broken)
    return broken


@metrics.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
def show(name: str, as_json: bool) -> None:
    """Describe one metric: what it measures, how it aggregates, its options."""
    from itemscore._registry import Registry

    info = Registry().find(name)
    assert info.cls is not None
    if as_json:
        from itemscore._serialize import json_safe
        from itemscore._terminal import yaml_text

        data = metric_dict(info)
        data["options"] = [
            {
                "name": option.name,
                "type": option.type_name,
                "required": option.required,
                "default": None if option.required else json_safe(option.default),
                "default_text": "required" if option.required else yaml_text(option.default),
                "choices": list(option.choices) if option.choices else None,
                "description": option.description,
            }
            for option in info.cls.options().values()
        ]
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    from itemscore._terminal import make_console, metric_detail

    console = make_console()
    for renderable in metric_detail(info, width=console.width):
        console.print(renderable)


def plugin_rows() -> list[dict[str, Any]]:
    """Every entry point of the three groups with its state: ok, broken or disabled."""
    from itemscore._entrypoints import disabled_entry_points, entry_points
    from itemscore._plugins import PLUGINS_GROUP, plugin_manager
    from itemscore._registry import METRICS_GROUP, Registry
    from itemscore._suite import SUITES_GROUP, _suite_class

    rows: list[dict[str, Any]] = []

    def row(kind: str, name: str | None, **more: Any) -> None:
        entry = {"kind": kind, "entry_point": name, "id": None, "distribution": None}
        entry.update({"version": None, "status": "ok", "error": None, **more})
        rows.append(entry)

    for info in Registry().infos():
        row(
            "metric" if info.source == "entry-point" else f"metric ({info.source})",
            info.entry_point,
            id=info.id,
            distribution=info.distribution,
            version=info.version,
            status=info.status,
            error=info.error,
        )
    for ref in entry_points(SUITES_GROUP):
        try:
            suite_id: str | None = _suite_class(ref).suite_id
        except Exception as exc:  # noqa: BLE001 - listed as broken, with why
            row("suite", ref.name, distribution=ref.distribution, version=ref.version,
                status="broken", error=str(exc))  # fmt: skip
            continue
        row("suite", ref.name, id=suite_id, distribution=ref.distribution, version=ref.version)
    pm = plugin_manager()
    for name, ref in pm.sources.items():
        row("hooks", ref.name, id=name, distribution=ref.distribution, version=ref.version)
    for broken in pm.broken:
        ref = broken.ref
        row("hooks", ref.name, distribution=ref.distribution, version=ref.version,
            status="broken", error=broken.error)  # fmt: skip
    for kind, group in (
        ("metric", METRICS_GROUP),
        ("suite", SUITES_GROUP),
        ("hooks", PLUGINS_GROUP),
    ):
        for ref in disabled_entry_points(group):
            row(kind, ref.name, distribution=ref.distribution, version=ref.version,
                status="disabled")  # fmt: skip
    return rows


@click.command(context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list instead of a table.")
def plugins(as_json: bool) -> None:
    """List every metric, suite and hook plugin with its distribution, version and status.

    The status is ok, broken (with the error) or disabled (switched off by
    ITEMSCORE_DISABLE_PLUGINS, -p no:NAME or ITEMSCORE_DISABLE_PLUGIN_AUTOLOAD).
    """
    rows = plugin_rows()
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    _print_plugins(rows)


def _print_plugins(rows: Sequence[dict[str, Any]]) -> None:
    """The plugins as a table; on a terminal too narrow for it, one block of lines each.

    Cells wrap between words and are never cut: ``COLUMNS=80 itemscore plugins`` shows every
    kind and package whole.
    """
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from itemscore._terminal import fit_columns, make_console, safe_text

    console = make_console()
    packages = []
    for entry in rows:
        package = entry["distribution"] or "(in-process)"
        packages.append(package + (f" {entry['version']}" if entry["version"] else ""))
    errors = any(entry["error"] for entry in rows)  # no error column when nothing failed
    table = Table(title="Plugins", box=box.SIMPLE_HEAD, title_justify="left")
    for name in ("kind", "entry point", "id", "package", "status"):
        table.add_column(name)
    if errors:
        table.add_column("error", style="red")
    for entry, package in zip(rows, packages):
        cells = [entry["kind"], entry["entry_point"] or "", entry["id"] or "", package,
                 entry["status"], entry["error"] or ""]  # fmt: skip
        table.add_row(*(safe_text(c) for c in cells[: 6 if errors else 5]))
    if not fit_columns(table, console.width):
        table = Table(title="Plugins", box=box.SIMPLE_HEAD, title_justify="left")
        table.add_column("plugin")
        table.add_column("status")
        for entry, package in zip(rows, packages):
            plugin = safe_text(entry["entry_point"] or "")
            plugin.stylize("bold")
            facts = [entry["kind"], f"id {entry['id']}" if entry["id"] else "", package]
            plugin.append_text(Text("\n" + " · ".join(f for f in facts if f), style="dim"))
            status = safe_text(entry["status"])
            if entry["error"]:
                status.append_text(Text("\n" + entry["error"], style="red"))
            table.add_row(plugin, status)
    console.print(table)
