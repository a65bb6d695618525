"""The judge's cache: the user's own, never a stall, never silent, and honest about re-asks.

Ownership is tested with modes and a pretended uid (a test cannot chown as a plain user);
locks are held by a second SQLite connection of the test itself, for a wait shortened to
0.2 s.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import stat
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from itemscore import ItemResult, OptionError, Status, plan, score
from itemscore.metrics_builtin.judge import LlmJudge, ReplyCache, _cache, _http
from itemscore.metrics_builtin.judge.stub import StubReply, StubRequest, StubServer

LABEL = "llm_judge"
#: ``_cache.JudgeCacheWarning`` is a UserWarning: matched by message, so that the same test
#: shows what a version without the class does.
JudgeCacheWarning = UserWarning
posix_only = pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX ownership")


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test writes to the real user cache; waits for a lock are short; backoff not slept."""
    monkeypatch.setenv("ITEMSCORE_CACHE_DIR", str(tmp_path / "user-cache"))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setattr(_cache, "LOCK_WAIT_S", 0.2, raising=False)
    real_sleep = asyncio.sleep

    async def no_wait(delay: float) -> None:
        await real_sleep(0)

    monkeypatch.setattr(_http, "sleep", no_wait)


@pytest.fixture
def server() -> Iterator[StubServer]:
    """A stub that passes every answer (a test may change its script)."""
    with StubServer(lambda request: StubReply.verdict("pass")) as stub:
        yield stub


def items(n: int) -> list[ItemResult]:
    return [ItemResult(id=f"q{i}", output=f"answer <item-{i}>") for i in range(n)]


def statuses(result: Any) -> list[Status]:
    return [item.scores[LABEL].status for item in result.items]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def plant(path: Path) -> None:
    """A file another user could have left for SQLite to take up (here: writable by all)."""
    path.write_bytes(b"")
    path.chmod(0o646)


@pytest.fixture
def filled(server: StubServer, tmp_path: Path) -> Path:
    """A cache in a folder of the user's own, holding the replies for ``items(3)``."""
    folder = tmp_path / "own"
    folder.mkdir(mode=0o700)
    path = folder / "judge.sqlite3"
    score(items(3), [server.spec(cache=str(path))])
    server.requests.clear()
    return path


# -- owned by the user -----------------------------------------------------------------------


@posix_only
def test_caches_are_created_for_the_user_alone(server: StubServer, tmp_path: Path) -> None:
    """The user cache folder is made 0700, the cache and its companions 0600, whatever umask."""
    old = os.umask(0o002)
    try:
        score(items(2), [server.spec(cache=True)])
    finally:
        os.umask(old)
    folder = tmp_path / "user-cache"
    assert mode(folder) == 0o700
    files = sorted(folder.iterdir())
    assert files[0].name == "judge-cache.sqlite3"
    assert {p.name: mode(p) for p in files} == {p.name: 0o600 for p in files}


@posix_only
@pytest.mark.parametrize(
    ("change", "words"),
    [
        pytest.param(lambda p: p.chmod(0o666), "writable by every user", id="file-0666"),
        pytest.param(lambda p: p.parent.chmod(0o777), "writable by every user", id="folder-0777"),
        pytest.param(lambda p: p.parent.chmod(0o1777), "writable by every user", id="sticky-tmp"),
        pytest.param(lambda p: plant(p.with_name(p.name + "-wal")), "writable by every",
                     id="planted-wal"),
    ],
)  # fmt: skip
def test_a_cache_others_can_write_is_refused(
    server: StubServer, filled: Path, change: Any, words: str
) -> None:
    """Someone else could have planted its rows: refused before scoring, naming the path."""
    change(filled)
    with pytest.raises(OptionError) as caught:
        score(items(3), [server.spec(cache=str(filled))])
    message = str(caught.value)
    assert str(filled) in message
    assert words in message
    assert "chmod go-w" in message
    assert server.requests == []
    assert caught.value.option == "cache"


