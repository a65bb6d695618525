"""The built-in text metrics against plain-Python loops that compute the same numbers.

0. The 100k QA rows of ``../shared/bench/gen_data.py`` scored with ``exact_match``,
   ``token_f1`` and ``answered_rate`` against ``qa_em_f1_same_rules`` (itemscore's rules in a
   tight loop) and ``qa_em_f1`` (SQuAD's cheaper rules), as paired medians.
1. 100k SQuAD-like short answers (1-3 valid answers each, about 5% failed requests) scored with
   ``exact_match``, ``token_f1`` and ``answered_rate`` through ``itemscore.score``, against a
   tight plain loop (normalise, exact match, token F1 with ``Counter``, answered share). A second
   plain loop counts the token overlap the way itemscore does (scanning a short list instead of
   building two Counters), which isolates the framework's own overhead.
2. ``f1`` with its bootstrap interval on 1M classification labels: the whole ``itemscore.score``
   call, and the aggregate alone.

Run directly (``python benchmarks/bench_metrics.py``) or through ``benchmarks/run.py``.
"""

from __future__ import annotations

import json
import random
import statistics
import string
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from _data import qa_file, shared_bench

from itemscore import ItemResult, MetricContext, plan, score
from itemscore.metrics_builtin.f1 import F1

N_SHORT = 100_000
N_LABELS = 1_000_000
SEED = 20240611

_WORD_LIST = (
    "paris london tower river king queen war peace empire france england spain rome city "
    "north south east west church castle bridge museum garden palace island mountain "
    "lake seventeen 1848 1914 1066 john mary henry victoria napoleon caesar newton "
    "darwin einstein"
)
WORDS = _WORD_LIST.split()
ARTICLES = ("the", "a", "an")

# itemscore's punctuation in ASCII: string.punctuation but for "# % & - @" (kept) and "+ $"
# (symbols, never punctuation).
PUNCTUATION = "".join(c for c in string.punctuation if c not in "#%&-@+$")
TRIM = PUNCTUATION + string.whitespace
DELETE = str.maketrans("", "", PUNCTUATION)


def short_answer_items(n: int, seed: int = SEED) -> list[ItemResult]:
    """SQuAD-like items: short answers with 1-3 valid spellings, ~5% failed requests."""
    rng = random.Random(seed)
    items = []
    for i in range(n):
        core = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))
        refs = [core]
        for _ in range(rng.randint(0, 2)):
            refs.append(rng.choice([f"the {core}", core.title(), f"{core} {rng.choice(WORDS)}"]))
        roll = rng.random()
        output: str | None
        if roll < 0.05:
            output = None
        elif roll < 0.45:
            output = rng.choice([core, core.upper(), f"{core}.", f'"{core.title()}"'])
        elif roll < 0.75:
            output = f"{rng.choice(ARTICLES)} {core} {rng.choice(WORDS)}".capitalize()
        else:
            output = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))
        items.append(ItemResult(id=str(i), output=output, expected=tuple(refs)))
    return items


