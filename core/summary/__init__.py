"""A run summed up: the table of measurements the terminal, notebooks and reports all show.

- ``_summary``: the rows of the summary table (one per measurement and group), which cells
  are bold (a significant lead), the coverage notes and the display names of labels.
- ``_rows``: those rows laid out as cells with shared digits per block, for the terminal
  and the notebook.
- ``_notebook``: how a ``RunResult`` shows itself (``repr`` and the HTML a notebook renders).

A ``RunResult`` shows itself through this folder, so it sits beside ``_result``: it may import
the records, :mod:`itemscore.display`, :mod:`itemscore.aggregate`, the engine's constants and
:mod:`itemscore.comparison`, and names ``RunResult`` only as a type; never reports, the viewer
or the command line.
"""
