"""lm-evaluation-harness ``--log_samples`` files (``samples_TASK_TIMESTAMP.jsonl``) as items.

``lm_eval run ... --log_samples --output_path DIR`` writes, per model, ``DIR/MODEL/`` with one
``samples_TASK_TIMESTAMP.jsonl`` per task (one line per document and filter) and one
``results_TIMESTAMP.json`` for the run. The samples file is read line by line, never whole;
no line may be longer than ``max_sample_bytes``. How a line becomes an item (docs/harness-logs.md
has the reasons):

- ``id``: the line's ``doc_id`` (the document's position in the task's split), as text.
- ``model``: the samples file never names the model; the ``results_TIMESTAMP.json`` written
  beside it by the same run does (``model_name``; else the ``pretrained=`` of ``model_args``).
  Without such a file the model is left unnamed (one model) unless ``model=`` names it.
- ``input``: the prompt the model was given (the context of the first request).
- ``group``: the task's name; metadata ``task_group`` names the group the run ran it in and,
  when the task counts in that group's value for the metric the document's verdict stands for
  (``acc``/``acc_norm`` of a multiple_choice task, the task's first metric otherwise, with the
  line's filter), ``group_metric`` names that value (``"acc,none"``) and ``group_weight`` the
  task's weight in it: lm-eval's group value is the weighted mean of its tasks' values
  (``aggregate_subtask_metrics``), weighted by the task's size (its documents) or, for a group
  with ``weight_by_size: false``, equally. The results file does not say which: the weighting
  that gives the group's value as the file records it is taken (by size when both do).
  :func:`group_means` computes the group values of a run from these.
- generate_until tasks: ``output`` is, with ``output="answer"`` (the default), the response
  after the task's filters (``filtered_resps``: what lm-eval scored); with
  ``output="completion"`` the response as generated (``resps``). The other one is kept in
  metadata (``answer``, ``completion``). ``expected`` is the ``target``: lm-eval writes a list of
  valid answers as the text of a Python list (``"['8', 'eight']"``) and reads it back with
  ``ast.literal_eval``, as does this reader (on at most 64 KiB of text). A task with
  ``doc_to_choice`` compares the response to the choice the target indexes: ``expected`` is
  that choice's text. With ``repeats`` and ``output="completion"``, each of the document's
  responses is an attempt (``attempt`` 1, 2, ...); the filtered answer is one per document.
- multiple_choice tasks: lm-eval compares *indices*, so ``output`` is the index of the choice
  it picked (as text, ``"1"``): by the highest log-likelihood for ``acc`` (``pick="acc"``, the
  default) or per character for ``acc_norm`` (``pick="acc_norm"``); ``expected`` is the index
  of the right choice (or of each, for a list target). Metadata: ``choices`` (the texts),
  ``answer`` (the picked text), ``pick_acc``/``pick_acc_norm``, ``loglikelihoods``, ``target``.
- Metadata also: ``task``, ``filter``, ``doc_id``, ``doc`` (the data set row), ``target`` (as
  lm-eval wrote it), ``completions`` (with repeats) and lm-eval's
  per-document metric values (``exact_match``, ``acc``, ``acc_norm``...).
- ``rules="harness"`` adds ``harness_rule``: how lm-eval compared, with the task's metric
  options (see :mod:`itemscore.integrations.harness_rules`).

A task run with several filters writes each document once per filter; the reader keeps the
lines of one filter: ``filter=`` names it, by default the first one in the file.

A document that cannot be read (a target index out of range, a response of the wrong shape)
becomes a record with an ``error`` key (the reason, naming file, line and task) and whatever
could be read; the other documents are read on, as lm-eval scored them on. With
``rules="harness"`` an out-of-range multiple-choice target is read as lm-eval read it: no
choice is right.

Only the generate_until and multiple_choice output types give text to score; a file of another
type (loglikelihood, loglikelihood_rolling) is an error that says so.
"""

from __future__ import annotations

import ast
import math
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, Literal, Protocol

from .._exceptions import ConfigError, InputError, did_you_mean, one_of
from .._records import ItemResult, Measurement
from ._limits import LITERAL_CHARS, MAX_SAMPLE_BYTES, check_choice, check_limits
from ._lines import json_lines
from ._lm_eval_results import (
    _group_weights,
    _model_name,
    _number,
    _results_for,
    _task_config,
    _task_group,
    _task_name,
)
from ._source import escape_name, find_lone_surrogate, show, surrogate_error, surrogate_offset

