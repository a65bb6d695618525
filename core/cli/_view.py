"""``itemscore view [DIR ...]``: serve report sets to a browser on 127.0.0.1 until Ctrl-C."""

from __future__ import annotations

import errno
from pathlib import Path

import click

from ._app import CONTEXT, BadInput, terminal_text

__all__ = ["view"]


@click.command(context_settings=CONTEXT)
@click.argument(
    "folders",
    nargs=-1,
    metavar="[DIR]...",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default="a free port",
    help="The port on 127.0.0.1 to serve on (0: a free one).",
)
@click.option("--log", "log_requests", is_flag=True, help="Print one line per request.")
def view(folders: tuple[Path, ...], port: int, log_requests: bool) -> None:
    """Browse report sets: their runs, reports, items, and two runs compared.

    Each DIR is a report set (a folder `--out` wrote) or a folder of them (searched four
    levels down); the current folder without one. The viewer listens on 127.0.0.1 only,
    reads only the sets inside the folders given, and stops with Ctrl-C.
    """
    from itemscore.viewer import NoReportSet, make_server, serve

    given = list(folders) or [Path(".")]
    # A request line is anyone's text: its escape sequences are shown, as in every message.
    log = (lambda line: click.echo(terminal_text(line), err=True)) if log_requests else None
    try:
        viewer = make_server(given, port, log)
    except NoReportSet as exc:
        raise BadInput(str(exc)) from exc
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise BadInput(
                f"--port {port}: the port is in use on 127.0.0.1; choose another, or leave "
                "--port out for a free one."
            ) from exc
        raise BadInput(f"--port {port}: the viewer cannot listen there ({exc.strerror}).") from exc
    n = len(viewer.runs.runs())
    click.echo(
        terminal_text(
            f"Serving {n} run{'s' if n != 1 else ''} from {', '.join(map(str, given))} at "
            f"{viewer.url} (Ctrl-C stops it)."
        )
    )
    serve(viewer, click.echo)
