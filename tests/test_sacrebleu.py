"""bleu, chrf and ter against sacrebleu: corpus scores, sentence scores, bootstrap, paired tests.

The corpus is made here: 600 sentences of an English-like vocabulary with punctuation, numbers,
case and a few accented words, two to four references each (some sentences with fewer than
others), and two systems that perturb the first reference (dropped, swapped and replaced
words), one more than the other.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from itemscore import ItemResult, MetricContext, RunResult, Status, compare, plan, score

sacrebleu = pytest.importorskip("sacrebleu")
from sacrebleu.metrics import BLEU, CHRF, TER  # noqa: E402
from sacrebleu.significance import (  # noqa: E402
    Result,
    _bootstrap_resample,
    _paired_ar_test,
    _paired_bs_test,
    estimate_ci,
)

WORDS = [
    "the",
    "a",
    "cat",
    "dog",
    "sat",
    "on",
    "mat",
    "house",
    "river",
    "bank",
    "went",
    "to",
    "see",
    "it",
    "was",
    "very",
    "big",
    "small",
    "red",
    "blue",
    "quickly",
    "slowly",
    "man",
    "woman",
    "child",
    "home",
    "today",
    "yesterday",
    "1,200",
    "3.5",
    "42",
    "café",
    "naïve",
    "Zürich",
    "Paris",
    "London",
    "said",
    "that",
    "and",
    "but",
    "not",
    "never",
    "always",
]
PUNCT = [",", ".", "!", "?", ";", " -", "'s", '"']


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(3, 25))]
    words[0] = words[0].capitalize()
    text = " ".join(words)
    for _ in range(rng.randint(0, 3)):
        cut = rng.randint(1, len(text) - 1)
        text = text[:cut] + rng.choice(PUNCT) + text[cut:]
    return text + rng.choice([".", "!", "?", ""])


def _perturb(text: str, rng: random.Random, rate: float) -> str:
    words = text.split()
    out: list[str] = []
    for word in words:
        roll = rng.random()
        if roll < rate / 3:
            continue
        if roll < 2 * rate / 3:
            out.append(rng.choice(WORDS))
        else:
            out.append(word.lower() if rng.random() < rate / 4 else word)
    if len(out) > 2 and rng.random() < rate:
        i = rng.randrange(len(out) - 1)
        out[i], out[i + 1] = out[i + 1], out[i]
    return " ".join(out)


def corpus(n: int = 600, seed: int = 7) -> tuple[list[tuple[str, ...]], list[str], list[str]]:
    """References (2-4 per sentence) and the outputs of two systems."""
    rng = random.Random(seed)
    refs = []
    for _ in range(n):
        first = _sentence(rng)
        others = [_perturb(first, rng, 0.3) for _ in range(rng.randint(1, 3))]
        refs.append((first, *others))
    system_a = [_perturb(r[0], rng, 0.45) for r in refs]
    system_b = [_perturb(r[0], rng, 0.35) for r in refs]
    system_a[3] = ""  # an empty output is a hypothesis like any other
    return refs, system_a, system_b


def streams(refs: list[tuple[str, ...]]) -> list[list[str | None]]:
    """sacrebleu's reference streams, ``None`` where a sentence has fewer references."""
    width = max(len(r) for r in refs)
    return [[r[k] if k < len(r) else None for r in refs] for k in range(width)]


def items(refs: list[tuple[str, ...]], outputs: list[str], model: str | None = None) -> list[Any]:
    return [
        ItemResult(id=str(i), output=o, expected=r, model=model)
        for i, (o, r) in enumerate(zip(outputs, refs))
    ]


METRICS: list[tuple[str, dict[str, Any], type, dict[str, Any]]] = [
    ("bleu", {}, BLEU, {}),
    (
        "bleu",
        {"lowercase": True, "tokenize": "intl"},
        BLEU,
        {"lowercase": True, "tokenize": "intl"},
    ),
    (
        "bleu",
        {"smooth_method": "add-k", "smooth_value": 1.0},
        BLEU,
        {"smooth_method": "add-k", "smooth_value": 1.0},
    ),
    (
        "bleu",
        {"smooth_method": "floor", "max_ngram_order": 3},
        BLEU,
        {"smooth_method": "floor", "max_ngram_order": 3},
    ),
    (
        "bleu",
        {"tokenize": "char", "effective_order": True},
        BLEU,
        {"tokenize": "char", "effective_order": True},
    ),
    ("chrf", {}, CHRF, {}),
    ("chrf", {"word_order": 2}, CHRF, {"word_order": 2}),
    (
        "chrf",
        {"lowercase": True, "whitespace": True, "beta": 1, "eps_smoothing": True},
        CHRF,
        {"lowercase": True, "whitespace": True, "beta": 1, "eps_smoothing": True},
    ),
    ("ter", {}, TER, {}),
    (
        "ter",
        {"normalized": True, "case_sensitive": True},
        TER,
        {"normalized": True, "case_sensitive": True},
    ),
    (
        "ter",
        {"no_punct": True, "asian_support": True},
        TER,
        {"no_punct": True, "asian_support": True},
    ),
]
IDS = [
    f"{name}-{'-'.join(f'{k}={v}' for k, v in opts.items()) or 'default'}"
    for name, opts, _, _ in METRICS
]


