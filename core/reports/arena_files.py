"""Arena files: ``arena.csv``, ``arena.md``, ``win_rates.csv`` and the plot ``arena.png``/``.svg``.

The renderings of one :class:`~itemscore.Arena`, best model first:

- ``arena.csv``: one row per model with the fields of :class:`~itemscore.Rating`, then the
  arena's ``confidence`` and ``method``; floats written exactly, an unbounded interval end
  empty.
- ``win_rates.csv``: the win-rate matrix: one row per model, one column per opponent (in
  rating order), each cell the share of their decided judgments the row's model won; empty
  where the two never met in a decided judgment, and on the diagonal.
- ``arena.md``: the ratings as a Markdown table (as ``leaderboard.md``), the notes -- how the
  ratings were made, the judge's position bias, the judges' agreement -- and the win rates
  as a second table. Text from the data is escaped with :func:`~.results_md.md_text`.
- the plot: each model's rating with its interval, best at the top, tie groups on
  alternately shaded bands, 1000 (the mean rating) dashed. Drawn with matplotlib's Agg
  backend, imported only when a plot is asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from ..display import _format
from ..display._csv import csv_text
from ..display._figure import figure_files
from ..display._text import one_line
from .leaderboard_files import TIE_NOTE, range_text, ranked_markdown
from .results_md import md_text

if TYPE_CHECKING:
    from .._arena import Arena
    from .._leaderboard import LeaderboardRow

__all__ = [
    "COLUMNS",
    "FILENAMES",
    "arena_csv",
    "arena_markdown",
    "arena_notes",
    "arena_plot",
    "arena_rows",
    "ranked_rows",
    "win_rates_csv",
]

#: The files of one arena (the plot's two only when matplotlib is installed).
FILENAMES = ("arena.csv", "arena.md", "win_rates.csv", "arena.png", "arena.svg")
#: The columns of ``arena.csv``: a rating's fields, then the arena's.
COLUMNS = (
    "model",
    "rating",
    "ci_low",
    "ci_high",
    "rank",
    "rank_low",
    "rank_high",
    "tie_group",
    "confidence",
    "method",
)
#: The mean rating, the Elo scale's centre.
CENTRE = 1000.0
#: Shades of the tie-group bands of the plot, alternating.
_BANDS = ("#f0f0f0", "#ffffff")


def ranked_rows(arena: Arena) -> tuple[LeaderboardRow, ...]:
    """The ratings as leaderboard rows (value = rating; ``n`` 0), for the shared renderings."""
    from .._leaderboard import LeaderboardRow

    return tuple(
        LeaderboardRow(
            model=r.model, value=r.rating, ci_low=r.ci_low, ci_high=r.ci_high, n=0,
            rank=r.rank, rank_low=r.rank_low, rank_high=r.rank_high, tie_group=r.tie_group,
        )
        for r in arena.ratings.values()
    )  # fmt: skip


def arena_rows(arena: Arena) -> list[dict[str, Any]]:
    """One flat row per model, best first: :data:`COLUMNS`."""
    shared = {"confidence": arena.confidence, "method": arena.method}
    return [{**attrs.asdict(r), **shared} for r in arena.ratings.values()]


def arena_csv(arena: Arena) -> str:
    """The text of ``arena.csv`` (the one CSV writer: exact floats, inert cells)."""
    return csv_text(COLUMNS, ([row[name] for name in COLUMNS] for row in arena_rows(arena)))


def win_rates_csv(arena: Arena) -> str:
    """The text of ``win_rates.csv``: rows won against columns, models in rating order."""
    models = list(arena.ratings)
    rows = (
        [model, *(arena.win_rates.get(model, {}).get(other) for other in models)]
        for model in models
    )
    return csv_text(["model", *models], rows)


def _share(x: float | None, low: float | None = None, high: float | None = None) -> str:
    d = _format.decimals_for(x, low, high) if low is not None else 3
    value = _format.format_value(x, d)
    interval = _format.format_interval(low, high, d)
    return f"{value} {interval}".strip()


def arena_notes(arena: Arena) -> list[str]:
    """What the tables do not show: how the ratings were made, the position bias, the judges.

    Plain sentences; names from the data (judges) are left for the caller to escape.
    """
    level = f"{100 * arena.confidence:g}%"
    k = len(arena.ratings)
    units = (
        f"prompts ({arena.n_ids} ids, every judgment of one id together)"
        if arena.n_ids is not None
        else "judgments"
    )
    failed = (
        f"; {arena.n_failed} resamples without a finite fit count against every bound"
        if arena.n_failed
        else ""
    )
    how = (
        "simultaneous over every pair (max-t)"
        if arena.method == "max-t"
        else "pointwise, pair by pair (method none)"
    )
    notes = [
        f"{arena.n_judgments} judgments ({arena.n_ties} ties) among {k} models. Ratings: "
        "Bradley-Terry by maximum likelihood, a tie half a win to each side, on the Elo scale "
        f"(mean 1000). Intervals: {level} bootstrap percentile, {arena.n_resamples} resamples "
        f"of {units}, seed {arena.seed}{failed}. Rank ranges at {level}, {how}.",
    ]
    bias = arena.position_bias
    if bias.value is None:
        notes.append("Position bias: no decided judgment, so none is measured.")
    else:
        if bias.low is not None and bias.low > 0.5:
            verdict = "the judge favours the answer shown first"
        elif bias.high is not None and bias.high < 0.5:
            verdict = "the judge favours the answer shown second"
        else:
            verdict = f"no position bias shown at {level} (a fair judge is near 0.5)"
        notes.append(
            f"Position bias: side a (shown first) won {_share(bias.value, bias.low, bias.high)} "
            f"of {bias.n} decided judgments: {verdict}."
        )
    if arena.by_judge or arena.judge_errors:
        judges = sorted({*arena.by_judge, *arena.judge_errors})
        alpha = (
            "not measured (it needs ids judged by several judges)"
            if arena.judge_agreement is None
            else f"{arena.judge_agreement:.3f}"
        )
        notes.append(
            f"Judges: {', '.join(judges)}; agreement (Krippendorff's alpha, nominal): {alpha}."
        )
        for judge, why in arena.judge_errors.items():
            notes.append(f"Judge {judge} has no ratings alone: {why}")
    return notes


def arena_markdown(arena: Arena) -> str:
    """The text of ``arena.md``: ratings, notes, the judges' ratings and the win rates."""
    lines = ranked_markdown(ranked_rows(arena), "Rating", arena.confidence)
    lines += ["", " ".join(md_text(n) for n in arena_notes(arena)) + f" {TIE_NOTE}"]
    models = list(arena.ratings)
    if arena.by_judge:
        judges = list(arena.by_judge)
        lines += ["", "Ratings by judge:", ""]
        lines.append("|Model|" + "|".join(md_text(j) for j in judges) + "|")
        lines.append("|---|" + "--:|" * len(judges))
        for model in models:
            cells = []
            for judge in judges:
                rating = arena.by_judge[judge].ratings.get(model)
                cells.append("" if rating is None else _format.fixed(rating.rating, 0))
            lines.append(f"|{md_text(model)}|" + "|".join(cells) + "|")
    lines += ["", "Win rates (row against column, decided judgments):", ""]
    lines.append("|Model|" + "|".join(md_text(m) for m in models) + "|")
    lines.append("|---|" + "--:|" * len(models))
    for model in models:
        rates = arena.win_rates.get(model, {})
        cells = [_share(rates[o]) if o in rates else "" for o in models]
        lines.append(f"|{md_text(model)}|" + "|".join(cells) + "|")
    return "\n".join(lines) + "\n"


