"""Report files: one module per format, registered in :data:`BUILTIN` below.

To add a report format, write one module here with a ``write(result, path)`` function and add
one line to :data:`BUILTIN`. Plugins add formats through the ``itemscore_export_formats`` hook
(:mod:`.plugin_formats`); a plugin format ``NAME`` is written to ``DIR/results.NAME``.

:func:`export` writes the whole set all or nothing, even across ``kill -9``: every report is
written into a fresh folder ``DIR/.itemscore/set-*``, and the set is switched into place with
one atomic rename (:mod:`._commit`). The reports in ``DIR`` are links into the current set.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs

from .._commit import FolderBusyError
from .._exceptions import ConfigError, did_you_mean, one_of
from .._result import RunResult
from ..display._text import printable
from ._files import ReportWriteError, writing
from ._preflight import check_out_dir
from .plugin_formats import Writer, plugin_formats

__all__ = [
    "BUILTIN",
    "BUILTIN_FORMATS",
    "Export",
    "FolderBusyError",
    "ReportFormat",
    "ReportWriteError",
    "available_formats",
    "check_out_dir",
    "export",
    "resolve_formats",
]


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
    ReportFormat("items", "items.parquet", "items_parquet"),
    ReportFormat("jsonl", "items.jsonl", "items_jsonl"),
    ReportFormat("csv", "summary.csv", "summary_csv"),
    ReportFormat("tex", "table.tex", "table_tex"),
    ReportFormat("xlsx", "results.xlsx", "results_xlsx"),
    ReportFormat("html", "report.html", "report_html"),
    ReportFormat("eee", "eee", "eee"),
    ReportFormat("md", "results.md", "results_md"),
    ReportFormat("leaderboard", "leaderboard", "leaderboard_files"),
)

#: Formats written only when named: the items again as JSON lines (items.parquet has them),
#: the Every Eval Ever files (a folder of its own, for exchange), the Markdown table (to
#: paste into a README or a pull request) and the leaderboards (a run of several models).
ON_REQUEST = frozenset({"jsonl", "eee", "md", "leaderboard"})
#: The built-in report formats: name -> file name.
BUILTIN_FORMATS: dict[str, str] = {f.name: f.filename for f in BUILTIN}
_BY_NAME = {f.name: f for f in BUILTIN}


def available_formats() -> dict[str, str]:
    """Every report format this process can write: name -> file name (plugins included)."""
    plugins = plugin_formats(BUILTIN_FORMATS)
    return {**BUILTIN_FORMATS, **{name: f"results.{name}" for name in plugins}}


def resolve_formats(
    formats: Iterable[str] | None = None,
    *,
    notice: Callable[[str], None] | None = None,
) -> list[tuple[str, str, Writer]]:
    """The reports to write, as ``(format, file name, writer)``, checked before any is written.

    ``None`` means every built-in format (but those of :data:`ON_REQUEST`) and every plugin
    format; ``results.xlsx`` is then left out, with one notice per process, when XlsxWriter
    is not installed.

    Args:
        formats: Format names, or ``None`` for all.
        notice: Where the notice of a format left out goes; standard error when ``None``.

    Raises:
        ConfigError: an unknown format, or ``xlsx`` asked for without XlsxWriter.
        ItemscoreError: a plugin's format is unusable (see :mod:`.plugin_formats`).
    """
    plugins = plugin_formats(BUILTIN_FORMATS)
    known = [*BUILTIN_FORMATS, *plugins]
    if formats is None:
        chosen = [name for name in known if name not in ON_REQUEST]
        if not _xlsx_available():
            chosen.remove("xlsx")
            _notice_once(
                "xlsx",
                "Note: results.xlsx is not written because XlsxWriter is not installed "
                f"({_xlsx_hint()}).",
                notice,
            )
    else:
        chosen = list(dict.fromkeys(formats))
        for name in chosen:
            if name not in known:
                raise ConfigError(
                    f"The report format {name!r} is not known; use one of {one_of(known)}."
                    f"{did_you_mean(name, known)}"
                )
        if "xlsx" in chosen and not _xlsx_available():
            raise ConfigError(
                "The report format 'xlsx' needs XlsxWriter, which is not installed. Install it "
                f"with: {_xlsx_hint()}"
            )
    return [
        (name, _BY_NAME[name].filename, _BY_NAME[name].writer())
        if name in _BY_NAME
        else (name, f"results.{name}", plugins[name][1])
        for name in chosen
    ]


def _xlsx_hint() -> str:
    from itemscore._extras import install_hint

    return install_hint("XlsxWriter")


_noticed: set[str] = set()


def _xlsx_available() -> bool:
    try:
        import xlsxwriter  # noqa: F401
    except ImportError:
        return False
    return True


def _notice_once(key: str, message: str, notice: Callable[[str], None] | None) -> None:
    if key not in _noticed:
        _noticed.add(key)
        _say(message, notice)


def _say(message: str, notice: Callable[[str], None] | None) -> None:
    if notice is not None:
        notice(message)
    else:
        print(message, file=sys.stderr)


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
    """A report set: checked when made (formats, folder), written and switched in at the end.

    :meth:`finish` writes every report of a result and switches the set into place;
    :meth:`discard` (or an exception in ``finish``) removes it and leaves the old set.
    ``items.parquet`` may be written into the set while the run goes (:meth:`items_path`),
    so that a large run's items are never held in memory; ``finish`` then keeps that file.
    ``command`` is the command line the folder's lock records while the set is written
    (default: ``sys.argv``).

    Raises:
        ConfigError: an unknown format or a bad folder.
    """

    def __init__(
        self,
        out_dir: str | os.PathLike[str],
        formats: Iterable[str] | None = None,
        *,
        notice: Callable[[str], None] | None = None,
        command: Sequence[str] | None = None,
    ) -> None:
        self.path = check_out_dir(out_dir)
        self.plan = resolve_formats(formats, notice=notice)
        self._default_set = formats is None  # results.xlsx may then hold the first items only
        self._notice = notice
        self._set: Any = None
        self._names = [filename for _, filename, _ in self.plan]
        self._claim = _claim(self.path, self._names, command)

    @property
    def stores_items(self) -> bool:
        """Whether ``items.parquet`` is in the set."""
        return any(name == "items" for name, _, _ in self.plan)

    def _folder(self) -> Path:
        if self._set is None:
            self._set = self._claim.new_set()
        folder: Path = self._set.folder
        return folder

    def items_path(self) -> Path:
        """Where the run may write ``items.parquet`` of the new set as it goes."""
        return self._folder() / BUILTIN_FORMATS["items"]

    def finish(self, result: RunResult) -> list[Path]:
        """Write the reports of ``result`` and switch the set into place.

        Returns:
            The paths written, in format order.

        Raises:
            Exception: whatever a writer raised; then the previous set is still in place.
        """
        try:
            folder = self._folder()
            # items.parquet first: results.json refers to it by count and hash.
            order = sorted(self.plan, key=lambda entry: entry[0] != "items")
            items_file = result.table.items.path if result.table.items is not None else None
            if items_file is not None and items_file == folder / BUILTIN_FORMATS["items"]:
                order = [entry for entry in order if entry[0] != "items"]  # written as it ran
            if self._default_set:
                order = _limit_xlsx(order, len(result.items), self._notice)
            for entry in order:
                _write_one(entry, result, folder, self._names)
            paths: list[Path] = self._set.commit(self._names)
            self._set = None
            self._claim.release()
            return paths
        except BaseException:
            self.discard()
            raise

    def discard(self) -> None:
        """Remove the set being written (and the folders made for it); the old set stays."""
        if self._set is not None:
            self._set.discard()
            self._set = None
        self._claim.release(remove_created=True)


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
    _say(results_xlsx.limit_notice(n_items, limit), notice)
    write = functools.partial(results_xlsx.write, max_items=limit)
    return [(name, file, write if name == "xlsx" else w) for name, file, w in order]


def _write_one(
    entry: tuple[str, str, Callable[..., None]], result: RunResult, folder: Path, names: Any
) -> None:
    name, filename, writer = entry
    with writing(filename, folder):
        if name == "json":
            writer(
                result, folder / filename, names
            )  # refers to items.parquet when it is in the set
        else:
            writer(result, folder / filename)


def _claim(path: Path, names: Sequence[str], command: Sequence[str] | None = None) -> Any:
    """Check ``path`` for a set of ``names`` and claim it (see :mod:`._commit`).

    ``command`` is what the folder's lock shows a run refused meanwhile (default:
    ``sys.argv``); the command line passes its own with the secrets masked.

    Raises:
        ConfigError: a report name taken by something itemscore did not write, or a folder
            that cannot be created.
        FolderBusyError: another process is writing into ``path``.
    """
    from .._commit import claim

    check_out_dir(path, names)
    try:
        return claim(path, command=command)
    except OSError as exc:
        raise ConfigError(
            f"The output folder {printable(os.fspath(path))} cannot be created or written: "
            f"{printable(exc.strerror or str(exc))}"
            f"{f' ({printable(exc.filename)})' if exc.filename else ''}; choose a folder you "
            "can write to."
        ) from exc
