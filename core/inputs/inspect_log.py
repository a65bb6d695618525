"""inspect_ai evaluation logs (``.eval`` and ``.json``) as items.

``inspect eval`` writes one log per task and model, as ``.eval`` (the default: a zip archive
with ``header.json`` and one ``samples/ID_epoch_N.json`` per sample, each member compressed with
zstd) or ``.json`` (``--log-format json``: one object with ``eval`` and ``samples``). Python
reads zstd members of a zip archive only from 3.14 on; before that this reader decompresses
them with the ``zstandard`` package (``pip install 'itemscore[inspect]'``).

How a sample becomes an item:

- ``id``: the sample's id, as text; with several epochs, ``ID#EPOCH`` (``q1#2``), since ids
  must be unique per model.
- ``model``: the log's model (``eval.model``, e.g. ``openai/gpt-4o``).
- ``input``: the sample's input; a chat input gives the text of its user messages.
- ``output``: with ``output="answer"`` (the default) the scorer's ``answer``, what inspect graded
  (``pattern()`` takes the text after ``ANSWER:``, ``choice()`` the letters), and the
  completion as written when the scorer gives no answer; with ``output="completion"`` always
  the completion. Both are kept in metadata (``answer``, ``completion``). A sample that ended
  in an error has no output (a failed request); the message is in metadata (``error``).
- ``expected``: the sample's ``target`` (a text or a list of texts).
- Multiple choice (samples with ``choices``): letters in the target and the answer (``"B"``,
  ``"A, C"``) become the text of those choices, so that ``expected`` and ``output`` read like
  lm-eval's; the letters stay in metadata (``target``, ``answer``).
- ``group``: the task's name. ``--map group=subject`` takes a key of the samples' metadata
  instead (the sample metadata's keys are top-level keys of the record).
- Metadata: ``task``, ``epoch``, ``scorer``, ``score`` (the scorer's value, e.g. ``"C"``),
  ``answer``, ``completion``, ``target``, ``choices``, ``error``, and the sample's metadata.

The scorer is the log's first unless ``scorer=`` names another.
"""

from __future__ import annotations

import json
import os
import struct
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from .._exceptions import ConfigError, InputError, did_you_mean, one_of
from ._source import find_lone_surrogate, surrogate_error

__all__ = ["read_inspect"]

_OUTPUTS = ("answer", "completion")
_ZSTD = 93  # the zip compression method number of zstd (APPNOTE 4.4.5)
_ROLES = frozenset({"id", "model", "input", "output", "expected", "group", "cluster"})
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def read_inspect(
    path: str | os.PathLike[str],
    *,
    output: Literal["answer", "completion"] = "answer",
    scorer: str | None = None,
) -> list[dict[str, Any]]:
    """Read an inspect_ai log into item records (see the module docstring).

    Args:
        path: A log written by inspect_ai: ``.eval`` or ``.json``.
        output: ``"answer"``: the scorer's answer; ``"completion"``: the completion as written.
        scorer: The scorer whose answer and value to read; ``None``: the log's first.

    Returns:
        One dict per sample (and epoch), keyed by item role (``id``, ``model``, ``input``,
        ``output``, ``expected``, ``group``) and by metadata name.

    Raises:
        ConfigError: a bad option, a ``scorer`` the log does not have, or an ``.eval`` log
            on Python < 3.14 without the ``zstandard`` package.
        InputError: the file is not a log inspect_ai writes, or holds no samples; the message
            names the file and the member or sample at fault.
        OSError: the file cannot be read.
    """
    if output not in _OUTPUTS:
        raise ConfigError(
            f"`output` ({output!r}) must be one of {one_of(_OUTPUTS)}."
            f"{did_you_mean(str(output), _OUTPUTS)}"
        )
    path = Path(path)
    name = os.fspath(path)
    if zipfile.is_zipfile(path):
        header, samples = _read_eval(path, name)
    else:
        header, samples = _read_json(path, name)
    evaluation = header.get("eval")
    if not isinstance(evaluation, dict):
        raise _error(name, "the log has no 'eval' object: it is not an inspect_ai log.")
    if not samples:
        raise _error(
            name,
            f"the log holds no samples (status {header.get('status')!r}). inspect_ai writes "
            "them unless told not to (--no-log-samples); run the task with samples logged.",
        )
    task = str(evaluation.get("task", ""))
    model = evaluation.get("model")
    config = evaluation.get("config")
    epochs = config.get("epochs") if isinstance(config, dict) else None
    several_epochs = (isinstance(epochs, int) and epochs > 1) or any(
        s.get("epoch", 1) != 1 for _, s in samples
    )
    scorers = _scorer_names(evaluation, samples)
    if scorer is not None and scorer not in scorers:
        raise ConfigError(
            f"{name}: the log has no scorer {scorer!r}; its scorers are "
            f"{one_of(scorers) or 'none'}.{did_you_mean(scorer, scorers)}"
        )
    chosen = scorer if scorer is not None else (scorers[0] if scorers else None)
    for where, sample in samples:
        found = find_lone_surrogate(sample)
        if found is not None:  # no report could write it as UTF-8
            raise surrogate_error(f"{name}: {where}", found, path=name)
    return [
        _record(
            sample,
            _Where(name, where),
            task=task,
            model=model if isinstance(model, str) else None,
            scorer=chosen,
            output=output,
            several_epochs=several_epochs,
        )
        for where, sample in samples
    ]


