"""choice against inspect_ai's multiple_choice parsing and choice() scorer, and its own forms."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from typing import Any

import pytest

from itemscore import ItemResult, Status, score

inspect_scorer = pytest.importorskip("inspect_ai.scorer")
from inspect_ai.model import ModelOutput  # noqa: E402
from inspect_ai.solver import TaskState  # noqa: E402
from inspect_ai.solver._multiple_choice import (  # noqa: E402
    parse_answers,
    set_choices_based_on_generated_response,
)

CHOICES = ["Paris", "Berlin", "Madrid", "Rome", "Lisbon"]


def inspect_verdicts(cases: Sequence[tuple[str, list[str], int]]) -> list[bool]:
    """inspect's grading of (output, target letters, number of choices): parse, mark, score."""
    scorer = inspect_scorer.choice()

    async def one(output: str, target: list[str], n: int) -> Any:
        completion = ModelOutput.from_content(model="m", content=output)
        state = TaskState(
            model="m", sample_id=1, epoch=0, input="q", messages=[], output=completion,
            choices=CHOICES[:n],
        )  # fmt: skip
        answers = parse_answers(state, multiple_correct=len(target) > 1)
        set_choices_based_on_generated_response(state, answers)
        return await scorer(state, inspect_scorer.Target(target))

    async def run() -> list[Any]:
        return await asyncio.gather(*(one(*case) for case in cases))

    return [s.value == "C" for s in asyncio.run(run())]


def _case(rng: random.Random) -> tuple[str, list[str], int]:
    n = rng.randint(2, 5)
    letters = [chr(65 + i) for i in range(n)]
    target = sorted(rng.sample(letters, 1 if rng.random() < 0.7 else 2))
    given = target if rng.random() < 0.5 else sorted(rng.sample(letters, rng.randint(1, 2)))
    if rng.random() < 0.1:
        given = ["F"]  # beyond the choices
    joiner = rng.choice([", ", ",", " and ", " "]) if len(given) > 1 else ""
    body = joiner.join(rng.choice([g, g.lower(), f"({g})", f"**{g}**"]) for g in given)
    line = rng.choice(["ANSWER: {}", "ANSWER:{}", "answer: {}", "ANSWER: {}."]).format(body)
    reasoning = rng.choice(["", "Let me think.\n", "The capital is known.\n\n"])
    return reasoning + line, target, n


def test_equals_inspect_choice_on_400_cases() -> None:
    """On outputs in inspect's ANSWER: format, every verdict is inspect's choice() verdict."""
    rng = random.Random(2)
    cases = [_case(rng) for _ in range(400)]
    theirs = inspect_verdicts(cases)
    items = [
        ItemResult(id=str(i), output=o, expected=tuple(t), metadata={"choices": CHOICES[:n]})
        for i, (o, t, n) in enumerate(cases)
    ]
    ours = [i.scores["choice"].status is Status.OK for i in score(items, ["choice"]).items]
    assert ours == theirs
    assert 100 < sum(ours) < 300


@pytest.mark.parametrize(
    ("output", "expected", "ok"),
    [
        ("B", "B", True),
        ("(B)", "B", True),
        ("b)", "B", True),
        ("B.", "B", True),
        ("B) Berlin", "B", True),
        ("(C) Madrid is my pick", "C", True),
        ("I think the answer is (B), Berlin.", "B", True),
        ("The answer is B. No, the answer is C", "C", True),
        ("Berlin", "B", True),  # the choice's text
        ("A, C", "A, C", True),
        ("A and C", "AC", True),
        ("C, A", ["A", "C"], True),  # several valid answers are one required set
        ("A", "A, C", False),
        ("A, C", "A", False),
        ("F", "A", False),  # beyond the five choices
        ("I am not sure", "A", False),
        ("ANSWER: B", "1", True),  # option numbers count from 0 by default
        ("ANSWER: B", "Berlin", True),  # an answer key by text
    ],
)
def test_forms_beyond_inspect(output: str, expected: Any, ok: bool) -> None:
    """Bare letters, labels, "the answer is", choice texts; answer keys by letter, number, text."""
    item = ItemResult(id="1", output=output, expected=expected, metadata={"choices": CHOICES})
    verdict = score([item], ["choice"]).items[0].scores["choice"]
    assert (verdict.status is Status.OK) == ok, verdict


def test_states_reasons_and_options() -> None:
    """No letter is "no answer found"; a bad key is an error; index_base=1; no choices: A-Z."""
    rows = [
        ItemResult(id="1", output="no idea", expected="A", metadata={"choices": CHOICES}),
        ItemResult(id="2", output="A", expected="G", metadata={"choices": CHOICES}),
        ItemResult(id="3", output="Z", expected="Z"),
        ItemResult(id="4", output=None, expected="A"),
        ItemResult(id="5", output="A", expected="A", metadata={"choices": '["x", "y"]'}),
    ]
    scores = [i.scores["choice"] for i in score(rows, ["choice"]).items]
    assert (scores[0].status, scores[0].reason) == (Status.FAIL, "no answer found")
    assert scores[1].status is Status.ERROR
    assert "beyond the 5 choices" in (scores[1].reason or "")
    assert scores[2].status is Status.OK
    assert scores[3].status is Status.FAIL
    assert scores[4].status is Status.OK
    assert scores[4].extra == {"answer": "A", "expected": "A"}
    one_based = ItemResult(id="1", output="A", expected="1", metadata={"choices": CHOICES})
    verdict = score([one_based], [{"name": "choice", "index_base": 1}]).items[0].scores["choice"]
    assert verdict.status is Status.OK
