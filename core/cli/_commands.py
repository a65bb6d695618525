"""``itemscore score``, ``run``, ``rescore``, ``verify`` and ``demo``: parse, call, print.

Each command builds a :class:`RunRequest` from its options (and a configuration file), hands
it to :mod:`._pipeline`, and prints what comes back.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import click

from itemscore._exceptions import ConfigError
from itemscore._spec import MetricSpec
from itemscore.cli import CONTEXT
from itemscore.inputs import FORMATS, ROLES
from itemscore.stats._intervals import names

from ._grammar import parse_metric_spec
from ._request import MetricEntry, RunRequest

if TYPE_CHECKING:
    from itemscore._result import RunResult

    from ._pipeline import Verification

__all__ = ["demo", "rescore", "run_command", "score", "verify"]


# -- shared pieces ---------------------------------------------------------------------------


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
            from ._app import terminal_text

            click.echo(terminal_text(message), err=True)

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


def _cli_entries(texts: Iterable[str]) -> list[MetricEntry]:
    from itemscore._secrets import mask_secrets, redact_text

    entries = []
    for text in texts:
        spec = parse_metric_spec(text)
        # Errors quote the entry: a credential field's value (`body={api_key: ...}`) is not.
        shown = redact_text(text, mask_secrets(dict(spec.options))[1])
        entries.append(MetricEntry(spec, f"-m {shown!r}"))
    return entries


def _extra_entries(texts: Iterable[str]) -> list[MetricEntry]:
    entries = []
    for text in texts:
        for name in text.split(","):
            if name.strip():
                entries.append(MetricEntry(MetricSpec(name.strip()), f"--extra-metrics {text!r}"))
    return entries


def _workers(value: str | None) -> int | str | None:
    if value is None or value == "auto":
        return value
    try:
        return int(value)
    except ValueError:
        raise ConfigError(
            f"--workers ({value!r}) must be a positive whole number or 'auto'."
        ) from None


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

        from ._app import terminal_text

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
        from ._app import terminal_text

        folder = written[0].parent
        names = ", ".join(p.name for p in written)
        click.echo(terminal_text(f"Wrote {names} to {folder}"), err=True)


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
    from itemscore.reports._summary import bold_cells

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

    from ._app import Failure
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
    from ._app import terminal_text
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
        click.echo(terminal_text(line), err=True)
    if summary.failed:
        sys.exit(1)


def _out_options(func: Any) -> Any:
    for option in reversed(
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
    ):
        func = option(func)
    return func


def _ci_help() -> str:
    """The help of ``--ci``: the methods of the table of interval methods, by kind."""
    ratios, means = (", ".join(names(kind)[:-1]) for kind in ("ratio", "mean"))
    return (
        "Interval method: auto (by kind and n, the reason recorded), or "
        f"{ratios} (ratios); {means} (means). A metric that cannot use it keeps its own, "
        "with a warning."
    )


class _CiOption(click.Option):
    """``--ci``, whose help lists the interval methods of the table when it is shown."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        self.help = _ci_help()
        return super().get_help_record(ctx)


def _stat_options(func: Any) -> Any:
    for option in reversed(
        [
            click.option(
                "--ci",
                "ci_method",
                metavar="METHOD",
                cls=_CiOption,
            ),
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
            click.option("--dask", metavar="ADDRESS", help="Score on a Dask cluster."),
            click.option(
                "--retries",
                type=int,
                metavar="N",
                help="With --workers or --dask: try a shard whose worker was lost again, up to "
                "N times (default 1).",
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
                help="With --workers or --dask: each worker may use this much memory (2G, "
                "512M); past it a metric's allocation fails and its item is an error.",
            ),
            click.option(
                "--deadline",
                type=float,
                metavar="SECONDS",
                help="The whole run may take this long; what is not scored by then is an error.",
            ),
        ]
    ):
        func = option(func)
    return func


