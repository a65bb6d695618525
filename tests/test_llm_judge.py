"""Tests for the llm_judge metric (itemscore.metrics_builtin.judge), against a stub endpoint.

Every request goes to a stub OpenAI-compatible server on 127.0.0.1 started by the test; no
key is needed and nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import json
import pickle
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from itemscore import ItemResult, OptionError, RunResult, Status, export, score
from itemscore.metrics_builtin.judge import (
    SCALES,
    LlmJudge,
    ReplyCache,
    UnparseableReply,
    _http,
    cohen_kappa,
    default_cache_dir,
    kappa_with_interval,
    parse_verdict,
)
from itemscore.metrics_builtin.judge.stub import StubReply, StubRequest, StubServer

KEY = "sk-itemscore-FAKE-key-7f3a9c1e5b"
KEY_ENV = "ITEMSCORE_TEST_JUDGE_KEY"
LABEL = "llm_judge"


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[float]]:
    """No test writes to the real user cache; backoff delays are recorded, not slept."""
    monkeypatch.setenv("ITEMSCORE_CACHE_DIR", str(tmp_path / "user-cache"))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    delays: list[float] = []
    real_sleep = asyncio.sleep

    async def record(delay: float) -> None:
        delays.append(delay)
        await real_sleep(0)

    monkeypatch.setattr(_http, "sleep", record)
    return delays


@pytest.fixture
def delays(_isolated: list[float]) -> list[float]:
    return _isolated


class Script:
    """Replies by item: ``replies[marker]`` is a list consumed one request at a time."""

    def __init__(self, default: Callable[[StubRequest], StubReply] | None = None) -> None:
        self.replies: dict[str, list[StubReply]] = {}
        self.default = default or (lambda request: StubReply.verdict("pass"))

    def __call__(self, request: StubRequest) -> StubReply:
        message = request.last_message
        for marker, queue in self.replies.items():
            if marker in message and queue:
                return queue.pop(0) if len(queue) > 1 else queue[0]
        return self.default(request)


@pytest.fixture
def script() -> Script:
    return Script()


@pytest.fixture
def server(script: Script) -> Iterator[StubServer]:
    with StubServer(script) as stub:
        yield stub


def judge(server: StubServer, **options: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "name": "llm_judge",
        "model": "stub-judge",
        "base_url": server.base_url,
        "api_key_env": None,
        "cache": False,
        "max_retries": 2,
    }
    spec.update(options)
    return spec


def items(n: int, **metadata: Any) -> list[ItemResult]:
    return [
        ItemResult(
            id=f"q{i}",
            input=f"question {i}",
            output=f"answer <item-{i}>",
            expected=[f"reference {i}"],
            metadata=metadata,
        )
        for i in range(n)
    ]


def scores_of(result: RunResult, label: str = LABEL) -> list[Any]:
    return [item.scores[label] for item in result.items]


# -- options ---------------------------------------------------------------------------------


def test_option_names_match_the_design() -> None:
    """The options DESIGN.md names, then prices, human field, count_failed, bounds and extras."""
    assert list(LlmJudge.options()) == [
        "model", "base_url", "api_key_env", "rubric", "scale", "temperature", "max_tokens",
        "timeout", "max_retries", "concurrency", "cache", "samples", "price_in", "price_out",
        "human_field", "count_failed", "max_reply_bytes", "headers", "header_env", "body",
    ]  # fmt: skip
    assert LlmJudge.reproducibility_class == "judge-based"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        pytest.param({"base_url": "ftp://judge.example/v1"}, "must be an http(s) URL", id="ftp"),
        pytest.param({"base_url": "localhost:8000"}, "must be an http(s) URL", id="no-scheme"),
        pytest.param(
            {"base_url": "https://user:pw@judge.example/v1"},
            "must not hold credentials",
            id="creds",
        ),
        pytest.param({"scale": "1-7"}, "'pass_fail', '1-5', '1-10'", id="scale"),
        pytest.param({"timeout": 0.0}, "`timeout` (0.0) must be greater than 0", id="timeout"),
        pytest.param({"samples": 0}, "`samples` (0) must be 1 or more", id="samples"),
        pytest.param({"max_retries": -1}, "`max_retries` (-1) must be 0 or more", id="retries"),
        pytest.param({"concurrency": 0}, "`concurrency` (0) must be 1 or more", id="concurrency"),
        pytest.param({"temperature": 3.0}, "`temperature` (3.0) must be in [0, 2]", id="temp"),
        pytest.param({"price_in": 1.0}, "give both `price_in` and `price_out`", id="one-price"),
        pytest.param({"rubric": "@/no/such/rubric.txt"}, "cannot be read", id="rubric-file"),
        pytest.param({"rubric": "  "}, "is empty", id="rubric-empty"),
        pytest.param({"cache": 3}, "`cache`", id="cache-type"),
    ],
)
def test_bad_options_are_errors_before_any_request(
    server: StubServer, options: dict[str, Any], message: str
) -> None:
    """Each bad option is an OptionError naming it; the endpoint never hears of the run."""
    with pytest.raises(OptionError, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):  # fmt: skip
        score(items(2), [judge(server, **options)])
    assert server.requests == []


def test_missing_key_variable_is_a_configuration_error(
    server: StubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A named key variable that is not set stops the run before scoring, naming the variable."""
    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(OptionError, match=f"environment variable {KEY_ENV}"):
        score(items(2), [judge(server, api_key_env=KEY_ENV)])
    assert server.requests == []


