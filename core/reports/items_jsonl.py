"""``items.jsonl``: every item with every score, one JSON object a line (``--report jsonl``).

The line of an item is the JSON form :func:`itemscore._serialize.item_to_dict` gives, built
with one reused encoder and no intermediate copies from the run table, batch by batch:
writing is linear and its memory flat. ``RunResult.load_json`` still reads report sets whose
per-item store is this file (written before ``items.parquet``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .._records import STATES, ItemResult, ItemScore
from .._result import RunResult
from .._serialize import TEXT_ROLES, json_safe
from ._files import open_report

__all__ = ["FILENAME", "item_line", "iter_lines", "write"]

#: The file this format writes.
FILENAME = "items.jsonl"

_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False, check_circular=False).encode


_string = json.encoder.encode_basestring  # C accelerated
_plain_scores: dict[tuple[str, float | None], str] = {}
_NAME = {state: state.value for state in STATES}


def _mapping(data: Mapping[str, Any]) -> str:
    """JSON for a metadata or extra mapping, as :func:`json_safe` would make it."""
    try:
        return _encode(data if type(data) is dict else dict(data))
    except (TypeError, ValueError):  # numpy scalars, NaN, keys of other types
        return _encode(json_safe(data))


def _score(score: ItemScore) -> str:
    status, value, reason, extra = score.status, score.value, score.reason, score.extra
    if reason is None and not extra:
        key = (status, value)
        text = _plain_scores.get(key)
        if text is None:
            shown = "null" if value is None else repr(value)
            text = f'{{"status": "{_NAME[status]}", "value": {shown}}}'
            if len(_plain_scores) < 4096:
                _plain_scores[key] = text
        return text
    shown = "null" if value is None else repr(value)
    text = f'{{"status": "{_NAME[status]}", "value": {shown}'
    if reason is not None:
        text += f', "reason": {_string(reason)}'
    if extra:
        text += f', "extra": {_mapping(extra)}'
    return text + "}"


def item_line(item: ItemResult) -> str:
    """The JSON text of one item with its scores (without the line break)."""
    expected = item.expected
    output = item.output
    line = (
        f'{{"id": {_string(item.id)}, "output": '
        f'{"null" if output is None else _string(output)}, "expected": '
        + ("null" if expected is None else "[" + ", ".join(map(_string, expected)) + "]")
    )
    for name in TEXT_ROLES:
        value = getattr(item, name)
        if value is not None:
            line += f', "{name}": {_string(value)}'
    if item.attempt is not None:
        line += f', "attempt": {item.attempt}'
    if item.metadata:
        line += f', "metadata": {_mapping(item.metadata)}'
    parts = ", ".join(f"{_string(label)}: {_score(score)}" for label, score in item.scores.items())
    return line + f', "scores": {{{parts}}}}}'


def iter_lines(result: RunResult) -> Iterator[str]:
    """The lines of ``items.jsonl``, each ending with a line break."""
    for item in result.table.rows():
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