@pytest.fixture(scope="module")
def data() -> tuple[list[tuple[str, ...]], list[str], list[str]]:
    return corpus()


@pytest.mark.parametrize(("name", "options", "cls", "theirs"), METRICS, ids=IDS)
def test_corpus_and_sentence_scores_equal_sacrebleu(
    data: Any, name: str, options: dict[str, Any], cls: type, theirs: dict[str, Any]
) -> None:
    """The corpus score is sacrebleu's to the last digit; each item's value its sentence score."""
    refs, system_a, _ = data
    result = score(items(refs, system_a), [{"name": name, "n_bootstrap": 1, **options}])
    measurement = result.measurements[f"default.{name}"]
    reference = cls(**theirs).corpus_score(system_a, streams(refs))
    assert measurement.value == reference.score
    sentence_options = dict(theirs)
    if name == "bleu":
        sentence_options["effective_order"] = True
    sentence = cls(**sentence_options)
    for item, output, ref in zip(result.items, system_a, refs):
        verdict = item.scores[name]
        assert verdict.status is Status.OK
        assert verdict.value == sentence.sentence_score(output, list(ref)).score
        assert verdict.extra["refs"] == len(ref)
    assert measurement.n == len(refs)


def test_bleu_extras_and_signature(data: Any) -> None:
    """Brevity penalty, lengths, precisions and the signature are sacrebleu's."""
    refs, system_a, _ = data
    result = score(items(refs, system_a), ["bleu"], seed=12345)
    m = result.measurements["default.bleu"]
    bleu = BLEU()
    reference = bleu.corpus_score(system_a, streams(refs), n_bootstrap=1000)
    assert (m.extra["bp"], m.extra["ratio"]) == (reference.bp, reference.ratio)
    assert (m.extra["hyp_len"], m.extra["ref_len"]) == (reference.sys_len, reference.ref_len)
    assert [m.extra[f"precision_{n}"] for n in range(1, 5)] == reference.precisions
    signature = str(bleu.get_signature())
    assert signature.startswith("nrefs:var|bs:1000|seed:12345|")
    assert m.extra[f"signature[{signature}]"] == 1.0


@pytest.mark.parametrize(("name", "options", "cls", "theirs"), METRICS[::3], ids=IDS[::3])
def test_bootstrap_interval_is_sacrebleus(
    data: Any, name: str, options: dict[str, Any], cls: type, theirs: dict[str, Any]
) -> None:
    """With seed 12345, sacrebleu's own resamples: its μ ± ci, and their order statistics."""
    refs, _, system_b = data
    result = score(items(refs, system_b), [{"name": name, **options}], seed=12345)
    m = result.measurements[f"default.{name}"]
    metric = cls(**theirs)
    stats = metric._extract_corpus_statistics(system_b, streams(refs))
    seed, resampled = _bootstrap_resample(stats, metric, 1000)
    assert seed == "12345"
    scores = np.array([s.score for s in resampled])
    mean, ci = estimate_ci(scores)
    assert (m.extra["bootstrap_mean"], m.extra["bootstrap_ci"]) == (mean, ci)
    ordered = np.sort(scores)
    assert (m.ci_low, m.ci_high) == (ordered[25], ordered[974])
    assert m.ci_method == "bootstrap"


def _baseline_info(metric: Any, hyps: list[str], refs: list[tuple[str, ...]]) -> dict[str, Any]:
    stats = metric._extract_corpus_statistics(hyps, streams(refs))
    return {"m": (stats, Result(metric._aggregate_and_compute(stats).score))}