@posix_only
def test_a_cache_of_another_user_is_refused(
    server: StubServer, filled: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache whose owner is not the user (here: the user pretends to be uid+1) is refused."""
    real = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: real + 1)
    with pytest.raises(OptionError, match="belongs to"):
        score(items(3), [server.spec(cache=str(filled))])
    assert server.requests == []


@posix_only
def test_a_cache_others_can_read_is_a_warning(server: StubServer, filled: Path) -> None:
    """Readable by others (caches of earlier versions were 0644): used, with chmod advice."""
    filled.chmod(0o644)
    with pytest.warns(JudgeCacheWarning, match="chmod 600"):
        result = score(items(3), [server.spec(cache=str(filled))])
    assert result.measurements["default.llm_judge"].extra["cache_hits"] == 3


@posix_only
def test_group_write_is_allowed_for_a_private_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As Debian's ssh: group write is fine when the group is the user's alone."""
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o770)
    monkeypatch.setattr(_cache, "_private_group", lambda gid, uid: True)
    assert _cache.check_private(folder / "c.sqlite3") == []
    monkeypatch.setattr(_cache, "_private_group", lambda gid, uid: False)
    with pytest.raises(_cache.CacheUnusable, match="writable by its group"):
        _cache.check_private(folder / "c.sqlite3")


@posix_only
def test_private_group_reads_the_user_and_group_databases(monkeypatch: pytest.MonkeyPatch) -> None:
    """A group is private when only its owner has it as primary group or lists it as member."""
    import grp
    import pwd

    users = [pwd.struct_passwd(("me", "x", 1000, 1000, "", "/h", "/bin/sh")),
             pwd.struct_passwd(("you", "x", 1001, 1001, "", "/h", "/bin/sh"))]  # fmt: skip
    groups = {1000: grp.struct_group(("me", "x", 1000, [])),
              1001: grp.struct_group(("you", "x", 1001, ["me"])),
              50: grp.struct_group(("staff", "x", 50, ["me", "you"]))}  # fmt: skip
    monkeypatch.setattr(pwd, "getpwall", lambda: users)
    monkeypatch.setattr(pwd, "getpwuid", lambda uid: next(u for u in users if u.pw_uid == uid))
    monkeypatch.setattr(grp, "getgrgid", groups.__getitem__)
    assert _cache._private_group(1000, 1000) is True
    assert _cache._private_group(1001, 1000) is False  # someone else's primary group
    assert _cache._private_group(50, 1000) is False  # a group with two members


# -- locked and corrupt caches ---------------------------------------------------------------


