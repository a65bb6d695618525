"""Report files: one module per format, registered in :data:`BUILTIN` below.

To add a report format, write one module here with a ``write(result, path)`` function and add
one line to :data:`BUILTIN`. Plugins add formats through the ``itemscore_export_formats`` hook
(:mod:`.plugin_formats`); a plugin format ``NAME`` is written to ``DIR/results.NAME``.

:func:`export` writes the whole set all or nothing, even across ``kill -9``: every report is
written into a fresh folder ``DIR/.itemscore/set-*``, and the set is switched into place with
one atomic rename (:mod:`._commit`). The reports in ``DIR`` are links into the current set.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from .._columns import ScoreColumn
from .._exceptions import ConfigError, ItemscoreError, did_you_mean, one_of
from .._gc import gc_paused
from .._records import ItemResult
from .._result import RunResult

__all__ = [
    "BUILTIN",
    "BUILTIN_FORMATS",
    "Export",
    "ReportFormat",
    "available_formats",
    "check_out_dir",
    "export",
    "resolve_formats",
]

#: ``writer(result, path)`` writes one report of ``result`` to ``path``.
Writer = Callable[[RunResult, Path], None]


@attrs.frozen
class ReportFormat:
    """A built-in report format: its name, its file, and the module that writes it."""

    #: The name used with ``--report`` and ``export(formats=...)``.
    name: str
    #: The file written into the output folder.
    filename: str
    #: The module of this package whose ``write(result, path)`` writes it (imported on use).
    module: str

    def writer(self) -> Callable[..., None]:
        """The module's ``write`` function."""
        write: Callable[..., None] = importlib.import_module(f"{__name__}.{self.module}").write
        return write


#: Every built-in format, in the order they are listed and returned. One line per format.
BUILTIN: tuple[ReportFormat, ...] = (
    ReportFormat("json", "results.json", "results_json"),
    ReportFormat("items", "items.jsonl", "items_jsonl"),
    ReportFormat("csv", "summary.csv", "summary_csv"),
    ReportFormat("tex", "table.tex", "table_tex"),
    ReportFormat("xlsx", "results.xlsx", "results_xlsx"),
    ReportFormat("html", "report.html", "report_html"),
    ReportFormat("eee", "eee", "eee"),
)

#: The built-in report formats: name -> file name.
BUILTIN_FORMATS: dict[str, str] = {f.name: f.filename for f in BUILTIN}
_BY_NAME = {f.name: f for f in BUILTIN}


def _plugin_formats() -> dict[str, tuple[str, Writer]]:
    from .plugin_formats import plugin_formats

    return plugin_formats(BUILTIN_FORMATS)


def available_formats() -> dict[str, str]:
    """Every report format this process can write: name -> file name (plugins included)."""
    names = dict(BUILTIN_FORMATS)
    for name in _plugin_formats():
        names[name] = f"results.{name}"
    return names


def resolve_formats(
    formats: Iterable[str] | None = None,
    *,
    notice: Callable[[str], None] | None = None,
) -> list[tuple[str, str, Writer]]:
    """The reports to write, as ``(format, file name, writer)``, checked before any is written.

    ``None`` means every built-in format and every plugin format; ``results.xlsx`` is then left
    out, with one notice per process, when XlsxWriter is not installed.

    Args:
        formats: Format names, or ``None`` for all.
        notice: Where the notice of a format left out goes; standard error when ``None``.

    Raises:
        ConfigError: an unknown format, or ``xlsx`` asked for without XlsxWriter.
        ItemscoreError: a plugin's format is unusable (see :mod:`.plugin_formats`).
    """
    plugins = _plugin_formats()
    known = [*BUILTIN_FORMATS, *plugins]
    if formats is None:
        chosen = list(known)
        if not _xlsx_available():
            chosen.remove("xlsx")
            _notice_once(
                "xlsx",
                "Note: results.xlsx is not written because XlsxWriter is not installed "
                f"({_XLSX_HINT}).",
                notice,
            )
    else:
        chosen = []
        for name in formats:
            if name not in known:
                raise ConfigError(
                    f"The report format {name!r} is not known; use one of {one_of(known)}."
                    f"{did_you_mean(name, known)}"
                )
            if name not in chosen:
                chosen.append(name)
        if "xlsx" in chosen and not _xlsx_available():
            raise ConfigError(
                "The report format 'xlsx' needs XlsxWriter, which is not installed. Install it "
                f"with: {_XLSX_HINT}"
            )
    out: list[tuple[str, str, Writer]] = []
    for name in chosen:
        if name in _BY_NAME:
            fmt = _BY_NAME[name]
            out.append((name, fmt.filename, fmt.writer()))
        else:
            out.append((name, f"results.{name}", plugins[name][1]))
    return out


