"""Results as pandas DataFrames.

A DataFrame handed to ``score()`` is read by :mod:`itemscore.inputs._dataframe`. pandas is
optional (the ``pandas`` extra): it is imported only when a DataFrame is asked for.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._exceptions import ConfigError
from ._serialize import json_safe
from .inputs._convert import ROLES

if TYPE_CHECKING:
    from ._result import RunResult

__all__ = [
    "EXTRA_MODES",
    "ITEM_COLUMNS",
    "MEASUREMENT_COLUMNS",
    "items_df",
    "measurements_df",
]


def _pandas(what: str) -> Any:
    try:
        import pandas
    except ImportError:
        from ._extras import install_hint

        raise ConfigError(
            f"{what} needs pandas, which is not installed. Install it with: "
            f"{install_hint('pandas')}"
        ) from None
    return pandas


_FIRST = ("id", "model", "group")
#: The item's fields in :func:`items_df`: every role, the breakdown keys first.
ITEM_FIELDS = (*_FIRST, *(role for role in ROLES if role not in _FIRST))
#: The columns of :func:`items_df` before the metadata columns.
ITEM_COLUMNS = (*ITEM_FIELDS, "metric", "status", "value", "reason")


def items_df(result: RunResult) -> Any:
    """One row per item and metric: the item's roles, the score, then metadata columns.

    ``expected`` is a list of answers (or ``None``); ``value`` is NaN for skip and error;
    metadata keys become columns after the fixed ones (a key named like a fixed column is
    prefixed ``metadata.``).
    """
    pandas = _pandas("RunResult.items_df()")
    labels = result.labels
    data: dict[str, list[Any]] = {column: [] for column in ITEM_COLUMNS}
    meta: dict[str, list[Any]] = {}
    row = 0
    for item in result.items:
        for label in labels or list(item.scores):
            score = item.scores.get(label)
            if score is None:
                continue
            for field in ITEM_FIELDS:
                value = getattr(item, field)
                data[field].append(list(value) if type(value) is tuple else value)
            data["metric"].append(label)
            data["status"].append(score.status.value)
            data["value"].append(score.value if score.value is not None else float("nan"))
            data["reason"].append(score.reason)
            for key, value in item.metadata.items():
                column = key if key not in data else f"metadata.{key}"
                values = meta.get(column)
                if values is None:
                    values = meta[column] = [None] * row
                values.append(value)
            row += 1
            for values in meta.values():
                if len(values) < row:
                    values.append(None)
    frame = pandas.DataFrame({**data, **meta})
    frame["value"] = frame["value"].astype("float64")
    return frame


#: What :func:`measurements_df` does with each row's ``extra``.
EXTRA_MODES = ("expand", "column", "drop")


def measurements_df(result: RunResult, extra: str = "expand") -> Any:
    """One row per measurement and group: the overall row has ``group`` ``None``.

    Rows come per model (``by_model``); with several models the numbers pooled over them
    (``measurements``) follow with ``model`` ``None``. The four state counts are the columns
    ``n_ok``, ``n_fail``, ``n_skip`` and ``n_error``; ``error`` is the aggregate's failure, if
    any. ``extra`` says where the secondary numbers go: ``"expand"``, one column
    ``extra.<name>`` each after the fixed columns (first seen first; NaN where a row has
    none), so that every cell is a scalar and the printed frame stays readable;
    ``"column"``, one column ``extra`` of dicts; ``"drop"``, nowhere.

    Raises:
        ConfigError: ``extra`` is not one of :data:`EXTRA_MODES`.
    """
    if extra not in EXTRA_MODES:
        raise ConfigError(
            f"measurements_df(extra={extra!r}): extra must be one of "
            f"{', '.join(map(repr, EXTRA_MODES))}; use 'expand' for one column per number."
        )
    pandas = _pandas("RunResult.measurements_df()")
    blocks = list(result.by_model.values())
    if len(blocks) > 1:
        blocks.append(result.measurements)
    records = []
    extras: list[Mapping[str, Any]] = []
    for block in blocks:
        for measurement in block.values():
            for group, m in ((None, measurement), *measurement.groups.items()):
                records.append(_measurement_row(m, group))
                extras.append(m.extra)
    columns = list(MEASUREMENT_COLUMNS)
    frame = pandas.DataFrame.from_records(records, columns=columns)
    for column in ("value", "ci_low", "ci_high"):
        frame[column] = frame[column].astype("float64")
    if extra == "column":
        frame["extra"] = pandas.Series([dict(e) for e in extras], dtype=object)
    elif extra == "expand":
        names = list(dict.fromkeys(name for e in extras for name in e))
        expanded = {f"extra.{name}": [_scalar(e.get(name)) for e in extras] for name in names}
        frame = pandas.concat([frame, pandas.DataFrame(expanded, index=frame.index)], axis=1)
    return frame


#: The columns of :func:`measurements_df` before the secondary numbers of ``extra``.
MEASUREMENT_COLUMNS = (
    "key",
    "suite",
    "metric",
    "model",
    "group",
    "value",
    "ci_low",
    "ci_high",
    "ci_method",
    "confidence",
    "n",
    "n_ok",
    "n_fail",
    "n_skip",
    "n_error",
    "higher_is_better",
    "reproducibility_class",
    "error",
)


def _measurement_row(m: Any, group: str | None) -> tuple[Any, ...]:
    """The cells of :data:`MEASUREMENT_COLUMNS`: the measurement's fields of those names."""
    named = {"group": group, **{f"n_{status.value}": n for status, n in m.counts.items()}}
    return tuple(named[c] if c in named else getattr(m, c) for c in MEASUREMENT_COLUMNS)


def _scalar(value: Any) -> Any:
    """A secondary number as one cell: NaN when missing, JSON text for a nested value."""
    if value is None:
        return float("nan")
    if isinstance(value, (Mapping, list, tuple, set)):
        return json.dumps(json_safe(value), sort_keys=True, default=str)
    return value
