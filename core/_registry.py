"""Finding metrics: entry points, in-process ``@register``, and plugin hooks.

Nothing is imported before a metric is asked for or listed. Asking for one imports every metric
entry point (each failure recorded, never fatal): a metric's id is a class attribute, so only
then is it known that no other installed metric claims the same id.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, TypeVar, cast

import attrs

from ._entrypoints import (
    AUTOLOAD_ENV,
    EntryPointRef,
    autoload_enabled,
    disabled_entry_points,
    entry_points,
    load,
)
from ._exceptions import (
    MetricCollisionError,
    NotAMetricError,
    PluginLoadError,
    UnknownMetricError,
    describe_exception,
    did_you_mean,
)
from ._metric import Metric

__all__ = ["METRICS_GROUP", "MetricInfo", "Registry", "default_registry", "register"]

#: The entry-point group metrics are declared in.
METRICS_GROUP = "itemscore.metrics"

M = TypeVar("M", bound=type[Metric])

#: Classes registered in-process with ``@register``, by metric id.
_REGISTERED: dict[str, type[Metric]] = {}


@attrs.frozen(kw_only=True)
class MetricInfo:
    """Where a metric comes from, and whether it loads."""

    #: The metric id (``None`` when the plugin is broken and the id is unknown).
    id: str | None
    #: The entry point's name (``None`` for in-process registrations).
    entry_point: str | None = None
    #: ``module:attribute`` of the entry point, or the class's module and name.
    target: str = ""
    #: The distribution that declares it (``None`` for in-process registrations).
    distribution: str | None = None
    #: The distribution's version.
    version: str | None = None
    #: "entry-point", "register" or "hook".
    source: Literal["entry-point", "register", "hook"] = "entry-point"
    #: "ok", or "broken" when it cannot be loaded.
    status: Literal["ok", "broken"] = "ok"
    #: Why it is broken: the exception type and message.
    error: str | None = None
    #: The pluggy plugin whose ``itemscore_add_metrics`` hook added it (source "hook").
    plugin: str | None = None
    #: The loaded class.
    cls: type[Metric] | None = attrs.field(default=None, eq=False, repr=False)
    #: When another source claims the same id: where each claim comes from (this one too).
    collision: tuple[str, ...] = ()

    @property
    def origin(self) -> str:
        """A short phrase naming where the metric comes from, for error messages."""
        if self.source == "register":
            return f"registered in-process by {self.target}"
        if self.source == "hook":
            dist = f" of distribution {self.distribution!r}" if self.distribution else ""
            return f"the itemscore_add_metrics hook of plugin {self.plugin!r}{dist} ({self.target})"
        dist = self.distribution or "an unknown distribution"
        return f"distribution {dist!r} (entry point {self.entry_point!r} = {self.target!r})"


def register(cls: M) -> M:
    """Make a metric class usable by id in this process, without an entry point.

    Use as a class decorator. Registering another class under a taken id is an error; running
    the same class definition again (a notebook cell) replaces the earlier one.

    Raises:
        NotAMetricError: ``cls`` is not a ``Metric`` subclass with a ``metric_id`` (a
            ``TypeError``).
        MetricCollisionError: another class is registered under the same id.
    """
    _check_metric_class(cls, f"{cls!r}")
    existing = _REGISTERED.get(cls.metric_id)
    if existing is not None and existing is not cls and not _same_definition(existing, cls):
        first = f"{existing.__module__}.{existing.__qualname__}"
        second = f"{cls.__module__}.{cls.__qualname__}"
        raise MetricCollisionError(
            f"Metric id {cls.metric_id!r} is registered twice: by {first} and by {second}. "
            "Give one of them another metric_id.",
            metric_id=cls.metric_id,
            sources=(first, second),
        )
    _REGISTERED[cls.metric_id] = cls
    return cls


def unregister(metric_id: str) -> None:
    """Forget an in-process registration (for tests and notebooks)."""
    _REGISTERED.pop(metric_id, None)


def _same_definition(a: type, b: type) -> bool:
    return a.__module__ == b.__module__ and a.__qualname__ == b.__qualname__


def _check_metric_class(obj: object, where: str) -> type[Metric]:
    if not isinstance(obj, type) or not issubclass(obj, Metric):
        raise NotAMetricError(f"{where} is not a subclass of itemscore.Metric.")
    if not isinstance(getattr(obj, "metric_id", None), str):
        raise NotAMetricError(f"{where} has no `metric_id`; set it as a class attribute.")
    return obj


def _variants(name: str) -> set[str]:
    return {name, name.replace("-", "_"), name.replace("_", "-")}


class Registry:
    """Every metric this process can use: built-ins, plugins, hooks and registrations.

    Entry points load lazily: building a registry imports nothing; asking for a metric, or
    listing them, imports every metric entry point once (see the module docstring).
    """

    def __init__(self, *, autoload: bool | None = None) -> None:
        self.autoload = autoload_enabled() if autoload is None else autoload
        self._refs: list[EntryPointRef] | None = None
        self._loaded: dict[tuple[str, str, str | None], MetricInfo] = {}
        self._hook_infos: list[MetricInfo] | None = None

    # -- loading ---------------------------------------------------------------------------

    def _entry_points(self) -> list[EntryPointRef]:
        if self._refs is None:
            self._refs = entry_points(METRICS_GROUP, autoload=self.autoload)
        return self._refs

    def _load(self, ref: EntryPointRef) -> MetricInfo:
        key = (ref.name, ref.value, ref.distribution)
        info = self._loaded.get(key)
        if info is not None:
            return info
        where = MetricInfo(
            id=None,
            entry_point=ref.name,
            target=ref.value,
            distribution=ref.distribution,
            version=ref.version,
        )
        loaded = load(ref)
        try:
            if not loaded.ok:
                raise PluginLoadError(loaded.error or "")
            cls = _check_metric_class(loaded.obj, f"Entry point {ref.name!r} ({ref.value})")
        except PluginLoadError as exc:  # a broken plugin is reported, never fatal
            info = attrs.evolve(
                where, status="broken", error=describe_exception(exc, one_line=True)
            )
        else:
            info = attrs.evolve(where, id=cls.metric_id, cls=cls)
        self._loaded[key] = info
        return info

    def _hooks(self) -> list[MetricInfo]:
        if self._hook_infos is None:
            from ._plugins import plugin_manager

            infos: list[MetricInfo] = []
            pm = plugin_manager()
            for impl in pm.hook.itemscore_add_metrics.get_hookimpls():
                ref = pm.sources.get(impl.plugin_name)
                where = MetricInfo(
                    id=None,
                    target=impl.plugin_name,
                    distribution=ref.distribution if ref else None,
                    version=ref.version if ref else None,
                    source="hook",
                    plugin=impl.plugin_name,
                )
                try:
                    returned: Iterable[object] = cast(Iterable[object], impl.function() or ())
                    for obj in returned:
                        cls = _check_metric_class(
                            obj, f"Plugin {impl.plugin_name!r} returned {obj!r}"
                        )
                        target = f"{cls.__module__}:{cls.__qualname__}"
                        infos.append(attrs.evolve(where, id=cls.metric_id, target=target, cls=cls))
                except Exception as exc:  # noqa: BLE001 - reported like a broken entry point
                    error = describe_exception(exc, one_line=True)
                    infos.append(attrs.evolve(where, status="broken", error=error))
            self._hook_infos = infos
        return self._hook_infos

    @staticmethod
    def _registered() -> list[MetricInfo]:
        return [
            MetricInfo(
                id=metric_id,
                target=f"{cls.__module__}:{cls.__qualname__}",
                source="register",
                cls=cls,
            )
            for metric_id, cls in _REGISTERED.items()
        ]

    def _all(self) -> list[MetricInfo]:
        loaded = [self._load(ref) for ref in self._entry_points()]
        return loaded + self._hooks() + self._registered()

    def infos(self) -> list[MetricInfo]:
        """Every metric, loaded, sorted by id; broken plugins last.

        Never raises for a plugin's sake: a plugin that fails to load is listed as broken, and
        metrics whose id is claimed twice are listed as broken, each naming both claims.
        """
        infos = self._all()
        claims: dict[str, list[MetricInfo]] = {}
        for info in infos:
            if info.id is not None:
                claims.setdefault(info.id, []).append(info)
        listed = []
        for info in infos:
            rivals = _distinct(claims.get(info.id or "", []))
            if info.id is not None and len(rivals) > 1:
                error = _collision(info.id, rivals)
                info = attrs.evolve(
                    info,
                    status="broken",
                    error=str(error),
                    collision=error.sources,
                )
            listed.append(info)
        return sorted(listed, key=lambda i: (i.status == "broken", i.id or "", i.entry_point or ""))

    def _pick(self, name: str, candidates: list[MetricInfo]) -> MetricInfo | None:
        """The metric with id ``name`` among ``candidates``, else the one with that entry point.

        A broken entry point never hides a metric that loads: it matters only when no healthy
        metric answers to ``name``.

        Raises:
            MetricCollisionError: two candidates claim the id.
            PluginLoadError: the entry point named ``name`` is broken, and nothing else is
                ``name``.
        """
        by_id = _distinct([i for i in candidates if i.id == name])
        if len(by_id) > 1:
            raise _collision(name, by_id)
        if by_id:
            return by_id[0]
        variants = _variants(name)
        by_entry_point = [i for i in candidates if i.entry_point in variants]
        healthy = _distinct([i for i in by_entry_point if i.status == "ok"])
        for info in healthy:
            rivals = _distinct([i for i in candidates if i.id == info.id])
            if len(rivals) > 1:
                raise _collision(info.id or name, rivals)
        if healthy:
            return healthy[0]
        for info in by_entry_point:
            raise PluginLoadError(
                f"Metric {name!r} cannot be loaded from {info.origin}: {info.error}",
                entry_point=info.entry_point,
                distribution=info.distribution,
                group=METRICS_GROUP,
            )
        return None

    # -- lookup ----------------------------------------------------------------------------

    def get(self, name: str) -> type[Metric]:
        """The metric class with id ``name`` or, failing that, entry-point name ``name``.

        Raises:
            UnknownMetricError: no metric has that id or entry-point name.
            PluginLoadError: the entry point named ``name`` is broken.
            MetricCollisionError: two sources claim the id.
        """
        info = self.find(name)
        assert info.cls is not None  # find() returns loaded metrics only
        return info.cls

    def find(self, name: str) -> MetricInfo:
        """Like :meth:`get`, returning the :class:`MetricInfo`.

        Every metric entry point is loaded (once per registry), so that a plugin claiming the
        id of another metric under a different entry-point name is an error, not a silent
        choice; a plugin that fails to load matters only when it is the one asked for.
        """
        infos = self._all()
        found = self._pick(name, infos)
        if found is not None:
            return found
        known = sorted(
            {i.id for i in infos if i.id} | {i.entry_point for i in infos if i.entry_point}
        )
        broken = [i for i in infos if i.status == "broken"]
        hint = ""
        if broken:
            names = ", ".join(repr(i.entry_point or i.target) for i in broken)
            hint = f" Some plugins failed to load ({names}); `itemscore plugins` shows why."
        if not self.autoload:
            hint += (
                f" Plugin autoload is off ({AUTOLOAD_ENV} is set): only itemscore's own "
                "metrics and in-process registrations are available."
            )
        switched_off = [r.name for r in disabled_entry_points(METRICS_GROUP, autoload=True)]
        if name in switched_off or name.replace("-", "_") in switched_off:
            hint += f" The entry point {name!r} is installed but switched off."
        raise UnknownMetricError(
            f"No metric is named {name!r}.{did_you_mean(name, known)} "
            f"Installed metrics: {', '.join(sorted({i.id for i in infos if i.id}))}.{hint}",
            name=name,
        )


def _distinct(infos: list[MetricInfo]) -> list[MetricInfo]:
    """``infos`` with one entry per class (the same class reached twice is one claim)."""
    out: list[MetricInfo] = []
    for info in infos:
        if info.cls is None or all(other.cls is not info.cls for other in out):
            out.append(info)
    return out


def _collision(metric_id: str, claims: list[MetricInfo]) -> MetricCollisionError:
    sources = tuple(info.origin for info in claims)
    return MetricCollisionError(
        f"Metric id {metric_id!r} is claimed twice: by {sources[0]} and by "
        f"{' and by '.join(sources[1:])}. Uninstall one of them, ask its author to rename it, "
        "or switch one off with ITEMSCORE_DISABLE_PLUGINS=NAME.",
        metric_id=metric_id,
        sources=sources,
    )


_DEFAULT: Registry | None = None


def default_registry() -> Registry:
    """The process-wide registry (built on first use; :func:`reset_registry` forgets it)."""
    global _DEFAULT
    if _DEFAULT is None or _DEFAULT.autoload != autoload_enabled():
        _DEFAULT = Registry()
    return _DEFAULT


def reset_registry() -> None:
    """Forget the loaded entry points (after installing a plugin, or in tests)."""
    global _DEFAULT
    _DEFAULT = None
    from ._entrypoints import reset_loaded
    from ._plugins import reset_plugin_manager

    reset_loaded()
    reset_plugin_manager()