_XLSX_HINT = "pip install 'itemscore[xlsx]'"
_noticed: set[str] = set()


def _xlsx_available() -> bool:
    try:
        import xlsxwriter  # noqa: F401
    except ImportError:
        return False
    return True


def _notice_once(key: str, message: str, notice: Callable[[str], None] | None) -> None:
    if key in _noticed:
        return
    _noticed.add(key)
    if notice is not None:
        notice(message)
    else:
        print(message, file=sys.stderr)


def check_out_dir(out_dir: str | os.PathLike[str]) -> Path:
    """``out_dir`` as a path, checked to be a folder or not to exist yet.

    Raises:
        ConfigError: ``out_dir`` exists and is not a folder.
    """
    path = Path(out_dir)
    if path.exists() and not path.is_dir():
        raise ConfigError(
            f"The output folder {os.fspath(out_dir)} is an existing file; name a folder."
        )
    return path


def _call(writer: Callable[..., Any], name: str, result: RunResult, path: Path, names: Any) -> None:
    if name == "json":
        writer(result, path, names)  # refers to items.jsonl when it is in the set
    else:
        writer(result, path)


def export(
    result: RunResult,
    out_dir: str | os.PathLike[str],
    formats: Iterable[str] | None = None,
    *,
    notice: Callable[[str], None] | None = None,
) -> list[Path]:
    """Write the reports of ``result`` into ``out_dir``, all or nothing.

    The whole set is written into a fresh folder ``out_dir/.itemscore/set-*`` and switched
    into place in one atomic step: a failure or a kill at any moment leaves either the
    previous complete set or the new complete set. Reports of formats not in the new set are
    removed, so a set is never mixed with an older one. Sets left by killed runs are removed
    by the next export into the same folder.

    Args:
        result: The run.
        out_dir: The folder (created when missing).
        formats: Names of :data:`BUILTIN_FORMATS` or plugin formats; ``None``: all of them.
        notice: Where the notice of a format left out goes (see :func:`resolve_formats`).

    Returns:
        The paths written, in format order.

    Raises:
        ConfigError: an unknown format or a bad folder, before anything is written.
        Exception: whatever a writer raised; then the previous set is still in place.
    """
    return Export(out_dir, formats, notice=notice).finish(result)


class Export:
    """A report set written as a run goes: ``items.jsonl`` chunk by chunk, the rest at the end.

    Pass :meth:`add_chunk` as the run's ``on_chunk``: each chunk's lines are written to
    ``items.jsonl`` in the new set as soon as the chunk is scored, so no pass over the items
    is needed after the run for that file. :meth:`finish` writes the other reports and
    switches the set into place; :meth:`discard` (or an exception in ``finish``) removes it.
    Formats and the folder are checked when the object is made, before anything is scored.
    With ``source``, the run's packed items, a large run's ``items.jsonl`` is written by a
    process of its own from the packed blocks, on another core (:mod:`._items_stream`).

    Raises:
        ConfigError: an unknown format or a bad folder.
    """

    def __init__(
        self,
        out_dir: str | os.PathLike[str],
        formats: Iterable[str] | None = None,
        *,
        notice: Callable[[str], None] | None = None,
        source: Sequence[ItemResult] | None = None,
    ) -> None:
        self.path = check_out_dir(out_dir)
        self._source = source
        self.plan = resolve_formats(formats, notice=notice)
        self._default_set = formats is None  # results.xlsx may then hold the first items only
        self._notice = notice
        self._set: Any = None
        self._created: list[Path] = []
        self._items: Any = None  # the open items.jsonl of a streamed set
        self._streamed = 0

    @property
    def streams_items(self) -> bool:
        """Whether ``items.jsonl`` is in the set (so chunks are worth handing over)."""
        return any(name == "items" for name, _, _ in self.plan)

    def _folder(self) -> Path:
        if self._set is None:
            from ._commit import new_set

            self._created = [p for p in (self.path, *self.path.parents) if not p.exists()]
            self.path.mkdir(parents=True, exist_ok=True)
            self._set = new_set(self.path)
        folder: Path = self._set.folder
        return folder

    def add_chunk(self, items: Sequence[ItemResult], columns: Mapping[str, ScoreColumn]) -> None:
        """Write the ``items.jsonl`` lines of one scored chunk (nothing without that format).

        ``columns`` must hold every label of the run, in the run's order: a run with corpus
        metrics (scored only at the end) cannot stream its items.
        """
        if not self.streams_items:
            return
        try:
            if self._items is None:
                from ._items_stream import open_items_stream

                path = self._folder() / BUILTIN_FORMATS["items"]
                self._items = open_items_stream(path, self._source)
            self._items.write(items, columns)
            self._streamed += len(items)
        except BaseException:
            self.discard()
            raise

    def finish(self, result: RunResult) -> list[Path]:
        """Write the other reports of ``result`` and switch the set into place.

        Returns:
            The paths written, in format order.

        Raises:
            Exception: whatever a writer raised; then the previous set is still in place.
        """
        try:
            streamed = self._items is not None
            if streamed:
                items, self._items = self._items, None
                items.close()
                if self._streamed != len(result.items):  # chunks of another run: redo it
                    streamed = False
            folder = self._folder()
            names = [filename for _, filename, _ in self.plan]
            known = list(dict.fromkeys([*BUILTIN_FORMATS.values(), *names]))
            # items.jsonl first: results.json refers to it by count and hash.
            order = sorted(self.plan, key=lambda entry: entry[0] != "items")
            if streamed:
                order = [entry for entry in order if entry[0] != "items"]
            if self._default_set:
                order = _limit_xlsx(order, len(result.items), self._notice)
            _write_all(order, result, folder, names)
            paths: list[Path] = self._set.commit(names, known)
            self._set = None
            return paths
        except BaseException:
            self.discard()
            raise

    def discard(self) -> None:
        """Remove the set being written (and the folders made for it); the old set stays."""
        if self._items is not None:
            items, self._items = self._items, None
            items.abort()
        if self._set is not None:
            self._set.discard()
            self._set = None
            if self._created:
                _remove_created(self.path, self._created)


