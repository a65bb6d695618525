"""The ``itemscore`` command line.

Exit codes: 0 done; 1 some metric scored no item because every item errored (the reports
are written, see ``_outcome``), or any other failure (one line, the traceback of an unexpected
one only with ``--debug`` or ``ITEMSCORE_DEBUG=1``); 2 bad usage, configuration or input (one
message on stderr naming the file, line and column at fault, and nothing written).

The package is thin: ``_grammar`` parses ``-m``, ``_config`` reads YAML into a request,
``_pipeline`` runs a request through the library and returns ``(result, paths)`` printing
nothing, and the command modules only parse options and print. Commands are imported when
invoked: ``itemscore metrics --json`` imports neither numpy, scipy nor rich.

This module imports nothing but ``os`` and ``sys``: the click application lives in ``_app``
and is imported when a command goes through click. ``itemscore metrics --json`` and
``itemscore plugins --json`` print their last output again, without click and without loading
a plugin, while nothing it was computed from has changed (``_listing_cache``); ``itemscore
--version`` reads the version without click either.

To add a command, add one line to :data:`COMMANDS`: ``"name": "module:attribute"`` naming a
``click.Command``.
"""

from __future__ import annotations

import os
import sys

#: ``typing.TYPE_CHECKING`` without importing typing (start-up time).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, NoReturn

    from ._app import BadInput, Group, cli

__all__ = ["COMMANDS", "CONTEXT", "DEBUG_ENV", "BadInput", "Group", "cli", "debug_enabled", "main"]

#: Every command: name -> ``module:attribute`` of its ``click.Command``, imported when used.
COMMANDS: dict[str, str] = {
    "metrics": "itemscore.cli._listing:metrics",
    "plugins": "itemscore.cli._listing:plugins",
    "score": "itemscore.cli._commands:score",
    "run": "itemscore.cli._commands:run_command",
    "rescore": "itemscore.cli._commands:rescore",
    "verify": "itemscore.cli._commands:verify",
    "demo": "itemscore.cli._commands:demo",
    "compare": "itemscore._compare_cli:compare_command",
}

#: Set to ``1`` to print the traceback of unexpected errors (like ``--debug``).
DEBUG_ENV = "ITEMSCORE_DEBUG"

#: The click context settings every command shares.
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

_state = {"debug": False}

#: The names defined in ``_app`` (click), imported on first use.
_CLICK_NAMES = ("BadInput", "Group", "cli")


def debug_enabled() -> bool:
    """Whether tracebacks are wanted (``--debug`` or ``ITEMSCORE_DEBUG``)."""
    return _state["debug"] or os.environ.get(DEBUG_ENV, "").strip() not in ("", "0")


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Run the command line (the ``itemscore`` console script) and exit with its code.

    The JSON listings are answered from the listing cache when it is current, with the same
    output and exit code as click gives; everything else goes through click.
    """
    args = sys.argv[1:] if argv is None else list(argv)
    if args == ["--version"] and sys.stdout is not None:
        _print_version()
    recorder = None
    if len(args) == 2 and args[1] == "--json" and args[0] in ("metrics", "plugins"):
        from . import _listing_cache

        recorder = _listing_cache.serve(args)  # exits when the cache answers
    from ._app import run

    run(args if argv is not None else None, recorder)


def _print_version() -> None:
    """Print the version as click's ``--version`` does and exit; return when that fails."""
    from .._distributions import version
    from ._listing_cache import answer

    try:
        text = f"itemscore, version {version('itemscore')}\n"
    except Exception:  # noqa: BLE001 - click's path reports it
        return
    answer(text)


def __getattr__(name: str) -> Any:
    """Import the click application on first use of one of its names."""
    if name in _CLICK_NAMES:
        from . import _app

        return getattr(_app, name)
    raise AttributeError(f"module 'itemscore.cli' has no attribute {name!r}")