def test_base_url_defaults_to_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No base_url: OPENAI_BASE_URL, else the public OpenAI URL."""
    assert LlmJudge(model="m", api_key_env=None).url == "https://api.openai.com/v1/chat/completions"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1/")
    assert LlmJudge(model="m", api_key_env=None).url == "http://127.0.0.1:9/v1/chat/completions"


def test_rubric_from_a_file_goes_into_the_prompt(server: StubServer, tmp_path: Path) -> None:
    """`@path` reads the rubric from the file; its text is in the system message."""
    path = tmp_path / "rubric.md"
    path.write_text("Pass only answers that cite a source.\n", encoding="utf-8")
    score(items(1), [judge(server, rubric=f"@{path}")])
    system = server.requests[0].body["messages"][0]["content"]
    assert "Pass only answers that cite a source." in system


# -- verdicts --------------------------------------------------------------------------------


def test_pass_fail_verdicts_make_a_ratio(server: StubServer, script: Script) -> None:
    """Passes are ok, fails are fail; the headline is the share of passes with extras."""
    script.replies["<item-1>"] = [StubReply.verdict("fail", "misses the point")]
    result = score(items(4), [judge(server)])
    got = scores_of(result)
    assert [s.status for s in got] == [Status.OK, Status.FAIL, Status.OK, Status.OK]
    assert got[1].extra["reason"] == "misses the point"
    assert got[1].extra["verdict"] == "fail"
    assert json.loads(got[1].extra["raw"]) == {"reason": "misses the point", "score": "fail"}
    assert got[0].extra["prompt_tokens"] == 100
    assert got[0].extra["completion_tokens"] == 10
    m = result.measurements["default.llm_judge"]
    assert m.value == pytest.approx(0.75)
    assert m.reproducibility_class == "judge-based"
    assert m.extra["requests"] == 4
    assert m.extra["cache_hits"] == 0
    assert m.extra["prompt_tokens"] == 400
    assert m.extra["completion_tokens"] == 40


def test_request_is_openai_compatible(server: StubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """POST {base_url}/chat/completions with the model, messages, parameters and key."""
    monkeypatch.setenv(KEY_ENV, KEY)
    score(items(1), [judge(server, api_key_env=KEY_ENV, temperature=0.5, max_tokens=64)])
    request = server.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = request.body
    assert body["model"] == "stub-judge"
    assert body["temperature"] == 0.5
    assert body["max_tokens"] == 64
    assert body["response_format"]["type"] == "json_schema"
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["score"]["enum"] == ["pass", "fail"]
    user = body["messages"][1]["content"]
    assert "question 0" in user
    assert "reference 0" in user
    assert "answer <item-0>" in user


def test_no_key_variable_sends_no_authorization(server: StubServer) -> None:
    """api_key_env none (a local server): no Authorization header."""
    score(items(1), [judge(server)])
    assert "authorization" not in server.requests[0].headers


def test_numeric_scale_is_a_rescaled_mean(server: StubServer, script: Script) -> None:
    """1-5 verdicts map onto [0, 1]; every verdict is ok; the headline is their mean."""
    script.replies["<item-0>"] = [StubReply.verdict(5)]
    script.replies["<item-1>"] = [StubReply.chat("Score: 3\nGood but thin.")]
    script.replies["<item-2>"] = [StubReply.chat("1")]
    result = score(items(3), [judge(server, scale="1-5")])
    got = scores_of(result)
    assert [s.value for s in got] == [1.0, 0.5, 0.0]
    assert {s.status for s in got} == {Status.OK}
    assert got[1].extra["verdict"] == 3.0
    assert result.measurements["default.llm_judge"].value == pytest.approx(0.5)
    schema = server.requests[0].body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["score"]["enum"] == [1, 2, 3, 4, 5]


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        pytest.param(StubReply.chat('{"score": "pa'), "judge reply not parseable", id="truncated"),
        pytest.param(StubReply.chat("I think so."), "judge reply not parseable", id="prose"),
        pytest.param(StubReply.verdict("maybe"), "judge reply not parseable", id="off-scale"),
        pytest.param(StubReply.chat(""), "judge reply not parseable", id="empty"),
        pytest.param(StubReply(200, b"{not json"), "body that is not JSON", id="body"),
        pytest.param(StubReply(200, {"object": "x"}), "no choices[0].message", id="no-choices"),
        pytest.param(
            StubReply.chat(None, refusal="I can't grade this."), "judge refused", id="refusal"
        ),
        pytest.param(StubReply.error(404, "no such model"), "HTTP 404: no such model", id="404"),
    ],
)
def test_bad_replies_are_errors_never_fails(
    server: StubServer, script: Script, reply: StubReply, error: str
) -> None:
    """An unusable reply is that item's error, with the reason; the other items are scored."""
    script.replies["<item-1>"] = [reply]
    result = score(items(3), [judge(server)])
    got = scores_of(result)
    assert got[1].status is Status.ERROR
    assert got[1].reason is not None
    assert error in got[1].reason
    assert got[0].status is Status.OK
    assert got[2].status is Status.OK
    m = result.measurements["default.llm_judge"]
    assert m.counts[Status.ERROR] == 1
    assert m.n == 2


