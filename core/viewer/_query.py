"""The viewer's items endpoint: filter, sort and page a run's items as report.html's script does.

The rules are the page's (see :mod:`itemscore.reports._html_script`), so that a view asked of
the viewer shows what the page would show if it held every item: the text filter looks at
id, model, group, input, output, expected answer and reasons, case-insensitively; the state
filter at the chosen metric, or at any metric; ``id``, ``model`` and ``group`` sort
naturally (ASCII digit runs as numbers, before text runs), ``metric:LABEL`` by value; items
without a value come last in either direction (skip, then error), and ties keep the run's
order.

An :class:`ItemIndex` reads the run's keys and scores once (``result.table.rows()``, batch
by batch); a view then costs one pass over the items up to the last one of its page. A text
search reads every item's texts once; they are kept for the next searches when they are
small (:data:`KEEP_TEXT`), and the last few searches' answers are kept, so that paging
through a search reads nothing again.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any

import attrs
import numpy as np

from .._result import RunResult
from ..reports._text import printable

__all__ = ["MAX_LIMIT", "STATES", "ItemIndex", "ItemView", "natural_key"]

#: At most this many items per answer.
MAX_LIMIT = 500
#: Characters of item texts an index keeps for text searches (more: read again each time).
KEEP_TEXT = 64 << 20
#: Text searches whose answers an index keeps (paging a search reads the texts once).
KEEP_SEARCHES = 8
#: The states, in the order items without a value sort.
STATES: tuple[str, ...] = ("ok", "fail", "skip", "error")
_RUNS = re.compile(r"[0-9]+|[^0-9]+")


def natural_key(text: str) -> tuple[tuple[int, int, str], ...]:
    """The page's natural order: ``q2`` before ``q10``; digit runs before text runs."""
    key = []
    for run in _RUNS.findall(text):
        if run[0].isascii() and run[0].isdigit():
            stripped = run.lstrip("0")
            key.append((0, len(stripped), stripped))
        else:
            key.append((1, 0, run))
    return tuple(key)


@attrs.frozen(kw_only=True)
class ItemView:
    """One view of the items: filters, order and page, checked."""

    #: Text to look for (case-insensitive); empty: every item.
    q: str = ""
    #: A model name as the page shows it; empty: every model.
    model: str = ""
    #: A label as the page shows it; empty: every metric.
    metric: str = ""
    #: One of :data:`STATES`; empty: every state.
    state: str = ""
    #: ``""`` (the run's order), ``id``, ``model``, ``group`` or ``metric:LABEL``.
    sort: str = ""
    #: ``asc`` or ``desc``.
    dir: str = "asc"
    #: The first item's place in the view.
    offset: int = 0
    #: How many items, at most :data:`MAX_LIMIT`.
    limit: int = 50


