"""rules="harness": itemscore's per-sample verdicts equal the harnesses' own on every real log.

Every log under tests/data/harness/ was written by inspect_ai or lm-eval themselves (see
make_logs.py there); each sample carries the harness's own verdict (inspect's score value,
lm-eval's per-document metric). A metric that honours ``metadata["harness_rule"]`` through
``itemscore.integrations.harness_rules.verdict`` must agree with every one of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import itemscore
from itemscore import ItemResult, ItemScore, Metric, MetricContext, register
from itemscore.integrations.harness_rules import KINDS, RULE_KEY, verdict

HARNESS = Path(__file__).parent / "data" / "harness"
INSPECT_LOGS = sorted([*HARNESS.glob("inspect*/*.eval"), *HARNESS.glob("inspect*/*.json")])
LM_EVAL_LOGS = sorted(HARNESS.glob("lm-eval*/results/*/samples_*.jsonl"))


@register
class HarnessVerdictProbe(Metric):
    """A plugin's metric that honours the harness rule, as the built-in ones are to."""

    metric_id = "harness_verdict_probe"
    description = "The harness's own verdict, by the item's harness_rule."
    required_inputs = ()

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        right = verdict(item.output, item.expected, item.metadata[RULE_KEY])
        if right is None:
            return self.skip("the harness left this sample unscored")
        return self.ok() if right else self.fail()


def logged_verdict(item: ItemResult) -> bool | None:
    """The harness's own verdict on one sample, as its log records it."""
    rule = item.metadata[RULE_KEY]
    if rule["harness"] == "inspect":
        value = item.metadata["score"]
        return None if value is None else value == "C"
    value = item.metadata[rule["scorer"]]
    return bool(value)


def read(path: Path, **options: Any) -> list[ItemResult]:
    fmt = "inspect" if path.parent.name.startswith("inspect") else "lm-eval"
    return itemscore.read_items(path, format=fmt, **options)


def mismatches(path: Path, metric: str | dict[str, Any], **options: Any) -> list[str]:
    """The ids whose verdict by ``metric`` (a name or a spec) differs from the harness's own."""
    items = read(path, rules="harness", **options)
    result = itemscore.score(items, [metric], suite_id="h")
    label = metric if isinstance(metric, str) else metric["name"]
    wrong = []
    for item in result.items:
        status = item.scores[label].status
        mine = None if status == "skip" else status == "ok"
        if mine != logged_verdict(item):
            wrong.append(ident(item))
    return wrong


def ident(item: ItemResult) -> str:
    """``ID#ATTEMPT`` for an attempt, whether attempt is a role or (before it was) metadata."""
    attempt = getattr(item, "attempt", None) or item.metadata.get("attempt")
    base = item.id.partition("#")[0] if attempt is not None else item.id
    return base if attempt is None else f"{base}#{attempt}"


def test_the_fixtures_cover_every_reproduced_kind() -> None:
    """The real logs exercise each kind of rule a reader emits for them."""
    kinds = {
        item.metadata[RULE_KEY]["kind"]
        for path in [*INSPECT_LOGS, *LM_EVAL_LOGS]
        for item in read(path, rules="harness")
    }
    assert kinds == {"choice", "choice_index", "exact_match", "includes", "pattern", "unscored"}
    assert kinds <= set(KINDS)


@pytest.mark.parametrize("path", INSPECT_LOGS + LM_EVAL_LOGS, ids=lambda p: p.name[:40])
def test_harness_rules_give_the_harness_verdict_on_every_sample(path: Path) -> None:
    """0 mismatches: every sample of every real log gets the harness's own verdict."""
    assert mismatches(path, "harness_verdict_probe") == []


def test_zero_mismatches_in_all_and_the_count_is_of_every_sample() -> None:
    """Counted over all logs at once, with every scorer and lm-eval pick the logs hold."""
    compared = wrong = 0
    runs: list[tuple[Path, dict[str, Any]]] = [(p, {}) for p in INSPECT_LOGS + LM_EVAL_LOGS]
    runs += [(HARNESS / "inspect-cases" / "contains_qa_scripted-a.eval", {"scorer": "match"})]
    runs += [(p, {"pick": "acc_norm"}) for p in LM_EVAL_LOGS if "_mc_" in p.name]
    for path, options in runs:
        items = read(path, rules="harness", **options)
        compared += sum(logged_verdict(i) is not None for i in items)
        wrong += len(mismatches(path, "harness_verdict_probe", **options))
    assert compared == 81  # 43 inspect samples, 38 lm-eval documents
    assert wrong == 0


@pytest.mark.filterwarnings("ignore:.*documents could not be read:UserWarning")
def test_acc_norm_pick_is_read_and_scored_as_lm_eval_scored_it() -> None:
    """fruit_mc's f4: acc picks 'fig', acc_norm (per character) 'watermelon', the right one."""
    (path,) = HARNESS.glob("lm-eval-cases/results/*/samples_fruit_mc_*.jsonl")
    by_acc = {i.id: i for i in read(path)}
    by_norm = {i.id: i for i in read(path, pick="acc_norm")}
    assert (by_acc["3"].output, by_norm["3"].output, by_acc["3"].expected) == ("0", "1", ("1",))
    assert by_acc["3"].metadata["pick_acc_norm"] == 1
    assert by_acc["3"].metadata["answer"] == "fig"
    assert by_norm["3"].metadata["answer"] == "watermelon"