# -- retries and timeouts --------------------------------------------------------------------


def test_429_waits_as_retry_after_says(
    server: StubServer, script: Script, delays: list[float]
) -> None:
    """A 429 with Retry-After is retried after exactly that delay, then scored."""
    script.replies["<item-0>"] = [
        StubReply.error(429, "slow down", {"Retry-After": "7"}),
        StubReply.verdict("pass"),
    ]
    result = score(items(1), [judge(server)])
    got = scores_of(result)[0]
    assert got.status is Status.OK
    assert got.extra["requests"] == 2
    assert delays == [7.0]


def test_retry_after_ms_is_preferred(
    server: StubServer, script: Script, delays: list[float]
) -> None:
    """OpenAI's retry-after-ms header gives the delay in milliseconds."""
    script.replies["<item-0>"] = [
        StubReply.error(429, "slow down", {"retry-after-ms": "250", "Retry-After": "1"}),
        StubReply.verdict("pass"),
    ]
    score(items(1), [judge(server)])
    assert delays == [0.25]


def test_500_then_success_backs_off_with_jitter(
    server: StubServer, script: Script, delays: list[float]
) -> None:
    """5xx replies are retried with exponential backoff and jitter."""
    script.replies["<item-0>"] = [
        StubReply.error(500),
        StubReply.error(503),
        StubReply.verdict("fail"),
    ]
    result = score(items(1), [judge(server, max_retries=3)])
    got = scores_of(result)[0]
    assert got.status is Status.FAIL
    assert got.extra["requests"] == 3
    base = _http.BACKOFF_BASE
    assert len(delays) == 2
    assert base * 0.5 <= delays[0] <= base
    assert base * 1.0 <= delays[1] <= base * 2


