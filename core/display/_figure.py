"""A matplotlib figure as PNG and SVG bytes that depend only on what it shows."""

from __future__ import annotations

import io
from typing import Any

__all__ = ["figure_files"]


def figure_files(fig: Any, salt: str) -> dict[str, bytes]:
    """``{"png": ..., "svg": ...}`` of ``fig``, the same bytes each time for the same data.

    Neither file holds a timestamp or the software's version, and the SVG's clip-path ids
    are hashed with ``salt`` rather than a per-process random one.
    """
    import matplotlib

    out = {}
    for fmt in ("png", "svg"):
        buffer = io.BytesIO()
        metadata: dict[str, Any] = {"Software": None} if fmt == "png" else {"Date": None}
        with matplotlib.rc_context({"svg.hashsalt": salt}):
            fig.savefig(buffer, format=fmt, dpi=120, metadata=metadata)
        out[fmt] = buffer.getvalue()
    return out
