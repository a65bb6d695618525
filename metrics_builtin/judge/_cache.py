"""The judge's reply cache: SQLite from the standard library, one row per request.

A request is keyed by the SHA-256 of its canonical JSON form (endpoint, model, messages and
every parameter sent), so any change to the prompt, the rubric or a parameter is a new key and
a re-run of the same judgment is a lookup. The database runs in WAL mode with a busy timeout,
so several processes (or runs) can read and write one cache file at once.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["ReplyCache", "default_cache_dir", "encode_body", "request_key"]

# How long a writer waits for another process's transaction before giving up (ms).
_BUSY_TIMEOUT_MS = 30_000
_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    reply TEXT NOT NULL,
    created REAL NOT NULL
)
"""


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


def request_key(endpoint: str, payload: bytes, sample: int) -> str:
    """The cache key of one request: a hash of the endpoint, the body sent and the sample.

    ``payload`` is the encoded body (:func:`encode_body`): model, messages and every
    parameter. ``sample`` tells apart the judgments of one item when ``samples > 1``: each is a
    reply of its own, and a re-run gets each one back.
    """
    import hashlib  # here: OpenSSL's hashes load with the first request, not with the listing

    digest = hashlib.sha256(f"{endpoint}\n{sample}\n".encode())
    digest.update(payload)
    return digest.hexdigest()


class ReplyCache:
    """Replies by request key, in one SQLite file; safe for concurrent writers.

    Args:
        path: The database file; its folder is created when missing.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        import sqlite3  # here, not at module level: listing the metrics needs no database

        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: each statement commits on its own (no open transaction
        # holding the write lock between replies).
        self._db = sqlite3.connect(
            self.path, timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None,
            check_same_thread=False,
        )  # fmt: skip
        self._db.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA synchronous = NORMAL")
        self._db.execute(_SCHEMA)

    def get(self, key: str) -> dict[str, Any] | None:
        """The reply stored under ``key``, or ``None``."""
        row = self._db.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        value = json.loads(row[0])
        return value if isinstance(value, dict) else None

    def put(self, key: str, reply: Mapping[str, Any]) -> None:
        """Store ``reply`` under ``key`` (a later reply for the same key replaces it)."""
        self._db.execute(
            "INSERT OR REPLACE INTO replies (key, reply, created) VALUES (?, ?, ?)",
            (key, json.dumps(reply, ensure_ascii=False), time.time()),
        )

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM replies").fetchone()[0])

    def close(self) -> None:
        """Close the database connection."""
        self._db.close()

    def __repr__(self) -> str:
        return f"<ReplyCache {str(self.path)!r}>"
