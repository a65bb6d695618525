"""The ``itemscore`` command line.

Exit codes: 0 done; 1 some metric scored no item because every item errored (the reports
are written, see ``_outcome``), or any other failure (one line, the traceback of an unexpected
one only with ``--debug`` or ``ITEMSCORE_DEBUG=1``); 2 bad usage, configuration or input (one
message on stderr naming the file, line and column at fault, and nothing written).

The package is thin: ``_app`` is the click application, ``_grammar`` parses ``-m``,
``_config`` reads YAML into a request, ``_pipeline`` runs a request through the library and
returns ``(result, paths)`` printing nothing, and the command modules only parse options and
print. Commands are imported when invoked: ``itemscore metrics --json`` imports neither numpy,
scipy nor rich.

To add a command, add one line to :data:`COMMANDS` in ``_app``: ``"name": "module:attribute"``
naming a ``click.Command``.
"""

from __future__ import annotations

from ._app import COMMANDS, CONTEXT, DEBUG_ENV, BadInput, Group, cli, debug_enabled, main

__all__ = ["COMMANDS", "CONTEXT", "DEBUG_ENV", "BadInput", "Group", "cli", "debug_enabled", "main"]
