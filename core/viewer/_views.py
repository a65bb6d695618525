"""Two views across verdicts: items that changed between two runs, and models that disagree.

- :func:`changed_items`: two runs' items paired by id (and model and attempt, see
  :func:`pairing`); those whose state or value for one metric label differs, in the first
  run's order, split by how they changed (``ok→fail``, ``fail→ok``, anything else).
- :func:`disagreements`: in a run with several models, the questions (an id, and an attempt
  when there are attempts) that the models answered with different states for one metric
  label, in the run's order.

Both read only the key columns and the one label's states and values (a row group at a time,
then kept by the run's :class:`~._query.ItemIndex`), pair them with Arrow's hash join and
group-by, and keep their last answers, so that paging reads nothing again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..display._text import printable
from ._query import ItemIndex

__all__ = [
    "CHANGES",
    "Changed",
    "Disagreement",
    "Question",
    "Refused",
    "changed_items",
    "disagreements",
    "pairing",
    "questions_at",
]

#: The kinds of change the changed view can show alone (``""``: every change).
CHANGES: tuple[str, ...] = ("ok-fail", "fail-ok", "other")
#: Answers kept for paging.
KEEP = 8
_NO_MODEL = "\x00"  # nulls never join: an item without a model joins on this instead


class Refused(ValueError):
    """Raised when two runs (or a run) cannot give the view asked for; says why and what to do."""


@attrs.frozen(kw_only=True)
class Changed:
    """Items whose verdict changed between two runs, for one metric label."""

    #: How the items were paired: ``("id",)``, or ``("model", "id")``.
    keys: tuple[str, ...]
    #: Items of the first run with a partner in the second.
    shared: int
    #: Items of each run without a partner.
    only_a: int
    only_b: int
    #: How many changed, by kind (:data:`CHANGES`).
    counts: dict[str, int]
    #: ``(position in a, position in b)`` of every changed item of the chosen kind, in a's order.
    pairs: np.ndarray[Any, np.dtype[np.int64]]


@attrs.frozen(kw_only=True)
class Question:
    """One question the models disagree on: its id, attempt, and each model's item."""

    #: The item id.
    id: str
    #: The attempt, when the run has attempts.
    attempt: int | None
    #: Model name -> the position of its item.
    positions: dict[str, int]


@attrs.frozen(kw_only=True)
class Disagreement:
    """The questions a run's models answered with different states, for one metric label."""

    #: Questions that two models or more answered.
    compared: int
    #: Those on which the states differ, in the run's order (their first item's).
    questions: pa.Table
    #: Model name -> in how many of them it is ``ok``.
    ok_by_model: dict[str, int]


class _Memo:
    """The last few answers, each kept with the loaded runs it was computed from."""

    def __init__(self) -> None:
        self._kept: OrderedDict[tuple[Any, ...], tuple[tuple[ItemIndex, ...], Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...], indexes: tuple[ItemIndex, ...]) -> Any:
        with self._lock:
            found = self._kept.get(key)
            if found is None or any(a is not b for a, b in zip(found[0], indexes)):
                return None
            self._kept.move_to_end(key)
            return found[1]

    def put(self, key: tuple[Any, ...], indexes: tuple[ItemIndex, ...], value: Any) -> None:
        with self._lock:
            self._kept[key] = (indexes, value)
            while len(self._kept) > KEEP:
                self._kept.popitem(last=False)


_changed = _Memo()
_disagree = _Memo()


def _keys_table(index: ItemIndex, model: str | None) -> pa.Table:
    """Every item's id, model (nulls as a mark) and attempt (nulls as -1), and its position."""
    columns = index.store.columns(["id", "model", "attempt"])
    n = index.n
    ids = columns["id"]
    models = columns.get("model", pa.chunked_array([pa.nulls(n, pa.string())]))
    attempts = columns.get("attempt", pa.chunked_array([pa.nulls(n, pa.int64())]))
    table = pa.table(
        {
            "id": ids,
            "model": pc.fill_null(models.cast(pa.string()), _NO_MODEL),
            "attempt": pc.fill_null(attempts.cast(pa.int64()), -1),
            "pos": pa.array(np.arange(n, dtype=np.int64)),
        }
    )
    if model is not None:
        table = table.filter(pc.equal(table.column("model"), model))
    return table


