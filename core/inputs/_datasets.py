"""A Ray Dataset or a Spark DataFrame handed to ``score``: written by the engine's own workers.

The engine writes the rows as Parquet into a private folder of this machine, as it writes any
dataset (``Dataset.write_parquet``, ``DataFrame.write.parquet``: its workers write, in the
dataset's order); the run then reads that folder as it reads any folder of parts, each worker
its own part, and removes it when it ends. The rows never pass through this process.

A cluster's workers do not write into this machine's folders, so a dataset of a cluster is
refused, with the way out: write it where every worker reads it (``s3://...``) and score that
path.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

from .._exceptions import ConfigError, InputError

__all__ = ["NAMES", "dataset_kind", "staged"]

#: What each kind is called in messages and in a result's provenance.
NAMES = {"ray": "Ray Dataset", "spark": "Spark DataFrame"}


def dataset_kind(data: object) -> str | None:
    """``"ray"`` for a Ray Dataset, ``"spark"`` for a Spark DataFrame, else ``None``.

    Asked without importing either: a caller holding one has imported its module already.
    """
    ray_data = sys.modules.get("ray.data")
    if ray_data is not None and isinstance(data, ray_data.Dataset):
        return "ray"
    sql = sys.modules.get("pyspark.sql")
    if sql is not None and isinstance(data, sql.DataFrame):
        return "spark"
    return None


@contextlib.contextmanager
def staged(data: Any, kind: str) -> Iterator[str]:
    """The folder of Parquet parts the engine wrote ``data`` to, removed when done.

    Raises:
        ConfigError: the data lives on a cluster whose workers cannot write here.
        InputError: the data holds no rows.
    """
    name = NAMES[kind]
    folder = tempfile.mkdtemp(prefix="itemscore-data-")  # 0700: the run's own
    try:
        target = os.path.join(folder, "parts")
        if kind == "ray":
            _write_ray(data, target)
        else:
            _write_spark(data, target)
        if not any(
            entry.endswith(".parquet") and not entry.startswith((".", "_"))
            for entry in (os.listdir(target) if os.path.isdir(target) else ())
        ):
            raise InputError(f"The {name} holds no rows to score.")
        yield target
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _refuse_cluster(name: str, where: str, how: str) -> ConfigError:
    return ConfigError(
        f"The {name} lives on {where}, whose workers cannot write into this machine's "
        f"folders for the run to read. Write it where every worker reads it ({how}) and score "
        "that path: itemscore.score('s3://bucket/outputs/', ...)."
    )


def _write_ray(data: Any, target: str) -> None:
    import ray.data

    ray_module: Any = sys.modules["ray"]  # ray.nodes() is untyped
    if ray_module.is_initialized():
        alive = [node for node in ray_module.nodes() if node.get("Alive")]
        if len(alive) > 1:
            raise _refuse_cluster(
                NAMES["ray"], f"a Ray cluster of {len(alive)} nodes", "ds.write_parquet(URL)"
            )
    options = ray.data.DataContext.get_current().execution_options
    before = options.preserve_order
    options.preserve_order = True  # the parts in the dataset's order, as they are numbered
    # Ray Data logs each write at INFO to the terminal; the run shows its own progress.
    loggers = [logging.getLogger(name) for name in ("ray", "ray.data")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(max(logger.getEffectiveLevel(), logging.ERROR))
    try:
        data.write_parquet(target)
    finally:
        options.preserve_order = before
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


def _write_spark(data: Any, target: str) -> None:
    try:
        master = str(data.sparkSession.sparkContext.master)
    except (AttributeError, NotImplementedError):  # Spark Connect: a server, wherever it is
        master = ""
    if not master.startswith("local"):
        where = f"the cluster {master}" if master else "a Spark Connect server"
        raise _refuse_cluster(NAMES["spark"], where, "df.write.parquet(URL)")
    data.write.parquet(target)