class ItemIndex:
    """A run's item keys and scores, read once, for the views the viewer is asked."""

    def __init__(self, result: RunResult) -> None:
        self.result = result
        labels = list(result.table.labels)
        self.labels = labels
        #: Labels as the page shows them -> the run's labels.
        self.shown_labels = {printable(label): label for label in labels}
        ids: list[str] = []
        models: list[str | None] = []
        groups: list[str | None] = []
        states: dict[str, list[int]] = {label: [] for label in labels}
        values: dict[str, list[float]] = {label: [] for label in labels}
        for item, scores in result.table.rows():
            ids.append(printable(item.id))
            models.append(None if item.model is None else printable(item.model))
            groups.append(None if item.group is None else printable(item.group))
            for label, (code, value, _, _) in scores:
                states[label].append(code)
                values[label].append(np.nan if value is None else value)
        self.n = len(ids)
        self.keys: dict[str, list[Any]] = {"id": ids, "model": models, "group": groups}
        self.states = {k: np.asarray(v, dtype=np.int8) for k, v in states.items()}
        self.values = {k: np.asarray(v, dtype=np.float64) for k, v in values.items()}
        self.models = sorted({m for m in models if m is not None})
        self._ranks: dict[str, np.ndarray[Any, np.dtype[np.int64]]] = {}
        self._found: OrderedDict[str, np.ndarray[Any, np.dtype[np.bool_]]] = OrderedDict()
        self._texts: list[str] | None = None
        self._lock = threading.Lock()

    def check(self, view: ItemView) -> str | None:
        """What is wrong with ``view`` for this run, as a sentence; ``None`` when nothing."""
        if view.model and view.model not in self.models:
            return f"`model` ({view.model!r}) is no model of this run."
        if view.metric and view.metric not in self.shown_labels:
            return f"`metric` ({view.metric!r}) is no metric label of this run."
        if view.state and view.state not in STATES:
            return f"`state` ({view.state!r}) must be one of {', '.join(STATES)}."
        if view.sort.startswith("metric:"):
            if view.sort[7:] not in self.shown_labels:
                return f"`sort` ({view.sort!r}) names no metric label of this run."
        elif view.sort not in ("", "id", "model", "group"):
            return f"`sort` ({view.sort!r}) must be empty, id, model, group or metric:LABEL."
        if view.dir not in ("asc", "desc"):
            return f"`dir` ({view.dir!r}) must be asc or desc."
        if not 1 <= view.limit <= MAX_LIMIT:
            return f"`limit` ({view.limit}) must be between 1 and {MAX_LIMIT}."
        if view.offset < 0:
            return f"`offset` ({view.offset}) must be 0 or more."
        return None

    def _mask(self, view: ItemView) -> np.ndarray[Any, np.dtype[np.bool_]]:
        mask = np.ones(self.n, dtype=bool)
        if view.model:
            models = self.keys["model"]
            mask &= np.fromiter((m == view.model for m in models), bool, self.n)
        if view.state:
            code = STATES.index(view.state)
            which = [self.shown_labels[view.metric]] if view.metric else self.labels
            hit = np.zeros(self.n, dtype=bool)
            for label in which:
                hit |= self.states[label] == code
            mask &= hit
        if view.q:
            mask &= self._texts_match(view.q.lower())
        return mask

    def _haystacks(self) -> Iterator[str]:
        """Each item's texts, lowercase, joined: kept after one pass when they are small."""
        if self._texts is not None:
            yield from self._texts
            return
        kept: list[str] | None = []
        size = 0
        for item, scores in self.result.table.rows():
            texts = [printable(item.id), item.model, item.group, item.input, item.output]
            texts.append(" | ".join(item.expected) if item.expected else None)
            texts += [reason for _, (_, _, reason, _) in scores]
            hay = "\n".join(t for t in texts if t is not None).lower()
            if kept is not None:
                size += len(hay)
                kept = kept if size <= KEEP_TEXT else None
                if kept is not None:
                    kept.append(hay)
            yield hay
        if kept is not None:
            self._texts = kept

    def _texts_match(self, needle: str) -> np.ndarray[Any, np.dtype[np.bool_]]:
        """Which items hold ``needle`` (lowercase) in a text; the last few answers are kept."""
        with self._lock:
            if needle in self._found:
                self._found.move_to_end(needle)
                return self._found[needle]
            found = np.fromiter((needle in hay for hay in self._haystacks()), bool, self.n)
            self._found[needle] = found
            while len(self._found) > KEEP_SEARCHES:
                self._found.popitem(last=False)
            return found

    def _rank(self, key: str) -> np.ndarray[Any, np.dtype[np.int64]]:
        """Each item's place in the natural order of ``key`` (equal keys share one; none: -1)."""
        with self._lock:
            if key not in self._ranks:
                keys = self.keys[key]
                distinct = sorted({k for k in keys if k is not None}, key=natural_key)
                rank: dict[str, int] = {}
                previous: tuple[tuple[int, int, str], ...] | None = None
                current = -1
                for k in distinct:  # keys that differ but sort alike (q01, q1) share a place
                    nk = natural_key(k)
                    if nk != previous:
                        current += 1
                        previous = nk
                    rank[k] = current
                self._ranks[key] = np.fromiter(
                    (-1 if k is None else rank[k] for k in keys), np.int64, self.n
                )
            return self._ranks[key]

    def _order(self, view: ItemView, positions: np.ndarray[Any, np.dtype[np.intp]]) -> list[int]:
        if not view.sort:
            ordered: list[int] = positions.tolist()
            return ordered
        if view.sort.startswith("metric:"):
            label = self.shown_labels[view.sort[7:]]
            keys: np.ndarray[Any, Any] = self.values[label][positions]
            known = ~np.isnan(keys)
            rest = positions[~known]
            rest = rest[np.lexsort((rest, self.states[label][rest]))]  # skip, then error
        else:
            keys = self._rank(view.sort)[positions]
            known = keys >= 0
            rest = positions[~known]
        have = positions[known]
        sign = -1 if view.dir == "desc" else 1
        first = have[np.lexsort((have, sign * keys[known]))]  # ties: the run's order
        head: list[int] = first.tolist()
        tail: list[int] = rest.tolist()
        return head + tail

    def view(self, view: ItemView) -> tuple[int, list[int]]:
        """How many items match ``view``, and the positions of its page, in order."""
        positions = np.flatnonzero(self._mask(view))
        ordered = self._order(view, positions)
        return len(ordered), ordered[view.offset : view.offset + view.limit]

    def items_at(self, positions: Sequence[int]) -> list[tuple[Any, Any]]:
        """The ``(item, scores)`` rows at ``positions``, in that order (one pass, stops early)."""
        wanted = set(positions)
        found: dict[int, tuple[Any, Any]] = {}
        if wanted:
            last = max(wanted)
            for position, row in enumerate(self.result.table.rows()):
                if position in wanted:
                    found[position] = row
                if position >= last:
                    break
        return [found[p] for p in positions]
