"""``items.jsonl`` written while a run scores: in this process, or in a process of its own.

A run hands each scored chunk to :meth:`ItemsStream.write`. :class:`InlineItems` encodes the
lines here. :class:`BackgroundItems` serves a large streamed run: a spawned process receives
each chunk as the compressed blocks the items are packed in
(:meth:`~itemscore._packed.PackedItems.blocks_between`) plus the chunk's score columns, and
does the unpacking, encoding and writing on another core while this process scores the next
chunk. A full pipe makes this process wait, so memory stays bounded when the writer is slower.

The child process is spawned (not forked), so threads of this process (a progress bar) are
never copied into it. If it fails, :meth:`ItemsStream.close` raises with its message; if it
dies, with its exit status.
"""

from __future__ import annotations

import multiprocessing
import pickle
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .._columns import ScoreColumn
from .._exceptions import ItemscoreError, describe_exception
from .._packed import PackedItems, unpack_items
from .._records import ItemResult

__all__ = ["BACKGROUND_FROM", "BackgroundItems", "InlineItems", "ItemsStream", "open_items_stream"]

#: From this many items on, a packed run's items.jsonl is written by a process of its own
#: (starting one costs a few tenths of a second).
BACKGROUND_FROM = 50_000


class ItemsStream:
    """Where a run's ``items.jsonl`` lines go, chunk by chunk."""

    def write(self, items: Sequence[ItemResult], columns: Mapping[str, ScoreColumn]) -> None:
        """Write the lines of one scored chunk (``columns``: every label, in order)."""
        raise NotImplementedError

    def close(self) -> None:
        """Finish the file.

        Raises:
            ItemscoreError: the file could not be written.
        """
        raise NotImplementedError

    def abort(self) -> None:
        """Stop writing; the file is left as it is (its report set is being discarded)."""
        raise NotImplementedError


class InlineItems(ItemsStream):
    """Encode and write the lines in this process."""

    def __init__(self, path: Path) -> None:
        from ._files import open_report

        self._handle = open_report(path)

    def write(self, items: Sequence[ItemResult], columns: Mapping[str, ScoreColumn]) -> None:
        from .items_jsonl import chunk_text

        self._handle.write(chunk_text(items, list(columns.values())))

    def close(self) -> None:
        self._handle.close()

    def abort(self) -> None:
        self._handle.close()


class BackgroundItems(ItemsStream):
    """Write the lines in a spawned process, from the packed blocks of ``source``.

    Chunks whose items are not whole blocks of ``source`` are encoded here and sent as text.
    """

    def __init__(self, path: Path, source: PackedItems) -> None:
        context = multiprocessing.get_context("spawn")
        self._source = source
        self._offset = 0
        self._conn, child = context.Pipe()
        self._process = context.Process(
            target=_serve, args=(child, str(path)), name="itemscore items.jsonl", daemon=True
        )
        self._process.start()
        child.close()

    def write(self, items: Sequence[ItemResult], columns: Mapping[str, ScoreColumn]) -> None:
        start, self._offset = self._offset, self._offset + len(items)
        blocks = self._source.blocks_between(start, self._offset)
        if blocks is None:
            from .items_jsonl import chunk_text

            message: Any = ("text", chunk_text(items, list(columns.values())))
        else:
            message = ("blocks", blocks, list(columns.values()))
        self._send(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))

    def _send(self, data: bytes) -> None:
        if self._conn.poll():  # the writer stopped early: it has said why
            self._fail()
        try:
            self._conn.send_bytes(data)
        except OSError:  # its end of the pipe is closed: it died
            self._fail()

    def _fail(self) -> None:
        reason = self._reason()
        self.abort()
        raise ItemscoreError(f"Writing items.jsonl failed: {reason}")

    def _reason(self) -> str:
        try:
            if self._conn.poll(5):
                answer = self._conn.recv()
                if answer[0] == "error":
                    return str(answer[1])
        except (EOFError, OSError):
            pass
        self._process.join(5)
        return f"its process ended with status {self._process.exitcode}"

    def close(self) -> None:
        try:
            self._conn.send_bytes(b"")
        except OSError:
            self._fail()
        try:
            answer = self._conn.recv()
        except (EOFError, OSError):
            self._fail()
        self._process.join()
        self._conn.close()
        if answer[0] != "done" or answer[1] != self._offset:
            raise ItemscoreError(f"Writing items.jsonl failed: {answer[1]}")

    def abort(self) -> None:
        if self._process.is_alive():
            self._process.kill()
        self._process.join()
        self._conn.close()


def _serve(conn: Any, path: str) -> None:  # pragma: no cover - runs in the spawned process
    """The writer process: chunks in, lines out, until an empty message; then its count."""
    from .items_jsonl import chunk_text

    count = 0
    try:
        with open(path, "wb") as handle:
            while data := conn.recv_bytes():
                message = pickle.loads(data)
                if message[0] == "text":
                    text = message[1]
                else:
                    text = chunk_text(unpack_items(message[1]), message[2])
                handle.write(text.encode("utf-8", "backslashreplace"))
                count += text.count("\n")  # one per item: JSON escapes line breaks
        conn.send(("done", count))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises
        conn.send(("error", describe_exception(exc)))
    finally:
        conn.close()


def open_items_stream(path: Path, source: Sequence[ItemResult] | None) -> ItemsStream:
    """The stream for a run over ``source``: in the background for large packed runs."""
    if isinstance(source, PackedItems) and len(source) >= BACKGROUND_FROM:
        return BackgroundItems(path, source)
    return InlineItems(path)
