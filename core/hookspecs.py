"""Hook specifications: the extension points of itemscore that are not metrics.

A plugin is a module (or object) with functions named like these hooks and marked with
``itemscore.hookimpl``; declare it in the entry-point group ``itemscore.plugins``::

    [project.entry-points."itemscore.plugins"]
    my_plugin = "my_pkg.plugin"

Hooks that no plugin implements cost nothing per item: the runner asks once per run whether
``itemscore_item_scored`` has implementations and skips the call when it has none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from ._metric import Metric
    from ._records import ItemResult, ItemScore
    from ._result import RunResult

__all__ = ["ExportWriter", "Reducer", "hookimpl", "hookspec"]

#: Marks a hook specification (used by itemscore itself).
hookspec = pluggy.HookspecMarker("itemscore")
#: Marks a hook implementation in a plugin.
hookimpl = pluggy.HookimplMarker("itemscore")

#: An export writer: ``writer(result, path)`` writes ``result`` to ``path``.
ExportWriter = Callable[["RunResult", Path], None]
#: A reducer: ``reducer(attempts)`` (or ``reducer(attempts, k)`` for a name with ``K``) returns
#: one entry per question: a float score, or the index of the attempt that stands for it.
Reducer = Callable[..., Any]


@hookspec
def itemscore_add_metrics() -> Sequence[type[Metric]]:  # type: ignore[empty-body]
    """Return metric classes to make available by id, without an entry point each.

    Called once when the metric registry is built. The classes are registered as if their
    module declared them in ``itemscore.metrics``; ids must not collide with other metrics.
    """


@hookspec
def itemscore_run_started(suite_id: str, config: Mapping[str, Any], n_items: int) -> None:
    """Called once when a run starts, after the configuration was checked.

    Args:
        suite_id: The suite being scored.
        config: The run's configuration, as it will be saved in ``RunResult.config``.
        n_items: How many items will be scored.
    """


@hookspec
def itemscore_item_scored(item: ItemResult, score: ItemScore) -> None:
    """Called after each metric scored each item (the score already isolated).

    Only called when some plugin implements it. Exceptions raised here are not isolated:
    they stop the run, since a broken observer should not go unnoticed.

    Args:
        item: The item as given to the metric (without the run's scores).
        score: The metric's verdict, labelled with the metric's label.
    """


@hookspec
def itemscore_run_finished(result: RunResult) -> None:
    """Called once with the finished ``RunResult``, before it is returned."""


@hookspec
def itemscore_export_formats() -> Mapping[str, ExportWriter]:  # type: ignore[empty-body]
    """Return extra report formats by name: ``{"parquet": write_parquet}``.

    ``--out DIR`` on the command line (every format, or those named with ``--report NAME``)
    and ``itemscore.export(result, dir, formats=...)`` call ``writer(result, path)``;
    the file becomes ``DIR/results.<name>`` once every report has been written. A name is
    letters, digits and ``_ . + -`` (no path separator, no ``..``); another is an error that
    names the plugin.
    """


@hookspec
def itemscore_reducers() -> Mapping[str, Reducer]:  # type: ignore[empty-body]
    """Return extra reducers by name: ``{"best_of@K": best_of}``.

    A reducer turns one metric's scores of a question's attempts into one score for the
    question (see ``docs/attempts.md``). It is called with an
    :class:`~itemscore._reducers.Attempts` (``offsets``, ``ok``, ``values``, ``sizes``,
    ``successes``, ``question``, ``position``, ``credit``, ``answers()``), and with the number
    ``k`` when its name ends in ``@K``, ``^K`` or ``:K`` (``--reduce best_of@3`` calls
    ``best_of(attempts, 3)``; a question with fewer than ``k`` scored attempts is an error
    for it). It returns one entry per question: a float array of scores (``NaN``: no score,
    an error), or an integer array of the attempt standing for each question (``-1``: none).

    A name is letters, digits and ``_``, optionally ending in ``@K``, ``^K`` or ``:K``; a name
    that is built in or added by another plugin is an error that names both.
    """
