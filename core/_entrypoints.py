"""Walking entry-point groups ourselves, keeping each entry point's distribution.

pluggy's ``load_setuptools_entrypoints`` drops an entry point whose name is taken and stops at
the first plugin that fails to import; itemscore needs both facts reported instead.
"""

from __future__ import annotations

import os
from importlib import metadata

import attrs

__all__ = ["AUTOLOAD_ENV", "EntryPointRef", "autoload_enabled", "entry_points"]

#: Set to ``1`` to load only the built-ins and what is registered in-process.
AUTOLOAD_ENV = "ITEMSCORE_DISABLE_PLUGIN_AUTOLOAD"
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
    return name.lower().replace("_", "-").replace(".", "-")


def autoload_enabled() -> bool:
    """Whether third-party plugins load (``ITEMSCORE_DISABLE_PLUGIN_AUTOLOAD`` unset or 0)."""
    return os.environ.get(AUTOLOAD_ENV, "").strip().lower() in ("", "0", "false", "no")


def entry_points(group: str, *, autoload: bool | None = None) -> list[EntryPointRef]:
    """The entry points of ``group``, one per (name, value, distribution), in a stable order.

    With autoload disabled only itemscore's own entry points are returned.
    """
    if autoload is None:
        autoload = autoload_enabled()
    seen: set[tuple[str, str, str | None]] = set()
    refs: list[EntryPointRef] = []
    for ep in metadata.entry_points(group=group):
        dist = getattr(ep, "dist", None)
        dist_name = dist.metadata["Name"] if dist is not None else None
        version = dist.version if dist is not None else None
        key = (ep.name, ep.value, dist_name)
        if key in seen:  # the same distribution found twice on sys.path
            continue
        seen.add(key)
        ref = EntryPointRef(ep, dist_name, version)
        if autoload or ref.builtin:
            refs.append(ref)
    refs.sort(key=lambda r: (not r.builtin, r.name, r.distribution or ""))
    return refs
