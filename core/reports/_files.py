"""Opening report files, and saying which one failed.

Text reports are UTF-8, without newline translation, lone surrogates escaped, never fatal.
A writer that fails on the disk (full, over quota, over a size limit, not writable) is reported
with the report and the folder named (:func:`writing`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from .._exceptions import ItemscoreError
from ..display._text import printable

__all__ = ["ReportWriteError", "open_report", "writing"]


class ReportWriteError(ItemscoreError, OSError):
    """Raised when the disk refuses a report (``errno`` is the system's).

    The report set being written is discarded; the output folder keeps its previous set.
    """


def open_report(path: Path) -> TextIO:
    r"""Open ``path`` for writing a text report.

    Lone surrogates (which UTF-8 cannot encode) are written as ``\udXXX``: inside a JSON
    string that is the very escape JSON uses, so the text reads back unchanged; elsewhere it
    shows the character visibly instead of crashing the writer.
    """
    return open(path, "w", encoding="utf-8", errors="backslashreplace", newline="")


@contextlib.contextmanager
def writing(filename: str, folder: Path) -> Iterator[None]:
    """Turn an ``OSError`` of the writer of ``filename`` into one that names it and the folder.

    ``folder`` is the set being written (``DIR/.itemscore/set-*``).

    Raises:
        ReportWriteError: the writer raised an ``OSError``.
    """
    try:
        yield
    except ReportWriteError:
        raise
    except OSError as exc:
        out = folder.parent.parent
        why = exc.strerror or str(exc) or type(exc).__name__
        error = ReportWriteError(
            f"Writing the report {printable(filename)} into {printable(os.fspath(out))} failed: "
            f"{printable(why)} (writing {printable(os.fspath(folder / filename))}). The new "
            f"reports were removed; {printable(os.fspath(out))} shows the reports it showed "
            "before."
        )
        error.errno = exc.errno  # strerror and filename left unset: str() is the message
        raise error from exc
