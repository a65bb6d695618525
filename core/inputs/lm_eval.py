"""lm-evaluation-harness ``--log_samples`` files (``samples_TASK_TIMESTAMP.jsonl``) as items.

``lm_eval run ... --log_samples --output_path DIR`` writes, per model, ``DIR/MODEL/`` with one
``samples_TASK_TIMESTAMP.jsonl`` per task (one line per document and filter) and one
``results_TIMESTAMP.json`` for the run. How a line becomes an item:

- ``id``: the line's ``doc_id`` (the document's position in the task's split), as text.
- ``model``: the samples file never names the model; the ``results_TIMESTAMP.json`` written
  beside it by the same run does (``model_name``; else the ``pretrained=`` of ``model_args``).
  Without such a file the model is left unnamed (one model) unless ``model=`` names it.
- ``input``: the prompt the model was given (the context of the first request).
- ``output``: generate_until tasks: with ``output="answer"`` (the default) the response after
  the task's filters (``filtered_resps``: what lm-eval scored, e.g. the number a regex took out
  of a chain of thought); with ``output="completion"`` the response as generated (``resps``).
  The other one is kept in metadata either way (``answer``, ``completion``). multiple_choice
  tasks: the text of the choice with the highest log-likelihood, as lm-eval's ``acc`` picks it.
- ``expected``: generate_until: the ``target`` (lm-eval writes a list of valid answers as the
  text of a Python list, ``"['8', 'eight']"``, and reads it back with ``ast.literal_eval``; so
  does this reader). multiple_choice: ``target`` is the index of the right choice (written as
  text, ``"1"``), turned into that choice's text.
- ``group``: the task's name.
- Metadata: ``task``, ``filter``, ``doc_id``, ``doc`` (the data set row), ``answer``,
  ``completion``, lm-eval's per-document metric values (``exact_match``, ``acc``...), and for
  multiple choice ``choices``, ``loglikelihoods`` and ``target`` (the index).

A task run with several filters writes each document once per filter; the reader keeps the
lines of one filter: ``filter=`` names it, by default the first one in the file (the first in
the task's ``filter_list``).

Only the generate_until and multiple_choice output types give text to score; a file of another
type (loglikelihood, loglikelihood_rolling) is an error that says so.
"""

from __future__ import annotations

import ast
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from .._exceptions import ConfigError, InputError, did_you_mean, one_of
from ._source import find_lone_surrogate, surrogate_error, surrogate_offset

__all__ = ["read_lm_eval"]

_OUTPUTS = ("answer", "completion")
# samples_<task>_<timestamp>.jsonl; task names may hold underscores, timestamps never do.
_SAMPLES_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<stamp>\d{4}-\d\d-\d\dT[0-9.\-]+)\.jsonl$")


def read_lm_eval(
    path: str | os.PathLike[str],
    *,
    output: Literal["answer", "completion"] = "answer",
    filter: str | None = None,
    model: str | None = None,
) -> list[dict[str, Any]]:
    """Read an lm-evaluation-harness samples file into item records (see the module docstring).

    Args:
        path: A ``samples_TASK_TIMESTAMP.jsonl`` file written with ``--log_samples``.
        output: ``"answer"``: the filtered response; ``"completion"``: the raw one.
        filter: The filter whose lines to read; ``None``: the first in the file.
        model: The model's name; ``None``: read from the run's ``results_*.json``.

    Returns:
        One dict per document, keyed by item role (``id``, ``model``, ``input``, ``output``,
        ``expected``, ``group``) and by metadata name.

    Raises:
        ConfigError: a bad option, or a ``filter`` the file does not hold.
        InputError: the file, or the results file beside it, is not what lm-eval writes; the
            message names the file and line.
        OSError: the file cannot be read.
    """
    if output not in _OUTPUTS:
        raise ConfigError(
            f"`output` ({output!r}) must be one of {one_of(_OUTPUTS)}."
            f"{did_you_mean(str(output), _OUTPUTS)}"
        )
    path = Path(path)
    name = os.fspath(path)
    lines = _read_lines(path, name)
    if not lines:
        raise InputError.at(name, 1, None, "the file is empty: it holds no lm-eval samples.")
    filters = list(dict.fromkeys(str(row.get("filter")) for _, row in lines))
    if filter is None:
        filter = filters[0]
    elif filter not in filters:
        raise ConfigError(
            f"{name}: no line has the filter {filter!r}; the file's filters are "
            f"{one_of(filters)}.{did_you_mean(filter, filters)}"
        )
    results = _results_for(path)
    task = _task_name(path, results)
    config = _task_config(results, task)
    if model is None and results is not None:
        model = _model_name(results[1])
    delimiter = config.get("target_delimiter", " ")
    output_type = config.get("output_type")
    records = []
    for lineno, row in lines:
        if str(row.get("filter")) != filter:
            continue
        records.append(
            _record(
                row,
                _Where(name, lineno),
                task=task,
                model=model,
                output=output,
                output_type=output_type if isinstance(output_type, str) else None,
                delimiter=delimiter if isinstance(delimiter, str) else " ",
            )
        )
    return records


