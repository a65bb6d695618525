"""The judge's reply cache: SQLite from the standard library, one row per request.

A request is keyed by the SHA-256 of the endpoint, the non-secret headers and the body sent
(model, messages and every parameter), so any change to the prompt, the rubric or a parameter
is a new key and a re-run of the same judgment is a lookup. No secret is part of the key: a
rotated key finds the same rows. Replies are stored as the judge keeps them, with every secret
already replaced by ``***``.

The database runs in WAL mode, so several processes (or runs) can read and write one cache
file at once. A writer waits at most :data:`LOCK_WAIT_S` for another one; a cache locked for
longer, or one that is not a database, is reported with its path instead of stalling or failing
every item.

The cache decides verdicts, so it is trusted only when it is the user's own, as ssh trusts a
private key (:func:`check_private`): a new cache is created 0600 in a folder created 0700, and a
cache, companion file (``-wal``, ``-shm``, ``-journal``) or folder that another user owns or can
write is refused.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import stat
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite3

__all__ = [
    "LOCK_WAIT_S",
    "CacheUnusable",
    "JudgeCacheWarning",
    "ReplyCache",
    "check_private",
    "default_cache_dir",
    "encode_body",
    "probe_cache",
    "request_key",
]

#: How long (s) a statement waits for another process's write lock before the cache is given up.
LOCK_WAIT_S = 5.0
#: Part of every request key. Replies stored by earlier versions were kept before their secrets
#: were redacted, so they are never read.
KEY_VERSION = "itemscore-judge-cache/2"
_COMPANIONS = ("-wal", "-shm", "-journal")
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS replies "
    "(key TEXT PRIMARY KEY, reply TEXT NOT NULL, created REAL NOT NULL)",
    # Judgments whose request failed: the next run asks them again, and says how many it did.
    "CREATE TABLE IF NOT EXISTS failures (key TEXT PRIMARY KEY, created REAL NOT NULL)",
)


class CacheUnusable(OSError):
    """Raised when a cache file cannot be used: not the user's own, locked, or not a database.

    The message is a full sentence naming the path, what is wrong and the fix.
    """


class JudgeCacheWarning(UserWarning):
    """Warned when a cache fails during a run and the run goes on without it."""


def default_cache_dir() -> Path:
    r"""The user cache folder for itemscore, where platformdirs would put it.

    ``$XDG_CACHE_HOME/itemscore`` (else ``~/.cache/itemscore``) on Linux,
    ``~/Library/Caches/itemscore`` on macOS, ``%LOCALAPPDATA%\\itemscore\\Cache`` on Windows.
    ``ITEMSCORE_CACHE_DIR`` overrides all of them.
    """
    override = os.environ.get("ITEMSCORE_CACHE_DIR")
    if override:
        return Path(override)
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "itemscore" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "itemscore"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "itemscore"


def encode_body(body: Mapping[str, Any]) -> bytes:
    """The request body as sent: compact JSON, UTF-8, keys in the order the judge builds them."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def request_key(
    endpoint: str, payload: bytes, sample: int, headers: Sequence[tuple[str, str]] = ()
) -> str:
    """The cache key of one request: a hash of the endpoint, headers, body sent and sample.

    ``payload`` is the encoded body (:func:`encode_body`): model, messages and every
    parameter. ``headers`` are the extra non-secret headers sent (a header may select what
    answers); the key and secret headers are never part of it. ``sample`` tells apart the
    judgments of one item when ``samples > 1``: each is a reply of its own, and a re-run gets
    each one back.
    """
    import hashlib  # here: OpenSSL's hashes load with the first request, not with the listing

    # One line each: header names and values hold no line break (the options refuse them).
    lines = sorted(f"{name.lower()}: {value}\n" for name, value in headers) if headers else ()
    head = f"{KEY_VERSION}\n{endpoint}\n{sample}\n{''.join(lines)}\n"
    digest = hashlib.sha256(head.encode("utf-8"))
    digest.update(payload)
    return digest.hexdigest()


# -- ownership -------------------------------------------------------------------------------


def _private_group(gid: int, uid: int) -> bool:
    """Whether group ``gid`` is ``uid``'s alone (a user private group), as Debian's ssh asks.

    Group write access is harmless when the only member of the group is the owner: the group
    is someone's primary group only if that someone is ``uid``, and it lists at most ``uid``'s
    name as a further member.
    """
    import grp
    import pwd

    try:
        group = grp.getgrgid(gid)
        owner = pwd.getpwuid(uid).pw_name
    except KeyError:
        return False
    primary = [p for p in pwd.getpwall() if p.pw_gid == gid]
    if any(p.pw_uid != uid for p in primary):
        return False
    if any(member != owner for member in group.gr_mem):
        return False
    return bool(primary or group.gr_mem)


