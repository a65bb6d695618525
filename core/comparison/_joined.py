"""Two runs paired out of core: rows split by a hash of their id, each bucket joined alone.

The two sides are two runs, or one run read twice (each side the rows of a pair's model; a
baseline in several pairs has its rows in each). A comparison of ratio and mean metrics
needs, for each label and pair of models,
only what merges by addition: the counts of the pairs' (state a, state b) and, for means, the
tallies of each side's values and of the differences, each by side a's group. So the two runs
are read a part at a time (:meth:`~itemscore.engine._table.RunTable.parts`); each row goes
to one of ``k`` buckets by a hash of its id (a grace hash join), written to a temporary
folder when the runs are larger than :data:`BUCKET_ROWS`; then each bucket of side a is
joined with the same bucket of side b, and its statistics added to the others'. Memory holds
one bucket, whatever the size of the runs, and the numbers are the same to the bit however
many buckets there were: counts and tallies do not depend on the order they were added in.

Runs with attempts, clusters on the baseline's side or a metric with its own aggregate pair
in memory (:mod:`._pairing`).
"""

from __future__ import annotations

import heapq
import math
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np
import pyarrow as pa

from .._hashing import text_hashes
from ..engine._table import FINGERPRINT
from ..engine._tallies import codes_in
from ..stats._tally import Tally, TallyRows
from ._pairing import align_ids, different_items, differing_items
from ._ratio_mean import mean_of_tallies, ratio_of_counts
from ._record import Comparison

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from .._result import RunResult
    from ..engine._table import RunTable

#: Rows of the larger run a bucket holds (about): runs up to this size are joined at once.
BUCKET_ROWS = 1 << 19

_I64 = np.int64


@attrs.define(eq=False)
class PairStats:
    """What one label's comparison of one pair of models needs, by side a's group.

    ``states[g]``: the paired rows of group code ``g`` counted by ``4 * state_a + state_b``
    (codes 0 ok, 1 fail, 2 skip, 3 error). The tallies (means only) hold the rows where both
    sides are scored: their values on each side and their differences ``b - a``, keyed by
    group code. Group code 0 is the items without a group.
    """

    states: dict[int, NDArray[np.int64]] = attrs.field(factory=dict)
    rows: list[TallyRows] = attrs.field(factory=lambda: [TallyRows() for _ in range(3)])

    def add(
        self,
        groups: NDArray[np.int64],
        codes_a: NDArray[np.int8],
        codes_b: NDArray[np.int8],
        values: tuple[NDArray[np.float64], NDArray[np.float64]] | None,
    ) -> None:
        """Count the pairs of one bucket (``values``: each side's, for a mean)."""
        cells = codes_a.astype(_I64) * 4 + codes_b
        for group in np.unique(groups).tolist():
            found = np.bincount(cells[groups == group], minlength=16)
            self.states[group] = self.states.get(group, 0) + found
        if values is None:
            return
        scored = (codes_a < 2) & (codes_b < 2)
        keys = groups[scored]
        a, b = values[0][scored], values[1][scored]
        for rows, column in zip(self.rows, (a, b, b - a)):
            rows.add(keys, column)

    def cells(self, group: int | None) -> NDArray[np.int64]:
        """The 4-by-4 counts of (state a, state b) of a group (``None``: all)."""
        total = np.zeros(16, _I64)
        for g, found in self.states.items():
            if group is None or g == group:
                total += found
        return total.reshape(4, 4)

    def tallies(self, group: int | None) -> tuple[Tally, Tally, Tally]:
        """Side a's values, side b's and the differences, of a group (``None``: all)."""
        out = []
        for rows in self.rows:
            keys, values, counts = rows.summed()
            keep = np.ones(len(keys), bool) if group is None else keys == group
            out.append(Tally.summed(values[keep], counts[keep]))  # the groups' rows summed
        return out[0], out[1], out[2]


@attrs.define(eq=False)
class Joined:
    """Two runs joined: the statistics of each (label, pair of models), and what did not pair."""

    #: ``stats[(label index, pair index)]``.
    stats: dict[tuple[int, int], PairStats]
    #: Per pair of models: ids only one side has.
    n_only: list[int]
    #: Per pair of models: ids both sides have.
    n_matched: list[int]
    #: The group names by code (``groups[0]`` is ``None``).
    groups: list[str | None]


