"""inspect_ai evaluation logs (``.eval`` and ``.json``) as items, read one sample at a time.

``inspect eval`` writes one log per task and model, as ``.eval`` (the default: a zip archive
with ``header.json`` and one ``samples/ID_epoch_N.json`` per sample, each member compressed with
zstd) or ``.json`` (``--log-format json``: one object with ``eval`` and ``samples``). Python
reads zstd members of a zip archive only from 3.14 on; before that this reader decompresses
them with the ``zstandard`` package (``pip install zstandard``). Either way the log
is never held whole: one member (one element of ``samples``) at a time, each bounded in size
(and, compressed, in ratio) by the reader options ``max_sample_bytes`` and ``max_ratio``.

How a sample becomes an item (docs/harness-logs.md has the reasons):

- ``id``: the sample's id, as text. ``attempt``: the epoch, when the task ran several.
- ``model``: the log's model (``eval.model``). ``group``: the task's name.
- ``input``: the sample's input; a chat input gives the text of its user messages.
- ``output`` (``output="answer"``, the default): what the scorer compared. ``choice()``: the
  letters it read (``"A, C"``); ``pattern()`` and ``answer()``: the text they took out;
  ``includes()``, ``match()``, ``exact()``, ``f1()``: the completion (their ``answer`` is only a
  case-folded or stripped copy of it). A scorer that found no answer gives ``""`` with the
  reason in metadata ``no_answer``. ``output="completion"``: always the completion. A sample
  that ended in an error has no output (a failed request); its message is in ``sample_error``.
- ``expected``: the target; a list of targets is a list of valid answers, except for
  ``choice()``, where the letters are all required: one answer, ``"A, C"``.
- Metadata: ``task``, ``epoch``, ``scorer``, ``score`` (the scorer's value, e.g. ``"C"``),
  ``answer``, ``completion``, ``target``, ``choices`` (the texts), ``sample_error``, ``limit``
  (the limit a sample hit), ``input_tokens``/``output_tokens``/``total_tokens`` (and ``cost``
  when logged), ``total_time``/``working_time``, and the sample's metadata (a key that is also
  a role or one of these names is kept as ``sample.KEY``).
- ``rules="harness"`` adds ``harness_rule``: how inspect compared (see
  :mod:`itemscore.integrations.harness_rules`).

A sample that cannot be read becomes a record with an ``error`` key (the reason, naming the
file, task and member) and whatever could be read; the other samples are read on.

The scorer is the log's first unless ``scorer=`` names another, by the name inspect keys its
samples' scores by: a task's second scorer of one type is ``match1`` (the first ``match``),
and its options are its own, from the log's header.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any, Literal

from .._exceptions import ConfigError, InputError, did_you_mean, one_of
from ._convert import ROLES
from ._json_stream import ELEMENT, iter_object
from ._limits import MAX_RATIO, MAX_SAMPLE_BYTES, RATIO_FLOOR, check_choice, check_limits
from ._source import escape_name, find_lone_surrogate
from ._zip_member import BoundError, read_member

__all__ = ["read_inspect"]

_OUTPUTS = ("answer", "completion")
_RULES = ("itemscore", "harness")
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
#: Scorers whose ``answer`` is the completion itself (case-folded or stripped).
_COMPLETION_SCORERS = frozenset({"includes", "match", "exact", "f1"})
#: Scorers whose ``answer`` is what they took out of the completion (none: nothing found).
_EXTRACTING_SCORERS = frozenset({"pattern", "answer", "choice"})
_OWN_KEYS = frozenset(
    {
        *ROLES,
        "task",
        "epoch",
        "scorer",
        "score",
        "answer",
        "completion",
        "target",
        "choices",
        "sample_error",
        "limit",
        "no_answer",
        "input_tokens",
        "output_tokens",
        "total_tokens",
        "cost",
        "total_time",
        "working_time",
        "harness_rule",
        "error",
    }
)


def read_inspect(
    path: str | os.PathLike[str],
    *,
    output: Literal["answer", "completion"] = "answer",
    scorer: str | None = None,
    rules: Literal["itemscore", "harness"] = "itemscore",
    max_sample_bytes: int = MAX_SAMPLE_BYTES,
    max_ratio: int = MAX_RATIO,
) -> Iterator[dict[str, Any]]:
    """Read an inspect_ai log into item records, one sample at a time (see the module docstring).

    The log's header is read, and the options checked, before this returns; the samples are
    read as the records are iterated.

    Args:
        path: A log written by inspect_ai: ``.eval`` or ``.json``.
        output: ``"answer"``: what the scorer compared; ``"completion"``: the completion.
        scorer: The scorer whose answer and value to read; ``None``: the log's first.
        rules: ``"harness"``: add each sample's ``harness_rule`` (how inspect compared).
        max_sample_bytes: Largest sample taken (decompressed JSON text).
        max_ratio: Largest expansion of a compressed member.

    Returns:
        An iterator of dicts, one per sample (and epoch), keyed by item role (``id``,
        ``model``, ``input``, ``output``, ``expected``, ``group``, ``attempt``) and by metadata
        name.

    Raises:
        ConfigError: a bad option, a ``scorer`` the log does not have, or an ``.eval`` log
            on Python < 3.14 without the ``zstandard`` package.
        InputError: the file is not a log inspect_ai writes, holds no samples, or a sample
            exceeds a bound; the message names the file (and the member or sample).
        OSError: the file cannot be read.
    """
    check_choice("output", output, _OUTPUTS)
    check_choice("rules", rules, _RULES)
    max_bytes, ratio = check_limits(max_sample_bytes, max_ratio)
    path = Path(path)
    name = os.fspath(path)
    log: _Log = (
        _EvalLog(path, name, max_bytes, ratio)
        if zipfile.is_zipfile(path)
        else _JsonLog(path, name, max_bytes)
    )
    context = _Context(name, log.header, scorer, output, rules, log.several_epochs())
    return _records(log, context)


def _records(log: _Log, context: _Context) -> Iterator[dict[str, Any]]:
    count = 0
    samples = log.samples()
    while True:
        try:
            where, sample = next(samples)
        except StopIteration:
            break
        except InputError as exc:  # a bound or a broken file: name the task too
            place = "".join(f":{n}" for n in (exc.line, exc.column) if n is not None)
            text = str(exc).removeprefix(f"{context.name}{place}: ")
            raise InputError.at(
                context.name, exc.line, exc.column, f"task {context.task!r}: {text}"
            ) from None
        count += 1
        yield context.record(where, sample)
    if count == 0:
        raise InputError.at(
            context.name,
            None,
            None,
            f"the log of task {context.task!r} holds no samples (status "
            f"{log.header.get('status')!r}). inspect_ai writes them unless told not to "
            "(--no-log-samples); run the task with samples logged.",
        )


# -- the two formats ---------------------------------------------------------------------


class _Log:
    """A log opened for reading: its header now, its samples as iterated."""

    header: dict[str, Any]

    def samples(self) -> Iterator[tuple[str, Any]]:
        raise NotImplementedError

    def several_epochs(self) -> bool:
        evaluation = self.header["eval"]
        config = evaluation.get("config")
        epochs = config.get("epochs") if isinstance(config, dict) else None
        return isinstance(epochs, int) and not isinstance(epochs, bool) and epochs > 1


def _check_header(header: Any, name: str, member: str) -> dict[str, Any]:
    if not isinstance(header, dict):
        raise InputError.at(name, None, None, f"{member} must hold a JSON object.")
    if not isinstance(header.get("eval"), dict):
        raise InputError.at(
            name, None, None, "the log has no 'eval' object: it is not an inspect_ai log."
        )
    return header


class _EvalLog(_Log):
    """A ``.eval`` archive: ``header.json`` and one member per sample."""

    def __init__(self, path: Path, name: str, max_bytes: int, max_ratio: int) -> None:
        self.path, self.name = path, name
        self.bounds = {"max_bytes": max_bytes, "max_ratio": max_ratio, "ratio_floor": RATIO_FLOOR}
        try:
            with zipfile.ZipFile(path) as archive:
                self.members = {info.filename: info for info in archive.infolist()}
                with path.open("rb") as raw:
                    for member in ("header.json", "_journal/start.json"):  # the latter: unfinished
                        if member in self.members:
                            header = self._json(archive, raw, self.members[member])
                            break
                    else:
                        raise InputError.at(
                            name,
                            None,
                            None,
                            "the archive has no header.json: it is not an inspect_ai .eval log.",
                        )
        except zipfile.BadZipFile as exc:
            raise InputError.at(
                name, None, None, f"not a readable .eval archive ({exc})."
            ) from None
        self.header = _check_header(header, name, f"member {escape_name(member)}")
        dataset = self.header["eval"].get("dataset")
        ids = dataset.get("sample_ids") if isinstance(dataset, dict) else None
        order = {str(i): n for n, i in enumerate(ids)} if isinstance(ids, list) else {}
        self.order = sorted(
            (n for n in self.members if n.startswith("samples/") and n.endswith(".json")),
            key=lambda n: _member_key(n, order),
        )

    def several_epochs(self) -> bool:
        return super().several_epochs() or any(_member_key(n, {})[0] > 1 for n in self.order)

    def _json(self, archive: zipfile.ZipFile, raw: IO[bytes], info: zipfile.ZipInfo) -> Any:
        data = read_member(archive, raw, info, self.name, **self.bounds)
        member = escape_name(info.filename)
        try:
            return json.loads(data)
        except json.JSONDecodeError as exc:
            raise InputError.at(
                self.name,
                None,
                None,
                f"member {member}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}).",
            ) from None
        except UnicodeDecodeError:
            raise InputError.at(
                self.name, None, None, f"member {member} is not valid UTF-8."
            ) from None
        except RecursionError:
            raise InputError.at(
                self.name, None, None, f"member {member} nests too deeply to read."
            ) from None

    def samples(self) -> Iterator[tuple[str, Any]]:
        with zipfile.ZipFile(self.path) as archive, self.path.open("rb") as raw:
            for member in self.order:
                where = f"member {escape_name(member)}"
                try:
                    sample = self._json(archive, raw, self.members[member])
                except BoundError:
                    raise  # a bomb is the file's problem, not one sample's
                except InputError as exc:  # the sample's record says why
                    sample = _BadSample(str(exc).removeprefix(f"{self.name}: "))
                yield where, sample


def _member_key(member: str, order: Mapping[str, int]) -> tuple[int, int, str]:
    stem = member.removeprefix("samples/").removesuffix(".json")
    ident, _, epoch = stem.rpartition("_epoch_")
    return (int(epoch) if epoch.isdecimal() else 0, order.get(ident, len(order)), member)


class _JsonLog(_Log):
    """A ``.json`` log: one object, its ``samples`` streamed element by element."""

    def __init__(self, path: Path, name: str, max_bytes: int) -> None:
        self.path, self.name, self.max_bytes = path, name, max_bytes
        header: dict[str, Any] = {}
        self.samples_first = False
        with path.open("rb") as raw:
            for key, value in iter_object(raw, name, "samples", max_bytes=max_bytes):
                if key is ELEMENT:
                    # Samples before the header (not how inspect_ai writes): read on for the
                    # header, then read the file again for the samples.
                    self.samples_first = self.samples_first or "eval" not in header
                    if not self.samples_first:
                        break
                    continue
                if key == "samples" and value is not None:
                    raise InputError.at(name, None, None, "'samples' must be a list of samples.")
                header[key] = value
        self.header = _check_header(header, name, "the log")

    def samples(self) -> Iterator[tuple[str, Any]]:
        index = 0
        with self.path.open("rb") as raw:
            for key, value in iter_object(raw, self.name, "samples", max_bytes=self.max_bytes):
                if key is ELEMENT:
                    index += 1
                    ident = value.get("id") if isinstance(value, dict) else None
                    yield f"sample {index} (id {ident!r})", value


def _at(where: str, reason: str) -> str:
    """``reason`` at ``where``, which it names first when it came from reading that member."""
    return reason if reason.startswith(where) else f"{where}: {reason}"


# -- samples into records ------------------------------------------------------------------


class _BadSample(Exception):
    """A sample that cannot be read as inspect_ai writes it (its record is an error)."""


class _Context:
    """What every sample of one log shares: task, model, scorer, options."""

    def __init__(
        self,
        name: str,
        header: dict[str, Any],
        scorer: str | None,
        output: str,
        rules: str,
        several_epochs: bool,
    ) -> None:
        evaluation = header["eval"]
        self.name = name
        self.task = str(evaluation.get("task", ""))
        model = evaluation.get("model")
        self.model = model if isinstance(model, str) else None
        self.output, self.rules, self.several_epochs = output, rules, several_epochs
        #: Each scorer by the name its samples' scores are keyed by: its type and options.
        self.scorers = _scorers(header)
        names = list(self.scorers)
        if scorer is not None and names and scorer not in names:
            raise ConfigError(
                f"{name}: the log of task {self.task!r} has no scorer {scorer!r}; its scorers "
                f"are {one_of(names)}.{did_you_mean(scorer, names)}"
            )
        self.scorer = scorer if scorer is not None else (names[0] if names else None)
        self.scorer_checked = bool(names) or scorer is None
        if rules == "harness" and output == "completion" and self._kind() in ("pattern", "choice"):
            raise ConfigError(
                f"{name}: rules='harness' compares what inspect's "
                f"{escape_name(self._kind())}() compared, its answer; drop "
                "output='completion', or use rules='itemscore'."
            )

    def _kind(self) -> str:
        """The scorer's type (``match`` for inspect's second ``match()``, named ``match1``)."""
        found = self.scorers.get(self.scorer or "")
        return (found[0] if found is not None else self.scorer or "").rpartition("/")[2]

    def record(self, where: str, sample: Any) -> dict[str, Any]:
        try:
            if isinstance(sample, _BadSample):  # a member that could not be decoded
                raise sample
            if not isinstance(sample, dict):
                raise _BadSample("the sample is not a JSON object.")
            found = find_lone_surrogate(sample)
            if found is not None:  # no report could write it as UTF-8
                raise _BadSample(
                    "a text holds a lone surrogate escape (\\ud800-\\udfff without its pair), "
                    "which is not a character and cannot be written as UTF-8."
                )
            return self._record(sample)
        except _BadSample as exc:
            ident = sample.get("id") if isinstance(sample, dict) else None
            if isinstance(ident, bool) or not isinstance(ident, (int, str)) or ident == "":
                ident = where
            if isinstance(ident, str) and find_lone_surrogate(ident) is not None:
                ident = where
            return {
                "id": str(ident),
                "output": None,
                "model": self.model,
                "group": self.task or None,
                "task": self.task,
                "error": f"{self.name}: task {self.task!r}: {_at(where, str(exc))}",
            }

    def _record(self, sample: dict[str, Any]) -> dict[str, Any]:
        ident = sample.get("id")
        if isinstance(ident, bool) or not isinstance(ident, (int, str)):
            raise _BadSample(f"the sample's id must be a text or a whole number, not {ident!r}.")
        epoch = sample.get("epoch", 1)
        if isinstance(epoch, bool) or not isinstance(epoch, int):
            raise _BadSample(f"the sample's epoch must be a whole number, not {epoch!r}.")
        choices = sample.get("choices")
        if choices is not None and not (
            isinstance(choices, list) and all(isinstance(c, str) for c in choices)
        ):
            raise _BadSample("'choices' must be a list of texts.")
        scores = sample.get("scores")
        if not self.scorer_checked and isinstance(scores, dict):
            self._check_scorer(list(scores))
        score = scores.get(self.scorer) if isinstance(scores, dict) and self.scorer else None
        if not isinstance(score, dict):
            score = None
        target = sample.get("target")
        completion = _completion(sample.get("output"))
        answer = score.get("answer") if score is not None else None
        kind = self._kind()
        error = sample.get("error")
        no_answer: str | None = None
        text: str | None
        if error is not None:
            text = None  # the request failed: nothing was answered
        elif self.output == "completion" or kind in _COMPLETION_SCORERS:
            text = completion
        elif isinstance(answer, str) and answer:
            text = answer
        elif kind in _EXTRACTING_SCORERS or (score is not None and score.get("reason")):
            text = ""
            reason = score.get("reason") if score is not None else None
            no_answer = f"inspect's {escape_name(kind)}() found no answer in the completion" + (
                f" ({reason})" if isinstance(reason, str) else ""
            )
        else:
            text = completion  # a scorer that does not log its answer
        limit = sample.get("limit")
        if isinstance(limit, dict) and not (text or "").strip() and error is None:
            no_answer = f"the sample hit its {limit.get('type', '')} limit".replace("  ", " ")
            if isinstance(limit.get("limit"), (int, float)):
                no_answer += f" of {limit['limit']:g}"
        letters = kind == "choice"
        expected = _expected(target, letters and bool(choices))
        record: dict[str, Any] = {}
        metadata = sample.get("metadata")
        if isinstance(metadata, dict):
            record.update(
                {(f"sample.{k}" if k in _OWN_KEYS else k): v for k, v in metadata.items()}
            )
        record.update(
            {
                "id": str(ident),
                "model": self.model,
                "input": _input_text(sample.get("input")),
                "output": text,
                "expected": expected,
                "group": self.task or None,
                "task": self.task,
                "epoch": epoch,
                "scorer": self.scorer,
                "score": score.get("value") if score is not None else None,
                "answer": answer,
                "completion": completion,
                "target": target,
            }
        )
        if self.several_epochs:
            record["attempt"] = epoch
        if choices:
            record["choices"] = choices
        if error is not None:
            record["sample_error"] = error.get("message") if isinstance(error, dict) else str(error)
        if limit is not None:
            record["limit"] = limit
        if no_answer is not None:
            record["no_answer"] = no_answer
        record.update(_usage(sample))
        for key in ("total_time", "working_time"):
            if isinstance(sample.get(key), (int, float)):
                record[key] = sample[key]
        if self.rules == "harness":
            record["harness_rule"] = self._rule(score, error is not None)
        return record

    def _check_scorer(self, names: list[str]) -> None:
        """A log whose header lists no scorers: check ``scorer=`` against the first sample."""
        self.scorer_checked = True
        if self.scorer is None and names:
            self.scorer = names[0]
        elif self.scorer is not None and self.scorer not in names:
            raise ConfigError(
                f"{self.name}: the log of task {self.task!r} has no scorer {self.scorer!r}; its "
                f"samples' scorers are {one_of(names) or 'none'}."
                f"{did_you_mean(self.scorer, names)}"
            )

    def _rule(self, score: Mapping[str, Any] | None, failed: bool) -> dict[str, Any]:
        """How inspect compared this sample (see itemscore.integrations.harness_rules)."""
        kind = self._kind()
        found = self.scorers.get(self.scorer or "")
        options = found[1] if found is not None else {}
        rule: dict[str, Any] = {"harness": "inspect", "scorer": self.scorer}
        if failed or score is None:
            return rule | {"kind": "unscored"}  # inspect leaves errored samples unscored
        ignore_case = options.get("ignore_case", True)
        if kind == "choice":
            return rule | {"kind": "choice"}
        if kind == "includes":
            return rule | {"kind": "includes", "ignore_case": bool(ignore_case)}
        if kind == "match" and not options.get("numeric", False):
            location = options.get("location", "end")
            return rule | {"kind": "match", "location": location, "ignore_case": bool(ignore_case)}
        if kind == "pattern" and not options.get("match_all", False):
            return rule | {"kind": "pattern", "ignore_case": bool(ignore_case)}
        # A comparison itemscore does not redo (a model grader, numeric match...): inspect's
        # own verdict, as logged.
        return rule | {"kind": "logged", "value": score.get("value")}


def _scorers(header: Mapping[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    """The log's scorers by the name its samples' scores are keyed by: (type, options).

    ``eval.scorers`` lists each scorer by its type (two ``match()`` scorers are both
    ``match``); inspect keys their scores, and names them in ``results.scores``, as
    ``match`` and ``match1``: the type, then a number from 1 for each repeat (inspect_ai's
    ``unique_scorer_name``). ``results.scores`` also gives the name (``scorer``) and options
    (``params``) of a scorer the header does not list (one added by ``inspect score``).
    """
    found: dict[str, tuple[str, dict[str, Any]]] = {}
    entries = header["eval"].get("scorers")
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and "name" in entry:
            kind = str(entry["name"])
            name, count = kind, 1
            while name in found:
                name, count = f"{kind}{count}", count + 1
            options = entry.get("options")
            found[name] = (kind, options if isinstance(options, dict) else {})
    results = header.get("results")
    scores = results.get("scores") if isinstance(results, dict) else None
    for entry in scores if isinstance(scores, list) else []:
        if isinstance(entry, dict):
            logged = entry.get("scorer", entry.get("name"))
            params = entry.get("params")
            if isinstance(logged, str) and logged not in found:
                found[logged] = (logged, params if isinstance(params, dict) else {})
    return found


def _expected(target: Any, letter_set: bool) -> list[str] | None:
    """Valid answers; for ``choice()`` the letters of a list are one answer, all required."""
    if target is None:
        return None
    if isinstance(target, str):
        targets = [target]
    elif isinstance(target, list) and all(isinstance(t, str) for t in target):
        targets = list(target)
    else:
        raise _BadSample(f"'target' must be a text or a list of texts, not {target!r}.")
    if letter_set:
        letters = [t for value in targets for t in value.replace(",", " ").split()]
        if letters and all(len(t) == 1 and t.upper() in _LETTERS for t in letters):
            return [", ".join(sorted(t.upper() for t in letters))]
    return targets


def _completion(model_output: Any) -> str | None:
    if model_output is None:
        return None
    if not isinstance(model_output, dict):
        raise _BadSample("'output' must be an object (inspect_ai's ModelOutput).")
    completion = model_output.get("completion")
    if completion is not None and not isinstance(completion, str):
        raise _BadSample(f"'output.completion' must be text, not {completion!r}.")
    return completion


def _usage(sample: Mapping[str, Any]) -> dict[str, Any]:
    """Token counts (summed over the sample's models) and cost, when logged."""
    usage = sample.get("model_usage")
    totals: dict[str, Any] = {}
    if not isinstance(usage, dict):
        return totals
    for per_model in usage.values():
        if not isinstance(per_model, dict):
            continue
        for key, field in (
            ("input_tokens", "input_tokens"),
            ("output_tokens", "output_tokens"),
            ("total_tokens", "total_tokens"),
            ("cost", "total_cost"),
        ):
            value = per_model.get(field)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                totals[key] = totals.get(key, 0) + value
    return totals


def _input_text(value: Any) -> str | None:
    """The sample's input: a text, or the text of the user messages of a chat input."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        return None
    parts = []
    for message in value:
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts += [
                    c["text"]
                    for c in content
                    if isinstance(c, dict) and c.get("type") == "text" and "text" in c
                ]
    return "\n\n".join(parts) or None