def _whose(uid: int) -> str:
    try:
        import pwd

        return f"user {pwd.getpwuid(uid).pw_name!r} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def _refusal(path: Path, info: os.stat_result, *, folder: bool) -> str | None:
    """Why ``path`` (a cache file or its folder) is not the user's own; ``None`` when it is."""
    uid = os.getuid()
    kind = "folder" if folder else "file"
    owners = (uid, 0) if folder else (uid,)  # a folder may be root's, as ssh allows
    if info.st_uid not in owners:
        return f"the {kind} {str(path)!r} belongs to {_whose(info.st_uid)}, not to you"
    mode = stat.S_IMODE(info.st_mode)
    if mode & stat.S_IWOTH:
        return f"the {kind} {str(path)!r} is writable by every user (mode {mode:04o})"
    if mode & stat.S_IWGRP and not _private_group(info.st_gid, uid):
        return f"the {kind} {str(path)!r} is writable by its group (mode {mode:04o})"
    return None


def check_private(path: str | os.PathLike[str]) -> list[str]:
    """Refuse a cache that is not the user's own, as ssh refuses a private key.

    The cache file (when it exists), its companions (``-wal``, ``-shm``, ``-journal``) and the
    folders holding the path and its target must be owned by the user (a folder may be
    root's) and writable by nobody else; group write access is allowed for a group that is the
    user's alone. Nothing is checked where POSIX ownership does not exist (Windows).

    Returns:
        Sentences about cache files others can read (their prompts and replies), each with
        the fix; the caller warns with them.

    Raises:
        CacheUnusable: the cache or a folder holding it is not the user's own.
    """
    if not hasattr(os, "getuid"):  # pragma: no cover - Windows: ACLs, not modes
        return []
    given = Path(path).absolute()
    target = given.resolve()
    folders = dict.fromkeys([given.parent, target.parent])
    files = [target, *(target.with_name(target.name + s) for s in _COMPANIONS)]
    problems: list[str] = []
    readable: list[str] = []
    for candidate, folder in [*((f, True) for f in folders), *((f, False) for f in files)]:
        try:
            info = os.stat(candidate)
        except FileNotFoundError:
            continue
        except OSError as exc:
            problems.append(f"{str(candidate)!r} cannot be examined ({exc.strerror or exc})")
            continue
        if not folder and not stat.S_ISREG(info.st_mode):
            problems.append(f"{str(candidate)!r} is not a plain file")
            continue
        reason = _refusal(candidate, info, folder=folder)
        if reason is not None:
            problems.append(reason)
        elif not folder and _readable_by_others(info):
            readable.append(
                f"The judge cache file {str(candidate)!r} can be read by other users "
                f"(mode {stat.S_IMODE(info.st_mode):04o}): they can read its prompts and "
                f"replies. Make it yours alone: chmod 600 {shlex.quote(str(candidate))}."
            )
    if problems:
        raise CacheUnusable(
            f"The judge cache {str(given)!r} is not yours alone, so its replies could be "
            f"someone else's: {'; '.join(problems)}. Use a cache in a folder of your own "
            "(`cache: true` for the user cache folder), make it yours (chown, chmod go-w), or "
            "set `cache` to false."
        )
    return readable


def _readable_by_others(info: os.stat_result) -> bool:
    mode = stat.S_IMODE(info.st_mode)
    if mode & stat.S_IROTH:
        return True
    return bool(mode & stat.S_IRGRP) and not _private_group(info.st_gid, os.getuid())


def _private_dir(folder: Path) -> None:
    """Create ``folder`` and any missing parent with mode 0700 (a user cache folder's mode)."""
    missing: list[Path] = []
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            break
        missing.append(candidate)
    for candidate in reversed(missing):
        with contextlib.suppress(FileExistsError):  # made meanwhile: checked after
            candidate.mkdir(mode=0o700)