def test_exhausted_retries_are_the_items_error(server: StubServer, script: Script) -> None:
    """Always 503: the item is an error saying how many attempts were made."""
    script.replies["<item-0>"] = [StubReply.error(503, "overloaded")]
    result = score(items(2), [judge(server, max_retries=2)])
    got = scores_of(result)
    assert got[0].status is Status.ERROR
    assert got[0].reason == "HTTP 503 (overloaded); gave up after 3 attempts"
    assert got[0].extra["requests"] == 3
    assert got[1].status is Status.OK
    assert result.measurements["default.llm_judge"].extra["requests"] == 4


def test_slow_reply_past_the_timeout_is_an_error(server: StubServer, script: Script) -> None:
    """A reply slower than `timeout` is a timed-out error (retried first, here not)."""
    script.replies["<item-0>"] = [StubReply.verdict("pass", delay=2.0)]
    result = score(items(2), [judge(server, timeout=0.2, max_retries=0)])
    got = scores_of(result)
    assert got[0].status is Status.ERROR
    assert got[0].reason == "the request timed out after 0.2 s; gave up after 1 attempt"
    assert got[1].status is Status.OK


def test_connection_refused_is_retried_then_an_error(delays: list[float]) -> None:
    """Nothing listening: connection errors are retried, then the item's error."""
    with StubServer() as stub:
        url = stub.base_url  # a port that was free a moment ago, and is closed now
    result = score(
        items(1),
        [{"name": "llm_judge", "model": "m", "base_url": url, "api_key_env": None,
          "cache": False, "max_retries": 1}],
    )  # fmt: skip
    got = scores_of(result)[0]
    assert got.status is Status.ERROR
    assert got.reason is not None
    assert got.reason.startswith("connection error (ConnectError")
    assert len(delays) == 1


def test_endpoint_without_structured_output(server: StubServer, script: Script) -> None:
    """A 400 about response_format: the judge asks again (and from then on) without it."""

    def reply(request: StubRequest) -> StubReply:
        if "response_format" in request.body:
            return StubReply.error(400, "response_format is not supported by this model")
        return StubReply.chat("PASS")

    script.default = reply
    result = score(items(3), [judge(server, concurrency=1)])
    assert {s.status for s in scores_of(result)} == {Status.OK}
    with_format = [r for r in server.requests if "response_format" in r.body]
    assert len(with_format) == 1
    assert len(server.requests) == 4


# -- concurrency -----------------------------------------------------------------------------


def test_concurrency_option_bounds_and_drives_requests_in_flight(script: Script) -> None:
    """`concurrency` is the number of requests in flight, also above the run's setting."""
    in_flight = 0
    peak = 0
    lock = threading.Lock()

    async def slow(request: StubRequest) -> StubReply:
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        await asyncio.sleep(0.1)
        with lock:
            in_flight -= 1
        return StubReply.verdict("pass")

    with StubServer(slow) as stub:
        score(items(24), [judge(stub, concurrency=6)], concurrency=2)
    assert peak == 6


# -- samples, cost, failed requests ----------------------------------------------------------


def test_samples_take_the_majority_and_report_self_agreement(
    server: StubServer, script: Script
) -> None:
    """samples=3: the item's verdict is the majority; the measurement says how often all agree."""
    script.replies["<item-0>"] = [
        StubReply.verdict("pass"), StubReply.verdict("fail"), StubReply.verdict("pass"),
    ]  # fmt: skip
    result = score(items(2), [judge(server, samples=3, concurrency=1)])
    got = scores_of(result)
    assert got[0].status is Status.OK
    assert sorted(got[0].extra["verdicts"]) == ["fail", "pass", "pass"]
    assert got[1].extra["verdicts"] == ["pass", "pass", "pass"]
    m = result.measurements["default.llm_judge"]
    assert m.extra["self_agreement"] == 0.5
    assert m.extra["requests"] == 6