#: exact_match with itemscore's own comparison, whatever rule the items carry.
ITEMSCORE_EXACT_MATCH = {"name": "exact_match", "rules": "itemscore"}

# (path, reader options, ids where itemscore's default exact_match differs from the harness)
DEFAULT_DIFFERS = [
    # includes(): containment; itemscore compares the whole completion.
    ("inspect-cases/contains_qa_scripted-a.eval", {}, ["c1#1", "c2#1", "c4#2"]),
    # match(): the completion ends with the target; itemscore compares it whole.
    ("inspect-cases/contains_qa_scripted-a.eval", {"scorer": "match"}, ["c1#1", "c4#2"]),
    # lm-eval's task options (regexes, case, punctuation) are not itemscore's normalisation.
    ("lm-eval-cases/results/scripted-a/samples_strict_gen", {}, ["0", "1", "2", "3"]),
    # lm-eval compares case-sensitively by default; itemscore ignores case.
    ("lm-eval-cases/results/scripted-a/samples_colours_choice_gen", {}, ["1"]),
    ("lm-eval-cases/results/scripted-a/samples_repeat_gen", {}, ["2"]),
    # the request failed: itemscore counts it failed, inspect leaves it unscored.
    ("inspect/capitals_qa_scripted-b.eval", {}, ["q4"]),
    ("inspect/capitals_qa_scripted-b.json", {}, ["q4"]),
]


@pytest.mark.parametrize(("name", "options", "ids"), DEFAULT_DIFFERS, ids=lambda v: str(v)[:30])
def test_the_default_differs_only_where_documented(
    name: str, options: dict[str, Any], ids: list[str]
) -> None:
    """Without the rules, exact_match differs from the harness exactly where docs say why."""
    path = HARNESS / name if "." in name else next(HARNESS.glob(name + "_*.jsonl"))
    assert mismatches(path, ITEMSCORE_EXACT_MATCH, **options) == ids


def test_the_default_agrees_on_every_other_log() -> None:
    """Letters, indices, required letter sets and unanswered samples need no rules at all."""
    checked = 0
    for path in INSPECT_LOGS + LM_EVAL_LOGS:
        if any(str(path.relative_to(HARNESS)).startswith(n) for n, _, _ in DEFAULT_DIFFERS):
            continue
        checked += 1
        assert mismatches(path, ITEMSCORE_EXACT_MATCH) == [], path.name
    assert checked == 10


@pytest.mark.parametrize(
    ("output", "expected", "rule", "right"),
    [
        ("3,000", ["3000"], {"kind": "exact_match", "regexes_to_ignore": [","]}, True),
        ("Paris", ["paris"], {"kind": "exact_match"}, False),
        ("Paris", ["paris"], {"kind": "exact_match", "ignore_case": True}, True),
        ("U.S.A", ["USA"], {"kind": "exact_match", "ignore_punctuation": True}, True),
        ("a1b2", ["ab"], {"kind": "exact_match", "ignore_numbers": True}, True),
        ("Paris ", ["Paris"], {"kind": "exact_match"}, False),
        ("C, A", ["A, C"], {"kind": "choice"}, True),
        ("A", ["A, C"], {"kind": "choice"}, False),
        ("", ["A"], {"kind": "choice"}, False),
        ("2", ["0", "2"], {"kind": "choice_index"}, True),
        ("it is ROME.", ["rome"], {"kind": "includes"}, True),
        ("it is ROME.", ["rome"], {"kind": "includes", "ignore_case": False}, False),
        ("It is Rome.", ["rome"], {"kind": "match", "location": "end"}, True),
        ("Rome, I think", ["rome"], {"kind": "match", "location": "end"}, False),
        ("Rome, I think", ["rome"], {"kind": "match", "location": "begin"}, True),
        ("x Rome y", ["rome"], {"kind": "match", "location": "any"}, True),
        ("Rome!", ["rome"], {"kind": "match", "location": "exact"}, True),
        ("EIGHT", ["8", "eight"], {"kind": "pattern"}, True),
        ("EIGHT", ["eight"], {"kind": "pattern", "ignore_case": False}, False),
        ("", ["eight"], {"kind": "pattern"}, False),
        (None, ["a"], {"kind": "includes"}, False),
        ("a", None, {"kind": "includes"}, False),
        ("whatever", ["x"], {"kind": "logged", "value": "C"}, True),
        ("whatever", ["x"], {"kind": "logged", "value": 0.0}, False),
        (None, ["x"], {"kind": "unscored"}, None),
    ],
)
def test_each_kind_compares_as_its_harness(
    output: str | None, expected: list[str] | None, rule: dict[str, Any], right: bool | None
) -> None:
    """Each rule kind, on the cases where the harness's comparison is not itemscore's."""
    assert verdict(output, expected, rule) is right


def test_an_unknown_kind_or_value_is_an_error() -> None:
    """A rule from a newer version, or a logged value that is no verdict, is said, not guessed."""
    with pytest.raises(ValueError, match=r"kind 'judge' is not one itemscore applies"):
        verdict("a", ["a"], {"kind": "judge"})
    with pytest.raises(ValueError, match=r"logged harness value 'P' is not a verdict"):
        verdict("a", ["a"], {"kind": "logged", "value": "P"})
