"""Report files: results.json, items.jsonl, summary.csv, table.tex and results.xlsx.

:func:`export` writes every report of a run into one folder, all or nothing: each file is first
written under a temporary name in the target folder, and only when every writer has succeeded
are they renamed into place. A failure removes the temporary files (and the folder, when
:func:`export` created it), so no partial report is ever left behind.

Plugins add formats through the ``itemscore_export_formats`` hook; a format ``NAME`` is written
to ``DIR/results.NAME``.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from ._exceptions import ConfigError, ItemscoreError, did_you_mean, one_of
from ._records import Measurement, Status
from ._result import RunResult
from ._serialize import item_to_dict

__all__ = [
    "BUILTIN_FORMATS",
    "SUMMARY_COLUMNS",
    "available_formats",
    "check_out_dir",
    "export",
    "items_jsonl",
    "latex_escape",
    "latex_table",
    "resolve_formats",
    "result_json",
    "summary_csv",
    "summary_rows",
    "write_xlsx",
]

#: ``writer(result, path)`` writes one report of ``result`` to ``path``.
Writer = Callable[[RunResult, Path], None]

#: The built-in report formats: name -> file name.
BUILTIN_FORMATS: dict[str, str] = {
    "json": "results.json",
    "items": "items.jsonl",
    "csv": "summary.csv",
    "tex": "table.tex",
    "xlsx": "results.xlsx",
}

#: The columns of ``summary.csv`` and of the Summary sheet, in order.
SUMMARY_COLUMNS: tuple[str, ...] = (
    "suite",
    "metric",
    "model",
    "group",
    "value",
    "ci_low",
    "ci_high",
    "ci_method",
    "confidence",
    "n",
    "ok",
    "fail",
    "skip",
    "error",
    "error_message",
)

_XLSX_HINT = "pip install 'itemscore[xlsx]'"
_XLSX_MAX_CELL = 32767  # Excel's limit on the characters of one cell
_noticed: set[str] = set()


# -- the summary ---------------------------------------------------------------------------


def _number(value: float | None) -> str:
    # repr is the shortest text that reads back as the same float: exact, and stable.
    return "" if value is None else repr(float(value))


def _summary_row(m: Measurement, group: str | None) -> dict[str, Any]:
    return {
        "suite": m.suite,
        "metric": m.metric,
        "model": m.model,
        "group": group,
        "value": m.value,
        "ci_low": m.ci_low,
        "ci_high": m.ci_high,
        "ci_method": m.ci_method,
        "confidence": m.confidence,
        "n": m.n,
        "ok": m.counts.get(Status.OK, 0),
        "fail": m.counts.get(Status.FAIL, 0),
        "skip": m.counts.get(Status.SKIP, 0),
        "error": m.counts.get(Status.ERROR, 0),
        "error_message": m.error,
    }


def summary_rows(result: RunResult) -> list[dict[str, Any]]:
    """One row per model and measurement, each followed by one row per group.

    The keys are :data:`SUMMARY_COLUMNS`; missing values are ``None``.
    """
    rows: list[dict[str, Any]] = []
    for measurements in result.by_model.values():
        for m in measurements.values():
            rows.append(_summary_row(m, None))
            for group, gm in m.groups.items():
                rows.append(_summary_row(gm, group))
    return rows


def summary_csv(result: RunResult) -> str:
    """The text of ``summary.csv``: :func:`summary_rows` with a header, floats written exactly."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(SUMMARY_COLUMNS)
    for row in summary_rows(result):
        cells = []
        for column in SUMMARY_COLUMNS:
            value = row[column]
            if isinstance(value, float):
                cells.append(_number(value))
            else:
                cells.append("" if value is None else str(value))
        writer.writerow(cells)
    return buffer.getvalue()


# -- LaTeX ---------------------------------------------------------------------------------

_LATEX_SPECIAL = {
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "\\": r"\textbackslash{}",
}
_LATEX_TABLE = str.maketrans(_LATEX_SPECIAL)


def latex_escape(text: str) -> str:
    r"""``text`` with LaTeX's special characters escaped: ``& % $ # _ { } ~ ^ \``.

    Example:
        >>> latex_escape("f1_macro & 5%")
        'f1\\_macro \\& 5\\%'
    """
    return text.translate(_LATEX_TABLE)


def _fixed(value: float, digits: int) -> str:
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text  # no "-0.000"


def _best_rows(values: Sequence[float | None], higher_is_better: bool, digits: int) -> set[int]:
    """Rows holding the best value as displayed (ties all win); none with fewer than two."""
    shown = [(i, round(v, digits)) for i, v in enumerate(values) if v is not None]
    if len(shown) < 2:
        return set()
    best = max(v for _, v in shown) if higher_is_better else min(v for _, v in shown)
    return {i for i, v in shown if v == best}


