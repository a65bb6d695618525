"""The one catalogue of entry points: metrics, suites and hook plugins.

Read through ``importlib.metadata.entry_points(group=...)``, as pluggy's
``load_setuptools_entrypoints`` reads them, with what itemscore needs on top: pluggy drops an
entry point whose name is taken and stops at the first plugin that fails to import, where
itemscore keeps each entry point with its distribution and reports both facts.

- :func:`entry_points` lists a group without importing anything; entry points switched off by
  ``ITEMSCORE_DISABLE_PLUGIN_AUTOLOAD``, ``ITEMSCORE_DISABLE_PLUGINS`` or ``-p no:NAME`` are
  left out (:func:`disabled_entry_points` lists them).
- :func:`load` imports one entry point once; a failure is recorded as one description of the
  error (:func:`~itemscore._exceptions.describe_exception`) and never raised.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from importlib import metadata
from typing import Any

import attrs

from ._exceptions import describe_exception

__all__ = [
    "AUTOLOAD_ENV",
    "DISABLE_ENV",
    "EntryPointRef",
    "Loaded",
    "autoload_enabled",
    "disable",
    "disabled_entry_points",
    "entry_points",
    "load",
    "reset_loaded",
]

#: Set to ``1`` to load only the built-ins and what is registered in-process.
AUTOLOAD_ENV = "ITEMSCORE_DISABLE_PLUGIN_AUTOLOAD"
#: Entry-point or distribution names to switch off, separated by commas.
DISABLE_ENV = "ITEMSCORE_DISABLE_PLUGINS"
#: The distribution that ships the built-ins: always loaded.
HOST_DISTRIBUTION = "itemscore"


@attrs.frozen
class EntryPointRef:
    """One entry point with the distribution that declares it."""

    #: The entry point itself (``name``, ``value``, ``load()``).
    entry_point: metadata.EntryPoint
    #: The distribution's name, or ``None`` when unknown.
    distribution: str | None
    #: The distribution's version, or ``None`` when unknown.
    version: str | None

    @property
    def group(self) -> str:
        """The entry-point group."""
        return self.entry_point.group

    @property
    def name(self) -> str:
        """The entry point's name."""
        return self.entry_point.name

    @property
    def value(self) -> str:
        """``module:attribute``."""
        return self.entry_point.value

    @property
    def builtin(self) -> bool:
        """Whether itemscore itself declares it."""
        return self.distribution is not None and _canonical(self.distribution) == HOST_DISTRIBUTION


def _canonical(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(".", "-")


def autoload_enabled() -> bool:
    """Whether third-party plugins load (``ITEMSCORE_DISABLE_PLUGIN_AUTOLOAD`` unset or 0)."""
    return os.environ.get(AUTOLOAD_ENV, "").strip().lower() in ("", "0", "false", "no")


#: Names switched off in this process (``-p no:NAME``), besides ``ITEMSCORE_DISABLE_PLUGINS``.
_DISABLED: set[str] = set()


def disable(names: Iterable[str]) -> None:
    """Switch off entry points or whole distributions by name for the rest of the process."""
    _DISABLED.update(_canonical(n) for n in names if n.strip())


def _disabled_names() -> set[str]:
    names = {_canonical(n) for n in os.environ.get(DISABLE_ENV, "").split(",") if n.strip()}
    return names | _DISABLED


def _is_disabled(ref: EntryPointRef, names: set[str]) -> bool:
    keys = {_canonical(ref.name)}
    if ref.distribution is not None:
        keys |= {_canonical(ref.distribution), _canonical(f"{ref.distribution}:{ref.name}")}
    return bool(keys & names)


def _walk(group: str) -> list[EntryPointRef]:
    """Every entry point of ``group`` with its distribution, built-ins first, each by name."""
    refs: list[EntryPointRef] = []
    seen: set[tuple[str, str, str | None]] = set()
    for ep in metadata.entry_points(group=group):
        dist = ep.dist
        name, version = (dist.metadata["Name"], dist.version) if dist else (None, None)
        ref = EntryPointRef(ep, name, version)
        key = (ref.name, ref.value, ref.distribution)
        if key not in seen:  # one distribution reached through two sys.path entries
            seen.add(key)
            refs.append(ref)
    refs.sort(key=lambda r: (not r.builtin, r.name, r.distribution or ""))
    return refs


def _switched_on(group: str, autoload: bool | None) -> list[tuple[EntryPointRef, bool]]:
    """Each entry point of ``group`` (see :func:`_walk`) and whether it is switched on."""
    autoload = autoload_enabled() if autoload is None else autoload
    names = _disabled_names()
    return [(r, (autoload or r.builtin) and not _is_disabled(r, names)) for r in _walk(group)]


def disabled_entry_points(group: str, *, autoload: bool | None = None) -> list[EntryPointRef]:
    """The entry points of ``group`` that are installed but switched off."""
    return [ref for ref, on in _switched_on(group, autoload) if not on]


def entry_points(group: str, *, autoload: bool | None = None) -> list[EntryPointRef]:
    """The entry points of ``group``, one per (name, value, distribution), in a stable order.

    With autoload disabled only itemscore's own entry points are returned; entry points (or
    distributions) named in ``ITEMSCORE_DISABLE_PLUGINS`` or by ``-p no:NAME`` never are.
    """
    return [ref for ref, on in _switched_on(group, autoload) if on]


@attrs.frozen
class Loaded:
    """What loading one entry point gave: the object, or the description of the error."""

    #: The entry point.
    ref: EntryPointRef
    #: The loaded object (``None`` when loading failed).
    obj: Any = attrs.field(default=None, eq=False, repr=False)
    #: Why loading failed: the exception type and message, on one line.
    error: str | None = None

    @property
    def ok(self) -> bool:
        """Whether it loaded."""
        return self.error is None


_LOADED: dict[tuple[str, str, str, str | None], Loaded] = {}


def load(ref: EntryPointRef) -> Loaded:
    """Import ``ref`` once per process; a failure is recorded, never raised.

    ``KeyboardInterrupt`` and ``SystemExit`` pass through.
    """
    key = (ref.group, ref.name, ref.value, ref.distribution)
    done = _LOADED.get(key)
    if done is None:
        try:
            done = Loaded(ref, ref.entry_point.load())
        except Exception as exc:  # noqa: BLE001 - a broken plugin is reported, never fatal
            done = Loaded(ref, error=describe_exception(exc, one_line=True))
        _LOADED[key] = done
    return done


def reset_loaded() -> None:
    """Forget what was loaded (after installing a plugin, or in tests)."""
    _LOADED.clear()