class _Where:
    """A line of the file, for messages."""

    def __init__(self, name: str, line: int) -> None:
        self.name = name
        self.line = line

    def error(self, message: str) -> InputError:
        return InputError.at(self.name, self.line, None, message)


def _read_lines(path: Path, name: str) -> list[tuple[int, dict[str, Any]]]:
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = data.count(b"\n", 0, exc.start) + 1
        raise InputError.at(name, at, None, "the file is not valid UTF-8.") from None
    rows = []
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError.at(
                name,
                lineno,
                exc.colno,
                f"not valid JSON ({exc.msg}). An lm-eval samples file holds one JSON object "
                "per line.",
            ) from None
        except RecursionError:
            raise InputError.at(name, lineno, None, "the line nests too deeply to read.") from None
        if not isinstance(row, dict):
            raise InputError.at(name, lineno, None, "each line must be a JSON object.")
        found = find_lone_surrogate(row) if "\\u" in line else None
        if found is not None:
            column = surrogate_offset(line) + 1
            where = f"{name}:{lineno}:{column}"
            raise surrogate_error(where, found, path=name, line=lineno, column=column)
        for key in ("doc_id", "arguments", "resps", "filtered_resps", "target"):
            if key not in row:
                raise InputError.at(
                    name,
                    lineno,
                    None,
                    f"the line has no {key!r}: this is not a samples file written by lm-eval's "
                    f"--log_samples (its keys: {', '.join(map(str, row)) or 'none'}).",
                )
        rows.append((lineno, row))
    return rows


def _results_for(path: Path) -> tuple[Path, dict[str, Any]] | None:
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
            return candidate, _read_results(candidate)
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


def _task_name(path: Path, results: tuple[Path, dict[str, Any]] | None) -> str:
    found = _SAMPLES_NAME.match(path.name)
    if found is not None:
        return found["task"]
    if results is not None:
        configs = results[1].get("configs")
        if isinstance(configs, dict) and len(configs) == 1:
            return str(next(iter(configs)))
    return path.stem.removeprefix("samples_")


def _task_config(results: tuple[Path, dict[str, Any]] | None, task: str) -> dict[str, Any]:
    if results is None:
        return {}
    configs = results[1].get("configs")
    config = configs.get(task) if isinstance(configs, dict) else None
    return config if isinstance(config, dict) else {}


def _requests(row: Mapping[str, Any], where: _Where) -> list[tuple[Any, ...]]:
    """The arguments of each request: ``{"gen_args_0": {"arg_0": ...}}`` or a list of lists."""
    arguments = row["arguments"]
    if isinstance(arguments, dict):
        requests = [
            tuple(args[key] for key in sorted(args, key=_arg_number))
            if isinstance(args, dict)
            else (args,)
            for _, args in sorted(arguments.items(), key=lambda kv: _arg_number(kv[0]))
        ]
    elif isinstance(arguments, list):
        requests = [tuple(args) if isinstance(args, list) else (args,) for args in arguments]
    else:
        raise where.error("'arguments' must be an object or a list of each request's arguments.")
    if not requests:
        raise where.error("'arguments' is empty: the document made no request.")
    return requests


def _arg_number(key: str) -> int:
    digits = key.rpartition("_")[2]
    return int(digits) if digits.isdigit() else 0