class _Where:
    """A sample of the log (``sample 3 (id 'q3')``, ``member samples/q3_epoch_1.json``)."""

    def __init__(self, name: str, sample: str) -> None:
        self.name = name
        self.sample = sample

    def error(self, message: str) -> InputError:
        return _error(self.name, f"{self.sample}: {message}")


def _error(name: str, message: str) -> InputError:
    """An error about the log ``name`` (the message names the member or sample at fault)."""
    return InputError.at(name, None, None, message)


# -- reading the two formats ---------------------------------------------------------------


def _read_json(path: Path, name: str) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    try:
        log = json.loads(path.read_bytes())
    except json.JSONDecodeError as exc:
        raise InputError.at(
            name,
            exc.lineno,
            exc.colno,
            f"not valid JSON ({exc.msg}). An inspect_ai log is a .eval archive or a JSON "
            "object written with --log-format json.",
        ) from None
    except UnicodeDecodeError:
        raise _error(name, "the file is not valid UTF-8.") from None
    except RecursionError:
        raise _error(name, "the JSON nests too deeply to read.") from None
    if not isinstance(log, dict):
        raise InputError.at(name, 1, None, "an inspect_ai JSON log holds one object, not a list.")
    raw = log.get("samples") or []
    if not isinstance(raw, list):
        raise _error(name, "'samples' must be a list of samples.")
    samples = []
    for index, sample in enumerate(raw, 1):
        if not isinstance(sample, dict):
            raise _error(name, f"sample {index} is not an object.")
        samples.append((f"sample {index} (id {sample.get('id')!r})", sample))
    return log, samples


def _read_eval(path: Path, name: str) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise _error(name, f"not a readable .eval archive ({exc}).") from None
    with archive, path.open("rb") as raw:
        members = {info.filename: info for info in archive.infolist()}
        if "header.json" in members:
            header = _member_json(archive, raw, members["header.json"], name)
        elif "_journal/start.json" in members:  # a log whose run has not finished
            header = _member_json(archive, raw, members["_journal/start.json"], name)
        else:
            raise _error(name, "the archive has no header.json: it is not an inspect_ai .eval log.")
        if not isinstance(header, dict):
            raise _error(name, "member header.json must hold a JSON object.")
        order = _sample_order(header)
        samples = []
        for member in sorted(
            (n for n in members if n.startswith("samples/") and n.endswith(".json")),
            key=lambda n: _member_key(n, order),
        ):
            sample = _member_json(archive, raw, members[member], name)
            if not isinstance(sample, dict):
                raise _error(name, f"member {member} must hold a JSON object.")
            samples.append((f"member {member}", sample))
    return header, samples


def _sample_order(header: Mapping[str, Any]) -> dict[str, int]:
    """Position of each sample id in the data set, to list samples in the data set's order."""
    evaluation = header.get("eval")
    dataset = evaluation.get("dataset") if isinstance(evaluation, dict) else None
    ids = dataset.get("sample_ids") if isinstance(dataset, dict) else None
    return {str(i): n for n, i in enumerate(ids)} if isinstance(ids, list) else {}


def _member_key(member: str, order: Mapping[str, int]) -> tuple[int, int, str]:
    stem = member.removeprefix("samples/").removesuffix(".json")
    ident, _, epoch = stem.rpartition("_epoch_")
    return (
        int(epoch) if epoch.isdigit() else 0,
        order.get(ident, len(order)),
        member,
    )


def _member_json(archive: zipfile.ZipFile, raw: Any, info: zipfile.ZipInfo, name: str) -> Any:
    if info.compress_type == _ZSTD and not hasattr(zipfile, "ZIP_ZSTANDARD"):
        data = _zstd_member(raw, info, name)
    else:
        try:
            data = archive.read(info)
        except (zipfile.BadZipFile, zlib.error, NotImplementedError) as exc:
            raise _error(name, f"member {info.filename} cannot be read ({exc}).") from None
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:
        raise _error(
            name, f"member {info.filename}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg})."
        ) from None
    except UnicodeDecodeError:
        raise _error(name, f"member {info.filename} is not valid UTF-8.") from None
    except RecursionError:
        raise _error(name, f"member {info.filename} nests too deeply to read.") from None


