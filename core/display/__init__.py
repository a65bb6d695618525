"""How numbers and text are shown: the one place that decides digits and escapes.

- ``_format``: a value's digits from its interval's width, intervals, p-values, signed
  differences, and the display names of interval methods (from the table in
  :mod:`itemscore.stats._intervals`).
- ``_text``: text from the data made safe to show (controls, bidirectional overrides, lone
  surrogates written as visible escapes), and Markdown table text and rows.
- ``_notebook``: how a ``Measurement`` and a ``Comparison`` show themselves (``repr`` and
  the HTML a notebook renders).
- ``_figure``: a matplotlib figure as PNG and SVG bytes that are the same for the same data
  (the forest plot, the arena plot).

The records, the terminal, every report and the viewer read these, so this folder sits low:
it may import :mod:`itemscore.stats` and :mod:`itemscore._exceptions`, and names records only
as types; never the records at run time, the engine, results, reports or the command line.
"""
