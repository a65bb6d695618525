"""Which items pair: a run table as compare reads it, and the rows of two sides paired by id.

Runs with attempts (or further reducers) pair their questions, each side's attempts reduced as
its measurements were; a metric with its own aggregate under ``mean`` pairs attempts. Paired
items must be the same item on both sides (their content fingerprints agree).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np
import pyarrow as pa

from .._columns import ScoreColumn
from .._exceptions import ConfigError
from .._metric import Metric
from ..engine._table import FINGERPRINT
from ._metrics import _measurements_of, _metric_for

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from .._records import ItemScore
    from .._result import RunResult
    from ..engine._table import RunTable


class _Columns:
    """A run table as compare reads it: ids, models, groups, clusters, scores.

    By default the result's own table; for runs with attempts, the table of its questions
    (or its attempts under ids that name the attempt too).
    """

    def __init__(
        self,
        result: RunResult,
        table: RunTable | None = None,
        *,
        ids: list[str] | None = None,
        clusters: list[str | None] | None = None,
        contents_rows: NDArray[np.intp] | None = None,
    ) -> None:
        table = result.table if table is None else table
        self.table = table
        self.result = result
        self.n = len(table)
        #: The ids, as Arrow text: pairing joins them there (ten million ids as Python
        #: strings are 700 MB).
        self.id_column: pa.Array = (
            table.key_column("id").combine_chunks() if ids is None else pa.array(ids, pa.string())
        )
        self.groups: list[str | None] | None = table.key("group") if table.has("group") else None
        if clusters is None and table.has("cluster"):
            clusters = table.key("cluster")
        self.clusters: list[str | None] | None = clusters
        self._contents_rows = contents_rows

    def id_at(self, row: int) -> str:
        """The id of one row."""
        return str(self.id_column[row].as_py())

    def codes(self, label: str) -> NDArray[np.int8]:
        """Status codes of ``label`` per item: 0 ok, 1 fail, 2 skip, 3 error."""
        return self.table.codes(label)

    def values(self, label: str) -> NDArray[np.float64]:
        """Values of ``label`` per item (NaN where none)."""
        return self.table.values(label)

    def rows_of(self, model: str | None, several: bool) -> NDArray[np.intp]:
        """Positions of ``model``'s items (all of them when the run has one model)."""
        return self.table.rows_of_model(model) if several else np.arange(self.n)

    def question_ids(self, rows: NDArray[np.intp]) -> list[str]:
        """The question (the plain id) of each of ``rows``."""
        ids = self.table.key_column("id").take(pa.array(rows, pa.int64()))
        return [str(i) for i in ids.to_pylist()]

    def fingerprints(self) -> NDArray[np.uint64]:
        """Each item's content fingerprint (its input and answer key, hashed; see the table)."""
        found = np.asarray(self.result.table.key_column(FINGERPRINT).to_numpy(), np.uint64)
        return found if self._contents_rows is None else found[self._contents_rows]


@attrs.frozen
class _Entry:
    """One comparison per pair of models: a label under one reducer, and where its scores are."""

    label: str
    key: str
    #: The score column of each side (the label, or a reduced column's name).
    column_a: str
    column_b: str
    #: The measurement key of side b, when it differs (another first reducer).
    key_b: str | None = None
    #: The range of the values compared as means (shares of right attempts: 0 to 1).
    bounds: tuple[float, float] | None = None
    #: Whether it pairs attempts (a metric with its own aggregate under ``mean``) rather
    #: than questions.
    by_attempt: bool = False


#: ``(baseline, candidate, rows of a, rows of b, ids on one side only, groups)``.
_Aligned = tuple[str | None, str | None, "NDArray[np.intp]", "NDArray[np.intp]", int, Any]


