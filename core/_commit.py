"""Switching a whole report set into place in one atomic step, and removing what kills left.

The layout inside the output folder ``DIR`` (as Kubernetes' atomic volume writer does it)::

    DIR/results.json  -> .itemscore/current/results.json     one link per report, made once
    DIR/.itemscore/current -> set-20261130T2300-4242-k3j9     the one link that is switched
    DIR/.itemscore/set-20261130T2300-4242-k3j9/               a complete report set
    DIR/.itemscore/lock                                      held by the one run writing DIR

A run first claims ``DIR`` (:func:`claim`): it locks ``.itemscore/lock`` for as long as it
writes, and a second run into the same folder is refused at once (:class:`FolderBusyError`),
before it scores anything; the system frees the lock when its holder dies, even by
``kill -9``. A lock is held by an open file, which a forked child (a process-pool worker)
would share and keep after its parent's death: a child gives up its copies of the run's locks
as it starts. A lock still held while the process it names is gone (its pid is not running, or
runs another process: a different start time; on this host) is taken over.

The claimant writes its whole set into a fresh ``set-*`` folder (holding a lock on its
``.lock`` file too), then replaces ``current`` by one ``rename``. A kill at any moment
leaves ``DIR`` showing either the old complete set or the new complete set. The claimant
removes every ``set-*`` folder that is neither current nor locked by a live writer: only this
pattern, only inside ``.itemscore``.

A file in ``DIR`` is itemscore's when it is a link into ``.itemscore/current`` (:func:`owner`);
anything else under a report's name is the user's and is never replaced or removed. A folder
copied with its links followed (``cp -rL``, ``shutil.copytree``) has ``current`` as a folder
and plain copies for reports (:func:`followed_copy`): it is refused before any work, since no
rename can put a link in a folder's place atomically and the copies cannot be told from files
the user made.

Where symbolic links or ``fcntl`` locks are missing (Windows), the reports are renamed into
place one by one: never a half-written file, but no all-or-nothing guarantee across a crash;
a manifest of their SHA-256 (``.itemscore/manifest.json``) then tells itemscore's files from
the user's.
"""

from __future__ import annotations

import contextlib
import enum
import json
import os
import secrets
import shutil
import socket
import sys
import time
import weakref
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO, Any

from ._exceptions import ItemscoreError
from .display._text import printable

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "STATE_DIR",
    "Claim",
    "FolderBusyError",
    "Owner",
    "ReportSet",
    "busy_holder",
    "busy_message",
    "claim",
    "clean_stale",
    "followed_copy",
    "hold",
    "owner",
    "remove_unheld",
]

#: The folder inside ``DIR`` that holds the report sets.
STATE_DIR = ".itemscore"
_CURRENT = "current"
_SET_PREFIX = "set-"
_NEW_LINK = ".itemscore-new-"  # temporary links: ".<name>.itemscore-new-<token>"
_LOCK = "lock"
_SET_LOCK = ".lock"
_TAKEOVER = ".takeover"
_MANIFEST = "manifest.json"


class FolderBusyError(ItemscoreError):
    """Raised when another live process is writing reports into the same output folder."""


class Owner(enum.Enum):
    """Who made what sits in ``DIR`` under a report's name."""

    #: Nothing is there.
    FREE = "free"
    #: A link into ``.itemscore/current``: a report of the current set.
    ITEMSCORE = "itemscore"
    #: A folder, or a link to one.
    FOLDER = "folder"
    #: Anything else: a file the user made (or changed).
    USER = "user"


#: The lock files this process holds (claims, sets being written): a forked child drops them.
_HELD: weakref.WeakSet[IO[bytes]] = weakref.WeakSet()


def _drop_held_in_child() -> None:
    """In a forked child: let go of the parent's locks, which the child shares otherwise.

    Each descriptor is pointed at ``/dev/null`` rather than closed: the lock is released by
    the child (never unlocked: that would free the parent's too), and the child's file object
    stays valid, so nothing it does later can close a descriptor reused meanwhile.
    """
    handles = [handle for handle in list(_HELD) if not handle.closed]
    if not handles:
        return
    null = os.open(os.devnull, os.O_RDWR)
    try:
        for handle in handles:
            with contextlib.suppress(OSError, ValueError):
                os.dup2(null, handle.fileno())
            _HELD.discard(handle)
    finally:
        os.close(null)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_drop_held_in_child)


