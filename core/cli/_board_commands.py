"""``itemscore leaderboard`` and ``itemscore arena``: which ranks are real, on the command line."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from itemscore._exceptions import ConfigError, InputError

from ._app import BadInput, F, echo_err, load_run, stacked

if TYPE_CHECKING:
    from itemscore._leaderboard import Leaderboard, LeaderboardRow

__all__ = ["arena_command", "leaderboard_command", "leaderboard_table", "ranked_table"]


def _ranking_options(*, seed: str) -> Callable[[F], F]:
    """``--confidence``, ``--method`` and ``--seed``, which both rankings take."""
    return stacked((
        click.option(
            "--confidence", default=0.95, show_default=True, type=float,
            help="Confidence level of the intervals and rank ranges.",
        ),
        click.option(
            "--method", type=click.Choice(["max-t", "none"]), default="max-t",
            show_default=True,
            help="max-t: rank ranges hold for every model at once; none: pair by pair "
            "(pointwise).",
        ),
        click.option(
            "--seed", default=0, show_default=True, type=click.IntRange(min=0), help=seed
        ),
    ))  # fmt: skip


def _write(out: Path, files: dict[str, bytes]) -> list[Path]:
    """Write every file into ``out``, each atomically (rendered before the first is written)."""
    from itemscore._compare_out import _atomic_write_bytes

    return [_atomic_write_bytes(out / name, data) for name, data in files.items()]


def _print_ranking(
    as_json: bool,
    records: Iterable[Any],
    table: Callable[[int], Any],
    written: Sequence[Path],
    out: Path | None,
) -> None:
    """``records`` as a JSON list, or ``table(width)`` on the terminal; then what was written."""
    if as_json:
        click.echo(json.dumps([r.to_dict() for r in records], indent=1, allow_nan=False))
    else:
        from itemscore._terminal import make_console

        console = make_console()
        console.print(table(console.width))
    if written:
        echo_err(f"Wrote {', '.join(p.name for p in written)} to {out}.")


# --------------------------------------------------------------------------- leaderboard


def _named(message: str, paths: Sequence[Path]) -> str:
    """A message of :func:`~itemscore.leaderboard` with ``results[i]`` as the file's name."""
    if len(paths) == 1:
        return f"{paths[0]}: {message}"
    return re.sub(
        r"`results\[(\d+)\]`",
        lambda m: str(paths[int(m.group(1))]) if int(m.group(1)) < len(paths) else m.group(),
        message,
    )


def ranked_table(
    rows: Sequence[LeaderboardRow],
    *,
    title: str,
    caption: str,
    confidence: float,
    value_header: str = "value",
    width: int = 120,
) -> Any:
    """Ranked rows for the terminal, in the widest layout that fits ``width`` columns.

    ``wide``: rank, model, value, interval, rank range (``2-4``, with an en dash), tie group;
    ``narrow``: the interval under the value and the group under the rank range; narrower
    still, one block of lines per model. A dashed rule separates tie groups. Model names
    wrap; numbers are never cut.
    """
    from rich.box import Box
    from rich.console import Group
    from rich.text import Text

    from itemscore._terminal import _lines_text, _table, _width_of, safe_text
    from itemscore.display import _format
    from itemscore.reports.leaderboard_files import range_text

    level = f"{100 * confidence:g}%"
    d = _format.shared_decimals((r.value, r.ci_low, r.ci_high) for r in rows)
    ends = [i + 1 < len(rows) and rows[i + 1].tie_group != r.tie_group for i, r in enumerate(rows)]
    values = [_format.format_value(r.value, d) for r in rows]
    intervals = [_format.format_interval(r.ci_low, r.ci_high, d) for r in rows]

    # rich's SIMPLE_HEAD with a dashed rule where a section ends: between tie groups.
    box = Box("    \n    \n ── \n    \n ╌╌ \n    \n    \n    \n")
    wide = _table(
        title, caption,
        [("rank", "right"), ("model", "left"), (value_header, "right"),
         (f"{level} interval", "right"), ("rank range", "center"), ("tie group", "right")],
        wrap=1, box=box,
    )  # fmt: skip
    narrow = _table(
        title, caption,
        [("#", "right"), ("model", "left"), (value_header, "right"), ("ranks", "right")],
        wrap=1, box=box,
    )  # fmt: skip
    for row, end, value, interval in zip(rows, ends, values, intervals):
        wide.add_row(
            str(row.rank), safe_text(row.model), value, interval, range_text(row),
            str(row.tie_group), end_section=end,
        )  # fmt: skip
        narrow.add_row(
            str(row.rank), safe_text(row.model), f"{value}\n{interval}".strip(),
            f"{range_text(row)}\ngroup {row.tie_group}", end_section=end,
        )  # fmt: skip
    for table in (wide, narrow):
        if _width_of(table) <= width:
            return table
    lines: list[Any] = [safe_text(title)]
    for row, end, value, interval in zip(rows, ends, values, intervals):
        lines.append(safe_text(f"{row.rank}. {row.model}"))
        lines.append(Text(f"   {value} {interval}".rstrip()))
        lines.append(Text(f"   ranks {range_text(row)}, group {row.tie_group}"))
        if end:
            lines.append(Text("╌" * 3))
    lines.append(_lines_text(caption))
    return Group(*lines)


