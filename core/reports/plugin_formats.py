"""Report formats from plugins: the ``itemscore_export_formats`` hook, checked by name.

A plugin format ``NAME`` is written to ``DIR/results.NAME``. Its name must be a plain name:
not empty, no path separator, no ``..``, no NUL or other control character, so no plugin can
make itemscore write outside the output folder.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

from .._exceptions import ItemscoreError
from .._result import RunResult

__all__ = ["check_name", "plugin_formats"]

#: ``writer(result, path)`` writes one report of ``result`` to ``path``.
Writer = Callable[[RunResult, Path], None]

_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")


def check_name(plugin: str, name: object, writer: object) -> str:
    """``name`` when it is a usable export-format name, else an error naming ``plugin``.

    Raises:
        ItemscoreError: not a non-empty plain name (letters, digits, ``_ . + -``, no ``..``)
            mapped to a callable.
    """
    if not isinstance(name, str) or not callable(writer):
        raise ItemscoreError(
            f"Plugin {plugin!r} returned the export format {name!r} -> {writer!r}; formats "
            "must map a non-empty name to a callable."
        )
    if not _PLAIN_NAME.fullmatch(name) or ".." in name:
        raise ItemscoreError(
            f"Plugin {plugin!r} adds the export format {name!r}, which is not a plain name: "
            "it would be written as results.<name> and must use only letters, digits and "
            "'_', '.', '+', '-' (no '/', '\\\\', '..' or control characters). Ask its "
            "author to rename it."
        )
    return name


def plugin_formats(reserved: Mapping[str, str]) -> dict[str, tuple[str, Writer]]:
    """Formats from the ``itemscore_export_formats`` hook: name -> (plugin, writer).

    Args:
        reserved: The built-in formats (name -> file name), which no plugin may shadow.

    Raises:
        ItemscoreError: a plugin failed, returned a bad name, shadowed a built-in format, or
            two plugins added the same name.
    """
    from .._plugins import plugin_manager

    found: dict[str, tuple[str, Writer]] = {}
    for impl in plugin_manager().hook.itemscore_export_formats.get_hookimpls():
        try:
            formats = cast("Mapping[str, Any]", impl.function() or {})
            entries = list(formats.items())
        except Exception as exc:  # any plugin failure becomes a clear error
            raise ItemscoreError(
                f"Plugin {impl.plugin_name!r} failed in itemscore_export_formats: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        for raw_name, writer in entries:
            name = check_name(impl.plugin_name, raw_name, writer)
            if name in reserved or f"results.{name}" in reserved.values():
                raise ItemscoreError(
                    f"Plugin {impl.plugin_name!r} adds the export format {name!r}, which is "
                    "built in; ask its author to rename it."
                )
            clash = found.get(name)
            if clash is not None:
                raise ItemscoreError(
                    f"The export format {name!r} is added twice: by plugin {clash[0]!r} and "
                    f"by plugin {impl.plugin_name!r}."
                )
            found[name] = (impl.plugin_name, writer)
    return found