def _process_start(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks after boot, Linux), or ``None`` if unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: count after its last ')'.
    fields = stat[stat.rfind(b")") + 2 :].split()
    try:
        return int(fields[19])  # field 22, starttime
    except (IndexError, ValueError):
        return None


def _holder_gone(info: dict[str, Any]) -> bool:
    """Whether the process a lock file names is known to be gone (not merely unknown)."""
    pid = info.get("pid")
    if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 0:
        return False
    host = info.get("host")
    if host is not None and host != socket.gethostname():
        return False  # a process of another machine (a shared folder): it cannot be checked
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # alive, another user's
    start = info.get("pid_start")
    now = _process_start(pid)
    return isinstance(start, int) and now is not None and now != start


def _holder_info(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_bytes()[:4096].decode("utf-8", errors="replace"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _take_over(path: Path) -> IO[bytes] | None:
    """The lock at ``path``, taken over when the process it names is gone; else ``None``.

    Runs that find one stale lock at once take turns (a lock beside it), so only one
    replaces it: the others then see the new holder, alive.
    """
    with open(path.with_name(f"{path.name}{_TAKEOVER}"), "a+b") as turn:
        fcntl.flock(turn.fileno(), fcntl.LOCK_EX)  # held for a moment, by one claimant
        handle = _open_locked(path)
        if handle is not None:  # freed meanwhile
            return handle
        info = _holder_info(path)
        if info is None or not _holder_gone(info):
            return None
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # whoever still holds the old file holds nothing that counts
        return _open_locked(path)


def _atomic_possible() -> bool:
    return fcntl is not None and hasattr(os, "symlink") and os.name != "nt"


def _dir_mode() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o777 & ~mask


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


# -- who made what ---------------------------------------------------------------------------


def _link_target(name: str) -> str:
    return f"{STATE_DIR}/{_CURRENT}/{name}"


def owner(out_dir: Path, name: str) -> Owner:
    """Who made ``out_dir/name``: itemscore only for a link into ``.itemscore/current``.

    A plain file is the user's, except where links are missing (Windows): there a file whose
    SHA-256 the manifest of the last set records is itemscore's.
    """
    path = out_dir / name
    if path.is_symlink():
        if os.readlink(path) == _link_target(name):
            return Owner.ITEMSCORE
        return Owner.FOLDER if path.is_dir() else Owner.USER
    if not path.exists():
        return Owner.FREE
    if path.is_dir():
        return Owner.FOLDER
    if not _atomic_possible() and _in_manifest(out_dir, name):
        return Owner.ITEMSCORE
    return Owner.USER


def followed_copy(out_dir: Path) -> bool:
    """Whether ``out_dir`` was copied with its links followed: ``current`` became a folder."""
    current = out_dir / STATE_DIR / _CURRENT
    return current.is_dir() and not current.is_symlink()


def _in_manifest(out_dir: Path, name: str) -> bool:
    from .engine._store import file_sha256

    try:
        manifest = json.loads((out_dir / STATE_DIR / _MANIFEST).read_text(encoding="utf-8"))
        recorded = manifest.get(name) if isinstance(manifest, dict) else None
        return isinstance(recorded, str) and recorded == file_sha256(out_dir / name)
    except (OSError, ValueError):
        return False


# -- the claim on a folder -------------------------------------------------------------------


def _open_locked(path: Path) -> IO[bytes] | None:
    """``path`` opened (created when missing) and locked, or ``None`` when a live process holds it.

    A holder may remove the file while it holds it (when it removes the folder it created):
    a lock taken on the removed file is dropped and taken again on the file now there.
    """
    while True:
        handle = open(path, "a+b")  # noqa: SIM115 # returned locked, or closed below
        if not _try_lock(handle):
            handle.close()
            return None
        try:
            same = os.path.samestat(os.fstat(handle.fileno()), os.stat(path))
        except FileNotFoundError:
            same = False
        if same:
            return handle
        handle.close()


#: How long a refused run waits for a holder that has just locked the folder to say who it is.
_HOLDER_WAIT = 2.0


def _holder_text(handle: IO[bytes]) -> str:
    # The holder locks the file, then writes who it is: a run refused in between waits a moment
    # for that, so that its message names the holder.
    waited = 0.0
    while True:
        handle.seek(0)
        try:
            info = json.loads(handle.read(4096).decode("utf-8", errors="replace"))
            break
        except ValueError:
            if waited >= _HOLDER_WAIT:
                return "another itemscore process"
            time.sleep(0.05)
            waited += 0.05
    if not isinstance(info, dict):
        return "another itemscore process"
    command = " ".join(str(part) for part in info.get("command", []))
    if len(command) > 160:
        command = command[:157] + "..."
    since = info.get("started", "?")
    text = f"another itemscore process (pid {info.get('pid', '?')}, since {since}"
    return printable(f"{text}: {command})" if command else f"{text})")


def busy_holder(out_dir: Path) -> str | None:
    """Who is writing reports into ``out_dir`` now, or ``None`` when nobody is.

    A lock whose holder is gone (see :func:`_holder_gone`) counts as nobody: the next claim
    takes it over.
    """
    path = out_dir / STATE_DIR / _LOCK
    if not _atomic_possible() or path.is_symlink():
        return None
    try:
        handle = open(path, "rb")  # noqa: SIM115 # closed below
    except OSError:
        return None
    with handle:
        if _try_lock(handle):
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
            return None
        info = _holder_info(path)
        if info is not None and _holder_gone(info):
            return None
        return _holder_text(handle)


def busy_message(out_dir: Path, holder: str) -> str:
    """The message of a run refused because ``holder`` is writing into ``out_dir``."""
    return (
        f"The output folder {printable(os.fspath(out_dir))} is being written by {holder}. Two "
        "runs into one folder would replace each other's reports, so this run stopped before "
        "writing anything: wait for the other to finish, or write into another folder."
    )


class Claim:
    """The right to write the next report set of a folder, held from the run's start.

    Made by :func:`claim`; :meth:`release` gives it up (the system does at the process's death).
    """

    def __init__(self, out_dir: Path, handle: IO[bytes] | None, created: Sequence[Path]) -> None:
        #: The output folder.
        self.out_dir = out_dir
        #: The folder of the report sets.
        self.state = out_dir / STATE_DIR
        self._handle = handle
        self._created = list(created)

    def new_set(self) -> ReportSet:
        """A fresh, locked ``set-*`` folder to write the reports into."""
        if not _atomic_possible():
            return ReportSet(self, _make_set_dir(self.state), None)
        _clean_unlocked(self.state)
        folder = _make_set_dir(self.state)
        lock = open(folder / _SET_LOCK, "wb")  # noqa: SIM115 # held until commit or discard
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        _HELD.add(lock)
        return ReportSet(self, folder, lock)

    def release(self, *, remove_created: bool = False) -> None:
        """Give the folder up; with ``remove_created``, remove the folders the claim made.

        A folder is removed only when it is empty (nothing else was put there meanwhile).
        """
        if remove_created and self._created:
            if self.state in self._created:
                with contextlib.suppress(OSError):  # removed while held: see _open_locked
                    (self.state / _LOCK).unlink(missing_ok=True)
                    (self.state / _MANIFEST).unlink(missing_ok=True)
            for folder in self._created:  # deepest first
                try:
                    folder.rmdir()
                except OSError:
                    break  # not empty after all: something else wrote there meanwhile
        self._created = []
        if self._handle is not None:
            self._handle.close()  # closing drops the lock
            self._handle = None


def claim(out_dir: Path, *, command: Sequence[str] | None = None) -> Claim:
    """Claim ``out_dir`` for one report set: create it when missing and lock it.

    Args:
        out_dir: The output folder (checked by :func:`~._preflight.check_out_dir`).
        command: What to show a run refused meanwhile (default: ``sys.argv``).

    Raises:
        FolderBusyError: another live process holds the folder.
        OSError: a folder cannot be created.
    """
    missing = [p for p in (out_dir, *out_dir.parents) if not os.path.lexists(p)]
    out_dir.mkdir(parents=True, exist_ok=True)
    state = out_dir / STATE_DIR
    created = list(missing)
    try:
        state.mkdir(mode=_dir_mode())
        created.insert(0, state)
    except FileExistsError:
        pass
    if not _atomic_possible():
        return Claim(out_dir, None, created)
    handle = _open_locked(state / _LOCK) or _take_over(state / _LOCK)
    if handle is None:
        holder = busy_holder(out_dir) or "another itemscore process"
        Claim(out_dir, None, created).release(remove_created=True)
        raise FolderBusyError(busy_message(out_dir, holder))
    _HELD.add(handle)
    info = {
        "pid": os.getpid(),
        "pid_start": _process_start(os.getpid()),
        "host": socket.gethostname(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "command": list(sys.argv if command is None else command),
    }
    handle.seek(0)
    handle.truncate()
    handle.write(json.dumps(info).encode("utf-8", errors="backslashreplace"))
    handle.flush()
    return Claim(out_dir, handle, created)


def _current_target(state: Path) -> str | None:
    try:
        return os.readlink(state / _CURRENT)
    except OSError:
        return None


def _clean_unlocked(state: Path) -> list[Path]:
    """Remove stale sets and temporary links; the caller holds the folder's claim."""
    current = _current_target(state)
    removed: list[Path] = []
    for entry in state.iterdir():
        name = entry.name
        if name.startswith(_SET_PREFIX) and name != current and entry.is_dir():
            if not entry.is_symlink() and not _writer_alive(entry):
                shutil.rmtree(entry, ignore_errors=True)
                removed.append(entry)
        elif _NEW_LINK in name and entry.is_symlink():
            entry.unlink(missing_ok=True)  # only claimants make these: this one was killed
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
    and renamed by the folder's claimant, so any found by a claimant is stale), are removed.
    Nothing is removed while another process holds the folder.

    Returns:
        What was removed.
    """
    state = out_dir / STATE_DIR
    if not _atomic_possible() or not state.is_dir() or state.is_symlink():
        return []
    handle = _open_locked(state / _LOCK)
    if handle is None:
        return []
    with handle:
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

    def __init__(self, claim: Claim, folder: Path, lock: IO[bytes] | None) -> None:
        #: The claim on the output folder the set is for.
        self.claim = claim
        #: The output folder the set is for.
        self.out_dir = claim.out_dir
        #: Where the writers put the reports, under their final names.
        self.folder = folder
        self._lock = lock

    def commit(self, names: Sequence[str]) -> list[Path]:
        """Make this set the one ``out_dir`` shows, in one atomic step.

        Every name is checked again first: a file the user put there while the run scored is
        never replaced (the set is then discarded and the error raised).

        Args:
            names: The file names of this set.

        Returns:
            The report paths in ``out_dir``, in the order of ``names``.

        Raises:
            ItemscoreError: a report's name is taken by a file or folder itemscore did not
                make.
        """
        try:
            self._check_names(names)
        except BaseException:
            self.discard()
            raise
        if not _atomic_possible():
            from .engine._store import file_sha256

            manifest = {}
            for name in names:
                manifest[name] = file_sha256(self.folder / name)
                os.replace(self.folder / name, self.out_dir / name)
            _write_manifest(self.claim.state, manifest)
            self.discard()
            return [self.out_dir / name for name in names]
        state = self.claim.state
        for name in names:
            _link(_link_target(name), self.out_dir / name)
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

    def _check_names(self, names: Sequence[str]) -> None:
        for name in names:
            found = owner(self.out_dir, name)
            if found in (Owner.USER, Owner.FOLDER):
                what = "a folder" if found is Owner.FOLDER else "a file itemscore did not write"
                where = printable(os.fspath(self.out_dir / name))
                raise ItemscoreError(
                    f"{where} appeared while the run was scoring, and it is {what}; itemscore "
                    f"never replaces one, so the new reports were not put in place and "
                    f"{printable(os.fspath(self.out_dir))} is as it was. Move {where} away and "
                    "run again, or write into another folder."
                )

    def _release(self) -> None:
        if self._lock is not None:
            self._lock.close()  # closing drops the lock
            self._lock = None

    def discard(self) -> None:
        """Remove the set (after a failure, or once its files were moved out)."""
        self._release()
        shutil.rmtree(self.folder, ignore_errors=True)


def _write_manifest(state: Path, manifest: dict[str, str]) -> None:
    tmp = state / f".{_MANIFEST}.{secrets.token_hex(4)}"
    tmp.write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    os.replace(tmp, state / _MANIFEST)


def _make_set_dir(state: Path) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    folder = state / f"{_SET_PREFIX}{stamp}-{os.getpid()}-{secrets.token_hex(4)}"
    folder.mkdir(mode=_dir_mode())
    return folder
