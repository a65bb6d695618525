"""``items.jsonl`` written while a run scores: in this process, or in a process of its own.

A run hands each scored chunk to :meth:`ItemsStream.write`. :class:`InlineItems` encodes the
lines here. :class:`BackgroundItems` serves a large streamed run: a spawned process receives
each chunk as the compressed blocks the items are packed in
(:meth:`~itemscore._packed.PackedItems.blocks_between`) plus the chunk's score columns, and
does the unpacking, encoding and writing on another core while this process scores the next
chunk. A full pipe makes this process wait, so memory stays bounded when the writer is slower.

The writer is a new Python process, not a fork: threads of this process (a progress bar) are
never copied into it. If it fails, :meth:`ItemsStream.close` raises with its message; if it
dies, with its exit status.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

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
    """Write the lines in a process of its own, from the packed blocks of ``source``.

    The process runs ``python -m itemscore.reports._items_stream PATH`` with this Python: no
    fork (threads of this process stay here) and no re-import of the caller's main module (a
    script without a ``__main__`` guard works). Each chunk goes down its standard input as a
    length-prefixed pickle; chunks whose items are not whole blocks of ``source`` are encoded
    here and sent as text. Its standard output gives the count of lines written, or the error.
    """

    def __init__(self, path: Path, source: PackedItems) -> None:
        import itemscore

        package_root = str(Path(itemscore.__file__).resolve().parents[1])
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
        self._source = source
        self._offset = 0
        self._process = subprocess.Popen(
            [sys.executable, "-m", __name__, os.fspath(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            bufsize=0,  # a write to a writer that has stopped fails at once
        )

    def write(self, items: Sequence[ItemResult], columns: Mapping[str, ScoreColumn]) -> None:
        start, self._offset = self._offset, self._offset + len(items)
        blocks = self._source.blocks_between(start, self._offset)
        if blocks is None:
            from .items_jsonl import chunk_text

            message: Any = ("text", chunk_text(items, list(columns.values())))
        else:
            message = ("blocks", blocks, list(columns.values()))
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        self._send(len(data).to_bytes(8, "little") + data)

    def _send(self, data: bytes) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        view = memoryview(data)
        try:
            while view:  # an unbuffered pipe may take part of it
                view = view[stdin.write(view) or 0 :]
        except OSError:  # its end of the pipe is closed: it stopped
            self._fail()

    def _fail(self) -> NoReturn:
        reason = self._answer()
        raise ItemscoreError(f"Writing items.jsonl failed: {reason}")

    def _answer(self) -> str:
        """Wait for the process to end; its answer (``"ok N"`` or why it failed)."""
        out, err = self._process.communicate()  # closes its standard input first
        answer = out.decode(errors="replace").strip()
        if answer:
            return answer
        if err.strip():
            return err.decode(errors="replace").strip().splitlines()[-1]
        return f"its process ended with status {self._process.returncode}"

    def close(self) -> None:
        self._send((0).to_bytes(8, "little"))
        answer = self._answer()
        if answer != f"ok {self._offset}":
            raise ItemscoreError(f"Writing items.jsonl failed: {answer}")

    def abort(self) -> None:
        if self._process.poll() is None:
            self._process.kill()
        self._process.communicate()


def _serve(path: str) -> int:  # pragma: no cover - runs in the writer process
    """The writer process: chunks in on standard input until an empty one, lines out."""
    from .items_jsonl import chunk_text

    source = sys.stdin.buffer
    count = 0
    try:
        with open(path, "wb") as handle:
            while size := int.from_bytes(source.read(8), "little"):
                message = pickle.loads(source.read(size))
                if message[0] == "text":
                    text = message[1]
                else:
                    text = chunk_text(unpack_items(message[1]), message[2])
                handle.write(text.encode("utf-8", "backslashreplace"))
                count += text.count("\n")  # one per item: JSON escapes line breaks
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises
        print(describe_exception(exc), flush=True)
        return 1
    print(f"ok {count}", flush=True)
    return 0


def open_items_stream(path: Path, source: Sequence[ItemResult] | None) -> ItemsStream:
    """The stream for a run over ``source``: in the background for large packed runs."""
    if isinstance(source, PackedItems) and len(source) >= BACKGROUND_FROM:
        return BackgroundItems(path, source)
    return InlineItems(path)


if __name__ == "__main__":  # pragma: no cover - the writer process
    raise SystemExit(_serve(sys.argv[1]))
