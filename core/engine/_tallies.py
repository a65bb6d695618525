"""One label's scores tallied by model and group, a part at a time: statistics that merge.

What the default ratio and mean measurements need of a label — the four state counts and the
tally of the scored values (:class:`~itemscore.stats._tally.Tally`) for each (model, group) —
is built part by part (each file of a run's ``items.parquet/`` folder) and merged by adding
counts. The driver never holds the label's column, and the result is the same to the bit
however the run was cut into parts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np
import pyarrow as pa

from .._exceptions import describe_exception
from .._metric import MetricContext, _clipped, _method_for
from .._plan import PlannedMetric
from .._records import Measurement, Status
from .._reducers import REDUCER_EXTRA
from .._status import STATES
from ..stats._clusters import tally_macro
from ..stats._coverage import tally_receipt
from ..stats._intervals import names
from ..stats._mean import tally_mean
from ..stats._tally import Tally, TallyRows
from ._measurement import aggregation_of, common_fields, failed, macro_extra, made
from ._table import RunTable

__all__ = ["LabelTally", "TallySource", "codes_in", "measure_tallied", "tally_label"]

#: Row keys are ``model * _SPAN + group``.
_SPAN = 1 << 31


@attrs.frozen(eq=False)
class LabelTally:
    """A label's state counts and scored values by (model, group), merged over its parts."""

    #: The models in order of first appearance (``None``: items without one).
    models: tuple[str | None, ...]
    #: The groups; ``groups[0]`` is ``None`` (items without a group).
    groups: tuple[str | None, ...]
    #: The four state counts of each (model, group) that has items.
    states: dict[tuple[int, int], np.ndarray[Any, np.dtype[np.int64]]]
    #: The scored values as summed rows: key, value, count (see :func:`tally_rows`).
    keys: np.ndarray[Any, np.dtype[np.int64]]
    values: np.ndarray[Any, np.dtype[np.float64]]
    counts: np.ndarray[Any, np.dtype[np.int64]]
    #: Whether every scored value is a finite number (else the values are measured as such).
    finite: bool

    def state_counts(self, model: int | None, group: int | None) -> dict[Status, int]:
        """The items in each state of a model (``None``: all) and group (``None``: all)."""
        total = np.zeros(4, np.int64)
        for (m, g), found in self.states.items():
            if (model is None or m == model) and (group is None or g == group):
                total += found
        return {status: int(total[code]) for code, status in enumerate(STATES)}

    def tally(self, model: int | None, group: int | None) -> Tally:
        """The scored values of a model (``None``: all) and group (``None``: all)."""
        keep = np.ones(len(self.keys), bool)
        if model is not None:
            keep &= self.keys // _SPAN == model
        if group is not None:
            keep &= self.keys % _SPAN == group
        return Tally.summed(self.values[keep], self.counts[keep])

    def groups_of(self, model: int | None) -> list[tuple[str, int]]:
        """The named groups with items of a model (``None``: all), sorted by name."""
        codes = {g for (m, g) in self.states if g != 0 and (model is None or m == model)}
        return sorted((str(self.groups[g]), g) for g in codes)

    def outside(self, bounds: tuple[float, float]) -> bool:
        """Whether a scored value lies outside ``bounds``."""
        return bool(self.values.size) and (
            float(self.values.min()) < bounds[0] or float(self.values.max()) > bounds[1]
        )

    def partial_credit(self) -> bool:
        """Whether a scored value lies strictly between 0 and 1."""
        return bool(np.any((self.values > 0.0) & (self.values < 1.0)))