def _model_names(table: pa.Table) -> list[str]:
    return sorted(m for m in pc.unique(table.column("model")).to_pylist() if m != _NO_MODEL)


def pairing(a: pa.Table, b: pa.Table, names: tuple[str, str]) -> tuple[str, ...]:
    """The columns two runs' items pair on: id, and model too when both have the same models.

    Runs of one model each (or none) pair by id, whatever their models' names.

    Raises:
        Refused: the runs have different models and one has several (choose one of each).
    """
    models_a, models_b = _model_names(a), _model_names(b)
    if len(models_a) <= 1 and len(models_b) <= 1:
        return ("id", "attempt")
    if models_a == models_b:
        return ("model", "id", "attempt")
    raise Refused(
        f"The runs have different models ({names[0]}: {', '.join(models_a) or 'none'}; "
        f"{names[1]}: {', '.join(models_b) or 'none'}), so their items cannot be paired "
        "by model: choose one model of each (model_a and model_b)."
    )


def _unique(table: pa.Table, keys: Sequence[str], name: str) -> None:
    """Refuse a run in which two items share the pairing keys (they would pair twice)."""
    counted = table.group_by(list(keys)).aggregate([("pos", "count")])
    twice = counted.filter(pc.greater(counted.column("pos_count"), 1))
    if twice.num_rows:
        row = twice.slice(0, 1).to_pylist()[0]
        model = "" if row.get("model") in (None, _NO_MODEL) else f" of model {row['model']!r}"
        raise Refused(
            f"{name} holds the item {printable(str(row['id']))!r}{model} "
            f"{row['pos_count']} times, so its items cannot be paired by id; give each "
            "item its own id (or an attempt number)."
        )


def changed_items(
    a: ItemIndex,
    b: ItemIndex,
    label: str,
    *,
    change: str = "",
    names: tuple[str, str] = ("a", "b"),
    models: tuple[str | None, str | None] = (None, None),
) -> Changed:
    """The items whose state or value for ``label`` differs between runs ``a`` and ``b``.

    ``change`` keeps one kind (:data:`CHANGES`); ``models`` restricts each run to one model
    (then the items pair by id).

    Raises:
        Refused: the runs cannot be paired (see :func:`pairing`), or share no item.
    """
    key = (id(a), id(b), label, models)
    found = _changed.get(key, (a, b))
    if found is None:
        found = _changed_all(a, b, label, names, models)
        _changed.put(key, (a, b), found)
    keys, shared, only_a, only_b, pa_, pb, kinds = found
    counts = {kind: int(np.count_nonzero(kinds == i)) for i, kind in enumerate(CHANGES)}
    chosen = kinds >= 0 if not change else kinds == CHANGES.index(change)
    return Changed(
        keys=keys,
        shared=shared,
        only_a=only_a,
        only_b=only_b,
        counts=counts,
        pairs=np.stack([pa_[chosen], pb[chosen]], axis=1),
    )


