"""``itemscore compare``: paired comparison of the models of saved results, on the command line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from .._exceptions import ConfigError, InputError
from ._app import echo_err, load_run, terminal_text

__all__ = ["compare_command"]


class _BadInput(click.ClickException):
    """Bad input or options: exit code 2, one message naming the file, nothing written."""

    exit_code = 2

    def show(self, file: object = None) -> None:
        click.echo(f"Error: {terminal_text(self.format_message())}", err=True)


def run_labels(first: Path, second: Path) -> tuple[str, str]:
    """Short labels of two results files: the folder of a ``results.json``, else the stem.

    When those agree (``runs/a/out/results.json`` and ``runs/b/out/results.json``), the
    folders above are added until they differ: ``a/out`` and ``b/out``. The same file twice
    is ``a`` and ``b``.
    """

    def parts(path: Path) -> list[str]:
        # Absolute, not resolved: the results.json of --out is a link into a hidden folder.
        whole = Path(os.path.abspath(path))
        folders = [p for p in whole.parent.parts if p != whole.anchor]
        return folders if path.name == "results.json" else [*folders, path.stem]

    a, b = parts(first), parts(second)
    for depth in range(1, max(len(a), len(b)) + 1):
        label_a, label_b = "/".join(a[-depth:]), "/".join(b[-depth:])
        if label_a != label_b:
            return label_a or "a", label_b or "b"
    return "a", "b"


def _labels_option(value: str | None, results: Path, other: Path | None) -> tuple[str, str]:
    """``--label A,B`` checked, or the labels of the two files."""
    if value is None:
        return run_labels(results, other) if other is not None else ("a", "b")
    if other is None:
        raise _BadInput(
            f"--label ({value!r}) names two runs, and only {results} is given: give the second "
            "results file, or leave --label out."
        )
    pair = [x.strip() for x in value.split(",")]
    if len(pair) != 2 or not all(pair) or pair[0] == pair[1]:
        raise _BadInput(
            f"--label ({value!r}) must be two different names separated by a comma, the "
            f"baseline's first: e.g. --label v1,v2 for {results} and {other}."
        )
    return pair[0], pair[1]


@click.command("compare")
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument(
    "other", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option("--baseline", metavar="MODEL", help="Compare every other model to MODEL.")
@click.option(
    "-m",
    "--metric",
    "labels",
    multiple=True,
    metavar="LABEL",
    help="A metric label to compare (repeatable); default: every label both sides have.",
)
@click.option(
    "--adjust",
    type=click.Choice(["holm", "bh", "none"]),
    default="holm",
    show_default=True,
    help="Multiple-comparison adjustment of the p-values.",
)
@click.option(
    "--by-group", is_flag=True, help="Add one row per group to the table and comparison.tex."
)
@click.option(
    "--allow-different-inputs",
    is_flag=True,
    help="Pair items by id even when their input or expected differs between the sides.",
)
@click.option(
    "--label",
    "label",
    metavar="A,B",
    help="Names of the two runs in the table and reports (default: the folder of each "
    "results.json); a model both runs hold is shown as 'model @ A' and 'model @ B'.",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list instead of a table.")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write comparison.json, .csv, .tex and a forest plot (.png, .svg) into OUT.",
)
def compare_command(
    results: Path,
    other: Path | None,
    baseline: str | None,
    labels: tuple[str, ...],
    adjust: str,
    by_group: bool,
    allow_different_inputs: bool,
    label: str | None,
    as_json: bool,
    out: Path | None,
) -> None:
    """Compare models on the items they share: difference, interval, p-value, power.

    RESULTS is a results.json; with OTHER, the models of RESULTS (baseline) are compared to
    those of OTHER. Ratio metrics use McNemar's exact test and Newcombe's interval, means the
    paired t, metrics with their own aggregate a seeded paired bootstrap.
    """
    from .._compare_out import comparison_table, plot_available, write_comparison
    from ..comparison import compare

    if out is not None and out.exists() and not out.is_dir():
        raise _BadInput(f"--out {out}: exists and is not a folder.")
    from .._terminal import make_console, progress_bar, progress_wanted

    runs = _labels_option(label, results, other)
    first = load_run(results, _BadInput)
    second = load_run(other, _BadInput) if other is not None else None
    try:
        with progress_bar(progress_wanted(json_output=as_json), "comparing") as bar:
            if bar is not None:  # the paired tests of a large run take a while: say so
                bar.stage("comparing the models (paired tests)")
            comparisons = compare(
                first,
                second,
                baseline=baseline,
                metrics=list(labels) or None,
                adjust=adjust,
                allow_different_inputs=allow_different_inputs,
                names=(str(results), str(other if other is not None else results)),
                labels=runs if other is not None else None,
            )
    except InputError as exc:  # names the file at fault itself
        raise _BadInput(str(exc)) from exc
    except ConfigError as exc:
        names = f"{results}" + (f", {other}" if other is not None else "")
        raise _BadInput(f"{names}: {exc}") from exc
    if by_group and comparisons and not any(c.groups for c in comparisons):
        names = f"{results}" + (f" and {other}" if other is not None else "")
        echo_err(
            f"Warning: --by-group adds one row per group, but the items of {names} have no "
            "group, so the table has none. Give the items groups when scoring (--map "
            "group=COLUMN), or leave --by-group out."
        )
    written = []
    if out is not None:
        from ..summary._summary import display_name

        sources = [str(results)] + ([str(other)] if other is not None else [])
        display = {c.metric: display_name(first, c.metric) for c in comparisons}
        written = write_comparison(
            comparisons, out, sources, groups=by_group,
            runs=runs if other is not None else None, names=display,
        )  # fmt: skip
    if as_json:
        click.echo(json.dumps([c.to_dict() for c in comparisons], indent=1, allow_nan=False))
        return
    console = make_console()
    console.print(comparison_table(comparisons, groups=by_group, width=console.width))
    if other is not None:  # which file is which side: the labels name the runs
        click.echo(
            terminal_text(
                f"Runs: {runs[0]} = {results} (baseline), {runs[1]} = {other} (candidate)."
            )
        )
    if written:
        echo_err(f"Wrote {', '.join(p.name for p in written)} to {out}.")
        if not plot_available():
            from .._extras import install_hint

            echo_err(f"No forest plot: it needs matplotlib ({install_hint('matplotlib')}).")
