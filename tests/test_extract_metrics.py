"""``extract`` in includes, numeric_match, choice, chrf and ter: the answer found is what is scored.

Each test scores the same outputs with and without ``extract`` and checks that the verdict or
score follows the extracted answer, against the reference scorer applied to the answer
extracted here with Python's own ``re`` (inspect_ai's ``includes()`` and ``match(numeric=True)``,
sacrebleu's sentence and corpus scores).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

import pytest

from itemscore import ItemResult, Status, score


def _inspect_verdicts(scorer: Any, cases: Sequence[tuple[str, Sequence[str]]]) -> list[bool]:
    """inspect_ai's verdict (CORRECT or not) of ``scorer`` on each (output, targets) case."""
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import Target
    from inspect_ai.solver import TaskState

    async def run() -> list[Any]:
        states = [
            TaskState(
                model="m",
                sample_id=i,
                epoch=0,
                input="q",
                messages=[],
                output=ModelOutput.from_content(model="m", content=output),
            )
            for i, (output, _) in enumerate(cases)
        ]
        return await asyncio.gather(
            *(scorer(s, Target(list(t))) for s, (_, t) in zip(states, cases))
        )

    return [s.value == "C" for s in asyncio.run(run())]


FINAL = r"Final answer: (.+)"


def test_includes_looks_for_the_answer_only_in_the_extracted_text() -> None:
    """The raw output mentions the target while reasoning; the final answer decides."""
    scorer = pytest.importorskip("inspect_ai.scorer")
    cases = [
        ("Paris came to mind, but no. Final answer: Lyon", ("Paris",)),
        ("Not Lyon. Final answer: it is Paris", ("Paris",)),
        ("Rome, Paris or Lyon?", ("Paris",)),  # no final answer: fail, not the raw text
    ]
    items = [ItemResult(id=str(i), output=o, expected=t) for i, (o, t) in enumerate(cases)]
    plain = [i.scores["includes"] for i in score(items, ["includes"]).items]
    found = score(items, [{"name": "includes", "extract": FINAL}]).items
    extracted = [i.scores["includes"] for i in found]
    assert [s.status for s in plain] == [Status.OK, Status.OK, Status.OK]
    assert [s.status for s in extracted] == [Status.FAIL, Status.OK, Status.FAIL]
    answers = [re.findall(FINAL, o) for o, _ in cases]
    assert [s.extra["extracted"] for s in extracted] == [a[0] if a else None for a in answers]
    assert extracted[2].reason == "no answer found"
    # inspect's includes() on the answers found gives the same verdicts.
    theirs = _inspect_verdicts(
        scorer.includes(), [(a[0], t) for a, (_, t) in zip(answers, cases) if a]
    )
    assert [s.status is Status.OK for s in extracted[:2]] == theirs


def test_numeric_match_reads_the_number_of_the_extracted_answer() -> None:
    """By default the last number of the output counts; with answer_is, the stated answer."""
    scorer = pytest.importorskip("inspect_ai.scorer")
    cases = [
        ("There are 12 steps; the answer is 7. Check: 3 + 4 = 7, over 12 steps.", ("7",)),
        ("The answer is 1,250 apples, or 1250 in all? I said 5 before.", ("1250",)),
    ]
    items = [ItemResult(id=str(i), output=o, expected=t) for i, (o, t) in enumerate(cases)]
    plain = [i.scores["numeric_match"] for i in score(items, ["numeric_match"]).items]
    spec = {"name": "numeric_match", "extract": r"answer is ([\d,.]+)"}
    extracted = [i.scores["numeric_match"] for i in score(items, [spec]).items]
    assert [s.status for s in plain] == [Status.FAIL, Status.FAIL]  # 12 and 5: the last numbers
    assert [s.extra["number"] for s in plain] == ["12", "5"]
    assert [s.status for s in extracted] == [Status.OK, Status.OK]
    answers = [re.findall(r"answer is ([\d,.]+)", o)[0] for o, _ in cases]
    assert [s.extra["extracted"] for s in extracted] == answers
    # inspect's numeric match agrees on both: the raw outputs fail, the answers found pass.
    numeric = scorer.match(numeric=True)
    assert _inspect_verdicts(numeric, cases) == [False, False]
    assert _inspect_verdicts(
        numeric, [(a.rstrip("."), t) for a, (_, t) in zip(answers, cases)]
    ) == [
        True,
        True,
    ]


