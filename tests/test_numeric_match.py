"""numeric_match against inspect_ai's match(numeric=True), and the numbers it reads beyond it."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import pytest

from itemscore import ItemResult, OptionError, Status, score
from itemscore.metrics_builtin._numbers import find_numbers

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


VALUES = [
    Fraction(42),
    Fraction(-7),
    Fraction(1234567),
    Fraction(7, 2),
    Fraction(1200),
    Fraction(0),
]
VALUES += [Fraction(-1, 4), Fraction(10**6), Fraction(3)]
FILLERS = ["So", "the", "total", "is", "answer:", "about", "apples", "we", "get", "\n", "=>"]


def _written(value: Fraction, rng: random.Random) -> str:
    """``value`` in one of the forms both grammars read the same way."""
    text = str(int(value)) if value.denominator == 1 else f"{float(value):g}"
    if value.denominator == 1 and abs(value) >= 1000 and rng.random() < 0.5:
        text = f"{int(value):,}"
    if value.denominator == 1 and rng.random() < 0.2:
        text += ".00"
    if value >= 0 and rng.random() < 0.2:
        text = "$" + text
    decoration = rng.random()
    if decoration < 0.1:
        text = f"**{text}**"
    elif decoration < 0.2:
        text = f"({text})"
    elif decoration < 0.3:
        text += "."
    elif decoration < 0.35:
        text += "!"
    return text


def _case(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    target = rng.choice(VALUES)
    words = [rng.choice(FILLERS) for _ in range(rng.randint(0, 4))]
    numbers = [rng.choice(VALUES) for _ in range(rng.randint(0, 2))]
    if rng.random() < 0.5:
        numbers.append(target)
    for number in numbers:
        words.insert(rng.randint(0, len(words)), _written(number, rng))
    if rng.random() < 0.5:
        words.append(rng.choice(FILLERS))
    answer = _written(target, rng).strip("*()!.") or "0"
    return " ".join(words), (answer,)


def test_equals_inspect_match_numeric_on_400_cases() -> None:
    """On outputs both grammars read alike, every verdict is inspect's match(numeric=True)."""
    rng = random.Random(5)
    cases = [_case(rng) for _ in range(400)]
    theirs = inspect_verdicts(inspect_scorer.match(numeric=True), cases)
    items = [ItemResult(id=str(i), output=o, expected=t) for i, (o, t) in enumerate(cases)]
    for spec in ("numeric_match", {"name": "numeric_match", "significant_digits": 5}):
        ours = [i.scores["numeric_match"].status is Status.OK for i in score(items, [spec]).items]
        assert ours == theirs
    assert 100 < sum(theirs) < 300


def test_significant_digits_round_as_inspect_does() -> None:
    """inspect compares at five significant digits; significant_digits=5 does the same."""
    cases = [
        ("pi is 3.14159", ("3.1416",)),
        ("pi is 3.14159", ("3.1415",)),
        ("it is 123456", ("123460",)),
        ("it is 0.000123456", ("0.00012346",)),
        ("2.5", ("2.50001",)),
    ]
    theirs = inspect_verdicts(inspect_scorer.match(numeric=True), cases)
    items = [ItemResult(id=str(i), output=o, expected=t) for i, (o, t) in enumerate(cases)]
    spec = {"name": "numeric_match", "significant_digits": 5}
    ours = [i.scores["numeric_match"].status is Status.OK for i in score(items, [spec]).items]
    assert ours == theirs == [True, False, True, True, True]
    exact = [
        i.scores["numeric_match"].status is Status.OK for i in score(items, ["numeric_match"]).items
    ]
    assert exact == [False] * 5


@pytest.mark.parametrize(
    ("output", "answer", "ok"),
    [
        ("The discount is 60%.", "60", True),  # a percentage is the number written
        ("The discount is 60%.", "60%", True),
        ("It weighs 5kg", "5", True),  # units glued to the number
        ("Half of it: 3/4", "0.75", True),  # fractions
        ("½ cup", "1/2", True),  # NFKC: 1, U+2044 FRACTION SLASH, 2
        ("x=-42", "-42", True),
        ("5-3 = 2", "2", True),
        ("2023-05-01", "-1", False),  # a hyphen after a digit is no sign
        ("\u22127 degrees", "-7", True),  # U+2212 MINUS SIGN
        ("1,2345", "2345", True),  # not a thousands separator: two numbers
        ("0.1 + 0.2 = 0.30", "0.3", True),  # exact decimal values, no float error
        ("I don't know", "3", False),
    ],
)
def test_numbers_beyond_inspect(output: str, answer: str, ok: bool) -> None:
    """Fractions, percentages, glued units and signs inside expressions are read."""
    item = ItemResult(id="1", output=output, expected=answer)
    verdict = score([item], ["numeric_match"]).items[0].scores["numeric_match"]
    assert (verdict.status is Status.OK) == ok


def test_pick_tolerances_and_states() -> None:
    """first / last / a pattern choose the number; tolerances widen equality; states."""
    text = "First 10, then 20, finally #### 30 (not 40)"
    cases = {"last": False, "first": False, r"#### (\S+)": True}
    for pick, ok in cases.items():
        item = ItemResult(id="1", output=text, expected="30")
        verdict = score([item], [{"name": "numeric_match", "pick": pick}]).items[0]
        assert (verdict.scores["numeric_match"].status is Status.OK) == ok, pick
    near = ItemResult(id="1", output="about 3.14", expected="3.14159")
    assert (
        score([near], [{"name": "numeric_match", "abs_tol": 0.01}])
        .items[0]
        .scores["numeric_match"]
        .status
        is Status.OK
    )
    assert (
        score([near], [{"name": "numeric_match", "rel_tol": 1e-4}])
        .items[0]
        .scores["numeric_match"]
        .status
        is Status.FAIL
    )
    rows = [
        ItemResult(id="1", output="no number", expected="3"),
        ItemResult(id="2", output="3", expected="three"),
        ItemResult(id="3", output=None, expected="3"),
    ]
    scores = [i.scores["numeric_match"] for i in score(rows, ["numeric_match"]).items]
    assert (scores[0].status, scores[0].reason) == (Status.FAIL, "no answer found")
    assert scores[1].status is Status.ERROR
    assert "not a single number" in (scores[1].reason or "")
    assert scores[2].status is Status.FAIL


@pytest.mark.parametrize(
    "options", [{"abs_tol": -1.0}, {"significant_digits": 0}, {"pick": "(unclosed"}]
)
def test_bad_options(options: dict[str, Any]) -> None:
    """Negative tolerances, zero digits and a broken pattern are refused before scoring."""
    with pytest.raises(OptionError):
        score(
            [ItemResult(id="1", output="1", expected="1")], [{"name": "numeric_match", **options}]
        )


def test_number_grammar_values() -> None:
    """Each number's exact value and written form."""
    numbers = find_numbers("Pay $1,234.50 or -3/4, or 2e-3; 60 % off")
    assert [(n.text, n.value, n.percent) for n in numbers] == [
        ("1234.50", Fraction(246900, 200), False),
        ("-3/4", Fraction(-3, 4), False),
        ("2e-3", Fraction(2, 1000), False),
        ("60%", Fraction(60), True),
    ]