def test_samples_on_a_numeric_scale_average(server: StubServer, script: Script) -> None:
    """samples=2 on 1-10: the value is the mean verdict, rescaled."""
    script.replies["<item-0>"] = [StubReply.verdict(10), StubReply.verdict(7)]
    result = score(items(1), [judge(server, samples=2, scale="1-10", concurrency=1)])
    got = scores_of(result)[0]
    assert got.extra["verdict"] == 8.5
    assert got.value == pytest.approx(7.5 / 9)


def test_prices_give_the_judges_cost(server: StubServer) -> None:
    """price_in/price_out per million tokens: cost per item and in total."""
    result = score(items(3), [judge(server, price_in=2.0, price_out=10.0)])
    got = scores_of(result)[0]
    assert got.extra["cost"] == pytest.approx((100 * 2.0 + 10 * 10.0) / 1e6)
    m = result.measurements["default.llm_judge"]
    assert m.extra["cost"] == pytest.approx(3 * 300 / 1e6)


def test_failed_requests_are_fail_without_asking(server: StubServer) -> None:
    """Output None: fail (or skip with count_failed=false), and no request."""
    failed = [ItemResult(id="x", output=None, expected=["a"])]
    result = score(failed, [judge(server), judge(server, label="kept", count_failed=False)])
    assert result.items[0].scores[LABEL].status is Status.FAIL
    assert result.items[0].scores["kept"].status is Status.SKIP
    assert server.requests == []


# -- cache -----------------------------------------------------------------------------------


def test_rescoring_is_served_from_the_cache(server: StubServer, tmp_path: Path) -> None:
    """A second run sends no request: same verdicts, cache hits counted, tokens kept."""
    cache = tmp_path / "judge.sqlite3"
    first = score(items(5), [judge(server, cache=str(cache))])
    assert len(server.requests) == 5
    second = score(items(5), [judge(server, cache=str(cache))])
    assert len(server.requests) == 5
    assert [s.status for s in scores_of(second)] == [s.status for s in scores_of(first)]
    m = second.measurements["default.llm_judge"]
    assert m.extra["cache_hits"] == 5
    assert m.extra["requests"] == 0
    assert m.extra["prompt_tokens"] == 500
    assert {s.extra["cached"] for s in scores_of(second)} == {1}


def test_cache_key_changes_with_the_request(server: StubServer, tmp_path: Path) -> None:
    """Another rubric, model or temperature is another key: the judge is asked again."""
    cache = str(tmp_path / "judge.sqlite3")
    score(items(2), [judge(server, cache=cache)])
    score(items(2), [judge(server, cache=cache, rubric="Be strict.")])
    score(items(2), [judge(server, cache=cache, model="other")])
    score(items(2), [judge(server, cache=cache, temperature=0.7)])
    assert len(server.requests) == 8


def test_cache_true_uses_the_user_cache_folder(server: StubServer, tmp_path: Path) -> None:
    """cache=true writes to the user cache folder (ITEMSCORE_CACHE_DIR here)."""
    score(items(2), [judge(server, cache=True)])
    assert default_cache_dir() == tmp_path / "user-cache"
    assert (tmp_path / "user-cache" / "judge-cache.sqlite3").exists()


def test_cache_folder_is_a_file_inside_it(server: StubServer, tmp_path: Path) -> None:
    """A folder given as `cache` holds the cache file."""
    score(items(1), [judge(server, cache=str(tmp_path))])
    assert (tmp_path / "judge-cache.sqlite3").exists()