@pytest.mark.parametrize(("name", "options", "cls", "theirs"), METRICS[::2], ids=IDS[::2])
def test_paired_tests_are_sacrebleus(
    data: Any, name: str, options: dict[str, Any], cls: type, theirs: dict[str, Any]
) -> None:
    """paired_bs and paired_ar give sacrebleu's p-values and μ ± ci with its seed and counts."""
    refs, system_a, system_b = data
    spec = {"name": name, "n_bootstrap": 1, **options}
    scored_a = score(items(refs, system_a), [spec]).items
    scored_b = score(items(refs, system_b), [spec]).items
    metric = plan([spec]).metrics[0].metric
    a = [i.scores[name] for i in scored_a]
    b = [i.scores[name] for i in scored_b]
    ctx = MetricContext(seed=12345)
    bs = metric.paired_bs(a, b, ctx, n_resamples=1000)  # type: ignore[attr-defined]
    ar = metric.paired_ar(a, b, ctx, n_trials=2000)  # type: ignore[attr-defined]

    sacre = cls(**theirs)
    info = _baseline_info(sacre, system_a, refs)
    _, bs_ref = _paired_bs_test(info, "b", system_b, streams(refs), {"m": sacre}, 1000, -1, 12345)
    _, ar_ref = _paired_ar_test(info, "b", system_b, streams(refs), {"m": sacre}, 2000, -1, 12345)
    assert bs.p_value == bs_ref["m"].p_value
    assert (bs.mean_b, bs.ci_b) == (bs_ref["m"].mean, bs_ref["m"].ci)
    assert bs.value_b == bs_ref["m"].score
    stats_a = sacre._extract_corpus_statistics(system_a, streams(refs))
    _, baseline = _bootstrap_resample(stats_a, sacre, 1000)
    assert (bs.mean_a, bs.ci_a) == estimate_ci(np.array([s.score for s in baseline]))
    assert ar.p_value == ar_ref["m"].p_value
    assert ar.method == "paired-ar"
    assert ar.n_pairs == bs.n_pairs == len(refs)


def test_paired_bootstrap_drives_compare(data: Any) -> None:
    """compare() uses the metric's paired bootstrap and its own test: sacrebleu's paired-ar p."""
    refs, system_a, system_b = data
    rows = items(refs, system_a, "a") + items(refs, system_b, "b")
    result = score(rows, [{"name": "bleu", "n_bootstrap": 1}], seed=12345)
    (comparison,) = compare(result, baseline="a")
    sacre = BLEU()
    value_a = sacre.corpus_score(system_a, streams(refs)).score
    value_b = sacre.corpus_score(system_b, streams(refs)).score
    assert (comparison.value_a, comparison.value_b) == (value_a, value_b)
    assert comparison.difference == value_b - value_a
    assert comparison.method == "paired-bootstrap, paired-ar"
    # sacrebleu's own approximate randomisation, its default 10,000 trials and seed 12345.
    info = _baseline_info(sacre, system_a, refs)
    _, ar_ref = _paired_ar_test(info, "b", system_b, streams(refs), {"m": sacre}, 10000, -1, 12345)
    assert comparison.p_value == ar_ref["m"].p_value
    # The interval's resamples: sacrebleu's --paired-bs-n, which the metric asks for.
    assert comparison.extra["n_resamples"] == 1000
    assert comparison.ci_low is not None
    assert comparison.ci_high is not None
    assert comparison.ci_low < comparison.difference < comparison.ci_high
    metric = plan(["bleu"]).metrics[0].metric
    a = [i.scores["bleu"] for i in result.items if i.model == "a"]
    b = [i.scores["bleu"] for i in result.items if i.model == "b"]
    _, _, samples_a, samples_b = metric.paired_bootstrap(  # type: ignore[attr-defined]
        a, b, MetricContext(seed=12345), n_resamples=1000
    )
    diffs = np.sort(samples_b - samples_a)
    low, high = np.percentile(diffs, [2.5, 97.5])
    assert (comparison.ci_low, comparison.ci_high) == (float(low), float(high))


def test_scores_survive_saving_and_loading(data: Any, tmp_path: Any) -> None:
    """A saved run's statistics give the same corpus score and interval when re-aggregated."""
    refs, system_a, _ = data
    result = score(items(refs, system_a), ["ter", "bleu"], seed=3)
    path = tmp_path / "results.json"
    result.save_json(path)
    loaded = RunResult.load_json(path)
    for name in ("ter", "bleu"):
        metric = plan([name]).metrics[0].metric
        scores = [item.scores[name] for item in loaded.items]
        estimate = metric.aggregate(scores, MetricContext(seed=3))
        m = result.measurements[f"default.{name}"]
        assert (estimate.value, estimate.low, estimate.high) == (m.value, m.ci_low, m.ci_high)
    json.loads(path.read_text())  # plain JSON: statistics are lists of numbers


