"""Checks of an output folder before any work: nothing a user made is ever replaced.

A report set may only replace what itemscore wrote (:func:`._commit.owner`): a report name
taken by a file itemscore did not write, by a folder, or by one of the run's own inputs is
refused before anything is read or scored, with the fix in the message. The switch checks
the names once more (:meth:`._commit.ReportSet.commit`), for what appears during the run.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from .._commit import (
    STATE_DIR,
    FolderBusyError,
    Owner,
    busy_holder,
    busy_message,
    followed_copy,
    owner,
)
from .._exceptions import ConfigError
from ..display._text import printable

__all__ = ["check_out_dir"]


def _show(path: Path | str) -> str:
    return printable(os.fspath(path))


def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if os.path.lexists(candidate):
            return candidate
    return Path(".")


def _check_folder(path: Path) -> None:
    """``path`` is a folder itemscore can write into, or one it can create."""
    if path.is_symlink() and not path.exists():
        raise ConfigError(
            f"The output folder {_show(path)} is a link to {_show(os.readlink(path))}, which "
            "does not exist; name an existing folder or a new one."
        )
    if path.exists() and not path.is_dir():
        raise ConfigError(f"The output folder {_show(path)} is an existing file; name a folder.")
    base = _nearest_existing(path)
    if not base.is_dir():
        raise ConfigError(
            f"The output folder {_show(path)} cannot be created: {_show(base)} is a file, not "
            "a folder."
        )
    if not os.access(base, os.W_OK | os.X_OK):
        what = "written" if base == path else f"created: {_show(base)} cannot be written"
        raise ConfigError(
            f"The output folder {_show(path)} cannot be {what} (no permission); choose a "
            "folder you can write to."
        )
    state = path / STATE_DIR
    if followed_copy(path):
        raise ConfigError(
            f"{_show(path)} was copied with its links followed (`cp -rL`, `shutil.copytree`, "
            f"`scp -r`, zip without -y): {_show(state / 'current')} is a folder now, not a "
            "link, and its reports are plain copies that itemscore cannot tell from files of "
            f"yours, so it writes nothing there. Delete {_show(state)} and the copied reports "
            f"to write into {_show(path)} again, or write into another folder. To copy report "
            "folders, keep their links: `cp -a`, `shutil.copytree(..., symlinks=True)`, "
            "`zip -y`."
        )
    if state.is_symlink() or (os.path.lexists(state) and not state.is_dir()):
        kind = "a link" if state.is_symlink() else "a file"
        raise ConfigError(
            f"{_show(state)} is {kind}, where itemscore keeps the report sets of "
            f"{_show(path)}; itemscore did not make it and will not write through it. Move it "
            "away, or write into another folder."
        )


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samestat(os.stat(a), os.stat(b))
    except OSError:
        return False


def _inside(path: Path, folder: Path) -> bool:
    try:
        real, base = os.path.realpath(path), os.path.realpath(folder)
    except OSError:
        return False
    return os.path.commonpath([real, base]) == base


def _check_inputs(
    path: Path, names: Sequence[str], inputs: Iterable[tuple[str, Path]], own: Iterable[Path]
) -> None:
    state = path / STATE_DIR
    current = state / "current"
    for what, source in inputs:
        replaced = next((n for n in names if _same_file(source, path / n)), None)
        if replaced is None and not _inside(source, state):
            continue
        target = f"the report {replaced}" if replaced else "the next report set"
        raise ConfigError(
            f"{_show(source)} is {what} of this run, and {target} written into "
            f"{_show(path)} would replace it. Write the reports into another folder, or move "
            f"{_show(source)} out of {_show(path)} first."
        )
    for source in own:
        if _inside(source, state) and not _inside(source, current):
            raise ConfigError(
                f"{_show(source)} is inside {_show(state)}, which itemscore manages, and is not "
                "part of the current report set there; read a report set through the links in "
                f"{_show(path)}, or copy the file elsewhere first."
            )


def check_out_dir(
    out_dir: str | os.PathLike[str],
    names: Sequence[str] = (),
    *,
    inputs: Iterable[tuple[str, Path]] = (),
    own_inputs: Iterable[Path] = (),
) -> Path:
    """``out_dir`` as a path, checked to take a report set of ``names`` without harm.

    Nothing is written. Refused: an output folder that is a file or cannot be created; a
    ``.itemscore`` that is not a folder; a report name taken by a folder or by a file itemscore
    did not write; an input that the set would replace; another process writing there.

    Args:
        out_dir: The output folder.
        names: The file names of the report set.
        inputs: ``(what, path)`` of every file the run reads (``what``: "the data file"...):
            none may be replaced by the set, nor lie inside ``.itemscore``.
        own_inputs: Report files the run reads whole before it writes (``rescore``'s
            results.json), which may be reports of the current set they replace.

    Raises:
        ConfigError: any of the above but a busy folder.
        FolderBusyError: another live process is writing reports into ``out_dir``.
    """
    path = Path(out_dir)
    _check_folder(path)
    if not path.is_dir():
        return path
    _check_inputs(path, names, inputs, own_inputs)
    for name in names:
        found = owner(path, name)
        where = _show(path / name)
        if found is Owner.FOLDER:
            raise ConfigError(
                f"{where} is a folder (or a link to one), where the report {name} goes. Move or "
                "rename it, write into another folder, or leave that report out."
            )
        if found is Owner.USER:
            raise ConfigError(
                f"{where} is a file itemscore did not write: only links into "
                f"{_show(path / STATE_DIR / 'current')} are its reports, and it never replaces "
                "or removes anything else. Move or rename the file, write into another folder, "
                "or leave that report out."
            )
    holder = busy_holder(path)
    if holder is not None:
        raise FolderBusyError(busy_message(path, holder))
    return path
