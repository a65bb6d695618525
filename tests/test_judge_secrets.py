"""The judge's secrets at rest: the key and secret headers reach no file, reason or cache row.

Every endpoint here is a stub on 127.0.0.1 that echoes the secrets it was sent back in its
replies and errors, as a hostile or careless endpoint would.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from itemscore import ItemResult, OptionError, RunResult, Status, export, score
from itemscore.metrics_builtin.judge import _http
from itemscore.metrics_builtin.judge.stub import StubReply, StubRequest, StubServer
from itemscore.reports import BUILTIN_FORMATS

KEY_ENV = "ITEMSCORE_TEST_JUDGE_KEY"
TOKEN_ENV = "ITEMSCORE_TEST_JUDGE_TOKEN"
LABEL = "llm_judge"
#: Characters of an endpoint's error body kept in a reason (``_redact.SNIPPET``).
SNIPPET = 200


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test writes to the real user cache; backoff delays are not slept."""
    monkeypatch.setenv("ITEMSCORE_CACHE_DIR", str(tmp_path / "user-cache"))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    real_sleep = asyncio.sleep

    async def no_wait(delay: float) -> None:
        await real_sleep(0)

    monkeypatch.setattr(_http, "sleep", no_wait)


def fresh_key(tag: str) -> str:
    """A key no text of the run could hold by chance."""
    return f"sk-{tag}-{secrets.token_hex(16)}"


def fragments(secret: str, size: int = 8) -> list[str]:
    """Every piece of ``secret`` of ``size`` characters: what a cut secret leaves behind."""
    return [secret[i : i + size] for i in range(len(secret) - size + 1)]


def items(n: int) -> list[ItemResult]:
    return [
        ItemResult(id=f"q{i}", input=f"question {i}", output=f"answer <item-{i}>", expected=["r"])
        for i in range(n)
    ]


def echo(request: StubRequest) -> StubReply:
    """Replies that carry back what the request's secrets were, in every place a reply has."""
    sent = " ".join(
        request.headers.get(name, "") for name in ("authorization", "x-judge-token", "api-key")
    ).strip()
    message = request.last_message
    if "<item-0>" in message:
        return StubReply.error(401, f"Incorrect API key provided: {sent}")
    if "<item-1>" in message:
        return StubReply.error(500, f"upstream rejected {sent}")
    if "<item-2>" in message:
        return StubReply(200, f"<html>bad gateway for {sent}</html>")
    if "<item-3>" in message:
        return StubReply.verdict("fail", f"the caller {sent} is not allowed")
    reply = StubReply.chat(f"I was called with {sent}. Verdict: pass")
    body = dict(reply.body)
    body[f"echo {sent}"] = {"headers": [sent], "note": f"key={sent}"}  # secrets as JSON keys
    return StubReply(200, body)


