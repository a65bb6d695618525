"""The click application behind ``itemscore``: the group, its options and bad-input errors.

:mod:`itemscore.cli` re-exports it.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from itemscore._exceptions import ConfigError, InputError, describe_exception, did_you_mean

if TYPE_CHECKING:
    from itemscore._result import RunResult

__all__ = [
    "COMMANDS",
    "CONTEXT",
    "DEBUG_ENV",
    "BadInput",
    "Failure",
    "Group",
    "cli",
    "debug_enabled",
    "echo_err",
    "load_run",
    "main",
    "report_unexpected",
    "stacked",
    "terminal_text",
]

#: Every command: name -> ``module:attribute`` of its ``click.Command``, imported when used.
COMMANDS: dict[str, str] = {
    "metrics": "itemscore.cli._listing:metrics",
    "plugins": "itemscore.cli._listing:plugins",
    "score": "itemscore.cli._commands:score",
    "run": "itemscore.cli._commands:run_command",
    "rescore": "itemscore.cli._commands:rescore",
    "verify": "itemscore.cli._verify_commands:verify",
    "demo": "itemscore.cli._commands:demo",
    "compare": "itemscore.cli._compare_commands:compare_command",
    "view": "itemscore.cli._view:view",
    "diagnose": "itemscore.cli._stats_commands:diagnose_command",
    "gate": "itemscore.cli._stats_commands:gate_command",
    "arena": "itemscore.cli._board_commands:arena_command",
    "leaderboard": "itemscore.cli._board_commands:leaderboard_command",
}

#: Set to ``1`` to print the traceback of unexpected errors (like ``--debug``).
DEBUG_ENV = "ITEMSCORE_DEBUG"

#: The click context settings every command shares.
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

_state = {"debug": False}


def debug_enabled() -> bool:
    """Whether tracebacks are wanted (``--debug`` or ``ITEMSCORE_DEBUG``)."""
    return _state["debug"] or os.environ.get(DEBUG_ENV, "").strip() not in ("", "0")


def terminal_text(text: str) -> str:
    r"""``text`` safe for a terminal: controls shown as escapes, line breaks kept.

    Messages quote names from data files (columns, keys, labels, models, file names); an
    escape sequence in one (``\x1b]0;title\x07``, ``\x1b[2J``) is shown, never obeyed.
    """
    from itemscore.display._text import printable

    return "\n".join(printable(line) for line in text.split("\n"))


def echo_err(message: str) -> None:
    """``message`` on stderr, escaped for the terminal."""
    click.echo(terminal_text(message), err=True)


#: A click command, or the function it is made from.
F = TypeVar("F", bound=Callable[..., Any])


def stacked(options: Sequence[Callable[[F], F]]) -> Callable[[F], F]:
    """One decorator of several ``click.option``s, listed by ``--help`` in this order."""

    def add(command: F) -> F:
        for option in reversed(options):
            command = option(command)
        return command

    return add


class BadInput(click.ClickException):
    """A configuration or input error: exit code 2, one message, no usage text."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        if debug_enabled() and self.__cause__ is not None:
            import traceback

            traceback.print_exception(self.__cause__, file=sys.stderr)
        click.echo(f"Error: {terminal_text(self.format_message())}", err=True)


class Failure(BadInput):
    """A failure the message explains in full (a busy folder, a full disk): exit code 1."""

    exit_code = 1


def load_run(path: Path, error: type[click.ClickException] = BadInput) -> RunResult:
    """The ``RunResult`` of a results.json argument; a failure is ``error``, naming the file."""
    from itemscore._result import RunResult

    try:
        return RunResult.load_json(path)
    except (InputError, OSError) as exc:
        message = str(exc)
        raise error(message if str(path) in message else f"{path}: {message}") from exc