@pytest.mark.parametrize(
    ("platform", "env", "expected"),
    [
        ("linux", {"XDG_CACHE_HOME": "/xdg"}, "/xdg/itemscore"),
        ("linux", {}, "~/.cache/itemscore"),
        ("darwin", {}, "~/Library/Caches/itemscore"),
        ("win32", {"LOCALAPPDATA": "/appdata"}, "/appdata/itemscore/Cache"),
    ],
)
def test_default_cache_dir_per_platform(
    monkeypatch: pytest.MonkeyPatch, platform: str, env: dict[str, str], expected: str
) -> None:
    """Where platformdirs would put a user cache, on each platform."""
    monkeypatch.delenv("ITEMSCORE_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(sys, "platform", platform)
    assert default_cache_dir() == Path(expected).expanduser()


def test_cache_takes_concurrent_writers(tmp_path: Path) -> None:
    """Processes writing one cache file at once lose nothing (WAL, busy timeout)."""
    path = tmp_path / "shared.sqlite3"
    code = (
        "import sys\n"
        "from itemscore.metrics_builtin.judge import ReplyCache\n"
        "cache = ReplyCache(sys.argv[1])\n"
        "for i in range(200):\n"
        "    cache.put(f'{sys.argv[2]}-{i}', {'i': i})\n"
        "cache.close()\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path), f"w{n}"]) for n in range(3)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0]
    cache = ReplyCache(path)
    try:
        assert len(cache) == 600
        assert cache.get("w2-199") == {"i": 199}
        assert cache.get("absent") is None
    finally:
        cache.close()


# -- judge against human ---------------------------------------------------------------------


def test_kappa_against_human_pass_fail_equals_sklearn(server: StubServer, script: Script) -> None:
    """metadata["human"]: unweighted kappa and the confusion table, as scikit-learn's."""
    judged = ["pass", "fail", "pass", "pass", "fail", "fail", "pass", "pass"]
    human = ["pass", "fail", "fail", "pass", "fail", "pass", "pass", "pass"]
    for i, verdict in enumerate(judged):
        script.replies[f"<item-{i}>"] = [StubReply.verdict(verdict)]
    batch = [
        ItemResult(id=f"q{i}", output=f"answer <item-{i}>", metadata={"human": h})
        for i, h in enumerate(human)
    ]
    m = score(batch, [judge(server)]).measurements["default.llm_judge"]
    assert m.extra["kappa"] == pytest.approx(cohen_kappa_score(human, judged), abs=1e-12)
    assert m.extra["n_human"] == 8
    assert m.extra["confusion[human=pass,judge=pass]"] == 4
    assert m.extra["confusion[human=pass,judge=fail]"] == 1
    assert m.extra["confusion[human=fail,judge=pass]"] == 1
    assert m.extra["confusion[human=fail,judge=fail]"] == 2
    assert m.extra["kappa_low"] <= m.extra["kappa"] <= m.extra["kappa_high"]


def test_kappa_on_a_numeric_scale_is_quadratic(server: StubServer, script: Script) -> None:
    """1-5 verdicts against human grades: quadratically weighted kappa over the scale."""
    rng = np.random.default_rng(3)
    human = rng.integers(1, 6, size=30)
    judged = np.clip(human + rng.integers(-1, 2, size=30), 1, 5)
    for i, verdict in enumerate(judged):
        script.replies[f"<item-{i}>"] = [StubReply.verdict(int(verdict))]
    batch = [
        ItemResult(id=f"q{i}", output=f"answer <item-{i}>", metadata={"grade": int(h)})
        for i, h in enumerate(human)
    ]
    m = score(batch, [judge(server, scale="1-5", human_field="grade")]).measurements[
        "default.llm_judge"
    ]
    expected = cohen_kappa_score(human, judged, labels=[1, 2, 3, 4, 5], weights="quadratic")
    assert m.extra["kappa"] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cohen_kappa_equals_sklearn(weights: Any, seed: int) -> None:
    """The kappa function agrees with scikit-learn to 1e-12 for every weighting."""
    rng = np.random.default_rng(seed)
    a = rng.integers(1, 11, size=200)
    b = np.clip(a + rng.integers(-3, 4, size=200), 1, 10)
    points = list(range(1, 11))
    expected = cohen_kappa_score(a, b, labels=points, weights=weights)
    assert cohen_kappa(list(a), list(b), points, weights) == pytest.approx(expected, abs=1e-12)


def test_kappa_undefined_and_interval_seeded() -> None:
    """One verdict throughout: kappa undefined. The bootstrap interval repeats with its seed."""
    assert cohen_kappa([1.0, 1.0], [1.0, 1.0], [0, 1]) is None
    assert cohen_kappa([], [], [0, 1]) is None
    human = [0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0]
    judged = [0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]
    first = kappa_with_interval(human, judged, [0, 1], None, seed=5)
    again = kappa_with_interval(human, judged, [0, 1], None, seed=5)
    assert (first.low, first.high) == (again.low, again.high)
    assert first.confusion.tolist() == [[2.0, 1.0], [1.0, 4.0]]


# -- the parser ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "scale", "verdict"),
    [
        ('{"reason": "ok", "score": "pass"}', "pass_fail", 1.0),
        ('```json\n{"score": "FAIL", "reason": "no"}\n```', "pass_fail", 0.0),
        ('Here it is: {"verdict": true}', "pass_fail", 1.0),
        ('{"score": 0}', "pass_fail", 0.0),
        ("Pass.", "pass_fail", 1.0),
        ("false", "pass_fail", 0.0),
        ("The answer is wrong.\nVerdict: fail", "pass_fail", 0.0),
        ('{"score": 4, "reason": "good"}', "1-5", 4.0),
        ('{"rating": "9"}', "1-10", 9.0),
        ("4/5", "1-5", 4.0),
        ("Score: 7", "1-10", 7.0),
        ("Clear and correct.\n5", "1-5", 5.0),
    ],
)
def test_parser_accepts(text: str, scale: str, verdict: float) -> None:
    """Structured and loose replies give the verdict on the scale."""
    assert parse_verdict(text, SCALES[scale])[0] == verdict


@pytest.mark.parametrize(
    ("text", "scale"),
    [
        ('{"score": 6}', "1-5"),
        ('{"score": true}', "1-5"),
        ('{"reason": "fine"}', "pass_fail"),
        ("This does not pass muster, I think", "pass_fail"),
        ("4/10", "1-5"),
        ("Score: 4, or maybe score: 5", "1-5"),
        ("  ", "pass_fail"),
        ('{"score": 2}', "pass_fail"),
    ],
)
def test_parser_refuses(text: str, scale: str) -> None:
    """Replies without a verdict on the scale are unparseable, never guessed."""
    with pytest.raises(UnparseableReply):
        parse_verdict(text, SCALES[scale])


def test_retry_after_header_forms() -> None:
    """Seconds, milliseconds and HTTP dates; nonsense is no delay."""
    assert _http.retry_after({"retry-after": "3"}) == 3.0
    assert _http.retry_after({"retry-after-ms": "1500"}) == 1.5
    assert _http.retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480) == 10
    assert _http.retry_after({"retry-after": "soon"}) is None
    assert _http.retry_after({"retry-after": "-4"}) is None
    assert _http.retry_after({"retry-after-ms": "x", "retry-after": "2"}) == 2.0
    assert _http.retry_after({}) is None


