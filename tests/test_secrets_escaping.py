"""Secrets out of every record, and data out of the markup and terminals it is shown in.

Credentials given in the judge's `headers` or `body` (under any name a credential goes by) reach
no report, lock, message or cache key; `results.md` keeps data as text under CommonMark; the
viewer's request log shows control characters as escapes.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from itemscore import (
    ConfigError,
    ItemResult,
    ItemScore,
    Metric,
    MetricContext,
    OptionError,
    RunResult,
    export,
    is_secret_name,
    mask_secrets,
    plan,
    register,
    rescore,
    score,
    unregister,
)
from itemscore.cli import cli
from itemscore.metrics_builtin.judge.stub import StubReply, StubRequest, StubServer

LABEL = "llm_judge"


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test writes to the real user cache or asks the real endpoint."""
    monkeypatch.setenv("ITEMSCORE_CACHE_DIR", str(tmp_path / "user-cache"))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def fresh(tag: str) -> str:
    """A secret no text of the run could hold by chance."""
    return f"{tag}-{secrets.token_hex(12)}"


def files_holding(root: Path, text: str) -> list[str]:
    """Every file under ``root`` (hidden ones, the lock, included) whose bytes hold ``text``."""
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and not p.is_symlink() and text.encode() in p.read_bytes()
    )


# -- 11. credentials in other headers and body fields ------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "Api-Key", "X-Api-Key",
        "X-Goog-Api-Key", "Ocp-Apim-Subscription-Key", "X-Auth-Token", "X-Amz-Security-Token",
        "X-Hub-Signature-256", "x-functions-key", "api_key", "apiKey", "APIKey", "APIKEY",
        "access_token", "client_secret", "password", "db_passwd", "credentials", "auth",
        "auth_header", "private_key", "passphrase", "XAUTHTOKEN",
    ],
)  # fmt: skip
def test_a_credential_name_is_secret(name: str) -> None:
    """Names a credential goes by, in any spelling of separators and case, are secret."""
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "max_tokens", "max_completion_tokens", "max_output_tokens", "budget_tokens",
        "skip_special_tokens", "prompt_tokens", "tokenizer", "token_count", "keywords", "top_k",
        "key_id", "author", "authority", "keep_alive", "temperature", "logit_bias",
        "response_format", "OpenAI-Organization", "OpenAI-Project", "anthropic-version",
        "X-Request-Id", "prompt_cache_key", "Idempotency-Key", "api_key_env", "header_env", "",
    ],
)  # fmt: skip
def test_an_ordinary_name_is_not_secret(name: str) -> None:
    """Counts of tokens, ordinary keys and the names of variables are not secret."""
    assert not is_secret_name(name)


def test_no_builtin_option_name_is_secret() -> None:
    """No option of a built-in metric is masked: each saved configuration reads back whole."""
    from itemscore._options import option_infos
    from itemscore._registry import default_registry

    registry = default_registry()
    names = {name for info in registry.infos() for name in option_infos(registry.get(info.id))}
    assert {"max_tokens", "api_key_env", "header_env", "body", "headers"} <= names
    assert sorted(n for n in names if is_secret_name(n)) == []


def test_mask_secrets_masks_nested_fields_and_keeps_the_rest() -> None:
    """Nested and listed credential fields are masked; counts and variable names are kept."""
    options = {
        "api_key_env": "MY_KEY",
        "header_env": {"api-key": "AZURE_KEY"},
        "headers": {"OpenAI-Organization": "org-1"},
        "body": {
            "api_key": "sk-body-1234",
            "max_completion_tokens": 9,
            "auth": {"password": "pw-nested-5678", "user": "me"},
            "tools": [{"name": "t", "secret": 12345678}],
            "token": None,
        },
    }
    masked, found = mask_secrets(options)
    assert masked == {
        "api_key_env": "MY_KEY",
        "header_env": {"api-key": "AZURE_KEY"},
        "headers": {"OpenAI-Organization": "org-1"},
        "body": {
            "api_key": "***",
            "max_completion_tokens": 9,
            "auth": "***",
            "tools": [{"name": "t", "secret": "***"}],
            "token": None,  # null removes the field: nothing is sent, nothing to hide
        },
    }
    assert found == ("pw-nested-5678", "sk-body-1234", "12345678")
    assert options["body"]["api_key"] == "sk-body-1234"  # the caller's mapping is not changed
    clean = {"headers": {"X-Run": "1"}, "max_tokens": 5}
    assert mask_secrets(clean) == (clean, ())


