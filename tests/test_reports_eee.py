"""--report eee: Every Eval Ever 0.3.0 aggregate and instance files, valid against the schema.

The schema files are the EvalEval coalition's own, copied into tests/data/every_eval_ever/; the
standard errors are checked against scipy, the round trip against itemscore's own numbers.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from scipy import stats

import itemscore
from itemscore import RunResult
from itemscore.reports import BUILTIN_FORMATS
from itemscore.reports.eee import SCHEMA_VERSION, sample_hash, write

jsonschema = pytest.importorskip("jsonschema")

#: The schema files, copied into the repository (see their README there).
SCHEMAS = Path(__file__).parent / "data" / "every_eval_ever"
HARNESS = Path(__file__).parent / "data" / "harness"
CONTAINS = HARNESS / "inspect-cases" / "contains_qa_scripted-a.eval"
QA_LOGS = [HARNESS / "inspect" / f"capitals_qa_scripted-{m}.eval" for m in ("a", "b")]


def _schema(name: str) -> Any:
    path = SCHEMAS / name
    if not path.is_file():
        pytest.skip(f"the Every Eval Ever schema files are not at {SCHEMAS}")
    schema = json.loads(path.read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def _written(result: RunResult, folder: Path) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    write(result, folder / "eee")
    pairs = []
    for aggregate in sorted((folder / "eee").rglob("*.json")):
        record = json.loads(aggregate.read_text())
        samples = folder / "eee" / record["detailed_evaluation_results"]["file_path"]
        lines = [json.loads(line) for line in samples.read_text().splitlines()]
        pairs.append((record, lines))
    return pairs


def _two_models() -> RunResult:
    items = [i for path in QA_LOGS for i in itemscore.read_items(path)]
    return itemscore.score(items, ["exact_match", "token_f1"], suite_id="capitals")


def test_the_format_is_registered() -> None:
    """--report eee names the folder it writes."""
    assert BUILTIN_FORMATS["eee"] == "eee"


def test_every_file_is_valid_against_the_schema(tmp_path: Path) -> None:
    """Each model's aggregate and every instance line validate against schema 0.3.0."""
    aggregate, instance = _schema("eval.schema.json"), _schema("instance_level_eval.schema.json")
    pairs = _written(_two_models(), tmp_path)
    assert sorted(p[0]["model_info"]["id"] for p in pairs) == [
        "scripted/scripted-a",
        "scripted/scripted-b",
    ]
    for record, lines in pairs:
        aggregate.validate(record)
        assert record["schema_version"] == SCHEMA_VERSION
        assert record["detailed_evaluation_results"]["total_rows"] == len(lines) == 8
        for line in lines:
            instance.validate(line)
            assert line["evaluation_id"] == record["evaluation_id"]


def test_the_layout_is_the_formats_own(tmp_path: Path) -> None:
    """data/<suite>/<developer>/<model>/<uuid>.json, its samples beside it, checksummed."""
    import hashlib

    write(_two_models(), tmp_path / "eee")
    names = sorted(p.relative_to(tmp_path / "eee").as_posix() for p in tmp_path.rglob("*.json*"))
    assert [n.rsplit("/", 1)[0] for n in names] == [
        "data/capitals/scripted/scripted-a",
        "data/capitals/scripted/scripted-a",
        "data/capitals/scripted/scripted-b",
        "data/capitals/scripted/scripted-b",
    ]
    for name in names:
        if name.endswith(".json"):
            record = json.loads((tmp_path / "eee" / name).read_text())
            pointer = record["detailed_evaluation_results"]
            samples = (tmp_path / "eee" / pointer["file_path"]).read_bytes()
            assert pointer["checksum"] == hashlib.sha256(samples).hexdigest()
            assert pointer["file_path"] == name.removesuffix(".json") + "_samples.jsonl"


def test_uncertainty_of_each_measurement(tmp_path: Path) -> None:
    """Standard error and method, interval with level and method, n; SE as scipy computes it."""
    result = _two_models()
    ((record, _), _) = _written(result, tmp_path)
    by_id = {r["evaluation_result_id"]: r for r in record["evaluation_results"]}
    model = "scripted/scripted-a"
    for key, measurement in result.by_model[model].items():
        entry = by_id[key]
        uncertainty = entry["score_details"]["uncertainty"]
        assert entry["score_details"]["score"] == measurement.value
        assert uncertainty["num_samples"] == measurement.n
        assert uncertainty["confidence_interval"] == {
            "lower": measurement.ci_low,
            "upper": measurement.ci_high,
            "confidence_level": 0.95,
            "method": measurement.ci_method,
        }
        values = [i.scores[measurement.metric].value for i in result.items if i.model == model]
        if measurement.metric == "token_f1":
            assert uncertainty["standard_error"]["value"] == pytest.approx(stats.sem(values))
        else:
            p = measurement.value
            assert p is not None
            binomial = math.sqrt(p * (1 - p) / measurement.n)
            assert uncertainty["standard_error"]["value"] == pytest.approx(binomial)
        assert uncertainty["standard_error"]["method"] == "analytic"
        assert entry["score_details"]["details"]["n_ok"] == str(measurement.counts["ok"])


