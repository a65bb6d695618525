"""``itemscore score``, ``run``, ``rescore`` and ``demo``: parse, call, print.

Each command builds a :class:`RunRequest` from its options (and a configuration file), hands
it to :mod:`._pipeline`, and prints what comes back; the options and the printing they share
are in :mod:`._common`, ``verify`` in :mod:`._verify_commands`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import click

from itemscore._exceptions import ConfigError, InputError
from itemscore._spec import MetricSpec
from itemscore.cli import CONTEXT
from itemscore.display._text import printable
from itemscore.executors import cluster_flags
from itemscore.inputs import FORMATS, ROLES, parse_column_map
from itemscore.inputs._fs import exists, is_url, listing

from ._common import (
    _decide_bold,
    _failures,
    _finish,
    _limit_option,
    _out_options,
    _show,
    _stat_options,
    _View,
    _warn_broken_plugins,
    _WithDefaults,
    complete_metrics,
)
from ._config import load_config
from ._grammar import parse_metric_spec
from ._request import MetricEntry, RunRequest
from ._user_config import USER_KEYS, apply_user_defaults, user_config_path

__all__ = ["demo", "rescore", "run_command", "score"]


# -- building the request ----------------------------------------------------------------


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
    return [
        MetricEntry(MetricSpec(name.strip()), f"--extra-metrics {text!r}")
        for text in texts
        for name in text.split(",")
        if name.strip()
    ]


def _workers(value: str | None) -> int | str | None:
    if value is None or value == "auto":
        return value
    try:
        return int(value)
    except ValueError:
        raise ConfigError(
            f"--workers ({value!r}) must be a positive whole number or 'auto'."
        ) from None


def _say_defaults(request: RunRequest, view: _View) -> None:
    """For ``--verbose``: the defaults still in force once the command line has spoken."""
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


def _override(
    request: RunRequest, *, workers: str | None = None, reports: Sequence[str] = (), **values: Any
) -> None:
    """The options given on the command line (``None``: not given) onto ``request``.

    The keys are the request's settings (a click option's name is the setting's, ``--suite``
    or ``--item-timeout``), and the clusters named by address (``--dask ADDRESS``); each wins
    over the configuration file and the defaults file.
    """
    values.update(workers=_workers(workers), reports=list(reports) or None)
    clusters = cluster_flags()
    for key, value in values.items():
        if value is not None:
            if key in clusters:
                request.clusters[key] = value
            else:
                setattr(request, key, value)
            request.setting_where.pop(key, None)  # the command line wins, and is the place
            request.user_defaults.discard(key)


def _score_with(
    request: RunRequest,
    *,
    as_json: bool,
    print_format: str | None,
    quiet: bool,
    verbose: bool,
    **options: Any,
) -> None:
    """The end of ``score`` and ``run``: the command line's ``options`` win, then the run."""
    _override(request, **options)
    if verbose:
        _say_defaults(request, _View(quiet=quiet))
    _run_request(request, _View.of(bool(request.by_group), as_json, quiet, print_format))


def _warn_serial_retries(request: RunRequest, view: _View) -> None:
    """Retries without a parallel executor are a warning: there is no worker to lose.

    The library takes ``retries`` with the serial executor too, where it changes nothing (no
    worker can be lost); from the command line that is almost surely not what was meant, so
    it is said rather than silently accepted.
    """
    retries = request.retries
    if not isinstance(retries, int) or isinstance(retries, bool) or retries <= 0:
        return  # 0 changes nothing; a bad value is the settings check's error
    if request.executor not in (None, "serial") or request.workers is not None or request.clusters:
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


def _run_request(
    request: RunRequest,
    view: _View,
    rescoring: tuple[Path, list[MetricEntry]] | None = None,
) -> None:
    """Score the request (``rescoring``: the saved results and the metrics), then print."""
    from itemscore._terminal import progress_bar

    from ._memory import arrow_without_pandas
    from ._pipeline import rescore_results, score_request

    arrow_without_pandas()
    _warn_broken_plugins(view)
    _warn_serial_retries(request, view)
    with _failures(request), progress_bar(view.progress_enabled()) as progress:
        if rescoring is not None:
            result, written = rescore_results(
                *rescoring, request, progress=progress, notice=view.notice
            )
        else:
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
    if text == "-":
        return STDIN
    return text if is_url(text) else Path(text)


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
    input_format: str | None,
    maps: tuple[str, ...],
    read_options: tuple[str, ...],
    no_user_config: bool,
    **options: Any,
) -> None:
    """Score files of model outputs with the metrics named by -m.

    FILES: JSON lines, JSON (a list of objects), CSV, TSV, Parquet or harness logs; several
    files, a folder or a glob ('runs/*.jsonl') are read as one source, in one format. A URL
    (s3://bucket/runs/*.jsonl, with fsspec and its backend installed) is read by the workers;
    - reads standard input (cat outputs.jsonl | itemscore score - -m exact_match).
    """
    request = load_config(config) if config is not None else RunRequest()
    apply_user_defaults(request, skip=no_user_config)

    if "-" in files:
        _check_stdin(files)
    paths = [_data_argument(text) for text in files]
    for path in paths:
        if path == STDIN:
            continue
        if not exists(path) and not _folder_or_glob(path):
            raise InputError(
                f"{printable(os.fspath(path))}: no such file or folder. Check the path (a glob "
                "such as 'runs/*.jsonl' is read as every file it matches)."
            )
    # How messages and the results name the data (``<stdin>`` for ``-``).
    request.data = paths[0]
    request.data_name = STDIN_NAME if paths[0] == STDIN else os.fspath(paths[0])
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
    if config is None or metric_specs:
        request.source = "the command line" if config is None else f"{config} and the command line"
    _score_with(request, format=input_format, **options)


@click.command("run", context_settings=CONTEXT, cls=_WithDefaults)
@click.argument("config", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_limit_option
@_stat_options
@_out_options
def run_command(config: Path, no_user_config: bool, **options: Any) -> None:
    """Score the data named in a YAML configuration file.

    CONFIG holds suite, data, columns, metrics, out... (see docs/cli.md); options given here
    win over the file's.
    """
    request = load_config(config)
    apply_user_defaults(request, skip=no_user_config)
    if request.data is None:
        raise ConfigError(
            f"{config}:1:1: the configuration has no `data` key; name the file of outputs, "
            "e.g. `data: outputs.jsonl` (relative to the configuration file)."
        )
    _score_with(request, **options)


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
    by_group: bool | None,
    as_json: bool,
    print_format: str | None,
    quiet: bool,
    **options: Any,
) -> None:
    """Add or recompute metrics on a saved results.json, without the model."""
    view = _View.of(bool(by_group), as_json, quiet, print_format)
    request = RunRequest()
    _override(request, **options)
    _run_request(request, view, (results, _cli_entries(metric_specs)))


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
    from itemscore._run import run
    from itemscore._terminal import make_console, progress_bar
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
