"""The one catalogue of entry points: metrics, suites and hook plugins.

We walk the groups ourselves, keeping each entry point's distribution: pluggy's
``load_setuptools_entrypoints`` drops an entry point whose name is taken and stops at the first
plugin that fails to import; itemscore needs both facts reported instead.

- :func:`entry_points` lists a group without importing anything, reading ``entry_points.txt``
  and ``METADATA`` in the ``*.dist-info`` folders on ``sys.path`` as ``importlib.metadata``
  would (which it imports only for what it reads in its own way); entry points switched off by
  ``ITEMSCORE_DISABLE_PLUGIN_AUTOLOAD``, ``ITEMSCORE_DISABLE_PLUGINS`` or ``-p no:NAME`` are
  left out (:func:`disabled_entry_points` lists them).
- :func:`load` imports one entry point once; a failure is recorded as one description of the
  error (:func:`~itemscore._exceptions.describe_exception`) and never raised.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any, Protocol

import attrs

from ._distributions import Unusual, check_finders, infos, name_and_version, read_text
from ._exceptions import describe_exception

__all__ = [
    "AUTOLOAD_ENV",
    "DISABLE_ENV",
    "EntryPoint",
    "EntryPointLike",
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


class EntryPointLike(Protocol):
    """An entry point: ours, or one of ``importlib.metadata``."""

    @property
    def name(self) -> str: ...
    @property
    def value(self) -> str: ...
    @property
    def group(self) -> str: ...
    def load(self) -> Any: ...


#: ``importlib.metadata``'s pattern of an entry point's value: ``module[:attr][ [extras]]``.
_VALUE = r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$"


@attrs.frozen
class EntryPoint:
    """One entry point read from ``entry_points.txt``, loaded as ``importlib.metadata`` does."""

    #: The entry point's name.
    name: str
    #: ``module:attribute`` (or a module).
    value: str
    #: The entry-point group.
    group: str

    def load(self) -> Any:
        """Import the module and return the attribute the value names."""
        import importlib
        import re

        match = re.match(_VALUE, self.value)
        if match is None:  # the error importlib.metadata gives
            raise AttributeError("'NoneType' object has no attribute 'group'")
        found: Any = importlib.import_module(match.group("module"))
        for attribute in filter(None, (match.group("attr") or "").split(".")):
            found = getattr(found, attribute)
        return found


@attrs.frozen
class EntryPointRef:
    """One entry point with the distribution that declares it."""

    #: The entry point itself (``name``, ``value``, ``load()``).
    entry_point: EntryPointLike
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
    return name.lower().replace("_", "-").replace(".", "-")


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
    if not names:
        return False
    keys = {_canonical(ref.name)}
    if ref.distribution is not None:
        keys |= {_canonical(ref.distribution), _canonical(f"{ref.distribution}:{ref.name}")}
    return bool(keys & names)


def _declared(group: str) -> list[tuple[EntryPointLike, str | None, str | None]]:
    """Every entry point of ``group`` with its distribution's name and version.

    In ``importlib.metadata``'s order, with its choice among distributions of one name (the
    first on ``sys.path``): read from the ``*.dist-info`` folders directly where that gives the
    same answer, else (zip files or eggs on ``sys.path``, other distribution finders, files
    that are not plain) through ``importlib.metadata``, whose import costs more than Python's
    own start-up. One difference: a malformed ``entry_points.txt`` without ``group`` is not
    read, where ``importlib.metadata`` fails for every group.
    """
    found = _read_distributions(group)
    if found is not None:
        return found
    from importlib import metadata

    declared: list[tuple[EntryPointLike, str | None, str | None]] = []
    # Name and version by distribution: reading either parses the whole METADATA file, and one
    # distribution declares many entry points (the built-ins are seven metrics).
    names: dict[int, tuple[str | None, str | None]] = {}
    for ep in metadata.entry_points(group=group):
        dist = getattr(ep, "dist", None)
        if dist is None:
            dist_name = version = None
        elif (known := names.get(id(dist))) is not None:
            dist_name, version = known
        else:
            dist_name, version = names[id(dist)] = (dist.metadata["Name"], dist.version)
        declared.append((ep, dist_name, version))
    return declared


def _read_distributions(group: str) -> list[tuple[EntryPointLike, str | None, str | None]] | None:
    """:func:`_declared` read from the folders on ``sys.path``, or ``None`` when unusual."""
    declared: list[tuple[EntryPointLike, str | None, str | None]] = []
    seen: set[str] = set()
    try:
        check_finders()
        for entry in sys.path:
            for normalized, info in infos(entry):
                if normalized in seen:  # importlib.metadata keeps the first of one name
                    continue
                seen.add(normalized)
                declared += _entry_points_of(info, group)
    except (Unusual, OSError, UnicodeDecodeError):
        return None
    return declared


def _entry_points_of(info: str, group: str) -> list[tuple[EntryPointLike, str | None, str | None]]:
    text = read_text(os.path.join(info, "entry_points.txt"))
    if not text or f"[{group}]" not in text:
        return []
    points: list[EntryPointLike] = []
    section = None
    for line in map(str.strip, text.splitlines()):
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
            continue
        if section is None:
            continue
        if "=" not in line:
            raise Unusual(line)  # importlib.metadata raises for it
        name, value = map(str.strip, line.split("=", 1))
        if section == group:
            points.append(EntryPoint(name=name, value=value, group=group))
    if not points:
        return []
    dist_name, version = name_and_version(info)
    return [(point, dist_name, version) for point in points]


def _walk(group: str) -> list[EntryPointRef]:
    seen: set[tuple[str, str, str | None]] = set()
    refs: list[EntryPointRef] = []
    for ep, dist_name, version in _declared(group):
        key = (ep.name, ep.value, dist_name)
        if key in seen:  # the same distribution found twice on sys.path
            continue
        seen.add(key)
        refs.append(EntryPointRef(ep, dist_name, version))
    refs.sort(key=lambda r: (not r.builtin, r.name, r.distribution or ""))
    return refs


def disabled_entry_points(group: str, *, autoload: bool | None = None) -> list[EntryPointRef]:
    """The entry points of ``group`` that are installed but switched off."""
    if autoload is None:
        autoload = autoload_enabled()
    names = _disabled_names()
    return [r for r in _walk(group) if (not autoload and not r.builtin) or _is_disabled(r, names)]


def entry_points(group: str, *, autoload: bool | None = None) -> list[EntryPointRef]:
    """The entry points of ``group``, one per (name, value, distribution), in a stable order.

    With autoload disabled only itemscore's own entry points are returned; entry points (or
    distributions) named in ``ITEMSCORE_DISABLE_PLUGINS`` or by ``-p no:NAME`` never are.
    """
    if autoload is None:
        autoload = autoload_enabled()
    names = _disabled_names()
    return [r for r in _walk(group) if (autoload or r.builtin) and not _is_disabled(r, names)]


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