__all__ = ["group_means", "read_lm_eval"]

_OUTPUTS = ("answer", "completion")
_PICKS = ("acc", "acc_norm")
_RULES = ("itemscore", "harness")
# samples_<task>_<timestamp>.jsonl; task names may hold underscores, timestamps never do.
_REQUIRED = ("doc_id", "arguments", "resps", "filtered_resps", "target")
#: lm-eval's exact_match options that change its comparison (all default to off there).
_EXACT_OPTIONS = ("regexes_to_ignore", "ignore_case", "ignore_punctuation", "ignore_numbers")


def read_lm_eval(
    path: str | os.PathLike[str],
    *,
    output: Literal["answer", "completion"] = "answer",
    filter: str | None = None,
    model: str | None = None,
    pick: Literal["acc", "acc_norm"] = "acc",
    rules: Literal["itemscore", "harness"] = "itemscore",
    max_sample_bytes: int = MAX_SAMPLE_BYTES,
) -> Iterator[dict[str, Any]]:
    """Read an lm-evaluation-harness samples file into item records, line by line.

    The options are checked, and the results file beside the samples file read, before this
    returns; the samples are read as the records are iterated (see the module docstring).

    Args:
        path: A ``samples_TASK_TIMESTAMP.jsonl`` file written with ``--log_samples``.
        output: ``"answer"``: the filtered response; ``"completion"``: the raw one.
        filter: The filter whose lines to read; ``None``: the first in the file.
        model: The model's name; ``None``: read from the run's ``results_*.json``.
        pick: multiple_choice: the pick of ``acc`` (highest log-likelihood) or of ``acc_norm``
            (highest log-likelihood per character).
        rules: ``"harness"``: add each document's ``harness_rule`` (how lm-eval compared).
        max_sample_bytes: Longest line taken.

    Returns:
        An iterator of dicts, one per document (per attempt with repeats), keyed by item role
        (``id``, ``model``, ``input``, ``output``, ``expected``, ``group``, ``attempt``) and by
        metadata name.

    Raises:
        ConfigError: a bad option, or a ``filter`` the file does not hold (when the file has
            been read to its end).
        InputError: the file, or the results file beside it, is not what lm-eval writes; the
            message names the file, line and task.
        OSError: the file cannot be read.
    """
    check_choice("output", output, _OUTPUTS)
    check_choice("pick", pick, _PICKS)
    check_choice("rules", rules, _RULES)
    if rules == "harness" and output == "completion":
        raise ConfigError(
            "rules='harness' compares what lm-eval compared, the filtered answer; drop "
            "output='completion', or use rules='itemscore'."
        )
    max_bytes, _ = check_limits(max_sample_bytes)
    path = Path(path)
    name = os.fspath(path)
    results = _results_for(path)
    task = _task_name(path, results)
    config = _task_config(results, task)
    if model is None and results is not None:
        model = _model_name(results)
    raw = path.open("rb")
    context = _Context(
        name=name,
        task=task,
        model=model,
        output=output,
        pick=pick,
        rules=rules,
        config=config,
        task_group=_task_group(results, task),
    )
    context.group_weights = _group_weights(results, task, context.task_group)
    return _records(raw, context, filter, max_bytes)


class _Context:
    """What every document of one samples file shares."""

    def __init__(
        self,
        *,
        name: str,
        task: str,
        model: str | None,
        output: str,
        pick: str,
        rules: str,
        config: Mapping[str, Any],
        task_group: str | None,
    ) -> None:
        self.name, self.task, self.model = name, task, model
        self.output, self.pick, self.rules = output, pick, rules
        self.task_group = task_group
        delimiter = config.get("target_delimiter", " ")
        self.delimiter = delimiter if isinstance(delimiter, str) else " "
        output_type = config.get("output_type")
        self.output_type = output_type if isinstance(output_type, str) else None
        self.doc_to_choice = config.get("doc_to_choice") is not None
        metrics = config.get("metric_list")
        self.metric_list = (
            [m for m in metrics if isinstance(m, dict)] if isinstance(metrics, list) else []
        )
        #: The task's weight in its group's value, by lm-eval metric key (``"acc,none"``).
        self.group_weights: dict[str, float] = {}

    def group_metric(self, row: Mapping[str, Any]) -> str | None:
        """The lm-eval metric key (``"acc,none"``) the document's verdict stands for."""
        if self.output_type == "multiple_choice":
            metric: Any = self.pick
        elif self.metric_list:
            metric = self.metric_list[0].get("metric")
        else:
            logged = row.get("metrics")
            metric = logged[0] if isinstance(logged, list) and logged else None
        if not isinstance(metric, str):
            return None
        return f"{metric},{row.get('filter')}"

    def error(self, line: int, message: str) -> InputError:
        """The error ``FILE:LINE: task 'T': message``."""
        return InputError.at(self.name, line, None, f"task {self.task!r}: {message}")


