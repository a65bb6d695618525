"""``RunSettings``: how one run is made, checked when it is built and saved with the result.

The settings travel as one typed record from ``score``/``run``/``rescore`` through the executors
to ``RunResult.settings`` and back from ``results.json``: nothing reads a run's settings from an
untyped dict by key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import attrs

from ._exceptions import ConfigError, did_you_mean, one_of

__all__ = ["RunSettings", "check_ci_method", "resolve_workers"]


def check_ci_method(method: str, name: str = "`ci_method`") -> None:
    """Check that ``method`` is an interval method some aggregation supports.

    Args:
        method: The method asked for.
        name: How the error message names the setting (``--ci`` on the command line).

    Raises:
        ConfigError: no aggregation knows ``method``.
    """
    from . import aggregate

    known = dict.fromkeys((*aggregate.RATIO_METHODS, *aggregate.MEAN_METHODS))
    if method not in known:
        raise ConfigError(
            f"{name} ({method!r}) must be one of {one_of(known)}.{did_you_mean(method, known)}"
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
        raise ConfigError(f"`workers` ({workers!r}) must be a positive integer or 'auto'.")
    return workers


def _check_confidence(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise ConfigError(f"`confidence` ({value!r}) must be in (0, 1).")


def _check_ci_method(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None:
        if not isinstance(value, str):
            raise ConfigError(f"`ci_method` ({value!r}) must be a string or None.")
        check_ci_method(value)


def _check_int(minimum: int, *, optional: bool = False) -> Any:
    def check(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is None and optional:
            return
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            what = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
            raise ConfigError(f"`{attribute.name}` ({value!r}) must be {what}.")

    return check


def _check_str(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"`{attribute.name}` ({value!r}) must be a non-empty string.")


def _check_seconds(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1e9:
        raise ConfigError(
            f"`{attribute.name}` ({value!r}) must be a number of seconds above 0, or None for "
            "no limit."
        )


def _to_reduce(value: Any) -> Any:
    """A reducer name or a list of them as a tuple (the names are checked by the validator)."""
    if isinstance(value, list):
        return tuple(value)
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(","))
    return value


def _check_reduce(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    from .engine._reduce import check_reduce

    check_reduce(value)


def _check_seed(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"`seed` ({value!r}) must be an integer.")


@attrs.frozen(kw_only=True)
class RunSettings:
    """How a run is made: its suite id, interval settings and executor.

    Every field is checked when the record is built, so a run with bad settings fails before
    any item is scored.

    Raises:
        ConfigError: a value out of range or of the wrong type.
    """

    #: Prefix of the measurement keys (``"<suite_id>.<label>"``).
    suite_id: str = attrs.field(default="default", validator=_check_str)
    #: Confidence level of every interval, in (0, 1).
    confidence: float = attrs.field(default=0.95, validator=_check_confidence)
    #: Interval method asked for; ``None``: each metric's default.
    ci_method: str | None = attrs.field(default=None, validator=_check_ci_method)
    #: Seed for anything random (bootstrap intervals).
    seed: int = attrs.field(default=0, validator=_check_seed)
    #: How many items an ``async def score_item`` may score at once (per process).
    concurrency: int = attrs.field(default=16, validator=_check_int(1))
    #: The executor's name: ``"serial"``, ``"process"``, ``"dask"`` or a custom one's name.
    executor: str = attrs.field(default="serial", validator=_check_str)
    #: Worker processes of a parallel executor; ``None``: serial, or the executor's default.
    workers: int | None = attrs.field(default=None, validator=_check_int(1, optional=True))
    #: How often a shard whose worker was lost is tried again before it is cut in two to find
    #: the item that kills its worker (which gets "worker lost: ..."). A shard that raised is
    #: not tried again: it would raise again.
    retries: int = attrs.field(default=1, validator=_check_int(0))
    #: Seconds one metric may take on one item; past it the item is an ``error`` ("timed out
    #: after N s"). ``None``: no limit.
    item_timeout: float | None = attrs.field(default=None, validator=_check_seconds)
    #: Seconds the whole run may take; shards not done by then get ``error`` scores.
    #: ``None``: no limit.
    deadline: float | None = attrs.field(default=None, validator=_check_seconds)
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
            from .engine._reduce import shape_of_reduce

            # Saved results load without the plugins that added their reducers: only the
            # shape is checked here; a run that reduces again looks the names up.
            object.__setattr__(settings, "reduce", shape_of_reduce(_to_reduce(reduce)))
        return settings
