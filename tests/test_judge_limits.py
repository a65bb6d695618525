"""Every judge request is bounded: a deadline per attempt, a size per reply, a range per count.

The endpoints are stubs on 127.0.0.1 that drip their replies, send them without end or put
absurd numbers in them; each stops by itself when the test's server is stopped.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from itemscore import ItemResult, ItemScore, MetricContext, OptionError, Status, score
from itemscore.metrics_builtin.judge import LlmJudge, _http
from itemscore.metrics_builtin.judge.stub import StubReply, StubRequest, StubServer

LABEL = "llm_judge"
#: The documented default of `max_reply_bytes`.
MAX_REPLY_BYTES = 4 * 2**20


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test writes to the real user cache; backoff delays are not slept."""
    monkeypatch.setenv("ITEMSCORE_CACHE_DIR", str(tmp_path / "user-cache"))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    real_sleep = asyncio.sleep

    async def no_wait(delay: float) -> None:
        await real_sleep(0)

    monkeypatch.setattr(_http, "sleep", no_wait)


def items(n: int) -> list[ItemResult]:
    return [ItemResult(id=f"q{i}", output=f"answer <item-{i}>") for i in range(n)]


def scores(result: Any) -> list[ItemScore]:
    return [item.scores[LABEL] for item in result.items]


class OnItem:
    """Replies by item: ``special[i]`` for item ``i``, a pass for every other one."""

    def __init__(self, **special: StubReply) -> None:
        self.special = {int(k.removeprefix("item")): v for k, v in special.items()}

    def __call__(self, request: StubRequest) -> StubReply:
        index = int(request.last_message.split("<item-")[1].split(">")[0])
        return self.special.get(index, StubReply.verdict("pass"))


# -- the deadline ----------------------------------------------------------------------------


def test_a_drip_fed_reply_cannot_outlive_the_timeout() -> None:
    """A byte every few tenths keeps httpx's per-read timeout happy; the deadline still ends it."""
    drip = attrs.evolve(StubReply.verdict("pass"), drip=0.05, piece=4)  # ~80 pieces: 4 s in all
    with StubServer(OnItem(item0=drip)) as server:
        result = score(items(2), [server.spec(timeout=0.5, max_retries=1)])
        whole = len(json.dumps(drip.body))
        sent = server.sent
    got = scores(result)
    assert got[0].status is Status.ERROR
    assert got[0].reason == "the request timed out after 0.5 s; gave up after 2 attempts"
    assert got[0].extra["requests"] == 2
    assert got[1].status is Status.OK
    assert sent < 2 * whole  # each attempt was cut off before its reply was whole


# -- the size of a reply ---------------------------------------------------------------------


def endless() -> Iterator[bytes]:
    """A JSON reply that never ends (stopped after 64 MiB, so a client that reads on returns)."""
    yield b'{"choices": [{"message": {"content": "'
    yield from itertools.repeat(b"a" * 65536, 1024)
    yield b'"}}]}'


def test_an_endless_reply_is_read_only_to_the_bound() -> None:
    """Past `max_reply_bytes` the reply is not read on: the item's error names the bound."""
    with StubServer(OnItem(item1=StubReply(stream=endless))) as server:
        result = score(items(3), [server.spec(max_reply_bytes=100_000)])
        sent = server.sent
    got = scores(result)
    assert got[1].status is Status.ERROR
    assert got[1].reason == (
        "the judge endpoint's reply is larger than 100,000 bytes (`max_reply_bytes`): "
        "it was not read past that"
    )
    assert got[1].extra["requests"] == 1  # not retried: the same request gets the same reply
    assert [got[0].status, got[2].status] == [Status.OK, Status.OK]
    assert sent < 16 * 2**20  # of 64 MiB: the client stopped reading (socket buffers aside)


@pytest.mark.parametrize(("excess", "status"), [(-64, Status.OK), (1, Status.ERROR)])
def test_the_default_bound_is_four_mebibytes(excess: int, status: Status) -> None:
    """A reply just under 4 MiB is read; one byte over, it is the item's error."""
    reply = StubReply.verdict("pass")
    body = json.dumps(reply.body).encode()
    padded = body[:-1] + b" " * (MAX_REPLY_BYTES - len(body) + excess) + b"}"
    assert len(padded) == MAX_REPLY_BYTES + excess
    with StubServer(OnItem(item0=StubReply(200, padded))) as server:
        result = score(items(1), [server.spec()])
    got = scores(result)[0]
    assert got.status is status
    if status is Status.ERROR:
        assert "larger than 4,194,304 bytes" in (got.reason or "")


