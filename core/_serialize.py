"""Plain-JSON forms of the records, and back.

The shapes are stable: a saved ``results.json`` carries a schema name and version, and
:func:`check_schema` refuses files of another schema or a newer version.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._exceptions import ResultsFormatError
from ._gc import gc_paused
from ._records import ItemResult, ItemScore, Measurement, Status
from .inputs._convert import TEXT_ROLES

__all__ = [
    "SCHEMA",
    "SCHEMA_VERSION",
    "item_from_dict",
    "item_to_dict",
    "json_safe",
    "measurement_from_dict",
    "measurement_to_dict",
    "resolve_items",
    "score_from_dict",
    "score_to_dict",
]

#: The schema name written into every results file.
SCHEMA = "itemscore.results"
#: Bumped when the shape changes incompatibly. Version 2: ``"items"`` may refer to a file
#: (``{"file": "items.jsonl", "count": N, "sha256": ...}``) instead of listing the items.
SCHEMA_VERSION = 2


_STATUSES = {status.value: status for status in Status}


def json_safe(value: Any) -> Any:
    """``value`` with tuples as lists, enums as strings, and non-finite floats as ``None``."""
    if isinstance(value, Status):
        return value.value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if value is None or isinstance(value, (str, int, bool)):
        return value
    if hasattr(value, "item"):  # numpy scalars
        return json_safe(value.item())
    return str(value)


def score_to_dict(score: ItemScore) -> dict[str, Any]:
    """The JSON form of one score (``reason``/``extra`` left out when empty)."""
    out: dict[str, Any] = {"status": score.status.value, "value": score.value}
    if score.reason is not None:
        out["reason"] = score.reason
    if score.extra:
        out["extra"] = json_safe(score.extra)
    return out


def score_from_dict(label: str, data: Mapping[str, Any]) -> ItemScore:
    """An :class:`ItemScore` from its JSON form."""
    status = data["status"]
    return ItemScore(
        metric=label,
        value=data.get("value"),
        # The member itself: Status("ok") costs more than the rest of the record.
        status=_STATUSES.get(status, status) if type(status) is str else status,
        reason=data.get("reason"),
        extra=data.get("extra") or {},
    )


def item_to_dict(item: ItemResult) -> dict[str, Any]:
    """The JSON form of one item with its scores."""
    out: dict[str, Any] = {
        "id": item.id,
        "output": item.output,
        "expected": list(item.expected) if item.expected is not None else None,
    }
    for name in TEXT_ROLES:  # the optional texts, written only when set
        value = getattr(item, name)
        if value is not None:
            out[name] = value
    if item.attempt is not None:
        out["attempt"] = item.attempt
    if item.metadata:
        out["metadata"] = json_safe(item.metadata)
    out["scores"] = {label: score_to_dict(s) for label, s in item.scores.items()}
    return out


def item_from_dict(data: Mapping[str, Any]) -> ItemResult:
    """An :class:`ItemResult` from its JSON form."""
    scores = {label: score_from_dict(label, s) for label, s in (data.get("scores") or {}).items()}
    return ItemResult(
        id=data["id"],
        output=data.get("output"),
        expected=data.get("expected"),
        input=data.get("input"),
        group=data.get("group"),
        model=data.get("model"),
        cluster=data.get("cluster"),
        attempt=data.get("attempt"),
        metadata=data.get("metadata") or {},
        scores=scores,
    )


def measurement_to_dict(m: Measurement) -> dict[str, Any]:
    """The JSON form of one measurement, groups included."""
    return {
        "key": m.key,
        "suite": m.suite,
        "metric": m.metric,
        "model": m.model,
        "value": m.value,
        "ci_low": m.ci_low,
        "ci_high": m.ci_high,
        "ci_method": m.ci_method,
        "confidence": m.confidence,
        "n": m.n,
        "counts": {s.value: c for s, c in m.counts.items()},
        "higher_is_better": m.higher_is_better,
        "reproducibility_class": m.reproducibility_class,
        "extra": json_safe(m.extra),
        "groups": {g: measurement_to_dict(gm) for g, gm in m.groups.items()},
        "error": m.error,
    }


def measurement_from_dict(data: Mapping[str, Any]) -> Measurement:
    """A :class:`Measurement` from its JSON form."""
    return Measurement(
        key=data["key"],
        suite=data["suite"],
        metric=data["metric"],
        model=data.get("model"),
        value=data.get("value"),
        ci_low=data.get("ci_low"),
        ci_high=data.get("ci_high"),
        ci_method=data.get("ci_method", "none"),
        confidence=data.get("confidence", 0.95),
        n=data.get("n", 0),
        counts=data.get("counts") or {},
        higher_is_better=data.get("higher_is_better", True),
        reproducibility_class=data.get("reproducibility_class", "deterministic"),
        extra=data.get("extra") or {},
        groups={g: measurement_from_dict(gm) for g, gm in (data.get("groups") or {}).items()},
        error=data.get("error"),
    )


def check_schema(data: Any, source: str) -> None:
    """Check that ``data`` is a results document this version can read.

    Raises:
        ResultsFormatError: another schema, a newer version, or not a JSON object.
    """
    if not isinstance(data, Mapping) or data.get("schema") != SCHEMA:
        raise ResultsFormatError(
            f'{source} is not an itemscore results file (no "schema": {SCHEMA!r}). '
            "Results files are written by RunResult.save_json or `itemscore score --out`."
        )
    version = data.get("version")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise ResultsFormatError(
            f"{source} has results schema version {version!r}; this itemscore reads versions "
            f"up to {SCHEMA_VERSION}. Upgrade itemscore to read it."
        )


def _read_items(items_path: Path) -> tuple[list[Any], str, ResultsFormatError | None]:
    """The JSON lines of an items file, its SHA-256, and what is wrong with its first bad line.

    Read line by line, hashing as it goes: the file's bytes are never held whole. Parsing
    stops at a bad line, hashing does not: the caller checks the hash first, which says more.
    Lines end at a line feed only: JSON text may hold U+2028 or U+0085, which
    ``str.splitlines`` splits on.

    Raises:
        OSError: the file cannot be read.
    """
    digest = hashlib.sha256()
    items: list[Any] = []
    bad: ResultsFormatError | None = None
    with open(items_path, "rb") as handle, gc_paused():  # many acyclic dicts: see _gc
        for number, line in enumerate(handle, 1):
            digest.update(line)
            if bad is not None or not line.strip():
                continue
            try:
                items.append(json.loads(line))
            except (json.JSONDecodeError, UnicodeDecodeError):
                bad = _bad_line(items_path, number, line.removesuffix(b"\n"))
    return items, digest.hexdigest(), bad


def _bad_line(items_path: Path, number: int, line: bytes) -> ResultsFormatError:
    """What is wrong with line ``number`` (without its line feed), at which column."""
    column, problem = None, "not valid JSON."
    try:
        json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        column = exc.colno if isinstance(exc, json.JSONDecodeError) else 1
        problem = f"not valid JSON ({exc})."
    return ResultsFormatError.at(str(items_path), number, column, problem)


def resolve_items(data: Any, path: Path) -> Any:
    """``data`` (a results document read from ``path``) with its items inline.

    A document written beside ``items.jsonl`` refers to it (``"items": {"file": ...,
    "count": ..., "sha256": ...}``); the file must sit in the same folder, hold ``count``
    lines and have that hash. Other documents are returned unchanged.

    Raises:
        ResultsFormatError: the reference names a path outside the folder, or the items file
            is missing, of another length or content, or not valid JSON lines.
    """
    if not isinstance(data, dict) or not isinstance(data.get("items"), Mapping):
        return data
    ref = data["items"]
    name = ref.get("file")
    if (
        not isinstance(name, str)
        or not name
        or name != os.path.basename(name)
        or name
        in (
            ".",
            "..",
        )
        or "\\" in name
        or "\0" in name
    ):
        raise ResultsFormatError(
            f"{path}: the items file {name!r} must be a file name in the same folder."
        )
    # Beside the file the link points to, so a report set switched meanwhile is not mixed.
    items_path = Path(os.path.realpath(path)).parent / name
    try:
        items, digest, bad = _read_items(items_path)
    except OSError as exc:
        raise ResultsFormatError(
            f"{path}: its items are in {name}, which cannot be read ({exc.strerror or exc}); "
            "copy results.json together with the items file."
        ) from None
    expected_hash = ref.get("sha256")
    if expected_hash is not None and digest != expected_hash:
        raise ResultsFormatError(
            f"{path}: {name} is not the items file this results file was written with "
            "(its SHA-256 differs)."
        )
    if bad is not None:
        raise bad
    if ref.get("count") is not None and ref["count"] != len(items):
        raise ResultsFormatError(
            f"{path}: {name} holds {len(items)} items, but the results file expects {ref['count']}."
        )
    return {**data, "items": items}
