"""The leaderboard section of report.html (and so of the viewer's run page).

Per metric a leaderboard can rank (:func:`~.leaderboard_files.run_boards`): the models best
first, each with its value and its own interval, its rank, the ranks it could hold as text
(``2-4``, with an en dash) and as a bar on an axis of ranks 1 to K, and its tie group. A tie
group is one ``<tbody>``: groups are shaded alternately, separated by a rule, and the group's
number stands in a cell spanning its rows, marked by a bar down its side like a bracket. A
line under the metric's name says how the ranges were decided (shared questions,
confidence, max-t or pointwise). Every text from the data goes through
:func:`~._html_markup.esc`.

Each row carries what it shows as data attributes (``data-model``, ``data-rank``,
``data-rank-low``, ``data-rank-high``, ``data-tie-group``), so that a script or a test reads
the board back without parsing the cells' text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from ._html_compare import direction_badge
from ._html_markup import esc
from ._html_numbers import column_decimals, interval, number
from ._html_svg import MODEL_COLOURS, svg_tag
from .leaderboard_files import TIE_NOTE, board_note, range_text

if TYPE_CHECKING:
    from .._leaderboard import Leaderboard, LeaderboardRow

__all__ = ["leaderboard_section", "rank_axis", "rank_bar"]

#: Width of a rank bar and of the axis above the bars, in pixels.
BAR_WIDTH = 240
#: Room left and right of rank 1 and rank K, so that their marks are whole.
_PAD = 12
_GRID, _MUTED = "#d5d9e0", "#666"


def _x(rank: float, k: int) -> float:
    """Where rank ``rank`` of ``k`` sits on the bar (rank 1 at the left)."""
    return _PAD + (rank - 1) / max(k - 1, 1) * (BAR_WIDTH - 2 * _PAD)


def _labelled(k: int) -> list[int]:
    """The ranks the axis writes: every one up to 12 models, else 1, K and round steps."""
    if k <= 12:
        return list(range(1, k + 1))
    step = 5 if k <= 60 else 10
    shown = [1, *range(step, k, step), k]
    if k - shown[-2] < step / 2:  # a step just before K would overprint it
        shown.pop(-2)
    return shown


def rank_axis(k: int) -> str:
    """The axis over the bars: ranks 1 to ``k``, best at the left."""
    parts = [svg_tag(BAR_WIDTH, 16, f"ranks 1 to {k}, best at the left", "rank-axis")]
    for rank in _labelled(k):
        parts.append(
            f'<text x="{_x(rank, k):.1f}" y="12" text-anchor="middle" fill="{_MUTED}">{rank}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def rank_bar(row: LeaderboardRow, k: int, colour: str) -> str:
    """A row's rank range as a bar from ``rank_low`` to ``rank_high``, its rank as a dot.

    Faint ticks mark every rank (up to 40 models), so that a range reads as a count of places.
    """
    label = f"{row.model}: rank {row.rank}, could hold ranks {row.rank_low} to {row.rank_high}"
    parts = [
        svg_tag(BAR_WIDTH, 16, label, "rank-bar"),
        f'<line x1="{_PAD}" y1="8" x2="{BAR_WIDTH - _PAD}" y2="8" stroke="{_GRID}"/>',
    ]
    if k <= 40:
        parts += [
            f'<line x1="{_x(r, k):.1f}" y1="5" x2="{_x(r, k):.1f}" y2="11" stroke="{_GRID}"/>'
            for r in range(1, k + 1)
        ]
    low, high = _x(row.rank_low, k), _x(row.rank_high, k)
    parts.append(
        f'<rect x="{low - 6:.1f}" y="3" width="{high - low + 12:.1f}" height="10" rx="5" '
        f'fill="{colour}" fill-opacity="0.28" stroke="{colour}" stroke-width="1.5">'
        f"<title>{esc(row.model)}: ranks {range_text(row)} at this confidence</title></rect>"
    )
    parts.append(
        f'<circle cx="{_x(row.rank, k):.1f}" cy="8" r="3.5" fill="{colour}">'
        f"<title>{esc(row.model)}: rank {row.rank}</title></circle></svg>"
    )
    return "".join(parts)


def _board(label: str, board: Leaderboard, colours: Mapping[str | None, str], name: str) -> str:
    k = len(board.rows)
    level = f"{100 * board.confidence:g}%"
    d = column_decimals((r.value, r.ci_low, r.ci_high) for r in board.rows)
    out = [
        f'<div class="board" data-label="{esc(label)}"><h3>{esc(name)}'
        + (f' <span class="meta">({esc(label)})</span>' if name != label else "")
        + f"{direction_badge(board.higher_is_better)}</h3>"
        f'<p class="meta board-note">{esc(board_note(board))}.</p>'
        '<div class="scroll"><table class="leaderboard"><thead><tr><th>tie group</th>'
        '<th data-type="num">rank</th><th>model</th><th data-type="num">value</th>'
        f'<th data-type="num">{level} interval</th><th>rank range</th>'
        f'<th class="ranks">ranks it could hold{rank_axis(k)}</th></tr></thead>'
    ]
    groups: dict[int, list[LeaderboardRow]] = {}
    for row in board.rows:
        groups.setdefault(row.tie_group, []).append(row)
    for index, (group, rows) in enumerate(groups.items()):
        shade = " shade" if index % 2 else ""
        out.append(f'<tbody class="tie-group{shade}" data-tie-group="{group}">')
        for position, row in enumerate(rows):
            colour = colours.get(row.model, MODEL_COLOURS[0])
            first = (
                f'<td class="tie" rowspan="{len(rows)}" title="tie group {group}: '
                f"{len(rows)} model{'s' if len(rows) != 1 else ''} that cannot be told apart "
                f'from its first">{group}</td>'
                if position == 0
                else ""
            )
            out.append(
                f'<tr data-model="{esc(row.model)}" data-rank="{row.rank}" '
                f'data-rank-low="{row.rank_low}" data-rank-high="{row.rank_high}" '
                f'data-tie-group="{row.tie_group}">{first}'
                f'<td class="num">{row.rank}</td>'
                f'<td class="model"><span class="swatch" style="background:{colour}"></span>'
                f"{esc(row.model)}</td>"
                f'<td class="num">{number(row.value, row.ci_low, row.ci_high, d)}</td>'
                f'<td class="num">{interval(row.value, row.ci_low, row.ci_high, d)}</td>'
                f'<td class="num range">{range_text(row)}</td>'
                f"<td>{rank_bar(row, k, colour)}</td></tr>"
            )
        out.append("</tbody>")
    out.append("</table></div></div>")
    return "".join(out)


def leaderboard_section(
    boards: Sequence[tuple[str, Leaderboard]],
    skipped: Sequence[tuple[str, str]],
    *,
    colours: Mapping[str | None, str],
    name_of: Callable[[str], str],
) -> str:
    """The section: one board per metric ranked, then the metrics left out and why.

    Args:
        boards: ``(label, board)`` per metric ranked, in the run's order.
        skipped: ``(label, reason)`` per metric left out.
        colours: The models' colours (a model's bar and dot take its colour).
        name_of: How a metric label is shown.
    """
    out = [
        '<section id="leaderboard"><h2>Leaderboard</h2>'
        '<p class="meta">Per metric, the models best first on the questions every model '
        "answered, each with its value and its own interval. A bar spans the ranks the model "
        "could hold (its rank range), the dot marks its rank; the ranges hold for every model "
        "at once with max-t. Shaded bands with the group's number at the left are tie groups. "
        f"{esc(TIE_NOTE)}</p>"
    ]
    out += [_board(label, board, colours, name_of(label)) for label, board in boards]
    if not boards:
        out.append('<p class="meta">No metric of this run could be ranked.</p>')
    out += [
        f'<p class="meta not-ranked" data-label="{esc(label)}">Not ranked: '
        f"<span>{esc(name_of(label))}</span>: {esc(why)}</p>"
        for label, why in skipped
    ]
    out.append("</section>")
    return "".join(out)
