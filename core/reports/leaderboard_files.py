r"""Leaderboard files: ``leaderboard.csv``, ``leaderboard.md`` and ``leaderboard.tex``.

The three renderings of one :class:`~itemscore.Leaderboard`, best model first:

- ``leaderboard.csv``: one row per model with the fields of
  :class:`~itemscore.LeaderboardRow`, then how the board was made (``metric``,
  ``higher_is_better``, ``method``, ``confidence``, ``n_pairs``); floats written exactly.
- ``leaderboard.md``: a Markdown table in lm-eval's style -- rank, model, value, interval,
  rank range (``2-4``, with an en dash), tie group -- and a line saying how the ranges were
  decided. Text from the data is escaped as in ``results.md``
  (:func:`~itemscore.display._text.md_text`): no name can make HTML, a link or a new cell.
- ``leaderboard.tex``: a booktabs ``table`` that fits one column of a two-column article
  unscaled (the interval beside the value when that fits, below it otherwise, and long model
  names wrapped), a ``\midrule`` between tie groups, a one-sentence caption, a note and a
  label derived from the board. Text is escaped with :func:`~.table_tex.tex_text`; a minus is
  ``$-$``.

As a report format (``--report leaderboard``), :func:`write` ranks every metric of a run that
a leaderboard can rank and writes the three files of each into ``leaderboard/LABEL/``, with a
``README.md`` listing the boards and the metrics left out (and why).

:func:`run_boards` is the one place a run's boards are made, for every report that shows
them (these files, report.html's leaderboard section, the rank intervals of ``eee/``): once
per result, so that a report set ranks each metric once.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from ..display import _format
from ..display._csv import csv_text
from ..display._text import md_table, md_text, one_line
from ..summary._summary import confidence_of, labels_of
from ._files import open_report
from .table_tex import (
    CHAR_PT,
    COLUMN_PT,
    TABCOLSEP,
    estimate_width,
    latex_escape,
    scriptsize,
    stack_lines,
    table_label,
    tex_table,
    tex_text,
)

if TYPE_CHECKING:
    from .._leaderboard import Leaderboard, LeaderboardRow
    from .._result import RunResult

__all__ = [
    "COLUMNS",
    "FILENAMES",
    "FOLDER",
    "TIE_NOTE",
    "Ranked",
    "RunBoards",
    "board_note",
    "leaderboard_csv",
    "leaderboard_markdown",
    "leaderboard_rows",
    "leaderboard_tex",
    "leaderboard_texts",
    "range_text",
    "ranked_markdown",
    "run_boards",
    "write",
]

#: The folder the report format writes into the output folder.
FOLDER = "leaderboard"
#: The files of one leaderboard.
FILENAMES = ("leaderboard.csv", "leaderboard.md", "leaderboard.tex")
#: The columns of ``leaderboard.csv``: a row's fields, then the board's.
COLUMNS = (
    "model",
    "value",
    "ci_low",
    "ci_high",
    "n",
    "rank",
    "rank_low",
    "rank_high",
    "tie_group",
    "metric",
    "higher_is_better",
    "method",
    "confidence",
    "n_pairs",
)
#: Between the ends of a rank range (an en dash, as in print).
RANGE_DASH = "\u2013"
_FOLDER_UNSAFE = re.compile(r"[^A-Za-z0-9_.+-]+")


class Ranked(Protocol):
    """Anything with a rank range: a leaderboard row, an arena's rating."""

    @property
    def rank_low(self) -> int: ...  # noqa: D102 - the fields say it

    @property
    def rank_high(self) -> int: ...  # noqa: D102 - the fields say it


def range_text(row: Ranked, dash: str = RANGE_DASH) -> str:
    """A row's rank range, ``2-4`` with :data:`RANGE_DASH` (the ends equal too: ``1-1``)."""
    return f"{row.rank_low}{dash}{row.rank_high}"


