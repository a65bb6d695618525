"""Talking to an OpenAI-compatible chat-completions endpoint: one session per event loop.

A :class:`JudgeSession` owns what must not outlive its event loop: the ``httpx.AsyncClient``
(its pooled connections), the semaphore that bounds concurrent requests and the cache
connection. It is opened on the first judgment made in a loop and closed when that loop shuts
down (``asyncio.run`` finalises open async generators, and the session's keeper is one), so
the runner needs to know nothing about it.

Requests are retried on 429, 5xx, connection errors and timeouts, with exponential backoff and
jitter, or after the delay the endpoint asks for (``Retry-After`` / ``retry-after-ms``).

Every attempt is bounded: ``timeout`` is its deadline from connecting to the reply's last byte
(an endpoint that drip-feeds its reply cannot keep it alive), and at most ``max_reply_bytes`` of
a reply are read (an uncompressed one: itemscore asks for no content encoding, so no reply can
grow when it is decoded). Secrets are redacted from every reply before it is cached or read.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import math
import random
import sqlite3
import ssl
import sys
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from itemscore.metrics_builtin.judge._cache import ReplyCache, request_key
from itemscore.metrics_builtin.judge._redact import MASK, redact_text, redact_tree, snippet

if TYPE_CHECKING:
    import httpx

__all__ = ["JudgeFailure", "JudgeSession", "Reply", "import_httpx"]

#: The longest wait between two attempts, whatever the backoff or the endpoint asks for (s).
MAX_DELAY = 120.0
#: First backoff delay (s); doubles with every retry, times a random factor in [0.5, 1].
BACKOFF_BASE = 0.5
#: How the session waits between attempts (tests record the delays through it).
sleep = asyncio.sleep
# Words in a 400 reply that say the endpoint does not take `response_format`.
_NO_STRUCTURED = ("response_format", "json_schema", "structured output", "guided")


def import_httpx() -> Any:
    """The ``httpx`` module; a clear error naming the extra when it is not installed.

    Raises:
        ModuleNotFoundError: httpx is missing.
    """
    try:
        import httpx
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            "The llm_judge metric needs httpx (the `judge` extra), which is not installed.",
            name="httpx",
        ) from exc
    return httpx


@attrs.frozen
class Reply:
    """One judgment's reply, from the endpoint or the cache."""

    #: The endpoint's JSON body.
    data: Mapping[str, Any]
    #: Whether it came from the cache (no request made).
    cached: bool
    #: HTTP requests made for it, retries included.
    requests: int
    #: Whether an earlier attempt at this judgment (an earlier run) failed and it was asked again.
    reasked: bool = False


class JudgeFailure(Exception):
    """Raised when a judgment cannot be had: retries exhausted, a timeout, a refused request."""

    def __init__(self, reason: str, requests: int, reasked: bool = False) -> None:
        super().__init__(reason)
        #: Why, in one sentence (the secrets redacted).
        self.reason = reason
        #: HTTP requests made before giving up.
        self.requests = requests
        #: Whether an earlier attempt at this judgment had failed too.
        self.reasked = reasked


@attrs.frozen
class _Answer:
    """One HTTP exchange, read in full within its bounds."""

    status: int
    headers: Any
    body: bytes
    charset: str | None

    @property
    def text(self) -> str:
        return self.body.decode(self.charset or "utf-8", errors="replace")


class _Refused(Exception):
    """A reply that is not read (too large, encoded): the item's error, without a retry."""


def _decode_json(body: bytes) -> Any:
    """The parsed body. Raises ValueError when it is not JSON (also when nested past parsing)."""
    try:
        return json.loads(body)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _error_message(answer: _Answer, secrets: tuple[str, ...]) -> str:
    """The endpoint's own error message, when its body has one, else the body's start.

    Redacted before it is cut (:func:`snippet`), so no part of a secret is left.
    """
    try:
        body = _decode_json(answer.body)
    except ValueError:
        return snippet(answer.text, secrets)
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return snippet(error["message"], secrets)
        if isinstance(error, str):
            return snippet(error, secrets)
        if isinstance(body.get("message"), str):
            return snippet(body["message"], secrets)
    return snippet(json.dumps(body, ensure_ascii=False), secrets)


def retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """The delay (s) the endpoint asks for; ``None`` when it asks for none (or nonsense).

    Read from ``retry-after-ms`` (OpenAI's), else ``Retry-After`` in seconds or as an HTTP date.
    """
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            value = float(millis) / 1000
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value >= 0:
            return value
    header = headers.get("retry-after")
    if header is None:
        return None
    try:
        value = float(header)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(header)
        except (TypeError, ValueError):
            return None
        value = when.timestamp() - (time.time() if now is None else now)
        return max(0.0, value)
    return value if math.isfinite(value) and value >= 0 else None


class JudgeSession:
    """The client, semaphore and cache of one event loop.

    Args:
        url: ``{base_url}/chat/completions``.
        headers: Every header sent: the key's ``Authorization``, the secret headers and the
            extra ones.
        key_headers: The extra non-secret headers, which are part of the cache key.
        secrets: The texts redacted from every reply (:func:`usable_secrets`).
        timeout: Seconds per attempt, in total (from connecting to the reply's last byte).
        max_retries: Retries after the first attempt.
        max_reply_bytes: The most bytes of a reply read; a longer reply is the item's error.
        concurrency: Requests in flight at most.
        cache: The reply cache, or ``None``.
        on_cache_failure: Called once with a sentence naming the cache when it fails during
            the run; the session goes on without it.
    """

    def __init__(
        self,
        *,
        url: str,
        headers: Mapping[str, str],
        key_headers: Sequence[tuple[str, str]] = (),
        secrets: tuple[str, ...] = (),
        timeout: float,
        max_retries: int,
        max_reply_bytes: int,
        concurrency: int,
        cache: ReplyCache | None,
        on_cache_failure: Callable[[str], None] | None = None,
    ) -> None:
        self._httpx = import_httpx()
        self.url = url
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_reply_bytes = max_reply_bytes
        self.cache = cache
        self.secrets = secrets
        # Each secret as it is written inside the encoded body (a body field may hold one).
        self._encoded_secrets = [json.dumps(x, ensure_ascii=False)[1:-1].encode("utf-8")
                                 for x in secrets]  # fmt: skip
        self.key_headers = tuple(key_headers)
        self.on_cache_failure = on_cache_failure
        self.gate = asyncio.Semaphore(concurrency)
        # identity: a reply is read as sent, so no decoding can make it larger than its bound.
        self._headers = {
            "Content-Type": "application/json",
            "Accept-Encoding": "identity",
            **headers,
        }
        self._ssl: ssl.SSLContext | None = None
        # One client of one connection per request in flight, instead of one client of
        # `concurrency` connections: httpcore's pool does work in connections x waiting
        # requests on every change, which made 32 connections cost 7 ms of CPU a request.
        self._idle: list[httpx.AsyncClient] = []
        self._clients: list[httpx.AsyncClient] = []

    def redact(self, text: str) -> str:
        """``text`` with every secret replaced by ``***``."""
        return redact_text(text, self.secrets)

    def _keyed(self, payload: bytes) -> bytes:
        """``payload`` with every secret as ``***``: what the cache key hashes.

        No secret is part of the key, so a rotated secret (a ``body`` credential field
        included) still finds the replies cached under the old one.
        """
        for secret in self._encoded_secrets:
            if secret in payload:
                payload = payload.replace(secret, MASK.encode("ascii"))
        return payload

    def _client(self) -> httpx.AsyncClient:
        if self._idle:
            return self._idle.pop()
        http = self._httpx
        if self._ssl is None:  # one context for every client: building one costs ~10 ms
            self._ssl = _ssl_context()
        client: httpx.AsyncClient = http.AsyncClient(
            headers=self._headers,
            timeout=http.Timeout(self.timeout),
            limits=http.Limits(max_connections=1, max_keepalive_connections=1),
            verify=self._ssl,
            follow_redirects=False,
        )
        self._clients.append(client)
        return client

    async def _discard(self, client: httpx.AsyncClient) -> None:
        """Close a client whose exchange was cut off: its connection is in an unknown state."""
        self._clients.remove(client)
        await client.aclose()

    async def aclose(self) -> None:
        """Close the client's connections and the cache."""
        try:
            for client in self._clients:
                await client.aclose()
        finally:
            if self.cache is not None:
                self.cache.close()

    # -- the cache, given up (with a warning) when it fails --------------------------------

    def _cached(self, method: Callable[..., Any], *args: Any) -> Any:
        cache = self.cache
        if cache is None:
            return None
        try:
            return method(cache, *args)
        except sqlite3.Error as exc:
            self.cache = None
            cache.close()
            if self.on_cache_failure is not None:
                self.on_cache_failure(
                    f"The judge cache {str(cache.path)!r} failed during the run "
                    f"({type(exc).__name__}: {exc}); the run goes on without it: the remaining "
                    "judgments are asked from the endpoint and not kept."
                )
            return None

    async def judge(
        self,
        payload: bytes,
        structured: bool,
        sample: int,
        on_unstructured: Callable[[], bytes],
    ) -> Reply:
        """One judgment: from the cache, or a request (retried as needed).

        Args:
            payload: The encoded request body (:func:`encode_body`).
            structured: Whether it asks for structured output (``response_format``).
            sample: Which of the item's samples this is (part of the cache key).
            on_unstructured: Called when the endpoint rejects ``response_format``; returns the
                body to send instead.

        Raises:
            JudgeFailure: no reply could be had.
        """
        requests = 0
        while True:
            key = request_key(self.url, self._keyed(payload), sample, self.key_headers)
            hit = self._cached(ReplyCache.get, key)
            if hit is not None:
                return Reply(redact_tree(hit, self.secrets), True, requests)
            reasked = bool(self._cached(ReplyCache.failed_before, key))
            try:
                data, made = await self._post(payload, structured=structured)
            except _Unstructured as exc:
                requests += exc.requests
                payload, structured = on_unstructured(), False
                continue
            except JudgeFailure as exc:
                self._cached(ReplyCache.put_failure, key)
                raise JudgeFailure(exc.reason, requests + exc.requests, reasked) from None
            requests += made
            self._cached(functools.partial(ReplyCache.put, failed_before=reasked), key, data)
            return Reply(data, False, requests, reasked)

    async def _exchange(self, client: httpx.AsyncClient, payload: bytes) -> _Answer:
        """One request, its reply read up to ``max_reply_bytes``."""
        limit = self.max_reply_bytes
        async with client.stream("POST", self.url, content=payload) as response:
            encoding = response.headers.get("content-encoding", "identity").strip().lower()
            if encoding not in ("", "identity"):
                raise _Refused(
                    f"the judge endpoint sent its reply encoded ({encoding!r}) although "
                    "itemscore asks for none (Accept-Encoding: identity); it is not read"
                )
            declared = response.headers.get("content-length", "")
            if declared.isdecimal() and (len(declared) > 18 or int(declared) > limit):
                raise _Refused(self._too_large())
            body = bytearray()
            async for chunk in response.aiter_raw():
                body += chunk
                if len(body) > limit:
                    raise _Refused(self._too_large())
            return _Answer(response.status_code, response.headers, bytes(body),
                           response.charset_encoding)  # fmt: skip

    def _too_large(self) -> str:
        return (
            f"the judge endpoint's reply is larger than {self.max_reply_bytes:,} bytes "
            "(`max_reply_bytes`): it was not read past that"
        )

    async def _post(self, payload: bytes, *, structured: bool) -> tuple[dict[str, Any], int]:
        httpx = self._httpx
        attempts = self.max_retries + 1
        last = ""
        for attempt in range(attempts):
            wait: float | None = None
            async with self.gate:
                client = self._client()
                try:
                    # The deadline covers the whole exchange: httpx's own timeouts are per
                    # read, which a reply dripping one byte at a time never trips.
                    answer = await _within(self.timeout, self._exchange(client, payload))
                except (httpx.TimeoutException, asyncio.TimeoutError):
                    await self._discard(client)
                    last = f"the request timed out after {self.timeout:g} s"
                    answer = None
                except httpx.TransportError as exc:
                    await self._discard(client)
                    last = f"connection error ({type(exc).__name__}: {self.redact(str(exc))})"
                    answer = None
                except _Refused as exc:
                    await self._discard(client)
                    raise JudgeFailure(str(exc), attempt + 1) from None
                else:
                    self._idle.append(client)
                if answer is not None:
                    status = answer.status
                    if status == 200:
                        return self._json(answer, attempt + 1), attempt + 1
                    message = _error_message(answer, self.secrets)
                    if status == 429 or status >= 500:
                        last = f"HTTP {status} ({message})" if message else f"HTTP {status}"
                        wait = retry_after(answer.headers)
                    elif status in (400, 422) and any(
                        word in message.lower() for word in _NO_STRUCTURED
                    ) and structured:  # fmt: skip
                        raise _Unstructured(attempt + 1)
                    else:
                        raise JudgeFailure(
                            f"the judge endpoint answered HTTP {status}: {message}", attempt + 1
                        )
            if attempt + 1 < attempts:
                if wait is None:
                    wait = BACKOFF_BASE * 2**attempt * random.uniform(0.5, 1.0)
                await sleep(min(wait, MAX_DELAY))
        raise JudgeFailure(
            f"{last}; gave up after {attempts} attempt{'s' if attempts != 1 else ''}", attempts
        )

    def _json(self, answer: _Answer, requests: int) -> dict[str, Any]:
        """The reply's JSON object, every secret in it redacted."""
        try:
            data = _decode_json(answer.body)
        except ValueError:
            raise JudgeFailure(
                "the judge endpoint answered HTTP 200 with a body that is not JSON: "
                + repr(snippet(answer.text, self.secrets)),
                requests,
            ) from None
        if not isinstance(data, dict):
            raise JudgeFailure(
                "the judge endpoint answered HTTP 200 with JSON that is not an object: "
                + repr(snippet(json.dumps(data, ensure_ascii=False), self.secrets)),
                requests,
            )
        redacted: dict[str, Any] = redact_tree(data, self.secrets)
        return redacted


async def _within(seconds: float, exchange: Coroutine[Any, Any, _Answer]) -> _Answer:
    """``exchange`` run to its end, or cancelled after ``seconds`` (``TimeoutError``)."""
    if sys.version_info >= (3, 11):  # a deadline on this task, without a task of its own
        async with asyncio.timeout(seconds):
            return await exchange
    return await asyncio.wait_for(exchange, seconds)  # pragma: no cover - Python 3.10


def _ssl_context() -> ssl.SSLContext:
    """The system's trusted certificates plus certifi's (httpx's default bundle)."""
    context = ssl.create_default_context()
    try:
        import certifi
    except ModuleNotFoundError:  # pragma: no cover - httpx depends on certifi
        return context
    context.load_verify_locations(certifi.where())
    return context


class _Unstructured(Exception):
    """The endpoint rejected ``response_format``: send the request without it."""

    def __init__(self, requests: int) -> None:
        super().__init__("response_format is not supported")
        self.requests = requests


async def session_keeper(session: JudgeSession) -> AsyncIterator[JudgeSession]:
    """Yields ``session`` once; closes it when the event loop finalises the generator."""
    try:
        yield session
    finally:
        await session.aclose()
