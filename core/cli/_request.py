"""``RunRequest``: one run as the command line was asked for it, and where each part came from.

The command line and a YAML configuration both fill a request; the pipeline turns it into the
same plan and settings the Python API uses. Each metric and setting keeps the place it was
written (``-m 'f1:averge=x'``, ``run.yaml:4:5``), so that an error the library raises about
it is reported there, found from the exception's data, never from its text.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TypeVar

import attrs

from itemscore._exceptions import (
    ItemscoreError,
    MetricCollisionError,
    OptionError,
    UnknownMetricError,
)
from itemscore._spec import MetricSpec

__all__ = ["MetricEntry", "RunRequest", "located"]

E = TypeVar("E", bound=ItemscoreError)


@attrs.frozen
class MetricEntry:
    """One metric asked for, and where."""

    #: The metric as asked for.
    spec: MetricSpec
    #: Where the whole entry was written: ``-m 'f1'`` or ``run.yaml:3:5``.
    where: str
    #: Where its name was written, when that is more precise (a YAML ``name:`` value).
    name_where: str | None = None
    #: Where each option was written, by option name (YAML keys).
    option_where: Mapping[str, str] = attrs.field(factory=dict)

    def place(self, exc: BaseException) -> str:
        """The most precise place for an error the library raised about this entry."""
        if (
            isinstance(exc, OptionError)
            and exc.option is not None
            and exc.option in self.option_where
        ):
            return self.option_where[exc.option]
        if isinstance(exc, (UnknownMetricError, MetricCollisionError)) and self.name_where:
            return self.name_where
        return self.where


@attrs.define
class RunRequest:
    """Everything a scoring run needs, from the command line and/or a configuration file."""

    #: The configuration file the request was read from, if any.
    config: Path | None = None
    #: The data file (the first, when several are given); a URL stays a string.
    data: Path | str | None = None
    #: Every data file, folder or glob given, when there are several (one source).
    data_files: list[Path | str] = attrs.field(factory=list)
    #: How messages call the data file (as the user wrote it).
    data_name: str = ""
    #: Its format; ``None``: from the extension.
    format: str | None = None
    #: Role -> column.
    columns: dict[str, str] = attrs.field(factory=dict)
    #: Options of the format's reader (``--read-option`` and ``read_options:``), as texts.
    read_options: dict[str, str] = attrs.field(factory=dict)
    #: Split ``expected`` at this text.
    answer_delimiter: str | None = None
    #: An output cell equal to this is a failed request.
    null_output: str | None = None
    #: Suite id, or an installed suite's id or entry-point name.
    suite: str | None = None
    #: Metrics asked for (``-m`` and ``metrics:``).
    metrics: list[MetricEntry] = attrs.field(factory=list)
    #: More metrics (``--extra-metrics`` and ``extra_metrics:``).
    extra_metrics: list[MetricEntry] = attrs.field(factory=list)
    #: Interval method.
    ci_method: str | None = None
    #: Confidence level.
    confidence: float | None = None
    #: Seed of anything random.
    seed: int | None = None
    #: Worker processes (``"auto"``: the cores); ``None``: serial.
    workers: int | str | None = None
    #: Where shards are scored (``--executor``); ``None``: from ``workers`` or ``clusters``.
    executor: str | None = None
    #: The cluster named by address, by executor (``--dask ADDRESS``, ``ray: ADDRESS``...).
    clusters: dict[str, str] = attrs.field(factory=dict)
    #: How often a shard whose worker was lost is tried again; ``None``: the library's default.
    retries: int | None = None
    #: Seconds one metric may take on one item (``--item-timeout``).
    item_timeout: float | str | None = None
    #: Memory each worker process may use (``--worker-memory``), as written.
    worker_memory: int | str | None = None
    #: Seconds the whole run may take (``--deadline``).
    deadline: float | None = None
    #: How each question's attempts are reduced (``--reduce`` and ``reduce:``), as written.
    reduce: str | list[str] | None = None
    #: Folder for the reports.
    out: Path | None = None
    #: Report formats; ``None``: all.
    reports: list[str] | None = None
    #: Add per-group rows to the tables (and check that there are groups).
    by_group: bool = False
    #: Read only the first this many rows of the data (``--limit``); ``None``: every row.
    limit: int | None = None
    #: The settings taken from the user's defaults file (no warning that one changed nothing).
    user_defaults: set[str] = attrs.field(factory=set)
    #: What the run as a whole came from, for errors that belong to no single entry.
    source: str = "the command line"
    #: Where each setting was written (``confidence`` -> ``run.yaml:7:13``).
    setting_where: dict[str, str] = attrs.field(factory=dict)

    def setting_place(self, key: str, flag: str) -> str:
        """Where setting ``key`` came from: its YAML position, else the flag."""
        return self.setting_where.get(key, flag)


def located(exc: E, place: str) -> E:
    """A copy of ``exc`` (same type and data) whose message starts with ``place``."""
    copy = type(exc).__new__(type(exc))
    copy.__dict__.update(exc.__dict__)
    copy.args = (f"{place}: {exc}",)
    copy.__cause__ = exc
    return copy