class _Sides:
    """The two sides' columns and their rows paired by id, for every pair of models."""

    def __init__(
        self,
        col_a: _Columns,
        col_b: _Columns,
        pairs: Sequence[tuple[str | None, str | None, str | None, str | None]],
        several_a: bool,
        several_b: bool,
        by_attempt: _Sides | None = None,
    ) -> None:
        self.col_a, self.col_b = col_a, col_b
        self.pairs = pairs
        self.several_a, self.several_b = several_a, several_b
        self._by_attempt = by_attempt
        self._aligned: list[_Aligned] | None = None

    def aligned(self) -> list[_Aligned]:
        if self._aligned is None:
            col_a, col_b = self.col_a, self.col_b
            out: list[_Aligned] = []
            for model_a, model_b, name_a, name_b in self.pairs:
                rows_a = col_a.rows_of(model_a, self.several_a)
                rows_b = col_b.rows_of(model_b, self.several_b)
                ids_a, ids_b = col_a.id_column, col_b.id_column
                if self.several_a:
                    ids_a = ids_a.take(pa.array(rows_a, pa.int64()))
                if self.several_b:
                    ids_b = ids_b.take(pa.array(rows_b, pa.int64()))
                ia, ib, n_only = align_ids(ids_a, ids_b)
                ra, rb = rows_a[ia], rows_b[ib]
                out.append((name_a, name_b, ra, rb, n_only, _pick(col_a.groups, ra)))
            self._aligned = out
        return self._aligned

    def for_entry(self, entry: _Entry) -> _Sides:
        """The sides an entry pairs: these, or the attempts'."""
        if entry.by_attempt and self._by_attempt is not None:
            return self._by_attempt
        return self


def _reduces(result: RunResult) -> bool:
    """Whether a result's measurements were made over questions rather than its items."""
    settings = result.settings
    return result.table.has("attempt") or tuple(getattr(settings, "reduce", ("mean",))) != ("mean",)


def _question_sides(
    result: RunResult,
    other: RunResult,
    labels: Sequence[str],
    pairs: Sequence[tuple[str | None, str | None, str | None, str | None]],
    several_a: bool,
    several_b: bool,
) -> tuple[list[_Entry], _Sides]:
    """The entries of runs with attempts (or reducers): questions paired by id.

    Each side's attempts are reduced as its measurements were, by each reducer both runs
    have: the first one's comparison has the key ``<suite>.<label>``, each further one
    ``<suite>.<label>[<reducer>]``. A metric with its own aggregate under ``mean`` is
    compared on its attempts paired by id and attempt, each question resampled whole.
    """
    from .._reducers import reducer_key, resolve_reducer
    from ..engine._questions import LabelAttempts, Questions

    reduce_a = tuple(result.settings.reduce)
    reduce_b = tuple(other.settings.reduce)
    shared = [name for name in reduce_a if name in reduce_b]
    same = other is result
    runs = (result,) if same else (result, other)  # one run: its side b is its side a
    questions = [Questions.of(run.table) for run in runs]
    columns: list[dict[str, Any]] = [{}, {}]
    codings: list[dict[Any, Any]] = [{}, {}]  # each side's answer codes, shared by its labels
    attempts = any(run.table.has("attempt") for run in runs)
    entries: list[_Entry] = []
    for label in labels:
        metric = _metric_for(result, label, required=True)
        assert metric is not None
        binary = metric.aggregation == "ratio"
        normalizer = getattr(metric, "normalizer", None)
        custom = (
            any(m.aggregation == "custom" for m in _measurements_of(result, label)[:1])
            or type(metric).aggregate is not Metric.aggregate
        )
        found: list[LabelAttempts | None] = [None, None]
        for name in shared:
            first_a, first_b = reduce_a.index(name) == 0, reduce_b.index(name) == 0
            key = reducer_key(result.suite_id, label, name, first_a)
            key_b = reducer_key(other.suite_id, label, name, first_b)
            if custom and name == "mean" and attempts:
                entries.append(_Entry(label, key, label, label, key_b, by_attempt=True))
                continue
            spec = resolve_reducer(name)
            reduced: list[Any] = []
            for side, (run, qs) in enumerate(zip(runs, questions)):
                if found[side] is None:
                    found[side] = LabelAttempts.of(
                        qs,
                        run.table,
                        label,
                        binary=binary,
                        normalizer=normalizer,
                        codings=codings[side],
                    )
                try:
                    reduced.append(found[side].reduce(spec))  # type: ignore[union-attr]
                except Exception:  # noqa: BLE001 - that measurement is an error: nothing to pair
                    break
            if len(reduced) < len(runs):
                continue
            for side, (column, _) in enumerate(reduced):
                columns[side][key_b if side else key] = column
            picked = reduced[0][1]
            bounds = (0.0, 1.0) if binary and not picked else None
            entries.append(_Entry(label, key, key, key_b if not same else key, key_b, bounds))
    q = [
        _Columns(run, qs.table(cols), contents_rows=qs.first_row)
        for run, qs, cols in zip(runs, questions, columns)
    ]
    by_attempt = None
    if any(e.by_attempt for e in entries):
        att = [_attempt_columns(run) for run in runs]
        by_attempt = _Sides(att[0], att[-1], pairs, several_a, several_b)
    return entries, _Sides(q[0], q[-1], pairs, several_a, several_b, by_attempt)


