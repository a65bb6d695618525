"""``llm_judge``: an LLM grades each output against a rubric over an OpenAI-compatible API."""

from __future__ import annotations

import json
import math
import os
import re
import urllib.parse
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from itemscore import (
    Estimate,
    ItemResult,
    ItemScore,
    Measurement,
    Metric,
    MetricContext,
    OptionError,
    is_secret_name,
    mask_secrets,
)
from itemscore.metrics_builtin._value_bootstrap import ValueMeansBootstrap
from itemscore.metrics_builtin.judge._cache import (
    CacheUnusable,
    JudgeCacheWarning,
    ReplyCache,
    default_cache_dir,
    encode_body,
    probe_cache,
)
from itemscore.metrics_builtin.judge._parse import SCALES, Scale, UnparseableReply, parse_verdict
from itemscore.metrics_builtin.judge._redact import redact_text, usable_secrets

if TYPE_CHECKING:  # asyncio, ssl and the HTTP session load when a judgment is first requested
    import asyncio

    from itemscore.metrics_builtin.judge._http import JudgeSession, Reply

__all__ = ["LlmJudge"]

#: Where requests go when neither ``base_url`` nor ``OPENAI_BASE_URL`` says otherwise.
DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: The cache file inside the user cache folder (``cache=true``).
CACHE_FILE = "judge-cache.sqlite3"
#: The default bound on one reply (bytes): a verdict takes a few hundred.
MAX_REPLY_BYTES = 4 * 1024 * 1024
#: The largest token count believed (the largest integer a float holds exactly).
MAX_COUNT = 2**53 - 1
# An HTTP field name (RFC 9110 token) and an environment variable's name.
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Headers the judge sets itself (the body's framing). Headers that carry credentials (by
# `is_secret_name`, the rule every record of the run masks by) belong in `header_env`.
_FRAMING = frozenset({"content-type", "content-length", "transfer-encoding", "host",
                      "connection", "accept-encoding", "te", "upgrade"})  # fmt: skip
# Body fields the judge builds itself, and those with an option of their own.
_BUILT = {"model": "model", "messages": None, "stream": None}
_OWN_OPTION = {"temperature": "temperature", "max_tokens": "max_tokens"}

_DEFAULT_RUBRICS = {
    True: (
        "Pass when the answer is correct and responds to the input (in agreement with the "
        "reference answer, when one is given); fail otherwise."
    ),
    False: (
        "Rate the answer's overall quality: correctness (against the reference answer, when "
        "one is given), completeness and clarity."
    ),
}
_SYSTEM = """You are an impartial judge. Grade the model's answer against the rubric.

Rubric:
{rubric}

Reply with a JSON object only: {{"reason": "<one or two sentences>", "score": <verdict>}}, \
where the verdict is {scale}."""
_REFUSED = "the judge refused to grade"
_NO_OUTPUT = "the request failed (output is None): scored as the scale's worst verdict"
_SKIPPED_NO_OUTPUT = "the request failed (output is None); count_failed=False leaves it out"


def _positive(name: str, value: float, *, zero: bool = False) -> None:
    if not math.isfinite(value) or value < 0 or (value == 0 and not zero):
        bound = "0 or more" if zero else "greater than 0"
        raise OptionError(f"Metric 'llm_judge': `{name}` ({value!r}) must be {bound}.")


def _check_base_url(base_url: str) -> str:
    parsed = urllib.parse.urlsplit(base_url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise OptionError(
            f"Metric 'llm_judge': `base_url` ({base_url!r}) must be an http(s) URL, "
            "e.g. 'http://127.0.0.1:8080/v1' or 'https://api.openai.com/v1'."
        )
    if parsed.username is not None or parsed.password is not None:
        raise OptionError(
            "Metric 'llm_judge': `base_url` must not hold credentials: put the key in the "
            "environment variable named by `api_key_env`."
        )
    return base_url.rstrip("/")


def _read_rubric(rubric: str | None, pass_fail: bool) -> str:
    if rubric is None:
        return _DEFAULT_RUBRICS[pass_fail]
    if rubric.startswith("@"):
        path = Path(rubric[1:]).expanduser()
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise OptionError(
                f"Metric 'llm_judge': `rubric` ({rubric!r}) names a file that cannot be read: "
                f"{exc.strerror or exc}."
            ) from None
    else:
        text = rubric
    if not text.strip():
        raise OptionError(f"Metric 'llm_judge': `rubric` ({rubric!r}) is empty.")
    return text.strip()


def _cache_path(cache: bool | str) -> Path | None:
    if cache is False:
        return None
    if cache is True:
        return default_cache_dir() / CACHE_FILE
    if not cache.strip():
        raise OptionError(
            "Metric 'llm_judge': `cache` ('') must be a file path, true (the user cache "
            "folder) or false (no cache)."
        )
    path = Path(cache).expanduser()
    return path / CACHE_FILE if path.is_dir() else path


def _check_cache(path: Path | None) -> None:
    """Fail before any item is scored when the cache cannot be used; warn when others read it."""
    if path is None:
        return
    try:
        notes = probe_cache(path)
    except CacheUnusable as exc:
        raise OptionError(
            f"Metric 'llm_judge': `cache`: {exc}", metric_id="llm_judge", option="cache"
        ) from None
    for note in notes:
        warnings.warn(note, JudgeCacheWarning, stacklevel=4)


def _header_name(option: str, name: object) -> str:
    if not isinstance(name, str) or not _TOKEN.fullmatch(name):
        raise OptionError(
            f"Metric 'llm_judge': `{option}` has the header name {name!r}, which is not an "
            "HTTP header name (letters, digits and !#$%&'*+.^_`|~-).",
            metric_id="llm_judge", option=option,
        )  # fmt: skip
    lower = name.lower()
    if lower in _FRAMING:
        raise OptionError(
            f"Metric 'llm_judge': `{option}` cannot set {name!r}: the judge sets it itself.",
            metric_id="llm_judge", option=option,
        )  # fmt: skip
    return lower


def _header_value(option: str, name: str, value: object, shown: bool = True) -> str:
    if not isinstance(value, str) or any(
        (ord(c) < 32 and c != "\t") or ord(c) == 127 for c in value
    ):
        what = f"{value!r}" if shown else "the value of its environment variable"
        raise OptionError(
            f"Metric 'llm_judge': `{option}`: header {name!r} has {what}, which is not a header "
            "value (a string without line breaks or control characters).",
            metric_id="llm_judge", option=option,
        )  # fmt: skip
    return value


def _check_headers(
    headers: Mapping[str, str] | None, header_env: Mapping[str, str] | None, api_key_env: str | None
) -> tuple[dict[str, str], dict[str, str]]:
    """The extra headers and the secret headers (name -> variable), checked."""
    plain: dict[str, str] = {}
    seen: dict[str, str] = {}
    for name, value in (headers or {}).items():
        lower = _header_name("headers", name)
        if is_secret_name(name):
            raise OptionError(
                f"Metric 'llm_judge': `headers` must not hold {name!r}, which carries a "
                "credential (its value is not shown): the configuration is written into "
                "results.json. Name the environment variable holding it in `header_env` "
                f"({{{name}: MY_VARIABLE}}).",
                metric_id="llm_judge", option="headers",
            )  # fmt: skip
        plain[name] = _header_value("headers", name, value)
        seen[lower] = "headers"
    secret: dict[str, str] = {}
    for name, variable in (header_env or {}).items():
        lower = _header_name("header_env", name)
        if lower in seen:
            raise OptionError(
                f"Metric 'llm_judge': the header {name!r} is in both `headers` and "
                "`header_env`: give it once.",
                metric_id="llm_judge", option="header_env",
            )  # fmt: skip
        if lower == "authorization" and api_key_env is not None:
            raise OptionError(
                f"Metric 'llm_judge': `header_env` sets {name!r}, which `api_key_env` "
                f"({api_key_env!r}) sets too: set `api_key_env` to none to send your own.",
                metric_id="llm_judge", option="header_env",
            )  # fmt: skip
        if not isinstance(variable, str) or not _ENV_NAME.fullmatch(variable):
            raise OptionError(
                f"Metric 'llm_judge': `header_env` maps {name!r} to a value that is not an "
                "environment variable's name (letters, digits and _; it is not shown, in case "
                "it is the secret): give the name of the variable that holds the header's "
                "value, never the value itself.",
                metric_id="llm_judge", option="header_env",
            )  # fmt: skip
        secret_value = os.environ.get(variable)
        if not secret_value:
            raise OptionError(
                f"Metric 'llm_judge': the environment variable {variable} (named by "
                f"`header_env` for the header {name!r}) is not set. Set it to the header's "
                "value, or leave the header out of `header_env`.",
                metric_id="llm_judge", option="header_env",
            )  # fmt: skip
        _header_value("header_env", name, secret_value, shown=False)
        secret[name] = variable
        seen[lower] = "header_env"
    return plain, secret


def _check_body(body: Mapping[str, Any] | None) -> dict[str, Any]:
    """The extra body fields (a JSON merge patch of the request body), checked."""
    if body is None:
        return {}
    for name, value in body.items():
        if not isinstance(name, str):
            raise OptionError(
                f"Metric 'llm_judge': `body` has the field {name!r}: field names are strings.",
                metric_id="llm_judge", option="body",
            )  # fmt: skip
        if name in _BUILT:
            own = _BUILT[name]
            fix = f"set the option `{own}`" if own else "the judge builds it itself"
            raise OptionError(
                f"Metric 'llm_judge': `body` cannot set {name!r}: {fix}.",
                metric_id="llm_judge", option="body",
            )  # fmt: skip
        if name in _OWN_OPTION and value is not None:
            raise OptionError(
                f"Metric 'llm_judge': `body` sets {name!r} ({value!r}): set the option "
                f"`{_OWN_OPTION[name]}` instead (`{name}: null` in `body` leaves the field out, "
                "for a server that refuses it).",
                metric_id="llm_judge", option="body",
            )  # fmt: skip
    try:
        encoded = json.dumps(dict(body), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise OptionError(
            f"Metric 'llm_judge': `body` must hold JSON values only ({exc}).",
            metric_id="llm_judge", option="body",
        ) from None  # fmt: skip
    patch: dict[str, Any] = json.loads(encoded)
    return patch


def _merge_patch(target: dict[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """``target`` with ``patch`` applied as a JSON merge patch (RFC 7386): null removes."""
    merged = dict(target)
    for name, value in patch.items():
        if value is None:
            merged.pop(name, None)
        elif isinstance(value, Mapping) and isinstance(merged.get(name), Mapping):
            merged[name] = _merge_patch(dict(merged[name]), value)
        elif isinstance(value, Mapping):
            merged[name] = _merge_patch({}, value)
        else:
            merged[name] = value
    return merged


class LlmJudge(ValueMeansBootstrap, Metric):
    """An LLM grades each output against a rubric through an OpenAI-compatible endpoint.

    Each item's input, output and valid answers (when present) go with the rubric to
    ``POST {base_url}/chat/completions``; the judge answers with a JSON verdict ``{"reason",
    "score"}`` (structured output when the endpoint takes ``response_format``, a tolerant
    parser otherwise). On the ``pass_fail`` scale a pass is ``ok`` and a fail is ``fail``, and
    the headline number is the share of passes (Wilson interval). On the ``1-5`` and ``1-10``
    scales every verdict is ``ok`` with its value rescaled to [0, 1] (1 -> 0.0, 5 -> 1.0), and
    the headline number is their mean (normal interval). A failed request (output ``None``) is
    scored the worst verdict without asking the judge, or skipped with ``count_failed=false``.

    A reply without a verdict on the scale, a refusal, a timeout, a reply larger than
    ``max_reply_bytes``, a usage count out of range, or an endpoint still failing after
    ``max_retries`` retries is that item's ``error`` with the reason; the run goes on. Requests
    are retried on 429, 5xx, connection errors and timeouts with exponential backoff and jitter,
    or after the delay the endpoint's ``Retry-After`` asks for. ``timeout`` bounds each attempt
    as a whole, from connecting to the reply's last byte.

    With ``samples > 1`` each item is judged that many times: the value is the mean verdict
    (the majority on ``pass_fail``, a tie counting as fail), and any sample in error makes the
    item an error. The key is read from the environment variable ``api_key_env`` names, the
    values of the secret headers from the variables ``header_env`` names; none is written
    anywhere, and each is replaced by ``***`` in every reply before it is cached or kept. So is
    the value of a ``body`` field whose name is a credential's (``api_key``, ``auth.password``:
    ``itemscore.is_secret_name``), which the run's configuration keeps as ``***``.

    Per-item ``extra``: ``verdict`` (``"pass"``/``"fail"``, or the verdict on the scale),
    ``reason`` and ``raw`` (the judge's reason and whole reply; lists with ``samples > 1``, as
    is ``verdicts``), ``prompt_tokens``, ``completion_tokens``, ``cost`` (with prices),
    ``cached`` (judgments read from the cache), ``requests`` (HTTP requests made),
    ``reasked`` (judgments asked again because an earlier run's request for them failed) and
    ``human`` (the human verdict, when the item has one).

    Measurement ``extra``: ``requests``, ``cache_hits``, ``reasked``, ``prompt_tokens``,
    ``completion_tokens``, ``cost`` (with prices); ``self_agreement`` (share of items whose
    samples all agree) with ``samples > 1``; with human verdicts, ``kappa`` and its bootstrap
    interval ``kappa_low``/``kappa_high``, ``n_human``, and the confusion table as
    ``confusion[human=H,judge=J]`` counts. Kappa is unweighted on ``pass_fail`` and
    quadratically weighted on the numeric scales, as scikit-learn's ``cohen_kappa_score``
    with ``labels`` the scale's verdicts. With human verdicts, also the judge-corrected
    score beside the naive one (see docs/judges.md): on ``pass_fail`` the judge's
    ``judge_sensitivity`` and ``judge_specificity`` on the slice and the Rogan-Gladen
    ``corrected`` pass rate with ``corrected_low``/``corrected_high`` (Jeffreys posteriors
    of both samples); on numeric scales the prediction-powered mean ``ppi`` with
    ``ppi_low``/``ppi_high`` and ``ppi_se`` (Welch's t interval; its simulated coverage
    receipt in ``ppi_coverage``, ``ppi_coverage_high``, ``ppi_coverage_reps``);
    ``n_judge_only`` counts the items the judge alone graded, and ``corrected_method[NAME]``
    names the method.

    Args:
        model: The judge model's name, as the endpoint knows it.
        base_url: The endpoint's base URL (http or https); none: `OPENAI_BASE_URL`, else
            the public OpenAI API.
        api_key_env: Name of the environment variable holding the key; none sends no key
            (a local server).
        rubric: What a good answer is: the text, or `@path` to a file holding it.
        scale: `pass_fail` (ratio of passes), or `1-5` / `1-10` (mean rescaled to [0, 1]).
        temperature: Sampling temperature of the judge.
        max_tokens: Longest reply, in tokens (the body field `max_tokens`).
        timeout: Seconds one attempt may take in all, from connecting to the reply's last
            byte.
        max_retries: Retries after a 429, a 5xx, a connection error or a timeout.
        max_reply_bytes: The most bytes of one reply read; a longer reply is the item's error.
        concurrency: Requests in flight at once; none: the run's `concurrency`.
        cache: A cache file (or folder), `true` for the user cache folder, `false` for none.
        samples: Judgments per item: the mean (majority on `pass_fail`) is the item's value.
        price_in: Price of a million prompt tokens; with `price_out`, the judge's cost.
        price_out: Price of a million completion tokens.
        human_field: The metadata field holding a human verdict to measure the judge against.
        count_failed: Score failed requests (no output) as the worst verdict. `false` leaves
            them out.
        headers: Extra HTTP headers sent with every request (not secrets: they are written
            into results.json, and a header whose name is a credential's is refused), e.g.
            `{OpenAI-Organization: org-1}`.
        header_env: Secret headers: header name -> the environment variable holding its
            value (redacted like the key), e.g. `{api-key: AZURE_OPENAI_KEY}`.
        body: Extra fields of the request body, merged into it (a JSON merge patch: `null`
            removes a field), e.g. `{max_tokens: null, max_completion_tokens: 512}`. A field
            whose name is a credential's (`api_key`) is sent, and kept as `***` everywhere else.
    """

    metric_id = "llm_judge"
    display_name = "LLM judge"
    description = (
        "An LLM grades each output against a rubric over an OpenAI-compatible endpoint; "
        "pass/fail as a ratio, 1-5 or 1-10 as a mean rescaled to [0, 1]."
    )
    reproducibility_class = "judge-based"
    required_inputs = ()
    higher_is_better = True
    aggregation = "ratio"
    value_bounds = (0.0, 1.0)

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key_env: str | None = "OPENAI_API_KEY",
        rubric: str | None = None,
        scale: Literal["pass_fail", "1-5", "1-10"] = "pass_fail",
        temperature: float = 0.0,
        max_tokens: int = 512,
        timeout: float = 60.0,
        max_retries: int = 4,
        concurrency: int | None = None,
        cache: bool | str = True,
        samples: int = 1,
        price_in: float | None = None,
        price_out: float | None = None,
        human_field: str = "human",
        count_failed: bool = True,
        max_reply_bytes: int = MAX_REPLY_BYTES,
        headers: dict[str, str] | None = None,
        header_env: dict[str, str] | None = None,
        body: dict[str, Any] | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise OptionError(f"Metric 'llm_judge': `model` ({model!r}) must be a model name.")
        if scale not in SCALES:
            raise OptionError(
                f"Metric 'llm_judge': `scale` ({scale!r}) must be one of 'pass_fail', "
                "'1-5', '1-10'."
            )
        self.model = model
        self.scale: Scale = SCALES[scale]
        self.base_url = _check_base_url(
            base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        )
        if api_key_env is not None and not os.environ.get(api_key_env):
            raise OptionError(
                f"Metric 'llm_judge': the environment variable {api_key_env} (named by "
                "`api_key_env`) is not set. Set it to the judge endpoint's key, or set "
                "`api_key_env` to the variable that holds it, or to null for an endpoint that "
                "needs no key, such as a local llama.cpp or vLLM server (`api_key_env=null` "
                "in -m, `api_key_env: null` in YAML)."
            )
        self.api_key_env = api_key_env
        self.rubric = _read_rubric(rubric, self.scale.pass_fail)
        if not 0 <= temperature <= 2:
            raise OptionError(
                f"Metric 'llm_judge': `temperature` ({temperature!r}) must be in [0, 2]."
            )
        self.temperature = temperature
        numbers = (("max_tokens", max_tokens), ("samples", samples),
                   ("max_reply_bytes", max_reply_bytes))  # fmt: skip
        for name, number in numbers:
            if number < 1:
                raise OptionError(f"Metric 'llm_judge': `{name}` ({number!r}) must be 1 or more.")
        if concurrency is not None and concurrency < 1:
            raise OptionError(
                f"Metric 'llm_judge': `concurrency` ({concurrency!r}) must be 1 or more."
            )
        _positive("timeout", timeout)
        _positive("max_retries", max_retries, zero=True)
        for name, price in (("price_in", price_in), ("price_out", price_out)):
            if price is not None:
                _positive(name, price, zero=True)
        if (price_in is None) != (price_out is None):
            raise OptionError(
                "Metric 'llm_judge': give both `price_in` and `price_out` (per million "
                "tokens), or neither."
            )
        self.max_tokens = max_tokens
        self.samples = samples
        self.timeout = timeout
        self.max_retries = max_retries
        from itemscore.metrics_builtin.judge._http import MAX_DELAY

        # Every attempt, and the longest wait before each retry: what a run's default item
        # time limit must leave it (a minute more for the cache and the session's start).
        self.item_time_bound = (max_retries + 1) * timeout + max_retries * MAX_DELAY + 60.0
        #: Read by the runner: items an ``async def score_item`` scores at once.
        self.max_concurrency = concurrency
        self.concurrency = concurrency
        self.max_reply_bytes = max_reply_bytes
        self.headers, self.header_env = _check_headers(headers, header_env, api_key_env)
        self.body = _check_body(body)
        self.cache_path = _cache_path(cache)
        _check_cache(self.cache_path)
        #: Why this process gave its cache up during the run (it warned once), or ``None``.
        self._cache_off: str | None = None
        self.price_in = price_in
        self.price_out = price_out
        self.human_field = human_field
        self.count_failed = count_failed
        self.aggregation = "ratio" if self.scale.pass_fail else "mean"  # type: ignore[misc]
        self.structured = True
        self._system = _SYSTEM.format(rubric=self.rubric, scale=self.scale.describe())
        #: The encoded body around the user message, by whether ``response_format`` is sent.
        self._halves: dict[bool, tuple[bytes, bytes]] = {}
        self._session: tuple[asyncio.AbstractEventLoop, JudgeSession, Any] | None = None
        from itemscore.metrics_builtin.judge._http import import_httpx

        import_httpx()  # httpx installed: said once, before any item is scored

    @property
    def url(self) -> str:
        """Where judgments are requested: ``{base_url}/chat/completions``."""
        return f"{self.base_url}/chat/completions"

    def __getstate__(self) -> dict[str, Any]:
        # A session belongs to one event loop (and process): never pickled.
        state = dict(self.__dict__)
        state["_session"] = None
        return state

    def __repr__(self) -> str:
        return f"<LlmJudge model={self.model!r} scale={self.scale.name!r} url={self.url!r}>"

    # -- the request -----------------------------------------------------------------------

    def messages(self, item: ItemResult) -> list[dict[str, str]]:
        """The chat messages that ask the judge about ``item``."""
        return [
            {"role": "system", "content": self._system},
            {"role": "user", "content": self._user_text(item)},
        ]

    def _user_text(self, item: ItemResult) -> str:
        parts = []
        if item.input is not None:
            parts.append(f"Input:\n{item.input}")
        if item.expected:
            answers = "\n".join(f"- {answer}" for answer in item.expected)
            parts.append(f"Reference answer(s):\n{answers}")
        parts.append(f"Model's answer:\n{item.output}")
        return "\n\n".join(parts)

    def payload(self, item: ItemResult) -> bytes:
        """The encoded request body for ``item``: ``encode_body(request_body(messages(item)))``.

        Everything but the user message is the same for every item, so it is encoded once and
        only the user message is encoded per item.
        """
        return self._payload(self._user_text(item))

    def _payload(self, user: str) -> bytes:
        halves = self._halves.get(self.structured)
        if halves is None:
            marker = "\x00itemscore-user\x00"
            messages = [
                {"role": "system", "content": self._system},
                {"role": "user", "content": marker},
            ]
            encoded = encode_body(self.request_body(messages))
            head, tail = encoded.split(json.dumps(marker, ensure_ascii=False).encode("utf-8"))
            halves = self._halves[self.structured] = (head, tail)
        return halves[0] + json.dumps(user, ensure_ascii=False).encode("utf-8") + halves[1]

    def request_body(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        """The JSON body of one request (``response_format`` while the endpoint takes it)."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if self.structured:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "verdict", "strict": True, "schema": self._schema()},
            }
        return _merge_patch(body, self.body) if self.body else body

    def _schema(self) -> dict[str, Any]:
        verdict: dict[str, Any]
        if self.scale.pass_fail:
            verdict = {"type": "string", "enum": ["pass", "fail"]}
        else:
            verdict = {"type": "integer", "enum": self.scale.points}
        return {
            "type": "object",
            "properties": {"reason": {"type": "string"}, "score": verdict},
            "required": ["reason", "score"],
            "additionalProperties": False,
        }

    def _secrets(self) -> tuple[str, ...]:
        # Read from the environment on use, never kept: the metric is pickled and repr'd. The
        # body's credential fields have no variable: the body keeps them, to be sent.
        names = [self.api_key_env, *self.header_env.values()]
        _, in_body = mask_secrets(self.body)
        return usable_secrets([*(os.environ.get(name) for name in names if name), *in_body])

    def redact(self, text: str) -> str:
        """``text`` with the key, the secret headers' and body fields' values as ``***``."""
        return redact_text(text, self._secrets())

    def _open_cache(self) -> ReplyCache | None:
        if self.cache_path is None or self._cache_off is not None:
            return None
        try:
            return ReplyCache(self.cache_path)
        except CacheUnusable as exc:
            self._give_up_cache(f"{exc} The run goes on without it: every judgment is asked "
                                "from the endpoint and none is kept.")  # fmt: skip
            return None

    def _give_up_cache(self, message: str) -> None:
        """Go on without the cache in this process, saying so once."""
        if self._cache_off is None:
            self._cache_off = message
            warnings.warn(message, JudgeCacheWarning, stacklevel=2)

    async def _open_session(self, ctx: MetricContext) -> JudgeSession:
        import asyncio

        from itemscore.metrics_builtin.judge._http import JudgeSession, session_keeper

        loop = asyncio.get_running_loop()
        if self._session is not None and self._session[0] is loop:
            return self._session[1]
        headers = dict(self.headers)
        for name, variable in self.header_env.items():
            headers[name] = os.environ.get(variable, "")
        api_key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        session = JudgeSession(
            url=self.url,
            headers=headers,
            key_headers=sorted(self.headers.items()),
            secrets=self._secrets(),
            timeout=self.timeout,
            max_retries=self.max_retries,
            max_reply_bytes=self.max_reply_bytes,
            concurrency=self.concurrency or ctx.concurrency,
            cache=self._open_cache(),
            on_cache_failure=self._give_up_cache,
        )
        keeper = session_keeper(session)
        self._session = (loop, session, keeper)
        await keeper.__anext__()  # started, so the loop finalises (closes) it at shutdown
        return session

    async def aclose(self) -> None:
        """Close this event loop's session now (it is closed with the loop otherwise)."""
        if self._session is not None:
            _, _, keeper = self._session
            self._session = None
            await keeper.aclose()

    # -- scoring ---------------------------------------------------------------------------

    def _human(self, item: ItemResult) -> float | None:
        value = item.metadata.get(self.human_field) if item.metadata else None
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return None
        try:
            verdict, _ = parse_verdict(value if isinstance(value, str) else _json_text(value),
                                       self.scale)  # fmt: skip
        except UnparseableReply:
            return None
        return verdict

    async def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        """Ask the judge (``samples`` times) and turn the replies into one score."""
        human = self._human(item)
        base: dict[str, Any] = {} if human is None else {"human": human}
        if item.output is None:
            if not self.count_failed:
                return self.skip(_SKIPPED_NO_OUTPUT, extra=base)
            worst = "fail" if self.scale.pass_fail else float(self.scale.low)
            return self.fail(0.0, extra={**base, "verdict": worst, "reason": _NO_OUTPUT})
        session = await self._open_session(ctx)
        user = self._user_text(item)
        structured = self.structured  # what the payload asks for, whatever happens meanwhile
        body = self._payload(user)

        def unstructured() -> bytes:
            self.structured = False
            return self._payload(user)

        if self.samples == 1:  # the common case, without a task per judgment
            outcomes = [await self._judge_once(session, body, structured, 0, unstructured)]
        else:
            import asyncio

            outcomes = await asyncio.gather(
                *(
                    self._judge_once(session, body, structured, sample, unstructured)
                    for sample in range(self.samples)
                )
            )
        return self._combine(outcomes, base)

    async def _judge_once(
        self,
        session: JudgeSession,
        body: bytes,
        structured: bool,
        sample: int,
        unstructured: Any,
    ) -> _Outcome:
        from itemscore.metrics_builtin.judge._http import JudgeFailure

        try:
            reply = await session.judge(body, structured, sample, unstructured)
        except JudgeFailure as exc:
            return _Outcome(error=exc.reason, requests=exc.requests, reasked=exc.reasked)
        return self._read(reply, session.redact)

    def _read(self, reply: Reply, redact: Callable[[str], str]) -> _Outcome:
        data = reply.data
        out = _Outcome(requests=reply.requests, cached=reply.cached, reasked=reply.reasked)
        usage = data.get("usage")
        if isinstance(usage, Mapping):
            for field in ("prompt_tokens", "completion_tokens"):
                count, problem = _usage_count(usage.get(field))
                if problem is not None:
                    out.error = f"judge reply not usable: usage.{field} is {problem}"
                    return out
                setattr(out, field, count)
        try:
            choice = data["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError):
            out.error = "judge reply not parseable: it has no choices[0].message"
            return out
        refusal = message.get("refusal") if isinstance(message, Mapping) else None
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, list):  # content parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
        if refusal:
            out.raw = redact(str(refusal))
            out.error = f"{_REFUSED}: {out.raw}"
            return out
        if not isinstance(content, str) or not content.strip():
            finish = choice.get("finish_reason") if isinstance(choice, Mapping) else None
            out.error = f"judge reply not parseable: the reply is empty (finish_reason {finish!r})"
            return out
        out.raw = redact(content)
        try:
            out.verdict, reason = parse_verdict(content, self.scale)
        except UnparseableReply as exc:
            out.error = f"judge reply not parseable: {redact(str(exc))}"
            return out
        out.reason = None if reason is None else redact(reason)
        return out

    def _combine(self, outcomes: Sequence[_Outcome], base: dict[str, Any]) -> ItemScore:
        many = len(outcomes) > 1
        prompt = sum(o.prompt_tokens for o in outcomes)
        completion = sum(o.completion_tokens for o in outcomes)
        extra: dict[str, Any] = {
            **base,
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "cached": sum(o.cached for o in outcomes),
            "requests": sum(o.requests for o in outcomes),
            "reasked": sum(o.reasked for o in outcomes),
        }
        if self.price_in is not None and self.price_out is not None:
            extra["cost"] = (prompt * self.price_in + completion * self.price_out) / 1e6
        raws = [o.raw for o in outcomes]
        extra["raw"] = raws if many else raws[0]
        failed = next((o for o in outcomes if o.error is not None), None)
        if failed is not None:
            assert failed.error is not None
            return self.error(failed.error, extra=extra)
        verdicts = [o.verdict for o in outcomes]
        reasons = [o.reason for o in outcomes]
        extra["reason"] = reasons if many else reasons[0]
        if self.scale.pass_fail:
            passed = 2 * sum(v == 1.0 for v in verdicts) > len(verdicts)
            extra["verdict"] = "pass" if passed else "fail"
            if many:
                extra["verdicts"] = ["pass" if v == 1.0 else "fail" for v in verdicts]
            return self.ok(1.0, extra=extra) if passed else self.fail(0.0, extra=extra)
        mean_verdict = math.fsum(verdicts) / len(verdicts)
        extra["verdict"] = mean_verdict
        if many:
            extra["verdicts"] = verdicts
        return self.ok(self.scale.rescale(mean_verdict), extra=extra)

    # -- aggregation -----------------------------------------------------------------------

    def aggregate(self, scores: Sequence[ItemScore], ctx: MetricContext) -> Estimate:
        """Pass rate or mean rescaled verdict, with usage, cache, cost and agreement figures."""
        base = super().aggregate(scores, ctx)
        extra: dict[str, float] = dict(base.extra)
        totals = dict.fromkeys(
            ("requests", "cache_hits", "reasked", "prompt_tokens", "completion_tokens"), 0
        )
        cost = 0.0
        unanimous = judged_many = 0
        human: list[float] = []
        judge: list[float] = []
        # The judge's values (on [0, 1]) with and without a human verdict, for the corrections.
        judged_labelled: list[float] = []
        judged_alone: list[float] = []
        for score in scores:
            e = score.extra
            if not e:
                continue
            totals["requests"] += _count(e.get("requests"))
            totals["cache_hits"] += _count(e.get("cached"))
            totals["reasked"] += _count(e.get("reasked"))
            totals["prompt_tokens"] += _count(e.get("prompt_tokens"))
            totals["completion_tokens"] += _count(e.get("completion_tokens"))
            cost += _finite(e.get("cost"))
            if not score.scored or "verdict" not in e:
                continue
            verdicts = e.get("verdicts")
            if isinstance(verdicts, list) and verdicts:
                judged_many += 1
                unanimous += len(set(verdicts)) == 1
            value = score.value if score.value is not None else 0.0
            if "human" in e:
                human.append(float(e["human"]))
                judge.append(self._scale_point(e["verdict"]))
                judged_labelled.append(value)
            else:
                judged_alone.append(value)
        extra.update({k: float(v) for k, v in totals.items()})
        if self.price_in is not None:
            extra["cost"] = cost
        if judged_many:
            extra["self_agreement"] = unanimous / judged_many
        if human:
            self._agreement(human, judge, ctx, extra)
            self._corrected(human, judge, judged_labelled, judged_alone, ctx, extra)
        return Estimate(
            value=base.value, low=base.low, high=base.high, n=base.n, method=base.method,
            confidence=base.confidence, extra=extra,
        )  # fmt: skip

    def _scale_point(self, verdict: Any) -> float:
        """The judge's verdict on an item as a scale point (a mean of samples rounds half up)."""
        if self.scale.pass_fail:
            return 1.0 if verdict == "pass" else 0.0
        return float(math.floor(float(verdict) + 0.5))

    def _agreement(
        self, human: list[float], judge: list[float], ctx: MetricContext, extra: dict[str, float]
    ) -> None:
        # numpy comes with the agreement statistics: not at import, so listing metrics stays fast
        from itemscore.metrics_builtin.judge._agreement import kappa_with_interval

        points = self.scale.points
        weights: Literal["quadratic"] | None = None if self.scale.pass_fail else "quadratic"
        result = kappa_with_interval(
            human, judge, points, weights, confidence=ctx.confidence, seed=ctx.seed
        )
        extra["n_human"] = float(result.n)
        if result.value is not None:
            extra["kappa"] = result.value
        if result.low is not None and result.high is not None:
            extra["kappa_low"], extra["kappa_high"] = result.low, result.high
        names = ["fail", "pass"] if self.scale.pass_fail else [str(p) for p in points]
        for i, h in enumerate(names):
            for j, jv in enumerate(names):
                count = result.confusion[i, j]
                if count:
                    extra[f"confusion[human={h},judge={jv}]"] = float(count)

    def _corrected(
        self,
        human: list[float],
        judge: list[float],
        judged_labelled: list[float],
        judged_alone: list[float],
        ctx: MetricContext,
        extra: dict[str, float],
    ) -> None:
        """The judge-corrected score beside the naive one: Rogan-Gladen or PPI."""
        from itemscore.metrics_builtin.judge._correction import (
            ppi_receipt,
            prediction_powered,
            rogan_gladen,
        )

        extra["n_judge_only"] = float(len(judged_alone))
        if self.scale.pass_fail:
            passed = sum(1 for v in judged_alone if v >= 0.5)
            found = rogan_gladen(
                passed, len(judged_alone), human, judge, confidence=ctx.confidence, seed=ctx.seed
            )
            if "corrected" in found:
                found["corrected_method[rogan-gladen-jeffreys]"] = 1.0
        else:
            labelled = [self.scale.rescale(h) for h in human]
            found = prediction_powered(
                judged_alone, judged_labelled, labelled, confidence=ctx.confidence
            )
            if found:
                found["corrected_method[prediction-powered]"] = 1.0
                found.update(ppi_receipt(judged_alone, judged_labelled, labelled,
                                         confidence=ctx.confidence, seed=ctx.seed))  # fmt: skip
        extra.update(found)

    def derived_measurements(
        self, own: Measurement, others: Mapping[str, Measurement]
    ) -> Mapping[str, Measurement]:
        """``<label>_corrected``: the judge-corrected score as a row of its own, with groups.

        Only with human verdicts on the slice: the Rogan-Gladen pass rate (``pass_fail``) or
        the prediction-powered mean (numeric scales), its interval and its method, beside the
        naive judge score; groups whose own slice gave a corrected score have their row too.
        """
        name = f"{own.metric}_corrected"
        groups = {}
        for group, gm in own.groups.items():
            found = _corrected_measurement(gm, name, {})
            if found is not None:
                groups[group] = found
        head = _corrected_measurement(own, name, groups)
        return {} if head is None else {name: head}


#: The corrected score's keys in a measurement's ``extra``, by method.
_CORRECTIONS = (
    ("rogan-gladen-jeffreys", "corrected", "Rogan-Gladen"),
    ("prediction-powered", "ppi", "prediction-powered"),
)


def _corrected_measurement(
    own: Measurement, name: str, groups: Mapping[str, Measurement]
) -> Measurement | None:
    """The corrected score ``own.extra`` holds as a measurement, or ``None`` when it has none."""
    for method, key, said in _CORRECTIONS:
        if f"corrected_method[{method}]" not in own.extra or key not in own.extra:
            continue
        return Measurement(
            key=f"{own.suite}.{name}", suite=own.suite, metric=name, model=own.model,
            value=own.extra[key], ci_low=own.extra.get(f"{key}_low"),
            ci_high=own.extra.get(f"{key}_high"), ci_method=method, n=own.n,
            counts={s.value: c for s, c in own.counts.items()}, confidence=own.confidence,
            higher_is_better=own.higher_is_better,
            reproducibility_class=own.reproducibility_class,
            display_name=f"{own.display_name or own.metric}, judge-corrected ({said})",
            groups=dict(groups), extra=_corrected_extra(own, key),
        )  # fmt: skip
    return None


def _corrected_extra(own: Measurement, key: str) -> dict[str, float]:
    """The corrected row's ``extra``: ``n_human`` and its interval's coverage receipt.

    The naive measurement keeps the receipt under the corrected score's prefix
    (``ppi_coverage``...), beside its own ``coverage``; the row takes it under the names
    every receipt has, so that tables flag it as they flag any interval.
    """
    extra = {"n_human": own.extra.get("n_human", 0.0)}
    for name in ("coverage", "coverage_high", "coverage_reps"):
        if f"{key}_{name}" in own.extra:
            extra[name] = own.extra[f"{key}_{name}"]
    return extra


class _Outcome:
    """One judgment of one item, read from its reply (or why it failed)."""

    __slots__ = ("cached", "completion_tokens", "error", "prompt_tokens", "raw", "reasked",
                 "reason", "requests", "verdict")  # fmt: skip

    def __init__(
        self, *, error: str | None = None, requests: int = 0, cached: bool = False,
        reasked: bool = False,
    ) -> None:  # fmt: skip
        self.error = error
        self.requests = requests
        self.cached = cached
        self.reasked = reasked
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.raw: str | None = None
        self.reason: str | None = None
        self.verdict = 0.0


def _count(value: Any) -> int:
    """A count kept in a score's ``extra`` (which a saved file may have changed), else 0."""
    if isinstance(value, bool):
        return int(value)
    return value if isinstance(value, int) and 0 <= value <= MAX_COUNT else 0


def _finite(value: Any) -> float:
    """A number kept in a score's ``extra`` as a float, 0 when it is none or out of range."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0.0
    try:
        number = float(value)
    except OverflowError:
        return 0.0
    return number if math.isfinite(number) else 0.0


def _usage_count(value: Any) -> tuple[int, str | None]:
    """A usage count from a reply: ``(count, None)``, or ``(0, why it is not one)``.

    A missing count (or null) is 0: many servers report no usage. Anything else must be a
    whole number from 0 to :data:`MAX_COUNT`, so that no reply's number can overflow the
    measurement's totals.
    """
    if value is None:
        return 0, None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        if 0 <= value <= MAX_COUNT:
            return value, None
        shown = repr(value) if abs(value) < 10**50 else "a number of more than 50 digits"
        return 0, f"{shown}, out of range (a token count is from 0 to 2**53 - 1)"
    shown = repr(value) if len(repr(value)) <= 40 else f"{type(value).__name__} {repr(value)[:40]}…"
    return 0, f"{shown}, not a token count (a whole number from 0 to 2**53 - 1)"


def _json_text(value: Any) -> str:
    import json

    return json.dumps(value)
