"""``spark``: shards as Spark jobs, ``mapInArrow`` over Arrow batches (the ``spark`` extra).

Pass a ``SparkSession`` as ``session=`` to score on it; without one, the session active in
this process is used (as ``SparkSession.builder.getOrCreate`` would), and when there is none
a local session of ``workers`` cores (``local[workers]``) is made for the run and stopped
after it: bound to 127.0.0.1, no web UI, no progress bar, its log kept to errors, its
Python workers run by this interpreter. A caller's session is never stopped.

Each task is one Spark job: a one-row DataFrame whose cell holds the pickled call, mapped by
``mapInArrow`` (:func:`itemscore.executors._batches.run_batches`) to a one-row answer that
is collected here. Up to ``workers`` jobs run at once, each launched from a thread of this
process under a job group of its own, so that the run stops its own jobs
(``cancelJobGroup``) — past its deadline, or interrupted — and no one else's. A task whose
Python worker died fails its job: the run tries it again itself, and cuts it in two when it
keeps killing its worker (see :mod:`itemscore.engine._dispatch`). A local session gives a
task up at its first failure (``local[N]``); a cluster retries it
``spark.task.maxFailures`` times first.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
import tempfile
import threading
import uuid
from collections.abc import Iterator
from typing import Any

from itemscore._exceptions import ConfigError

from ._batches import BatchExecutor, run_batches, unwarned
from ._engine import Cluster, Engine, needed

__all__ = ["check_options", "open_executor"]

#: How a run names the cluster it scores on.
CLUSTER = Cluster("session", "session")

#: The log configuration of a local session: errors only (Spark's default says WARN and
#: more on start-up). The shell's loggers (PySpark's is its gateway's) at the root's level:
#: Spark then keeps its "Setting default log level" unsaid.
_LOG4J = """\
rootLogger.level = error
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = error
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n
"""


def _import_pyspark() -> Any:
    return needed("spark", "pyspark.sql", "PySpark", extra="spark")


def check_options(workers: int | None, session: Any) -> None:
    """Check the Spark options before anything starts.

    Raises:
        ConfigError: PySpark is missing, ``session`` is no ``SparkSession``, or ``workers`` is
            given with a session (the caller's, or one active in this process).
    """
    sql = _import_pyspark()
    if session is not None and not isinstance(session, sql.SparkSession):
        raise ConfigError(
            f"`session` ({session!r}) must be a pyspark.sql.SparkSession. Leave it out to "
            "make a local one for the run."
        )
    given = session if session is not None else sql.SparkSession.getActiveSession()
    if given is not None and workers is not None:
        whose = "the `session` given" if session is not None else "the SparkSession active here"
        raise ConfigError(
            f"`workers` ({workers!r}) does not apply with a SparkSession: {whose} has the "
            "cores it has. Leave `workers` out"
            + (
                ", or leave `session` out to make a local one of that many cores."
                if session is not None
                else ", or stop that session (session.stop()) to make a local one."
            )
        )


@contextlib.contextmanager
def _environment(**values: str) -> Iterator[None]:
    """``values`` in ``os.environ`` (those not set already) while a local session starts."""
    added = [key for key in values if key not in os.environ]
    for key in added:
        os.environ[key] = values[key]
    try:
        yield
    finally:
        for key in added:
            os.environ.pop(key, None)


def _local_session(sql: Any, cores: int) -> Any:
    """A local session of ``cores`` cores, quiet, on 127.0.0.1 only."""
    with tempfile.NamedTemporaryFile(
        "w", prefix="itemscore-log4j2-", suffix=".properties", delete=False
    ) as log4j:
        log4j.write(_LOG4J)
    try:
        builder = (
            sql.SparkSession.builder.master(f"local[{cores}]")
            .appName("itemscore")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={log4j.name}")
        )
        # The Python workers run this interpreter (with itemscore and the run's metrics), not
        # whatever `python3` the PATH finds; the JVM binds where the driver does.
        with (
            _environment(PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1"),
            unwarned(FutureWarning, "pyspark"),  # pandas versions it has not tried
        ):
            session = builder.getOrCreate()
    finally:
        os.unlink(log4j.name)
    session.sparkContext.setLogLevel("ERROR")
    return session


class _Jobs:
    """Runs tasks as Spark jobs of ``session``, each in a job group of its own."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.prefix = f"itemscore-{uuid.uuid4().hex[:12]}"
        self.numbers = itertools.count()
        self.running: set[str] = set()
        self.lock = threading.Lock()

    def run(self, blob: bytes) -> bytes:
        """One task: a one-row DataFrame of the call, ``mapInArrow``, its row collected."""
        context = self.session.sparkContext
        group = f"{self.prefix}-{next(self.numbers)}"
        with self.lock:
            self.running.add(group)
        try:
            # Job groups are per thread: this thread's jobs are this task's.
            context.setJobGroup(group, "itemscore task", interruptOnCancel=True)
            # PySpark warns of pandas versions it has not tried, though mapInArrow never makes
            # a pandas object.
            with unwarned(FutureWarning, "pyspark"):
                calls = self.session.createDataFrame([(bytearray(blob),)], "call binary")
                answer = calls.mapInArrow(run_batches, "result binary")
            rows = answer.collect()
            return bytes(rows[0][0])
        finally:
            with self.lock:
                self.running.discard(group)

    def cancel(self) -> None:
        """Stop this run's jobs at once (their Python workers are interrupted)."""
        with self.lock:
            groups = list(self.running)
        context = self.session.sparkContext
        for group in groups:
            context.cancelJobGroup(group)


def open_executor(workers: int | None, session: Any) -> Engine:
    """Jobs on ``session``, on the session active here, or on a local one of ``workers`` cores."""
    sql = _import_pyspark()
    given = session if session is not None else sql.SparkSession.getActiveSession()
    own = given is None
    if own:
        given = _local_session(sql, workers or os.cpu_count() or 1)
    count = workers or max(1, int(given.sparkContext.defaultParallelism))
    jobs = _Jobs(given)

    def kill(executor: Any) -> None:
        jobs.cancel()

    def close(executor: Any) -> None:
        executor.shutdown(wait=False, cancel_futures=True)
        jobs.cancel()  # none at the end of a run; a run cut short leaves none behind
        if own:
            given.stop()

    return Engine(
        "spark",
        BatchExecutor(jobs.run, count, "spark"),
        workers=count,
        parallel=True,
        close=close,
        kill=kill,
    )
