"""What a label is in each run: its measurements' kind, its metric, its range, its identity.

The kind of a label's measurements picks its test (:data:`Kind`); its configured metric is
needed to recompute an aggregate of its own; :func:`check_same_metrics` refuses two runs that
give one label to different metrics or options.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from .._exceptions import ConfigError, describe_exception
from .._metric import Metric
from .._records import Measurement

if TYPE_CHECKING:
    from .._result import RunResult
    from ._pairing import _Entry


Kind = Literal["ratio", "mean", "bootstrap"]


def _measurements_of(result: RunResult, label: str) -> list[Measurement]:
    return [m for ms in result.by_model.values() for m in ms.values() if m.metric == label]


def _kind_of(result: RunResult, other: RunResult, entry: _Entry) -> Kind:
    """The test of an entry's comparison, from how the measurements of both sides were made.

    A ratio on one side and a mean (of shares of right attempts) on the other compare as
    means.
    """
    kinds = set()
    sides = [(result, entry.key)]
    if entry.key_b is not None:  # runs with attempts: both sides' reductions count
        sides.append((other, entry.key_b))
    for side, key in sides:
        measured = _measurements_of(side, entry.label)
        # A result written before keys named reducers: the label's first.
        found = [m for m in measured if m.key == key] or measured[:1]
        kinds.add(found[0].aggregation if found else "custom")
    if kinds == {"ratio"}:
        return "ratio"
    if kinds <= {"ratio", "mean"}:
        return "mean"
    return "bootstrap"


def _metric_for(result: RunResult, label: str, *, required: bool) -> Metric | None:
    """The configured metric of ``label``: needed to resample a metric's own aggregate.

    Raises:
        ConfigError: ``required`` and the metric cannot be configured here (not installed).
    """
    for entry in result.config.get("metrics", []):
        if entry.get("label") != label:
            continue
        from .._plan import plan_metrics, saved_spec

        spec = saved_spec(entry)  # a damaged entry raises here, whatever `required` says
        try:
            planned = plan_metrics([spec])
        except Exception as exc:
            if not required:
                return None
            raise ConfigError(
                f"Comparing {label!r} needs its metric {entry['name']!r}, whose own aggregate is "
                f"recomputed on resampled items, but it cannot be configured here "
                f"({describe_exception(exc)}). Install the package that provides it, or leave "
                "the label out with `metrics=`."
            ) from exc
        metric = planned[0].metric
        metric.bind(label)
        return metric
    if required:
        raise ConfigError(
            f"The results name no metric for the label {label!r}, so its own aggregate cannot "
            "be recomputed on resampled items; leave the label out with `metrics=`."
        )
    return None


def score_range(result: RunResult, label: str) -> tuple[float, float] | None:
    """The range every scored value of ``label`` lies in, or ``None`` when none is known.

    [0, 1] for a right-or-wrong (ratio) metric; otherwise the metric's ``value_bounds``, when
    it is installed here and declares them.
    """
    kinds = {m.aggregation for m in _measurements_of(result, label)}
    if kinds == {"ratio"}:
        return 0.0, 1.0
    metric = _metric_for(result, label, required=False)
    bounds = None if metric is None else metric.value_bounds
    return None if bounds is None else (float(bounds[0]), float(bounds[1]))


def _metric_identity(entry: Mapping[str, Any]) -> dict[str, Any]:
    """``{"name", "options"}`` of a saved metric entry, every option's value spelled out.

    ``exact_match`` and ``exact_match:ignore_case=true`` are one metric: when the metric is
    installed its defaults fill the options not given, so only a real difference counts.
    """
    from .._options import check_options, option_infos
    from .._registry import default_registry
    from .._serialize import json_safe

    name = str(entry.get("name"))
    given = dict(entry.get("options") or {})
    options = given
    try:
        infos = option_infos(default_registry().get(name))
        checked = check_options(name, infos, given)
    except Exception:  # noqa: BLE001 - not installed here: the options as saved
        pass
    else:
        options = {n: checked.get(n, info.default) for n, info in infos.items()
                   if n in checked or not info.required}  # fmt: skip
    return {"name": name, "options": json_safe(options)}


def _what_differs(
    label: str, a: Mapping[str, Any], b: Mapping[str, Any], names: tuple[str, str]
) -> str:
    """``label`` is metric X in one run and Y in the other, or which options differ."""
    if a["name"] != b["name"]:
        return f"{label!r} is metric {a['name']!r} in {names[0]} but {b['name']!r} in {names[1]}"
    missing = object()
    options = [
        f"`{key}` is {_option_value(a['options'], key)} in {names[0]} and "
        f"{_option_value(b['options'], key)} in {names[1]}"
        for key in sorted(set(a["options"]) | set(b["options"]))
        if a["options"].get(key, missing) != b["options"].get(key, missing)
    ]
    return f"{label!r} is metric {a['name']!r} in both, but {', '.join(options)}"


def _option_value(options: Mapping[str, Any], key: str) -> str:
    return repr(options[key]) if key in options else "not set"


def check_same_metrics(
    result: RunResult,
    other: RunResult,
    labels: Sequence[str],
    *,
    names: tuple[str, str] = ("the baseline results", "the candidate results"),
) -> None:
    """Each of ``labels`` must name the same metric with the same options in both runs.

    Two runs may give one label to different metrics (``-m exact_match`` against
    ``-m includes@exact_match``) or options; their numbers then measure different things.
    The identity is read from each run's saved configuration (``config["metrics"]``); a label
    that one run does not configure is not checked here.

    Raises:
        MetricMismatchError: a label whose metric id or options differ, with both spelled out.
    """
    from .._exceptions import MetricMismatchError

    entries_a = {e.get("label"): e for e in result.metric_configs}
    entries_b = {e.get("label"): e for e in other.metric_configs}
    differ: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    for label in labels:
        if label not in entries_a or label not in entries_b:
            continue
        a, b = _metric_identity(entries_a[label]), _metric_identity(entries_b[label])
        if a != b:
            differ.append((label, a, b))
    if not differ:
        return
    what = "; ".join(_what_differs(label, a, b, names) for label, a, b in differ)
    raise MetricMismatchError(
        f"The two runs give {'a label' if len(differ) == 1 else 'labels'} to different "
        f"metrics or options: {what}. Their numbers measure different things and cannot be "
        "paired. Score both runs with the same metric and options under each label (or "
        "compare only the other labels, naming them with `--metric`/`metrics=`).",
        label=differ[0][0],
        baseline=differ[0][1],
        candidate=differ[0][2],
    )


def _higher_is_better(result: RunResult, label: str) -> bool:
    return next((m.higher_is_better for m in _measurements_of(result, label)), True)


def _labels(result: RunResult) -> list[str]:
    """The run's labels; for results that do not list them, its measurements' in order."""
    measured = (m.metric for ms in result.by_model.values() for m in ms.values())
    return list(result.labels) or list(dict.fromkeys(measured))
