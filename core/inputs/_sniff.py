"""Telling harness logs from data files of the same extension, by their first bytes.

lm-eval's samples files are ``.jsonl`` and inspect_ai's JSON logs ``.json``, like any data file;
their content tells them apart without doubt, so ``--format`` may be left out:

- a ``.jsonl`` file whose first line is an object with lm-eval's keys (``doc_id``, ``arguments``,
  ``resps``, ``filtered_resps``) and no ``output`` is an lm-eval samples file;
- a ``.json`` file holding an object (a JSON data file holds a list) that starts with
  inspect_ai's ``"version"`` and has an ``"eval"`` object is an inspect_ai log.

lm-eval's output folder holds, beside the samples files of a run, the run's
``results_TIMESTAMP.json``: its configuration, which the samples reader reads itself. In a
folder or glob, :func:`lm_eval_results` names those files, so that the folder reads as lm-eval
wrote it instead of as two formats.
"""

from __future__ import annotations

import json
import os
import re

__all__ = ["content_format", "lm_eval_results", "sniff"]

_HEAD = 1 << 20  # enough for the first line of a samples file, whose doc may be long
_LM_EVAL_KEYS = frozenset({"doc_id", "arguments", "resps", "filtered_resps"})
_INSPECT = re.compile(rb'^\s*\{\s*"version"\s*:\s*\d+\s*,.*?"eval"\s*:\s*\{', re.S)
#: What lm-eval names a run's results file: ``results_2026-11-30T23-40-36.903617.json``.
_LM_EVAL_RESULTS = re.compile(r"^results_\d{4}-\d\d-\d\dT[0-9.\-]+\.json$")


def lm_eval_results(found: list[tuple[str, str]]) -> set[str]:
    """The lm-eval results files among a folder's ``(path, format)`` pairs.

    A ``results_TIMESTAMP.json`` counts when an lm-eval samples file lies in its folder: it is
    the run's record, not data (the samples reader reads the task configuration from it).
    """
    results = {p for p, _ in found if _LM_EVAL_RESULTS.match(os.path.basename(p))}
    folders = {os.path.dirname(p) for p, fmt in found if fmt == "lm-eval" and p not in results}
    return {p for p in results if os.path.dirname(p) in folders}


def content_format(head: bytes) -> str | None:
    """The data format ``head`` (a file's first bytes) looks like, ``None`` when empty.

    For what has no extension to tell (standard input, ``<(cat f)``) and to catch a format
    named wrongly (``--format csv`` on JSON lines): Parquet's magic bytes; a JSON list; a
    first line that is a whole JSON object (JSON lines), or an object that goes on (one JSON
    document, e.g. an inspect_ai log); else a table of text, TSV when its first line has tabs
    and no commas, CSV otherwise.
    """
    if head.startswith(b"PAR1"):
        return "parquet"
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if not text:
        return None
    if text.startswith(b"["):
        return "json"
    first = text.split(b"\n", 1)[0]
    if text.startswith(b"{"):
        try:
            return "jsonl" if isinstance(json.loads(first), dict) else "json"
        except (ValueError, RecursionError):
            return "json"
    return "tsv" if b"\t" in first and b"," not in first else "csv"


def sniff(path: str | os.PathLike[str], name: str) -> str:
    """The harness format ``path`` holds when its content says so, else ``name`` unchanged.

    Never raises: a file that cannot be read keeps the format its extension gave, and the
    reader reports the problem. A file that is not a regular file (a pipe) is not read.
    """
    if name not in ("jsonl", "json"):
        return name
    from ._files import is_regular
    from ._fs import is_url, open_binary

    if not is_url(path) and not is_regular(path):  # a pipe would lose what is read here
        return name
    path = os.fspath(path)
    try:
        with open_binary(path) as handle:
            head = handle.read(_HEAD if name == "jsonl" else 1 << 16)
    except OSError:
        return name
    if name == "json":
        return "inspect" if _INSPECT.match(head) else name
    first = head.lstrip().split(b"\n", 1)
    if len(first) < 2 and len(head) == _HEAD:
        return name  # a first line longer than the head: not worth reading further
    if not first[0].startswith(b"{"):
        return name
    try:
        row = json.loads(first[0])
    except (ValueError, RecursionError):  # the reader names the line at fault
        return name
    if isinstance(row, dict) and row.keys() >= _LM_EVAL_KEYS and "output" not in row:
        return "lm-eval"
    return name
