"""Checks of a whole run that the command line and the Python API share.

Each looks at the items and the plan (or the result) as a whole and either raises an error
that says how to fix the run, or sends a warning with the fix to ``notice``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ._records import STATE_NAMES

if TYPE_CHECKING:
    from ._plan import PlannedMetric
    from ._records import ItemResult, Measurement
    from ._result import RunResult

__all__ = [
    "check_answer_keys",
    "check_ci_support",
    "check_groups",
    "compare_item_scores",
    "compare_measurements",
    "compare_settings",
    "likely_group_columns",
    "not_checked",
]

#: Where warnings go.
Notice = Callable[[str], None]

#: A group column has at most this many distinct values...
_MAX_GROUPS = 200
#: ...and values repeat: at most this share of the items has a value of its own.
_MAX_DISTINCT_SHARE = 0.5


def check_answer_keys(
    items: Sequence[ItemResult],
    planned: Iterable[PlannedMetric],
    *,
    source: str = "the items",
    column: str = "expected",
) -> None:
    """A run in which no item has an answer key cannot use a metric that needs one.

    Every such metric would skip every item: that is a missing column, not a result.

    Args:
        items: The run's items.
        planned: The configured metrics.
        source: How to name the items in the message (the data file).
        column: The column the answers were to be read from.

    Raises:
        InputError: no item has an answer key and at least one metric needs one.
    """
    if any(item.expected is not None for item in items):
        return
    needing = [p.label for p in planned if "expected" in p.metric.required_inputs]
    if needing:
        from .inputs._checks import answer_key_error  # the message the readers' checks give

        raise answer_key_error(source, column, needing)


def likely_group_columns(items: Sequence[ItemResult]) -> list[str]:
    """Metadata columns that look like a breakdown key: text that repeats, a few values."""
    if not items:
        return []
    values: dict[str, Counter[str]] = {}
    for item in items:
        for key, value in item.metadata.items():
            if isinstance(value, str) and value:
                values.setdefault(key, Counter())[value] += 1
    found = []
    for key, counts in values.items():
        distinct = len(counts)
        if 1 < distinct <= _MAX_GROUPS and distinct <= _MAX_DISTINCT_SHARE * len(items):
            found.append((sum(counts.values()), key))
    return [key for _, key in sorted(found, key=lambda pair: (-pair[0], pair[1]))]


def check_groups(items: Sequence[ItemResult], *, notice: Notice) -> None:
    """Warn when a breakdown by group was asked for but no item has a group."""
    if any(item.group is not None for item in items):
        return
    likely = likely_group_columns(items)
    if likely:
        hint = " or ".join(f"--map group={name}" for name in likely[:3])
        fix = f"Name the group column with {hint}."
    else:
        fix = "Name the group column with --map group=COLUMN."
    notice(f"Warning: --by-group shows no groups: no item has a `group`. {fix}")


def check_ci_support(result: RunResult, method: str, *, notice: Notice) -> None:
    """Warn about each measurement that could not use the interval method asked for."""
    seen: dict[str, str] = {}
    for measurements in result.by_model.values():
        for m in measurements.values():
            # auto names the method it took, with the reason: "jeffreys (auto: n = 23 < 40)".
            took = method == "auto" and "(auto:" in m.ci_method
            if m.ci_method != method and not took and m.value is not None and m.metric not in seen:
                seen[m.metric] = m.ci_method
    for label, used in seen.items():
        notice(
            f"Warning: {label!r} does not support the interval method {method!r}; "
            f"its interval uses {used!r}."
        )


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12)
    return bool(a == b)


def compare_item_scores(saved: RunResult, again: RunResult, *, shown: int = 5) -> list[str]:
    """One sentence per label whose saved per-item scores ``again`` does not reproduce.

    States and values are compared item by item (an altered items file whose measurements were
    left alone is found here); the first ``shown`` differing ids are named.
    """
    import numpy as np

    out: list[str] = []
    table_a, table_b = saved.table, again.table
    ids = table_a.key_column("id")  # Arrow text: only the ids named become Python strings
    for label in table_a.labels:
        if label not in table_b.scores:
            continue
        codes_a, codes_b = table_a.codes(label), table_b.codes(label)
        values_a, values_b = table_a.values(label), table_b.values(label)
        same_value = (values_a == values_b) | (np.isnan(values_a) & np.isnan(values_b))
        differ = np.flatnonzero((codes_a != codes_b) | ~same_value).tolist()
        if not differ:
            continue
        first = differ[0]
        examples = ", ".join(repr(ids[i].as_py()) for i in differ[:shown])
        more = ", ..." if len(differ) > shown else ""
        out.append(
            f"{label}: {len(differ)} item score{'s' if len(differ) != 1 else ''} "
            f"{'differ' if len(differ) != 1 else 'differs'} from the recomputation (items "
            f"{examples}{more}); item {ids[first].as_py()!r} is {STATE_NAMES[codes_a[first]]} "
            f"{_value(values_a[first])} in the file but recomputes to "
            f"{STATE_NAMES[codes_b[first]]} {_value(values_b[first])}."
        )
    return out


def _value(value: float) -> str:
    return "without a value" if math.isnan(value) else f"with value {float(value)!r}"


def compare_measurements(
    saved: RunResult, again: RunResult, document: Mapping[str, Any] | None = None
) -> list[str]:
    """One sentence per field of ``saved``'s measurements that ``again`` does not reproduce.

    Both copies results.json holds are compared: the top-level ``measurements`` (with several
    models, pooled over them) and every model's in ``by_model``. Every field of each is
    compared: value, interval, ``n``, counts, ``extra``, groups and derived measurements, and
    the names and kinds (label, model, interval method, aggregation...).

    Args:
        saved: The results as loaded.
        again: The same results recomputed from their items.
        document: The results file as parsed JSON: its measurements are compared as written,
            so that a field the loader does not read is named too. ``None``: ``saved``'s
            measurements in the form they are written.
    """
    from ._serialize import measurement_to_dict

    def written(measurements: Iterable[Measurement]) -> list[Any]:
        return [measurement_to_dict(m) for m in measurements]

    top = " pooled over the models" if len(saved.by_model) > 1 else " (top-level measurements)"
    sections: list[tuple[str, Any, Mapping[str, Measurement]]] = []
    if document is not None:
        sections.append((top, document.get("measurements"), again.measurements))
        for entry in document.get("by_model") or ():
            model = entry.get("model") if isinstance(entry, Mapping) else None
            who = f" for model {model!r}" if model is not None else ""
            ms = entry.get("measurements") if isinstance(entry, Mapping) else None
            sections.append((who, ms, again.by_model.get(model, {})))
    else:
        sections.append((top, written(saved.measurements.values()), again.measurements))
        for model, measurements in saved.by_model.items():
            who = f" for model {model!r}" if model is not None else ""
            sections.append((who, written(measurements.values()), again.by_model.get(model, {})))
    out: list[str] = []
    for who, measurements, recomputed in sections:
        if not isinstance(measurements, list):
            out.append(f"The measurements{who} are not a list in the file.")
            continue
        again_written = {key: measurement_to_dict(m) for key, m in recomputed.items()}
        seen = set()
        for m in measurements:
            key = m.get("key") if isinstance(m, Mapping) else None
            seen.add(key)
            if key not in again_written:
                out.append(f"{key}{who}: in the file, but not recomputed.")
                continue
            _walk(f"{key}{who}", "", m, again_written[key], out)
        out += [f"{key}{who}: recomputed, but missing from the file."
                for key in again_written if key not in seen]  # fmt: skip
    return out


def _walk(where: str, path: str, a: Any, b: Any, out: list[str]) -> None:
    """Compare a field of the file (``a``) with its recomputation (``b``), down to each number.

    A group or a derived measurement is named in ``where``, its fields in ``path``.
    """
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for key, value in a.items():
            if path == "" and key in ("groups", "derived") and isinstance(value, Mapping):
                kind = "group" if key == "groups" else "derived"
                other = b.get(key) or {}
                for name, sub in value.items():
                    if name not in other:
                        out.append(f"{where}: {kind} {name!r} is in the file, but not recomputed.")
                    else:
                        _walk(f"{where} {kind} {name!r}", "", sub, other[name], out)
                out += [f"{where}: {kind} {name!r} is recomputed, but missing from the file."
                        for name in other if name not in value]  # fmt: skip
                continue
            field = f"{path}.{key}" if path else str(key)
            if key not in b:
                out.append(f"{where}: `{field}` ({value!r}) is in the file, but no recomputation "
                           "gives it.")  # fmt: skip
            else:
                _walk(where, field, value, b[key], out)
        return
    if not _same(a, b):
        out.append(f"{where}: `{path}` is {a!r} in the file but recomputes to {b!r}.")


def not_checked(document: Mapping[str, Any] | None, *, data_checked: bool = False) -> list[str]:
    """The fields of a results document that ``verify`` does not recompute, by path.

    What the items cannot reproduce: when, where and how the run was made (``provenance``),
    the execution settings that change no number, and the versions of the metrics' packages.
    """
    if document is None:
        return ["provenance", "settings that change no number", "metric versions"]
    out: list[str] = []
    provenance = document.get("provenance")
    if isinstance(provenance, Mapping):
        for key in provenance:
            if key == "data" and data_checked:
                out.append("provenance.data (all but its sha256, checked against --data)")
            else:
                out.append(f"provenance.{key}")
    settings = document.get("settings")
    if isinstance(settings, Mapping):
        out += [f"settings.{key}" for key in settings if key not in _RESULT_SETTINGS]
    config = document.get("config")
    if isinstance(config, Mapping):
        # Its copies of the settings are checked against them (compare_settings).
        if "itemscore_version" in config:
            out.append("config.itemscore_version")
        for entry in config.get("metrics") or ():
            if isinstance(entry, Mapping) and ("version" in entry or "distribution" in entry):
                out += ["config.metrics[].distribution", "config.metrics[].version"]
                break
    known = {"schema", "version", "config", "settings", "provenance", "measurements",
             "by_model", "items"}  # fmt: skip
    out += [str(key) for key in document if key not in known]
    return out


def compare_settings(document: Mapping[str, Any] | None) -> list[str]:
    """One sentence per setting whose copy in ``config`` differs from ``settings``.

    results.json writes each setting twice; the recomputation reads ``settings``, so an edit of
    the other copy would go unseen.
    """
    if document is None:
        return []
    settings, config = document.get("settings"), document.get("config")
    if not isinstance(settings, Mapping) or not isinstance(config, Mapping):
        return []
    return [
        f"`config.{key}` is {config[key]!r} but `settings.{key}` is {value!r}: the file "
        "disagrees with itself (the recomputation used `settings`)."
        for key, value in settings.items()
        if key in config and not _same(config[key], value)
    ]


#: The settings the recomputation uses, and so checks: every number depends on them. The
#: others say how the run was executed (executor, workers, time limits) and change none.
_RESULT_SETTINGS = frozenset({"suite_id", "confidence", "ci_method", "seed", "reduce"})