def _record(
    row: Mapping[str, Any],
    where: _Where,
    *,
    task: str,
    model: str | None,
    output: str,
    output_type: str | None,
    delimiter: str,
) -> dict[str, Any]:
    requests = _requests(row, where)
    prompt = requests[0][0]
    filtered, resps = row["filtered_resps"], row["resps"]
    if not isinstance(filtered, list) or not isinstance(resps, list):
        raise where.error("'resps' and 'filtered_resps' must be lists, one entry per request.")
    if output_type is None:  # no results file: tell the type by the shape of the responses
        pairs = bool(filtered) and all(isinstance(r, list) and len(r) == 2 for r in filtered)
        output_type = "multiple_choice" if pairs and len(requests) > 1 else "generate_until"
    doc_id = row["doc_id"]
    if isinstance(doc_id, bool) or not isinstance(doc_id, (int, str)):
        raise where.error(f"'doc_id' must be a whole number, not {doc_id!r}.")
    metrics = row.get("metrics")
    record: dict[str, Any] = {
        "id": str(doc_id),
        "model": model,
        "input": prompt if isinstance(prompt, str) else None,
        "group": task,
        "task": task,
        "filter": row.get("filter"),
        "doc_id": doc_id,
        "doc": row.get("doc"),
    }
    if isinstance(metrics, list):
        record.update({m: row[m] for m in metrics if isinstance(m, str) and m in row})
    if output_type == "multiple_choice":
        record.update(_multiple_choice(row, requests, filtered, where, delimiter))
    elif output_type == "generate_until":
        answer = _first_text(filtered, where, "filtered_resps")
        completion = _first_text(resps, where, "resps")
        record["output"] = answer if output == "answer" else completion
        record["answer"], record["completion"] = answer, completion
        record["expected"] = _targets(row["target"], where)
    else:
        raise where.error(
            f"the task {task!r} has output type {output_type!r}, which gives no text to score; "
            "itemscore reads generate_until and multiple_choice tasks."
        )
    return record


def _first_text(values: list[Any], where: _Where, key: str) -> str:
    """The text of the first request's (first) response: ``["x"]`` or ``[["x"]]``."""
    value: Any = values
    while isinstance(value, list) and value:
        value = value[0]
    if not isinstance(value, str):
        raise where.error(f"{key!r} must hold the generated text, found {value!r}.")
    return value


def _targets(target: Any, where: _Where) -> list[str] | None:
    """Valid answers from ``target``: lm-eval writes a list as its Python text."""
    if isinstance(target, str) and target.startswith("[") and target.endswith("]"):
        try:
            parsed = ast.literal_eval(target)
        except (ValueError, SyntaxError):
            parsed = None
        if isinstance(parsed, list) and all(isinstance(t, (str, int, float)) for t in parsed):
            target = parsed
    if isinstance(target, list):
        if not all(isinstance(t, (str, int, float)) for t in target):
            raise where.error(f"'target' must be a text or a list of texts, not {target!r}.")
        return [str(t) for t in target]
    if target is None:
        return None
    if isinstance(target, (str, int, float)):
        return [str(target)]
    raise where.error(f"'target' must be a text or a list of texts, not {target!r}.")


def _multiple_choice(
    row: Mapping[str, Any],
    requests: list[tuple[Any, ...]],
    filtered: list[Any],
    where: _Where,
    delimiter: str,
) -> dict[str, Any]:
    choices = []
    for args in requests:
        if len(args) < 2 or not isinstance(args[1], str):
            raise where.error(
                "a multiple_choice request must hold a context and a continuation (the choice)."
            )
        choice = args[1]
        choices.append(choice[len(delimiter) :] if choice.startswith(delimiter) else choice)
    if len(filtered) != len(choices):
        raise where.error(
            f"'filtered_resps' holds {len(filtered)} responses for {len(choices)} choices."
        )
    scores = []
    for response in filtered:
        value = response[0] if isinstance(response, list) and response else response
        try:
            scores.append(float(value))
        except (TypeError, ValueError):
            raise where.error(
                f"a multiple_choice response must be a log-likelihood, found {response!r}."
            ) from None
    best = max(range(len(scores)), key=scores.__getitem__)
    target = row["target"]
    indices = _choice_indices(target, choices, where)
    return {
        "output": choices[best],
        "expected": (
            [choices[i] for i in indices] if indices is not None else _targets(target, where)
        ),
        "choices": choices,
        "loglikelihoods": scores,
        "target": target,
    }


def _choice_indices(target: Any, choices: list[str], where: _Where) -> list[int] | None:
    """The index or indices of the right choices, or None when ``target`` is a choice's text."""
    if isinstance(target, str):
        text = target.strip()
        if text.isdigit():
            target = int(text)
        elif text.startswith("[") and text.endswith("]"):
            try:
                target = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                return None
        else:
            return None
    values = target if isinstance(target, list) else [target]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return None
    for value in values:
        if not 0 <= value < len(choices):
            raise where.error(
                f"the target index {value} is out of range: the document has {len(choices)} "
                "choices."
            )
    return [int(v) for v in values]
