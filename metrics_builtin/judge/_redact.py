"""Secrets out of everything the judge keeps: each secret's text becomes ``***``.

The secrets are the key and the values of the secret headers, read from the environment. Text
is redacted whole, before it is flattened or cut: a secret that straddles a cut would otherwise
leave most of itself behind, too short to be recognised.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "MASK",
    "MIN_SECRET",
    "SNIPPET",
    "redact_text",
    "redact_tree",
    "snippet",
    "usable_secrets",
]

#: What a secret is replaced by.
MASK = "***"
#: Secrets shorter than this are not looked for: replacing every ``a`` would ruin the text and
#: hide nothing (no endpoint takes a key that short).
MIN_SECRET = 4
#: The longest snippet of an endpoint's body kept in an error reason (characters).
SNIPPET = 200


def usable_secrets(values: Iterable[str | None]) -> tuple[str, ...]:
    """The secrets worth looking for, longest first (so a secret inside another goes too)."""
    found = {v for v in values if v and len(v) >= MIN_SECRET}
    return tuple(sorted(found, key=len, reverse=True))


def redact_text(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret replaced by :data:`MASK`."""
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def redact_tree(value: Any, secrets: tuple[str, ...]) -> Any:
    """A parsed JSON value with every secret in its strings (keys included) replaced.

    Parts without a secret are returned as they are, so a clean reply is not copied.
    """
    if not secrets:
        return value
    if isinstance(value, str):
        return redact_text(value, secrets)
    if isinstance(value, Mapping):
        items = [(redact_tree(k, secrets), redact_tree(v, secrets)) for k, v in value.items()]
        if all(a is k and b is v for (a, b), (k, v) in zip(items, value.items())):
            return value
        return dict(items)
    if isinstance(value, list):
        redacted = [redact_tree(v, secrets) for v in value]
        if all(a is b for a, b in zip(redacted, value)):
            return value
        return redacted
    return value


def snippet(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` redacted, then on one line and cut to :data:`SNIPPET` characters."""
    flat = " ".join(redact_text(text, secrets).split())
    return flat if len(flat) <= SNIPPET else flat[: SNIPPET - 1] + "…"