def test_choice_reads_the_letters_of_the_extracted_answer() -> None:
    """An ANSWER line says B; the boxed final answer says D: with extract, D is graded."""
    choices = ["Paris", "Berlin", "Madrid", "Rome"]
    outputs = [
        "ANSWER: B\nOn reflection, the right one is \\boxed{D}",
        "ANSWER: B\nOn reflection, \\boxed{B} after all",
        "ANSWER: D",  # no box: no answer found, whatever the ANSWER line says
    ]
    items = [
        ItemResult(id=str(i), output=o, expected="D", metadata={"choices": choices})
        for i, o in enumerate(outputs)
    ]
    plain = [i.scores["choice"] for i in score(items, ["choice"]).items]
    boxed = [
        i.scores["choice"] for i in score(items, [{"name": "choice", "extract": "boxed"}]).items
    ]
    assert [(s.status, s.extra["answer"]) for s in plain] == [
        (Status.FAIL, "B"),
        (Status.FAIL, "B"),
        (Status.OK, "D"),
    ]
    assert [(s.status, s.extra["answer"]) for s in boxed] == [
        (Status.OK, "D"),
        (Status.FAIL, "B"),
        (Status.FAIL, None),
    ]
    assert [s.extra["extracted"] for s in boxed] == ["D", "B", None]
    assert boxed[2].reason == "no answer found"


@pytest.mark.parametrize("name", ["chrf", "ter"])
def test_chrf_and_ter_score_the_extracted_translation(name: str) -> None:
    """Scored text is the translation after "Translation:", as sacrebleu scores it alone."""
    sacrebleu = pytest.importorskip("sacrebleu")
    sentence = {"chrf": sacrebleu.sentence_chrf, "ter": sacrebleu.sentence_ter}[name]
    corpus = {"chrf": sacrebleu.corpus_chrf, "ter": sacrebleu.corpus_ter}[name]
    refs = ["the cat sat on the mat", "it is raining in the city today", "a small red house"]
    outputs = [
        "Sure! Here it is.\nTranslation: the cat sat on a mat",
        "Translation: it rains in the city today",
        "I cannot translate this.",  # no translation: fail, an empty hypothesis
    ]
    items = [
        ItemResult(id=str(i), output=o, expected=r) for i, (o, r) in enumerate(zip(outputs, refs))
    ]
    pattern = r"Translation: (.*)"
    plain = score(items, [{"name": name, "n_bootstrap": 1}])
    found = score(items, [{"name": name, "n_bootstrap": 1, "extract": pattern}])
    hyps = [m[0] if (m := re.findall(pattern, o)) else "" for o in outputs]
    for item, hyp, ref in zip(found.items, hyps, refs):
        s = item.scores[name]
        assert s.value == pytest.approx(sentence(hyp, [ref]).score, abs=1e-9)
        assert s.extra["extracted"] == (hyp or None)
    for item, output, ref in zip(plain.items, outputs, refs):
        assert item.scores[name].value == pytest.approx(sentence(output, [ref]).score, abs=1e-9)
    assert found.items[2].scores[name].status is Status.FAIL
    assert found.items[2].scores[name].reason == "no answer found"
    with_extract = found.measurements[f"default.{name}"].value
    without = plain.measurements[f"default.{name}"].value
    assert with_extract == pytest.approx(corpus(hyps, [refs]).score, abs=1e-9)
    assert without == pytest.approx(corpus(outputs, [refs]).score, abs=1e-9)
    assert with_extract != pytest.approx(without, abs=1.0)  # the extraction changes the score