def leaderboard_table(board: Leaderboard, *, width: int = 120) -> Any:
    """The leaderboard for the terminal (:func:`ranked_table`); the caption says how it was made."""
    from itemscore.display import _format
    from itemscore.reports.leaderboard_files import TIE_NOTE, board_note

    arrow = _format.direction_arrow(board.higher_is_better)
    return ranked_table(
        board.rows,
        title=f"Leaderboard by {board.metric} {arrow}",
        caption=f"{board_note(board)}.\nDashed lines separate tie groups. {TIE_NOTE}",
        confidence=board.confidence,
        width=width,
    )


@click.command("leaderboard")
@click.argument(
    "results", nargs=-1, required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
)  # fmt: skip
@click.option(
    "-m", "--metric", "label", required=True, metavar="LABEL",
    help="The metric label to rank on (a share of right answers or a mean over questions).",
)  # fmt: skip
@_ranking_options(seed="Seed of the max-t bootstrap.")
@click.option(
    "--allow-different-inputs", is_flag=True,
    help="Pair items by id even when their input or expected differs between models.",
)  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list instead of a table.")
@click.option(
    "--out", type=click.Path(file_okay=False, path_type=Path),
    help="Write leaderboard.csv, leaderboard.md and leaderboard.tex into OUT.",
)  # fmt: skip
def leaderboard_command(
    results: tuple[Path, ...],
    label: str,
    confidence: float,
    method: str,
    seed: int,
    allow_different_inputs: bool,
    as_json: bool,
    out: Path | None,
) -> None:
    """Rank models with the ranks each could hold and the groups that cannot be told apart.

    RESULTS is a results.json of several models, or several results.json (each model named
    once). Models pair on the questions every model scored; rank ranges hold for every model
    at once (--method max-t, a seeded paired bootstrap) or pair by pair (--method none).
    """
    from itemscore._leaderboard import leaderboard
    from itemscore._terminal import progress_bar, progress_wanted

    runs = [load_run(path) for path in results]
    try:
        with progress_bar(progress_wanted(json_output=as_json), "ranking") as bar:
            if bar is not None:  # a large board's bootstrap takes a few seconds: say so
                bar.stage("ranking the models (paired bootstrap)")
            board = leaderboard(
                runs if len(runs) > 1 else runs[0],
                label,
                confidence=confidence,
                method=method,  # type: ignore[arg-type]
                seed=seed,
                allow_different_inputs=allow_different_inputs,
            )
    except ConfigError as exc:  # an InputError names its file: the group reports it as is
        raise BadInput(_named(str(exc), results)) from exc
    written: list[Path] = []
    if out is not None:
        from itemscore.reports.leaderboard_files import leaderboard_texts

        suites = {run.suite_id for run in runs}
        suite = suites.pop() if len(suites) == 1 else None
        texts = leaderboard_texts(board, suite=suite)
        written = _write(out, {name: text.encode("utf-8") for name, text in texts.items()})
    _print_ranking(as_json, board.rows, lambda w: leaderboard_table(board, width=w), written, out)


# --------------------------------------------------------------------------- arena

#: The roles a judgment's columns may be mapped to.
_ARENA_ROLES = ("model_a", "model_b", "winner", "id", "judge")