def _create_private_file(path: Path) -> None:
    """Create ``path`` empty with mode 0600 (SQLite gives its companions the same mode)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    with contextlib.suppress(FileExistsError):  # an existing cache is checked, not replaced
        os.close(os.open(path, flags | getattr(os, "O_CLOEXEC", 0), 0o600))


# -- opening ---------------------------------------------------------------------------------


def _unusable(path: Path, exc: BaseException) -> CacheUnusable:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return CacheUnusable(
            f"The judge cache {str(path)!r} is locked by another program (still after "
            f"{LOCK_WAIT_S:g} s). Close the program holding it, or set `cache` to another file "
            "or to false."
        )
    if isinstance(exc, OSError):
        return CacheUnusable(
            f"The judge cache {str(path)!r} cannot be opened: {exc.strerror or exc}. Set "
            "`cache` to a file in a folder you can write, or to false."
        )
    if "not a judge cache" in text:
        return CacheUnusable(
            f"The judge cache {str(path)!r} is another program's SQLite database ({text}); "
            "it is left as it is. Set `cache` to another file, or to false."
        )
    return CacheUnusable(
        f"The judge cache {str(path)!r} is not a usable SQLite database ({text}). Delete it "
        "(it holds only cached replies), or set `cache` to another file or to false."
    )


def _connect(path: Path) -> sqlite3.Connection:
    import sqlite3  # here, not at module level: listing the metrics needs no database

    # isolation_level=None: each statement commits on its own (no open transaction holding
    # the write lock between replies).
    db = sqlite3.connect(path, timeout=LOCK_WAIT_S, isolation_level=None, check_same_thread=False)
    try:
        db.execute(f"PRAGMA busy_timeout = {int(LOCK_WAIT_S * 1000)}")
        # Another program's database is never changed: only a cache is switched to WAL.
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        others = sorted(tables - {"replies", "failures", "sqlite_autoindex_replies_1",
                                  "sqlite_autoindex_failures_1"})  # fmt: skip
        if others:
            raise sqlite3.DatabaseError(f"it is not a judge cache: it holds {others}")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        for statement in _SCHEMA:
            db.execute(statement)
        columns = [row[1] for row in db.execute("PRAGMA table_info(replies)")]
        if columns[:3] != ["key", "reply", "created"]:
            raise sqlite3.DatabaseError(f"its table 'replies' has the columns {columns}")
    except BaseException:
        db.close()
        raise
    return db


def probe_cache(path: str | os.PathLike[str]) -> list[str]:
    """Check, before any item is scored, that the cache at ``path`` can be used.

    Ownership is checked (:func:`check_private`); an existing file is opened and must be a
    cache database whose write lock can be had within :data:`LOCK_WAIT_S`. Nothing is
    created: a missing cache is made with the first reply.

    Returns:
        What :func:`check_private` says about files others can read.

    Raises:
        CacheUnusable: the cache is not the user's own, locked, or not a database.
    """
    import sqlite3

    path = Path(path)
    notes = check_private(path)
    if not path.exists():
        return notes
    try:
        db = _connect(path)
    except (sqlite3.Error, OSError) as exc:
        raise _unusable(path, exc) from None
    try:
        db.execute("BEGIN IMMEDIATE")
        db.execute("ROLLBACK")
    except sqlite3.Error as exc:
        raise _unusable(path, exc) from None
    finally:
        db.close()
    return notes


class ReplyCache:
    """Replies by request key, in one SQLite file; safe for concurrent writers.

    Args:
        path: The database file. It and its folder are created when missing (0600 and 0700);
            one that is not the user's own is refused.

    Raises:
        CacheUnusable: the cache is not the user's own, is locked, or is not a database.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        import sqlite3

        self.path = Path(path)
        check_private(self.path)
        try:
            _private_dir(self.path.parent)
            _create_private_file(self.path)
            check_private(self.path)  # again: the folder may have been made by someone else
            self._db = _connect(self.path)
        except (sqlite3.Error, OSError) as exc:
            if isinstance(exc, CacheUnusable):
                raise
            raise _unusable(self.path, exc) from None

    def get(self, key: str) -> dict[str, Any] | None:
        """The reply stored under ``key``, or ``None`` (also for a row that is not JSON).

        Raises:
            sqlite3.Error: the database failed (locked past :data:`LOCK_WAIT_S`, corrupt).
        """
        row = self._db.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            value = json.loads(row[0])
        except (TypeError, ValueError):
            return None  # a damaged row is a miss; the next reply replaces it
        return value if isinstance(value, dict) else None

    def put(self, key: str, reply: Mapping[str, Any], *, failed_before: bool = False) -> None:
        """Store ``reply`` under ``key`` (a later reply for the same key replaces it).

        ``failed_before``: the request had failed before (:meth:`failed_before`); that record
        is removed with it.

        Raises:
            sqlite3.Error: the database failed (locked past :data:`LOCK_WAIT_S`, corrupt).
        """
        self._db.execute(
            "INSERT OR REPLACE INTO replies (key, reply, created) VALUES (?, ?, ?)",
            (key, json.dumps(reply, ensure_ascii=False), time.time()),
        )
        if failed_before:
            self._db.execute("DELETE FROM failures WHERE key = ?", (key,))

    def failed_before(self, key: str) -> bool:
        """Whether the request under ``key`` failed in an earlier attempt and got no reply."""
        row = self._db.execute("SELECT 1 FROM failures WHERE key = ?", (key,)).fetchone()
        return row is not None

    def put_failure(self, key: str) -> None:
        """Remember that the request under ``key`` failed (its reply is asked again next time)."""
        self._db.execute(
            "INSERT OR REPLACE INTO failures (key, created) VALUES (?, ?)", (key, time.time())
        )

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM replies").fetchone()[0])

    def close(self) -> None:
        """Close the database connection."""
        self._db.close()

    def __repr__(self) -> str:
        return f"<ReplyCache {str(self.path)!r}>"
