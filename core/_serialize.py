"""Plain-JSON forms of the records, and back.

The shapes are stable: a saved ``results.json`` carries a schema name and version, and
:func:`check_schema` refuses files of another schema or a newer version.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from ._exceptions import ResultsFormatError
from ._records import ItemResult, ItemScore, Measurement, Status

__all__ = [
    "SCHEMA",
    "SCHEMA_VERSION",
    "check_schema",
    "item_from_dict",
    "item_to_dict",
    "json_safe",
    "measurement_from_dict",
    "measurement_to_dict",
    "read_document",
    "score_from_dict",
    "score_to_dict",
]

#: The schema name written into every results file.
SCHEMA = "itemscore.results"
#: Bumped when the shape changes incompatibly. Version 2: ``"items"`` may refer to a file
#: (``{"file": "items.parquet", "count": N, "sha256": ...}``; ``items.jsonl`` in sets written
#: before the Parquet store) instead of listing the items. Measurements carry
#: ``aggregation`` (read as ``"custom"`` when a file has none).
SCHEMA_VERSION = 2


_STATUSES = {status.value: status for status in Status}
#: The optional text fields of an item, written only when set.
TEXT_ROLES = ("input", "group", "model", "cluster")


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
    """The JSON form of one measurement, groups included: every field, in the record's order."""
    out = {field.name: getattr(m, field.name) for field in attrs.fields(Measurement)}
    out["counts"] = {s.value: c for s, c in m.counts.items()}
    out["extra"] = json_safe(m.extra)
    out["groups"] = {g: measurement_to_dict(gm) for g, gm in m.groups.items()}
    out["derived"] = {label: measurement_to_dict(d) for label, d in m.derived.items()}
    return out


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
        aggregation=data.get("aggregation", "custom"),
        extra=data.get("extra") or {},
        groups={g: measurement_from_dict(gm) for g, gm in (data.get("groups") or {}).items()},
        error=data.get("error"),
        display_name=data.get("display_name"),
        unit=data.get("unit"),
        derived={k: measurement_from_dict(d) for k, d in (data.get("derived") or {}).items()},
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


def read_document(path: Path) -> dict[str, Any]:
    """The results document at ``path``, checked to be one this version can read.

    Raises:
        ResultsFormatError: not valid JSON, not UTF-8, or not a results document
            (:func:`check_schema`).
        OSError: the file cannot be read.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ResultsFormatError.at(
            str(path), exc.lineno, exc.colno, f"not valid JSON ({exc.msg})."
        ) from None
    except UnicodeDecodeError as exc:
        raise ResultsFormatError(
            f"{path}: not UTF-8 text (byte {exc.start}); is it a results.json?"
        ) from None
    check_schema(data, str(path))
    return data  # type: ignore[no-any-return] # check_schema: a JSON object