def _column_map(pairs: Sequence[str]) -> dict[str, str] | None:
    """``--map ROLE=COLUMN`` pairs as ``columns=`` of :func:`~itemscore.arena`."""
    mapping: dict[str, str] = {}
    for pair in pairs:
        role, sep, column = (x.strip() for x in pair.partition("="))
        if not sep or not role or not column:
            raise BadInput(
                f"--map {pair!r} must be ROLE=COLUMN, e.g. --map winner=verdict (roles: "
                f"{', '.join(_ARENA_ROLES)})."
            )
        if role in mapping:
            raise BadInput(
                f"--map names the role {role!r} twice ({mapping[role]!r} and {column!r}); map "
                "each role once."
            )
        mapping[role] = column
    return mapping or None


def arena_texts(arena: Any) -> dict[str, bytes]:
    """The files of ``--out``: arena.csv, arena.md, win_rates.csv, and the plot when possible."""
    from itemscore._compare_out import plot_available
    from itemscore.reports.arena_files import arena_csv, arena_markdown, arena_plot, win_rates_csv

    files = {
        "arena.csv": arena_csv(arena).encode("utf-8"),
        "arena.md": arena_markdown(arena).encode("utf-8"),
        "win_rates.csv": win_rates_csv(arena).encode("utf-8"),
    }
    if plot_available():
        for fmt, data in arena_plot(arena).items():
            files[f"arena.{fmt}"] = data
    return files


@click.command("arena")
@click.argument("judgments", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--map", "maps", multiple=True, metavar="ROLE=COLUMN",
    help=f"Read a role from another column (roles: {', '.join(_ARENA_ROLES)}).",
)  # fmt: skip
@_ranking_options(seed="Seed of the bootstrap.")
@click.option("--json", "as_json", is_flag=True, help="Print the ratings as a JSON list.")
@click.option(
    "--out", type=click.Path(file_okay=False, path_type=Path),
    help="Write arena.csv, arena.md, win_rates.csv and a plot (arena.png, arena.svg) into OUT.",
)  # fmt: skip
def arena_command(
    judgments: Path,
    maps: tuple[str, ...],
    confidence: float,
    method: str,
    seed: int,
    as_json: bool,
    out: Path | None,
) -> None:
    """Rate models from pairwise judgments: Bradley-Terry ratings, rank ranges, position bias.

    JUDGMENTS is a JSONL, CSV or Parquet file with one judgment a row: model_a (shown
    first), model_b, winner (a, b or tie), and optionally id (the prompt: the bootstrap then
    resamples prompts) and judge (each judge is then rated alone and their agreement given).
    """
    from itemscore._arena import arena
    from itemscore._terminal import progress_bar, progress_wanted

    columns = _column_map(maps)
    try:
        with progress_bar(progress_wanted(json_output=as_json), "rating") as bar:
            if bar is not None:  # the bootstrap of many judgments takes a few seconds: say so
                bar.stage("rating the models (bootstrap)")
            board = arena(judgments, columns, confidence=confidence, method=method, seed=seed)
    except (InputError, ConfigError, OSError) as exc:
        # The library's messages name its argument; on the command line that is --map.
        message = str(exc).replace("`columns=`", "--map ROLE=COLUMN").replace("`columns`", "--map")
        raise BadInput(message if str(judgments) in message else f"{judgments}: {message}") from exc
    written: list[Path] = []
    if out is not None:
        written = _write(out, arena_texts(board))

    def table(width: int) -> Any:
        from itemscore.reports.arena_files import arena_notes, ranked_rows
        from itemscore.reports.leaderboard_files import TIE_NOTE

        notes = "\n".join(arena_notes(board))
        return ranked_table(
            ranked_rows(board),
            title=f"Arena: {board.n_judgments} judgments among {len(board.ratings)} models",
            caption=f"{notes}\nDashed lines separate tie groups. {TIE_NOTE}",
            confidence=board.confidence,
            value_header="rating",
            width=width,
        )

    _print_ranking(as_json, board.ratings.values(), table, written, out)
    if written:
        from itemscore._compare_out import plot_available
        from itemscore._extras import install_hint

        if not plot_available():
            echo_err(f"No plot: it needs matplotlib ({install_hint('matplotlib')}).")
