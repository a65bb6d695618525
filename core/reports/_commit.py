"""Switching a whole report set into place in one atomic step, and removing what kills left.

The layout inside the output folder ``DIR`` (as Kubernetes' atomic volume writer does it)::

    DIR/results.json  -> .itemscore/current/results.json     one link per report, made once
    DIR/.itemscore/current -> set-20261130T2300-4242-k3j9     the one link that is switched
    DIR/.itemscore/set-20261130T2300-4242-k3j9/               a complete report set
    DIR/.itemscore/lock                                      held while switching or cleaning

A run writes its whole set into a fresh ``set-*`` folder (holding a lock on its ``.lock``
file, which the system releases when the process dies, even by ``kill -9``), then, under the
folder's lock, replaces ``current`` by one ``rename``. A kill at any moment leaves ``DIR``
showing either the old complete set or the new complete set. The next run removes every
``set-*`` folder that is neither current nor locked by a live writer: only this pattern,
only inside ``.itemscore``.

Where symbolic links or ``fcntl`` locks are missing (Windows), the reports are renamed into
place one by one: never a half-written file, but no all-or-nothing guarantee across a crash.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["STATE_DIR", "ReportSet", "clean_stale", "hold", "new_set", "remove_unheld"]

#: The folder inside ``DIR`` that holds the report sets.
STATE_DIR = ".itemscore"
_CURRENT = "current"
_SET_PREFIX = "set-"
_NEW_LINK = ".itemscore-new-"  # temporary links: ".<name>.itemscore-new-<token>"
_LOCK = "lock"
_SET_LOCK = ".lock"


def _atomic_possible() -> bool:
    return fcntl is not None and hasattr(os, "symlink") and os.name != "nt"


def _dir_mode() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o777 & ~mask


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created when missing) while the block runs."""
    with open(path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _try_lock(handle: IO[Any]) -> bool:
    """Lock ``handle`` exclusively if no live process holds it (its writer is gone)."""
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _writer_alive(folder: Path) -> bool:
    """Whether the process writing ``folder`` still holds its lock."""
    try:
        handle = open(folder / _SET_LOCK, "rb")  # noqa: SIM115 # closed below, lock or not
    except FileNotFoundError:
        return False
    with handle:
        if not _try_lock(handle):
            return True
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    return False


def hold(handle: IO[Any]) -> bool:
    """Lock a file being written for as long as ``handle`` is open (the system frees it at death).

    Returns:
        ``False`` when a cleaner removed the file before the lock was taken: write another.
    """
    if not _atomic_possible():
        return True
    fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
    return os.fstat(handle.fileno()).st_nlink > 0


def remove_unheld(paths: Iterable[Path]) -> list[Path]:
    """Remove each of ``paths`` that no live writer holds (see :func:`hold`).

    A file is removed while this process holds its lock, so a writer that locks it afterwards
    sees it gone. Where locks are missing (Windows) nothing is removed: a writer cannot be told
    from a dead one.

    Returns:
        What was removed.
    """
    if not _atomic_possible():
        return []
    removed: list[Path] = []
    for path in paths:
        try:
            handle = open(path, "rb")  # noqa: SIM115 # closed below, lock or not
        except OSError:
            continue
        with handle:
            if _try_lock(handle):
                path.unlink(missing_ok=True)
                removed.append(path)
    return removed


def _current_target(state: Path) -> str | None:
    try:
        return os.readlink(state / _CURRENT)
    except OSError:
        return None


def _clean_unlocked(state: Path) -> list[Path]:
    """Remove stale sets and temporary links; the caller holds the folder's lock."""
    current = _current_target(state)
    removed: list[Path] = []
    for entry in state.iterdir():
        name = entry.name
        if name.startswith(_SET_PREFIX) and name != current and entry.is_dir():
            if not _writer_alive(entry):
                shutil.rmtree(entry, ignore_errors=True)
                removed.append(entry)
        elif _NEW_LINK in name and entry.is_symlink():
            entry.unlink(missing_ok=True)  # only lock holders make these: this one was killed
            removed.append(entry)
    for entry in state.parent.iterdir():
        if entry.name.startswith(".") and _NEW_LINK in entry.name and entry.is_symlink():
            entry.unlink(missing_ok=True)
            removed.append(entry)
    return removed


def clean_stale(out_dir: Path) -> list[Path]:
    """Remove the report sets and temporary links that killed runs left in ``out_dir``.

    Only ``set-*`` folders inside ``out_dir/.itemscore`` whose writer is gone (its lock is
    free) and that are not the current set, and temporary ``.*.itemscore-new-*`` links (made
    and renamed under the folder's lock, so any found by a lock holder is stale), are removed.

    Returns:
        What was removed.
    """
    state = out_dir / STATE_DIR
    if not _atomic_possible() or not state.is_dir():
        return []
    with _locked(state / _LOCK):
        return _clean_unlocked(state)


def _link(target: str, path: Path) -> None:
    """Make ``path`` a symbolic link to ``target`` in one atomic step."""
    if path.is_symlink() and os.readlink(path) == target:
        return
    tmp = path.with_name(f".{path.name}{_NEW_LINK}{secrets.token_hex(4)}")
    os.symlink(target, tmp)
    os.replace(tmp, path)


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):  # not every file system syncs folders
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class ReportSet:
    """A report set being written: :attr:`folder` to write into, then :meth:`commit`."""

    def __init__(self, out_dir: Path, folder: Path, lock: IO[bytes] | None) -> None:
        #: The output folder the set is for.
        self.out_dir = out_dir
        #: Where the writers put the reports, under their final names.
        self.folder = folder
        self._lock = lock

    def commit(self, names: Sequence[str], known: Sequence[str]) -> list[Path]:
        """Make this set the one ``out_dir`` shows, in one atomic step.

        Args:
            names: The file names of this set.
            known: Every report file name (of this and earlier sets) that may be in the folder.

        Returns:
            The report paths in ``out_dir``, in the order of ``names``.
        """
        if not _atomic_possible():
            for name in names:
                os.replace(self.folder / name, self.out_dir / name)
            self.discard()
            return [self.out_dir / name for name in names]
        state = self.folder.parent
        with _locked(state / _LOCK):
            self._adopt_plain_files(state, known)
            for name in names:
                _link(f"{STATE_DIR}/{_CURRENT}/{name}", self.out_dir / name)
            _link(self.folder.name, state / _CURRENT)
            _fsync_dir(state)
            _fsync_dir(self.out_dir)
            prefix = f"{STATE_DIR}/{_CURRENT}/"
            for entry in self.out_dir.iterdir():
                ours = entry.is_symlink() and os.readlink(entry).startswith(prefix)
                if ours and entry.name not in names and not entry.exists():
                    entry.unlink()  # a report of an earlier set that this set lacks
            self._release()
            _clean_unlocked(state)
        return [self.out_dir / name for name in names]

    def _adopt_plain_files(self, state: Path, known: Sequence[str]) -> None:
        """Turn reports written as plain files (by older versions) into links, unchanged.

        The files visible now are gathered (hard links, no copy) into a set of their own,
        ``current`` points at it, and each plain file is swapped for a link to the same
        content: at every step the folder shows the same old set.
        """
        plain = [n for n in known if (self.out_dir / n).is_file()]
        plain = [n for n in plain if not (self.out_dir / n).is_symlink()]
        if not plain:
            return
        adopted = Path(_make_set_dir(state))
        for name in known:
            source = self.out_dir / name
            if source.exists():
                try:
                    os.link(os.path.realpath(source), adopted / name)
                except OSError:
                    shutil.copy2(source, adopted / name)
        _link(adopted.name, state / _CURRENT)
        for name in plain:
            _link(f"{STATE_DIR}/{_CURRENT}/{name}", self.out_dir / name)

    def _release(self) -> None:
        if self._lock is not None:
            self._lock.close()  # closing drops the lock
            self._lock = None

    def discard(self) -> None:
        """Remove the set (after a failure, or once its files were moved out)."""
        self._release()
        shutil.rmtree(self.folder, ignore_errors=True)


def _make_set_dir(state: Path) -> str:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    name = f"{_SET_PREFIX}{stamp}-{os.getpid()}-{secrets.token_hex(4)}"
    folder = state / name
    folder.mkdir(mode=_dir_mode())
    return str(folder)


def new_set(out_dir: Path) -> ReportSet:
    """Start a report set for ``out_dir`` (which exists): a fresh, locked ``set-*`` folder."""
    state = out_dir / STATE_DIR
    state.mkdir(mode=_dir_mode(), exist_ok=True)
    if not _atomic_possible():
        return ReportSet(out_dir, Path(_make_set_dir(state)), None)
    lock: Any
    with _locked(state / _LOCK):  # a cleaner never sees the set before its lock is held
        _clean_unlocked(state)
        folder = Path(_make_set_dir(state))
        lock = open(folder / _SET_LOCK, "wb")  # noqa: SIM115 # held until commit or discard
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
    return ReportSet(out_dir, folder, lock)