def _limit_option(func: Any) -> Any:
    """``--limit``, and the user's defaults file (``--no-user-config``, ``--verbose``)."""
    func = click.option(
        "-v", "--verbose", is_flag=True, help="Say which settings came from the defaults file."
    )(func)
    func = click.option(
        "--no-user-config",
        is_flag=True,
        help="Ignore the defaults file (see below); so does ITEMSCORE_NO_USER_CONFIG=1.",
    )(func)
    return click.option(
        "--limit",
        type=click.IntRange(min=1),
        metavar="N",
        help="Read only the first N rows of the data, for a quick look at a big file (said on "
        "stderr and in results.json's provenance).",
    )(func)


class _WithDefaults(click.Command):
    """A scoring command whose help ends with where its defaults come from (read when shown)."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from ._user_config import describe

        formatter.write_paragraph()
        with formatter.indentation():
            formatter.write_text(describe())


def _user_defaults(request: RunRequest, *, skip: bool) -> None:
    from ._user_config import apply_user_defaults

    apply_user_defaults(request, skip=skip)


def _say_defaults(request: RunRequest, view: _View) -> None:
    """For ``--verbose``: the defaults still in force once the command line has spoken."""
    from ._user_config import USER_KEYS, user_config_path

    taken = [f"{k} ({request.setting_where[k]})" for k in USER_KEYS if k in request.user_defaults]
    if taken:
        view.notice(f"Defaults from {user_config_path()}: {', '.join(taken)}.")
    else:
        view.notice(f"No defaults taken from {user_config_path()}.")


def _read_options(pairs: Sequence[str]) -> dict[str, str]:
    """``--read-option KEY=VALUE`` pairs as a mapping (the reader checks the keys)."""
    options: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(
                f"{pair!r} is not KEY=VALUE, e.g. --read-option scorer=match.",
                param_hint="'--read-option'",
            )
        options[key.strip()] = value
    return options


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


def _override(request: RunRequest, **values: Any) -> None:
    for key, value in values.items():
        if value is not None:
            setattr(request, key, value)
            request.setting_where.pop(key, None)  # the command line wins, and is the place
            request.user_defaults.discard(key)


def _warn_serial_retries(request: RunRequest, view: _View) -> None:
    """Retries without a parallel executor are a warning: there is no worker to lose.

    The library takes ``retries`` with the serial executor too, where it changes nothing (no
    worker can be lost); from the command line that is almost surely not what was meant, so
    it is said rather than silently accepted.
    """
    retries = request.retries
    if not isinstance(retries, int) or isinstance(retries, bool) or retries <= 0:
        return  # 0 changes nothing; a bad value is the settings check's error
    if request.workers is not None or request.dask is not None:
        return
    if "retries" in request.user_defaults:  # a default for the runs that have workers
        return
    where = request.setting_where.get("retries")
    asked = f"{where}: `retries: {retries}`" if where is not None else f"--retries {retries}"
    view.notice(
        f"Warning: {asked} is for shards scored by workers (--workers N or --dask ADDRESS). "
        "Without them every item is scored in this process, where no worker can be lost: it "
        "changes nothing."
    )


def _run_request(request: RunRequest, view: _View) -> None:
    from itemscore._terminal import progress_bar

    from ._memory import arrow_without_pandas
    from ._pipeline import score_request

    arrow_without_pandas()
    _warn_broken_plugins(view)
    _warn_serial_retries(request, view)
    with _failures(request), progress_bar(view.progress_enabled()) as progress:
        result, written = score_request(
            request,
            command=sys.argv,
            progress=progress,
            reading=None if progress is None else progress.reading,
            notice=view.notice,
        )
        _decide_bold(result, view, progress)
    _show([result], view, written)
    _finish(result, request, view)


def _folder_or_glob(path: Path | str) -> bool:
    """Whether one FILES argument stands for several files (read as one source)."""
    from itemscore.inputs._fs import is_url, listing

    if is_url(path):
        try:
            return listing(os.fspath(path)) is not None
        except FileNotFoundError:
            return False
    path = Path(path)
    return path.is_dir() or (not path.exists() and any(c in os.fspath(path) for c in "*?["))


#: What ``-`` reads: standard input, copied once (bounded) as any pipe is.
STDIN = Path("/dev/stdin")
#: How messages name standard input.
STDIN_NAME = "<stdin>"


def _data_argument(text: str) -> Path | str:
    """A FILES argument: a local path, or a URL kept as written (a path would lose its //).

    ``-`` is standard input, read as a pipe is: copied once into a private file, within the
    bound of a line (``max_line_bytes``) or of a file read whole (``max_json_bytes``), its
    format given by --format or told from its first bytes.
    """
    from itemscore.inputs._fs import is_url

    if text == "-":
        return STDIN
    return text if is_url(text) else Path(text)


def _shown(path: Path | str) -> str:
    """How messages and the results name a data argument (``<stdin>`` for ``-``)."""
    return STDIN_NAME if path == STDIN else os.fspath(path)


def _check_stdin(files: Sequence[str]) -> None:
    """``-`` alone, and from a pipe or a file, never from the keyboard.

    Raises:
        ConfigError: ``-`` among other files, or standard input is a terminal (or missing).
    """
    if len(files) > 1:
        raise ConfigError(
            "- (standard input) must be the only data argument: it is one stream, read as "
            "one source. Score the files apart, or concatenate them into the pipe."
        )
    if sys.stdin is None or sys.stdin.isatty() or not os.path.exists(STDIN):
        raise ConfigError(
            "- reads the data from standard input, which is a terminal here (or missing): "
            "pipe the data in, e.g. `cat outputs.jsonl | itemscore score - -m exact_match`, "
            "or name the file."
        )


# -- the commands --------------------------------------------------------------------------


@click.command(context_settings=CONTEXT, cls=_WithDefaults)
@click.argument("files", nargs=-1, required=True, type=click.Path())
@click.option(
    "-m",
    "--metric",
    "metric_specs",
    multiple=True,
    metavar="SPEC",
    shell_complete=complete_metrics,
    help="A metric, repeatable: NAME[@LABEL][:KEY=VALUE,...], e.g. "
    "-m 'f1:average=weighted,labels=[positive,negative]'.",
)
@click.option(
    "--config",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A YAML file with metrics and other settings; command-line options win.",
)
@click.option(
    "--extra-metrics",
    multiple=True,
    metavar="NAME,...",
    shell_complete=complete_metrics,
    help="More metrics by name.",
)
@click.option("--suite", metavar="ID", help="Suite id for measurement keys; an installed "
              "suite of that id adds its bound metrics and reads the rows its way.")  # fmt: skip
@click.option(
    "--format",
    "input_format",
    type=click.Choice(FORMATS),
    help="The file's format (default: from its extension).",
)
@click.option(
    "--map",
    "maps",
    multiple=True,
    metavar="ROLE=COLUMN",
    help=f"Read a role from another column (roles: {', '.join(ROLES)}).",
)
@click.option("--answer-delimiter", metavar="TEXT", help="Split `expected` into several answers.")
@click.option(
    "--null-output",
    metavar="TEXT",
    help="An output cell equal to TEXT is a failed request (CSV has no null).",
)
@click.option(
    "--read-option",
    "read_options",
    multiple=True,
    metavar="KEY=VALUE",
    help="An option of the format's reader, repeatable, e.g. --read-option scorer=match "
    "(inspect) or --read-option filter=flexible-extract (lm-eval).",
)
@_limit_option
@_stat_options
@_out_options
def score(
    files: tuple[str, ...],
    metric_specs: tuple[str, ...],
    config: Path | None,
    extra_metrics: tuple[str, ...],
    suite: str | None,
    input_format: str | None,
    maps: tuple[str, ...],
    answer_delimiter: str | None,
    null_output: str | None,
    read_options: tuple[str, ...],
    ci_method: str | None,
    confidence: float | None,
    seed: int | None,
    reduce: str | None,
    workers: str | None,
    dask: str | None,
    retries: int | None,
    item_timeout: float | None,
    worker_memory: str | None,
    deadline: float | None,
    out: Path | None,
    reports: tuple[str, ...],
    by_group: bool | None,
    as_json: bool,
    print_format: str | None,
    quiet: bool,
    limit: int | None,
    no_user_config: bool,
    verbose: bool,
) -> None:
    """Score files of model outputs with the metrics named by -m.

    FILES: JSON lines, JSON (a list of objects), CSV, TSV, Parquet or harness logs; several
    files, a folder or a glob ('runs/*.jsonl') are read as one source, in one format. A URL
    (s3://bucket/runs/*.jsonl, with fsspec and its backend installed) is read by the workers;
    - reads standard input (cat outputs.jsonl | itemscore score - -m exact_match).
    """
    from itemscore.inputs import parse_column_map

    from ._config import load_config

    request = load_config(config) if config is not None else RunRequest()
    _user_defaults(request, skip=no_user_config)
    from itemscore.inputs._fs import exists

    if "-" in files:
        _check_stdin(files)
    paths = [_data_argument(text) for text in files]
    for path in paths:
        if path == STDIN:
            continue
        if not exists(path) and not _folder_or_glob(path):
            from itemscore._exceptions import InputError
            from itemscore.reports._text import printable

            raise InputError(
                f"{printable(os.fspath(path))}: no such file or folder. Check the path (a glob "
                "such as 'runs/*.jsonl' is read as every file it matches)."
            )
    request.data, request.data_name = paths[0], _shown(paths[0])
    if len(paths) > 1 or _folder_or_glob(paths[0]):
        request.data_files = list(paths)
        request.data_name = ", ".join(os.fspath(path) for path in paths)
    request.metrics += _cli_entries(metric_specs)
    request.extra_metrics += _extra_entries(extra_metrics)
    for role, column in parse_column_map(maps).items():
        request.columns[role] = column
        request.setting_where[f"columns.{role}"] = f"--map {role}={column}"
    for key, value in _read_options(read_options).items():
        request.read_options[key] = value
        request.setting_where.pop(f"read_options.{key}", None)  # the command line wins
    _override(
        request,
        format=input_format,
        suite=suite,
        answer_delimiter=answer_delimiter,
        null_output=null_output,
        ci_method=ci_method,
        confidence=confidence,
        seed=seed,
        reduce=reduce,
        workers=_workers(workers),
        dask=dask,
        retries=retries,
        item_timeout=item_timeout,
        worker_memory=worker_memory,
        deadline=deadline,
        out=out,
        reports=list(reports) or None,
        by_group=by_group,
        limit=limit,
    )
    if config is None or metric_specs:
        request.source = "the command line" if config is None else f"{config} and the command line"
    if verbose:
        _say_defaults(request, _View(quiet=quiet))
    _run_request(request, _View.of(bool(request.by_group), as_json, quiet, print_format))


@click.command("run", context_settings=CONTEXT, cls=_WithDefaults)
@click.argument("config", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_limit_option
@_stat_options
@_out_options
def run_command(
    config: Path,
    ci_method: str | None,
    confidence: float | None,
    seed: int | None,
    reduce: str | None,
    workers: str | None,
    dask: str | None,
    retries: int | None,
    item_timeout: float | None,
    worker_memory: str | None,
    deadline: float | None,
    out: Path | None,
    reports: tuple[str, ...],
    by_group: bool | None,
    as_json: bool,
    print_format: str | None,
    quiet: bool,
    limit: int | None,
    no_user_config: bool,
    verbose: bool,
) -> None:
    """Score the data named in a YAML configuration file.

    CONFIG holds suite, data, columns, metrics, out... (see docs/cli.md); options given here
    win over the file's.
    """
    from ._config import load_config

    request = load_config(config)
    _user_defaults(request, skip=no_user_config)
    if request.data is None:
        raise ConfigError(
            f"{config}:1:1: the configuration has no `data` key; name the file of outputs, "
            "e.g. `data: outputs.jsonl` (relative to the configuration file)."
        )
    _override(
        request,
        ci_method=ci_method,
        confidence=confidence,
        seed=seed,
        reduce=reduce,
        workers=_workers(workers),
        dask=dask,
        retries=retries,
        item_timeout=item_timeout,
        worker_memory=worker_memory,
        deadline=deadline,
        out=out,
        reports=list(reports) or None,
        by_group=by_group,
        limit=limit,
    )
    if verbose:
        _say_defaults(request, _View(quiet=quiet))
    _run_request(request, _View.of(bool(request.by_group), as_json, quiet, print_format))


@click.command(context_settings=CONTEXT)
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "-m",
    "--metric",
    "metric_specs",
    multiple=True,
    metavar="SPEC",
    shell_complete=complete_metrics,
    help="A metric to add or recompute (repeatable); a saved metric named without options "
    "keeps its saved options. None: recompute every saved metric.",
)
@_stat_options
@_out_options
def rescore(
    results: Path,
    metric_specs: tuple[str, ...],
    ci_method: str | None,
    confidence: float | None,
    seed: int | None,
    reduce: str | None,
    workers: str | None,
    dask: str | None,
    retries: int | None,
    item_timeout: float | None,
    worker_memory: str | None,
    deadline: float | None,
    out: Path | None,
    reports: tuple[str, ...],
    by_group: bool | None,
    as_json: bool,
    print_format: str | None,
    quiet: bool,
) -> None:
    """Add or recompute metrics on a saved results.json, without the model."""
    from itemscore._terminal import progress_bar

    from ._memory import arrow_without_pandas
    from ._pipeline import rescore_results

    arrow_without_pandas()
    view = _View.of(bool(by_group), as_json, quiet, print_format)
    request = RunRequest()
    _override(
        request,
        ci_method=ci_method,
        confidence=confidence,
        seed=seed,
        reduce=reduce,
        workers=_workers(workers),
        dask=dask,
        retries=retries,
        item_timeout=item_timeout,
        worker_memory=worker_memory,
        deadline=deadline,
        out=out,
        reports=list(reports) or None,
    )
    entries = _cli_entries(metric_specs)
    _warn_broken_plugins(view)
    _warn_serial_retries(request, view)
    with _failures(request), progress_bar(view.progress_enabled()) as progress:
        result, written = rescore_results(
            results, entries, request, progress=progress, notice=view.notice
        )
    _show([result], view, written)
    _finish(result, request, view)


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
    from ._app import terminal_text
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
        if differences:
            sys.exit(1)
        return
    if differences:
        if not quiet:
            for line in found.differences:
                click.echo(terminal_text(line))
            _not_checked(found.not_checked)
            click.echo(_verdict(results, data, found), err=True)
        sys.exit(1)
    if not quiet:
        count = sum(len(ms) for ms in found.result.by_model.values())
        checked = " and the data file's hash" if data is not None else ""
        click.echo(f"All {count} measurements{checked} agree with {results}.")
        _not_checked(found.not_checked)


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
    from ._app import terminal_text

    grouped: dict[str, list[str]] = {}
    for field in fields:  # "provenance.created" -> provenance: created
        head, _, rest = field.partition(".")
        grouped.setdefault(head, []).append(rest)
    shown = "; ".join(
        f"{head}: {', '.join(rest)}" if all(rest) else head for head, rest in grouped.items()
    )
    why = "how, when and where the run was made; no item recomputes them"
    click.echo(terminal_text(f"Not checked ({why}): {shown}."))


@click.command(context_settings=CONTEXT)
@click.option("--by-group", is_flag=True, help="Add one row per group to the tables.")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Also write each suite's reports into OUT/<suite id>/.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the measurements as JSON.")
def demo(by_group: bool, out: Path | None, as_json: bool) -> None:
    """Score the bundled demo data and print the tables (no arguments needed)."""
    from itemscore._demo import demo_suites
    from itemscore._terminal import make_console, progress_bar
    from itemscore.engine._runner import run
    from itemscore.reports import check_out_dir, export

    view = _View(by_group, as_json, False)
    _warn_broken_plugins(view)
    if out is not None:
        check_out_dir(out)
    suites = demo_suites()
    console = None if as_json else make_console()
    results = []
    for suite in suites:
        with progress_bar(view.progress_enabled(), suite.suite_id) as progress:
            if progress is not None:  # the bar counts items, not items x metrics
                progress.count_items(len(suite.metrics))
            result = run(suite, progress=progress)
        results.append(result)
        if console is not None:
            from rich.markup import escape

            console.print(f"[bold]{escape(suite.suite_id)}[/bold]: {escape(suite.description)}")
            _show([result], view, [])
    written: list[Path] = []
    for suite, result in zip(suites, results):
        if out is not None:
            written += export(result, out / suite.suite_id, None, notice=view.notice)
    if as_json:
        _show(results, view, written)
    elif written:
        click.echo(f"Wrote the reports to {out}", err=True)