def test_a_compressed_reply_is_not_decoded() -> None:
    """Asked for no encoding, a reply sent gzip anyway is refused: it could decode to any size."""
    gzipped = StubReply(200, b"\x1f\x8b\x08\x00", {"Content-Encoding": "gzip"})
    with StubServer(OnItem(item0=gzipped)) as server:
        result = score(items(2), [server.spec()])
    got = scores(result)
    assert got[0].status is Status.ERROR
    assert "encoded ('gzip')" in (got[0].reason or "")
    assert server.requests[0].headers["accept-encoding"] == "identity"
    assert got[1].status is Status.OK


def test_reply_bound_must_be_positive() -> None:
    """`max_reply_bytes` below 1 is an option error."""
    with pytest.raises(OptionError, match="`max_reply_bytes` \\(0\\) must be 1 or more"):
        LlmJudge(model="m", api_key_env=None, cache=False, max_reply_bytes=0)


# -- usage numbers ---------------------------------------------------------------------------


def test_a_huge_usage_number_costs_one_item_only() -> None:
    """A 4,000-digit prompt_tokens is that item's error; the measurement is whole."""
    huge = StubReply.chat('{"score": "pass", "reason": "ok"}', prompt_tokens=10**4000 - 1)
    with StubServer(OnItem(item1=huge)) as server:
        result = score(items(4), [server.spec()])
    got = scores(result)
    assert got[1].status is Status.ERROR
    assert got[1].reason == (
        "judge reply not usable: usage.prompt_tokens is a number of more than 50 digits, out of "
        "range (a token count is from 0 to 2**53 - 1)"
    )
    m = result.measurements["default.llm_judge"]
    assert m.error is None
    assert m.value == 1.0
    assert m.n == 3
    assert m.extra["prompt_tokens"] == 300


@pytest.mark.parametrize(
    ("usage", "problem"),
    [
        pytest.param({"prompt_tokens": -3}, "-3, out of range", id="negative"),
        pytest.param({"completion_tokens": 2**53}, "9007199254740992, out of range", id="2**53"),
        pytest.param({"prompt_tokens": "12"}, "'12', not a token count", id="string"),
        pytest.param({"prompt_tokens": 1.5}, "1.5, not a token count", id="fraction"),
        pytest.param({"prompt_tokens": True}, "True, not a token count", id="bool"),
    ],
)
def test_usage_that_is_no_count_is_the_items_error(usage: dict[str, Any], problem: str) -> None:
    """Only whole numbers from 0 to 2**53 - 1 count as tokens."""
    reply = StubReply.verdict("pass")
    body = {**reply.body, "usage": usage}
    with StubServer(OnItem(item0=StubReply(200, body))) as server:
        result = score(items(2), [server.spec()])
    got = scores(result)
    assert got[0].status is Status.ERROR
    assert problem in (got[0].reason or "")
    assert got[1].status is Status.OK


def test_missing_or_null_usage_counts_nothing() -> None:
    """A server without usage (or with nulls, or whole floats) is fine: its counts are 0 or read."""
    bare = StubReply.verdict("pass")
    without = {k: v for k, v in bare.body.items() if k != "usage"}
    nulls = {**bare.body, "usage": {"prompt_tokens": None, "completion_tokens": 7.0}}
    with StubServer(OnItem(item0=StubReply(200, without), item1=StubReply(200, nulls))) as server:
        result = score(items(2), [server.spec()])
    got = scores(result)
    assert [s.status for s in got] == [Status.OK, Status.OK]
    assert (got[1].extra["prompt_tokens"], got[1].extra["completion_tokens"]) == (0, 7)


def test_aggregate_survives_counts_a_saved_file_changed() -> None:
    """Scores read back from a tampered file cannot overflow the totals either."""
    metric = LlmJudge(model="m", api_key_env=None, cache=False, price_in=1.0, price_out=1.0)
    tampered = [
        ItemScore.ok(LABEL, 1.0, extra={"prompt_tokens": 10**4000, "cost": 10**400,
                                               "requests": 1, "verdict": "pass"}),
        ItemScore.ok(LABEL, 1.0, extra={"prompt_tokens": 5, "cost": 0.5, "requests": 1,
                                               "verdict": "pass"}),
    ]  # fmt: skip
    estimate = metric.aggregate(tampered, MetricContext(label=LABEL))
    assert estimate.value == 1.0
    assert estimate.extra["prompt_tokens"] == 5
    assert estimate.extra["cost"] == 0.5
    assert estimate.extra["requests"] == 2
