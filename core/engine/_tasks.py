"""What a worker runs: a shard of items scored into Arrow score columns.

Tasks are module-level functions so that any executor can send them to a worker by name; what
they return is plain Arrow arrays and small records, cheap to send back. The metrics' caches
(:attr:`~itemscore.MetricContext.memo`) live in the worker across the tasks of one run: a
task names its run by a token, and a worker keeps the memo of the last run it served only.
A task first puts the run's ``worker_memory`` limit on the process it runs in, unless that is
the caller's (:func:`limit_worker_memory`).
"""

from __future__ import annotations

import os
import pickle
import uuid
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

import attrs
import pyarrow as pa

from .._exceptions import ConfigError, ItemscoreError, describe_exception
from .._records import ItemResult
from ..inputs import collector_paused
from ._scores import unreadable, unreadable_reasons
from ._shard import Tick, score_shard

if TYPE_CHECKING:
    from .._plan import RunPlan
    from .._settings import RunSettings

__all__ = [
    "Job",
    "ShardFailed",
    "WorkerCannotLoad",
    "limit_worker_memory",
    "release_memo",
    "score_items_task",
]

_MEMO: dict[str, dict[str, Any]] = {}


@attrs.frozen
class ShardFailed:
    """A shard that raised outside any metric: its items get ``error`` scores with ``reason``."""

    #: "shard failed: <exception>".
    reason: str


class WorkerCannotLoad(ConfigError):
    """The run's metrics cannot be loaded where a task runs (a worker of another process)."""


@attrs.frozen
class Job:
    """What every task of one run shares: the plan, the settings, the run's token and limits.

    Sent to workers with the plan pickled by itemscore itself, so that a worker that cannot
    import a metric says so (a failure while the executor unpickles a task can leave a Dask
    worker unable to answer, and the run waiting).
    """

    #: The run's metrics, or their pickle (for tasks that leave this process).
    plan: RunPlan | bytes = attrs.field(repr=False)
    #: The run's settings.
    settings: RunSettings
    #: Names the run: the metrics' caches live under it in each process.
    token: str
    #: Labels whose ``extra`` texts are sent back; ``None``: every label's.
    keep_extras: frozenset[str] | None = None
    #: When the run must end (``time.time()``), or ``None``.
    deadline: float | None = None
    #: The process of the run's caller: a memory limit is never put on it.
    driver: int = attrs.field(factory=os.getpid)

    @classmethod
    def of(
        cls,
        plan: RunPlan,
        settings: RunSettings,
        *,
        portable: bool,
        keep_extras: Collection[str] | None = None,
        deadline: float | None = None,
    ) -> Job:
        """The job of one run; ``portable`` for tasks that leave this process."""
        blob = pickle.dumps(plan, protocol=pickle.HIGHEST_PROTOCOL) if portable else plan
        keep = None if keep_extras is None else frozenset(keep_extras)
        return cls(blob, settings, uuid.uuid4().hex, keep, deadline)

    def sends_extras(self, label: str) -> bool:
        """Whether ``label``'s ``extra`` mappings are encoded and sent back."""
        return self.keep_extras is None or label in self.keep_extras

    def memo(self) -> dict[str, Any]:
        """The metrics' caches of this run in this process."""
        memo = _MEMO.get(self.token)
        if memo is None:
            _MEMO.clear()  # a long-lived worker (Dask) keeps one run's caches, not every run's
            memo = _MEMO[self.token] = {}
        return memo

    def the_plan(self) -> RunPlan:
        """The plan, unpickled once per process.

        Raises:
            WorkerCannotLoad: a metric cannot be imported here.
        """
        if not isinstance(self.plan, bytes):
            return self.plan
        memo = self.memo()
        found = memo.get(_PLAN)
        if found is None:
            try:
                found = memo[_PLAN] = pickle.loads(self.plan)
            except Exception as exc:  # noqa: BLE001 - said in full below
                raise WorkerCannotLoad(
                    f"The run's metrics cannot be loaded in a worker process "
                    f"({describe_exception(exc, one_line=True)}). A worker imports each metric "
                    "by its module: install the package that defines it where the workers "
                    "run (for a Dask cluster, on every worker), or score with "
                    "executor='serial' or 'process'."
                ) from None
        plan: RunPlan = found
        return plan

    def score(
        self, items: Sequence[ItemResult], errors: pa.Array | None, tick: Tick | None = None
    ) -> dict[str, pa.StructArray]:
        """Every label's scores of ``items``: ``error`` where ``errors`` (unread rows) says why."""
        plan = self.the_plan()
        columns = score_shard(plan, items, self.settings, tick, self.memo(), self.deadline)
        arrays = {label: c.array(extras=self.sends_extras(label)) for label, c in columns.items()}
        if errors is not None and errors.null_count < len(errors):
            arrays = {label: unreadable(a, errors) for label, a in arrays.items()}
        return arrays


#: The key of the unpickled plan in a run's memo (labels are metric ids: no clash).
_PLAN = " plan"


#: The address-space limit this process had before a run's limit (``None``: none set here).
_OWN_LIMIT: list[tuple[int, int]] = []


def limit_worker_memory(job: Job) -> None:
    """Put the run's ``worker_memory`` on this worker process (``RLIMIT_AS``), or take it off.

    Only in a process other than the caller's, and where the platform has the limit. A
    worker that lives on after the run (Dask's) gets its own limit back for a run without
    one.
    """
    if os.getpid() == job.driver:
        return
    try:
        import resource
    except ImportError:  # Windows: no limit
        return
    wanted = job.settings.worker_memory
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if wanted is None:
        if _OWN_LIMIT and (soft, hard) != _OWN_LIMIT[0]:
            resource.setrlimit(resource.RLIMIT_AS, _OWN_LIMIT[0])
        return
    if not _OWN_LIMIT:
        _OWN_LIMIT.append((soft, hard))
    if hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)  # a process may not raise its hard limit
    if soft != wanted:
        resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))


def release_memo(token: str) -> None:
    """Drop the caches of run ``token`` in this process (the driver's, after a serial run)."""
    _MEMO.pop(token, None)


def score_items_task(
    job: Job, items: Sequence[ItemResult], tick: Tick | None = None
) -> dict[str, pa.StructArray] | ShardFailed:
    """Score a shard of items with every item-level metric of the job's plan.

    Args:
        job: The run's plan, settings and token.
        items: The shard.
        tick: Progress, for a task run in the caller's process.

    Returns:
        One Arrow score column per label, or :class:`ShardFailed`.

    Raises:
        WorkerCannotLoad: the metrics cannot be loaded in this process.
    """
    limit_worker_memory(job)
    try:
        # A shard's scores and extras are many acyclic objects: a full collection would walk
        # them, the caller's items and the run's caches for nothing (a quarter of a 100k-item
        # score(), benchmarks/bench_metrics.py). Cyclic garbage is collected after the shard.
        with collector_paused():
            # Documents read_items could not read, scored again: errors.
            return job.score(items, unreadable_reasons(items), tick)
    except ItemscoreError:
        raise
    except Exception as exc:  # noqa: BLE001 - a shard's failure costs its items only
        return ShardFailed(f"shard failed: {describe_exception(exc)}")