class _Unreadable:
    """A line that parsed, but holds what no report can write: its reason."""

    def __init__(self, reason: str, filter: Any) -> None:
        self.reason = reason
        self.filter = filter


class _BadDocument(Exception):
    """A document that cannot be read as lm-eval writes it (its record is an error)."""


class _TooLong(Exception):
    """A target text longer than the parser is given: the file's problem (exit 2)."""


def _records(
    raw: IO[bytes], context: _Context, filter: str | None, max_bytes: int
) -> Iterator[dict[str, Any]]:
    name = context.name
    filters: list[str] = []
    kept = 0
    with raw:
        for lineno, row in _lines(raw, name, context.task, max_bytes):
            if isinstance(row, dict):
                key = str(row.get("filter"))
            elif isinstance(row, _Unreadable):
                key = str(row.filter)
            else:  # no filter to tell by: the document is kept, as an error
                kept += 1
                yield from _document(row, lineno, context)
                continue
            if key not in filters:
                filters.append(key)
            if filter is None:
                filter = key
            if key != filter:
                continue
            kept += 1
            yield from _document(row, lineno, context)
    if not filters:
        raise InputError.at(name, 1, None, "the file is empty: it holds no lm-eval samples.")
    if kept == 0:
        raise ConfigError(
            f"{name}: no line of task {context.task!r} has the filter {filter!r}; the file's "
            f"filters are {one_of(filters)}.{did_you_mean(str(filter), filters)}"
        )


