"""``results.json``: the run (configuration, settings, provenance, measurements) and its items.

Beside ``items.parquet`` in one report set, the items are not written twice: ``"items"``
holds a reference, ``{"file": "items.parquet", "count": N, "sha256": "..."}``, which
:meth:`RunResult.load_json` follows (see :func:`itemscore._items_file.resolve_table`). When
the run's workers wrote ``items.parquet`` as a folder of parts, the reference names each part
in order instead of one hash: ``{"file": "items.parquet", "count": N, "parts": [{"file":
"part-00000.parquet", "rows": n, "sha256": "..."}, ...]}``. Alone, the file holds every item
inline, streamed one at a time as :meth:`RunResult.save_json` does.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection
from pathlib import Path
from typing import Any

import attrs

from .._result import RunResult
from . import items_jsonl, items_parquet
from ._files import open_report

__all__ = ["FILENAME", "head", "write"]

#: The file this format writes.
FILENAME = "results.json"

_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode


def head(result: RunResult) -> dict[str, Any]:
    """Everything ``results.json`` holds except the items, ``provenance`` included."""
    document = attrs.evolve(result, items=()).to_dict()
    document.pop("items", None)
    return document


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _parts(result: RunResult, folder: Path) -> list[dict[str, object]]:
    """The parts of the folder ``items.parquet``, in order, as the run's workers wrote them."""
    source = result.table.items
    parts = source.parts if source is not None and source.path == folder else None
    if parts is None:  # not this run's own folder: its files, read here
        import pyarrow.parquet as pq

        from ..engine._store import PartFile

        names = sorted(p.name for p in folder.iterdir() if not p.name.startswith((".", "_")))
        parts = tuple(
            PartFile(name, pq.read_metadata(folder / name).num_rows, _sha256(folder / name))
            for name in names
        )
    return [part.to_dict() for part in parts]


def write(result: RunResult, path: Path, names: Collection[str] = ()) -> None:
    """Write ``results.json``; with ``items.parquet`` in ``names`` (written first), refer to it."""
    document = head(result)
    items_file = path.parent / items_parquet.FILENAME
    with open_report(path) as handle:
        if items_parquet.FILENAME in names and (items_file.is_file() or items_file.is_dir()):
            document["items"] = {"file": items_parquet.FILENAME, "count": len(result.items)}
            if items_file.is_file():
                document["items"]["sha256"] = _sha256(items_file)
            else:
                document["items"]["parts"] = _parts(result, items_file)
            handle.write(_encode(document))
            return
        text = _encode({**document, "items": []})
        handle.write(text[: -len("[]}")] + "[")
        # The lines of items.jsonl (read once, in order, from the score columns), joined
        # with ", " in chunks instead of line breaks.
        chunk: list[str] = []
        for line in items_jsonl.iter_lines(result):
            chunk.append(line[:-1])
            if len(chunk) >= 4096:
                handle.write(", ".join(chunk) + ", ")
                chunk.clear()
        handle.write(", ".join(chunk) + "]}")
