"""Installed distributions read as ``importlib.metadata`` reads them, without importing it.

``importlib.metadata`` (email, zipfile, csv, pathlib) costs more than Python's own start-up,
and itemscore needs little of it: the ``*.dist-info`` folders on ``sys.path``, their
``entry_points.txt``, and the ``Name`` and ``Version`` headers. These functions read them in
the same order and with the same rules, and raise :class:`Unusual` for whatever
``importlib.metadata`` reads in its own way (zip files and eggs on ``sys.path``, folded or
missing headers, another distribution finder), for the caller to ask it instead.

This module imports only what Python has loaded at start-up anyway: ``itemscore --version``
and ``itemscore.__version__`` use it.
"""

from __future__ import annotations

import os
import sys

__all__ = [
    "Unusual",
    "check_finders",
    "infos",
    "name_and_version",
    "normalize",
    "read_text",
    "version",
]


class Unusual(Exception):
    """Something ``importlib.metadata`` reads in its own way: let it read everything."""


def check_finders() -> None:
    """Raise :class:`Unusual` when another finder than Python's path finder finds distributions.

    dask's ``importlib_metadata``, for one, takes discovery over from the standard library.
    """
    external = sys.modules.get("_frozen_importlib_external")
    path_finder = getattr(external, "PathFinder", None)
    if any(f is not path_finder and hasattr(f, "find_distributions") for f in sys.meta_path):
        raise Unusual("another distribution finder")


def normalize(name: str) -> str:
    """PEP 503 normalisation with underscores: runs of ``-_.`` become one ``_``, lower case."""
    name = name.replace("-", "_").replace(".", "_")
    while "__" in name:
        name = name.replace("__", "_")
    return name.lower()


def infos(entry: str) -> list[tuple[str, str]]:
    """The metadata folders of one ``sys.path`` entry in ``importlib.metadata``'s order.

    Returns:
        ``(normalised name, path)`` pairs.
    """
    folder = entry or "."
    if os.path.basename(folder).lower().endswith(".egg"):
        raise Unusual(folder)
    try:
        children = os.listdir(folder)
    except NotADirectoryError as exc:  # a zip file
        raise Unusual(folder) from exc
    except OSError:
        return []
    by_name: dict[str, list[str]] = {}
    for child in children:
        low = child.lower()
        if low.endswith((".dist-info", ".egg-info")):
            if not child.endswith((".dist-info", ".egg-info")):
                raise Unusual(child)  # named from its METADATA by importlib.metadata
            normalized = normalize(low.rpartition(".")[0].partition("-")[0])
            by_name.setdefault(normalized, []).append(os.path.join(folder, child))
    return [(name, info) for name, paths in by_name.items() for info in paths]


def read_text(path: str) -> str | None:
    """A file's text as ``importlib.metadata`` reads it (universal newlines), or ``None``."""
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
        return None


def _is_header(line: str) -> bool:
    """Whether the email parser takes ``line`` for a header: printable ASCII, then ``:``."""
    colon = line.find(":")
    return colon >= 0 and all("!" <= c <= "~" for c in line[:colon])


def _headers(info: str) -> dict[str, str]:
    """``name`` and ``version`` from the metadata headers, as the email parser reads them.

    The first of each, its value after ``:`` without the leading blanks.
    """
    text = read_text(os.path.join(info, "METADATA")) or read_text(os.path.join(info, "PKG-INFO"))
    if not text:
        raise Unusual(info)
    headers: dict[str, str] = {}
    last = ""
    for line in text.split("\n"):
        if not line:
            break
        if line.startswith("From ") or any(c in line for c in "\r\x0b\x0c\x1c\x1d\x1e\x85"):
            raise Unusual(info)
        if line[0] in " \t":
            if last in ("name", "version"):
                raise Unusual(info)  # a folded value
            continue
        if not _is_header(line):
            raise Unusual(info)
        key, _, value = line.partition(":")
        last = key.lower()
        if last in ("name", "version"):
            headers.setdefault(last, value.lstrip(" \t"))
    return headers


def name_and_version(info: str) -> tuple[str, str]:
    """``Name`` and ``Version`` of the distribution whose metadata folder is ``info``."""
    headers = _headers(info)
    if "name" not in headers or "version" not in headers:
        raise Unusual(info)
    return headers["name"], headers["version"]


def version(name: str) -> str:
    """``importlib.metadata.version(name)``: the first distribution of that name on sys.path."""
    try:
        check_finders()
        wanted = normalize(name)
        for entry in sys.path:
            for normalized, info in infos(entry):
                if normalized == wanted:
                    found = _headers(info).get("version")
                    if found is None:
                        raise Unusual(info)
                    return found
    except (Unusual, OSError, UnicodeDecodeError):
        pass
    from importlib import metadata  # not found, or unusual: its answer, or its error

    return metadata.version(name)
