"""The viewer's items endpoint: filter, sort and page a run's items as report.html's script does.

The rules are the page's (see :mod:`itemscore.reports._html_script`), so that a view asked of
the viewer shows what the page would show if it held every item: the text filter looks at
id, model, group, input, output, expected answer and reasons, case-insensitively; the state
filter at the chosen metric, or at any metric; ``id``, ``model`` and ``group`` sort
naturally (ASCII digit runs as numbers, before text runs), ``metric:LABEL`` by value; items
without a value come last in either direction (skip, then error), and ties keep the run's
order.

An :class:`ItemIndex` reads no more of ``items.parquet`` than a view needs
(:mod:`._store`): the run's own order pages without reading anything but the page's rows;
filters and sorts read the key and state columns they use once; a text search streams the
text columns a row group at a time, matching with ``pyarrow.compute``, and answers as soon
as it has a page of hits (in the run's order) or has searched for :data:`SLICE` seconds —
saying how far it got (:class:`Answer`). Asked again, it goes on from there, so the page
shows the first hits at once and fills in the count. The last few searches are kept.
"""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._columns import ScoreColumn, scored_items
from .._records import STATE_NAMES, ItemResult
from .._schema import ITEM_COLUMNS, batch_to_items
from ..display._text import printable
from ..engine._store import score_field
from ._store import ItemStore, score_part

__all__ = [
    "MAX_LIMIT",
    "SLICE",
    "STATES",
    "Answer",
    "ItemIndex",
    "ItemView",
    "natural_key",
    "text_hits",
]

#: At most this many items per answer.
MAX_LIMIT = 500
#: Text searches whose progress an index keeps (paging a search reads the texts once).
KEEP_SEARCHES = 8
#: Seconds a search goes on before it answers with what it found so far.
SLICE = 0.5
#: The states, in the order items without a value sort (the status table's code order).
STATES: tuple[str, ...] = STATE_NAMES
#: The item columns a text search looks at (with each label's reasons).
TEXT_COLUMNS: tuple[str, ...] = ("id", "model", "group", "input", "output", "expected")
_RUNS = re.compile(r"[0-9]+|[^0-9]+")

_Ints = np.ndarray[Any, np.dtype[np.int64]]
_Bools = np.ndarray[Any, np.dtype[np.bool_]]


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


@attrs.frozen(kw_only=True)
class Answer:
    """What a view shows: how many items match, and the positions of its page."""

    #: The items that match (those found so far while ``complete`` is false).
    total: int
    #: The positions of the page's items, in order.
    positions: list[int]
    #: Whether every item was looked at (a text search answers before it has, with the
    #: page of hits it found first, or with none yet when the view is sorted).
    complete: bool = True
    #: How many items were looked at.
    scanned: int = 0


def text_hits(group: pa.Table, needle: str) -> _Bools:
    """Which rows of ``group`` hold ``needle`` (lowercase) in a text column.

    Each column is lowercased and searched on its own (expected answers joined by `` | ``
    as the page shows them); score columns bring their reasons.
    """
    hit = np.zeros(group.num_rows, dtype=bool)
    for name in group.schema.names:
        column = group.column(name)
        if name == "expected":
            column = pc.binary_join(column, " | ")
        if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
            continue
        found = pc.match_substring(pc.utf8_lower(column), needle)
        hit |= np.asarray(pc.fill_null(found, False).to_numpy(zero_copy_only=False), dtype=bool)
    return hit


class _Search:
    """How far a text search went: the next row group, and the hits before it."""

    def __init__(self, needle: str) -> None:
        self.needle = needle
        self.next = 0
        self.hits: list[_Ints] = []
        self._found: _Ints | None = None

    def found(self) -> _Ints:
        if self._found is None:
            self._found = np.concatenate(self.hits) if self.hits else np.zeros(0, np.int64)
        return self._found

    def add(self, group: int, hits: _Ints) -> None:
        self.next = group + 1
        if len(hits):
            self.hits.append(hits)
            self._found = None


