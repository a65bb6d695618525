"""Tests for the ``extract`` option: lm-eval's regex filter on its own task patterns, presets."""

from __future__ import annotations

import ast
import random
from pathlib import Path
from typing import Any

import pytest

from itemscore import ItemResult, OptionError, Status, plan, score
from itemscore.metrics_builtin._extract import NO_ANSWER_FOUND, AnswerExtractor

lm_eval = pytest.importorskip("lm_eval")
from lm_eval.filters.extraction import RegexFilter  # noqa: E402

TASKS = Path(lm_eval.__file__).parent / "tasks"


def _minerva_helpers() -> dict[str, Any]:
    """minerva_math's two pure box helpers, compiled from lm-eval's own source.

    Importing the module needs lm-eval's ``math`` extra (sympy, antlr4); the two functions
    need nothing.
    """
    source = (TASKS / "minerva_math" / "utils.py").read_text(encoding="utf-8")
    wanted = {"last_boxed_only_string", "remove_boxed"}
    tree = ast.parse(source)
    tree.body = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in wanted]
    namespace: dict[str, Any] = {}
    exec(compile(tree, "minerva_math/utils.py", "exec"), namespace)
    return namespace


#: (task file, pattern as the file spells it): patterns lm-eval's own tasks filter with.
TASK_PATTERNS = [
    ("gsm8k/gsm8k.yaml", r"#### (\-?[0-9\.\,]+)"),
    ("gsm8k/gsm8k.yaml", r"(-?[$0-9.,]{2,})|(-?[0-9]+)"),
    ("gsm8k/gsm8k-cot.yaml", r"The answer is (\-?[0-9\.\,]+)."),
    ("bbh/cot_fewshot/_cot_fewshot_template_yaml", r"(?<=the answer is )(.*)(?=.)"),
    ("mmlu_pro/_default_template_yaml", r"answer is \(?([ABCDEFGHIJ])\)?"),
    (
        "bbh/cot_zeroshot/web_of_lies.yaml",
        r"((?<=The answer is )(.*)(?=.)|(?<=the answer is )(.*)(?=.)|(?<=The answer: )(.*)(?=.)"
        r"|(?<=The final answer: )(.*)(?=.))",
    ),
    ("bbh/zeroshot/salient_translation_error_detection.yaml", r"(\([A-Z]\))"),
    ("bbh/zeroshot/navigate.yaml", r"\b(Yes|No|yes|no)\b"),
    ("bbh/zeroshot/object_counting.yaml", r"([-0-9]+)"),
]


def _yaml_text(pattern: str) -> list[str]:
    """The pattern as it may appear in a YAML file: plain, or escaped in double quotes."""
    return [pattern, pattern.replace("\\", "\\\\")]


@pytest.mark.parametrize(("task", "pattern"), TASK_PATTERNS, ids=[t for t, _ in TASK_PATTERNS])
def test_task_patterns_are_lm_evals_own(task: str, pattern: str) -> None:
    """Every pattern below is read from the installed lm-eval task file it is credited to."""
    text = (TASKS / task).read_text(encoding="utf-8")
    assert any(form in text for form in _yaml_text(pattern))


FRAGMENTS = [
    "Let me think step by step.",
    "The answer is 42.",
    "the answer is (B).",
    "The answer is -1,234.5.",
    "#### 18",
    "#### -3.25",
    "So the answer is C",
    "answer is (J)",
    "She pays $1,200 in total.",
    "That leaves 7 apples",
    "The answer is ",
    "Result: 3/4 or 0.75",
    "nothing numeric here",
    "\n",
    "The answer: Paris.",
    "The final answer: 12",
    "A) is wrong; answer is D)",
    "x = 10, y = -2",
]

PATTERNS = [p for _, p in TASK_PATTERNS]


