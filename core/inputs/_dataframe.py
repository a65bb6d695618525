"""A pandas DataFrame handed to ``score``: its rows read as a source, by position, in chunks."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

from .._exceptions import InputError
from ._source import Rows, RowSource

__all__ = ["frame_source", "is_dataframe"]

_CHUNK = 10_000


def is_dataframe(data: object) -> bool:
    """Whether ``data`` is a pandas DataFrame (checked without importing pandas)."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(data, pandas.DataFrame)


def frame_source(frame: Any, name: str = "DataFrame") -> RowSource:
    """The rows of a DataFrame, by position (the index is not read), in chunks.

    Raises:
        InputError: two columns with one name.
    """
    columns = [str(column) for column in frame.columns]
    seen: set[str] = set()
    for column in columns:
        if column in seen:
            raise InputError(
                f"{name}: two columns are named {column!r}; column names must be unique."
            )
        seen.add(column)
    return RowSource(name, "dataframe", columns, _frame_chunks(frame, columns, name), unit="row")


def _frame_chunks(frame: Any, columns: list[str], name: str) -> Iterator[Rows]:
    for start in range(0, len(frame), _CHUNK):
        part = frame.iloc[start : start + _CHUNK]
        records = part.to_dict("records")
        if list(part.columns) != columns:
            records = [dict(zip(columns, record.values())) for record in records]
        yield Rows(name, records, range(start + 1, start + len(records) + 1), "row")