class ItemIndex:
    """A run's items, for the views the viewer is asked (reading as little as each needs).

    Args:
        store: The run's items.
        models: The model names as the page shows them.
    """

    def __init__(self, store: ItemStore, models: Sequence[str]) -> None:
        self.store = store
        self.labels = list(store.labels)
        #: Labels as the page shows them -> the run's labels.
        self.shown_labels = {printable(label): label for label in self.labels}
        self.n = store.n
        self.models = sorted(set(models))
        self._ranks: dict[str, _Ints] = {}
        self._states: dict[str, np.ndarray[Any, np.dtype[np.int8]]] = {}
        self._values: dict[str, np.ndarray[Any, np.dtype[np.float64]]] = {}
        self._searches: OrderedDict[str, _Search] = OrderedDict()
        self._lock = threading.Lock()
        self._searching = threading.Lock()

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

    # -- columns, read once ----------------------------------------------------------------

    def states(self, label: str) -> np.ndarray[Any, np.dtype[np.int8]]:
        """Each item's state code for ``label`` (0 ok, 1 fail, 2 skip, 3 error)."""
        return self._score_part(self._states, label, "status", np.int8)

    def values(self, label: str) -> np.ndarray[Any, np.dtype[np.float64]]:
        """Each item's value for ``label`` (NaN for none)."""
        return self._score_part(self._values, label, "value", np.float64)

    def _score_part(
        self, kept: dict[str, np.ndarray[Any, Any]], label: str, part: str, dtype: type[np.generic]
    ) -> np.ndarray[Any, Any]:
        with self._lock:
            if label not in kept:
                name = score_part(label, part)
                column = self.store.columns([name])[name]
                kept[label] = np.asarray(column.to_numpy(), dtype) if self.n else np.zeros(0, dtype)
            return kept[label]

    def _model_mask(self, shown: str) -> _Bools:
        column = self.store.columns(["model"]).get("model")
        if column is None:
            return np.zeros(self.n, dtype=bool)
        raw = [m for m in pc.unique(column).to_pylist() if m is not None and printable(m) == shown]
        found = pc.is_in(column, value_set=pa.array(raw, pa.string()))
        return np.asarray(found.to_numpy(zero_copy_only=False), dtype=bool)

    def _filter(self, view: ItemView) -> _Bools | None:
        """The items the model and state filters keep; ``None`` when there are none."""
        if not view.model and not view.state:
            return None
        mask = np.ones(self.n, dtype=bool)
        if view.model:
            mask &= self._model_mask(view.model)
        if view.state:
            code = STATES.index(view.state)
            which = [self.shown_labels[view.metric]] if view.metric else self.labels
            hit = np.zeros(self.n, dtype=bool)
            for label in which:
                hit |= self.states(label) == code
            mask &= hit
        return mask

    def _rank(self, key: str) -> _Ints:
        """Each item's place in the natural order of ``key`` (equal keys share one; none: -1)."""
        column = self.store.columns([key]).get(key)
        with self._lock:
            if key not in self._ranks:
                if column is None:
                    self._ranks[key] = np.full(self.n, -1, dtype=np.int64)
                    return self._ranks[key]
                fast = _numbered_ranks(column)
                if fast is not None:
                    self._ranks[key] = fast
                    return fast
                distinct = [k for k in pc.unique(column).to_pylist() if k is not None]
                shown = {k: natural_key(printable(k)) for k in distinct}
                distinct.sort(key=shown.__getitem__)
                places = np.zeros(len(distinct), dtype=np.int64)
                current, previous = -1, None
                for i, k in enumerate(distinct):  # keys that differ but sort alike share a place
                    if shown[k] != previous:
                        current += 1
                        previous = shown[k]
                    places[i] = current
                where = pc.index_in(column, value_set=pa.array(distinct, column.type))
                index = np.asarray(
                    pc.fill_null(where, -1).to_numpy(zero_copy_only=False), dtype=np.int64
                )
                rank = np.where(index >= 0, places[np.maximum(index, 0)] if len(places) else 0, -1)
                self._ranks[key] = rank.astype(np.int64)
            return self._ranks[key]

    def _order(self, view: ItemView, positions: _Ints) -> _Ints:
        if not view.sort:
            return positions
        if view.sort.startswith("metric:"):
            label = self.shown_labels[view.sort[7:]]
            keys: np.ndarray[Any, Any] = self.values(label)[positions]
            known = ~np.isnan(keys)
            rest = positions[~known]
            rest = rest[np.lexsort((rest, self.states(label)[rest]))]  # skip, then error
        else:
            keys = self._rank(view.sort)[positions]
            known = keys >= 0
            rest = positions[~known]
        have = positions[known]
        sign = -1 if view.dir == "desc" else 1
        first = have[np.lexsort((have, sign * keys[known]))]  # ties: the run's order
        return np.concatenate([first, rest]).astype(np.int64)

    # -- views ------------------------------------------------------------------------------

    def view(self, view: ItemView) -> Answer:
        """How many items match ``view``, and the positions of its page, in order."""
        end = view.offset + view.limit
        if view.q:
            return self._search_view(view)
        if not (view.model or view.state or view.sort):  # the run's order: nothing to read
            return Answer(
                total=self.n,
                positions=list(range(min(view.offset, self.n), min(end, self.n))),
                scanned=self.n,
            )
        mask = self._filter(view)
        positions = np.flatnonzero(mask) if mask is not None else np.arange(self.n)
        ordered = self._order(view, positions.astype(np.int64))
        page: list[int] = ordered[view.offset : end].tolist()
        return Answer(total=len(ordered), positions=page, scanned=self.n)

    def _search(self, needle: str) -> _Search:
        found = self._searches.get(needle)
        if found is None:
            found = self._searches[needle] = _Search(needle)
        self._searches.move_to_end(needle)
        while len(self._searches) > KEEP_SEARCHES:
            self._searches.popitem(last=False)
        return found

    def _search_view(self, view: ItemView) -> Answer:
        """A text search: on from where the last one with this text stopped (see the module)."""
        mask = self._filter(view)
        need = view.offset + view.limit
        columns = [*TEXT_COLUMNS, *(score_part(label, "reason") for label in self.labels)]
        with self._searching:
            search = self._search(view.q.lower())

            def kept() -> _Ints:
                found = search.found()
                return found if mask is None else found[mask[found]]

            filled = len(kept()) >= need
            began = time.monotonic()
            if search.next < self.store.groups:
                scan = self.store.scan(columns, search.next)
                try:
                    for group, start, rows in scan:
                        search.add(group, start + np.flatnonzero(text_hits(rows, search.needle)))
                        if not view.sort and not filled and len(kept()) >= need:
                            break  # a page of hits: shown at once, the count comes after
                        if time.monotonic() - began >= SLICE:
                            break  # say how far it got; asked again, it goes on
                finally:
                    scan.close()
            complete = search.next >= self.store.groups
            hits = kept()
            scanned = self.store.bounds[search.next]
        if not complete and view.sort:
            return Answer(total=len(hits), positions=[], complete=False, scanned=scanned)
        ordered = self._order(view, hits)
        page: list[int] = ordered[view.offset : need].tolist()
        return Answer(total=len(hits), positions=page, complete=complete, scanned=scanned)

    def items_at(self, positions: Sequence[int]) -> list[ItemResult]:
        """The items (with their scores) at ``positions``, in that order (their groups only)."""
        table = self.store.take(positions)
        return rows_of(table, self.store, self.labels)