def _attempt_columns(result: RunResult) -> _Columns:
    """A result's attempts under ids naming the attempt, each question (or cluster) a cluster."""
    table = result.table
    ids = table.key("id")
    attempts = table.key("attempt")
    named = [f"{i}\x1f{a}" for i, a in zip(ids, attempts)]
    clusters = table.key("cluster") if table.has("cluster") else list(ids)
    return _Columns(result, table, ids=named, clusters=list(clusters))


def align_ids(ids_a: pa.Array, ids_b: pa.Array) -> tuple[NDArray[np.intp], NDArray[np.intp], int]:
    """Positions in a and in b of the ids both have, and how many ids only one side has.

    A hash join in Arrow: each id of a looked up among b's (ids are unique on each side).
    """
    import pyarrow.compute as pc

    if ids_a.equals(ids_b):
        index = np.arange(len(ids_a))
        return index, index, 0
    pos_b = pc.index_in(ids_a, value_set=ids_b)
    found = pos_b.is_valid().to_numpy(zero_copy_only=False)
    ia = np.flatnonzero(found)
    ib = np.asarray(pos_b.drop_null().to_numpy(), dtype=np.intp)
    return ia, ib, (len(ids_a) - ia.size) + (len(ids_b) - ib.size)


def _pick(column: list[str | None] | None, rows: NDArray[np.intp]) -> list[str | None] | None:
    """``column`` at ``rows``; ``None`` when it holds nothing but ``None``."""
    if column is None:
        return None
    picked = column if _is_whole(rows, len(column)) else [column[i] for i in rows.tolist()]
    return None if picked.count(None) == len(picked) else picked


def _is_whole(rows: NDArray[np.intp], n: int) -> bool:
    return rows.size == n and (n == 0 or (rows[0] == 0 and bool(np.all(np.diff(rows) == 1))))


def _take(column: Sequence[ItemScore | None], rows: NDArray[np.intp]) -> Sequence[ItemScore | None]:
    whole = _is_whole(rows, len(column))
    if isinstance(column, ScoreColumn):
        return column if whole else column.take(rows.tolist())
    if whole:
        return list(column)
    return [column[i] for i in rows.tolist()]


def _check_same_items(col_a: _Columns, col_b: _Columns, aligned: Sequence[Any]) -> None:
    """Paired items must be the same item: equal ``input`` and ``expected`` on both sides.

    Read from the items' content fingerprints (kept in the run table's keys), so that two
    runs compare without their items in memory.

    Raises:
        ConfigError: some pairs hold different questions or answer keys (the first few named).
    """
    prints_a = col_a.fingerprints()
    prints_b = prints_a if col_b is col_a else col_b.fingerprints()
    found = [ra[differing_items(prints_a[ra], prints_b[rb])] for _, _, ra, rb, _, _ in aligned]
    n_differ = sum(rows.size for rows in found)
    if n_differ:
        raise different_items(n_differ, (col_a.id_at(i) for rows in found for i in rows.tolist()))


def differing_items(a: NDArray[np.uint64], b: NDArray[np.uint64]) -> NDArray[np.intp]:
    """The positions of the pairs whose fingerprints ``a`` and ``b`` say hold different items.

    An item without an answer key on one side is skipped there, never scored against a
    different key: only two keys can disagree. Inputs must agree (a missing one too).
    """
    low = np.uint64(0xFFFFFFFF)
    keys_a, keys_b = a & low, b & low
    bad = ((a >> np.uint64(32)) != (b >> np.uint64(32))) | (
        (keys_a != 0) & (keys_b != 0) & (keys_a != keys_b)
    )
    return np.flatnonzero(bad)


def different_items(n_differ: int, ids: Iterable[str]) -> ConfigError:
    """The error of ``n_differ`` paired items with different contents: the first five ids."""
    shown: list[str] = []
    for name in ids:
        if len(shown) == 5:
            break
        if name not in shown:
            shown.append(name)
    names = ", ".join(repr(i) for i in shown)
    return ConfigError(
        f"{n_differ} paired item{'s' if n_differ != 1 else ''} with one id "
        f"{'hold' if n_differ != 1 else 'holds'} a different input or answer key on the "
        f"two sides (ids {names}{', ...' if n_differ > len(shown) else ''}): these are not "
        "the same questions, and pairing them would compare different data. Check that "
        "both runs scored the same benchmark; pass allow_different_inputs=True "
        "(--allow-different-inputs) to pair by id anyway."
    )
