"""The run table's score columns: each ``extra`` as JSON text, exactly as ``json`` writes it."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from itemscore._columns import encode_extras

_leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
_values = st.recursive(
    _leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
_extras = st.dictionaries(st.text() | st.integers(), _values, max_size=5)


def _reference(extra: dict[Any, Any]) -> str:
    return json.dumps(extra, ensure_ascii=False, allow_nan=False)


@given(st.lists(_extras, max_size=8))
def test_extras_are_encoded_as_json_dumps_writes_them(extras: list[dict[Any, Any]]) -> None:
    """Text equal to ``json.dumps`` (keys, separators, unicode, nesting), None when empty."""
    texts = encode_extras(extras).to_pylist()
    for extra, text in zip(extras, texts):
        if not extra:
            assert text is None
            continue
        assert text == _reference(extra)


def test_values_json_cannot_write_fall_back_to_safe_forms() -> None:
    """NaN, numpy scalars and other objects are made JSON-safe instead of failing the run."""
    texts = encode_extras(
        [{"x": math.nan, "y": 1.5}, {"n": np.int64(3), "f": np.float32(0.5)}, {"o": Ellipsis}]
    ).to_pylist()
    assert [json.loads(t) for t in texts] == [
        {"x": None, "y": 1.5},
        {"n": 3, "f": 0.5},
        {"o": "Ellipsis"},
    ]


def test_one_shared_mapping_is_encoded_equally_each_time() -> None:
    shared = {"matched": "Paris"}
    texts = encode_extras([shared, shared, {}, None]).to_pylist()
    assert texts == ['{"matched": "Paris"}'] * 2 + [None] * 2