#: Keys a text then a number (``q17``, ``item-0042``): the common ids, ranked by Arrow.
_NUMBERED = r"^(?P<head>[\x20-\x2f\x3a-\x7e]*)(?P<num>[0-9]*)$"


def _numbered_ranks(column: pa.ChunkedArray) -> _Ints | None:
    """:func:`natural_key` ranks of keys that are printable ASCII text then digits, or ``None``.

    For such keys the natural order is that of (text, has digits, the number's digit count
    without leading zeros, those digits), which Arrow sorts without a Python object per key
    (a million ids: a fraction of a second instead of seconds). Other keys take the general way.
    """
    if column.null_count == len(column) or not pa.types.is_string(column.type):
        return None
    parts = pc.extract_regex(column, _NUMBERED)
    present = pc.is_valid(column)
    if pc.any(pc.and_(present, pc.is_null(parts))).as_py():
        return None
    head = pc.struct_field(parts, "head")
    digits = pc.struct_field(parts, "num")
    stripped = pc.utf8_ltrim(digits, "0")
    table = pa.table(
        {
            "head": head,
            "has": pc.greater(pc.utf8_length(digits), 0),
            "length": pc.utf8_length(stripped),
            "number": stripped,
        }
    )
    # Missing keys sort last (Arrow's default), where their rank is overwritten with -1.
    order = pc.sort_indices(
        table, sort_keys=[(name, "ascending") for name in table.column_names]
    ).to_numpy()
    ranked = table.take(order)
    new = np.zeros(len(order), dtype=bool)
    if len(order):
        new[0] = True
    for name in table.column_names:  # a key that differs from the one before starts a place
        values = ranked.column(name).combine_chunks()
        if len(values) > 1:
            differs = pc.not_equal(values.slice(1), values.slice(0, len(values) - 1))
            new[1:] |= np.asarray(pc.fill_null(differs, True).to_numpy(zero_copy_only=False))
    places = np.cumsum(new) - 1
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = places
    missing = ~np.asarray(present.to_numpy(zero_copy_only=False), dtype=bool)
    rank[missing] = -1
    return rank


def rows_of(table: pa.Table, store: ItemStore, labels: Sequence[str]) -> list[ItemResult]:
    """The items of a table of items and scores, with their scores (no ``extra``: not shown)."""
    items = batch_to_items(table.select(store.present(ITEM_COLUMNS)))
    columns = [
        ScoreColumn.of_arrow(label, table.column(score_field(label))).without_extras()
        for label in labels
    ]
    return list(scored_items(items, columns, fresh=True))