def leaderboard_rows(board: Leaderboard) -> list[dict[str, Any]]:
    """One flat row per model, best first: :data:`COLUMNS`."""
    shared = {
        "metric": board.metric,
        "higher_is_better": board.higher_is_better,
        "method": board.method,
        "confidence": board.confidence,
        "n_pairs": board.n_pairs,
    }
    return [{**row.to_dict(), **shared} for row in board.rows]


def leaderboard_csv(board: Leaderboard) -> str:
    """The text of ``leaderboard.csv`` (the one CSV writer: exact floats, inert cells)."""
    return csv_text(COLUMNS, ([row[name] for name in COLUMNS] for row in leaderboard_rows(board)))


def board_note(board: Leaderboard) -> str:
    """How the board was made: shared questions, level, method, direction (no final stop)."""
    level = f"{100 * board.confidence:g}%"
    if board.method == "max-t":
        how = f"simultaneous over every pair (max-t, {board.n_resamples} bootstrap resamples"
        how += f", seed {board.seed})" if board.n_resamples else ")"
    else:
        how = "pointwise, pair by pair (method none)"
    left_out = (
        f" ({board.n_unpaired} more left out: not scored by every model)"
        if board.n_unpaired
        else ""
    )
    clusters = f" in {board.n_clusters} clusters" if board.n_clusters is not None else ""
    return (
        f"{board.n_pairs} shared questions{clusters}{left_out}; rank ranges at {level}, {how}; "
        f"{_format.direction(board.higher_is_better)}"
    )


#: What a tie group is, said under every table.
TIE_NOTE = (
    "A tie group holds the models that cannot be told apart from the group's first model "
    "(no claim that they are equal)."
)


def ranked_markdown(
    rows: Sequence[LeaderboardRow], value_header: str, confidence: float
) -> list[str]:
    """The lines of a Markdown table of ranked rows (a leaderboard's, an arena's).

    Args:
        rows: The rows, best first.
        value_header: The value column's header, escaped already.
        confidence: The level of the intervals.
    """
    d = _format.shared_decimals((r.value, r.ci_low, r.ci_high) for r in rows)
    level = f"{100 * confidence:g}%"
    header = ["Rank", "Model", value_header, f"{level} interval", "Rank range", "Tie group"]
    cells = [
        [
            str(row.rank),
            md_text(row.model),
            _format.format_value(row.value, d),
            md_text(_format.format_interval(row.ci_low, row.ci_high, d)),
            range_text(row),
            str(row.tie_group),
        ]
        for row in rows
    ]
    return md_table(header, "--:|---|--:|--:|:-:|--:", cells)


def leaderboard_markdown(board: Leaderboard) -> str:
    """The text of ``leaderboard.md``: the table, then how it was made."""
    arrow = _format.direction_arrow(board.higher_is_better)
    lines = ranked_markdown(board.rows, f"{md_text(board.metric)} {arrow}", board.confidence)
    note = f"{md_text(board_note(board))}. {TIE_NOTE}"
    return "\n".join(lines) + "\n\n" + note + "\n"


def _tex_number(text: str) -> str:
    """A number written by :mod:`._format` as LaTeX: ``[`` ``]`` braced, a minus as ``$-$``."""
    return latex_escape(text).replace("-", "$-$")


def _breakable(name: str, max_chars: int) -> str:
    r"""A model name for a wrapping column: escaped, with ``\allowbreak`` after ``- / _ . :``.

    A run of more than ``max_chars`` characters with no such place or space may also break
    every three characters (TeX breaks a line only where it must), so that no name runs past
    its column, whatever the widths of its letters.
    """
    text = one_line(name)
    pieces: list[str] = []
    for part in re.split(r"(?<=[-/_.: ])", text):
        if len(part) > max_chars:
            pieces += [part[i : i + 3] for i in range(0, len(part), 3)]
        elif part:
            pieces.append(part)
    return r"\allowbreak{}".join(latex_escape(p) for p in pieces)


