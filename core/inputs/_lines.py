"""JSON lines read one at a time, each bounded in length: the harness logs that are JSONL."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, Any

from .._exceptions import InputError

__all__ = ["json_lines"]


def json_lines(
    raw: IO[bytes], name: str, max_bytes: int, *, holds: str, prefix: str = ""
) -> Iterator[tuple[int, str, Any]]:
    """``(line number, text, parsed value)`` of each non-blank line of ``raw``.

    Args:
        raw: The file, opened for reading bytes.
        name: The file as named in messages.
        max_bytes: Longest line read; a longer one is an error (never read whole).
        holds: What each line of such a file holds, for the message of a line that is not
            JSON (``"An lm-eval samples file holds one JSON object per line."``).
        prefix: Put before each message after the place (``"task 'gsm8k': "``).

    Raises:
        InputError: a line past the bound, not UTF-8, not JSON or nested too deeply; the
            message names the file and line (and column, for JSON).
    """
    lineno = 0
    while True:
        data = raw.readline(max_bytes + 1)
        if not data:
            return
        lineno += 1
        if len(data) > max_bytes and not data.endswith(b"\n"):
            raise InputError.at(
                name,
                lineno,
                None,
                f"{prefix}the line is longer than the bound of {max_bytes} bytes (read option "
                "max_sample_bytes); raise it if the file is yours and its lines are this long.",
            )
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError.at(name, lineno, None, "the file is not valid UTF-8.") from None
        if lineno == 1:
            text = text.removeprefix("\ufeff")
        text = text.rstrip("\r\n")
        if not text.strip():
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError.at(
                name, lineno, exc.colno, f"{prefix}not valid JSON ({exc.msg}). {holds}"
            ) from None
        except RecursionError:
            raise InputError.at(
                name, lineno, None, f"{prefix}the line nests too deeply to read."
            ) from None
        yield lineno, text, value