def stored_texts(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` as bytes, with zip members (xlsx) unpacked: what a reader sees."""
    texts: dict[str, bytes] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        texts[str(path.relative_to(root))] = data
        if path.suffix == ".parquet":  # compressed: scan what a reader of it gets
            rows = pq.read_table(path).to_pylist()
            texts[f"{path.relative_to(root)}!rows"] = json.dumps(rows, default=str).encode()
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                for member in archive.namelist():
                    texts[f"{path.relative_to(root)}!{member}"] = archive.read(member)
    return texts


def assert_nowhere(root: Path, *keys: str) -> dict[str, bytes]:
    texts = stored_texts(root)
    for name, data in texts.items():
        for key in keys:
            for piece in fragments(key):
                assert piece.encode() not in data, f"{piece!r} (of a secret) is in {name}"
    return texts


def run_and_export(server: StubServer, cache: Path, out: Path) -> tuple[RunResult, list[Path]]:
    spec = server.spec(api_key_env=KEY_ENV, cache=str(cache), max_retries=0)
    result = score(items(6), [spec])
    written = export(result, out, list(BUILTIN_FORMATS))  # every built-in report
    return result, written


def test_an_echoed_key_is_in_no_file_before_or_after_a_rotation(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Redacted before caching: neither key reaches the cache or a report, after rotation too."""
    old_key, new_key = fresh_key("old"), fresh_key("new")
    cache = tmp_path / "cache" / "judge.sqlite3"
    with StubServer(echo) as server:
        monkeypatch.setenv(KEY_ENV, old_key)
        first, written = run_and_export(server, cache, tmp_path / "first")
        monkeypatch.setenv(KEY_ENV, new_key)  # the key is rotated; the cache is kept
        second, _ = run_and_export(server, cache, tmp_path / "second")
    assert server.requests[0].headers["authorization"] == f"Bearer {old_key}"
    assert server.requests[-1].headers["authorization"] == f"Bearer {new_key}"
    assert {p.name for p in written} >= {"results.json", "items.parquet", "items.jsonl",
                                         "report.html", "results.xlsx", "summary.csv"}  # fmt: skip
    # The cache is keyed without the secret: the rotated key finds the replies kept under the old.
    m = second.measurements["default.llm_judge"]
    assert m.extra["cache_hits"] == 3
    got = [item.scores[LABEL] for item in second.items]
    assert [s.status for s in got] == [Status.ERROR] * 3 + [Status.FAIL, Status.OK, Status.OK]
    assert "***" in (got[0].reason or "")
    assert "***" in got[4].extra["raw"]
    assert "***" in (got[3].extra["reason"] or "")
    texts = assert_nowhere(tmp_path, old_key, new_key)
    assert any(name.startswith("cache") for name in texts)
    # The scan reads the reports' texts: the masked reasons, the workbook's unpacked sheets.
    for report in (
        "first/items.jsonl",
        "second/items.jsonl",
        "second/items.parquet!rows",
        "second/report.html",
    ):
        assert b"Incorrect API key provided: Bearer ***" in texts[report], report
    assert any(
        name.startswith("second/results.xlsx!xl/worksheets/") and b"question 5" in data
        for name, data in texts.items()
    )
    assert [s.status for s in (item.scores[LABEL] for item in first.items)] == [
        s.status for s in got
    ]


@pytest.mark.parametrize("form", ["json-message", "plain-text", "json-no-message", "200-not-json"])
def test_a_key_straddling_the_cut_never_survives(
    monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    """An error body is redacted before it is cut: no piece of the key, at any offset."""
    key = fresh_key("cut")
    monkeypatch.setenv(KEY_ENV, key)
    offsets = list(range(SNIPPET - len(key) - 3, SNIPPET + 3))

    def reply(request: StubRequest) -> StubReply:
        offset = int(request.last_message.split("<item-")[1].split(">")[0])
        text = "x" * offset + request.headers["authorization"][len("Bearer ") :] + " and more"
        if form == "json-message":
            return StubReply.error(401, text)
        if form == "plain-text":
            return StubReply(403, text)
        if form == "json-no-message":
            return StubReply(400, {"detail": text})
        return StubReply(200, text)

    batch = [ItemResult(id=f"q{p}", output=f"answer <item-{p}>") for p in offsets]
    with StubServer(reply) as server:
        result = score(batch, [server.spec(api_key_env=KEY_ENV, max_retries=0)])
    reasons = [item.scores[LABEL].reason or "" for item in result.items]
    assert all(item.scores[LABEL].status is Status.ERROR for item in result.items)
    for offset, reason in zip(offsets, reasons):
        for piece in fragments(key, 6):
            assert piece not in reason, (offset, reason)
    # Cut where the key was whole before the cut: the mask shows that something was taken out.
    assert "***" in reasons[0]
    from itemscore.metrics_builtin.judge import _redact

    assert _redact.SNIPPET == SNIPPET  # the offsets above straddle the real cut


def test_secret_header_is_sent_redacted_and_never_configured(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """header_env names a variable; its value is sent, masked in replies, in no result file."""
    token, rotated = fresh_key("azure"), fresh_key("azure2")
    cache = str(tmp_path / "cache" / "judge.sqlite3")
    with StubServer(echo) as server:
        spec = server.spec(header_env={"api-key": TOKEN_ENV}, max_retries=0, cache=cache)
        monkeypatch.setenv(TOKEN_ENV, token)
        result = score(items(5), [spec])
        export(result, tmp_path / "out")
        monkeypatch.setenv(TOKEN_ENV, rotated)
        again = score(items(5), [spec])
        export(again, tmp_path / "again")
    assert [r.headers["api-key"] for r in server.requests] == [token] * 5 + [rotated] * 3
    assert all("authorization" not in r.headers for r in server.requests)
    assert "***" in (result.items[0].scores[LABEL].reason or "")
    assert again.measurements["default.llm_judge"].extra["cache_hits"] == 2
    texts = assert_nowhere(tmp_path, token, rotated)
    assert TOKEN_ENV.encode() in texts["out/results.json"]  # the variable's name is configuration


@pytest.mark.parametrize(
    ("options", "message"),
    [
        pytest.param({"header_env": {"X-Token": "ITEMSCORE_NO_SUCH_VAR"}},
                     "environment variable ITEMSCORE_NO_SUCH_VAR", id="unset"),
        pytest.param({"header_env": {"X-Token": "sk-pasted-secret-value"}},
                     "not an environment variable's name", id="value-not-name"),
        pytest.param({"header_env": {"Authorization": TOKEN_ENV}, "api_key_env": KEY_ENV},
                     "which `api_key_env`", id="authorization-twice"),
        pytest.param({"headers": {"Authorization": "Bearer sk-x"}}, "credential", id="credential"),
        pytest.param({"headers": {"X-Api-Key": "sk-x"}}, "`header_env`", id="api-key"),
        pytest.param({"headers": {"X-A": "1"}, "header_env": {"x-a": TOKEN_ENV}},
                     "in both", id="both"),
        pytest.param({"headers": {"X-A": "1\r\nX-Injected: 1"}}, "not a header value", id="crlf"),
        pytest.param({"headers": {"Bad Name": "1"}}, "not an HTTP header name", id="name"),
        pytest.param({"headers": {"Content-Length": "1"}}, "sets it itself", id="framing"),
        pytest.param({"headers": ["X-A: 1"]}, "must be a mapping of strings to strings",
                     id="not-a-mapping"),
        pytest.param({"headers": {"X-A": 1}}, "must be a mapping of strings to strings",
                     id="not-a-string"),
    ],
)  # fmt: skip
def test_bad_headers_are_option_errors(
    monkeypatch: pytest.MonkeyPatch, options: dict[str, Any], message: str
) -> None:
    """Each mistake is refused before scoring; a secret's value is never repeated."""
    monkeypatch.setenv(KEY_ENV, fresh_key("k"))
    monkeypatch.setenv(TOKEN_ENV, fresh_key("t"))
    with StubServer() as server, pytest.raises(OptionError) as caught:
        score(items(1), [server.spec(**options)])
    assert message in str(caught.value)
    assert "sk-pasted-secret-value" not in str(caught.value)
    assert server.requests == []


def test_a_bad_secret_value_is_refused_without_showing_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A variable whose value would split the header: refused, its value not in the message."""
    monkeypatch.setenv(TOKEN_ENV, "sk-line1\nX-Evil: 1")
    with pytest.raises(OptionError, match="the value of its environment variable") as caught:
        score(items(1), [{"name": "llm_judge", "model": "m", "api_key_env": None,
                          "header_env": {"X-Token": TOKEN_ENV}, "cache": False}])  # fmt: skip
    assert "sk-line1" not in str(caught.value)


@pytest.fixture
def wants_new_parameter() -> Iterator[StubServer]:
    """A server that refuses `max_tokens` and wants `max_completion_tokens`, as newer models."""

    def reply(request: StubRequest) -> StubReply:
        if "max_tokens" in request.body:
            return StubReply.error(
                400,
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead.",
            )
        return StubReply.verdict("pass")

    with StubServer(reply) as server:
        yield server


def test_body_fields_and_headers_reach_a_server_with_other_parameters(
    wants_new_parameter: StubServer,
) -> None:
    """`body` is merged into the request (null removes a field); `headers` are sent."""
    server = wants_new_parameter
    refused = score(items(2), [server.spec(max_retries=0)])
    assert {i.scores[LABEL].status for i in refused.items} == {Status.ERROR}
    spec = server.spec(
        body={"max_tokens": None, "max_completion_tokens": 64, "metadata": {"run": "r1"}},
        headers={"OpenAI-Organization": "org-1"},
    )
    result = score(items(3), [spec])
    assert {i.scores[LABEL].status for i in result.items} == {Status.OK}
    request = server.requests[-1]
    assert "max_tokens" not in request.body
    assert request.body["max_completion_tokens"] == 64
    assert request.body["metadata"] == {"run": "r1"}
    assert request.body["response_format"]["type"] == "json_schema"
    assert request.headers["openai-organization"] == "org-1"


def test_headers_and_body_are_part_of_the_cache_key(tmp_path: Path) -> None:
    """Another extra header or body field is another request: asked, not looked up."""
    cache = str(tmp_path / "judge.sqlite3")
    with StubServer() as server:
        score(items(2), [server.spec(cache=cache)])
        score(items(2), [server.spec(cache=cache, headers={"X-Variant": "a"})])
        score(items(2), [server.spec(cache=cache, headers={"X-Variant": "b"})])
        score(items(2), [server.spec(cache=cache, body={"top_p": 0.5})])
        again = score(items(2), [server.spec(cache=cache, headers={"X-Variant": "a"})])
    assert len(server.requests) == 8
    assert again.measurements["default.llm_judge"].extra["cache_hits"] == 2


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param({"messages": []}, "builds it itself", id="messages"),
        pytest.param({"model": "x"}, "set the option `model`", id="model"),
        pytest.param({"stream": True}, "builds it itself", id="stream"),
        pytest.param({"max_tokens": 5}, "set the option `max_tokens`", id="own-option"),
        pytest.param({"top_p": float("nan")}, "JSON values only", id="nan"),
        pytest.param({"seed": {1, 2}}, "JSON values only", id="set"),
    ],
)
def test_bad_body_fields_are_option_errors(body: dict[str, Any], message: str) -> None:
    """A body field the judge owns, or that is not JSON, is refused before any request."""
    with StubServer() as server, pytest.raises(OptionError, match=message.replace("`", ".")):
        score(items(1), [server.spec(body=body)])
    assert server.requests == []


def test_mapping_options_come_from_the_command_line(tmp_path: Path) -> None:
    """`-m 'llm_judge:headers={...},body={...}'` sets both, as YAML flow mappings."""
    import subprocess
    import sys

    data = tmp_path / "out.jsonl"
    data.write_text(json.dumps({"id": "a", "output": "x"}) + "\n", encoding="utf-8")
    with StubServer() as server:
        spec = (
            f"llm_judge:model=stub,base_url={server.base_url},api_key_env=null,cache=false,"
            "headers={X-Run: cli},body={max_tokens: null, max_completion_tokens: 9}"
        )
        done = subprocess.run(
            [str(Path(sys.executable).with_name("itemscore")), "score", str(data), "-m", spec],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert server.requests[0].headers["x-run"] == "cli"
    assert server.requests[0].body["max_completion_tokens"] == 9
    assert "max_tokens" not in server.requests[0].body
