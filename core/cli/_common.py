"""What the commands that score share: their options, shell completion, how a run is shown.

``score``, ``run``, ``rescore`` and ``demo`` (:mod:`._commands`) and ``verify``
(:mod:`._verify_commands`) take their options, print their results and word their failures
through these pieces.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import click

from itemscore.executors import EXECUTORS, cluster_flags
from itemscore.stats._intervals import names

from ._app import Failure, echo_err, stacked, terminal_text
from ._request import RunRequest

if TYPE_CHECKING:
    from itemscore._result import RunResult


__all__ = ["complete_metrics", "complete_reports", "json_for_terminal"]


def complete_metrics(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    """Shell completion of ``-m``: the installed metrics' ids (and entry-point names)."""
    from click.shell_completion import CompletionItem

    from itemscore._registry import default_registry

    head, sep, last = incomplete.rpartition(",")  # --extra-metrics a,b,<TAB>
    prefix = head + sep
    found: dict[str, str] = {}
    for info in default_registry().infos():
        for name in (info.id, info.entry_point):
            if name and name.startswith(last) and info.status == "ok":
                cls = info.cls
                found.setdefault(name, cls.description if cls is not None else "")
    return [CompletionItem(prefix + name, help=text) for name, text in sorted(found.items())]


def complete_reports(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    """Shell completion of ``--report``: every format this installation can write."""
    from click.shell_completion import CompletionItem

    from itemscore.reports import available_formats

    return [
        CompletionItem(name, help=filename)
        for name, filename in available_formats().items()
        if name.startswith(incomplete)
    ]


@attrs.define
class _View:
    """How to show a run: table, JSON or nothing."""

    by_group: bool = False
    as_json: bool = False
    quiet: bool = False
    #: ``--print md``: the Markdown table of results.md on stdout instead of the tables.
    markdown: bool = False

    @classmethod
    def of(cls, by_group: bool, as_json: bool, quiet: bool, print_format: str | None) -> _View:
        """The view the output options ask for; contradictory ones are a usage error.

        Raises:
            click.UsageError: ``--print md`` with ``--json`` or ``--quiet``.
        """
        markdown = print_format == "md"
        if markdown and (as_json or quiet):
            other = "--json" if as_json else "--quiet"
            raise click.UsageError(
                f"--print md and {other} ask for different things on stdout: the Markdown "
                f"table, and {'JSON' if as_json else 'nothing'}. Keep one of them."
            )
        return cls(by_group, as_json, quiet, markdown)

    def notice(self, message: str) -> None:
        """A note or warning on stderr (nothing under --quiet), escaped for the terminal."""
        if not self.quiet:
            echo_err(message)

    def progress_enabled(self) -> bool:
        """Whether to show a progress bar."""
        from itemscore._terminal import progress_wanted

        return progress_wanted(quiet=self.quiet, json_output=self.as_json)


def _warn_broken_plugins(view: _View) -> None:
    """A broken hook plugin is a warning on every command that runs metrics."""
    from itemscore._plugins import plugin_manager

    for broken in plugin_manager().broken:
        ref = broken.ref
        view.notice(
            f"Warning: the plugin {ref.name!r} of distribution {ref.distribution!r} failed to "
            f"load and is not used: {broken.error} (`itemscore plugins` lists every plugin; "
            f"ITEMSCORE_DISABLE_PLUGINS={ref.name} switches it off)."
        )


def _show(results: Sequence[RunResult], view: _View, written: Sequence[Path]) -> None:
    if view.as_json:
        from itemscore._serialize import measurement_to_dict

        payload = [
            {
                "suite": result.suite_id,
                "measurements": [
                    measurement_to_dict(m)
                    for measurements in result.by_model.values()
                    for m in measurements.values()
                ],
            }
            for result in results
        ]
        document: Any = payload[0] if len(payload) == 1 else payload
        if isinstance(document, dict):
            document["files"] = [os.fspath(p) for p in written]
        click.echo(json_for_terminal(document, indent=2))
        return
    if view.quiet:
        return
    if view.markdown:
        from itemscore.reports.results_md import markdown_table

        # As lm_eval prints its results: the table to paste into a README or a pull request.
        tables = [terminal_text(markdown_table(r, groups=view.by_group)) for r in results]
        click.echo("\n".join(tables), nl=False)  # each table ends its own last line
        _say_written(written)
        return
    from itemscore._terminal import make_console, result_tables

    console = make_console()
    for result in results:
        tables = result_tables(
            result, by_group=view.by_group, width=console.width, bold=_bold_shows(console)
        )
        for table in tables:
            console.print(table)
    _say_written(written)


def _say_written(written: Sequence[Path]) -> None:
    """On stderr: which reports were written, and where."""
    if written:
        echo_err(f"Wrote {', '.join(p.name for p in written)} to {written[0].parent}")


def _bold_shows(console: Any) -> bool:
    """Whether bold text shows on ``console``: a terminal with styles, not a pipe or a file.

    Where it does not, the tables mark no lead and print no "Bold:" note about marks that
    cannot be seen (``FORCE_COLOR`` keeps both, for a pager that shows styles).
    """
    return console.color_system is not None


def _decide_bold(result: RunResult, view: _View, progress: Any) -> None:
    """The paired tests behind the tables' bold cells, while the bar says so (cached)."""
    if view.as_json or view.quiet or view.markdown or len(result.by_model) < 2:
        return  # Markdown's table decides its bold cells itself, while it is written
    from itemscore._terminal import make_console
    from itemscore.summary._summary import bold_cells

    if not _bold_shows(make_console()):
        return

    if progress is not None:
        progress.stage(f"comparing {len(result.by_model)} models (paired tests)")
    bold_cells(result)


def json_for_terminal(document: Any, **options: Any) -> str:
    r"""``document`` as JSON whose text is safe on a terminal, and the same JSON value.

    ``ensure_ascii=False`` keeps letters readable, but would let C1 controls (``\x9b`` is a
    CSI), bidirectional overrides and lone surrogates through raw: those are written as
    ``\uXXXX`` escapes, which JSON reads back as the same characters.
    """
    import re

    text = json.dumps(document, ensure_ascii=False, **options)
    return re.sub(
        "[\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]",
        lambda m: f"\\u{ord(m.group()):04x}",
        text,
    )


@contextlib.contextmanager
def _failures(request: RunRequest) -> Iterator[None]:
    """Failures whose message says it all (a busy folder, a full disk) exit 1 without a hint.

    A data file's mapped column that is missing is reported where the mapping was written.
    """
    from itemscore._exceptions import InputError
    from itemscore.reports import FolderBusyError, ReportWriteError

    from ._preflight import locate_mapping

    try:
        yield
    except FolderBusyError as exc:
        raise Failure(str(exc)) from exc
    except InputError as exc:
        placed = locate_mapping(exc, request)
        if placed is exc:
            raise
        raise placed from exc
    except OSError as exc:
        if exc.errno not in _NO_SPACE or request.out is None:
            raise
        if isinstance(exc, ReportWriteError):  # names the report and the folder already
            raise Failure(str(exc)) from exc
        raise Failure(
            f"Writing the reports into {request.out} failed: {exc.strerror or exc}"
            f"{f' (writing {exc.filename})' if exc.filename else ''}. The new reports were "
            f"removed; {request.out} shows the reports it showed before."
        ) from exc


#: A full disk, a full quota, a file-size limit.
_NO_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def _finish(result: RunResult, request: RunRequest, view: _View) -> None:
    """After a scoring command: its errors on stderr, a warning for a seed that did nothing.

    Exits 1 when a metric scored no item because every item errored (or an aggregate
    raised); the reports are written by then.
    """
    from ._outcome import error_summary, seed_unused

    if request.seed is not None and "seed" not in request.user_defaults and seed_unused(result):
        where = request.setting_where.get("seed")
        asked = f"{where}: `seed: {request.seed}`" if where else f"--seed {request.seed}"
        view.notice(
            f"Warning: {asked} changed nothing: no interval of this run is a bootstrap and no "
            "metric has its own aggregate, so nothing drew a random number. The seed matters "
            "only for bootstrap intervals (--ci bootstrap, for metrics that average values) "
            "and for metrics with their own aggregate; leave it out otherwise."
        )
    summary = error_summary(result)
    for line in summary.lines():
        echo_err(line)
    if summary.failed:
        sys.exit(1)


#: Where the reports go and what stdout shows, for ``score``, ``run`` and ``rescore``.
_out_options = stacked(
    [
        click.option(
            "--out",
            type=click.Path(file_okay=False, path_type=Path),
            help="Write results.json, items.parquet, summary.csv, table.tex, report.html (and "
            "results.xlsx) into this folder. They are links into its hidden .itemscore/ "
            "folder, which holds each run's complete set, so that a failed run leaves the "
            "last one whole; read them as any file, copy the folder with cp -a (cp -L for a "
            "single file).",
        ),
        click.option(
            "--report",
            "reports",
            multiple=True,
            metavar="FORMAT",
            shell_complete=complete_reports,
            help="Write only these report formats with --out (repeatable): json, items, "
            "jsonl, csv, tex, xlsx, html (report.html), eee, md (an lm-eval-style Markdown "
            "table), leaderboard (each metric's rank ranges, for several models) or a "
            "plugin's format. Default: all but jsonl, eee, md and leaderboard.",
        ),
        click.option(
            "--by-group",
            is_flag=True,
            default=None,
            help="Add one row per group to the tables.",
        ),
        click.option(
            "--json",
            "as_json",
            is_flag=True,
            help="Print the measurements as JSON on stdout instead of tables.",
        ),
        click.option(
            "--print",
            "print_format",
            type=click.Choice(["table", "md"]),
            help="What stdout shows: table (the default) or md, the Markdown table of "
            "results.md, as lm_eval prints its results (to paste into a README). Not "
            "--format, which names the format of the data read.",
        ),
        click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors."),
    ]
)


class _CiOption(click.Option):
    """``--ci``, whose help lists the interval methods of the table when it is shown."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        ratios, means = (", ".join(names(kind)[:-1]) for kind in ("ratio", "mean"))
        self.help = (
            "Interval method: auto (by kind and n, the reason recorded), or "
            f"{ratios} (ratios); {means} (means). A metric that cannot use it keeps its own, "
            "with a warning."
        )
        return super().get_help_record(ctx)


def _phrase(words: list[str], last: str) -> str:
    """``a, b`` + ``last`` + ``c``."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + last + words[-1]


def _flags(last: str) -> str:
    """The flags that name a cluster, as a phrase: ``--dask or --ray``."""
    return _phrase([f"--{name}" for name in cluster_flags()], last)


def _seconds_or_off(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    """``--item-timeout``: seconds, or ``none``/``off`` (given on as ``0``: no limit)."""
    if value is None:
        return None
    if value.strip().lower() in ("none", "off"):
        return 0.0
    try:
        return float(value)
    except ValueError:
        raise click.BadParameter(
            f"{value!r} must be a number of seconds, or none for no limit.", ctx, param
        ) from None


#: How the run is made; the commands take these as ``**options``, for ``_override``.
_stat_options = stacked(
    [
        click.option("--ci", "ci_method", metavar="METHOD", cls=_CiOption),
        click.option(
            "--confidence",
            type=float,
            help="Confidence level of the intervals, in (0, 1) (default 0.95).",
        ),
        click.option("--seed", type=int, help="Seed for bootstrap intervals."),
        click.option(
            "--reduce",
            metavar="NAME,...",
            help="How each question's attempts are reduced, first one the headline: mean "
            "(default), max, min, majority, maj@K, pass@K, pass^K, at_least:K, e.g. "
            "--reduce mean,pass@1,pass@5.",
        ),
        click.option(
            "--workers",
            metavar="N|auto",
            help="Score on N worker processes (auto: one per core).",
        ),
        click.option(
            "--executor",
            type=click.Choice(list(EXECUTORS)),
            help="Where shards are scored: serial (this process), process (N processes), "
            f"{_phrase([n for n, e in EXECUTORS.items() if e.cluster], ' or ')} (a local "
            f"one of N workers, or the cluster of {_flags(' or ')}). Default: process with "
            "--workers, else serial.",
        ),
        *(
            click.option(f"--{name}", metavar="ADDRESS", help=cluster.flag_help)
            for name, cluster in cluster_flags().items()
        ),
        click.option(
            "--retries",
            type=int,
            metavar="N",
            help=f"With workers (--workers, --executor, {_flags(', ')}): try a shard whose "
            "worker was lost again, up to N times (default 1).",
        ),
        click.option(
            "--item-timeout",
            callback=_seconds_or_off,
            metavar="SECONDS|none",
            help="One metric may take this long on one item; past it the item is an error "
            "(default 300; none or 0: no limit).",
        ),
        click.option(
            "--worker-memory",
            metavar="SIZE|none",
            help="With workers: each worker may use this much memory (2G, "
            "512M); past it a metric's allocation fails and its item is an error.",
        ),
        click.option(
            "--deadline",
            type=float,
            metavar="SECONDS",
            help="The whole run may take this long; what is not scored by then is an error.",
        ),
    ]
)


#: ``--limit``, and the user's defaults file (``--no-user-config``, ``--verbose``).
_limit_option = stacked(
    [
        click.option(
            "--limit",
            type=click.IntRange(min=1),
            metavar="N",
            help="Read only the first N rows of the data, for a quick look at a big file (said "
            "on stderr and in results.json's provenance).",
        ),
        click.option(
            "--no-user-config",
            is_flag=True,
            help="Ignore the defaults file (see below); so does ITEMSCORE_NO_USER_CONFIG=1.",
        ),
        click.option(
            "-v", "--verbose", is_flag=True, help="Say which settings came from the defaults file."
        ),
    ]
)


class _WithDefaults(click.Command):
    """A scoring command whose help ends with where its defaults come from (read when shown)."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from ._user_config import describe

        formatter.write_paragraph()
        with formatter.indentation():
            formatter.write_text(describe())
