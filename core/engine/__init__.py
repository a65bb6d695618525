"""The run engine, in the order an item goes through it.

- :mod:`._shard` scores a shard of items with every metric, each item isolated;
- :mod:`._tasks` is what a worker runs: a shard into Arrow score columns;
- :mod:`._dispatch` runs the tasks on the executor, lost workers tried again;
- :mod:`._scores` and :mod:`._table` hold the scores and items as columns: the run table;
- :mod:`._measure` turns the table into measurements.

:mod:`itemscore._run` (``score``, ``run``, ``rescore``) puts these in order, above the engine.
"""
