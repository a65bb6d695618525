"""``items.jsonl``: every item with every score, one JSON object a line, streamed.

The line of an item is the JSON form :func:`itemscore._serialize.item_to_dict` gives, built
with one reused encoder and no intermediate copies: writing is linear and its memory flat.
``results.json`` refers to this file instead of holding the items a second time.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .._records import ItemResult, ItemScore
from .._result import RunResult
from .._serialize import OPTIONAL_TEXTS, json_safe
from ._files import open_report

__all__ = ["FILENAME", "iter_lines", "write"]

#: The file this format writes.
FILENAME = "items.jsonl"

_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode
_string = json.encoder.encode_basestring  # C accelerated
_PLAIN = (str, int, bool, type(None))


def _value(value: Any) -> str:
    """JSON for one metadata or extra value (plain types fast, the rest via json_safe)."""
    kind = type(value)
    if kind is str:
        return str(_string(value))
    if kind is float:
        return repr(value) if math.isfinite(value) else "null"
    if kind in _PLAIN:
        return _encode(value)
    return _encode(json_safe(value))


def _mapping(data: Mapping[str, Any]) -> str:
    return "{" + ", ".join(f"{_string(str(k))}: {_value(v)}" for k, v in data.items()) + "}"


def _score(score: ItemScore) -> str:
    value = "null" if score.value is None else repr(score.value)
    parts = f'{{"status": "{score.status.value}", "value": {value}'
    if score.reason is not None:
        parts += f', "reason": {_string(score.reason)}'
    if score.extra:
        parts += f', "extra": {_mapping(score.extra)}'
    return parts + "}"


def _optional(value: str | None) -> str:
    return "null" if value is None else str(_string(value))


def item_line(item: ItemResult) -> str:
    """The JSON text of one item (without the line break)."""
    expected = item.expected
    line = f'{{"id": {_string(item.id)}, "output": {_optional(item.output)}, "expected": ' + (
        "null" if expected is None else "[" + ", ".join(map(_string, expected)) + "]"
    )
    for name in OPTIONAL_TEXTS:
        value = getattr(item, name)
        if value is not None:
            line += f', "{name}": {_string(value)}'
    if item.metadata:
        line += f', "metadata": {_mapping(item.metadata)}'
    scores = ", ".join(f"{_string(label)}: {_score(s)}" for label, s in item.scores.items())
    return line + f', "scores": {{{scores}}}}}'


def iter_lines(result: RunResult) -> Iterator[str]:
    """The lines of ``items.jsonl``, each ending with a line break."""
    for item in result.items:
        yield item_line(item) + "\n"


def write(result: RunResult, path: Path) -> None:
    """Write ``items.jsonl`` for ``result`` to ``path``, streamed in chunks."""
    with open_report(path) as handle:
        chunk: list[str] = []
        for line in iter_lines(result):
            chunk.append(line)
            if len(chunk) >= 4096:
                handle.write("".join(chunk))
                chunk.clear()
        handle.write("".join(chunk))