def latex_table(result: RunResult, *, digits: int = 3) -> str:
    r"""A booktabs ``tabular``: models as rows, measurements as columns.

    Each cell holds the value and its interval, ``0.812 [0.701, 0.893]``. In each column, the
    best value as displayed (the highest, or the lowest when ``higher_is_better`` is false) is set
    in bold, ties included; a column with fewer than two values has no bold. A measurement
    without a value shows ``--``; one whose aggregate failed shows ``error``. Every text is
    escaped with :func:`latex_escape`; the table needs ``\usepackage{booktabs}``.
    """
    models = list(result.by_model)
    labels: list[str] = []
    for measurements in result.by_model.values():
        for m in measurements.values():
            if m.metric not in labels:
                labels.append(m.metric)
    cells = [[""] * len(labels) for _ in models]
    for col, label in enumerate(labels):
        column = [_find(result.by_model[model], label) for model in models]
        values = [m.value if m is not None and m.error is None else None for m in column]
        higher = next((m.higher_is_better for m in column if m is not None), True)
        best = _best_rows(values, higher, digits)
        for row, found in enumerate(column):
            if found is None:
                continue
            m = found
            if m.error is not None:
                cells[row][col] = r"\textit{error}"
            elif m.value is None:
                cells[row][col] = "--"
            else:
                text = _fixed(m.value, digits)
                if row in best:
                    text = rf"\textbf{{{text}}}"
                if m.ci_low is not None and m.ci_high is not None:
                    text += f" [{_fixed(m.ci_low, digits)}, {_fixed(m.ci_high, digits)}]"
                cells[row][col] = text
    confidence = float(result.config.get("confidence", 0.95))
    lines = [
        f"% itemscore results for suite {result.suite_id}: value [interval] at "
        f"{confidence * 100:g}% confidence; best per column in bold.",
        r"\begin{tabular}{l" + "r" * len(labels) + "}",
        r"\toprule",
        " & ".join(["Model", *(latex_escape(label) for label in labels)]) + r" \\",
        r"\midrule",
    ]
    for model, row_cells in zip(models, cells):
        name = latex_escape(model) if model is not None else r"\textit{all items}"
        lines.append(" & ".join([name, *row_cells]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)


def _find(measurements: Mapping[str, Measurement], label: str) -> Measurement | None:
    for m in measurements.values():
        if m.metric == label:
            return m
    return None


# -- items and spreadsheets ----------------------------------------------------------------


def items_jsonl(result: RunResult) -> Iterator[str]:
    """The lines of ``items.jsonl``: every item with every score, one JSON object a line."""
    dumps = json.dumps
    for item in result.items:
        yield dumps(item_to_dict(item), ensure_ascii=False, allow_nan=False) + "\n"


def _xlsx_available() -> bool:
    try:
        import openpyxl  # noqa: F401
    except ImportError:
        return False
    return True


def write_xlsx(result: RunResult, path: Path) -> None:
    """Write ``results.xlsx``: a Summary sheet (as ``summary.csv``) and an Outputs sheet.

    The Outputs sheet has one row per item: id, model, group, input, output, the expected
    answers (joined with `` | ``), then each metric's value and status. Texts that would read
    as formulas stay texts; characters Excel refuses are dropped and cells are cut at Excel's
    limit of 32,767 characters.

    Raises:
        ConfigError: openpyxl is not installed.
    """
    try:
        from openpyxl import Workbook
        from openpyxl.cell import WriteOnlyCell
        from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
    except ImportError:
        raise ConfigError(
            f"Writing results.xlsx needs openpyxl, which is not installed. Install it with: "
            f"{_XLSX_HINT}"
        ) from None
    book = Workbook(write_only=True)

    def cells(sheet: Any, values: Iterable[Any]) -> list[Any]:
        out: list[Any] = []
        for value in values:
            if isinstance(value, str):
                value = ILLEGAL_CHARACTERS_RE.sub("", value)[:_XLSX_MAX_CELL]
                if value.startswith("="):
                    cell = WriteOnlyCell(sheet, value=value)
                    cell.data_type = "s"  # a text, not a formula
                    out.append(cell)
                    continue
            out.append(value)
        return out

    summary = book.create_sheet("Summary")
    summary.append(list(SUMMARY_COLUMNS))
    for row in summary_rows(result):
        summary.append(cells(summary, [row[c] for c in SUMMARY_COLUMNS]))
    outputs = book.create_sheet("Outputs")
    labels = list(result.labels)
    for item in result.items:
        for label in item.scores:
            if label not in labels:
                labels.append(label)
    header = ["id", "model", "group", "input", "output", "expected"]
    for label in labels:
        header += [label, f"{label} status"]
    outputs.append(header)
    for item in result.items:
        values: list[Any] = [
            item.id,
            item.model,
            item.group,
            item.input,
            item.output,
            " | ".join(item.expected) if item.expected else None,
        ]
        for label in labels:
            score = item.scores.get(label)
            values += [score.value, score.status.value] if score else [None, None]
        outputs.append(cells(outputs, values))
    book.save(path)


# -- formats and export --------------------------------------------------------------------


def _write_text(path: Path, chunks: Iterable[str]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.writelines(chunks)


_BUILTIN_WRITERS: dict[str, Writer] = {
    "json": lambda result, path: _write_text(path, [result_json(result)]),
    "items": lambda result, path: _write_text(path, items_jsonl(result)),
    "csv": lambda result, path: _write_text(path, [summary_csv(result)]),
    "tex": lambda result, path: _write_text(path, [latex_table(result)]),
    "xlsx": write_xlsx,
}


def result_json(result: RunResult) -> str:
    """The text :meth:`RunResult.save_json` writes."""
    return json.dumps(result.to_dict(), ensure_ascii=False, allow_nan=False)


def _plugin_formats() -> dict[str, tuple[str, Writer]]:
    """Formats from the ``itemscore_export_formats`` hook: name -> (plugin, writer)."""
    from ._plugins import plugin_manager

    found: dict[str, tuple[str, Writer]] = {}
    for impl in plugin_manager().hook.itemscore_export_formats.get_hookimpls():
        try:
            formats = cast("Mapping[str, Any]", impl.function() or {})
            entries = list(formats.items())
        except Exception as exc:
            raise ItemscoreError(
                f"Plugin {impl.plugin_name!r} failed in itemscore_export_formats: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        for name, writer in entries:
            if not isinstance(name, str) or not name or not callable(writer):
                raise ItemscoreError(
                    f"Plugin {impl.plugin_name!r} returned the export format {name!r} -> "
                    f"{writer!r}; formats must map a non-empty name to a callable."
                )
            clash = found.get(name)
            if name in BUILTIN_FORMATS or f"results.{name}" in BUILTIN_FORMATS.values():
                raise ItemscoreError(
                    f"Plugin {impl.plugin_name!r} adds the export format {name!r}, which is "
                    "built in; ask its author to rename it."
                )
            if clash is not None:
                raise ItemscoreError(
                    f"The export format {name!r} is added twice: by plugin {clash[0]!r} and "
                    f"by plugin {impl.plugin_name!r}."
                )
            found[name] = (impl.plugin_name, writer)
    return found


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
    out (with one notice) when openpyxl is not installed.

    Raises:
        ConfigError: an unknown format, or ``xlsx`` asked for without openpyxl.
    """
    plugins = _plugin_formats()
    known = [*BUILTIN_FORMATS, *plugins]
    chosen: list[str]
    if formats is None:
        chosen = list(known)
        if not _xlsx_available():
            chosen.remove("xlsx")
            _notice_once(
                "xlsx",
                f"Note: results.xlsx is not written because openpyxl is not installed "
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
                f"The report format 'xlsx' needs openpyxl, which is not installed. Install it "
                f"with: {_XLSX_HINT}"
            )
    out: list[tuple[str, str, Writer]] = []
    for name in chosen:
        if name in BUILTIN_FORMATS:
            out.append((name, BUILTIN_FORMATS[name], _BUILTIN_WRITERS[name]))
        else:
            out.append((name, f"results.{name}", plugins[name][1]))
    return out


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


def _file_mode() -> int:
    """The mode a plainly created file gets: 0o666 less the process umask."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def export(
    result: RunResult,
    out_dir: str | os.PathLike[str],
    formats: Iterable[str] | None = None,
    *,
    notice: Callable[[str], None] | None = None,
) -> list[Path]:
    """Write the reports of ``result`` into ``out_dir``, all or nothing.

    Args:
        result: The run.
        out_dir: The folder (created when missing). Existing reports of the same names are
            replaced.
        formats: Names of :data:`BUILTIN_FORMATS` or plugin formats; ``None``: all of them
            (``xlsx`` only when openpyxl is installed).
        notice: Where to send the one-time note about a skipped format (default: stderr).

    Returns:
        The paths written, in format order.

    Raises:
        ConfigError: an unknown format or a bad folder, before anything is written.
        Exception: whatever a writer raised; then no report file and no temporary file remain.
    """
    path = check_out_dir(out_dir)
    plan = resolve_formats(formats, notice=notice)
    created = [p for p in (path, *path.parents) if not p.exists()]  # deepest first
    path.mkdir(parents=True, exist_ok=True)
    staged: list[tuple[Path, Path]] = []
    try:
        for _, filename, writer in plan:
            fd, name = tempfile.mkstemp(prefix=".itemscore-", suffix=f"-{filename}", dir=path)
            os.close(fd)
            staged.append((Path(name), path / filename))
            writer(result, Path(name))
            os.chmod(name, _file_mode())  # mkstemp makes files private; reports are not
        for tmp, final in staged:
            os.replace(tmp, final)
    except BaseException:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        for folder in created:
            try:
                folder.rmdir()
            except OSError:
                break  # not empty after all: something else wrote there meanwhile
        raise
    return [final for _, final in staged]
