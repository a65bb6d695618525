"""``itemscore view``: a local viewer of report sets, on 127.0.0.1 only.

:func:`make_server` finds the report sets in the given folders (:mod:`._runs`) and makes the
standard library's threading HTTP server for them (:mod:`._server`); :func:`serve` runs it
until Ctrl-C. The viewer lists the runs with their scores and provenance (:mod:`._pages`),
serves each run's report.html paging its items from ``items.parquet`` a row group at a time
(:mod:`._store`, :mod:`._query`), compares two runs with :func:`itemscore.compare`, and lists
the items that changed between two runs and the questions a run's models disagree on
(:mod:`._views`).
"""

from __future__ import annotations

from ._runs import MAX_DEPTH, NoReportSet, find_runs
from ._server import HOST, Viewer, make_server, serve

__all__ = ["HOST", "MAX_DEPTH", "NoReportSet", "Viewer", "find_runs", "make_server", "serve"]
