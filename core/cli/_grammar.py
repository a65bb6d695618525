"""The ``-m`` grammar: ``NAME[@LABEL][:KEY=VALUE,KEY=VALUE...]`` with YAML 1.2 flow values."""

from __future__ import annotations

import re
from typing import Any

from itemscore._exceptions import ConfigError
from itemscore._spec import MetricSpec

from ._yaml import loader_class

__all__ = ["SPEC_EXAMPLE", "parse_metric_spec", "yaml_value"]

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*\Z")
_LABEL_RE = re.compile(r"[\w.\-]+\Z")
_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_NULL_WORDS = ("null", "Null", "NULL", "~")
#: An example shown by every message about a malformed spec.
SPEC_EXAMPLE = "-m 'f1@f1_weighted:average=weighted,labels=[positive,negative]'"


def yaml_value(text: str) -> Any:
    """Parse one option value as YAML 1.2 flow: ``true``, ``3``, ``0.5``, ``[a, b]``, ``null``.

    Text that YAML would read as nothing (``#x``, a comment) is kept as the text itself.

    Raises:
        ConfigError: the text is not valid YAML (an unclosed bracket or quote), or uses an
            alias or a tag.
    """
    import yaml

    try:
        value = yaml.load(text, Loader=loader_class())
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{text!r} is not valid YAML ({problem})") from None
    if value is None and text.strip() not in _NULL_WORDS:
        return text
    return value


def _split_options(text: str) -> list[str]:
    """Split ``a=1,b=[x,y]`` at the commas outside brackets and quotes."""
    parts: list[str] = []
    depth = 0
    quote: str | None = None
    start = 0
    last = "="  # the last character outside a quote that was not a space
    index = 0
    while index < len(text):
        ch = text[index]
        if quote is not None:
            if ch == "\\" and quote == '"':
                index += 1
            elif ch == quote:
                quote = None
                last = ch
        elif ch in "'\"" and last in "=[{,:":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth < 0:
                raise ConfigError(f"there is a {ch!r} without its opening bracket")
        elif ch == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
        if quote is None and not ch.isspace():
            last = ch
        index += 1
    if quote is not None:
        raise ConfigError(f"a {quote} quote is not closed")
    if depth > 0:
        raise ConfigError("a '[' or '{' is not closed")
    parts.append(text[start:])
    return parts


def parse_metric_spec(text: str) -> MetricSpec:
    """Parse one ``-m`` value: ``NAME[@LABEL][:KEY=VALUE,KEY=VALUE...]``.

    Values are YAML 1.2 flow values (``true``, ``3``, ``0.5``, ``[a, b]``); commas inside
    brackets or quotes do not separate options.

    Raises:
        ConfigError: a malformed spec; the message quotes it and shows the grammar.
    """

    def bad(why: str) -> ConfigError:
        return ConfigError(
            f"-m {text!r}: {why}. Write NAME[@LABEL][:KEY=VALUE,...], e.g. {SPEC_EXAMPLE}."
        )

    head, colon, rest = text.partition(":")
    name, at, label = head.partition("@")
    name, label = name.strip(), label.strip()
    if not name:
        raise bad("the metric name is missing")
    if not _NAME_RE.match(name):
        raise bad(f"{name!r} is not a metric name (letters, digits, '_', '-' and '.')")
    if at and not _LABEL_RE.match(label):
        raise bad(f"the label {label!r} must be letters, digits, '_', '-' or '.'")
    options: dict[str, Any] = {}
    if colon:
        if not rest.strip():
            raise bad("nothing follows ':'")
        try:
            parts = _split_options(rest)
        except ConfigError as exc:
            raise bad(str(exc)) from None
        for part in parts:
            key, eq, raw = part.partition("=")
            key, raw = key.strip(), raw.strip()
            if not part.strip():
                raise bad("an option is empty (two commas in a row, or a comma at the end)")
            if not eq:
                raise bad(f"the option {key!r} has no '=' and value")
            if not _KEY_RE.match(key):
                raise bad(f"{key!r} is not an option name")
            if key in options:
                raise bad(f"the option {key!r} is given twice")
            if not raw:
                raise bad(f"the option {key!r} has no value (write {key}=null for none)")
            try:
                options[key] = yaml_value(raw)
            except ConfigError as exc:
                raise bad(f"the value of {key!r}: {exc}; quote it") from None
    return MetricSpec(name, label or None, options)
