r"""The items as report.html's script reads them: one JSON document, safe inside ``<script>``.

The document is ``{"labels", "graded", "models", "total", "source", "items"}``: the
measurement labels, those whose ``ok`` means right (ratios: shown as a state beside the
value; elsewhere the value alone says it), the model names, how many items the run has,
where the rest of them can be asked for (``null`` in a file; the viewer's endpoint when the
viewer served the page), and the items the page holds, each ``{"id", "model", "group",
"input", "output", "expected", "scores"}`` with ``scores`` mapping a label to ``[state,
value, reason]``. The viewer's endpoint answers with items of the same shape
(:func:`item_json`).

Inputs, outputs, expected answers and reasons longer than a limit keep their first and last
halves of it, ``…[N characters cut]…`` between. The JSON is made safe inside ``<script>``:
``<``, ``>`` and ``&`` are written as ``\u`` escapes, so no text can close the block.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from itertools import islice
from typing import Any

from .._records import STATES, ItemResult
from ..display._text import printable, visible

__all__ = ["cut_middle", "item_json", "items_pieces", "script_safe"]

_string = json.encoder.encode_basestring  # JSON string syntax, C accelerated (no ASCII escaping)
_NAME = {state: state.value for state in STATES}


def script_safe(text: str) -> str:
    """JSON text made safe inside ``<script>``: no ``<``, ``>``, ``&`` or line separators."""
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def cut_middle(text: str, limit: int) -> str:
    """``text``; longer than ``limit``: its two ends, the middle cut (and said)."""
    if len(text) <= limit:
        return text
    half = limit // 2  # the middle goes: a long answer often ends with its point
    return f"{text[:half]}…[{len(text) - 2 * half:,} characters cut]…{text[-half:]}"


def _text(value: str | None, limit: int, cut: list[int]) -> str:
    """A text as JSON; longer than ``limit``: its two ends, the middle cut (counted)."""
    if value is None:
        return "null"
    if len(value) > limit:
        cut[0] += 1
    return _string(visible(cut_middle(value, limit)))


def item_json(item: ItemResult, limit: int, cut: list[int], names: dict[str, str]) -> str:
    """The JSON object of one item (before :func:`script_safe`); ``cut[0]`` counts texts cut.

    ``names`` memoises the labels' JSON strings across items.
    """
    parts = []
    for label, score in item.scores.items():
        name = names.get(label)
        if name is None:
            name = names[label] = _string(printable(label))
        value = score.value
        shown = "null" if value is None else repr(float(value))  # scores are finite
        reason = _text(score.reason, limit, cut)
        parts.append(f'{name}: ["{_NAME[score.status]}", {shown}, {reason}]')
    expected = " | ".join(item.expected) if item.expected else None
    model, group = item.model, item.group
    attempt = "" if item.attempt is None else f'"attempt": {item.attempt}, '
    return (
        f'{{"id": {_string(printable(item.id))}, {attempt}'
        f'"model": {"null" if model is None else _string(printable(model))}, '
        f'"group": {"null" if group is None else _string(printable(group))}, '
        f'"input": {_text(item.input, limit, cut)}, "output": {_text(item.output, limit, cut)}, '
        f'"expected": {_text(expected, limit, cut)}, "scores": {{{", ".join(parts)}}}}}'
    )


def items_pieces(
    rows: Iterable[ItemResult],
    *,
    labels: list[str],
    models: list[str],
    total: int,
    graded: Iterable[str] = (),
    max_items: int,
    limit: int,
    source: Mapping[str, Any] | None = None,
) -> tuple[list[str], int, int]:
    """The page's data: the first ``max_items`` of ``rows``, texts cut past ``limit``.

    The rows are read once, in order, and only as far as the page holds them; each becomes
    its JSON text as it is read, so the page's items are never held as records too. The
    pieces are left for the writer to write one by one: joined, one non-ASCII character
    would make the whole text four bytes a character.

    Returns:
        The JSON's pieces in order (safe inside ``<script>``), how many items it holds, how
        many texts were cut.
    """
    names: dict[str, str] = {}
    cut = [0]
    first: dict[tuple[str | None, str], int] = {}
    held: list[tuple[int, int, str]] = []  # (the question's first place, attempt, JSON text)
    attempts = False
    for index, item in enumerate(islice(rows, max_items)):
        place = first.setdefault((item.model, item.id), index)
        attempts = attempts or item.attempt is not None
        # script_safe replaces single characters: made safe piece by piece, the same text.
        text = script_safe(item_json(item, limit, cut, names))
        held.append((place, item.attempt or 0, text))
    if attempts:  # attempts sit under their question: questions in order of appearance
        held.sort(key=lambda entry: entry[:2])
    head = json.dumps(
        {
            "labels": [printable(x) for x in labels],
            # The labels whose ok means right (ratios); elsewhere ok only says a value was given.
            "graded": [printable(x) for x in labels if x in set(graded)],
            "models": [printable(m) for m in models],
            "total": total,
            "source": None if source is None else dict(source),
        },
        ensure_ascii=False,
    )
    pieces = [script_safe(head[:-1]), ', "items": [']
    for position, (_, _, text) in enumerate(held):
        pieces += (", ", text) if position else (text,)
    pieces.append("]}")
    return pieces, len(held), cut[0]