def _limit_xlsx(
    order: list[tuple[str, str, Writer]], n_items: int, notice: Callable[[str], None] | None
) -> list[tuple[str, str, Writer]]:
    """In the default set of a large run, results.xlsx holds its first items only, noticed."""
    if not any(name == "xlsx" for name, _, _ in order):
        return order
    from . import results_xlsx

    limit = results_xlsx.item_limit(explicit=False, n_items=n_items)
    if limit is None:
        return order
    message = results_xlsx.limit_notice(n_items, limit)
    if notice is not None:
        notice(message)
    else:
        print(message, file=sys.stderr)
    write = functools.partial(results_xlsx.write, max_items=limit)
    return [(name, file, write if name == "xlsx" else w) for name, file, w in order]


#: Formats written in a second process on large runs, beside the others (both cores busy).
_IN_CHILD = frozenset({"xlsx", "html"})
#: From this many items on, writing in two processes pays for the fork.
PARALLEL_FROM = 20_000


def _write_one(entry: tuple[str, str, Writer], result: RunResult, folder: Path, names: Any) -> None:
    name, filename, writer = entry
    # The built-in writers make many small acyclic containers; a full collection would walk
    # every item of the run again each time (the runner avoids it the same way).
    with gc_paused() if name in _BY_NAME else contextlib.nullcontext():
        _call(writer, name, result, folder / filename, names)


def _write_all(
    order: list[tuple[str, str, Writer]], result: RunResult, folder: Path, names: Any
) -> None:
    """Write every report; on large runs the spreadsheet and the page in a forked process.

    The child only writes files into the set's folder; its failure is raised here with its
    message. Forking is skipped when threads run (a fork would copy their locks) and where
    ``os.fork`` is missing.
    """
    child = [e for e in order if e[0] in _IN_CHILD]
    rest = [e for e in order if e[0] not in _IN_CHILD]
    if (
        len(result.items) < PARALLEL_FROM
        or not child
        or not rest
        or not hasattr(os, "fork")
        or threading.active_count() > 1
    ):
        for entry in order:
            _write_one(entry, result, folder, names)
        return
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's coverage is not collected
        os.close(read_end)
        code = 0
        try:
            for entry in child:
                _write_one(entry, result, folder, names)
        except BaseException as exc:  # noqa: BLE001 # reported to the parent, which raises
            os.write(write_end, f"{type(exc).__name__}: {exc}".encode(errors="replace")[:4096])
            code = 1
        finally:
            os._exit(code)
    os.close(write_end)
    try:
        for entry in rest:
            _write_one(entry, result, folder, names)
    except BaseException:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(read_end)
        raise
    with os.fdopen(read_end, "rb") as pipe:
        message = pipe.read().decode(errors="replace")
    _, status = os.waitpid(pid, 0)
    if status != 0:
        formats = ", ".join(filename for _, filename, _ in child)
        raise ItemscoreError(
            f"Writing {formats} failed: {message or f'its process ended with status {status}'}"
        )


def _remove_created(path: Path, created: list[Path]) -> None:
    """Remove the folders this export created, when nothing else was put there meanwhile."""
    from ._commit import STATE_DIR

    state = path / STATE_DIR
    try:
        (state / "lock").unlink(missing_ok=True)
        state.rmdir()
    except OSError:
        return
    for folder in created:
        try:
            folder.rmdir()
        except OSError:
            break  # not empty after all: something else wrote there meanwhile