def _f1_counter(pred: list[str], gold: list[str]) -> float:
    if not pred or not gold:
        return float(pred == gold)
    same = sum((Counter(pred) & Counter(gold)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def _f1_scan(pred: list[str], gold: list[str]) -> float:
    if not pred or not gold:
        return float(pred == gold)
    remaining = list(gold)
    same = 0
    for token in pred:
        if token in remaining:
            remaining.remove(token)
            same += 1
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def plain_loop(
    items: Sequence[ItemResult], f1: Callable[[list[str], list[str]], float]
) -> tuple[float, float, float]:
    """Exact match, mean token F1 and answered share, in plain Python."""
    em_ok = answered = 0
    f1_sum = 0.0
    for item in items:
        output = item.output
        if output is None:
            continue
        answered += 1
        refs = item.expected or ()
        normalized = " ".join(output.lower().strip(TRIM).split())
        if any(normalized == " ".join(r.lower().strip(TRIM).split()) for r in refs):
            em_ok += 1
        pred = output.lower().translate(DELETE).split()
        f1_sum += max(f1(pred, r.lower().translate(DELETE).split()) for r in refs)
    n = len(items)
    return em_ok / n, f1_sum / n, answered / n


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def bench_short_answers() -> None:
    items = short_answer_items(N_SHORT)
    metrics = ["exact_match", "token_f1", "answered_rate"]
    score(items[:1000], metrics)  # warm up: entry points, imports
    t_lib, result = min(
        (_timed(lambda: score(items, metrics)) for _ in range(3)), key=lambda r: r[0]
    )
    t_counter, plain = min(
        (_timed(lambda: plain_loop(items, _f1_counter)) for _ in range(3)), key=lambda r: r[0]
    )
    t_scan, plain_scan = min(
        (_timed(lambda: plain_loop(items, _f1_scan)) for _ in range(3)), key=lambda r: r[0]
    )
    got = tuple(result.measurements[f"default.{m}"].value for m in metrics)
    for name, mine, theirs, other in zip(metrics, got, plain, plain_scan):
        if abs(mine - theirs) > 1e-12 or abs(theirs - other) > 1e-12:
            raise AssertionError(f"{name}: itemscore {mine!r} != plain loop {theirs!r}/{other!r}")
    per = 1e6 / len(items)
    print(f"{len(items):,} short answers, metrics {', '.join(metrics)}")
    print(f"  values: exact_match {got[0]:.4f}, token_f1 {got[1]:.4f}, answered {got[2]:.4f}")
    print(f"  itemscore.score              {t_lib:7.3f} s  {t_lib * per:6.2f} us/item")
    print(
        f"  plain loop (Counter F1)      {t_counter:7.3f} s  {t_counter * per:6.2f} us/item"
        f"  ratio {t_lib / t_counter:.2f}x"
    )
    print(
        f"  plain loop (list-scan F1)    {t_scan:7.3f} s  {t_scan * per:6.2f} us/item"
        f"  ratio {t_lib / t_scan:.2f}x"
    )


def label_items(n: int, seed: int = SEED) -> tuple[list[ItemResult], list[str]]:
    """Classification items: 4 labels, mostly bare labels, some free-form, ~3% failed."""
    rng = random.Random(seed)
    labels = ["positive", "negative", "neutral", "mixed"]
    templates = ["{}", "{}", "{}.", "The sentiment is {}.", "{}!", "Answer: {}"]
    items = []
    for i in range(n):
        gold = rng.choice(labels)
        roll = rng.random()
        output: str | None
        if roll < 0.03:
            output = None
        else:
            pred = gold if roll < 0.75 else rng.choice(labels)
            output = rng.choice(templates).format(pred)
        items.append(ItemResult(id=str(i), output=output, expected=gold))
    return items, labels


def bench_f1() -> None:
    items, labels = label_items(N_LABELS)
    spec = {"name": "f1", "labels": labels}
    score(items[:1000], [spec])  # warm up
    t_total, result = min(
        (_timed(lambda: score(items, [spec])) for _ in range(3)), key=lambda r: r[0]
    )
    m = result.measurements["default.f1"]
    scores = [item.scores["f1"] for item in result.items]
    metric = F1(labels=labels)
    ctx = MetricContext(label="f1")
    t_agg, estimate = min(
        (_timed(lambda: metric.aggregate(scores, ctx)) for _ in range(3)), key=lambda r: r[0]
    )
    assert estimate.value == m.value
    print(f"{len(items):,} labels, f1 (macro) with a {estimate.method} interval")
    print(f"  f1 {m.value:.4f} [{m.ci_low:.4f}, {m.ci_high:.4f}], n = {m.n:,}")
    print(f"  itemscore.score (scoring + aggregate)  {t_total:6.3f} s  (best of 3)")
    print(f"  aggregate alone                        {t_agg:6.3f} s")


def qa_rows(size: str = "100k") -> list[dict[str, Any]]:
    """The generator's QA rows, written once into the ignored benchmarks/data/."""
    path = qa_file(size)
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def bench_qa_same_rules() -> None:
    """exact_match + token_f1 + answered_rate through score() against a tight plain loop.

    The plain loop (``qa_em_f1_same_rules``) applies itemscore's default normalisation rules to
    the rows with an answer key, plus the answered share over all rows; the two must agree to
    the last digit, item by item. Timed as paired runs in one process, alternating, medians.
    """
    shared = shared_bench()
    if shared is None:
        print("QA benchmark skipped: no shared bench folder (set ITEMSCORE_SHARED_BENCH).")
        return
    sys.path.insert(0, str(shared))
    from baselines import qa_em_f1  # type: ignore[import-not-found]
    from same_rules import qa_em_f1_same_rules  # type: ignore[import-not-found]

    rows = qa_rows()
    items = [
        ItemResult(
            id=r["id"], output=r["output"], expected=r.get("expected"), input=r["input"],
            metadata={"lang": r["lang"]},
        )
        for r in rows
    ]  # fmt: skip
    keyed = [r for r in rows if r.get("expected")]
    preds = [r["output"] or "" for r in keyed]
    refs = [r["expected"] for r in keyed]
    outputs = [r["output"] for r in rows]
    metrics = plan(["exact_match", "token_f1", "answered_rate"])

    def plain() -> tuple[list[int], list[float], float]:
        em, f1 = qa_em_f1_same_rules(preds, refs)
        return em, f1, sum(o is not None for o in outputs) / len(outputs)

    def squad() -> tuple[list[int], list[float], float]:
        em, f1 = qa_em_f1(preds, refs)
        return em, f1, sum(o is not None for o in outputs) / len(outputs)

    def framework() -> Any:
        return score(items, metrics)

    em, f1, answered = plain()
    result = framework()
    scored = [item for item in result.items if item.expected]
    assert [int(i.scores["exact_match"].value or 0.0) for i in scored] == em
    assert [i.scores["token_f1"].value for i in scored] == f1
    m = result.measurements
    assert m["default.exact_match"].value == sum(em) / len(em)
    assert m["default.token_f1"].value == float(np.mean(f1))
    assert m["default.answered_rate"].value == answered
    times = paired({"plain": plain, "squad": squad, "itemscore": framework}, rounds=5)
    per = 1e6 / len(items)
    print(f"{len(items):,} QA rows (gen_data.py), exact_match + token_f1 + answered_rate")
    print(f"  itemscore.score               {times['itemscore']:7.3f} s  "
          f"{times['itemscore'] * per:6.2f} us/item")  # fmt: skip
    print(f"  qa_em_f1_same_rules + share   {times['plain']:7.3f} s  "
          f"ratio {times['itemscore'] / times['plain']:.2f}x (target <= 1.3x)")  # fmt: skip
    print(f"  qa_em_f1 (SQuAD rules)        {times['squad']:7.3f} s  "
          f"ratio {times['itemscore'] / times['squad']:.2f}x")  # fmt: skip
    print("  (medians of 5 alternating rounds; every item's numbers equal the plain loop's)")


def paired(fns: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    """Median seconds of each function, run in alternation ``rounds`` times."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            times[name].append(_timed(fn)[0])
    return {name: statistics.median(ts) for name, ts in times.items()}


def main() -> None:
    """Run the benchmarks and print their figures."""
    bench_qa_same_rules()
    bench_short_answers()
    bench_f1()


if __name__ == "__main__":
    main()