def test_a_bootstrap_interval_names_its_resamples(tmp_path: Path) -> None:
    """ci_method='bootstrap': num_bootstrap_samples is the count the interval was drawn with."""
    items = itemscore.read_items(CONTAINS)
    result = itemscore.score(items, ["token_f1"], suite_id="c", ci_method="bootstrap")
    ((record, _),) = _written(result, tmp_path)
    uncertainty = record["evaluation_results"][0]["score_details"]["uncertainty"]
    assert uncertainty["confidence_interval"]["method"] == "bootstrap"
    assert uncertainty["num_bootstrap_samples"] == 2000


def test_clusters_give_the_cluster_robust_standard_error(tmp_path: Path) -> None:
    """With clusters, the standard error is the measurement's se_cluster, so named."""
    items = itemscore.read_items(CONTAINS, columns={"cluster": "n"})  # a sample's two epochs
    result = itemscore.score(items, ["exact_match"], suite_id="c")
    measurement = result.measurements["c.exact_match"]
    ((record, _),) = _written(result, tmp_path)
    se = record["evaluation_results"][0]["score_details"]["uncertainty"]["standard_error"]
    assert se == {"value": measurement.extra["se_cluster"], "method": "cluster-robust"}


def test_groups_are_results_of_their_own(tmp_path: Path) -> None:
    """Each group of a measurement is an evaluation result named <suite>/<group>."""
    items = itemscore.read_items(CONTAINS, columns={"group": "sample.group"})
    result = itemscore.score(items, ["exact_match"], suite_id="c")
    ((record, lines),) = _written(result, tmp_path)
    names = [r["evaluation_name"] for r in record["evaluation_results"]]
    assert names == ["c", "c/g0", "c/g1"]
    assert record["evaluation_results"][1]["score_details"]["score"] == (
        result.measurements["c.exact_match"].groups["g0"].value
    )
    assert {line["metadata"]["group"] for line in lines} == {"g0", "g1"}


def test_instances_carry_hash_state_tokens_and_attempt(tmp_path: Path) -> None:
    """sample_hash of input and reference; skip/error kept in metadata; usage; attempts."""
    items = itemscore.read_items(QA_LOGS[1])
    result = itemscore.score(items, ["exact_match"], suite_id="q")
    ((_, lines),) = _written(result, tmp_path)
    first = lines[0]
    assert first["sample_hash"] == sample_hash(first["input"]["raw"], first["input"]["reference"])
    assert first["token_usage"] == {"input_tokens": 6, "output_tokens": 13, "total_tokens": 19}
    assert first["evaluation"] == {"score": 1.0, "is_correct": True}
    failed = lines[3]  # the request that failed: no output, scored fail
    assert failed["output"] == {"raw": []}
    assert failed["metadata"]["itemscore_status"] == "fail"
    contains = itemscore.score(itemscore.read_items(CONTAINS), ["exact_match"], suite_id="c")
    ((_, epochs),) = _written(contains, tmp_path / "epochs")
    assert [line["metadata"]["attempt"] for line in epochs] == ["1"] * 4 + ["2"] * 4


def test_round_trip_inspect_to_eee_to_itemscore_gives_identical_numbers(tmp_path: Path) -> None:
    """inspect log -> itemscore -> EEE -> read_items(format='eee') -> itemscore: same numbers."""
    result = _two_models()
    write(result, tmp_path / "eee")
    back = [
        item
        for samples in sorted((tmp_path / "eee").rglob("*_samples.jsonl"))
        for item in itemscore.read_items(samples, format="eee")
    ]
    again = itemscore.score(back, ["exact_match", "token_f1"], suite_id="capitals")
    assert again.measurements.keys() == result.measurements.keys()
    for model, measurements in result.by_model.items():
        for key, measurement in measurements.items():
            other = again.by_model[model][key]
            assert (other.value, other.ci_low, other.ci_high, other.n) == (
                measurement.value,
                measurement.ci_low,
                measurement.ci_high,
                measurement.n,
            )
            assert dict(other.counts) == dict(measurement.counts)
    assert [(i.id, i.model, i.output, i.expected) for i in back] == [
        (i.id, i.model, i.output, i.expected) for i in result.items
    ]