def leaderboard_tex(board: Leaderboard, *, suite: str | None = None) -> str:
    r"""The text of ``leaderboard.tex``: a booktabs ``table`` that fits a column unscaled.

    Columns: rank, model, value with its interval, rank range. The interval is beside the
    value when the table then fits a two-column article's ``\columnwidth`` (219 pt, the
    narrowest common one), else below it in small type; when even that is too wide, the model
    column becomes a paragraph column whose names wrap. Tie groups are separated by
    ``\midrule``.

    Args:
        board: The leaderboard.
        suite: The suite (benchmark) the board ranks on, named in the caption when given.
    """
    d = _format.shared_decimals((r.value, r.ci_low, r.ci_high) for r in board.rows)
    level = f"{100 * board.confidence:g}"
    metric = tex_text(board.metric)
    header_value = metric if len(one_line(board.metric)) <= 14 else "Value"
    header = ["Rank", "Model", header_value, "Ranks"]

    def body(stack: bool, name: Any) -> list[list[str]]:
        rows = []
        for row in board.rows:
            value = _tex_number(_format.format_value(row.value, d))
            interval = _tex_number(_format.format_interval(row.ci_low, row.ci_high, d))
            cell = (
                stack_lines([value, scriptsize(interval)])
                if stack
                else f"{value} {scriptsize(interval)}"
            )
            rows.append([str(row.rank), name(row.model), cell.strip(), range_text(row, "--")])
        return rows

    spec = "rlrr"
    wide = [header, *body(False, tex_text)]
    narrow = [header, *body(True, tex_text)]
    if estimate_width(wide) <= COLUMN_PT:
        rows = wide
    elif estimate_width(narrow) <= COLUMN_PT:
        rows = narrow
    else:
        # What the other columns leave for the names, which then wrap between words, after
        # - / _ . : or, in a long run without them, every few characters.
        others = estimate_width([[r[0], r[2], r[3]] for r in narrow])
        room = max(COLUMN_PT - others - 2 * TABCOLSEP, 8 * CHAR_PT["small"])
        chars = max(4, math.floor(room / CHAR_PT["small"]))
        rows = [header, *body(True, lambda m: r"\raggedright " + _breakable(m, chars))]
        spec = f"rp{{{room:.0f}pt}}rr"
    width = estimate_width(rows) if spec == "rlrr" else COLUMN_PT
    comments = [
        f"% itemscore leaderboard on {one_line(board.metric)}: rank, value with its "
        f"{level}% interval, the ranks each model could hold; rules separate tie groups.",
        r"% Needs \usepackage{booktabs}. "
        f"Estimated {width:.0f}pt wide: fits one column of a two-column article.",
    ]
    lines = [" & ".join(rows[0]) + r" \\"]
    previous = None
    for row, cells in zip(board.rows, rows[1:]):
        if previous is not None and row.tie_group != previous:
            lines.append(r"\midrule")
        previous = row.tie_group
        lines.append(" & ".join(cells) + r" \\")
    note = (
        f"Value: over the shared questions, with the model's own {level}% interval; Ranks: the "
        f"ranks the model could hold. {board_note(board)}. Rules separate tie groups. {TIE_NOTE}"
    )
    on = f" on {tex_text(suite)}" if suite else ""
    # The label comes from the suite, the metric and the models.
    parts = [suite or "", board.metric, *(row.model for row in board.rows)]
    label = table_label("leaderboard-", board.metric, "metric", parts)
    caption = f"Leaderboard by {metric}{on}, with rank ranges and tie groups."
    return tex_table(comments, "table", spec, lines, 1, tex_text(note), caption, label)


def leaderboard_texts(board: Leaderboard, *, suite: str | None = None) -> dict[str, str]:
    """The three files of ``board``: file name -> text."""
    return {
        "leaderboard.csv": leaderboard_csv(board),
        "leaderboard.md": leaderboard_markdown(board),
        "leaderboard.tex": leaderboard_tex(board, suite=suite),
    }


