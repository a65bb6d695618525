"""``itemscore verify``: recompute a results.json from its saved items, and say what differs."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ._app import CONTEXT, terminal_text
from ._common import _View, _warn_broken_plugins, json_for_terminal

if TYPE_CHECKING:
    from ._pipeline import Verification

__all__ = ["verify"]


@click.command(context_settings=CONTEXT)
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--data",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The data file the results were computed from: check its SHA-256 too.",
)
@click.option("-q", "--quiet", is_flag=True, help="Print nothing; the exit code says it all.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the verdict as JSON on stdout: agree, measurements, differences.",
)
def verify(results: Path, data: Path | None, quiet: bool, as_json: bool) -> None:
    """Recompute every measurement of a results.json from its saved items.

    Exits 0 when every number agrees, 1 when any differs (each difference is printed). The
    fields no recomputation can check (timings, versions, execution settings) are listed.
    """
    from ._pipeline import verify_results

    view = _View(quiet=quiet or as_json, as_json=as_json)
    _warn_broken_plugins(view)

    def say_data(lines: Sequence[str]) -> None:  # before the recomputation's own messages
        if not (quiet or as_json):
            for line in lines:
                click.echo(terminal_text(line))

    found = verify_results(results, data=data, notice=view.notice, on_data=say_data)
    differences = found.data + found.differences
    if as_json:
        document = {
            "results": os.fspath(results),
            "agree": found.agree,
            "measurements": sum(len(ms) for ms in found.result.by_model.values()),
            "data_checked": data is not None,
            "data_differs": bool(found.data),
            "differences": list(differences),
            "not_checked": list(found.not_checked),
        }
        click.echo(json_for_terminal(document, indent=2))
    elif differences and not quiet:
        for line in found.differences:
            click.echo(terminal_text(line))
        _not_checked(found.not_checked)
        click.echo(_verdict(results, data, found), err=True)
    elif not quiet:
        count = sum(len(ms) for ms in found.result.by_model.values())
        checked = " and the data file's hash" if data is not None else ""
        click.echo(f"All {count} measurements{checked} agree with {results}.")
        _not_checked(found.not_checked)
    if differences:
        sys.exit(1)


def _verdict(results: Path, data: Path | None, found: Verification) -> str:
    """The last line of a failed verify: the data first, then what does not recompute."""
    if not found.data:
        n = len(found.differences)
        return f"{n} difference(s): {results} does not recompute as saved."
    lead = (
        f"The data differs: {data} is not the data of {results}"
        if found.data_recorded
        else f"The data cannot be checked: {results} records no hash of its data"
    )
    if not found.differences:
        count = sum(len(ms) for ms in found.result.by_model.values())
        what = "its measurement recomputes" if count == 1 else f"its {count} measurements recompute"
        return f"{lead}; {what} as saved from its own items."
    return (
        f"{lead}; and {len(found.differences)} difference(s): {results} does not recompute "
        "as saved."
    )


def _not_checked(fields: Sequence[str]) -> None:
    """Say which fields of the results verify could not recompute (timings, versions...)."""
    if not fields:
        return
    grouped: dict[str, list[str]] = {}
    for field in fields:  # "provenance.created" -> provenance: created
        head, _, rest = field.partition(".")
        grouped.setdefault(head, []).append(rest)
    shown = "; ".join(
        f"{head}: {', '.join(rest)}" if all(rest) else head for head, rest in grouped.items()
    )
    why = "how, when and where the run was made; no item recomputes them"
    click.echo(terminal_text(f"Not checked ({why}): {shown}."))
