"""The metrics reference, generated from the metric classes themselves.

``python -m itemscore._docgen docs/reference/metrics.md`` writes the page; with ``--check`` it
writes nothing and exits 1 when the page on disk differs from what the code says. Everything on
the page comes from the classes: ``description``, ``required_inputs``, ``higher_is_better``,
``aggregation`` (or the first line of an overridden ``aggregate``'s docstring) and the options
read from ``__init__`` with their descriptions from the class docstrings.

Only itemscore's own metrics are listed: they are loaded from an entry-point registry with
plugin autoloading off, and metrics added by hooks or ``@register`` are left out.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._exceptions import PluginLoadError
from ._metric import Metric
from ._options import OptionInfo
from ._registry import MetricInfo, Registry
from ._result import atomic_write_text

__all__ = ["main", "render_metric", "render_metrics_reference"]

_HEADER = """\
# Metrics reference

<!-- Generated from the metric classes by `python -m itemscore._docgen docs/reference/metrics.md`.
     Do not edit by hand: change the class, then regenerate. -->

Every built-in metric and its options. Run `itemscore metrics` to list the metrics of your
installation, plugins included.

Outputs and valid answers are normalised the same way before they are compared. A metric that
needs an answer key skips rows without one; a failed request (no output) is scored as wrong
unless `count_failed` is `false`, which leaves it out of every denominator.
"""

_AGGREGATIONS = {
    "ratio": "ratio (the share of ok among scored items, with a Wilson interval)",
    "mean": "mean (of the scored values, with a normal interval)",
    "geomean": "geomean (the geometric mean of the scored values)",
}


def yes_no(flag: bool) -> str:
    """``yes`` or ``no``."""
    return "yes" if flag else "no"


def _code(text: str) -> str:
    return f"`{text}`"


def render_default(value: Any) -> str:
    """An option's default as the reference shows it: ``true``, ``"macro"``, none."""
    if value is inspect.Parameter.empty:
        return "required"
    if value is None:
        return "none"
    if isinstance(value, bool):
        return _code("true" if value else "false")
    if isinstance(value, (str, int, float, list, tuple)):
        return _code(json.dumps(value, ensure_ascii=False))
    return _code(repr(value))


def _type_name(info: OptionInfo) -> str:
    """The option's type; " or none" is dropped when the default already says none."""
    name = info.type_name
    if info.default is None and name.endswith(" or none"):
        name = name[: -len(" or none")]
    return name


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def describe_aggregation(cls: type[Metric]) -> str:
    """How ``cls`` aggregates: its ``aggregation``, or the summary of its own ``aggregate``."""
    if cls.aggregate is not Metric.aggregate:
        doc = inspect.getdoc(cls.aggregate) or ""
        first = doc.splitlines()[0].rstrip(".") if doc else "the metric's own"
        return f"custom ({first})"
    return _AGGREGATIONS.get(cls.aggregation, cls.aggregation)


def render_metric(info: MetricInfo) -> str:
    """The section of one metric: heading, description, facts, options; ends in a newline."""
    cls = info.cls
    if cls is None:
        raise PluginLoadError(
            f"Metric {info.id!r} is not loaded ({info.error}); it cannot be listed.",
            entry_point=info.entry_point,
            distribution=info.distribution,
        )
    lines = [f"## {cls.metric_id}", "", cls.description or "(no description)", ""]
    needs_key = "expected" in cls.required_inputs
    lines += [
        f"Needs an answer key: {yes_no(needs_key)}. "
        f"Higher is better: {yes_no(cls.higher_is_better)}.",
        "",
        f"Aggregation: {describe_aggregation(cls)}.",
        "",
    ]
    if info.entry_point is not None:
        lines += [f"Entry point: `{info.entry_point}` (`{info.target}`).", ""]
    options = cls.options()
    if not options:
        lines += ["No options.", ""]
    else:
        lines += ["| Option | Type | Default | Description |", "| --- | --- | --- | --- |"]
        for name, option in options.items():
            cells = (
                _code(name),
                _type_name(option),
                render_default(option.default),
                option.description or "",
            )
            lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
        lines.append("")
    return "\n".join(lines)


def builtin_metrics() -> list[MetricInfo]:
    """itemscore's own metrics, sorted by id (no plugins, hooks or in-process registrations).

    Raises:
        PluginLoadError: a built-in metric cannot be loaded.
    """
    infos = [i for i in Registry(autoload=False).infos() if i.source == "entry-point"]
    broken = [i for i in infos if i.status == "broken"]
    if broken:
        details = "; ".join(f"{i.entry_point} ({i.target}): {i.error}" for i in broken)
        raise PluginLoadError(f"Built-in metrics cannot be loaded: {details}")
    return sorted(infos, key=lambda i: i.id or "")


def render_metrics_reference() -> str:
    """The whole metrics reference page, in Markdown, one section per built-in metric by id."""
    sections = [_HEADER] + [render_metric(info) for info in builtin_metrics()]
    return "\n".join(sections)


def main(argv: Sequence[str] | None = None) -> int:
    """Write the metrics reference to a file, or check that the file is up to date.

    Returns the exit code: 0 written or up to date, 1 out of date (with ``--check``).
    """
    parser = argparse.ArgumentParser(
        prog="python -m itemscore._docgen",
        description="Generate the metrics reference from the metric classes.",
    )
    parser.add_argument("path", type=Path, help="the Markdown file, e.g. docs/reference/metrics.md")
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 when the file differs from the generated text",
    )
    args = parser.parse_args(argv)
    path: Path = args.path
    text = render_metrics_reference()
    if args.check:
        try:
            current = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            current = None
        if current != text:
            state = "does not exist" if current is None else "is out of date"
            print(
                f"{path} {state}: regenerate it with `python -m itemscore._docgen {path}`.",
                file=sys.stderr,
            )
            return 1
        print(f"{path} is up to date.")
        return 0
    atomic_write_text(path, text)
    print(f"Wrote {path}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