# --------------------------------------------------------------------------- report format


def _folder_names(labels: Sequence[str]) -> Iterator[tuple[str, str]]:
    """``(label, folder)``: each label as a plain folder name, unique among them."""
    taken: set[str] = set()
    for label in labels:
        base = _FOLDER_UNSAFE.sub("_", one_line(label)).strip("._")[:80] or "metric"
        name, k = base, 1
        while name.lower() in taken:  # folders differing in case collide on some systems
            k += 1
            name = f"{base}-{k}"
        taken.add(name.lower())
        yield label, name


@attrs.frozen
class RunBoards:
    """Every leaderboard of one run: the metrics ranked, and those left out with the reason."""

    #: ``(label, board)`` of each metric ranked, in the run's order of labels.
    boards: tuple[tuple[str, Leaderboard], ...]
    #: ``(label, reason)`` of each metric left out (all of them in a run of one model).
    skipped: tuple[tuple[str, str], ...]


def run_boards(result: RunResult) -> RunBoards:
    """The leaderboard of every metric of ``result`` that one can rank, made once per result.

    Each board is ``leaderboard(result, label)`` at the run's confidence level, max-t, seed 0
    (deterministic: the same boards as the command and the Python API with their defaults).
    A run of fewer than two models has none; a metric a leaderboard refuses (one with its own
    aggregate, such as f1) is left out with the refusal as the reason.
    """
    # report.html, eee/ and leaderboard/ of one report set each ask: ranked once per result.
    made: RunBoards | None = result._derived.get("boards")
    if made is not None:
        return made
    from .._exceptions import ConfigError
    from .._leaderboard import leaderboard

    boards: list[tuple[str, Leaderboard]] = []
    skipped: list[tuple[str, str]] = []
    several = len(result.by_model) >= 2
    for label in labels_of(result):
        if not several:
            skipped.append((label, "the run has one model; a leaderboard needs several."))
            continue
        try:
            boards.append((label, leaderboard(result, label, confidence=confidence_of(result))))
        except ConfigError as exc:
            skipped.append((label, str(exc)))
    made = result._derived["boards"] = RunBoards(boards=tuple(boards), skipped=tuple(skipped))
    return made


def write(result: RunResult, path: Path) -> None:
    """Write ``leaderboard/``: the three files of every metric a leaderboard can rank.

    Each metric's board (at the run's confidence level, max-t, seed 0; see
    :func:`run_boards`) goes into ``path/LABEL/``; ``path/README.md`` lists the boards and the
    metrics left out with the reason (a metric with its own aggregate, such as f1; a run of
    one model).
    """
    path.mkdir(parents=True, exist_ok=True)
    made = run_boards(result)
    boards = dict(made.boards)
    written: list[tuple[str, str, Leaderboard]] = []
    for label, folder in _folder_names(labels_of(result)):
        board = boards.get(label)
        if board is None:
            continue
        (path / folder).mkdir(exist_ok=True)
        for name, text in leaderboard_texts(board, suite=result.suite_id).items():
            with open_report(path / folder / name) as handle:
                handle.write(text)
        written.append((label, folder, board))
    skipped = list(made.skipped)
    lines = [f"# Leaderboards of {md_text(result.suite_id)}", ""]
    if written:
        lines.append("|Metric|Folder|Models|Shared questions|Tie groups|")
        lines.append("|---|---|--:|--:|--:|")
        for label, folder, board in written:
            groups = max((r.tie_group for r in board.rows), default=0)
            lines.append(
                f"|{md_text(label)}|{md_text(folder)}/|{len(board.rows)}|{board.n_pairs}|{groups}|"
            )
    else:
        lines.append("No metric of this run could be ranked.")
    if skipped:
        lines += ["", "Left out:", ""]
        lines += [f"- {md_text(label)}: {md_text(why)}" for label, why in skipped]
    with open_report(path / "README.md") as handle:
        handle.write("\n".join(lines) + "\n")
