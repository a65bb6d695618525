"""A large JSON object read as a stream: each member's value, and one list element by element.

An inspect_ai ``.json`` log is one object whose ``samples`` list holds every sample; read whole,
a log costs about ten times its size in memory. Here the file is read in pieces and each
top-level value is decoded on its own, except the list named ``stream_key``, whose elements
are decoded and handed over one at a time. No value may hold more than ``max_bytes`` characters.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from typing import IO, Any

from .._exceptions import InputError
from ._source import line_column

__all__ = ["ELEMENT", "iter_object"]

_PIECE = 1 << 20
_SPACE = " \t\n\r"
_DECODER = json.JSONDecoder()


#: Yielded as the key of each element of the streamed list.
ELEMENT: Any = object()


class _Buffer:
    """Text of a file, decoded as UTF-8 piece by piece, with a read position."""

    def __init__(self, raw: IO[bytes], name: str, max_chars: int) -> None:
        self.raw = raw
        self.name = name
        self.max_chars = max_chars
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.text = ""
        self.pos = 0
        self.eof = False
        self.first = True
        #: Line and column (1-based) of the first character of ``text``.
        self.line, self.column = 1, 1

    def more(self, at_least: int = _PIECE) -> bool:
        """Read on; ``False`` at the end of the file."""
        if self.eof:
            return False
        data = self.raw.read(max(at_least, _PIECE))
        if self.first and data.startswith(codecs.BOM_UTF8):
            data = data[len(codecs.BOM_UTF8) :]
        self.first = False
        try:
            chunk = self.decoder.decode(data, final=not data)
        except UnicodeDecodeError:
            raise InputError.at(self.name, None, None, "the file is not valid UTF-8.") from None
        if not data:
            self.eof = True
        self.line, self.column = line_column(self.text, self.pos, self.line, self.column)
        self.text = self.text[self.pos :] + chunk
        self.pos = 0
        return True

    def peek(self) -> str:
        """The next character that is not white space ('' at the end of the file)."""
        while True:
            while self.pos < len(self.text) and self.text[self.pos] in _SPACE:
                self.pos += 1
            if self.pos < len(self.text):
                return self.text[self.pos]
            if not self.more():
                return ""

    def error(self, offset: int, message: str) -> InputError:
        """An error at ``offset`` of ``text``, named by its line and column in the file."""
        line, column = line_column(self.text, offset, self.line, self.column)
        return InputError.at(self.name, line, column, message)

    def expect(self, chars: str, where: str) -> str:
        found = self.peek()
        if not found or found not in chars:
            shown = repr(found) if found else "the end of the file"
            wanted = " or ".join(repr(c) for c in chars)
            raise self.error(self.pos, f"not valid JSON: {wanted} expected {where}, found {shown}.")
        self.pos += 1
        return found

    def value(self, where: str) -> Any:
        """Decode the next JSON value, reading on until it is whole."""
        self.peek()
        want = _PIECE
        while True:
            try:
                value, end = _DECODER.raw_decode(self.text, self.pos)
            except json.JSONDecodeError as exc:
                if self.eof:
                    raise self.error(exc.pos, f"not valid JSON {where} ({exc.msg}).") from None
                if len(self.text) - self.pos > self.max_chars:
                    raise self._too_large(where) from None
                self.more(want)
                want *= 2  # each retry decodes from the start: grow geometrically
                continue
            except RecursionError:
                raise InputError.at(
                    self.name, None, None, f"the JSON {where} nests too deeply to read."
                ) from None
            if end - self.pos > self.max_chars:
                raise self._too_large(where)
            # A number cut at the end of a piece decodes as a shorter number: read on first.
            if end == len(self.text) and not self.eof:
                self.more()
                continue
            self.pos = end
            return value

    def _too_large(self, where: str) -> InputError:
        return InputError.at(
            self.name,
            None,
            None,
            f"the JSON value {where} is longer than the bound of {self.max_chars} characters "
            "(read option max_sample_bytes); raise it if the log is yours and this large.",
        )


def iter_object(
    raw: IO[bytes], name: str, stream_key: str, *, max_bytes: int
) -> Iterator[tuple[Any, Any]]:
    """``(key, value)`` for each member of the top-level object in ``raw``.

    The list under ``stream_key`` is not yielded as one value: each of its elements is yielded
    as ``(ELEMENT, element)`` in its place (a ``null`` there yields nothing).

    Raises:
        InputError: the text is not one JSON object, or a value exceeds ``max_bytes``.
    """
    buf = _Buffer(raw, name, max_bytes)
    if buf.peek() == "[":
        raise InputError.at(name, 1, None, "an inspect_ai JSON log holds one object, not a list.")
    buf.expect("{", "at the start of the file")
    if buf.peek() == "}":
        buf.pos += 1
        return
    while True:
        key = buf.value("for a key of the top-level object")
        if not isinstance(key, str):
            raise InputError.at(name, None, None, "not valid JSON: a key must be a string.")
        buf.expect(":", f"after the key {key!r}")
        if key == stream_key and buf.peek() == "[":
            buf.pos += 1
            index = 0
            if buf.peek() == "]":
                buf.pos += 1
            else:
                while True:
                    index += 1
                    yield ELEMENT, buf.value(f"of {stream_key} element {index}")
                    if buf.expect(",]", f"after {stream_key} element {index}") == "]":
                        break
        else:
            yield key, buf.value(f"of {key!r}")
        if buf.expect(",}", f"after the value of {key!r}") == "}":
            break
    if buf.peek():
        raise InputError.at(name, None, None, "not valid JSON: text after the top-level object.")