def _lines(raw: IO[bytes], name: str, task: str, max_bytes: int) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed line)`` per non-blank line; the first must be a samples line."""
    first = True
    holds = "An lm-eval samples file holds one JSON object per line."
    prefix = f"task {task!r}: "
    for lineno, line, row in json_lines(raw, name, max_bytes, holds=holds, prefix=prefix):
        found = find_lone_surrogate(row) if "\\u" in line else None
        if found is not None and first:
            raise surrogate_error(name, line, found, lineno)
        if found is not None:  # no report could write it as UTF-8: this document's error
            yield (
                lineno,
                _Unreadable(
                    f"the text {show(found)} holds a lone surrogate escape (\\ud800-\\udfff "
                    f"without its pair) at column {surrogate_offset(line) + 1}, which is not a "
                    "character and cannot be written as UTF-8.",
                    row.get("filter") if isinstance(row, dict) else None,
                ),
            )
            continue
        if first:  # the first line says whether this is a samples file at all
            first = False
            if not isinstance(row, dict):
                raise InputError.at(name, lineno, None, "each line must be a JSON object.")
            keys = ", ".join(escape_name(k) for k in list(row)[:20])
            for key in _REQUIRED:
                if key not in row:
                    raise InputError.at(
                        name,
                        lineno,
                        None,
                        f"the line has no {key!r}: this is not a samples file written by "
                        f"lm-eval's --log_samples (its keys: {keys or 'none'}).",
                    )
        yield lineno, row


def _document(row: Any, lineno: int, context: _Context) -> Iterator[dict[str, Any]]:
    base: dict[str, Any] = {
        "model": context.model,
        "group": context.task,
        "task": context.task,
    }
    if context.task_group is not None:
        base["task_group"] = context.task_group
    try:
        if isinstance(row, _Unreadable):
            raise _BadDocument(row.reason)
        if not isinstance(row, dict):
            raise _BadDocument(f"the line is {_kind(row)}, not a JSON object.")
        missing = [key for key in _REQUIRED if key not in row]
        if missing:
            raise _BadDocument(f"the line has no {', '.join(map(repr, missing))}.")
        doc_id = row["doc_id"]
        if isinstance(doc_id, bool) or not isinstance(doc_id, (int, str)) or doc_id == "":
            raise _BadDocument(f"'doc_id' must be a whole number, not {doc_id!r}.")
        base["id"] = str(doc_id)
        base.update({"filter": row.get("filter"), "doc_id": doc_id, "doc": row.get("doc")})
        key = context.group_metric(row) if context.group_weights else None
        if key is not None and key in context.group_weights:
            base.update({"group_metric": key, "group_weight": context.group_weights[key]})
        metrics = row.get("metrics")
        if isinstance(metrics, list):
            base.update({m: row[m] for m in metrics if isinstance(m, str) and m in row})
        yield from _read(row, base, lineno, context)
    except _TooLong as exc:
        raise context.error(lineno, str(exc)) from None
    except _BadDocument as exc:
        ident = base.get("id")
        if ident is None:
            ident = f"line {lineno}"
        yield base | {
            "id": ident,
            "output": None,
            "error": f"{context.name}:{lineno}: task {context.task!r}: {exc}",
        }


def _kind(value: Any) -> str:
    return "a list" if isinstance(value, list) else f"a {type(value).__name__}"


def _read(
    row: Mapping[str, Any], base: dict[str, Any], lineno: int, context: _Context
) -> Iterator[dict[str, Any]]:
    requests = _requests(row)
    prompt = requests[0][0]
    base["input"] = prompt if isinstance(prompt, str) else None
    filtered, resps = row["filtered_resps"], row["resps"]
    if not isinstance(filtered, list) or not isinstance(resps, list):
        raise _BadDocument("'resps' and 'filtered_resps' must be lists, one entry per request.")
    output_type = context.output_type
    if output_type is None:  # no results file: tell the type by the shape of the responses
        pairs = bool(filtered) and all(isinstance(r, list) and len(r) == 2 for r in filtered)
        output_type = "multiple_choice" if pairs and len(requests) > 1 else "generate_until"
    if output_type == "multiple_choice":
        yield base | _multiple_choice(row, requests, filtered, context)
    elif output_type == "generate_until":
        yield from _generated(row, base, resps, filtered, context)
    else:
        raise context.error(
            lineno,
            f"the task has output type {output_type!r}, which gives no text to score; "
            "itemscore reads generate_until and multiple_choice tasks.",
        )


def _generated(
    row: Mapping[str, Any],
    base: dict[str, Any],
    resps: list[Any],
    filtered: list[Any],
    context: _Context,
) -> Iterator[dict[str, Any]]:
    answer = _first_text(filtered, "filtered_resps")
    completions = resps[0] if resps and isinstance(resps[0], list) else resps
    if not completions or not all(isinstance(c, str) for c in completions):
        raise _BadDocument(f"'resps' must hold the generated texts, found {_show(resps)}.")
    target = row["target"]
    expected = [_indexed_choice(row, target)] if context.doc_to_choice else _targets(target)
    record = base | {
        "answer": answer,
        "completion": completions[0],
        "expected": expected,
        "target": target,
    }
    if context.rules == "harness":
        record["harness_rule"] = _exact_rule(row, context)
    if len(completions) > 1:
        record["completions"] = completions
    if context.output == "answer" or len(completions) == 1:
        record["output"] = answer if context.output == "answer" else completions[0]
        yield record
        return
    # repeats: each response is an attempt (the filter's answer is one per document)
    for attempt, completion in enumerate(completions, 1):
        yield record | {"output": completion, "completion": completion, "attempt": attempt}


def _exact_rule(row: Mapping[str, Any], context: _Context) -> dict[str, Any]:
    """lm-eval's comparison of a generate_until document, with the task's options."""
    logged = [m for m in row.get("metrics") or () if isinstance(m, str)]
    for entry in context.metric_list:
        if entry.get("metric") == "exact_match":
            options = {k: entry[k] for k in _EXACT_OPTIONS if k in entry}
            if isinstance(options.get("regexes_to_ignore"), str):
                options["regexes_to_ignore"] = [options["regexes_to_ignore"]]
            return {"harness": "lm-eval", "scorer": "exact_match", "kind": "exact_match"} | options
    if not context.metric_list and "exact_match" in logged:
        return {"harness": "lm-eval", "scorer": "exact_match", "kind": "exact_match"}
    # A metric itemscore does not redo (bleu, a custom function): lm-eval's value, as logged.
    metric = logged[0] if logged else None
    return {
        "harness": "lm-eval",
        "scorer": metric,
        "kind": "logged",
        "value": row.get(metric) if metric is not None else None,
    }


def _indexed_choice(row: Mapping[str, Any], target: Any) -> str:
    """The choice a doc_to_choice task's target indexes (lm-eval: ``choices[gold]``)."""
    doc = row.get("doc")
    index = _index(target)
    choices = None
    if isinstance(doc, dict):
        for key in ("choices", "choice", "options"):
            if isinstance(doc.get(key), list):
                choices = doc[key]
                break
    if index is None or choices is None:
        raise _BadDocument(
            f"the task has doc_to_choice, so 'target' ({_show(target)}) must index the "
            "document's choices, which the line does not hold as 'doc.choices'."
        )
    if not 0 <= index < len(choices):
        raise _BadDocument(
            f"the target index {index} is out of range: the document has {len(choices)} "
            "choices (lm-eval itself stops on such a document)."
        )
    return str(choices[index])


