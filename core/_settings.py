"""``RunSettings``: how one run is made, checked when it is built and saved with the result.

The settings travel as one typed record from ``score``/``run``/``rescore`` through the executors
to ``RunResult.settings`` and back from ``results.json``: nothing reads a run's settings from an
untyped dict by key. Each default is written once, in :mod:`itemscore._defaults`:
``RunSettings``, ``MetricContext`` and the signatures of ``score``, ``run`` and ``rescore`` read
the same constants. A setting refused names itself in the
error's ``setting`` (``ConfigError.setting``), so that the command line reports it where it
was written, the flag or the YAML key.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from ._defaults import (
    DEFAULT_CONCURRENCY,
    DEFAULT_CONFIDENCE,
    DEFAULT_EXECUTOR,
    DEFAULT_ITEM_TIMEOUT,
    DEFAULT_RETRIES,
    DEFAULT_SEED,
    DEFAULT_SUITE_ID,
)
from ._exceptions import ConfigError, did_you_mean, one_of

__all__ = [
    "RunSettings",
    "check_ci_method",
    "parse_memory",
    "refused",
    "resolve_workers",
]

#: The smallest worker memory limit taken: below it a worker cannot even start Python.
_MIN_MEMORY = 64 << 20
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
#: Words that switch a limit off.
_OFF = ("none", "off")


def refused(setting: str, message: str) -> ConfigError:
    """The error refusing ``setting``, which names it as data (``setting``) for callers."""
    error = ConfigError(message)
    error.at_entry(setting)
    return error


def check_ci_method(method: str) -> None:
    """Check that ``method`` is an interval method some aggregation supports.

    Raises:
        ConfigError: no aggregation knows ``method``.
    """
    from .stats._intervals import names

    known = dict.fromkeys((*names("ratio"), *names("mean")))
    if method not in known:
        raise refused(
            "ci_method",
            f"`ci_method` ({method!r}) must be one of {one_of(known)}."
            f"{did_you_mean(method, known)}",
        )


def resolve_workers(workers: int | str | None) -> int | None:
    """``workers`` as a number of processes: ``"auto"`` is the machine's cores.

    Raises:
        ConfigError: neither a positive integer, ``"auto"`` nor ``None``.
    """
    if workers is None:
        return None
    if workers == "auto":
        return os.cpu_count() or 1
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise refused("workers", f"`workers` ({workers!r}) must be a positive integer or 'auto'.")
    return workers


def _setting(check: Callable[[str, Any], None]) -> Any:
    """An attrs validator running ``check(name, value)``; a refusal names the field as data."""

    def validator(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        try:
            check(attribute.name, value)
        except ConfigError as exc:
            exc.at_entry(attribute.name)
            raise

    return validator


@_setting
def _check_confidence(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise ConfigError(f"`{name}` ({value!r}) must be in (0, 1).")


@_setting
def _check_ci_method(name: str, value: Any) -> None:
    if value is not None:
        if not isinstance(value, str):
            raise ConfigError(f"`{name}` ({value!r}) must be a string or None.")
        check_ci_method(value)


def _check_int(minimum: int, *, optional: bool = False) -> Any:
    @_setting
    def check(name: str, value: Any) -> None:
        if value is None and optional:
            return
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            what = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
            raise ConfigError(f"`{name}` ({value!r}) must be {what}.")

    return check


@_setting
def _check_str(name: str, value: Any) -> None:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"`{name}` ({value!r}) must be a non-empty string.")


@_setting
def _check_seconds(name: str, value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1e9:
        raise ConfigError(
            f"`{name}` ({value!r}) must be a number of seconds above 0, or None for no limit."
        )


@_setting
def _check_reduce(name: str, value: Any) -> None:
    from ._reducers import check_reduce

    check_reduce(value)


@_setting
def _check_seed(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"`{name}` ({value!r}) must be an integer.")


def _item_timeout_off(value: Any) -> Any:
    """``0``, ``"none"`` and ``"off"`` switch the item time limit off (``None``)."""
    if isinstance(value, str) and value.strip().lower() in _OFF:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0:
        return None
    return value


def parse_memory(value: Any) -> int | None:
    """A memory size as bytes: an integer, or a text like ``"2G"``, ``"512M"``, ``"1.5GiB"``.

    ``None``, ``0``, ``"none"`` and ``"off"`` mean no limit (``None``). Units are powers of
    1024 (K, M, G, T, with or without ``B``/``iB``).

    Raises:
        ConfigError: neither a size nor a word for no limit, or a size below 64 MiB.
    """
    if value is None:
        return None
    size: float = -1  # neither a number nor a size in text: refused below
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        size = value
    elif isinstance(value, str) and value.strip().lower() in _OFF:
        return None
    elif isinstance(value, str):
        text = value.strip().lower().removesuffix("ib").removesuffix("b").strip()
        unit = text[-1:] if text[-1:] in _UNITS else ""
        with contextlib.suppress(ValueError):
            size = float(text[: len(text) - len(unit)]) * _UNITS[unit]
    if size == 0:
        return None
    if not size >= _MIN_MEMORY or size != size or size == float("inf"):
        raise refused(
            "worker_memory",
            f"`worker_memory` ({value!r}) must be a size of at least 64M (bytes, or a number "
            "with K, M, G or T: '2G', '512M'), or 'none' for no limit.",
        )
    return int(size)


def _to_reduce(value: Any) -> Any:
    """A reducer name or a list of them as a tuple (the names are checked by the validator)."""
    if isinstance(value, list):
        return tuple(value)
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(","))
    return value


@attrs.frozen(kw_only=True)
class RunSettings:
    """How a run is made: its suite id, interval settings and executor.

    Every field is checked when the record is built, so a run with bad settings fails before
    any item is scored.

    Raises:
        ConfigError: a value out of range or of the wrong type.
    """

    #: Prefix of the measurement keys (``"<suite_id>.<label>"``).
    suite_id: str = attrs.field(default=DEFAULT_SUITE_ID, validator=_check_str)
    #: Confidence level of every interval, in (0, 1).
    confidence: float = attrs.field(default=DEFAULT_CONFIDENCE, validator=_check_confidence)
    #: Interval method asked for; ``None``: each metric's default.
    ci_method: str | None = attrs.field(default=None, validator=_check_ci_method)
    #: Seed for anything random (bootstrap intervals).
    seed: int = attrs.field(default=DEFAULT_SEED, validator=_check_seed)
    #: How many items an ``async def score_item`` may score at once (per process).
    concurrency: int = attrs.field(default=DEFAULT_CONCURRENCY, validator=_check_int(1))
    #: The executor's name: ``"serial"``, ``"process"``, ``"dask"`` or a custom one's name.
    executor: str = attrs.field(default=DEFAULT_EXECUTOR, validator=_check_str)
    #: Worker processes of a parallel executor; ``None``: serial, or the executor's default.
    workers: int | None = attrs.field(default=None, validator=_check_int(1, optional=True))
    #: How often a shard whose worker was lost is tried again before it is cut in two to find
    #: the item that kills its worker (which gets "worker lost: ..."). A shard that raised is
    #: not tried again: it would raise again.
    retries: int = attrs.field(default=DEFAULT_RETRIES, validator=_check_int(0))
    #: Seconds one metric may take on one item; past it the item is an ``error`` ("timed out
    #: after N s"). Default :data:`DEFAULT_ITEM_TIMEOUT`; ``None`` (or ``0``, ``"none"``): no
    #: limit.
    item_timeout: float | None = attrs.field(
        default=DEFAULT_ITEM_TIMEOUT, converter=_item_timeout_off, validator=_check_seconds
    )
    #: Seconds the whole run may take; shards not done by then get ``error`` scores.
    #: ``None``: no limit.
    deadline: float | None = attrs.field(default=None, validator=_check_seconds)
    #: Bytes of address space each worker process may use (``RLIMIT_AS``, where the platform
    #: has it); past it the metric's allocation fails (a ``MemoryError``: that item's
    #: ``error``). Never applied to the caller's own process. ``None``: no limit.
    worker_memory: int | None = attrs.field(default=None, converter=parse_memory)
    #: How each question's attempts are reduced to one score before aggregation, in order:
    #: the first reducer gives the measurement ``<suite>.<label>``, each further one
    #: ``<suite>.<label>[<reducer>]`` (``"mean"``, ``"max"``, ``"min"``, ``"majority"``,
    #: ``"maj@K"``, ``"pass@K"``, ``"pass^K"``, ``"at_least:K"`` or a plugin's).
    reduce: tuple[str, ...] = attrs.field(
        default=("mean",), converter=_to_reduce, validator=_check_reduce
    )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form saved in ``results.json``."""
        data = attrs.asdict(self)
        data["reduce"] = list(self.reduce)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunSettings:
        """Settings from their JSON form; keys this version does not know are ignored.

        Raises:
            ConfigError: a value out of range or of the wrong type.
        """
        known = {f.name for f in attrs.fields(cls)}
        given = {k: v for k, v in data.items() if k in known}
        reduce = given.pop("reduce", None)
        settings = cls(**given)
        if reduce is not None:
            from ._reducers import shape_of_reduce

            # Saved results load without the plugins that added their reducers: only the
            # shape is checked here; a run that reduces again looks the names up.
            object.__setattr__(settings, "reduce", shape_of_reduce(_to_reduce(reduce)))
        return settings
