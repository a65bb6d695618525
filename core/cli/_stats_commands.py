"""``itemscore diagnose`` and ``itemscore gate``: what the items say, and a CI gate."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from itemscore._exceptions import ConfigError

from ._app import BadInput, load_run

__all__ = ["diagnose_command", "gate_command"]


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


@click.command("diagnose")
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-m", "--metric", metavar="LABEL", help="The metric label (default: the first).")
@click.option(
    "--top", default=20, show_default=True, type=click.IntRange(min=0),
    help="Items shown per table (0: the counts only).",
)  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the whole diagnosis as JSON.")
def diagnose_command(results: Path, metric: str | None, top: int, as_json: bool) -> None:
    """Item difficulty, discrimination and flags, and signal-to-noise per group.

    RESULTS is a results.json of several models scored on the same items.
    """
    from itemscore._diagnose import diagnose

    result = load_run(results)
    try:
        diagnosis = diagnose(result, metric)
    except ConfigError as exc:
        raise BadInput(f"{results}: {exc}") from exc
    if as_json:
        click.echo(json.dumps(diagnosis.to_dict(), indent=1, allow_nan=False))
        return
    o = diagnosis.overall
    click.echo(
        f"{diagnosis.metric}: {len(diagnosis.models)} models, {o.n_items} items; "
        f"signal {_fmt(o.signal)}, noise {_fmt(o.noise)}, SNR {_fmt(o.snr, 1)}"
    )
    for flag, title in (("label_error", "Suspected label errors"), ("saturated", "Saturated"),
                        ("never_solved", "Never solved")):  # fmt: skip
        flagged = diagnosis.flagged(flag)
        click.echo(f"\n{title}: {len(flagged)} items")
        for item in flagged[:top]:
            extra = ""
            if flag == "label_error":
                extra = (
                    f"  models agree on {item.suspected_answer!r} "
                    f"(score {item.label_error_score:.2f})"
                )
            click.echo(f"  {item.id}  difficulty {item.difficulty:.2f}{extra}")
    if diagnosis.groups:
        click.echo("\nNoisy subtasks (lowest signal-to-noise first):")
        for g in diagnosis.groups[:top]:
            click.echo(f"  {g.group}  items {g.n_items}  SNR {_fmt(g.snr, 1)}  signal "
                       f"{_fmt(g.signal)}  noise {_fmt(g.noise)}")  # fmt: skip


@click.command("gate")
@click.argument("baseline", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("candidate", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--metric", "-m", "metric", required=True, metavar="LABEL", help="The metric.")
@click.option("--margin", required=True, type=float, help="How much worse is tolerated.")
@click.option("--confidence", default=0.95, show_default=True, type=float)
@click.option("--model", metavar="NAME", help="The model to gate, in runs that hold several.")
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON.")
def gate_command(
    baseline: Path,
    candidate: Path,
    metric: str,
    margin: float,
    confidence: float,
    model: str | None,
    as_json: bool,
) -> None:
    """Exit 0: CANDIDATE not worse than BASELINE by more than --margin; 1 worse; 3 unclear.

    An anytime-valid confidence sequence: re-run it as items arrive without inflating the
    error rate.
    """
    from itemscore._gate import gate

    first, second = load_run(baseline), load_run(candidate)
    try:
        result = gate(
            first,
            second,
            metric=metric,
            margin=margin,
            confidence=confidence,
            model=model,
            names=(str(baseline), str(candidate)),
        )
    except ConfigError as exc:  # an InputError names its file: the group reports it as is
        raise BadInput(f"{baseline}, {candidate}: {exc}") from exc
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=1, allow_nan=False))
    else:
        of = f" of {model}" if model is not None else ""
        click.echo(
            f"{result.verdict}: {metric}{of} gain {_fmt(result.gain, 4)} "
            f"[{_fmt(result.low, 4)}, {_fmt(result.high, 4)}] over {result.n_pairs} pairs, "
            f"margin {margin:g} ({result.method}, {100 * confidence:g}%)"
        )
        note = result.margin_note()
        if note is not None:
            click.echo(note)
    sys.exit(result.exit_code)
