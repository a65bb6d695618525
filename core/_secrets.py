"""Which option fields hold credentials, and the run's records with those values masked.

One rule decides, for every metric, header and body field: :func:`is_secret_name`. A value
under such a name is written as ``***`` in the run's configuration (``results.json``, every
report), and its text is taken out of the command line a run records (``results.json``'s
provenance, the output folder's lock) and of the command line's error messages.

The rule reads a name as words (``X-Goog-Api-Key`` -> ``x goog api key``, ``apiKey`` -> ``api
key``). A name is a credential's when

- it ends with the word *key* or *token* (or a word ending so: ``apikey``, ``xauthtoken``):
  these two words also have ordinary meanings, so only as the name's last word, where they
  say what the field holds (``max_tokens`` holds a count, ``token_count`` a number);
- or any of its words is about authentication whatever its place: *auth*, *oauth*, or a word
  holding *authorization*, *authentication*, *secret*, *password*, *passwd*, *passphrase*,
  *credential*, *cookie* or *signature* (``auth_header``, ``X-Hub-Signature-256``).

Names whose last word is *env* hold the names of environment variables (``api_key_env``,
``header_env``): they are never secret, nor is anything inside them, so a run records which
variable held a secret. A few request parameters that end in *key* but hold no credential
(``prompt_cache_key``, ``idempotency_key``) are ordinary.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "MASK",
    "MIN_SECRET",
    "is_secret_name",
    "mask_secrets",
    "masked_fields",
    "redact_command",
    "redact_text",
]

#: What a secret value is written as.
MASK = "***"
#: Texts shorter than this are not taken out of free text (a command line, a message):
#: replacing every ``a`` would ruin the text and hide nothing (no service takes a key that short).
#: A value under a secret name is masked in the configuration whatever its length.
MIN_SECRET = 4

# Words as a reader splits them: separators, camelCase and ACRONYMCase boundaries, digits.
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# Words that name a credential only as the name's last word.
_HEADS = ("key", "token")
# Parts of a word that name a credential wherever they are.
_ANYWHERE = ("authorization", "authentication", "secret", "password", "passwd", "passphrase",
             "credential", "cookie", "signature")  # fmt: skip
_AUTH = frozenset({"auth", "oauth", "xauth"})
# Names that end in "key" and hold no credential (request parameters of known services).
_ORDINARY = frozenset({"promptcachekey", "idempotencykey"})


def _words(name: str) -> list[str]:
    return [w.lower() for w in _WORDS.findall(name)]


def _names_variables(name: str) -> bool:
    words = [w for w in _words(name) if not w.isdigit()]
    return bool(words) and words[-1] == "env"


def is_secret_name(name: str) -> bool:
    """Whether a field of this name holds a credential (see the module's docstring).

    Example:
        >>> [is_secret_name(n) for n in ("X-Goog-Api-Key", "apiKey", "max_tokens")]
        [True, True, False]
    """
    words = [w for w in _words(name) if not w.isdigit()]
    if not words or words[-1] == "env" or "".join(words) in _ORDINARY:
        return False
    if words[-1].endswith(_HEADS):
        return True
    return any(w in _AUTH or any(part in w for part in _ANYWHERE) for w in words)


def mask_secrets(value: Any) -> tuple[Any, tuple[str, ...]]:
    """``value`` with every value under a secret name replaced by :data:`MASK`, and those values.

    ``value`` is an option's value or a whole mapping of options: mappings and lists are
    walked to any depth; a mapping under a secret name is masked whole. The secrets come back
    as texts (a number as it is written), longest first, those shorter than
    :data:`MIN_SECRET` left out. A value with nothing to mask is returned as it is.

    Example:
        >>> mask_secrets({"body": {"api_key": "sk-123456", "max_tokens": 9}})
        ({'body': {'api_key': '***', 'max_tokens': 9}}, ('sk-123456',))
    """
    found: list[str] = []
    masked = _mask(value, found)
    usable = {text for text in found if len(text) >= MIN_SECRET}
    return masked, tuple(sorted(usable, key=len, reverse=True))


def _mask(value: Any, found: list[str]) -> Any:
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        changed = False
        for name, inner in value.items():
            if isinstance(name, str) and _names_variables(name):
                out[name] = inner
            elif isinstance(name, str) and is_secret_name(name) and inner is not None:
                _leaves(inner, found)
                out[name] = MASK
                changed = True
            else:
                out[name] = _mask(inner, found)
                changed = changed or out[name] is not inner
        return out if changed else value
    if isinstance(value, (list, tuple)):
        items = [_mask(inner, found) for inner in value]
        if all(a is b for a, b in zip(items, value)):
            return value
        return items
    return value


def _leaves(value: Any, found: list[str]) -> None:
    """Every text a secret value holds (the values of a mapping: its keys are field names)."""
    if isinstance(value, Mapping):
        for inner in value.values():
            _leaves(inner, found)
    elif isinstance(value, (list, tuple)):
        for inner in value:
            _leaves(inner, found)
    elif value is not None and not isinstance(value, bool):
        found.append(str(value))


def masked_fields(value: Any, path: str = "") -> list[str]:
    """The fields under a secret name whose value is :data:`MASK`: a masked record read back.

    Such a value is no secret but the mark of one left out when the run's configuration was
    written; configuring a metric with it would send ``***`` in the secret's place.

    Example:
        >>> masked_fields({"body": {"api_key": "***"}})
        ['body.api_key']
    """
    out: list[str] = []
    if isinstance(value, Mapping):
        for name, inner in value.items():
            where = f"{path}.{name}" if path else str(name)
            if isinstance(name, str) and _names_variables(name):
                continue
            if isinstance(name, str) and is_secret_name(name) and inner == MASK:
                out.append(where)
            else:
                out.extend(masked_fields(inner, where))
    elif isinstance(value, (list, tuple)):
        for index, inner in enumerate(value):
            out.extend(masked_fields(inner, f"{path}[{index}]"))
    return out


def redact_text(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every one of ``secrets`` replaced by :data:`MASK` (longest first)."""
    for secret in sorted(set(secrets), key=len, reverse=True):
        if len(secret) >= MIN_SECRET and secret in text:
            text = text.replace(secret, MASK)
    return text


def redact_command(command: Iterable[str], secrets: Iterable[str]) -> list[str]:
    """A command line (``sys.argv``) with every one of ``secrets`` replaced by :data:`MASK`."""
    known = tuple(secrets)
    return [redact_text(str(part), known) for part in command]