def _zstd_member(raw: Any, info: zipfile.ZipInfo, name: str) -> bytes:
    """A zstd-compressed member, for Pythons whose zipfile cannot (before 3.14)."""
    try:
        import zstandard
    except ImportError:
        raise ConfigError(
            f"Reading {name} needs the zstandard package: inspect_ai compresses .eval logs "
            "with zstd, which Python reads only from 3.14 on. Install it with: "
            "pip install 'itemscore[inspect]' (or read a log written with --log-format json)."
        ) from None
    # The member's data follows its local header: 30 fixed bytes, then name and extra field.
    raw.seek(info.header_offset)
    local = raw.read(30)
    if len(local) != 30 or local[:4] != b"PK\x03\x04":
        raise _error(name, f"member {info.filename} has a broken local header.")
    name_length, extra_length = struct.unpack("<HH", local[26:30])
    raw.seek(info.header_offset + 30 + name_length + extra_length)
    compressed = raw.read(info.compress_size)
    try:
        data: bytes = zstandard.ZstdDecompressor().decompressobj().decompress(compressed)
    except zstandard.ZstdError as exc:
        raise _error(name, f"member {info.filename} is not valid zstd data ({exc}).") from None
    if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
        raise _error(
            name, f"member {info.filename} is damaged (its size or checksum does not match)."
        )
    return data


# -- samples into records ------------------------------------------------------------------


def _scorer_names(
    evaluation: Mapping[str, Any], samples: list[tuple[str, dict[str, Any]]]
) -> list[str]:
    names: list[str] = []
    scorers = evaluation.get("scorers")
    if isinstance(scorers, list):
        names += [str(s["name"]) for s in scorers if isinstance(s, dict) and "name" in s]
    for _, sample in samples:
        scores = sample.get("scores")
        if isinstance(scores, dict):
            names += [str(key) for key in scores]
    return list(dict.fromkeys(names))


def _record(
    sample: Mapping[str, Any],
    where: _Where,
    *,
    task: str,
    model: str | None,
    scorer: str | None,
    output: str,
    several_epochs: bool,
) -> dict[str, Any]:
    ident = sample.get("id")
    if isinstance(ident, bool) or not isinstance(ident, (int, str)):
        raise where.error(f"the sample's id must be a text or a whole number, not {ident!r}.")
    epoch = sample.get("epoch", 1)
    choices = sample.get("choices")
    if choices is not None and not (
        isinstance(choices, list) and all(isinstance(c, str) for c in choices)
    ):
        raise where.error("'choices' must be a list of texts.")
    target = sample.get("target")
    expected = _texts(target, where, "target")
    completion = _completion(sample.get("output"), where)
    score: Any = None
    scores = sample.get("scores")
    if isinstance(scores, dict) and scorer is not None and isinstance(scores.get(scorer), dict):
        score = scores[scorer]
    answer = score.get("answer") if score is not None else None
    error = sample.get("error")
    graded = output == "answer" and isinstance(answer, str)
    if error is not None:
        text: str | None = None  # the request failed: nothing was answered
    elif graded:
        text = answer
    else:
        text = completion
    if choices:
        expected = _choice_texts(expected, choices)
        if text is not None and graded:
            text = _choice_answer(text, choices)
    record: dict[str, Any] = {}
    metadata = sample.get("metadata")
    if isinstance(metadata, dict):
        record.update({k: v for k, v in metadata.items() if k not in _ROLES})
    record.update(
        {
            "id": f"{ident}#{epoch}" if several_epochs else str(ident),
            "model": model,
            "input": _input_text(sample.get("input")),
            "output": text,
            "expected": expected,
            "group": task or None,
            "task": task,
            "epoch": epoch,
            "scorer": scorer,
            "score": score.get("value") if score is not None else None,
            "answer": answer,
            "completion": completion,
            "target": target,
        }
    )
    if choices:
        record["choices"] = choices
    if error is not None:
        record["error"] = error.get("message") if isinstance(error, dict) else str(error)
    return record


def _texts(value: Any, where: _Where, key: str) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise where.error(f"{key!r} must be a text or a list of texts, not {value!r}.")


def _completion(model_output: Any, where: _Where) -> str | None:
    if model_output is None:
        return None
    if not isinstance(model_output, dict):
        raise where.error("'output' must be an object (inspect_ai's ModelOutput).")
    completion = model_output.get("completion")
    if completion is not None and not isinstance(completion, str):
        raise where.error(f"'output.completion' must be text, not {completion!r}.")
    return completion


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


def _letters(text: str, count: int) -> list[int] | None:
    """``"B"`` or ``"A, C"`` as choice indices, or None when ``text`` is not such letters."""
    tokens = text.replace(",", " ").split()
    if not tokens or not all(len(t) == 1 and t.upper() in _LETTERS[:count] for t in tokens):
        return None
    return [_LETTERS.index(t.upper()) for t in tokens]


def _choice_texts(expected: list[str] | None, choices: list[str]) -> list[str] | None:
    if expected is None:
        return None
    texts = []
    for target in expected:
        found = _letters(target, len(choices))
        if found is None:
            return expected  # not letters: the target already names the answer
        texts.append(", ".join(choices[i] for i in found))
    return texts


def _choice_answer(answer: str, choices: list[str]) -> str:
    found = _letters(answer, len(choices))
    if found is None:
        return answer
    return ", ".join(choices[i] for i in found)
