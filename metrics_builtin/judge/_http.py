"""Talking to an OpenAI-compatible chat-completions endpoint: one session per event loop.

A :class:`JudgeSession` owns what must not outlive its event loop: the ``httpx.AsyncClient``
(its pooled connections), the semaphore that bounds concurrent requests and the cache
connection. It is opened on the first judgment made in a loop and closed when that loop shuts
down (``asyncio.run`` finalises open async generators, and the session's keeper is one), so
the runner needs to know nothing about it.

Requests are retried on 429, 5xx, connection errors and timeouts, with exponential backoff and
jitter, or after the delay the endpoint asks for (``Retry-After`` / ``retry-after-ms``).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import random
import ssl
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from itemscore.metrics_builtin.judge._cache import ReplyCache, request_key

if TYPE_CHECKING:
    import httpx

__all__ = ["JudgeFailure", "JudgeSession", "Reply", "import_httpx"]

#: The longest wait between two attempts, whatever the backoff or the endpoint asks for (s).
MAX_DELAY = 120.0
#: First backoff delay (s); doubles with every retry, times a random factor in [0.5, 1].
BACKOFF_BASE = 0.5
_SNIPPET = 200
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
            "The llm_judge metric needs httpx, which is not installed: "
            "pip install 'itemscore[judge]'.",
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


class JudgeFailure(Exception):
    """Raised when a judgment cannot be had: retries exhausted, a timeout, a refused request."""

    def __init__(self, reason: str, requests: int) -> None:
        super().__init__(reason)
        #: Why, in one sentence (the key redacted).
        self.reason = reason
        #: HTTP requests made before giving up.
        self.requests = requests


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _SNIPPET else flat[: _SNIPPET - 1] + "…"


def _error_message(response: httpx.Response) -> str:
    """The endpoint's own error message, when its body has one, else the body's start."""
    try:
        body = response.json()
    except ValueError:
        return _snippet(response.text)
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return _snippet(error["message"])
        if isinstance(error, str):
            return _snippet(error)
        if isinstance(body.get("message"), str):
            return _snippet(body["message"])
    return _snippet(response.text)


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
        api_key: Sent as ``Authorization: Bearer``; ``None`` sends none.
        timeout: Seconds per request.
        max_retries: Retries after the first attempt.
        concurrency: Requests in flight at most.
        cache: The reply cache, or ``None``.
        redact: Removes the key from any text that leaves the session.
    """

    def __init__(
        self,
        *,
        url: str,
        api_key: str | None,
        timeout: float,
        max_retries: int,
        concurrency: int,
        cache: ReplyCache | None,
        redact: Callable[[str], str],
    ) -> None:
        self._httpx = import_httpx()
        self.url = url
        self.timeout = timeout
        self.max_retries = max_retries
        self.cache = cache
        self.redact = redact
        self.gate = asyncio.Semaphore(concurrency)
        self._headers = {"Content-Type": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._ssl: ssl.SSLContext | None = None
        # One client of one connection per request in flight, instead of one client of
        # `concurrency` connections: httpcore's pool does work in connections x waiting
        # requests on every change, which made 32 connections cost 7 ms of CPU a request.
        self._idle: list[httpx.AsyncClient] = []
        self._clients: list[httpx.AsyncClient] = []

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

    async def aclose(self) -> None:
        """Close the client's connections and the cache."""
        try:
            for client in self._clients:
                await client.aclose()
        finally:
            if self.cache is not None:
                self.cache.close()

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
            key = request_key(self.url, payload, sample)
            if self.cache is not None:
                hit = self.cache.get(key)
                if hit is not None:
                    return Reply(hit, True, requests)
            try:
                data, made = await self._post(payload, structured=structured)
            except _Unstructured as exc:
                requests += exc.requests
                payload, structured = on_unstructured(), False
                continue
            except JudgeFailure as exc:
                raise JudgeFailure(exc.reason, requests + exc.requests) from None
            requests += made
            if self.cache is not None:
                self.cache.put(key, data)
            return Reply(data, False, requests)

    async def _post(self, payload: bytes, *, structured: bool) -> tuple[dict[str, Any], int]:
        httpx = self._httpx
        attempts = self.max_retries + 1
        last = ""
        for attempt in range(attempts):
            wait: float | None = None
            async with self.gate:
                client = self._client()
                try:
                    response = await client.post(self.url, content=payload)
                except httpx.TimeoutException:
                    last = f"the request timed out after {self.timeout:g} s"
                    continue_ = True
                except httpx.TransportError as exc:
                    last = f"connection error ({type(exc).__name__}: {self.redact(str(exc))})"
                    continue_ = True
                else:
                    continue_ = False
                finally:
                    self._idle.append(client)
                if not continue_:
                    status = response.status_code
                    if status == 200:
                        return self._json(response, attempt + 1), attempt + 1
                    message = self.redact(_error_message(response))
                    if status == 429 or status >= 500:
                        last = f"HTTP {status} ({message})" if message else f"HTTP {status}"
                        wait = retry_after(response.headers)
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

    def _json(self, response: httpx.Response, requests: int) -> dict[str, Any]:
        try:
            data = response.json()
        except (ValueError, UnicodeDecodeError):
            raise JudgeFailure(
                "the judge endpoint answered HTTP 200 with a body that is not JSON: "
                + repr(self.redact(_snippet(response.text))),
                requests,
            ) from None
        if not isinstance(data, dict):
            raise JudgeFailure(
                "the judge endpoint answered HTTP 200 with JSON that is not an object: "
                + repr(self.redact(_snippet(json.dumps(data)))),
                requests,
            )
        return data


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