def arena_plot(arena: Arena) -> dict[str, bytes]:
    """Ratings with their intervals, best at the top, as ``{"png": ..., "svg": ...}``.

    One row per model, named with its rank and rank range: a dot at its rating, a bar for its
    interval (an arrow to the edge for an unbounded end); tie groups on alternately shaded
    bands, labelled at the right; the mean rating dashed. Same data, same bytes: no
    timestamps in the files.
    """
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    ratings = list(arena.ratings.values())
    k = max(1, len(ratings))
    fig, ax = plt.subplots(figsize=(7.0, 1.2 + 0.38 * k))
    try:
        ends = [x for r in ratings for x in (r.ci_low, r.ci_high, r.rating) if x is not None]
        lo, hi = (min(ends), max(ends)) if ends else (CENTRE - 100, CENTRE + 100)
        pad = max(10.0, 0.08 * (hi - lo))
        left, right = lo - pad, hi + pad
        ys = {r.model: k - 1 - i for i, r in enumerate(ratings)}
        groups: dict[int, list[float]] = {}
        for r in ratings:
            groups.setdefault(r.tie_group, []).append(ys[r.model])
        for n, (group, rows) in enumerate(groups.items()):
            ax.axhspan(min(rows) - 0.5, max(rows) + 0.5, color=_BANDS[n % 2], zorder=0)
            ax.text(
                1.01, (min(rows) + max(rows)) / 2, f"group {group}", fontsize=7, va="center",
                color="#555555", transform=ax.get_yaxis_transform(),
            )  # fmt: skip
        for r in ratings:
            y = ys[r.model]
            a = r.ci_low if r.ci_low is not None else left
            b = r.ci_high if r.ci_high is not None else right
            ax.plot([a, b], [y, y], color="#0072B2", linewidth=2, zorder=2)
            ax.plot([r.rating], [y], "o", color="#0072B2", zorder=3)
            if r.ci_low is None:
                ax.plot([left], [y], "<", color="#0072B2", zorder=3)
            if r.ci_high is None:
                ax.plot([right], [y], ">", color="#0072B2", zorder=3)
        ax.axvline(CENTRE, color="black", linewidth=0.8, linestyle="--", zorder=1)
        ax.set_xlim(left, right)
        ax.set_ylim(-0.5, k - 0.5)
        ax.set_yticks([ys[r.model] for r in ratings])
        # A "$" would start matplotlib's math text, which can fail to parse: keep it text.
        names = [
            f"{r.rank}. {one_line(r.model)} ({range_text(r)})".replace("$", r"\$") for r in ratings
        ]
        ax.set_yticklabels(names, fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
        level = f"{100 * arena.confidence:g}%"
        ax.set_xlabel(
            f"Bradley-Terry rating (Elo scale, mean 1000), higher is better; {level} "
            "bootstrap intervals; shaded bands: tie groups",
            fontsize=8,
        )
        fig.tight_layout()
        return figure_files(fig, "itemscore-arena")
    finally:
        plt.close(fig)
