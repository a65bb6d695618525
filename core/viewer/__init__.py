"""``itemscore view``: a local viewer of report sets, on 127.0.0.1 only.

:func:`make_server` finds the report sets in the given folders (:mod:`._runs`) and makes the
standard library's threading HTTP server for them (:mod:`._server`); :func:`serve` runs it
until Ctrl-C. The viewer lists the runs with their provenance (:mod:`._pages`), serves each
run's report.html paging its items from ``items.parquet`` (:mod:`._query`), and compares two
runs with :func:`itemscore.compare`.
"""

from __future__ import annotations

from ._runs import MAX_DEPTH, NoReportSet, find_runs
from ._server import HOST, Viewer, make_server, serve

__all__ = ["HOST", "MAX_DEPTH", "NoReportSet", "Viewer", "find_runs", "make_server", "serve"]