def _index(target: Any) -> int | None:
    if isinstance(target, int) and not isinstance(target, bool):
        return target
    if isinstance(target, str) and target.strip().lstrip("-").isdecimal() and len(target) < 20:
        return int(target.strip())
    return None


class _Run(Protocol):
    """What :func:`group_means` reads of a ``RunResult``."""

    @property
    def items(self) -> Iterable[ItemResult]: ...

    @property
    def by_model(self) -> Mapping[str | None, Mapping[str, Measurement]]: ...


def group_means(result: _Run, label: str) -> dict[str | None, dict[str, float | None]]:
    """lm-eval's group values of a run of lm-eval items: per model, per group, for ``label``.

    Each group's value is the mean of its tasks' values (the measurement's ``groups``, one per
    task) weighted by the items' ``group_weight``, as lm-eval aggregates a group; a task
    without a scored item leaves its group's value ``None``. Read the samples with
    ``rules="harness"`` and score ``accuracy`` or ``exact_match`` to get lm-eval's own values.

    Args:
        result: A run over items read from lm-eval samples files (a folder, or files of one
            run); each item's ``group`` is its task, as the reader gives it.
        label: The measurement's label (``"accuracy"``); its first reducer's value is used.

    Returns:
        ``{model: {group: value}}`` for every group whose tasks' items carry weights.

    Raises:
        KeyError: no measurement of ``label``.
        ValueError: an item's ``group`` is not its task (the items were mapped otherwise).
    """
    out: dict[str | None, dict[str, float | None]] = {}
    for model, measurements in result.by_model.items():
        found = [m for m in measurements.values() if m.metric == label]
        if not found:
            raise KeyError(
                f"The run has no measurement labelled {label!r}; its labels are "
                f"{one_of(dict.fromkeys(m.metric for m in measurements.values()))}."
            )
        measurement = found[0]
        weights: dict[str, dict[str, float]] = {}
        for item in result.items:
            group, weight = item.metadata.get("task_group"), item.metadata.get("group_weight")
            if item.model != model or not isinstance(group, str) or not _number(weight):
                continue
            task = item.metadata.get("task")
            if item.group != task:
                raise ValueError(
                    f"Item {item.id!r} has the group {item.group!r}, not its task {task!r}: "
                    "group_means needs the tasks as groups, as the lm-eval reader gives them "
                    "(leave the group role unmapped)."
                )
            weights.setdefault(group, {})[str(task)] = float(weight)
        values: dict[str, float | None] = {}
        for group, tasks in sorted(weights.items()):
            parts = [(measurement.groups.get(t), w) for t, w in tasks.items()]
            if any(m is None or m.value is None for m, _ in parts):
                values[group] = None
                continue
            total = math.fsum(w for _, w in parts)
            values[group] = (
                math.fsum(float(m.value) * w for m, w in parts if m and m.value is not None) / total
            )
        out[model] = values
    return out


def _requests(row: Mapping[str, Any]) -> list[tuple[Any, ...]]:
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
        raise _BadDocument("'arguments' must be an object or a list of each request's arguments.")
    if not requests:
        raise _BadDocument("'arguments' is empty: the document made no request.")
    return requests


def _arg_number(key: str) -> int:
    digits = key.rpartition("_")[2]
    return int(digits) if digits.isdecimal() and len(digits) < 10 else 0