def tally_label(table: RunTable, label: str) -> LabelTally:
    """``label``'s :class:`LabelTally`, read from ``table`` a part at a time."""
    keys = [key for key in ("model", "group") if table.has(key)]
    models: list[str | None] = []
    groups: list[str | None] = [None]
    model_index: dict[str | None, int] = {}
    group_index: dict[str | None, int] = {None: 0}
    states: dict[tuple[int, int], np.ndarray[Any, np.dtype[np.int64]]] = {}
    rows = TallyRows()
    all_finite = True
    for columns, ((status, value),) in table.parts([label], keys):  # never the whole column
        n = len(status)
        found = dict(zip(keys, columns))
        codes = np.asarray(status.to_numpy(zero_copy_only=False))
        scored = codes <= 1
        if not found:  # no model and no group: every row has the one key 0
            model_index.setdefault(None, 0)
            models[:] = [None]
            key = np.zeros(n, np.int64)
            where_counts = [((0, 0), np.bincount(codes, minlength=4))]
        else:
            model = (
                codes_in(found["model"], models, model_index)
                if "model" in found
                else codes_in(pa.nulls(n, pa.string()), models, model_index)
            )
            group = codes_in(found["group"], groups, group_index) if "group" in found else 0
            key = model * _SPAN + group
            distinct, inverse = np.unique(key, return_inverse=True)
            by_key = np.bincount(inverse * 4 + codes, minlength=4 * len(distinct)).reshape(-1, 4)
            where_counts = [
                ((k // _SPAN, k % _SPAN), row) for k, row in zip(distinct.tolist(), by_key)
            ]
        for where, row in where_counts:
            states[where] = states.get(where, 0) + row
        values = np.asarray(value.to_numpy(zero_copy_only=False), np.float64)[scored]
        all_finite = all_finite and bool(np.isfinite(values).all())
        if not all_finite:
            values = np.nan_to_num(values)  # measured from the values themselves instead
        rows.add(key[scored], values)
    return LabelTally(tuple(models), tuple(groups), states, *rows.summed(), finite=all_finite)


def codes_in(
    column: pa.Array, names: list[str | None], index: dict[str | None, int]
) -> np.ndarray[Any, np.dtype[np.int64]]:
    """Each row's code in ``names``, new names appended in order of first appearance."""
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(column)
    entries: list[str | None] = [*encoded.dictionary.to_pylist(), None]
    positions = np.asarray(
        encoded.indices.fill_null(len(entries) - 1).to_numpy(zero_copy_only=False), np.int64
    )
    present, first = np.unique(positions, return_index=True)
    for entry in present[np.argsort(first)].tolist():
        index.setdefault(entries[entry], len(names))
        if len(names) < len(index):
            names.append(entries[entry])
    lookup = np.array([index.get(entry, -1) for entry in entries], np.int64)
    return lookup[positions]


@attrs.frozen
class TallySource:
    """What a measurement made from a label's tally is: its key, kind, bounds and reducer."""

    key: str
    #: ``ratio`` or ``mean``.
    kind: str
    #: The range of the values, for a mean's interval (``None``: none).
    bounds: tuple[float, float] | None
    #: The reducer named in ``extra`` (``None``: none).
    reducer: str | None


def measure_tallied(
    pm: PlannedMetric,
    tally: LabelTally,
    src: TallySource,
    base: MetricContext,
    wanted: Sequence[tuple[str | None, bool]],
) -> dict[tuple[str | None, bool], Measurement]:
    """The ratio or mean measurements of each (model, whole) of ``wanted``, from the tally.

    ``whole``: every model pooled, or the run's one model. What
    :func:`~itemscore.engine._measure.measure_all` makes of the label's rows, to the bit.
    """
    index = {name: code for code, name in enumerate(tally.models)}
    out: dict[tuple[str | None, bool], Measurement] = {}
    for model, whole in wanted:
        code = None if whole else index.get(model, -1)
        ctx = attrs.evolve(base, label=pm.label, model=model)
        out[(model, whole)] = _tallied(pm, src, tally, code, None, ctx)
    return out


def _tallied(
    pm: PlannedMetric,
    src: TallySource,
    tally: LabelTally,
    model: int | None,
    group: int | None,
    ctx: MetricContext,
) -> Measurement:
    """One measurement made from a label's tally (what ``_measure`` makes of its rows)."""
    from .. import aggregate

    kind, bounds = src.kind, src.bounds
    counts = tally.state_counts(model, group)
    metric = pm.metric
    common = common_fields(pm, src.key, kind, ctx, counts)
    named = {REDUCER_EXTRA.format(src.reducer): 1.0} if src.reducer is not None else {}
    by_group: dict[str, Measurement] = {}
    if group is None:
        for name, code in tally.groups_of(model):
            in_group = attrs.evolve(ctx, group=name)
            by_group[name] = _tallied(pm, src, tally, model, code, in_group)
    values = tally.tally(model, group) if kind == "mean" else None
    try:
        if values is None:
            method = _method_for(ctx.ci_method, names("ratio"), "wilson")
            ok, fail = counts[Status.OK], counts[Status.FAIL]
            estimate = aggregate.ratio(ok, ok + fail, method=method, confidence=ctx.confidence)
        else:
            method = _method_for(ctx.ci_method, names("mean"), "normal")
            estimate = tally_mean(values, method, ctx.confidence, bounds=bounds, seed=ctx.seed)
            estimate = _clipped(estimate, bounds)
        value = None if estimate.value is None else float(estimate.value)
    except Exception as exc:  # noqa: BLE001 - one failed aggregate spoils one measurement
        return failed(common, describe_exception(exc), named, by_group)
    extra = {k: float(v) for k, v in estimate.extra.items()} if estimate.extra else {}
    if aggregation_of(pm) == "mean" and values is not None:
        extra.update(tally_receipt(estimate, values, metric.value_bounds, ctx.seed))
    else:
        extra.update(aggregate.coverage_receipt(estimate, kind="ratio"))
    if by_group:
        groups = [code for _, code in tally.groups_of(model)]
        if values is None:
            shares = [_outcomes(tally.state_counts(model, g)) for g in groups]
            macro = tally_macro([t for t in shares if t.n], ctx.confidence, (0.0, 1.0))
        else:
            tallies = [tally.tally(model, g) for g in groups]
            macro = tally_macro([t for t in tallies if t.n], ctx.confidence, bounds)
        extra.update(macro_extra(macro))
    return made(common, estimate, value, extra, by_group, named, ctx.group)


def _outcomes(counts: Mapping[Status, int]) -> Tally:
    """Ok and fail as the values 1 and 0."""
    found = [(0.0, counts[Status.FAIL]), (1.0, counts[Status.OK])]
    kept = [(value, count) for value, count in found if count]
    return Tally(np.array([v for v, _ in kept]), np.array([c for _, c in kept], np.int64))