def join(
    sides: tuple[RunResult, RunResult],
    pairs: Sequence[tuple[str | None, str | None]],
    several: tuple[bool, bool],
    columns: Sequence[tuple[str, str, bool]],
    *,
    check_items: bool,
) -> Joined:
    """Pair two runs by id (and model), a bucket at a time, and count what each label needs.

    Args:
        sides: The baseline run and the candidate run.
        pairs: The models paired (baseline's, candidate's); one pair when each run has one
            model (``several`` False on both sides).
        several: Whether each run has several models (its rows are then its pairs' models').
        columns: Per label compared: its score column on each side, and whether it is a mean
            (its values are tallied).
        check_items: Refuse pairs whose items differ (their content fingerprints).

    Raises:
        ConfigError: some pairs hold different items (``check_items``).
    """
    tables = (sides[0].table, sides[1].table)
    # A model's rows are in every pair it is in: as many copies as its most frequent model's.
    copies = [
        max(Counter(pair[side] for pair in pairs).values()) if several[side] else 1
        for side in (0, 1)
    ]
    k = max(1, math.ceil(max(len(tables[0]) * copies[0], len(tables[1]) * copies[1]) / BUCKET_ROWS))
    with tempfile.TemporaryDirectory(prefix="itemscore-compare-") as folder:
        buckets = []
        for side, table in enumerate(tables):
            labels = [str(column[side]) for column in columns]
            models = [pair[side] for pair in pairs]
            held = _Buckets(k, Path(folder) / f"side-{side}" if k > 1 else None)
            for part in _rows(table, labels, models, several[side], side, check_items):
                held.add(part)
            buckets.append(held)
        groups: list[str | None] = [None]
        group_codes: dict[str | None, int] = {None: 0}
        stats = {(e, p): PairStats() for e in range(len(columns)) for p in range(len(pairs))}
        n_only, n_matched = [0] * len(pairs), [0] * len(pairs)
        differ: list[list[tuple[int, str]]] = [[] for _ in pairs]
        n_differ = 0
        for bucket in range(k):
            ta, tb = buckets[0].read(bucket), buckets[1].read(bucket)
            group = (
                codes_in(ta.column("group").combine_chunks(), groups, group_codes)
                if "group" in ta.schema.names
                else np.zeros(ta.num_rows, _I64)
            )
            pair_a, pair_b = _numbers(ta, "pair"), _numbers(tb, "pair")
            for p in range(len(pairs)):
                sa, sb = np.flatnonzero(pair_a == p), np.flatnonzero(pair_b == p)
                ids_a = ta.column("id").take(pa.array(sa, pa.int64())).combine_chunks()
                ids_b = tb.column("id").take(pa.array(sb, pa.int64())).combine_chunks()
                ia, ib, only = align_ids(ids_a, ids_b)
                n_only[p] += only
                n_matched[p] += ia.size
                ra, rb = sa[ia], sb[ib]
                if check_items:
                    bad = differing_items(
                        _numbers(ta, FINGERPRINT)[ra], _numbers(tb, FINGERPRINT)[rb]
                    )
                    if bad.size:
                        n_differ += int(bad.size)
                        rows = _numbers(ta, "row")[ra[bad]].tolist()
                        names = ids_a.take(pa.array(ia[bad], pa.int64())).to_pylist()
                        differ[p] = heapq.nsmallest(5 * len(pairs), [*differ[p], *zip(rows, names)])
                for e, (_, _, is_mean) in enumerate(columns):
                    codes = (_numbers(ta, f"s{e}")[ra], _numbers(tb, f"s{e}")[rb])
                    values = None
                    if is_mean:
                        values = (_numbers(ta, f"v{e}")[ra], _numbers(tb, f"v{e}")[rb])
                    stats[(e, p)].add(group[ra], *codes, values)
            del ta, tb
    if n_differ:
        raise different_items(n_differ, (name for smallest in differ for _, name in smallest))
    return Joined(stats, n_only, n_matched, groups)


def _numbers(table: pa.Table, name: str) -> NDArray[Any]:
    """A numeric column of a bucket as a numpy array (converted where it is used: one at a time)."""
    return np.asarray(table.column(name).to_numpy())