def _first_text(values: list[Any], key: str) -> str:
    """The text of the first request's (first) response: ``["x"]`` or ``[["x"]]``."""
    value: Any = values
    while isinstance(value, list) and value:
        value = value[0]
    if not isinstance(value, str):
        raise _BadDocument(f"{key!r} must hold the generated text, found {_show(value)}.")
    return value


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _literal(text: str) -> Any:
    """A Python literal from lm-eval's text of a list, bounded before the parser sees it."""
    if len(text) > LITERAL_CHARS:
        raise _TooLong(
            f"'target' is a text of {len(text)} characters in brackets, more than the "
            f"{LITERAL_CHARS} itemscore parses as a Python list (parsing it could exhaust "
            "memory); lm-eval writes list targets far shorter. Check the file, or shorten the "
            "target."
        )
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _targets(target: Any) -> list[str] | None:
    """Valid answers from ``target``: lm-eval writes a list as its Python text."""
    if isinstance(target, str) and target.startswith("[") and target.endswith("]"):
        parsed = _literal(target)
        if isinstance(parsed, list) and all(isinstance(t, (str, int, float)) for t in parsed):
            target = parsed
    if isinstance(target, list):
        if not all(isinstance(t, (str, int, float)) for t in target):
            raise _BadDocument(f"'target' must be a text or a list of texts, not {_show(target)}.")
        return [str(t) for t in target]
    if target is None:
        return None
    if isinstance(target, (str, int, float)):
        return [str(target)]
    raise _BadDocument(f"'target' must be a text or a list of texts, not {_show(target)}.")


def _multiple_choice(
    row: Mapping[str, Any],
    requests: list[tuple[Any, ...]],
    filtered: list[Any],
    context: _Context,
) -> dict[str, Any]:
    choices = []
    delimiter = context.delimiter
    for args in requests:
        if len(args) < 2 or not isinstance(args[1], str):
            raise _BadDocument(
                "a multiple_choice request must hold a context and a continuation (the choice)."
            )
        choice = args[1]
        choices.append(choice[len(delimiter) :] if choice.startswith(delimiter) else choice)
    if len(filtered) != len(choices):
        raise _BadDocument(
            f"'filtered_resps' holds {len(filtered)} responses for {len(choices)} choices."
        )
    scores = []
    for response in filtered:
        value = response[0] if isinstance(response, list) and response else response
        try:
            number = float(value)
        except (TypeError, ValueError, OverflowError):
            raise _BadDocument(
                f"a multiple_choice response must be a log-likelihood, found {_show(response)}."
            ) from None
        if math.isnan(number):
            raise _BadDocument("a multiple_choice log-likelihood is NaN.")
        scores.append(number)
    best = max(range(len(scores)), key=scores.__getitem__)
    # acc_norm: log-likelihood per character of the choice (lm-eval's completion_len)
    lengths = [float(len(c)) or 1.0 for c in choices]
    best_norm = max(range(len(scores)), key=lambda i: scores[i] / lengths[i])
    pick = best if context.pick == "acc" else best_norm
    target = row["target"]
    indices = _choice_indices(target, choices)
    if indices is None:
        raise _BadDocument(
            f"the target {_show(target)} is neither the index of a choice nor a choice's text."
        )
    out_of_range = [i for i in indices if not 0 <= i < len(choices)]
    if out_of_range and context.rules != "harness":
        raise _BadDocument(
            f"the target index {out_of_range[0]} is out of range: the document has "
            f"{len(choices)} choices (lm-eval warned and scored it 0)."
        )
    record: dict[str, Any] = {
        "output": str(pick),
        "expected": [str(i) for i in indices],
        "answer": choices[pick],
        "choices": choices,
        "pick_acc": best,
        "pick_acc_norm": best_norm,
        "loglikelihoods": scores,
        "target": target,
    }
    if context.rules == "harness":
        metric = context.pick
        record["harness_rule"] = {"harness": "lm-eval", "scorer": metric, "kind": "choice_index"}
    return record


def _choice_indices(target: Any, choices: list[str]) -> list[int] | None:
    """The index or indices of the right choices (a choice's text becomes its index)."""
    if isinstance(target, str):
        text = target.strip()
        index = _index(text)
        if index is not None:
            return [index]
        if text.startswith("[") and text.endswith("]"):
            target = _literal(text)
        elif target in choices:
            return [choices.index(target)]
        else:
            return None
    values = target if isinstance(target, list) else [target]
    if not values or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return None
    return [int(v) for v in values]