EPOCHS_LOG = HARNESS / "epochs" / "epochs_qa_scripted-a.eval"


def _entries(result: RunResult, folder: Path) -> dict[str, dict[str, Any]]:
    """The evaluation results of a one-model run by id, each checked against the schema."""
    aggregate = _schema("eval.schema.json")
    ((record, _),) = _written(result, folder)
    aggregate.validate(record)
    return {r["evaluation_result_id"]: r for r in record["evaluation_results"]}


def test_attempts_give_the_standard_error_over_questions(tmp_path: Path) -> None:
    """Epochs are attempts: the standard error is inspect's stderr, over questions, n questions.

    Further reducers have theirs over their question values: pass@2 (Chen et al.'s estimator
    computed here with scipy) as scipy's sem, min (every attempt right) as a binomial one.
    """
    from inspect_ai.log import read_eval_log
    from scipy.special import comb

    log = read_eval_log(str(EPOCHS_LOG))
    assert log.results is not None
    inspect_stderr = log.results.scores[0].metrics["stderr"].value
    items = itemscore.read_items(EPOCHS_LOG, format="inspect")
    result = itemscore.score(items, ["exact_match"], suite_id="e", reduce=["mean", "pass@2", "min"])
    entries = _entries(result, tmp_path)
    right: dict[str, list[bool]] = {}
    for item in result.items:  # each attempt's verdict; the reduction is what is checked
        right.setdefault(item.id, []).append(item.scores["exact_match"].status == "ok")
    shares = [sum(r) / len(r) for r in right.values()]
    passes = [1 - comb(len(r) - sum(r), 2) / comb(len(r), 2) for r in right.values()]
    every = [float(all(r)) for r in right.values()]
    assert len(right) == 5

    mean = entries["e.exact_match"]["score_details"]["uncertainty"]
    assert mean["num_samples"] == 5
    assert mean["standard_error"] == {"value": pytest.approx(inspect_stderr), "method": "analytic"}
    assert mean["standard_error"]["value"] == pytest.approx(stats.sem(shares), abs=1e-12)
    assert mean["standard_deviation"] == pytest.approx(stats.tstd(shares), abs=1e-12)

    pass2 = entries["e.exact_match[pass@2]"]["score_details"]
    assert pass2["score"] == pytest.approx(sum(passes) / 5, abs=1e-12)
    assert not set(passes) <= {0.0, 1.0}  # a mean of question values, not a ratio
    se = pass2["uncertainty"]["standard_error"]["value"]
    assert se == pytest.approx(stats.sem(passes), abs=1e-12)

    low = entries["e.exact_match[min]"]["score_details"]
    p = sum(every) / 5
    assert low["score"] == pytest.approx(p, abs=1e-12)
    assert low["uncertainty"]["standard_error"]["value"] == pytest.approx(
        math.sqrt(p * (1 - p) / 5), abs=1e-12
    )
    assert low["uncertainty"]["num_samples"] == 5


@pytest.mark.parametrize("attempts", [False, True])
def test_a_metric_with_its_own_aggregate_gives_the_standard_error_of_its_interval(
    tmp_path: Path, attempts: bool
) -> None:
    """f1 and bleu (bootstrap intervals): the interval's width over 2z, named from-interval."""
    if attempts:
        items = itemscore.read_items(EPOCHS_LOG, format="inspect")
    else:
        items = itemscore.read_items(QA_LOGS[0])
    assert any(i.attempt is not None for i in items) is attempts
    metrics: list[Any] = ["f1"]
    if _has("sacrebleu"):
        metrics.append({"name": "bleu", "n_bootstrap": 200})
    result = itemscore.score(items, metrics, suite_id="c")
    entries = _entries(result, tmp_path)
    z = stats.norm.ppf(0.975)
    for key, measurement in result.measurements.items():
        assert measurement.aggregation == "custom"
        assert measurement.ci_low is not None
        assert measurement.ci_high is not None
        uncertainty = entries[key]["score_details"]["uncertainty"]
        assert uncertainty["standard_error"] == {
            "value": pytest.approx((measurement.ci_high - measurement.ci_low) / (2 * z)),
            "method": "from-interval",
        }
        assert uncertainty["num_samples"] == measurement.n
        # The resamples a metric's own bootstrap drew are its own: not claimed unless recorded.
        assert "num_bootstrap_samples" not in uncertainty


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None