class Group(click.Group):
    """A click group with lazily imported commands; itemscore's bad-input errors exit 2."""

    def __init__(self, *args: Any, lazy: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy or {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy and cmd_name not in self.commands:
            module, _, attribute = self.lazy[cmd_name].partition(":")
            command = getattr(importlib.import_module(module), attribute)
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """The command named by ``args[0]``; a name that is none gets a did-you-mean.

        click suggests only among the commands already imported (none, here: they load
        lazily), and only from click 8.4 on, so ``itemscore scor`` would get no suggestion.
        """
        name = args[0] if args else ""
        if name and not name.startswith("-") and not ctx.resilient_parsing:
            normalise = ctx.token_normalize_func or (lambda text: text)
            if (
                self.get_command(ctx, name) is None
                and self.get_command(ctx, normalise(name)) is None
            ):
                names = self.list_commands(ctx)
                raise click.UsageError(
                    f"No such command {name!r}.{did_you_mean(name, names)} The commands are "
                    f"{', '.join(names)} (`{ctx.command_path} --help` says what each does).",
                    ctx,
                )
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (ConfigError, InputError) as exc:
            raise BadInput(str(exc)) from exc


def _disable(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> None:
    if not values:
        return  # no import of the entry-point machinery for commands that do not need it
    from itemscore._entrypoints import disable

    names = []
    for value in values:
        if not value.startswith("no:") or not value[3:].strip():
            raise click.BadParameter(
                f"{value!r} must be no:NAME (an entry point or distribution to switch off).",
                ctx,
                param,
            )
        names.append(value[3:].strip())
    disable(names)


@click.group(cls=Group, lazy=COMMANDS, context_settings=CONTEXT)
@click.version_option(package_name="itemscore", prog_name="itemscore")
@click.option("--debug", is_flag=True, help="Show the traceback of unexpected errors.")
@click.option(
    "-p",
    "disabled",
    multiple=True,
    metavar="no:NAME",
    is_eager=True,
    expose_value=False,
    callback=_disable,
    help="Switch off an entry point or a whole distribution (repeatable), as pytest's -p no:.",
)
def cli(debug: bool) -> None:
    """Score model outputs with evaluation metrics from installed packages."""
    _state["debug"] = debug  # set on every call: an in-process caller may call again


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Run the command line (the ``itemscore`` console script) and exit with its code.

    Args:
        argv: The arguments after the program name (``None``: ``sys.argv[1:]``).
    """
    if "pyarrow" not in sys.modules:  # a process of its own (the console script)
        from ._memory import settle

        settle()
    previous = _stop_on_sigterm()
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="itemscore")
    except Exception as exc:  # noqa: BLE001 - the last resort: one line, exit code 1
        report_unexpected(exc)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    sys.exit(0)  # pragma: no cover - cli.main always exits in standalone mode


class Terminated(KeyboardInterrupt):
    """``SIGTERM`` arrived: the command stops as on Ctrl-C, cleaning up on its way out."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated


def _stop_on_sigterm() -> Any:
    """Make ``SIGTERM`` stop the command the way ``SIGINT`` does; the handler it replaces.

    Left to the default, ``SIGTERM`` ends the process at once: the temporary folders, the
    half-written report set and the workers are left behind. Raised as an interrupt instead,
    every ``finally`` runs (exit code 1, as after Ctrl-C). A handler the caller installed is
    kept (``None`` is returned).
    """
    if not hasattr(signal, "SIGTERM") or threading.current_thread() is not threading.main_thread():
        return None
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return None
    return signal.signal(signal.SIGTERM, _on_sigterm)


def report_unexpected(exc: Exception) -> NoReturn:
    """Print an unexpected error on one line (the traceback with ``--debug``) and exit 1."""
    if debug_enabled():
        import traceback

        traceback.print_exception(exc)
    message = describe_exception(exc, one_line=True)
    hint = "" if debug_enabled() else f" (run with --debug or {DEBUG_ENV}=1 for the traceback)"
    click.echo(f"Error: {terminal_text(message)}{hint}", err=True)
    sys.exit(1)
