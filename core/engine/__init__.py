"""The run engine, in the order an item goes through it.

- :mod:`._shard` scores a shard of items with every metric, each item isolated;
- :mod:`._tasks` is what a worker runs on items given from Python: a shard into Arrow score
  columns; :mod:`._part_tasks` what it runs on a part of a file: read it, then score it;
- :mod:`._files` plans a file's parts and runs the two passes over them;
- :mod:`._dispatch` runs the tasks on the executor, lost workers tried again;
- :mod:`._table` (with :mod:`._store`, the Parquet side, and :mod:`._keys`, the key columns
  and where the items are) holds the scores and items as columns: the run table;
- :mod:`._questions` reduces a question's attempts; :mod:`._tallies` sums a label's tally by
  model and group over the parts and makes the ratio and mean measurements from it;
  :mod:`._measure` turns the table into measurements (:mod:`._measurement`: what every
  measurement records, for both).

:mod:`itemscore._run` (``score``, ``run``, ``rescore``) puts these in order, above the engine.
This folder may import the layers below it (records, plugins, settings, inputs, executors),
never results, comparisons, reports or the command line.
"""