def _outputs(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [
        rng.choice([" ", "\n", "  "]).join(rng.sample(FRAGMENTS, rng.randint(0, 4)))
        for _ in range(n)
    ]


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize(("pick", "group_select"), [("first", 0), ("last", -1)])
def test_regex_equals_lm_eval_regex_filter(pattern: str, pick: str, group_select: int) -> None:
    """On 300 outputs each, the answer found is lm-eval's RegexFilter's (fallback: none)."""
    extractor = AnswerExtractor(pattern, pick)  # type: ignore[arg-type]
    reference = RegexFilter(regex_pattern=pattern, group_select=group_select, fallback="<none>")
    outputs = _outputs(300, seed=len(pattern) + group_select)
    expected = next(iter(reference.apply([outputs], [])))
    for output, theirs in zip(outputs, expected):
        ours = extractor(output)
        assert (ours if ours is not None else "<none>") == theirs, output


@pytest.mark.parametrize("box", [r"\boxed", r"\fbox"])
def test_boxed_equals_minerva_math_last_boxed(box: str) -> None:
    """The last box's content is what lm-eval's minerva_math helpers take from it."""
    helpers = _minerva_helpers()
    last_boxed_only_string, remove_boxed = (
        helpers["last_boxed_only_string"],
        helpers["remove_boxed"],
    )
    rng = random.Random(3)
    pieces = ["{42}", r"{\frac{1}{2}}", "{x^{2}}", "{a{b}c}", "{-3}."]
    words = ["so", "$x$", "The result", "{stray}", "}"]
    checked = 0
    for _ in range(300):
        parts = [rng.choice(words) for _ in range(rng.randint(0, 3))]
        parts += [box + rng.choice(pieces) for _ in range(rng.randint(0, 3))]
        rng.shuffle(parts)
        text = " ".join(parts)
        last = last_boxed_only_string(text)
        ours = AnswerExtractor("boxed")(text)
        if last is None:
            assert ours is None, text
            continue
        assert ours == remove_boxed(last.replace(r"\fbox{", r"\boxed{", 1)), text
        checked += 1
    assert checked > 100


@pytest.mark.parametrize(
    ("extract", "text", "answer"),
    [
        ("answer_is", "Step 1.\nThe answer is 42.", "42"),
        ("answer_is", "The answer is 3. No wait, the final answer is 4.", "4"),
        ("answer_is", "**Answer:** Paris, France.\nThanks", "Paris, France"),
        ("answer_is", "ANSWER: b", "b"),
        ("answer_is", "I cannot tell.", None),
        ("boxed", r"Thus $\boxed{x+1}$.", "x+1"),
        ("boxed", r"\boxed 5$ done", "5"),
        ("boxed", r"unclosed \boxed{3", None),
        ("boxed", r"\boxed{1} then an unclosed \boxed{3", "1"),
        ("boxed", r"\fbox{1} and \boxed{2}", "2"),
        ("last_number", "It costs $1,234.50.", "1234.50"),
        ("last_number", "3 apples, then -2 more, 50% off", "50%"),
        ("last_number", "no digits", None),
    ],
)
def test_presets(extract: str, text: str, answer: str | None) -> None:
    """What each preset takes from an output."""
    assert AnswerExtractor(extract)(text) == answer


def test_extract_in_a_metric_fails_without_an_answer() -> None:
    """exact_match compares the extracted answer; no answer is fail, never the raw text."""
    items = [
        ItemResult(id="1", output="Thinking... The answer is Paris.", expected="paris"),
        ItemResult(id="2", output="Thinking... The answer is Rome.", expected="paris"),
        ItemResult(id="3", output="paris", expected="paris"),
        ItemResult(id="4", output=None, expected="paris"),
    ]
    result = score(items, [{"name": "exact_match", "extract": "answer_is"}])
    scores = [item.scores["exact_match"] for item in result.items]
    assert [s.status for s in scores] == [Status.OK, Status.FAIL, Status.FAIL, Status.FAIL]
    assert scores[0].extra["extracted"] == "Paris"
    assert scores[2].reason == NO_ANSWER_FOUND
    assert scores[2].extra["extracted"] is None
    assert scores[3].reason is None  # a failed request stays a failed request


@pytest.mark.parametrize("metric", ["exact_match", "accuracy", "f1", "token_f1"])
def test_every_text_metric_takes_extract(metric: str) -> None:
    """Batch and single scoring agree with extract, and a miss is "no answer found"."""
    rng = random.Random(9)
    outputs = ["The answer is yes.", "yes", "ANSWER: no", "no idea", None, "answer: YES!"]
    items = [
        ItemResult(id=str(i), output=rng.choice(outputs), expected=rng.choice(["yes", "no"]))
        for i in range(200)
    ]
    spec = {"name": metric, "extract": "answer_is"}
    batch = score(items, [spec])
    metric_obj = plan([spec]).metrics[0].metric
    for item, scored in zip(items, batch.items):
        verdict = scored.scores[metric]
        one = metric_obj.score_item(item, None)  # type: ignore[arg-type]
        assert (verdict.status, verdict.value, verdict.reason) == (
            one.status,
            one.value,
            one.reason,
        )
        if item.output is not None and "answer" not in item.output.lower():
            assert verdict.status is Status.FAIL
            assert verdict.reason == NO_ANSWER_FOUND


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"extract": "(unclosed"}, "neither a preset"),
        ({"extract": ""}, "non-empty regex"),
        ({"extract_pick": "last"}, "which is not set"),
        ({"extract": "last_number", "extract_pick": "first"}, "always takes the last"),
        ({"extract": "answer_is", "extract_pick": "middle"}, "must be one of"),
    ],
)
def test_bad_extract_options_are_refused(options: dict[str, str], message: str) -> None:
    """Bad extract options are OptionErrors before any item is scored."""
    with pytest.raises(OptionError, match=message):
        score([ItemResult(id="1", output="x", expected="x")], [{"name": "exact_match", **options}])
