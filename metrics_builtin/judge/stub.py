"""A stub OpenAI-compatible judge endpoint on 127.0.0.1, for tests, benchmarks and trying out.

It speaks just enough HTTP/1.1 (keep-alive, ``Content-Length`` and chunked bodies) to answer
``POST /v1/chat/completions`` with what a *script* says: a verdict, an HTTP error with headers
(``Retry-After``), a malformed body, a slow reply, a reply dripped a few bytes at a time, a
reply without end. Nothing here touches the network beyond the loopback interface.

    with StubServer(lambda request: StubReply.verdict("pass")) as server:
        score(items, [{"name": "llm_judge", "model": "stub", "base_url": server.base_url,
                       "api_key_env": None}])

``python -m itemscore.metrics_builtin.judge.stub --port 8000 --delay 0.05`` serves the default
script (a deterministic pass or fail per request) until interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

import attrs

__all__ = ["StubReply", "StubRequest", "StubServer", "default_script"]


@attrs.frozen
class StubRequest:
    """One request the stub received."""

    #: ``"POST"``...
    method: str
    #: The request path, e.g. ``/v1/chat/completions``.
    path: str
    #: Header names in lower case.
    headers: Mapping[str, str]
    #: The parsed JSON body (``None`` when not JSON).
    body: Any

    @property
    def last_message(self) -> str:
        """The content of the last chat message, or ""."""
        try:
            return str(self.body["messages"][-1]["content"])
        except (KeyError, IndexError, TypeError):
            return ""


@attrs.frozen
class StubReply:
    """What the stub sends back."""

    #: HTTP status.
    status: int = 200
    #: The body: a JSON-able object, or bytes/str sent as they are.
    body: Any = None
    #: Extra response headers.
    headers: Mapping[str, str] = attrs.field(factory=dict)
    #: Seconds to wait before answering.
    delay: float = 0.0
    #: Seconds between two pieces of the body (0: the body at once).
    drip: float = 0.0
    #: Bytes per piece when the body is dripped.
    piece: int = 1
    #: A body of unknown length instead of ``body``: its pieces are sent chunked, as they come
    #: (while the client reads them).
    stream: Callable[[], Iterable[bytes]] | None = None

    @classmethod
    def chat(
        cls,
        content: str | None,
        *,
        refusal: str | None = None,
        prompt_tokens: int = 100,
        completion_tokens: int = 10,
        delay: float = 0.0,
        finish_reason: str = "stop",
    ) -> StubReply:
        """A chat-completion reply whose message content is ``content``."""
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if refusal is not None:
            message["refusal"] = refusal
        body = {
            "id": "chatcmpl-stub",
            "object": "chat.completion",
            "model": "stub",
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        return cls(200, body, {}, delay)

    @classmethod
    def verdict(cls, score: Any, reason: str = "stub verdict", **kwargs: Any) -> StubReply:
        """A chat-completion reply holding the JSON verdict ``{"reason", "score"}``."""
        return cls.chat(json.dumps({"reason": reason, "score": score}), **kwargs)

    @classmethod
    def error(
        cls, status: int, message: str = "stub error", headers: Mapping[str, str] | None = None
    ) -> StubReply:
        """An OpenAI-style error reply."""
        body = {"error": {"message": message, "type": "stub", "code": status}}
        return cls(status, body, dict(headers or {}), 0.0)


Script = Callable[[StubRequest], "StubReply | Awaitable[StubReply]"]
_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found",
            429: "Too Many Requests", 500: "Internal Server Error", 502: "Bad Gateway",
            503: "Service Unavailable"}  # fmt: skip


def default_script(delay: float = 0.0) -> Script:
    """A script answering pass or fail, decided by a hash of the last message (reproducible)."""

    def script(request: StubRequest) -> StubReply:
        digest = hashlib.sha256(request.last_message.encode("utf-8")).digest()
        return StubReply.verdict("pass" if digest[0] % 2 else "fail", delay=delay)

    return script


class StubServer:
    """The stub endpoint, served from a background thread; use it as a context manager.

    Args:
        script: Turns each request into a reply (may be ``async``).
        port: 0 picks a free port.
    """

    def __init__(self, script: Script | None = None, *, port: int = 0) -> None:
        self.script: Script = script or default_script()
        self.requests: list[StubRequest] = []
        #: Body bytes the stub managed to send (a client that stops reading stops it).
        self.sent = 0
        self._port = port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``: the ``base_url`` option to give ``llm_judge``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def spec(self, **options: Any) -> dict[str, Any]:
        """An ``llm_judge`` spec asking this stub: no key, no cache, then ``options``."""
        spec: dict[str, Any] = {
            "name": "llm_judge",
            "model": "stub",
            "base_url": self.base_url,
            "api_key_env": None,
            "cache": False,
        }
        spec.update(options)
        return spec

    def __enter__(self) -> StubServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Start serving; returns once the port is bound."""
        ready = threading.Event()
        self._loop = asyncio.new_event_loop()

        def serve() -> None:
            assert self._loop is not None
            asyncio.set_event_loop(self._loop)
            self._server = self._loop.run_until_complete(
                asyncio.start_server(self._handle, "127.0.0.1", self._port)
            )
            self.port = self._server.sockets[0].getsockname()[1]
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=serve, name="itemscore-judge-stub", daemon=True)
        self._thread.start()
        ready.wait()

    def stop(self) -> None:
        """Stop serving and close every connection."""
        loop = self._loop
        if loop is None or self._thread is None:
            return

        async def shutdown() -> None:
            assert self._server is not None
            self._server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await self._server.wait_closed()

        asyncio.run_coroutine_threadsafe(shutdown(), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join()
        loop.close()
        self._loop = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                self.requests.append(request)
                reply = self.script(request)
                if not isinstance(reply, StubReply):
                    reply = await reply
                if reply.delay:
                    await asyncio.sleep(reply.delay)
                await self._send(writer, reply)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _send(self, writer: asyncio.StreamWriter, reply: StubReply) -> None:
        if reply.stream is not None:
            writer.write(_head(reply, None, "application/json"))
            for part in reply.stream():
                writer.write(b"%x\r\n%s\r\n" % (len(part), part))
                await writer.drain()
                self.sent += len(part)
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return
        payload, kind = _payload(reply)
        writer.write(_head(reply, len(payload), kind))
        if not reply.drip:
            writer.write(payload)
            await writer.drain()
            self.sent += len(payload)
            return
        for start in range(0, len(payload), reply.piece):
            writer.write(payload[start : start + reply.piece])
            await writer.drain()
            self.sent += len(payload[start : start + reply.piece])
            await asyncio.sleep(reply.drip)


async def _read_request(reader: asyncio.StreamReader) -> StubRequest | None:
    line = await reader.readline()
    if not line.strip():
        return None
    method, path, _ = line.decode("latin-1").split(" ", 2)
    headers: dict[str, str] = {}
    while True:
        header = await reader.readline()
        if header in (b"\r\n", b"\n", b""):
            break
        name, _, value = header.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    raw = await reader.readexactly(length) if length else b""
    try:
        body = json.loads(raw) if raw else None
    except ValueError:
        body = None
    return StubRequest(method, path, headers, body)


def _payload(reply: StubReply) -> tuple[bytes, str]:
    if isinstance(reply.body, bytes):
        return reply.body, "application/octet-stream"
    if isinstance(reply.body, str):
        return reply.body.encode("utf-8"), "text/plain; charset=utf-8"
    return json.dumps(reply.body).encode("utf-8"), "application/json"


def _head(reply: StubReply, length: int | None, kind: str) -> bytes:
    framing = "Transfer-Encoding: chunked" if length is None else f"Content-Length: {length}"
    head = [
        f"HTTP/1.1 {reply.status} {_REASONS.get(reply.status, 'Status')}",
        f"Content-Type: {kind}",
        framing,
        *(f"{k}: {v}" for k, v in reply.headers.items()),
    ]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1")


def main(argv: list[str] | None = None) -> None:  # pragma: no cover - an interactive server
    """Serve the default script until interrupted."""
    parser = argparse.ArgumentParser(prog="python -m itemscore.metrics_builtin.judge.stub")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each reply")
    args = parser.parse_args(argv)
    server = StubServer(default_script(args.delay), port=args.port)
    server.start()
    print(f"Serving a stub judge at {server.base_url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":  # pragma: no cover
    main()