def test_shards_and_chunks_give_the_same_score(data: Any) -> None:
    """Scored by two worker processes, the corpus score and its interval are the same."""
    refs, system_a, _ = data
    serial = score(items(refs, system_a), ["chrf"], seed=5)
    parallel = score(items(refs, system_a), ["chrf"], seed=5, executor="process", workers=2)
    a, b = serial.measurements["default.chrf"], parallel.measurements["default.chrf"]
    assert (a.value, a.ci_low, a.ci_high) == (b.value, b.ci_low, b.ci_high)


def test_failed_requests_and_missing_answers(data: Any) -> None:
    """A failed request is an empty hypothesis (fail) or skip; no answer found fails likewise."""
    refs, system_a, _ = data
    outputs: list[str | None] = list(system_a[:50])
    outputs[0] = None
    outputs[1] = "Translation: " + system_a[1]
    rows = [
        ItemResult(id=str(i), output=o, expected=r) for i, (o, r) in enumerate(zip(outputs, refs))
    ]
    counted = score(rows, [{"name": "bleu", "n_bootstrap": 1}])
    hyps = ["" if o is None else o for o in outputs]
    assert (
        counted.measurements["default.bleu"].value
        == BLEU().corpus_score(hyps, streams(refs[:50])).score
    )
    assert counted.items[0].scores["bleu"].status is Status.FAIL
    left_out = score(rows, [{"name": "bleu", "n_bootstrap": 1, "count_failed": False}])
    assert left_out.items[0].scores["bleu"].status is Status.SKIP
    assert left_out.measurements["default.bleu"].n == 49
    extracted = score(rows, [{"name": "bleu", "n_bootstrap": 1, "extract": r"Translation: (.*)"}])
    scores = [i.scores["bleu"] for i in extracted.items]
    assert scores[1].status is Status.OK
    assert scores[1].extra["extracted"] == system_a[1]
    assert scores[2].status is Status.FAIL
    assert scores[2].reason == "no answer found"
    only = ["" if i != 1 else system_a[1] for i in range(50)]
    assert (
        extracted.measurements["default.bleu"].value
        == BLEU().corpus_score(only, streams(refs[:50])).score
    )


def test_clusters_resample_whole_clusters(data: Any) -> None:
    """With clusters the interval is a cluster bootstrap over the summed cluster statistics."""
    refs, system_a, _ = data
    rows = [
        ItemResult(id=str(i), output=o, expected=r, cluster=f"doc{i // 10}")
        for i, (o, r) in enumerate(zip(system_a, refs))
    ]
    result = score(rows, ["bleu"], seed=12345)
    m = result.measurements["default.bleu"]
    assert m.ci_method == "cluster-bootstrap"
    sacre = BLEU()
    stats = np.asarray(sacre._extract_corpus_statistics(system_a, streams(refs)))
    documents = stats.reshape(60, 10, -1).sum(axis=1)
    _, resampled = _bootstrap_resample(documents.tolist(), sacre, 1000)
    ordered = np.sort([s.score for s in resampled])
    assert (m.ci_low, m.ci_high) == (ordered[25], ordered[974])
    assert m.value == sacre.corpus_score(system_a, streams(refs)).score


@pytest.mark.parametrize(("metric", "module"), [("bleu", "sacrebleu"), ("rouge", "rouge_score")])
def test_a_missing_extra_is_a_clear_error(
    metric: str, module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the text extra, configuring the metric names the package and its version."""
    from itemscore import OptionError

    for name in [m for m in list(sys.modules) if m.split(".")[0] == module]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, module, None)
    wanted = {"sacrebleu": r"'sacrebleu<3,>=2\.2'", "rouge_score": r"'rouge-score>=0\.1\.2'"}
    with pytest.raises(OptionError, match=rf"Install it with: pip install {wanted[module]}$"):
        score([ItemResult(id="1", output="a", expected="a")], [metric])


def test_listing_the_metrics_imports_neither_library() -> None:
    """Loading the metric classes (as `itemscore metrics` does) imports no sacrebleu or rouge."""
    code = (
        "import sys\n"
        "from itemscore import Registry\n"
        "for name in ('bleu', 'chrf', 'ter', 'rouge'):\n"
        "    Registry(autoload=False).get(name)\n"
        "print(sorted(m for m in ('sacrebleu', 'rouge_score', 'nltk') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
