"""includes against inspect_ai's includes() scorer, called offline, and its own options."""

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


def _state(index: int, output: str) -> Any:
    completion = ModelOutput.from_content(model="m", content=output)
    return TaskState(model="m", sample_id=index, epoch=0, input="q", messages=[], output=completion)


def inspect_verdicts(scorer: Any, cases: Sequence[tuple[str, Sequence[str]]]) -> list[bool]:
    """inspect's verdict (CORRECT or not) on each (output, targets) case."""

    async def run() -> list[Any]:
        states = [_state(i, output) for i, (output, _) in enumerate(cases)]
        return await asyncio.gather(
            *(scorer(s, inspect_scorer.Target(list(t))) for s, (_, t) in zip(states, cases))
        )

    return [s.value == "C" for s in asyncio.run(run())]


ANSWERS = ["Paris", "new york", "42", "Eiffel Tower", "C++", "the cat", "Straße", "e", "ΑΘΗΝΑ"]
FILLERS = ["The answer is", "I think", "maybe", "definitely not", "It's", "—", "so:", "\n"]


def _case(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    targets = tuple(rng.sample(ANSWERS, rng.randint(1, 2)))
    words = [rng.choice(FILLERS) for _ in range(rng.randint(0, 3))]
    if rng.random() < 0.6:
        found = rng.choice(targets if rng.random() < 0.6 else ANSWERS)
        found = rng.choice([found, found.upper(), found.lower(), found.title()])
        words.insert(rng.randint(0, len(words)), found)
    return " ".join(words), targets


def test_equals_inspect_includes_on_400_cases() -> None:
    """With nfkc and trimming off, every verdict is inspect's includes() verdict."""
    rng = random.Random(11)
    cases = [_case(rng) for _ in range(400)]
    theirs = inspect_verdicts(inspect_scorer.includes(), cases)
    items = [ItemResult(id=str(i), output=o, expected=t) for i, (o, t) in enumerate(cases)]
    spec = {"name": "includes", "nfkc": False, "trim_punctuation": False}
    ours = [i.scores["includes"].status is Status.OK for i in score(items, [spec]).items]
    assert ours == theirs
    assert 100 < sum(ours) < 300
    # The defaults add NFKC and trimming, which find the same answers in these outputs.
    defaults = [i.scores["includes"].status is Status.OK for i in score(items, ["includes"]).items]
    assert defaults == theirs


@pytest.mark.parametrize(
    ("output", "answer", "whole_words", "ok"),
    [
        ("The capital is Paris.", "paris", False, True),
        ("concatenate", "cat", False, True),
        ("concatenate", "cat", True, False),
        ("a cat, sitting", "Cat", True, True),
        ("答えはパリです", "パリ", True, True),
        ("\uff30\uff21\uff32\uff29\uff33", "paris", False, True),  # NFKC: full-width PARIS
        ("It is Paris", '"Paris."', False, True),  # the answer's quotes and period trimmed
        ("nothing here", "paris", False, False),
    ],
)
def test_containment_rules(output: str, answer: str, whole_words: bool, ok: bool) -> None:
    """Containment after normalisation, whole words optional."""
    item = ItemResult(id="1", output=output, expected=answer)
    verdict = score([item], [{"name": "includes", "whole_words": whole_words}]).items[0]
    assert (verdict.scores["includes"].status is Status.OK) == ok


def test_empty_answer_is_an_error_and_failed_requests_fail() -> None:
    """An answer that normalises to nothing cannot be looked for; a failed request fails."""
    items = [
        ItemResult(id="1", output="anything", expected="..."),
        ItemResult(id="2", output=None, expected="paris"),
        ItemResult(id="3", output="Paris!", expected="paris"),
    ]
    scores = [i.scores["includes"] for i in score(items, ["includes"]).items]
    assert scores[0].status is Status.ERROR
    assert "normalises to nothing" in (scores[0].reason or "")
    assert scores[1].status is Status.FAIL
    assert scores[2].status is Status.OK
    assert scores[2].extra["matched"] == "paris"
