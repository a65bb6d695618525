"""The four states of a score, and the one status table every layer names them from.

At the bottom of the package: the records, the score columns, the reports and the notebook
display read the states here (``display/`` sits below the records).
"""

from __future__ import annotations

import enum

__all__ = ["CODE", "STATES", "STATE_NAMES", "Status"]


class Status(str, enum.Enum):
    """The four states of one metric's verdict on one item.

    ``ok`` and ``fail`` are *scored*: they count in every aggregate. ``skip`` (the metric does not
    apply to the item) and ``error`` (the metric raised) are excluded from every denominator.
    """

    OK = "ok"
    FAIL = "fail"
    SKIP = "skip"
    ERROR = "error"

    def __str__(self) -> str:
        return self.value

    @property
    def scored(self) -> bool:
        """Whether the state counts in aggregates (ok and fail do)."""
        return self is Status.OK or self is Status.FAIL


#: The one status table: the states by code, in :class:`Status` order. A score column stores
#: ``CODE[status]`` per item; reports, files and the viewer name the states from here.
STATES: tuple[Status, ...] = tuple(Status)
#: The state names by code (``"ok"``, ``"fail"``, ``"skip"``, ``"error"``).
STATE_NAMES: tuple[str, ...] = tuple(s.value for s in STATES)
#: The code of each state (plain strings too, so ``"ok"`` and ``Status.OK`` share one entry).
CODE: dict[Status | str, int] = {s: i for i, s in enumerate(STATES)}
