"""A pytest fixture for model-regression tests: ``itemscore_gate``.

Load it as a plugin in the ``conftest.py`` at the root of the tests::

    pytest_plugins = ["itemscore.pytest_plugin"]

and any test can ask for it::

    def test_candidate_is_no_worse(itemscore_gate):
        # 1,000 items scored 0/1: the sequence's half-width is then about 0.097, the
        # smallest margin they can decide; 0.12 passes a candidate losing at most ~0.02.
        itemscore_gate("baseline/results.json", "candidate/results.json",
                       metric="exact_match", margin=0.12)

The fixture runs :func:`itemscore._gate.gate` (the anytime-valid sequential gate of
``itemscore gate``) and fails the test when the candidate is worse by more than ``margin``
(a margin below the sequence's half-width at the run's size can never pass: the message of
an inconclusive gate says which margin the pairs can decide, and how many pairs yours needs);
when the items cannot tell yet, it fails too (``inconclusive="fail"``, the default: a gate
that cannot tell has not shown the model is fine), or skips the test (``"skip"``). It
returns the :class:`~itemscore._gate.GateResult`. (It is not registered through the
``pytest11`` entry point: pytest would then rewrite every module of itemscore for
assertions in every project that has itemscore installed.)
"""

from __future__ import annotations

from collections.abc import Callable
from os import PathLike
from typing import TYPE_CHECKING, Literal

import pytest

if TYPE_CHECKING:
    from ._gate import GateResult
    from ._result import RunResult

__all__ = ["itemscore_gate"]


def _result(source: RunResult | str | PathLike[str]) -> RunResult:
    from ._result import RunResult

    return source if isinstance(source, RunResult) else RunResult.load_json(source)


@pytest.fixture
def itemscore_gate() -> Callable[..., GateResult]:
    """A function that gates a candidate run against a baseline run inside a test."""

    def check(
        baseline: RunResult | str | PathLike[str],
        candidate: RunResult | str | PathLike[str],
        *,
        metric: str,
        margin: float,
        confidence: float = 0.95,
        model: str | None = None,
        inconclusive: Literal["fail", "skip"] = "fail",
    ) -> GateResult:
        from ._gate import gate

        result = gate(
            _result(baseline), _result(candidate), metric=metric, margin=margin,
            confidence=confidence, model=model,
        )  # fmt: skip
        summary = (
            f"{metric}: gain {result.gain} in [{result.low}, {result.high}] over "
            f"{result.n_pairs} pairs, margin {margin}"
        )
        if result.verdict == "worse":
            pytest.fail(f"The candidate is worse than the baseline: {summary}.")
        if result.verdict == "inconclusive":
            message = f"The items cannot tell yet whether the candidate is worse: {summary}."
            note = result.margin_note()
            if note is not None:
                message += f" {note}"
            if inconclusive == "skip":
                pytest.skip(message)
            pytest.fail(message)
        return result

    return check