def _rows(
    table: RunTable,
    labels: Sequence[str],
    models: Sequence[str | None],
    several: bool,
    side: int,
    check_items: bool,
) -> Iterator[pa.Table]:
    """One side's rows a part at a time: id, pair, (side a: row, group), fingerprint, scores."""
    import pyarrow.compute as pc

    keys = ["id"]
    if several:
        keys.append("model")
    grouped = side == 0 and table.has("group")
    if grouped:
        keys.append("group")
    if check_items:
        keys.append(FINGERPRINT)
    unique = list(dict.fromkeys(labels))
    start = 0
    for found, scores in table.parts(unique, keys):
        n = len(found[0])
        columns: dict[str, Any] = {"id": found[0]}
        if side == 0:
            columns["row"] = np.arange(start, start + n, dtype=_I64)
        if grouped:
            columns["group"] = found[keys.index("group")]
        if check_items:
            columns[FINGERPRINT] = found[keys.index(FINGERPRINT)]
        for e, label in enumerate(labels):
            status, value = scores[unique.index(label)]
            columns[f"s{e}"] = pc.cast(status, pa.int8())
            columns[f"v{e}"] = value
        part = pa.table(columns)
        start += n
        if not several:
            yield part.add_column(0, "pair", pa.array(np.zeros(n, np.int32)))
            continue
        # A model's rows go to each pair it is in (the baseline of one run is in several).
        for index, model in enumerate(models):
            same = pc.is_null(found[1]) if model is None else pc.equal(found[1], model)
            rows = np.flatnonzero(pc.fill_null(same, False).to_numpy(zero_copy_only=False))
            pair = pa.array(np.full(rows.size, index, np.int32))
            yield part.take(pa.array(rows, pa.int64())).add_column(0, "pair", pair)


class _Buckets:
    """One side's rows by bucket: in memory (one bucket), or a file per bucket in ``folder``."""

    def __init__(self, k: int, folder: Path | None) -> None:
        self.k = k
        self.folder = folder
        self._held: list[pa.Table] = []
        self._writers: dict[int, Any] = {}
        self._schema: pa.Schema | None = None
        if folder is not None:
            folder.mkdir(parents=True)

    def add(self, part: pa.Table) -> None:
        self._schema = part.schema
        if self.folder is None:
            self._held.append(part)
            return
        bucket = text_hashes(part.column("id")) % np.uint64(self.k)
        order = np.argsort(bucket, kind="stable")
        ends = np.cumsum(np.bincount(bucket.astype(_I64), minlength=self.k)).tolist()
        ordered = part.take(pa.array(order, pa.int64()))
        begin = 0
        for index, end in enumerate(ends):
            if end > begin:
                writer = self._writers.get(index)
                if writer is None:
                    writer = self._writers[index] = pa.ipc.new_stream(
                        str(self.folder / f"{index:05d}.arrows"),
                        part.schema,
                        options=pa.ipc.IpcWriteOptions(compression="lz4"),
                    )
                writer.write_table(ordered.slice(begin, end - begin))
            begin = end

    def read(self, index: int) -> pa.Table:
        """The rows of bucket ``index`` (an empty table when none went there)."""
        if self.folder is None:
            return pa.concat_tables(self._held) if self._held else _empty(self._schema)
        writer = self._writers.pop(index, None)
        if writer is None:
            return _empty(self._schema)
        writer.close()
        path = self.folder / f"{index:05d}.arrows"
        with pa.ipc.open_stream(str(path)) as reader:
            found = reader.read_all()
        path.unlink()
        return found


def _empty(schema: pa.Schema | None) -> pa.Table:
    assert schema is not None  # every side yields a part, if an empty one
    return schema.empty_table()


def comparison_of(
    stats: PairStats,
    group: int | None,
    common: dict[str, Any],
    *,
    n_only: int,
    ratio: bool,
    auto: bool,
    bounds: tuple[float, float] | None,
) -> Comparison:
    """The comparison of one label and pair of models (of a group, or all: ``None``).

    ``common``: the fields every comparison of the pair has (key, metric, models, confidence,
    direction). ``n_only``: ids only one side has (counted as unpaired by the headline).
    """
    cells = stats.cells(group)
    n = int(cells[:2, :2].sum())
    fields: dict[str, Any] = {
        **common,
        "n_pairs": n,
        "n_unpaired": int(cells.sum()) - n + (n_only if group is None else 0),
    }
    if n == 0:
        return Comparison(**fields, method="none")
    level = float(common["confidence"])
    if ratio:
        both, only_a, only_b, neither = cells[:2, :2].ravel().tolist()
        found = ratio_of_counts(both, only_a, only_b, neither, level, auto)
    else:
        found = mean_of_tallies(*stats.tallies(group), level, bounds)
    return Comparison(**fields, **found)
