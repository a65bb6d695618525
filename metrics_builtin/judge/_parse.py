"""Turn a judge's reply into a verdict on the metric's scale.

The judge is asked for a JSON object ``{"score": ..., "reason": ...}``. Endpoints without
structured output, and small local models, often wrap it in a code fence, add prose around it,
or answer with the bare verdict; :func:`parse_verdict` accepts those, and nothing looser: a
reply that does not name a verdict on the scale is an error, never a guess.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import attrs

__all__ = ["SCALES", "Scale", "UnparseableReply", "parse_verdict"]


class UnparseableReply(ValueError):
    """Raised when a judge's reply holds no verdict on the scale; the message says why."""


@attrs.frozen
class Scale:
    """One of the judge's scales: its name and the lowest and highest verdict."""

    #: ``"pass_fail"``, ``"1-5"`` or ``"1-10"``.
    name: str
    #: The lowest verdict (0 for fail).
    low: int
    #: The highest verdict (1 for pass).
    high: int

    @property
    def pass_fail(self) -> bool:
        """Whether verdicts are pass (1) / fail (0)."""
        return self.name == "pass_fail"

    @property
    def points(self) -> list[int]:
        """Every verdict on the scale, lowest first."""
        return list(range(self.low, self.high + 1))

    def rescale(self, verdict: float) -> float:
        """``verdict`` mapped onto [0, 1]: low -> 0, high -> 1."""
        return (verdict - self.low) / (self.high - self.low)

    def describe(self) -> str:
        """How the prompt names the scale."""
        if self.pass_fail:
            return '"pass" or "fail"'
        return f"an integer from {self.low} (worst) to {self.high} (best)"


SCALES = {
    "pass_fail": Scale("pass_fail", 0, 1),
    "1-5": Scale("1-5", 1, 5),
    "1-10": Scale("1-10", 1, 10),
}

_PASS = frozenset({"pass", "passed", "true", "yes", "1", "correct"})
_FAIL = frozenset({"fail", "failed", "false", "no", "0", "incorrect"})
_SCORE_KEYS = ("score", "verdict", "rating", "grade", "result")
_REASON_KEYS = ("reason", "reasoning", "explanation", "rationale")
_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n?(.*?)\n?```$", re.DOTALL)
_LABELLED = re.compile(
    r"\b(?:score|verdict|rating|grade|result)\b\s*[:=]\s*\**\s*\"?([A-Za-z]+|-?\d+(?:\.\d+)?)",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")
_OUT_OF = re.compile(r"^(-?\d+(?:\.\d+)?)\s*(?:/|out of)\s*(\d+)$", re.IGNORECASE)
_SNIPPET = 80


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= _SNIPPET else flat[: _SNIPPET - 1] + "…")


def _find_object(text: str) -> dict[str, Any] | None:
    """The JSON object the reply holds: all of it, inside a code fence, or amid prose."""
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1).strip()
    candidates = [stripped]
    start, end = stripped.find("{"), stripped.rfind("}")
    if 0 <= start < end:
        candidates.append(stripped[start : end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _word(value: str) -> str:
    return value.strip().strip(".!*\"'`").strip().lower()


def _on_scale(value: Any, scale: Scale) -> float | None:
    """``value`` as a verdict on ``scale``, or ``None`` when it is not one."""
    if scale.pass_fail:
        if isinstance(value, bool):
            return 1.0 if value else 0.0
        if isinstance(value, (int, float)):
            return float(value) if value in (0, 1) else None
        if isinstance(value, str):
            word = _word(value)
            if word in _PASS:
                return 1.0
            if word in _FAIL:
                return 0.0
        return None
    number: float | None = None
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        text = _word(value)
        out_of = _OUT_OF.match(text)
        if out_of:
            if int(out_of.group(2)) != scale.high:
                return None
            text = out_of.group(1)
        if _NUMBER.match(text):
            number = float(text)
    if number is None or not math.isfinite(number) or not scale.low <= number <= scale.high:
        return None
    return number


def parse_verdict(text: str, scale: Scale) -> tuple[float, str | None]:
    """The verdict (on the scale's own units: 0/1 or low..high) and the judge's reason.

    Accepted: a JSON object with ``score`` (or ``verdict``, ``rating``, ``grade``) and
    ``reason`` (or ``reasoning``, ``explanation``), bare or in a code fence or amid prose; a
    reply that is just the verdict (``pass``, ``False``, ``4``, ``4/5``); a line
    ``Score: 4``. On the pass/fail scale a verdict is "pass"/"fail", true/false or 1/0 (also
    yes/no, correct/incorrect); on the numeric scales a number within the scale.

    Raises:
        UnparseableReply: no verdict on the scale can be read from ``text``.
    """
    if not text or not text.strip():
        raise UnparseableReply("the reply is empty")
    obj = _find_object(text)
    if obj is not None:
        lowered = {str(k).lower(): v for k, v in obj.items()}
        key = next((k for k in _SCORE_KEYS if k in lowered), None)
        if key is None:
            raise UnparseableReply(f"the JSON reply has no `score`: {_snippet(text)}")
        verdict = _on_scale(lowered[key], scale)
        if verdict is None:
            raise UnparseableReply(
                f"`{key}` ({lowered[key]!r}) is not {scale.describe()}: {_snippet(text)}"
            )
        reason = next((lowered[k] for k in _REASON_KEYS if k in lowered), None)
        return verdict, None if reason is None else str(reason)
    bare = _on_scale(text, scale)
    if bare is not None:
        return bare, None
    labelled = _LABELLED.findall(text)
    if len(labelled) == 1:
        verdict = _on_scale(labelled[0], scale)
        if verdict is not None:
            return verdict, text.strip()
    last_line = text.strip().splitlines()[-1]
    verdict = _on_scale(last_line, scale)
    if verdict is not None:
        return verdict, text.strip()
    raise UnparseableReply(f"no verdict ({scale.describe()}) found in {_snippet(text)}")
