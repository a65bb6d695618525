"""The ``results_TIMESTAMP.json`` an lm-eval run writes beside its samples files.

The samples file never names the model, its task's configuration or the group the run ran the
task in; the results file written by the same run does. :mod:`itemscore.inputs.lm_eval` reads
the samples and asks this module for the model's name, the task's name and configuration, the
task's group and its weight in each of the group's values.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeGuard

from .._exceptions import InputError

_SAMPLES_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<stamp>\d{4}-\d\d-\d\dT[0-9.\-]+)\.jsonl$")


def _results_for(path: Path) -> dict[str, Any] | None:
    """The run's ``results_TIMESTAMP.json`` beside the samples file, when there is one."""
    found = _SAMPLES_NAME.match(path.name)
    candidates: list[Path] = []
    if found is not None:
        candidates.append(path.with_name(f"results_{found['stamp']}.json"))
    others = sorted(path.parent.glob("results_*.json"))
    if len(others) == 1:  # a renamed samples file next to its only results file
        candidates.append(others[0])
    for candidate in candidates:
        if candidate.is_file():
            return _read_results(candidate)
    return None


def _read_results(path: Path) -> dict[str, Any]:
    name = os.fspath(path)
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError.at(name, exc.lineno, exc.colno, f"not valid JSON ({exc.msg}).") from None
    except UnicodeDecodeError:
        raise InputError.at(name, None, None, "the file is not valid UTF-8.") from None
    if not isinstance(results, dict):
        raise InputError.at(name, 1, None, "an lm-eval results file holds one JSON object.")
    return results


def _model_name(results: Mapping[str, Any]) -> str | None:
    name = results.get("model_name")
    if isinstance(name, str) and name:
        return name
    config = results.get("config")
    args = config.get("model_args") if isinstance(config, dict) else None
    if isinstance(args, dict):
        for key in ("peft", "delta", "pretrained", "model", "path", "engine"):
            if isinstance(args.get(key), str):
                return str(args[key])
    elif isinstance(args, str):
        for part in args.split(","):
            key, _, value = part.partition("=")
            if key.strip() in ("pretrained", "model", "path", "engine") and value:
                return value.strip()
    if isinstance(config, dict) and isinstance(config.get("model"), str):
        return str(config["model"])
    return None


def _task_name(path: Path, results: Mapping[str, Any] | None) -> str:
    found = _SAMPLES_NAME.match(path.name)
    if found is not None:
        return found["task"]
    if results is not None:
        configs = results.get("configs")
        if isinstance(configs, dict) and len(configs) == 1:
            return str(next(iter(configs)))
    return path.stem.removeprefix("samples_")


def _task_config(results: Mapping[str, Any] | None, task: str) -> dict[str, Any]:
    if results is None:
        return {}
    configs = results.get("configs")
    config = configs.get(task) if isinstance(configs, dict) else None
    return config if isinstance(config, dict) else {}


def _task_group(results: Mapping[str, Any] | None, task: str) -> str | None:
    """The group the run ran ``task`` in (``group_subtasks`` of the results file)."""
    if results is None:
        return None
    groups = results.get("group_subtasks")
    if not isinstance(groups, dict):
        return None
    for group, tasks in groups.items():
        if isinstance(tasks, list) and task in tasks:
            return str(group)
    return None


def _group_weights(
    data: Mapping[str, Any] | None, task: str, group: str | None
) -> dict[str, float]:
    """``task``'s weight in each value of ``group`` it counts in, by metric key.

    lm-eval's group value is ``aggregate_subtask_metrics(values, sizes, weight_by_size)``
    over the group's leaf tasks that have the metric; the results file records the value, the
    tasks' values and sizes, not ``weight_by_size``: the weighting that gives the recorded
    value is taken, by size (lm-eval's default) when both do or neither does.
    """
    if data is None or group is None:
        return {}
    scores = data.get("results")
    groups = data.get("groups")
    recorded = groups.get(group) if isinstance(groups, dict) else None
    if not isinstance(recorded, dict) and isinstance(scores, dict):
        recorded = scores.get(group)
    if not isinstance(recorded, dict) or not isinstance(scores, dict):
        return {}
    leaves = _leaves(data.get("group_subtasks"), group)
    weights: dict[str, float] = {}
    for key, value in recorded.items():
        if "," not in key or "_stderr" in key or not _number(value):
            continue
        members = [(t, scores[t]) for t in leaves if isinstance(scores.get(t), dict)]
        values = [(t, row[key], _size(data, t, row)) for t, row in members if _number(row.get(key))]
        if task not in [t for t, _, _ in values] or any(n is None for _, _, n in values):
            continue
        sizes = [float(n or 0) for _, _, n in values]
        numbers = [float(v) for _, v, _ in values]
        equal = math.fsum(numbers) / len(numbers)
        by_size = math.fsum(v * n for v, n in zip(numbers, sizes)) / (math.fsum(sizes) or 1.0)
        size = sizes[[t for t, _, _ in values].index(task)]
        weights[key] = 1.0 if _close(equal, value) and not _close(by_size, value) else size
    return weights


def _leaves(subtasks: Any, group: str, seen: frozenset[str] = frozenset()) -> list[str]:
    """The leaf tasks of ``group`` (``group_subtasks`` lists subgroups as well as tasks)."""
    if not isinstance(subtasks, dict) or group in seen:
        return []
    out: list[str] = []
    for child in subtasks.get(group) or ():
        if isinstance(child, str) and isinstance(subtasks.get(child), list):
            out += _leaves(subtasks, child, seen | {group})
        elif isinstance(child, str):
            out.append(child)
    return out


def _size(data: Mapping[str, Any], task: str, row: Mapping[str, Any]) -> int | None:
    """How many documents lm-eval weighs ``task`` by: its ``sample_len``."""
    size = row.get("sample_len")
    if isinstance(size, int) and not isinstance(size, bool):
        return size
    counts = data.get("n-samples")
    count = counts.get(task) if isinstance(counts, dict) else None
    effective = count.get("effective") if isinstance(count, dict) else None
    return effective if isinstance(effective, int) and not isinstance(effective, bool) else None


def _number(value: Any) -> TypeGuard[int | float]:
    """A finite number, not a boolean."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))
