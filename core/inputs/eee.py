"""Every Eval Ever (schema 0.3.0) instance-level files (``*_samples.jsonl``) as items.

An instance file holds one JSON line per sample and aggregate result; a sample scored by
several metrics appears once per metric, on consecutive lines (as itemscore's ``--report
eee`` writes it, and as the format asks). The reader reads it line by line, never whole, and
gives one item per sample:

- ``id``: ``sample_id``; ``model``: ``model_id``; ``input``: ``input.raw``; ``expected``:
  ``input.reference``; ``output``: the first of ``output.raw`` (none: a failed request).
- ``group``, ``cluster``, ``attempt``: from the line's ``metadata`` when it names them.
- Metadata: ``evaluation_id``, ``evaluation_name``, ``sample_hash``, ``choices``,
  ``input_tokens``/``output_tokens``/``total_tokens``, ``eee_error`` (the line's ``error``),
  the line's other ``metadata``, and ``eee_scores``: per ``evaluation_result_id``, the line's
  ``score``, ``is_correct`` and, for lines itemscore wrote, its ``status`` and ``reason``;
  ``harness_verdict``, the verdict of the harness rule itemscore wrote with the line. A
  ``metadata`` key that is one of the reader's own names (``error``, ``id``, ``choices``...)
  is kept as ``metadata.<key>``: the line's metadata is data, never an instruction.
- ``result=`` keeps only the lines of one ``evaluation_result_id``.
- ``rules="harness"`` adds each item's ``harness_rule`` (see
  :mod:`itemscore.integrations.harness_rules`), so that ``exact_match`` and ``accuracy`` give
  the verdicts the file records: the rule itemscore wrote
  (``metadata.itemscore_harness_rule``: the items were read from a harness log with
  ``rules="harness"``); none on a line itemscore wrote without one (itemscore's own
  comparison decided it); else, on a line of another tool, a ``logged`` rule holding the
  line's own verdict, ``evaluation.is_correct``. The lines of one sample that disagree on
  the rule make the item an error naming them (``result=`` picks one evaluation result).

Only the schema's own fields decide an item's state, and the reason names the file and line:
a line whose ``sample_hash`` does not match its input and reference (the sha256 itemscore
writes; other hashes are kept, not checked) or that lacks what the schema requires becomes a
record with an ``error`` key; so does a sample each of whose lines carries the schema's
``error`` (an error that ended the sample: ``FILE:LINE: <its text>``). The others are read on.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Literal

from .._exceptions import InputError
from ._convert import MAPPABLE
from ._limits import MAX_SAMPLE_BYTES, check_choice, check_limits
from ._lines import json_lines
from ._source import find_lone_surrogate, show

__all__ = ["read_eee", "sample_hash"]

_ROLE_METADATA = ("group", "cluster")
_OWN = (
    "itemscore_status",
    "itemscore_reason",
    "itemscore_metric",
    "itemscore_harness_rule",
    "itemscore_harness_verdict",
    "attempt",
)
_RULES = ("itemscore", "harness")
#: The metadata key of a harness rule (``itemscore.integrations.harness_rules.RULE_KEY``).
_RULE_KEY = "harness_rule"
#: The names this reader gives meaning to: a line's metadata key among them is renamed.
_RESERVED = frozenset(
    {
        *MAPPABLE,
        "error",
        "harness_rule",
        "harness_verdict",
        "evaluation_id",
        "evaluation_name",
        "sample_hash",
        "eee_scores",
        "eee_error",
        "input_tokens",
        "output_tokens",
        "total_tokens",
    }
)


def sample_hash(input_text: str, reference: Sequence[str]) -> str:
    """The instance's ``sample_hash``: sha256 of the input and the JSON list of answers."""
    payload = input_text + "\n" + json.dumps(list(reference), ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


def read_eee(
    path: str | os.PathLike[str],
    *,
    result: str | None = None,
    rules: Literal["itemscore", "harness"] = "itemscore",
    max_sample_bytes: int = MAX_SAMPLE_BYTES,
) -> Iterator[dict[str, Any]]:
    """Read an Every Eval Ever instance file into item records, line by line.

    Args:
        path: An instance-level JSONL file (schema 0.3.0).
        result: Keep only the lines of this ``evaluation_result_id``.
        rules: ``"harness"``: add each item's ``harness_rule``, the verdict the file records
            (see the module docstring).
        max_sample_bytes: Longest line taken.

    Returns:
        An iterator of dicts, one per sample, keyed by role and metadata name.

    Raises:
        ConfigError: a bad bound, or ``rules`` not one of ``"itemscore"``, ``"harness"``.
        InputError: the file is not an instance file (its first line says), or a line is not
            JSON or too long; the message names file and line.
        OSError: the file cannot be read.
    """
    check_choice("rules", rules, _RULES)
    max_bytes, _ = check_limits(max_sample_bytes)
    name = os.fspath(path)
    raw = Path(path).open("rb")  # noqa: SIM115 - opened now, to fail now; the generator closes it
    return _records(raw, name, result, rules == "harness", max_bytes)


def _records(
    raw: IO[bytes], name: str, result: str | None, harness: bool, max_bytes: int
) -> Iterator[dict[str, Any]]:
    current: dict[str, Any] | None = None
    key: tuple[Any, ...] | None = None
    # The schema's ``error`` of each line of the current sample (None: the line has none).
    ended: list[str | None] = []
    count = 0
    with raw:
        for lineno, line in _lines(raw, name, max_bytes):
            if result is not None and line.get("evaluation_result_id") != result:
                continue
            record = _record(line, name, lineno, harness)
            this = (record.get("model"), record["id"], record.get("attempt"))
            if current is not None and this == key and "error" not in record:
                current["eee_scores"].update(record["eee_scores"])
                ended.append(_ended(line, name, lineno))
                if harness and "error" not in current:
                    _agree(current, record, f"{name}:{lineno}")
                continue
            if current is not None:
                yield _closed(current, ended)
                count += 1
            current, key = record, this
            ended = [_ended(line, name, lineno)]
    if current is not None:
        yield _closed(current, ended)
        count += 1
    if count == 0:
        what = f" of evaluation_result_id {result!r}" if result is not None else ""
        raise InputError.at(name, None, None, f"the file holds no instance lines{what}.")


def _lines(raw: IO[bytes], name: str, max_bytes: int) -> Iterator[tuple[int, dict[str, Any]]]:
    holds = "An instance file holds one JSON object per line."
    for lineno, _, line in json_lines(raw, name, max_bytes, holds=holds):
        if not isinstance(line, dict) or (
            lineno == 1 and not {"sample_id", "evaluation_id", "input"} <= set(line)
        ):
            raise InputError.at(
                name,
                lineno,
                None,
                "this is not an Every Eval Ever instance file: each line is an object with "
                "schema_version, evaluation_id, sample_id, input and evaluation.",
            )
        yield lineno, line


def _ended(line: Mapping[str, Any], name: str, lineno: int) -> str | None:
    """The line's schema ``error`` as an item's reason (``FILE:LINE: text``), if it has one."""
    error = line.get("error")
    if not isinstance(error, str) or find_lone_surrogate(error) is not None:
        return None
    return f"{name}:{lineno}: {error}"


def _closed(record: dict[str, Any], ended: list[str | None]) -> dict[str, Any]:
    """The sample's record, an error when each of its lines carries the schema's ``error``.

    A sample scored by several metrics has one line per metric: one metric's error is that
    line's, while an error on every line is the sample's own (a request that ended in an
    error, a document the writer could not read).
    """
    if "error" in record or not ended or any(reason is None for reason in ended):
        return record
    return record | {"error": ended[0]}


def _agree(current: dict[str, Any], record: Mapping[str, Any], where: str) -> None:
    """Make ``current`` an error when ``record``, a further line of it, records another verdict."""
    mine, theirs = current.get(_RULE_KEY), record.get(_RULE_KEY)
    if mine == theirs:
        return
    named = [
        f"{r['scorer']!r} ({r['value']!r})"
        for r in (mine, theirs)
        if isinstance(r, Mapping) and r.get("kind") == "logged"
    ]
    if len(named) == 2:
        what = f"different verdicts (evaluation.is_correct): {named[0]} and {named[1]}"
    else:
        what = "different harness rules (metadata.itemscore_harness_rule)"
    current["error"] = (
        f"{where}: the lines of sample {current['id']!r} record {what}; read one evaluation "
        "result with result=, or leave out rules='harness'."
    )


class _Bad(Exception):
    """A line that breaks the instance schema (its record is an error)."""


def _record(line: Mapping[str, Any], name: str, lineno: int, harness: bool) -> dict[str, Any]:
    try:
        found = find_lone_surrogate(line)
        if found is not None:
            raise _Bad(f"the text {show(found)} holds a lone surrogate escape.")
        record = _read(line)
        rule = _rule(line) if harness else None
        if rule is not None:
            record[_RULE_KEY] = rule
        return record
    except _Bad as exc:
        ident = line.get("sample_id")
        return {
            "id": ident
            if isinstance(ident, str) and ident and find_lone_surrogate(ident) is None
            else f"line {lineno}",
            "output": None,
            "model": line.get("model_id") if isinstance(line.get("model_id"), str) else None,
            "eee_scores": {},
            "error": f"{name}:{lineno}: {exc}",
        }


def _rule(line: Mapping[str, Any]) -> Any:
    """The line's harness rule: the one itemscore wrote, else the line's verdict, logged.

    None for a line itemscore wrote of an item that had no rule: itemscore's own comparison
    decided it, and decides it again.
    """
    metadata = line.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    written = metadata.get("itemscore_harness_rule")
    if written is None and "itemscore_metric" in metadata:
        return None
    if isinstance(written, str):
        try:
            rule = json.loads(written)
        except (ValueError, RecursionError):
            rule = None
        # Not an object: handed on as it is, so that the metrics say it is no rule.
        return rule if isinstance(rule, dict) else written
    evaluation = line.get("evaluation")
    value = evaluation.get("is_correct") if isinstance(evaluation, dict) else None
    scorer = line.get("evaluation_result_id", line.get("evaluation_name"))
    return {"harness": "eee", "scorer": str(scorer), "kind": "logged", "value": value}


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise _Bad(f"{what} must be a text, not {show(value)}.")
    return value


def _read(line: Mapping[str, Any]) -> dict[str, Any]:
    ident = _text(line.get("sample_id"), "'sample_id'")
    if not ident:
        raise _Bad("'sample_id' is empty.")
    model = _text(line.get("model_id"), "'model_id'")
    given = line.get("input")
    if not isinstance(given, dict):
        raise _Bad("'input' must be an object with 'raw' and 'reference'.")
    raw_input = _text(given.get("raw"), "'input.raw'")
    reference = given.get("reference")
    if not isinstance(reference, list) or not all(isinstance(r, str) for r in reference):
        raise _Bad("'input.reference' must be a list of texts.")
    output = line.get("output")
    texts: list[Any] = []
    if output is not None:
        if not isinstance(output, dict) or not isinstance(output.get("raw"), list):
            raise _Bad("'output' must be an object whose 'raw' is a list of texts.")
        texts = output["raw"]
        if not all(isinstance(t, str) for t in texts):
            raise _Bad("'output.raw' must be a list of texts.")
    recorded = line.get("sample_hash")
    if (
        isinstance(recorded, str)
        and len(recorded) == 64
        and recorded != sample_hash(raw_input, reference)
    ):
        raise _Bad(
            "'sample_hash' does not match the input and reference: the line was changed "
            "after it was written, or hashes another text."
        )
    evaluation = line.get("evaluation")
    if not isinstance(evaluation, dict):
        raise _Bad("'evaluation' must be an object with 'score' and 'is_correct'.")
    metadata = line.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    score: dict[str, Any] = {
        "score": evaluation.get("score"),
        "is_correct": evaluation.get("is_correct"),
    }
    if "itemscore_status" in metadata:
        score["status"] = metadata["itemscore_status"]
        score["reason"] = metadata.get("itemscore_reason")
    result_id = line.get("evaluation_result_id")
    record: dict[str, Any] = {
        (f"metadata.{k}" if k in _RESERVED else k): v
        for k, v in metadata.items()
        if k not in _OWN and k not in _ROLE_METADATA
    }
    record.update(
        {
            "id": ident,
            "model": model if model != "unknown" else None,
            "input": raw_input or None,
            "expected": list(reference) or None,
            "output": texts[0] if texts else None,
            "evaluation_id": line.get("evaluation_id"),
            "evaluation_name": line.get("evaluation_name"),
            "sample_hash": recorded,
            "eee_scores": {str(result_id): score},
        }
    )
    for role in _ROLE_METADATA:
        if isinstance(metadata.get(role), str):
            record[role] = metadata[role]
    attempt = metadata.get("attempt")
    if isinstance(attempt, str) and attempt.isdecimal() and len(attempt) < 10:
        record["attempt"] = int(attempt)
    if isinstance(given.get("choices"), list):
        record["choices"] = given["choices"]
    usage = line.get("token_usage")
    if isinstance(usage, dict):
        for key in ("input_tokens", "output_tokens", "total_tokens"):
            if isinstance(usage.get(key), int):
                record[key] = usage[key]
    if isinstance(line.get("error"), str):
        record["eee_error"] = line["error"]
    if isinstance(metadata.get("itemscore_harness_verdict"), str):
        record["harness_verdict"] = metadata["itemscore_harness_verdict"]
    return record