def echo_body(request: StubRequest) -> StubReply:
    """A careless endpoint: it repeats the request body's credentials in its verdict."""
    body = request.body or {}
    said = f"{body.get('api_key')} {(body.get('auth') or {}).get('password')}"
    return StubReply.verdict("pass", f"called with {said}")


def cli_run(monkeypatch: pytest.MonkeyPatch, args: list[str]) -> tuple[int, str, str]:
    """``itemscore ARGS`` in this process, with ``sys.argv`` as a shell would set it."""
    monkeypatch.setattr(sys, "argv", ["itemscore", *args])
    done = CliRunner().invoke(cli, args, catch_exceptions=False)
    return done.exit_code, done.stdout, done.stderr


def data_file(tmp_path: Path) -> Path:
    data = tmp_path / "outputs.jsonl"
    rows = [{"id": f"q{i}", "output": f"answer {i}", "expected": "r"} for i in range(3)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return data


def test_body_credentials_are_sent_and_reach_no_record(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`body={api_key, auth.password}`: sent, then masked in every file, the lock and stdout."""
    key, password = fresh("sk-body"), fresh("pw")
    out = tmp_path / "out"
    with StubServer(echo_body) as server:
        spec = (
            f"llm_judge:model=stub,base_url={server.base_url},api_key_env=null,cache=false,"
            f"body={{api_key: {key}, auth: {{password: {password}, user: me}}, "
            "max_tokens: null, max_completion_tokens: 77}"
        )
        code, stdout, stderr = cli_run(
            monkeypatch, ["score", str(data_file(tmp_path)), "-m", spec, "--out", str(out)]
        )
    assert code == 0, stderr
    assert server.requests[0].body["api_key"] == key
    assert server.requests[0].body["auth"] == {"password": password, "user": "me"}
    for secret in (key, password):
        assert files_holding(tmp_path, secret) == [], secret
        assert secret not in stdout
        assert secret not in stderr
    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))
    (options,) = [m["options"] for m in saved["config"]["metrics"]]
    assert options["body"] == {"api_key": "***", "auth": "***", "max_tokens": None,
                               "max_completion_tokens": 77}  # fmt: skip
    command = saved["provenance"]["command"]
    assert any("body={api_key: ***, auth: {password: ***, user: me}" in part for part in command)
    lock = json.loads((out / ".itemscore" / "lock").read_text(encoding="utf-8"))
    assert lock["command"] == command
    assert "max_completion_tokens: 77" in (out / "report.html").read_text(encoding="utf-8")
    # The endpoint's echo is masked in the kept reply too.
    item = RunResult.load_json(out / "results.json").items[0].scores[LABEL]
    assert item.extra["reason"] == "called with *** ***"


@pytest.mark.parametrize(
    "header", ["X-Goog-Api-Key", "Ocp-Apim-Subscription-Key", "X-Auth-Token", "Authorization"]
)
def test_a_credential_header_is_refused_without_showing_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, header: str
) -> None:
    """A credential in `headers` is an option error (exit 2) that names it and hides its value."""
    secret = fresh("hdr")
    out = tmp_path / "out"
    spec = (
        "llm_judge:model=stub,base_url=http://127.0.0.1:9/v1,api_key_env=null,cache=false,"
        f"headers={{{header}: Bearer {secret}}}"
    )
    code, stdout, stderr = cli_run(
        monkeypatch, ["score", str(data_file(tmp_path)), "-m", spec, "--out", str(out)]
    )
    assert code == 2
    assert f"must not hold {header!r}" in stderr
    assert "`header_env`" in stderr
    assert secret not in stderr
    assert secret not in stdout
    assert files_holding(tmp_path, secret) == []
    assert not out.exists()  # refused before the folder is claimed
    with pytest.raises(OptionError) as caught:
        score([ItemResult(id="a", output="x")],
              [{"name": LABEL, "model": "m", "api_key_env": None, "cache": False,
                "headers": {header: secret}}])  # fmt: skip
    assert secret not in str(caught.value)


class ServiceMetric(Metric):
    """A third-party metric that takes a key as an option, and refuses a short one itself."""

    metric_id = "secrets_probe_service"

    def __init__(self, api_key: int | None = None, extra: dict[str, Any] | None = None) -> None:
        if extra and len(str(extra.get("token", ""))) < 40:
            raise ValueError("the token is too short")
        self.api_key = api_key

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        return self.ok()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param({"name": LABEL, "model": "m", "api_key_env": None, "cache": False,
                      "headers": {"X-Api-Key": 12345678901}}, "must be a mapping",
                     id="judge-nested-type"),
        pytest.param({"name": "secrets_probe_service", "api_key": "sk-12345678901"},
                     "`api_key` ('***') must be", id="top-level-type"),
        pytest.param({"name": "secrets_probe_service", "extra": {"token": "sk-12345678901"}},
                     "rejected its options {'extra': {'token': '***'}}", id="rejected"),
    ],
)  # fmt: skip
def test_option_errors_never_quote_a_credential(spec: dict[str, Any], message: str) -> None:
    """A bad value under a credential's name, at any depth, is reported masked."""
    register(ServiceMetric)
    try:
        with pytest.raises(OptionError) as caught:
            plan([spec])
    finally:
        unregister(ServiceMetric.metric_id)
    assert message in str(caught.value)
    assert "12345678901" not in str(caught.value)


def test_a_label_clash_does_not_quote_a_credential() -> None:
    """Two metrics under one label are named with their options, the credentials masked."""
    key = fresh("sk-clash")
    spec = {"name": LABEL, "model": "m", "api_key_env": None, "cache": False}
    with pytest.raises(ConfigError, match="Two metrics have the label") as caught:
        plan([{**spec, "body": {"api_key": key}}, {**spec, "body": {"top_p": 0.5}}])
    assert key not in str(caught.value)
    assert "'api_key': '***'" in str(caught.value)


def test_a_saved_run_gives_no_masked_secret_back(tmp_path: Path) -> None:
    """Rescoring from the saved configuration refuses `***` in a secret's place, naming it."""
    key = fresh("sk-rescore")
    with StubServer() as server:
        spec = server.spec(body={"api_key": key, "top_p": 0.5})
        result = score([ItemResult(id="a", output="x")], [spec])
        result.save_json(tmp_path / "results.json")
        loaded = RunResult.load_json(tmp_path / "results.json")
        assert files_holding(tmp_path, key) == []
        for saved in (result, loaded):  # in memory, the configuration is masked already
            with pytest.raises(OptionError, match=r"`body\.api_key` is '\*\*\*'"):
                rescore(saved)
        again = rescore(loaded, [spec])  # given again, with the secret: scored
    assert again.items[0].scores[LABEL].status.value == "ok"
    assert [r.body["api_key"] for r in server.requests] == [key, key]


def test_a_rotated_body_credential_finds_the_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No secret is part of the cache key: the cache answers after a body credential changes."""
    cache = str(tmp_path / "judge.sqlite3")
    old, new = fresh("old"), fresh("new")
    batch = [ItemResult(id=f"q{i}", output=f"answer {i}") for i in range(3)]
    with StubServer() as server:
        score(batch, [server.spec(cache=cache, body={"api_key": old})])
        again = score(batch, [server.spec(cache=cache, body={"api_key": new})])
        other = score(batch, [server.spec(cache=cache, body={"top_p": 0.5})])
    assert again.measurements[f"default.{LABEL}"].extra["cache_hits"] == 3
    assert other.measurements[f"default.{LABEL}"].extra["cache_hits"] == 0
    assert len(server.requests) == 6
    assert files_holding(tmp_path, old) == files_holding(tmp_path, new) == []


# -- 12. results.md keeps data as text ---------------------------------------------------------

HOSTILE_MODEL = "m</td><img src=x onerror=alert(1)>"
PIXEL_MODEL = "![p](http://tracker.example/pixel.png) & [click](http://evil.example)"


def hostile_run() -> RunResult:
    """Two models, a group and a label, a metric's unit: each carrying markup of its own."""
    rows = [
        ItemResult(id=f"q{i}", model=model, output="a" if i % 3 else "b", expected="a",
                   group="<script>alert(2)</script>|g", metadata={"cost": 0.01 * (1 + i % 2)})
        for model in (HOSTILE_MODEL, PIXEL_MODEL)
        for i in range(12)
    ]  # fmt: skip
    return score(
        rows,
        [{"name": "exact_match", "label": "em<b onmouseover=alert(3)>"},
         {"name": "cost", "unit": "<img src=u>"}],
        suite_id="s<i>uite",
    )  # fmt: skip


def test_results_md_renders_no_markup_from_the_data(tmp_path: Path) -> None:
    """Under CommonMark + GFM tables, no HTML, link or image comes from a name: only text."""
    from markdown_it import MarkdownIt

    (path,) = export(hostile_run(), tmp_path / "out", ["md"])
    text = path.read_text(encoding="utf-8")
    parser = MarkdownIt("commonmark").enable("table")
    tokens = parser.parse(text)
    inline = [child for token in tokens for child in (token.children or [])]
    kinds = {t.type for t in tokens} | {t.type for t in inline}
    assert not kinds & {"html_inline", "html_block", "image", "link_open"}, kinds
    rendered = parser.render(text)
    for tag in ("<img", "<script", "<b ", "<i>", "<a ", "</td><img"):
        assert tag not in rendered
    # Each name is shown whole, as the text it is.
    shown = {child.content for t in tokens if t.type == "inline" for child in t.children or []
             if child.type == "text"}  # fmt: skip
    assert any(HOSTILE_MODEL in s for s in shown), shown
    assert any("![p](http://tracker.example/pixel.png) & " in s for s in shown)
    assert any("em<b onmouseover=alert(3)>" in s for s in shown)
    assert any("<script>alert(2)</script>|g" in s for s in shown)
    assert any("<img src=u>" in s for s in shown)
    widths = [0]
    for token in tokens:  # no name opens a cell: 8 in every row
        if token.type == "tr_close":
            widths.append(0)
        elif token.type in ("td_open", "th_open"):
            widths[-1] += 1
    assert set(widths[:-1]) == {8}


def test_results_md_escapes_markup_and_keeps_plain_names_plain() -> None:
    """md_text: entities and escapes for markup; an ordinary label comes out as it went in."""
    from itemscore.reports.results_md import md_text

    assert md_text("exact_match (v2)") == "exact_match (v2)"
    assert md_text("a|b\\c") == "a\\|b\\\\c"
    assert md_text("<a&b>") == "&lt;a&amp;b&gt;"
    assert md_text("![x](y)") == "!\\[x\\](y)"
    assert md_text("line\nbreak\x1b[2J") == "line break\\\\x1b\\[2J"


# -- 13. the viewer's request log ---------------------------------------------------------------

#: Request lines that carry terminal sequences: OSC (set the title), CSI (clear the screen) and
#: a C1 CSI (byte 0x9b, read as one character by the server's Latin-1 decoding).
RAW_LINES = [
    b"GET /\x1b]0;PWNED\x07 HTTP/1.1",
    b"GET /?q=\x1b[2J\x1b[31mred HTTP/1.1",
    b"GET /\x9b2J HTTP/1.1",
    b"GET / HTTP/1.1\x1b]52;c;cHduZWQ=\x07",
]
CONTROLS = ("\x1b", "\x07", "\x9b")


def raw_request(port: int, line: bytes) -> bytes:
    """Send ``line`` as the request line, as a client that is not a browser may, and read all."""
    host = f"Host: 127.0.0.1:{port}".encode()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(line + b"\r\n" + host + b"\r\nConnection: close\r\n\r\n")
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def report_set(folder: Path) -> Path:
    result = score([ItemResult(id="a", output="x", expected="x")], ["exact_match"])
    export(result, folder, ["json", "items"])
    return folder


def test_the_request_log_shows_control_characters_as_escapes(tmp_path: Path) -> None:
    """Each logged line is one line of text: ESC, BEL and C1 controls appear as escapes."""
    from itemscore.viewer import make_server

    logged: list[str] = []
    viewer = make_server([report_set(tmp_path / "set")], 0, logged.append)
    thread = threading.Thread(target=viewer.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        answers = [raw_request(viewer.port, line) for line in RAW_LINES]
    finally:
        viewer.shutdown()
        viewer.server_close()
        thread.join(10)
    assert all(answers)  # each answered (a bad version with an HTTP/0.9 error, no status line)
    assert len(logged) >= len(RAW_LINES)
    for line in logged:
        assert not any(c in line for c in CONTROLS), repr(line)
        assert line.isprintable(), repr(line)
    text = "\n".join(logged)
    assert "GET /\\x1b]0;PWNED\\x07 HTTP/1.1" in text
    assert "\\x1b[2J\\x1b[31mred" in text
    assert "GET /\\x9b2J" in text


def test_view_log_prints_no_control_character_to_the_terminal(tmp_path: Path) -> None:
    """`itemscore view --log`: the lines on stderr hold no ESC or BEL from the requests."""
    process = subprocess.Popen(
        [sys.executable, "-c", "from itemscore.cli import main; main()", "view",
         str(report_set(tmp_path / "set")), "--log"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        assert process.stdout is not None
        line = process.stdout.readline().decode()
        found = re.search(r"at http://127\.0\.0\.1:(\d+)/ \(Ctrl-C stops it\)\.", line)
        assert found is not None, line
        for raw in RAW_LINES:
            assert raw_request(int(found.group(1)), raw)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=30)
    assert process.returncode == 0, err
    for control in CONTROLS:
        assert control.encode("latin-1") not in err, err
    assert b"\xc2\x9b" not in err  # the C1 CSI as UTF-8
    assert b"GET /\\x1b]0;PWNED\\x07 HTTP/1.1" in err


@pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning")
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_an_inspect_log_records_the_judges_options_masked(tmp_path: Path) -> None:
    """itemscore_scorer's options go into inspect's log with the body credential as `***`."""
    pytest.importorskip("inspect_ai")
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import get_model, modelapi
    from inspect_ai.model._providers.mockllm import MockLLM
    from inspect_ai.solver import generate

    @modelapi(name="secrets_offline")
    class Offline(MockLLM):  # type: ignore[misc]
        """The mock model, counting tokens by words: tiktoken would download its tables."""

        async def count_text_tokens(self, text: str) -> int:
            return len(text.split())

    from itemscore.integrations.inspect import itemscore_scorer

    key = fresh("sk-inspect")
    with StubServer() as server:
        spec = server.spec(body={"api_key": key, "top_p": 0.5})
        scorer = itemscore_scorer(spec.pop("name"), **spec)
        task = Task(dataset=[Sample(input="Say hi.", target="hi")], solver=generate(),
                    scorer=scorer)  # fmt: skip
        model = get_model("secrets_offline/model")
        (log,) = eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success", log.error
    assert server.requests[0].body["api_key"] == key  # sent
    assert log.eval.scorers[0].options["options"]["body"] == {"api_key": "***", "top_p": 0.5}
    assert log.results.scores[0].metrics  # the metrics are computed from the masked options
    assert list((tmp_path / "logs").iterdir())
    assert files_holding(tmp_path, key) == []