def _changed_all(
    a: ItemIndex,
    b: ItemIndex,
    label: str,
    names: tuple[str, str],
    models: tuple[str | None, str | None],
) -> tuple[Any, ...]:
    ta, tb = _keys_table(a, models[0]), _keys_table(b, models[1])
    if models[0] is not None or models[1] is not None:
        keys: tuple[str, ...] = ("id", "attempt")
    else:
        keys = pairing(ta, tb, names)
    _unique(ta, keys, names[0])
    _unique(tb, keys, names[1])
    joined = ta.select([*keys, "pos"]).join(
        tb.select([*keys, "pos"]).rename_columns([*keys, "pos_b"]), list(keys), join_type="inner"
    )
    pos_a = np.asarray(joined.column("pos").to_numpy(), dtype=np.int64)
    pos_b = np.asarray(joined.column("pos_b").to_numpy(), dtype=np.int64)
    order = np.argsort(pos_a, kind="stable")
    pos_a, pos_b = pos_a[order], pos_b[order]
    if not len(pos_a):
        raise Refused(
            f"{names[0]} and {names[1]} share no item (paired by {' and '.join(keys[:-1])}); "
            "choose two runs on the same items."
        )
    sa, sb = a.states(label)[pos_a], b.states(label)[pos_b]
    va, vb = a.values(label)[pos_a], b.values(label)[pos_b]
    same_value = (va == vb) | (np.isnan(va) & np.isnan(vb))
    changed = (sa != sb) | ~same_value
    kinds = np.full(len(pos_a), 2, dtype=np.int8)
    kinds[(sa == 0) & (sb == 1)] = 0
    kinds[(sa == 1) & (sb == 0)] = 1
    kinds[~changed] = -1
    shown_keys = tuple(k for k in keys if k != "attempt")
    return (
        shown_keys,
        len(pos_a),
        ta.num_rows - len(pos_a),
        tb.num_rows - len(pos_b),
        pos_a,
        pos_b,
        kinds,
    )


def disagreements(index: ItemIndex, label: str) -> Disagreement:
    """The questions whose states for ``label`` differ across the run's models.

    Raises:
        Refused: the run has fewer than two models.
    """
    found = _disagree.get((id(index), label), (index,))
    if found is not None:
        return found  # type: ignore[no-any-return]
    table = _keys_table(index, None)
    table = table.append_column("state", pa.array(index.states(label)))
    table = table.filter(pc.not_equal(table.column("model"), _NO_MODEL))
    if len(_model_names(table)) < 2:
        raise Refused("This run has fewer than two models; there is nothing to disagree on.")
    grouped = table.group_by(["id", "attempt"], use_threads=False).aggregate(
        [
            ("model", "count_distinct"),
            ("state", "min"),
            ("state", "max"),
            ("pos", "min"),
        ]
    )
    several = grouped.filter(pc.greater_equal(grouped.column("model_count_distinct"), 2))
    differ = several.filter(pc.not_equal(several.column("state_min"), several.column("state_max")))
    differ = differ.sort_by([("pos_min", "ascending")])
    rows = table.join(differ.select(["id", "attempt"]), ["id", "attempt"], join_type="inner")
    ok = rows.filter(pc.equal(rows.column("state"), 0))
    counted = ok.group_by("model").aggregate([("pos", "count")]).to_pylist()
    ok_by_model = dict.fromkeys(_model_names(table), 0)
    ok_by_model.update({r["model"]: r["pos_count"] for r in counted})
    answer = Disagreement(
        compared=several.num_rows,
        questions=differ.select(["id", "attempt", "pos_min"]),
        ok_by_model=ok_by_model,
    )
    _disagree.put((id(index), label), (index,), answer)
    return answer


def questions_at(index: ItemIndex, chosen: pa.Table) -> list[Question]:
    """The questions of ``chosen`` (``id``, ``attempt`` rows) with each model's position."""
    table = _keys_table(index, None)
    table = table.filter(pc.not_equal(table.column("model"), _NO_MODEL))
    rows = table.join(chosen.select(["id", "attempt"]), ["id", "attempt"], join_type="inner")
    by_key: dict[tuple[str, int], dict[str, int]] = {}
    for row in rows.sort_by("pos").to_pylist():
        by_key.setdefault((row["id"], row["attempt"]), {}).setdefault(row["model"], row["pos"])
    return [
        Question(
            id=q["id"],
            attempt=None if q["attempt"] == -1 else q["attempt"],
            positions=by_key.get((q["id"], q["attempt"]), {}),
        )
        for q in chosen.to_pylist()
    ]