# -- security --------------------------------------------------------------------------------


def test_key_never_leaves_the_environment(
    server: StubServer,
    script: Script,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A recognisable key is in no result file, reason, raw reply, log or repr."""
    monkeypatch.setenv(KEY_ENV, KEY)
    caplog.set_level("DEBUG")
    # Endpoints that echo the key back, in an error and in a reply, must not carry it out.
    script.replies["<item-0>"] = [StubReply.error(401, f"Incorrect API key provided: {KEY}")]
    script.replies["<item-1>"] = [StubReply.chat(f"I was called with {KEY}. Verdict: pass")]
    script.replies["<item-2>"] = [StubReply.error(500, f"upstream rejected {KEY}")]
    options = judge(server, api_key_env=KEY_ENV, max_retries=0, cache=str(tmp_path / "c.db"))
    result = score(items(4), [options])
    got = scores_of(result)
    assert got[0].status is Status.ERROR
    assert "***" in (got[0].reason or "")
    assert got[1].status is Status.OK
    assert "***" in got[1].extra["raw"]
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    out = tmp_path / "out"
    export(result, out)
    result.save_json(tmp_path / "results.json")
    files = [p for p in out.rglob("*") if p.is_file()]
    texts = {p.name: p.read_bytes() for p in [*files, tmp_path / "results.json"]}
    assert "results.json" in texts
    assert any(name.startswith("items") for name in texts)
    for name, data in texts.items():
        assert KEY.encode() not in data, name
    assert KEY not in repr(result)
    assert KEY not in caplog.text
    metric = LlmJudge(model="m", api_key_env=KEY_ENV, base_url=server.base_url)
    assert KEY not in repr(metric)
    assert KEY.encode() not in pickle.dumps(metric)
    assert KEY not in str(vars(metric))


# -- installation ----------------------------------------------------------------------------


def test_listing_metrics_does_not_import_httpx() -> None:
    """Loading the metric class (as listing does) leaves httpx unimported."""
    code = (
        "import sys\n"
        "from itemscore import Registry\n"
        "info = Registry(autoload=False).find('llm_judge')\n"
        "assert info.cls is not None and info.cls.options()\n"
        "assert 'httpx' not in sys.modules, 'httpx imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_httpx_names_the_package(
    server: StubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without httpx, configuring the metric fails before any item, naming what to install."""
    from itemscore import OptionError

    monkeypatch.setitem(sys.modules, "httpx", None)
    with pytest.raises(OptionError, match=r"needs httpx.*pip install 'httpx>=0\.27'"):
        score(items(1), [judge(server)])


def test_metric_pickles_without_its_session(server: StubServer) -> None:
    """A used metric pickles (for process executors) without its client or event loop."""
    metric = LlmJudge(model="m", api_key_env=None, base_url=server.base_url, cache=False)

    async def one() -> Any:
        got = await metric.score_item(items(1)[0], _ctx())
        await metric.aclose()
        return got

    assert asyncio.run(one()).status is Status.OK
    clone = pickle.loads(pickle.dumps(metric))
    assert clone._session is None
    assert clone.url == metric.url


def _ctx() -> Any:
    from itemscore import MetricContext

    return MetricContext(label=LABEL)


@pytest.mark.parametrize("structured", [True, False])
def test_payload_is_the_encoded_request_body(structured: bool) -> None:
    """The per-item encoding around a cached prefix equals encoding the whole body."""
    from itemscore.metrics_builtin.judge._cache import encode_body

    metric = LlmJudge(model="m", api_key_env=None, rubric='Say "pass" \u00e9\n\u0000', cache=False)
    metric.structured = structured
    item = ItemResult(id="a", input='q "x"\n', output="\u4f60\u597d \\ \u0001", expected=["r"])
    assert metric.payload(item) == encode_body(metric.request_body(metric.messages(item)))


def test_comparing_two_judged_models_resamples_the_verdicts_vectorised(
    server: StubServer, script: Script
) -> None:
    """compare() bootstraps the per-item verdicts (2000 resamples), not the aggregate in a loop."""
    from itemscore import compare

    for i in range(0, 40, 3):
        script.replies[f"<item-{i}> by b"] = [StubReply.verdict("fail", "wrong")]
    rows = [
        ItemResult(id=f"q{i}", model=model, input=f"question {i}",
                   output=f"answer <item-{i}> by {model}", expected=[f"reference {i}"])
        for model in ("a", "b")
        for i in range(40)
    ]  # fmt: skip
    result = score(rows, [judge(server)])
    (c,) = compare(result)
    assert c.method == "paired-bootstrap"
    assert c.extra["n_resamples"] == 2000
    assert c.value_a == pytest.approx(result.by_model["a"]["default.llm_judge"].value)
    assert c.value_b == pytest.approx(result.by_model["b"]["default.llm_judge"].value)
    assert c.value_b == pytest.approx(1 - 14 / 40)