def test_a_locked_cache_fails_fast_naming_the_path(server: StubServer, filled: Path) -> None:
    """Another program holds the write lock: the run stops before scoring, naming the cache."""
    holder = sqlite3.connect(filled, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(OptionError) as caught:
            score(items(3), [server.spec(cache=str(filled))])
    finally:
        holder.close()
    assert str(filled) in str(caught.value)
    assert "locked by another program" in str(caught.value)
    assert server.requests == []


def test_a_cache_locked_during_the_run_is_given_up_with_a_warning(
    server: StubServer, filled: Path
) -> None:
    """Locked after the run was configured: one short wait, a warning, every item still judged."""
    configured = plan([server.spec(cache=str(filled))])
    server.script = lambda request: StubReply.verdict("fail")
    holder = sqlite3.connect(filled, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.warns(JudgeCacheWarning, match="failed during the run") as caught:
            result = score(items(6), configured)
    finally:
        holder.close()
    assert str(filled) in str(caught[0].message)
    assert len(caught) == 1
    assert statuses(result) == [Status.OK] * 3 + [Status.FAIL] * 3  # 3 hits, then 3 asked
    assert len(server.requests) == 3


def test_a_corrupt_cache_fails_fast_naming_the_path(server: StubServer, filled: Path) -> None:
    """A cache that is not a database: exit before scoring, never every item an error."""
    filled.write_bytes(b"this is not a database\n" * 200)
    for companion in ("-wal", "-shm"):
        filled.with_name(filled.name + companion).unlink(missing_ok=True)
    with pytest.raises(OptionError, match="not a usable SQLite database") as caught:
        score(items(3), [server.spec(cache=str(filled))])
    assert str(filled) in str(caught.value)
    assert "Delete it" in str(caught.value)
    assert server.requests == []


def test_a_cache_corrupted_during_the_run_is_given_up_with_a_warning(
    server: StubServer, filled: Path
) -> None:
    """Damaged after configuration: a warning naming it, and every item judged without it."""
    configured = plan([server.spec(cache=str(filled))])
    for companion in ("-wal", "-shm"):
        filled.with_name(filled.name + companion).unlink(missing_ok=True)
    filled.write_bytes(b"\x00garbage" * 1000)
    with pytest.warns(JudgeCacheWarning, match="not a usable SQLite database"):
        result = score(items(3), configured)
    assert set(statuses(result)) <= {Status.OK, Status.FAIL}
    assert len(server.requests) == 3


def test_another_programs_database_is_left_alone(server: StubServer, tmp_path: Path) -> None:
    """`cache` naming some other SQLite file: refused, and the file is not changed."""
    other = tmp_path / "app.db"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE users (name TEXT)")
    db.commit()
    db.close()
    before = other.read_bytes()
    with pytest.raises(OptionError, match="another program's SQLite database"):
        score(items(1), [server.spec(cache=str(other))])
    assert other.read_bytes() == before
    assert not other.with_name("app.db-wal").exists()


def test_a_damaged_row_is_a_miss(server: StubServer, filled: Path) -> None:
    """A row whose reply is not JSON is asked again and replaced, not every item's error."""
    db = sqlite3.connect(filled, isolation_level=None)
    db.execute("UPDATE replies SET reply = '{not json'")
    db.close()
    result = score(items(3), [server.spec(cache=str(filled))])
    assert set(statuses(result)) <= {Status.OK, Status.FAIL}
    assert len(server.requests) == 3
    again = score(items(3), [server.spec(cache=str(filled))])
    assert again.measurements["default.llm_judge"].extra["cache_hits"] == 3


def test_the_command_line_exits_2_naming_a_corrupt_cache(
    server: StubServer, tmp_path: Path
) -> None:
    """`itemscore score` with a corrupt cache: exit 2, the path on stderr, nothing scored."""
    data = tmp_path / "out.jsonl"
    data.write_text('{"id": "a", "output": "x"}\n', encoding="utf-8")
    cache = tmp_path / "broken.sqlite3"
    cache.write_bytes(b"garbage" * 100)
    spec = (f"llm_judge:model=stub,base_url={server.base_url},api_key_env=null,"
            f"cache={cache}")  # fmt: skip
    done = subprocess.run(
        [str(Path(sys.executable).with_name("itemscore")), "score", str(data), "-m", spec],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert str(cache) in done.stderr
    assert server.requests == []


def test_cache_warnings_are_said_once_per_process(tmp_path: Path) -> None:
    """A cache that fails when a session opens is given up once, not once per item or shard."""
    path = tmp_path / "c.sqlite3"
    metric = LlmJudge(model="m", api_key_env=None, cache=str(path))
    path.write_bytes(b"garbage" * 100)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert metric._open_cache() is None
        assert metric._open_cache() is None
    assert len(seen) == 1
    assert str(path) in str(seen[0].message)


# -- a second run re-asks what failed --------------------------------------------------------


def test_a_second_run_reasks_failed_judgments_and_counts_them(tmp_path: Path) -> None:
    """Failed requests are not cached: the next run asks them again and reports `reasked`."""
    cache = str(tmp_path / "judge.sqlite3")
    down = {"on": True}

    def reply(request: StubRequest) -> StubReply:
        if down["on"] and "<item-1>" in request.last_message:
            return StubReply.error(503, "overloaded")
        return StubReply.verdict("pass")

    with StubServer(reply) as server:
        first = score(items(4), [server.spec(cache=cache, max_retries=1)])
        down["on"] = False
        second = score(items(4), [server.spec(cache=cache, max_retries=1)])
        third = score(items(4), [server.spec(cache=cache, max_retries=1)])
    assert statuses(first)[1] is Status.ERROR
    m1 = first.measurements["default.llm_judge"].extra
    assert (m1["requests"], m1["reasked"], m1["cache_hits"]) == (5, 0, 0)
    assert statuses(second) == [Status.OK] * 4
    m2 = second.measurements["default.llm_judge"].extra
    assert (m2["requests"], m2["reasked"], m2["cache_hits"]) == (1, 1, 3)
    assert second.items[1].scores[LABEL].extra["reasked"] == 1
    m3 = third.measurements["default.llm_judge"].extra
    assert (m3["requests"], m3["reasked"], m3["cache_hits"]) == (0, 0, 4)


def test_the_cache_file_holds_no_row_from_an_earlier_key_scheme(tmp_path: Path) -> None:
    """Rows kept before replies were redacted (older versions' keys) are never looked up."""
    import hashlib

    path = tmp_path / "judge.sqlite3"
    with StubServer(lambda request: StubReply.verdict("pass")) as server:
        metric_spec = server.spec(cache=str(path))
        metric = LlmJudge.configure({k: v for k, v in metric_spec.items() if k != "name"})
        payload = metric.payload(items(1)[0])
        digest = hashlib.sha256(f"{metric.url}\n0\n".encode())
        digest.update(payload)
        cache = ReplyCache(path)
        cache.put(digest.hexdigest(), StubReply.verdict("fail", "planted by an old version").body)
        cache.close()
        result = score(items(1), [metric_spec])
    assert statuses(result) == [Status.OK]
    assert len(server.requests) == 1
