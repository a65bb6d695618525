"""The command line's runs as functions: a request in, ``(result, paths)`` out, nothing printed.

Each step calls the library (plan, settings, suite lookup, file reading, run-level checks,
scoring, export); this module only decides the order, turns the library's errors into errors
that name where the request wrote the part at fault, and sends warnings to ``notice``.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from itemscore._exceptions import (
    ConfigError,
    InputError,
    ItemscoreError,
    MetricCollisionError,
    OptionError,
    PluginLoadError,
    ResultsFormatError,
    did_you_mean,
    one_of,
)
from itemscore.executors import EXECUTORS, cluster_flags

from ._request import MetricEntry, RunRequest, located

if TYPE_CHECKING:
    from itemscore._plan import RunPlan
    from itemscore._records import ItemResult
    from itemscore._result import RunResult
    from itemscore._suite import Suite
    from itemscore.engine._files import Keep
    from itemscore.inputs import Source
    from itemscore.reports import Export

__all__ = [
    "Notice",
    "Verification",
    "check_settings",
    "file_digest",
    "plan_entries",
    "prepare_request",
    "rescore_results",
    "score_request",
    "verify_results",
]

#: Where warnings go (the command line prints them on stderr).
Notice = Callable[[str], None]
#: ``progress(done, total)`` as scoring advances.
Progress = Callable[[int, int], None]
#: ``reading(rows)`` as the data file is read.
Reading = Callable[[int], None]

#: The settings of a request that are ``RunSettings`` fields as they are.
_SETTINGS = ("confidence", "ci_method", "seed", "retries", "item_timeout", "worker_memory",
             "deadline", "reduce")  # fmt: skip


def _ignore(message: str) -> None:
    pass


def plan_entries(metrics: Sequence[Any], extra: Sequence[Any], *, source: str) -> RunPlan:
    """Configure every metric once (the library's plan), reporting a failure where it was asked.

    ``metrics`` and ``extra`` hold :class:`MetricEntry` (asked for on the command line or in a
    file) or anything the library takes (a suite's bound metrics).

    Raises:
        ConfigError: as the library's plan, the message starting with the entry's place.
        MetricCollisionError: likewise.
    """
    from itemscore._plan import plan

    def spec(obj: Any) -> Any:
        return obj.spec if isinstance(obj, MetricEntry) else obj

    try:
        return plan([spec(m) for m in metrics], [spec(m) for m in extra])
    except (ConfigError, MetricCollisionError, PluginLoadError) as exc:
        index = getattr(exc, "index", None)
        setting = getattr(exc, "setting", None)
        listed = {"metrics": metrics, "extra_metrics": extra}.get(setting or "")
        if listed is not None and index is not None and index < len(listed):
            entry = listed[index]
            if isinstance(entry, MetricEntry):
                raise located(exc, entry.place(exc)) from exc
        raise located(exc, source) from exc


def check_settings(request: RunRequest) -> dict[str, Any]:
    """The run's settings as ``score`` keywords, checked together by the library.

    One call builds the run's ``RunSettings`` and resolves its executor (a ``--dask`` address
    is tried) as ``score`` will; a setting refused is reported where it was written.

    Raises:
        ConfigError: a setting the library refuses, or flags that contradict one another.
    """
    from itemscore._run import prepare_settings

    keywords = {
        key: getattr(request, key) for key in _SETTINGS if getattr(request, key) is not None
    }
    keywords.update(_executor_settings(request))
    with _settings_placed(request):
        prepare_settings(**keywords)
    return keywords


def _executor_settings(request: RunRequest) -> dict[str, Any]:
    """``executor`` and ``workers``, or a cluster, from the flags that say where to score.

    Raises:
        ConfigError: an unknown executor, or flags that contradict one another.
    """
    executor = request.executor
    if executor is not None and executor not in EXECUTORS:
        raise ConfigError(
            f"{request.setting_place('executor', '--executor')}: {executor!r} is no executor; "
            f"use one of {one_of(EXECUTORS)}.{did_you_mean(str(executor), EXECUTORS)}"
        )
    clusters = [key for key in cluster_flags() if key in request.clusters]
    if len(clusters) > 1:
        first, second = clusters[:2]
        raise ConfigError(
            f"{request.setting_place(second, '--' + second)}: choose --{first} or --{second} "
            "(one cluster), not both."
        )
    for key in clusters:
        if request.workers is not None:
            raise ConfigError(
                f"{request.setting_place(key, '--' + key)}: choose --workers (processes on this "
                f"machine) or --{key} (a cluster), not both."
            )
        if executor not in (None, key):
            raise ConfigError(
                f"{request.setting_place(key, '--' + key)}: --{key} names a cluster of the "
                f"{key!r} executor, and --executor is {executor!r}. Leave --executor out, or "
                f"write --executor {key}."
            )
        # A Dask scheduler's address goes as `client=`, a Ray cluster's as `address=`: the
        # executor connects, and disconnects after the run.
        return {"executor": key, cluster_flags()[key].keyword: request.clusters[key]}
    if request.workers is None:
        return {} if executor is None else {"executor": executor}
    if executor == "serial":
        raise ConfigError(
            f"{request.setting_place('workers', '--workers')}: --workers asks for worker "
            "processes, and --executor serial scores in this process. Leave one of them out."
        )
    return {"executor": executor or "process", "workers": request.workers}


@contextlib.contextmanager
def _settings_placed(request: RunRequest) -> Iterator[None]:
    """Report an error the library raises about a setting where the request wrote it.

    The setting is the error's ``setting`` (its data, never its text); a cluster's keyword
    was written as ``--dask`` or ``--ray``. Each flag is the setting's name (``--item-timeout``)
    but ``--ci``.
    """
    try:
        yield
    except ConfigError as exc:
        clusters = {cluster.keyword: key for key, cluster in cluster_flags().items()}
        key = clusters.get(exc.setting or "", exc.setting)
        if key not in (*_SETTINGS, "workers", "executor", *cluster_flags()):
            raise
        flag = "--ci" if key == "ci_method" else "--" + key.replace("_", "-")
        raise located(exc, request.setting_place(key, flag)) from exc


def file_digest(path: Path, option: str = "--data") -> str:
    """The SHA-256 of a regular file (links followed), in hex.

    A stream is refused rather than read: it has no end to hash to (``/dev/zero``, a pipe
    whose writer never stops), and a pipe without a writer would block its opening.

    Raises:
        InputError: ``path`` is not a regular file (a pipe, a device, a folder).
    """
    # O_NONBLOCK: a FIFO opens at once, writer or not, so that it can be refused.
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise InputError(
                f"{option} {path}: not a regular file (a pipe, a device or a terminal), so "
                "it may never end and its SHA-256 cannot be computed. If it carries the data "
                f"that was scored, save it to a file first and give that file to {option}.",
                path=os.fspath(path),
            )
        digest = hashlib.sha256()
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _suite_items(request: RunRequest, suite: Suite) -> list[ItemResult]:
    """The items of the request's data file through the suite's own ``items()``."""
    from itemscore.inputs import read_rows

    assert request.data is not None
    options: dict[str, Any] = dict(request.read_options)
    with _read_options_placed(request):
        source = read_rows(request.data, request.format, name=request.data_name or None, **options)
        rows = (row for chunk in source for row in chunk.rows)
        limit = request.limit
        return list(suite.items(itertools.islice(rows, limit) if limit is not None else rows))


@contextlib.contextmanager
def _read_options_placed(request: RunRequest) -> Iterator[None]:
    """Report a reader's refusal of one of its options where the request set it."""
    try:
        yield
    except OptionError as exc:
        if exc.option not in request.read_options:
            raise
        place = request.setting_place(f"read_options.{exc.option}", "--read-option")
        raise located(exc, place) from exc


def open_request_source(request: RunRequest) -> Source:
    """The request's data as a source its workers read (nothing is parsed yet).

    Raises:
        ConfigError: an unknown format, role or reader option.
        InputError: a stream past its bound, a glob or folder without data files.
    """
    from itemscore.inputs import open_source

    assert request.data is not None
    options: dict[str, Any] = dict(request.read_options)
    with _read_options_placed(request):
        return open_source(
            request.data_files if len(request.data_files) > 1 else request.data,
            request.format,
            columns=request.columns,
            answer_delimiter=request.answer_delimiter,
            null_output=request.null_output,
            name=request.data_name or None,
            **options,
        )


def _keep(export: Export | None) -> Keep:
    """What the run keeps of its items: nothing without reports, else the set's store."""
    from itemscore.engine._files import Keep

    if export is None:
        return Keep("none")
    if export.stores_items:
        return Keep("parquet", export.items_path())
    return Keep("memory")


def score_request(
    request: RunRequest,
    *,
    command: Sequence[str] | None = None,
    progress: Progress | None = None,
    reading: Reading | None = None,
    notice: Notice = _ignore,
) -> tuple[RunResult, list[Path]]:
    """Score the request's data file and write its reports: ``(result, paths written)``.

    Everything is checked before anything is scored or written: the request, then (by the
    workers' first pass over the data) every row and the whole-file checks.

    Raises:
        ConfigError: a bad metric, option, setting, suite or report format.
        InputError: a malformed data file, or no answer key where a metric needs one.
    """
    from itemscore._checks import check_answer_keys, check_ci_support
    from itemscore._run import score, score_opened
    from itemscore._suite import Suite

    assert request.data is not None
    notice = _above_bar(progress, notice)
    prepared = prepare_request(request, notice=notice)
    suite, planned, settings = prepared.suite, prepared.planned, prepared.settings
    _count_items(progress, len(planned))
    answer_column = request.columns.get("expected", "expected")
    custom = suite is not None and type(suite).items is not Suite.items
    items = _suite_items(request, suite) if custom and suite is not None else None
    source = None if items is not None else open_request_source(request)
    if items is not None:
        check_answer_keys(items, planned, source=request.data_name or os.fspath(request.data),
                          column=answer_column)  # fmt: skip
    # Without --report, the default set (in which results.xlsx may be limited).
    formats = prepared.reports if request.reports is not None else None
    export = None
    try:
        recorded = _recorded_command(sys.argv if command is None else command, planned)
        export = _open_export(request.out, formats, notice, recorded)
        with _settings_placed(request):
            if source is not None:
                result = score_opened(
                    source, planned, suite_id=prepared.suite_id, progress=progress,
                    keep=_keep(export), reading=reading, answer_column=answer_column,
                    limit=request.limit, **settings,
                )  # fmt: skip
            else:
                assert items is not None
                result = score(items, planned, suite_id=prepared.suite_id, progress=progress,
                               **settings)  # fmt: skip
        if request.limit is not None:
            rows = (result.provenance.get("data") or {}).get("rows", len(result.items))
            notice(
                f"Note: --limit {request.limit}: read only the first {rows} rows of "
                f"{request.data_name or os.fspath(request.data)}; the numbers describe those "
                "rows, not the whole file (results.json's provenance says so too)."
            )
        if request.by_group:
            _check_groups(result, source, notice)
        if request.ci_method is not None:
            check_ci_support(result, request.ci_method, notice=notice)
        # What only the command line knows, in the provenance (table.tex gets the group rows).
        known = {
            "command": recorded if command is not None else None,
            "columns": dict(request.columns),
            "by_group": True if request.by_group else None,
        }
        result = result.with_provenance(**{k: v for k, v in known.items() if v is not None})
        if export is not None:
            stage = getattr(progress, "stage", None)
            if stage is not None:  # the bar is full: say what the wait is for
                stage("writing the reports")
        paths = export.finish(result) if export is not None else []
    except BaseException:
        if export is not None:
            export.discard()
        raise
    finally:
        if source is not None:
            source.close()
    return result, paths


def _above_bar(progress: Progress | None, notice: Notice) -> Notice:
    """``notice`` on a line of its own while a progress bar shows, not glued to the bar."""
    above = getattr(progress, "above", None)
    return notice if above is None else above(notice)


def _count_items(progress: Progress | None, metrics: int) -> None:
    """Tell a progress bar that the runner counts items x ``metrics``: it shows items."""
    count = getattr(progress, "count_items", None)
    if count is not None:
        count(metrics)


def _check_groups(result: RunResult, source: Source | None, notice: Notice) -> None:
    """--by-group over items without a group: a warning naming likely group columns."""
    from itemscore._checks import check_groups

    if result.table.has("group"):
        return
    sample: list[ItemResult] = []
    if result.table.items is not None:
        sample = list(itertools.islice(result.items, 2000))
    elif source is not None:
        from itemscore._schema import batch_to_items
        from itemscore.inputs import read_part

        first = next(iter(read_part(source.whole()).batches()), None)
        sample = [] if first is None else batch_to_items(first.slice(0, 2000))
    check_groups(sample, notice=notice)


def _open_export(
    out: Path | None, formats: list[str] | None, notice: Notice, command: Sequence[str] | None
) -> Export | None:
    """The report set of ``--out`` (its lock showing ``command``), or ``None`` without ``--out``."""
    if out is None:
        return None
    from itemscore.reports import Export

    return Export(out, formats, notice=notice, command=command)


def _recorded_command(command: Sequence[str], planned: RunPlan | None) -> list[str]:
    """``command`` as the run records it: the values of its metrics' credential fields masked.

    A value given on the command line (``-m 'llm_judge:body={api_key: ...}'``) would otherwise
    reach results.json's provenance, every report showing it, and the output folder's lock.
    """
    from itemscore._secrets import mask_secrets, redact_command

    found = [s for pm in planned or () for s in mask_secrets(dict(pm.options))[1]]
    return redact_command(command, found)


@attrs.frozen
class PreparedRun:
    """A request checked and configured: everything but the items."""

    #: The suite id of the measurement keys.
    suite_id: str
    #: The installed suite of that id, if any.
    suite: Suite | None
    #: The metrics, each configured once.
    planned: RunPlan
    #: The checked settings, as keyword arguments of ``score``.
    settings: dict[str, Any]
    #: The report formats to write (``None``: no ``--out``).
    reports: list[str] | None


def prepare_request(request: RunRequest, *, notice: Notice = _ignore) -> PreparedRun:
    """Check and configure everything of a request that does not need its data.

    An installed suite of the request's suite id scores its bound metrics first.

    Raises:
        ConfigError: a bad metric, option, setting, suite or report format, reported where
            the request wrote it; ``UnknownSuiteError``: a near miss of an installed suite's id.
        PluginLoadError: the suite named is installed but cannot be loaded.
    """
    from itemscore._suite import find_suite

    settings = check_settings(request)
    suite = None if request.suite is None else find_suite(request.suite)
    if suite is not None:
        suite_id = suite.suite_id
        metrics: list[Any] = list(suite.metrics)
        extra: list[Any] = [*request.metrics, *request.extra_metrics]
    else:
        suite_id = "default" if request.suite is None else request.suite
        metrics, extra = list(request.metrics), list(request.extra_metrics)
    if not metrics and not extra:
        raise ConfigError(
            "No metrics to score: name one with -m NAME (or `metrics:` in a configuration "
            "file). `itemscore metrics` lists the installed ones."
        )
    planned = plan_entries(metrics, extra, source=request.source)
    return PreparedRun(suite_id, suite, planned, settings, _check_reports(request, notice))


def _check_reports(
    request: RunRequest, notice: Notice, own: Sequence[Path] = ()
) -> list[str] | None:
    """The report formats of ``--out`` (``None`` without it), the folder checked for them."""
    from itemscore.reports import resolve_formats

    from ._preflight import check_out, check_reports_have_out

    check_reports_have_out(request)
    if request.out is None:
        return None
    resolved = resolve_formats(request.reports, notice=notice)
    check_out(request, [filename for _, filename, _ in resolved], own=own)
    return [name for name, _, _ in resolved]


def rescore_specs(saved: Mapping[str, Any], entries: Iterable[MetricEntry]) -> list[Any]:
    """The metrics to rescore: an entry naming a saved metric without options keeps its options.

    ``-m token_f1`` on results scored with ``token_f1:remove_articles=true`` recomputes that
    measurement as it was configured; ``-m token_f1:remove_articles=false`` changes it.
    """
    from itemscore._spec import MetricSpec

    saved_metrics = list(saved.get("metrics", []))
    out: list[Any] = []
    for entry in entries:
        spec = entry.spec
        if not spec.options:
            label = spec.label or spec.name
            for old in saved_metrics:
                if old.get("label") == label and old.get("name") in (spec.name, label):
                    spec = MetricSpec(spec.name, spec.label, old.get("options", {}))
                    break
        out.append(MetricEntry(spec, entry.where, entry.name_where, entry.option_where))
    return out


def rescore_results(
    results: Path,
    entries: Sequence[MetricEntry],
    request: RunRequest,
    *,
    progress: Progress | None = None,
    notice: Notice = _ignore,
) -> tuple[RunResult, list[Path]]:
    """Add or recompute metrics on a saved results.json: ``(result, paths written)``.

    Raises:
        ConfigError: a bad metric, option or setting.
        ResultsFormatError: ``results`` is not an itemscore results file.
    """
    from itemscore._run import rescore

    notice = _above_bar(progress, notice)
    settings = check_settings(request)
    reports = _check_reports(request, notice, own=[results])
    saved = load_results(results, "rescore")
    planned = None
    if entries:
        planned = plan_entries(rescore_specs(saved.config, entries), [], source=request.source)
    _count_items(progress, len(planned) if planned is not None else len(saved.metric_configs))
    formats = reports if request.reports is not None else None
    recorded = _recorded_command(sys.argv, planned)
    export = _open_export(request.out, formats, notice, recorded)  # claims the folder first
    try:
        with _settings_placed(request):
            result = rescore(saved, planned, progress=progress, **settings)
        if request.ci_method is not None:
            from itemscore._checks import check_ci_support

            check_ci_support(result, request.ci_method, notice=notice)
        if export is not None:
            stage = getattr(progress, "stage", None)
            if stage is not None:  # the bar is full: say what the wait is for
                stage("writing the reports")
        paths = export.finish(result) if export is not None else []
    except BaseException:
        if export is not None:
            export.discard()
        raise
    return result, paths


def load_results(path: Path, command: str) -> RunResult:
    """``RunResult.load_json(path)``; a data file given instead is told what to run.

    Raises:
        ResultsFormatError: ``path`` is not an itemscore results file.
    """
    from itemscore._result import RunResult

    from ._preflight import check_results_file

    try:
        return RunResult.load_json(path)
    except ResultsFormatError as exc:
        better = check_results_file(path, command, exc)
        if better is exc:
            raise
        raise better from exc


@attrs.frozen(kw_only=True)
class Verification:
    """What ``verify`` found: the data file first, then what recomputes otherwise."""

    #: The result recomputed from the saved items.
    result: RunResult
    #: How the ``--data`` file differs from the one the results record (empty: it is that
    #: file, or none was given).
    data: list[str]
    #: One sentence per number or setting that does not recompute as saved.
    differences: list[str]
    #: The fields of the file no recomputation checks, by path.
    not_checked: list[str]
    #: Whether the results record the SHA-256 of their data (else ``data`` says so).
    data_recorded: bool = True

    @property
    def agree(self) -> bool:
        """Whether the data file and every number agree."""
        return not self.data and not self.differences


def _recorded_hash(saved: RunResult) -> str | None:
    recorded = saved.provenance.get("data") or {}
    found = recorded.get("sha256") if isinstance(recorded, Mapping) else None
    return found if isinstance(found, str) else None


def _data_differences(saved: RunResult, results: Path, data: Path) -> list[str]:
    """How ``data`` differs from the file ``results`` records (its SHA-256), named both."""
    recorded = saved.provenance.get("data") or {}
    expected = _recorded_hash(saved)
    path = recorded.get("path") if isinstance(recorded, Mapping) else None
    actual = file_digest(data)
    if expected is None:
        return [
            f"The data cannot be checked: {results} records no data hash, so {data} cannot be "
            "checked against it."
        ]
    if expected == actual:
        return []
    scored = f" for {path}" if isinstance(path, str) and path else ""
    return [
        f"The data differs: {data} is not the file the results were computed from. {data} has "
        f"the SHA-256 {actual}; {results} records {expected}{scored}."
    ]


def verify_results(
    results: Path,
    *,
    data: Path | None = None,
    notice: Notice = _ignore,
    on_data: Callable[[Sequence[str]], None] | None = None,
) -> Verification:
    """Recompute every measurement of a saved results.json from its saved items.

    Every number the file holds is compared with its recomputation — both copies of the
    measurements (top-level and per model), with their intervals, counts, ``extra``, groups
    and derived measurements; the settings' two copies; every item's score — or named as not
    checked (when and how the run was made: ``provenance``, execution settings, versions).
    ``data`` is checked first, against the SHA-256 the results record; ``on_data`` gets what
    differs before anything is recomputed, so that it can be said first.

    Returns:
        The recomputed result, how the data differs, one sentence per difference (none:
        everything agrees), and the fields of the file that were not checked, by path.

    Raises:
        ResultsFormatError: ``results`` is not an itemscore results file.
        ItemscoreError: a saved metric is no longer installed or refuses its saved options.
    """
    from itemscore._checks import (
        compare_item_scores,
        compare_measurements,
        compare_settings,
        not_checked,
    )
    from itemscore._run import rescore
    from itemscore._score_values import score_value_problem
    from itemscore.comparison import score_range

    saved = load_results(results, "verify")
    data_differences = _data_differences(saved, results, data) if data is not None else []
    if on_data is not None and data_differences:
        on_data(data_differences)
    document = _document(results)
    differences: list[str] = _unhashed_items(results, document)
    try:
        again = rescore(saved)
    except ItemscoreError as exc:
        raise located(exc, f"{results}") from exc
    differences += compare_settings(document)
    differences += compare_measurements(saved, again, document)
    for label in saved.table.labels:  # a score no metric gives, named with its item
        problem = score_value_problem(saved, label, score_range(saved, label))
        if problem is not None:
            differences.append(f"{results}: {problem}")
    differences += compare_item_scores(saved, again)
    return Verification(
        result=again,
        data=data_differences,
        differences=differences,
        not_checked=not_checked(document, data_checked=data is not None),
        data_recorded=_recorded_hash(saved) is not None,
    )


#: A results.json larger than this lists its items inline: it refers to no items file.
_INLINE_FROM = 64 << 20


def _document(results: Path) -> Mapping[str, Any] | None:
    """``results`` as parsed JSON; ``None`` when it lists its items inline (too large)."""
    import json

    try:
        if results.stat().st_size > _INLINE_FROM:
            return None
        data = json.loads(results.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, Mapping) else None


def _unhashed_items(results: Path, data: Mapping[str, Any] | None) -> list[str]:
    """A sentence when ``results`` refers to its items file without recording its SHA-256."""
    ref = data.get("items") if data is not None else None
    if isinstance(ref, Mapping) and not ref.get("sha256") and not ref.get("parts"):
        return [
            f"{results} records no SHA-256 of its items file {ref.get('file')!r}, so the items "
            "it was computed from cannot be told from altered ones; every item's score is "
            "recomputed and compared instead."
        ]
    return []
