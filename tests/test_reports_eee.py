"""--report eee: Every Eval Ever 0.3.0 aggregate and instance files, valid against the schema.

The schema files are the EvalEval coalition's own (../shared/data/every_eval_ever/); the
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

SCHEMAS = Path(__file__).resolve().parents[3] / "shared" / "data" / "every_eval_ever"
if not SCHEMAS.is_dir():  # a clone beside shared/, as CI lays it out
    SCHEMAS = Path(__file__).resolve().parents[2] / "shared" / "data" / "every_eval_ever"
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
