"""The built-in metrics honour harness rules: ``rules=harness`` gives the harness's verdicts.

End to end on every real log in tests/data/harness/ (written by inspect_ai and lm-eval
themselves, see make_logs.py there): read with ``rules="harness"`` and scored by ``exact_match``
and ``accuracy`` through ``itemscore.score`` and through the command line, every sample gets
the verdict the harness logged, and every headline number is the harness's own. The references
are read with the harnesses' own means, never with itemscore's readers: inspect_ai's
``read_eval_log`` and the raw lines and results file of lm-eval. Then the metric's ``rules``
option, case by case, on items made here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest

import itemscore
from itemscore import ItemResult, MetricContext, OptionError, ScoreColumn, Status
from itemscore.metrics_builtin.accuracy import Accuracy
from itemscore.metrics_builtin.exact_match import ExactMatch
from itemscore.metrics_builtin.f1 import F1
from itemscore.metrics_builtin.includes import Includes
from itemscore.metrics_builtin.numeric_match import NumericMatch
from itemscore.metrics_builtin.token_f1 import TokenF1

HARNESS = Path(__file__).parent / "data" / "harness"
INSPECT_LOGS = sorted([*HARNESS.glob("inspect*/*.eval"), *HARNESS.glob("inspect*/*.json")])
LM_EVAL_LOGS = sorted(HARNESS.glob("lm-eval*/results/*/samples_*.jsonl"))
#: Every log, and the reader options that choose another scorer or pick the logs also hold.
RUNS: list[tuple[Path, dict[str, Any]]] = [
    *((p, {}) for p in INSPECT_LOGS + LM_EVAL_LOGS),
    (HARNESS / "inspect-cases" / "contains_qa_scripted-a.eval", {"scorer": "match"}),
    *((p, {"pick": "acc_norm"}) for p in LM_EVAL_LOGS if "_mc_" in p.name),
]
METRICS = ("exact_match", "accuracy")


def run_id(run: tuple[Path, dict[str, Any]]) -> str:
    path, options = run
    return f"{path.parent.name}/{path.name[:30]}" + "".join(f",{k}={v}" for k, v in options.items())


@attrs.frozen
class Harness:
    """What the harness itself logged for one run: per-sample verdicts and its headline."""

    #: ``None``: the harness left the sample out of its metrics.
    verdicts: dict[str, bool | None]
    headline: float
    fmt: str


def harness_of(path: Path, options: dict[str, Any]) -> Harness:
    """The harness's own verdicts, read with the harness's own means (not itemscore's)."""
    if path in INSPECT_LOGS:
        from inspect_ai.log import read_eval_log

        log = read_eval_log(str(path))
        assert log.results is not None
        assert log.samples is not None
        scorer = options.get("scorer", log.results.scores[0].name)
        several = (log.eval.config.epochs or 1) > 1
        verdicts: dict[str, bool | None] = {}
        for sample in log.samples:
            score = (sample.scores or {}).get(scorer)
            key = f"{sample.id}#{sample.epoch}" if several else str(sample.id)
            verdicts[key] = None if score is None or sample.error else score.value == "C"
        (logged,) = [s for s in log.results.scores if s.name == scorer]
        return Harness(verdicts, logged.metrics["accuracy"].value, "inspect")
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    first_filter = lines[0]["filter"]  # the reader's default, as lm-eval's first
    metric = options.get("pick", "acc") if "acc" in lines[0] else "exact_match"
    verdicts = {
        str(line["doc_id"]): bool(line[metric]) for line in lines if line["filter"] == first_filter
    }
    (results_file,) = path.parent.glob("results_*.json")
    results = json.loads(results_file.read_text(encoding="utf-8"))["results"]
    task = path.name.removeprefix("samples_").rsplit("_", 1)[0]
    return Harness(verdicts, results[task][f"{metric},{first_filter}"], "lm-eval")


def ident(item: ItemResult) -> str:
    """``ID#EPOCH`` for an attempt, whether attempt is a role or (before it was) in the id."""
    attempt = getattr(item, "attempt", None) or item.metadata.get("attempt")
    return item.id if attempt is None else f"{item.id.partition('#')[0]}#{attempt}"


def verdicts_of(result: itemscore.RunResult, label: str) -> dict[str, bool | None]:
    """itemscore's verdict per sample: ok, fail, ``None`` for skip; an error is kept as such."""
    out: dict[str, Any] = {}
    for item in result.items:
        status = item.scores[label].status
        out[ident(item)] = {"ok": True, "fail": False, "skip": None}.get(status, status)
    return out


def headline(result: itemscore.RunResult, label: str) -> float | None:
    (measurement,) = [m for m in result.measurements.values() if m.metric == label]
    return measurement.value


def differing(mine: dict[str, Any], harness: dict[str, bool | None]) -> list[str]:
    assert set(mine) == set(harness)
    return sorted(key for key, right in harness.items() if mine[key] != right)


def test_rules_harness_gives_the_harness_verdict_on_every_sample_of_every_log() -> None:
    """0 mismatches over every log, scorer and pick, counted; headlines equal the harness's."""
    compared = wrong = unscored = 0
    for path, options in RUNS:
        harness = harness_of(path, options)
        items = itemscore.read_items(path, format=harness.fmt, rules="harness", **options)
        result = itemscore.score(items, list(METRICS), suite_id="h")
        compared += sum(v is not None for v in harness.verdicts.values())
        unscored += sum(v is None for v in harness.verdicts.values())
        for label in METRICS:
            wrong += len(differing(verdicts_of(result, label), harness.verdicts))
            assert headline(result, label) == pytest.approx(harness.headline, abs=1e-12), path
    assert compared == 81  # 43 inspect samples, 38 lm-eval documents
    assert unscored == 2  # capitals_qa_scripted-b's errored q4, in its .eval and .json logs
    assert wrong == 0


def test_the_command_line_gives_the_harness_verdicts_too(tmp_path: Path) -> None:
    """`itemscore score LOG --read-option rules=harness -m exact_match`: the same, from disk."""
    from click.testing import CliRunner

    from itemscore.cli import cli

    compared = wrong = 0
    for number, (path, options) in enumerate(RUNS):
        harness = harness_of(path, options)
        out = tmp_path / str(number)
        args = ["score", str(path), "--read-option", "rules=harness", "-m", "exact_match"]
        for key, value in options.items():
            args += ["--read-option", f"{key}={value}"]
        args += ["--out", str(out), "--report", "json", "--report", "items", "--quiet"]
        ran = CliRunner().invoke(cli, args, catch_exceptions=False)
        assert ran.exit_code == 0, ran.output
        result = itemscore.RunResult.load_json(out / "results.json")
        compared += len(harness.verdicts)
        wrong += len(differing(verdicts_of(result, "exact_match"), harness.verdicts))
        assert headline(result, "exact_match") == pytest.approx(harness.headline, abs=1e-12)
    assert compared == 83  # the 81 scored samples and the 2 inspect left unscored
    assert wrong == 0


# (log, reader options, ids where itemscore's default differs from the harness; the reason is
# the row of docs/harness-logs.md's table)
DEFAULT_DIFFERS: list[tuple[str, dict[str, Any], list[str]]] = [
    # the request failed: itemscore counts it failed, inspect leaves it unscored
    ("inspect/capitals_qa_scripted-b.eval", {}, ["q4"]),
    ("inspect/capitals_qa_scripted-b.json", {}, ["q4"]),
    # includes(): containment, where itemscore compares the whole completion
    ("inspect-cases/contains_qa_scripted-a.eval", {}, ["c1#1", "c2#1", "c4#2"]),
    # match(): the completion ends with the target
    ("inspect-cases/contains_qa_scripted-a.eval", {"scorer": "match"}, ["c1#1", "c4#2"]),
    # lm-eval compares case-sensitively by default; itemscore ignores case
    ("lm-eval-cases/results/scripted-a/samples_colours_choice_gen", {}, ["1"]),
    ("lm-eval-cases/results/scripted-a/samples_repeat_gen", {}, ["2"]),
    # the task's regexes_to_ignore, ignore_case, ignore_punctuation
    ("lm-eval-cases/results/scripted-a/samples_strict_gen", {}, ["0", "1", "2", "3"]),
    # an out-of-range target: lm-eval scores 0, itemscore does not score a broken answer key
    ("lm-eval-cases/results/scripted-a/samples_fruit_mc", {}, ["2"]),
    ("lm-eval-cases/results/scripted-a/samples_fruit_mc", {"pick": "acc_norm"}, ["2"]),
]


def log_path(name: str) -> Path:
    return HARNESS / name if "." in name else next(HARNESS.glob(name + "_*.jsonl"))


# fruit_mc holds a document lm-eval warned about (an out-of-range target): read_items warns too.
@pytest.mark.filterwarnings("ignore:.*documents could not be read:UserWarning")
@pytest.mark.parametrize(("name", "options", "ids"), DEFAULT_DIFFERS, ids=lambda v: str(v)[-40:])
def test_without_the_rules_the_default_differs_where_documented(
    name: str, options: dict[str, Any], ids: list[str]
) -> None:
    """Read without rules=harness: exact_match and accuracy differ on exactly these samples."""
    path = log_path(name)
    harness = harness_of(path, options)
    items = itemscore.read_items(path, format=harness.fmt, **options)
    result = itemscore.score(items, list(METRICS), suite_id="h")
    for label in METRICS:
        assert differing(verdicts_of(result, label), harness.verdicts) == ids
        assert headline(result, label) != pytest.approx(harness.headline)


def test_without_the_rules_every_other_log_agrees() -> None:
    """Letters, indices, required letter sets and missing answers need no rules at all."""
    listed = {(log_path(name), str(options)) for name, options, _ in DEFAULT_DIFFERS}
    checked = 0
    for path, options in RUNS:
        if (path, str(options)) in listed:
            continue
        harness = harness_of(path, options)
        items = itemscore.read_items(path, format=harness.fmt, **options)
        result = itemscore.score(items, ["exact_match"], suite_id="h")
        assert differing(verdicts_of(result, "exact_match"), harness.verdicts) == [], path
        checked += 1
    assert checked == len(RUNS) - len(DEFAULT_DIFFERS) == 10


def test_rules_itemscore_ignores_the_rule_the_items_carry() -> None:
    """Read with rules=harness, scored with rules='itemscore': the default's verdicts, no rule."""
    path = log_path("lm-eval-cases/results/scripted-a/samples_strict_gen")
    items = itemscore.read_items(path, format="lm-eval", rules="harness")
    result = itemscore.score(items, [{"name": "exact_match", "rules": "itemscore"}])
    harness = harness_of(path, {})
    assert differing(verdicts_of(result, "exact_match"), harness.verdicts) == ["0", "1", "2", "3"]
    assert all("rule" not in i.scores["exact_match"].extra for i in result.items)


def test_the_rule_is_kept_in_results_and_decides_a_rescore(tmp_path: Path) -> None:
    """results.json keeps harness_rule, so rescore gives the harness's verdicts again."""
    path = HARNESS / "inspect-cases" / "contains_qa_scripted-a.eval"
    items = itemscore.read_items(path, format="inspect", rules="harness")
    itemscore.score(items, ["answered_rate"], suite_id="h").save_json(tmp_path / "r.json")
    again = itemscore.rescore(itemscore.RunResult.load_json(tmp_path / "r.json"), ["exact_match"])
    assert differing(verdicts_of(again, "exact_match"), harness_of(path, {}).verdicts) == []


# -- the option, on items made here --------------------------------------------------------

LM_EVAL_RULE = {"harness": "lm-eval", "scorer": "exact_match", "kind": "exact_match"}
INCLUDES_RULE = {"harness": "inspect", "scorer": "includes", "kind": "includes"}


def item(output: str | None, expected: Any, rule: Any = None, **metadata: Any) -> ItemResult:
    if rule is not None:
        metadata["harness_rule"] = rule
    return ItemResult(id="x", output=output, expected=expected, metadata=metadata)


def scores_of(items: list[ItemResult], **options: Any) -> list[itemscore.ItemScore]:
    items = [attrs.evolve(one, id=str(n)) for n, one in enumerate(items)]
    result = itemscore.score(items, [{"name": "exact_match", **options}])
    return [i.scores["exact_match"] for i in result.items]


def test_the_rule_decides_and_extra_says_which_rule_and_answer() -> None:
    """lm-eval's case-sensitive comparison where the rule is; itemscore's where none is."""
    got = scores_of(
        [
            item("white", ["White", "white"], LM_EVAL_RULE),
            item("WHITE", ["white"], LM_EVAL_RULE),
            item("It is ROME.", ["Paris", "rome"], INCLUDES_RULE),
            item("WHITE", ["white"]),
        ]
    )
    assert [s.status for s in got] == [Status.OK, Status.FAIL, Status.OK, Status.OK]
    assert dict(got[0].extra) == {"rule": "lm-eval:exact_match", "matched": "white"}
    assert dict(got[1].extra) == {"rule": "lm-eval:exact_match", "matched": None}
    assert dict(got[2].extra) == {"rule": "inspect:includes", "matched": "rome"}
    assert dict(got[3].extra) == {"normalized": "white", "matched": "white"}


def test_a_logged_verdict_is_taken_and_names_no_answer() -> None:
    """A comparison itemscore does not redo (a model grader): the harness's value, as logged."""
    logged = {"harness": "inspect", "scorer": "model_graded_qa", "kind": "logged"}
    got = scores_of(
        [item("x", ["y"], logged | {"value": "C"}), item("y", ["y"], logged | {"value": "I"})]
    )
    assert [s.status for s in got] == [Status.OK, Status.FAIL]
    assert dict(got[0].extra) == {"rule": "inspect:logged", "matched": None}


def test_unscored_is_skip_and_no_answer_is_the_fail_reason() -> None:
    """inspect's unscored sample is left out; the reader's no_answer says why a sample failed."""
    reason = "inspect's pattern() found no answer in the completion"
    pattern = {"harness": "inspect", "scorer": "pattern", "kind": "pattern"}
    got = scores_of(
        [
            item(None, ["a"], {"harness": "inspect", "scorer": "pattern", "kind": "unscored"}),
            item("", ["a"], pattern, no_answer=reason),
        ]
    )
    assert (got[0].status, got[0].value) == (Status.SKIP, None)
    assert "left this sample unscored" in (got[0].reason or "")
    assert (got[1].status, got[1].reason) == (Status.FAIL, reason)


def test_count_failed_holds_under_a_rule() -> None:
    """A failed request with a rule: fail, or skip with count_failed=False."""
    failed = [item(None, ["a"], INCLUDES_RULE)]
    assert scores_of(failed)[0].status is Status.FAIL
    assert scores_of(failed, count_failed=False)[0].status is Status.SKIP


def test_a_rule_that_cannot_be_applied_is_that_items_error() -> None:
    """An unknown kind, or metadata harness_rule that is no rule: error, the rest scored."""
    got = scores_of(
        [
            item("a", ["a"], {"harness": "inspect", "kind": "judge"}),
            item("a", ["a"], "exact"),
            item("a", ["a"], LM_EVAL_RULE),
        ]
    )
    assert [s.status for s in got] == [Status.ERROR, Status.ERROR, Status.OK]
    assert (got[0].reason or "").startswith("ValueError: The harness rule kind 'judge' is not")
    assert "metadata 'harness_rule' must be a harness rule" in (got[1].reason or "")


def test_rules_harness_needs_a_rule_on_every_item() -> None:
    """rules='harness' on an item read without rules: an error that says how to read it."""
    got = scores_of([item("a", ["a"]), item("a", ["a"], LM_EVAL_RULE)], rules="harness")
    assert [s.status for s in got] == [Status.ERROR, Status.OK]
    assert "--read-option rules=harness" in (got[0].reason or "")


@pytest.mark.parametrize(
    ("metric", "options", "named"),
    [
        ("exact_match", {"ignore_case": False}, "ignore_case=False"),
        ("exact_match", {"normalization": "squad"}, "normalization='squad'"),
        ("exact_match", {"extract": "boxed"}, "extract='boxed'"),
        ("accuracy", {"labels": ["yes", "no"]}, "labels=['yes', 'no']"),
    ],
)
def test_rules_harness_refuses_itemscores_comparison_options(
    metric: str, options: dict[str, Any], named: str
) -> None:
    """Options a harness rule would override are refused before any item is scored."""
    with pytest.raises(OptionError, match=r"rules='harness' compares each item as") as caught:
        itemscore.plan([{"name": metric, "rules": "harness", **options}])
    assert named in str(caught.value)
    itemscore.plan([{"name": metric, "rules": "harness", "count_failed": False}])


def test_auto_with_such_options_errs_on_the_items_with_a_rule_only() -> None:
    """rules='auto' and extract: an item with a rule is an error naming both ways out."""
    got = scores_of([item("\\boxed{7}", ["7"]), item("7", ["7"], LM_EVAL_RULE)], extract="boxed")
    assert [s.status for s in got] == [Status.OK, Status.ERROR]
    assert "extract='boxed'" in (got[1].reason or "")
    assert "rules='itemscore'" in (got[1].reason or "")


def test_a_bad_rules_value_is_refused() -> None:
    """Only auto, itemscore and harness; built directly too."""
    with pytest.raises(OptionError, match=r"`rules` \('harnes'\) must be one of"):
        itemscore.plan([{"name": "exact_match", "rules": "harnes"}])
    with pytest.raises(OptionError, match=r"`rules` \('x'\) must be one of 'auto', 'itemscore'"):
        Accuracy(rules="x")  # type: ignore[arg-type]


MIXED = [
    item("white", ["White"], LM_EVAL_RULE),
    item("white", ["White"], LM_EVAL_RULE),
    item("white", ["White"]),
    item("white", ["White"]),
    item(None, ["a"], {"harness": "inspect", "kind": "unscored"}),
    item("", ["a"], {"harness": "inspect", "kind": "pattern"}, no_answer="none found"),
    item("a", ["a"], {"kind": "judge"}),
    item("a", ["a"], ["not", "a", "rule"]),
]


@pytest.mark.parametrize("rules", ["auto", "itemscore", "harness"])
def test_score_items_and_score_item_agree(rules: str) -> None:
    """The batch path (memo and all) gives, item for item, what score_item gives."""
    metric = ExactMatch(rules=rules)  # type: ignore[arg-type]
    ctx = MetricContext(label="exact_match")
    column = metric.score_items(MIXED, ctx)
    assert isinstance(column, ScoreColumn)
    one_by_one = [metric.score_item(i, ctx) for i in MIXED]
    assert [(s.status, s.value, s.reason, dict(s.extra)) for s in column] == [
        (s.status, s.value, s.reason, dict(s.extra)) for s in one_by_one
    ]


OTHERS: dict[str, type[itemscore.Metric]] = {
    "f1": F1,
    "token_f1": TokenF1,
    "includes": Includes,
    "numeric_match": NumericMatch,
}


@pytest.mark.parametrize("metric", sorted(OTHERS))
def test_the_other_comparison_metrics_keep_their_own_comparison(metric: str) -> None:
    """A rule gives a right/wrong verdict; these metrics measure something else and ignore it."""
    with_rule = [item("White", ["white"], LM_EVAL_RULE), item("7", ["7"], LM_EVAL_RULE)]
    without = [attrs.evolve(i, metadata={}) for i in with_rule]
    with_rule = [attrs.evolve(one, id=str(n)) for n, one in enumerate(with_rule)]
    without = [attrs.evolve(one, id=str(n)) for n, one in enumerate(without)]
    a = itemscore.score(with_rule, [metric]).items
    b = itemscore.score(without, [metric]).items
    assert [(i.scores[metric].status, i.scores[metric].value) for i in a] == [
        (i.scores[metric].status, i.scores[metric].value) for i in b
    ]
    assert "rules" not in OTHERS[metric].options()


def test_listing_the_metrics_does_not_import_the_harness_rules() -> None:
    """The rules module is imported by the first item scored with one, not by a listing."""
    code = (
        "import sys\n"
        "from itemscore.metrics_builtin import accuracy, exact_match\n"
        "exact_match.ExactMatch(); accuracy.Accuracy()\n"
        "print('itemscore.integrations.harness_rules' in sys.modules)\n"
    )
    ran = subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True
    )
    assert ran.stdout.strip() == "False"
