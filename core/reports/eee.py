"""``eee/``: the run as Every Eval Ever (schema 0.3.0) aggregate and instance-level files.

Every Eval Ever (the EvalEval coalition's results format) keeps one aggregate JSON file per
benchmark and model, and beside it one JSON line per instance (sample and metric). A run of
several models is several such pairs, so this report is a folder laid out as the format's own
repository lays out its data::

    eee/data/<suite>/<developer>/<model>/<uuid>.json            the aggregate file
    eee/data/<suite>/<developer>/<model>/<uuid>_samples.jsonl   its instances

``<developer>`` is the part of the model name before its first ``/`` (``openai/gpt-4o``),
``unknown`` when there is none; ``<uuid>`` is derived from the suite, model and creation time,
so the same result always writes the same names.

What goes where:

- One ``evaluation_results`` entry per measurement (and one per group of it, named
  ``<suite>/<group>``), with ``score_details.uncertainty``: the standard error and how it was
  computed (``cluster-robust`` when the items carry clusters; ``analytic`` over the items, or
  over the questions with attempts, as the measurement recorded it in ``extra["se"]``; for a
  metric with its own aggregate, ``from-interval``: the interval's width over ``2 z``), the
  interval with its level and method, ``num_samples`` (the scored items, or questions) and,
  for a bootstrap interval, ``num_bootstrap_samples`` (the default aggregate's, or the count a
  metric's aggregate recorded as ``extra["n_resamples"]``; left out otherwise). The four item
  counts are in ``score_details.details``.
- In a run of several models, each measurement a leaderboard ranks (the boards of
  :func:`~.leaderboard_files.run_boards`, as ``itemscore leaderboard`` makes them) carries
  the model's place: ``score_details.uncertainty.rank_interval`` holds ``rank``,
  ``rank_low``, ``rank_high`` (the ranks it could hold), ``tie_group``, ``num_models``,
  ``method`` (``max-t``: simultaneous), ``confidence_level``, ``num_shared_samples`` (the
  questions every model answered, on which the ranks rest) and, for max-t,
  ``num_bootstrap_samples`` and ``seed``. The schema declares no such field but leaves
  ``uncertainty`` open, so the object validates; since readers that keep only the declared
  fields drop it, the same numbers are also in ``score_details.details`` (the schema's
  free-form strings) as ``rank_interval.rank``, ``rank_interval.rank_low``... Groups carry
  none: a leaderboard ranks whole measurements.
- One instance line per item and metric, with ``evaluation_result_id`` naming the measurement;
  ``sample_hash`` is the sha256 of the input text and the JSON list of valid answers. The
  instance schema wants a number and a verdict on every line, so an item scored skip or error
  is written with score 0 and ``is_correct`` false, and its true state and reason in
  ``metadata`` (``itemscore_status``, ``itemscore_reason``). An error line also carries its
  reason as the schema's ``error``; an item that is an error on each of its lines (a document
  its reader could not read, or the one metric of a run) reads back with
  ``read_items(format="eee")`` as an error item, while one metric's error among others is
  that line's alone.
- An item read from a harness log with ``rules="harness"`` carries on each line the rule the
  harness compared by (``metadata.itemscore_harness_rule``, its JSON text: kind and options)
  and the verdict it gave in this run (``metadata.itemscore_harness_verdict``: ``correct``,
  ``incorrect`` or ``unscored``, from a metric the rule decided), so that
  ``read_items(format="eee", rules="harness")`` gives the items back with the same rule and
  they score to the same verdicts.

Only the public result API is read: ``items``, ``by_model``, ``settings``, ``provenance`` and
the fields of each ``Measurement``.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import math
import re
import uuid
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .._records import STATES, ItemResult, Measurement, Status
from .._result import RunResult
from ..inputs.eee import sample_hash
from ..stats._intervals import METHODS
from ._files import open_report
from .leaderboard_files import run_boards

__all__ = ["FILENAME", "SCHEMA_VERSION", "aggregate_record", "sample_hash", "write"]

#: The folder this format writes.
FILENAME = "eee"
#: The Every Eval Ever schema version written.
SCHEMA_VERSION = "0.3.0"
_SAFE = re.compile(r"[^A-Za-z0-9._+-]+")
#: The metadata key of a harness rule (``itemscore.integrations.harness_rules.RULE_KEY``).
_RULE_KEY = "harness_rule"
#: A metric's state where the rule decided it, as the harness's verdict (EEE's own words).
_VERDICTS: dict[str, str] = {
    Status.OK: "correct",
    Status.FAIL: "incorrect",
    Status.SKIP: "unscored",
}
#: The names of the states that count in aggregates.
_SCORED = frozenset(s.value for s in STATES if s.scored)


def write(result: RunResult, path: Path) -> None:
    """Write the Every Eval Ever files of ``result`` into the folder ``path``."""
    path.mkdir(parents=True, exist_ok=True)
    by_model: dict[str | None, list[ItemResult]] = {}
    for item in result.items:
        by_model.setdefault(item.model, []).append(item)
    suite = result.settings.suite_id
    for model, measurements in result.by_model.items():
        items = by_model.get(model, [])
        record = aggregate_record(result, model, measurements, items)
        developer, name = _split_model(model)
        evaluation_uuid = _uuid(suite, model, str(result.provenance.get("created", "")))
        folder = Path("data", _segment(suite), _segment(developer), _segment(name))
        (path / folder).mkdir(parents=True, exist_ok=True)
        samples = folder / f"{evaluation_uuid}_samples.jsonl"
        digest = hashlib.sha256()
        rows = 0
        with open_report(path / samples) as handle:
            for line in _instances(result, model, items, record["evaluation_id"]):
                text = json.dumps(line, ensure_ascii=False, allow_nan=False) + "\n"
                digest.update(text.encode("utf-8", "backslashreplace"))
                handle.write(text)
                rows += 1
        record["detailed_evaluation_results"] = {
            "format": "jsonl",
            "file_path": samples.as_posix(),
            "hash_algorithm": "sha256",
            "checksum": digest.hexdigest(),
            "total_rows": rows,
        }
        with open_report(path / folder / f"{evaluation_uuid}.json") as handle:
            json.dump(record, handle, ensure_ascii=False, indent=2, allow_nan=False)
            handle.write("\n")


def aggregate_record(
    result: RunResult,
    model: str | None,
    measurements: Mapping[str, Measurement],
    items: Sequence[ItemResult],
) -> dict[str, Any]:
    """The aggregate Every Eval Ever object of one model (without the instance file's pointer)."""
    provenance = result.provenance
    version = str(provenance.get("itemscore_version", "unknown"))
    developer, _ = _split_model(model)
    record: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": f"{result.settings.suite_id}/{_model_id(model)}/{_retrieved(result)}",
        "retrieved_timestamp": _retrieved(result),
        "source_metadata": {
            "source_name": "itemscore",
            "source_type": "evaluation_run",
            "source_organization_name": "unknown",
            "evaluator_relationship": "other",
            "additional_details": _strings(
                {
                    "itemscore_version": version,
                    "executor": result.settings.executor,
                    "seed": result.settings.seed,
                }
            ),
        },
        "eval_library": {"name": "itemscore", "version": version},
        "model_info": {
            "name": _model_id(model),
            "id": _model_id(model),
            **({"developer": developer} if developer != "unknown" else {}),
            "additional_details": {
                "deployment_type": "unknown",
                "model_availability": "unknown",
            },
        },
        "evaluation_results": [],
    }
    if isinstance(provenance.get("created"), str):
        record["evaluation_timestamp"] = provenance["created"]
    data = provenance.get("data")
    details = {}
    if isinstance(data, Mapping):
        details = _strings({k: v for k, v in data.items() if isinstance(v, (str, int, float))})
    results = record["evaluation_results"]
    ranks = _rank_intervals(result, model)
    for measurement in measurements.values():
        results += _results(result, measurement, items, details, ranks.get(measurement.key))
    return record


def _rank_intervals(result: RunResult, model: str | None) -> dict[str, dict[str, Any]]:
    """``model``'s place on each leaderboard of the run, by measurement key (none: one model).

    A board ranks a label by its measurement keyed ``<suite>.<label>`` (with attempts, the
    one of the run's first reducer), so only that measurement carries the board's numbers.
    """
    if model is None or len(result.by_model) < 2:
        return {}
    out = {}
    for label, board in run_boards(result).boards:
        row = next((r for r in board.rows if r.model == model), None)
        if row is None:
            continue
        place: dict[str, Any] = {
            "rank": row.rank,
            "rank_low": row.rank_low,
            "rank_high": row.rank_high,
            "tie_group": row.tie_group,
            "num_models": len(board.rows),
            "method": board.method,
            "confidence_level": board.confidence,
            "num_shared_samples": board.n_pairs,
        }
        if board.n_resamples:
            place |= {"num_bootstrap_samples": board.n_resamples, "seed": board.seed}
        out[f"{result.suite_id}.{label}"] = place
    return out


def _results(
    result: RunResult,
    measurement: Measurement,
    items: Sequence[ItemResult],
    data_details: Mapping[str, str],
    rank: Mapping[str, Any] | None = None,
) -> Iterator[dict[str, Any]]:
    suite = result.settings.suite_id
    entries = [(None, measurement)] + [(g, m) for g, m in measurement.groups.items()]
    for group, one in entries:
        if one.value is None or not math.isfinite(one.value):
            continue  # nothing scored, or the aggregate failed: the schema needs a score
        name = suite if group is None else f"{suite}/{group}"
        result_id = one.key if group is None else f"{one.key}[{group}]"
        in_group = [i for i in items if group is None or i.group == group]
        details = _strings(
            {f"n_{s.value}": one.counts.get(s, 0) for s in STATES}
            | {k: v for k, v in one.extra.items() if isinstance(v, (int, float))}
        )
        uncertainty = _uncertainty(one, in_group)
        if group is None and rank is not None:
            uncertainty["rank_interval"] = dict(rank)
            details |= _strings({f"rank_interval.{k}": v for k, v in rank.items()})
        yield {
            "evaluation_result_id": result_id,
            "evaluation_name": name,
            "source_data": {
                "dataset_name": name,
                "source_type": "other",
                **({"additional_details": dict(data_details)} if data_details else {}),
            },
            "metric_config": _metric_config(one),
            "score_details": {"score": one.value, "details": details, "uncertainty": uncertainty},
        }


def _metric_config(measurement: Measurement) -> dict[str, Any]:
    kind = _aggregation(measurement)
    config: dict[str, Any] = {
        "metric_id": measurement.metric,
        "metric_name": measurement.metric,
        "metric_kind": kind,
        "lower_is_better": not measurement.higher_is_better,
        "additional_details": {"reproducibility_class": measurement.reproducibility_class},
    }
    if kind == "ratio":
        config |= {"score_type": "binary", "metric_unit": "proportion"}
    else:
        config |= {"score_type": "continuous", "min_score": None, "max_score": None}
    return config


def _aggregation(measurement: Measurement) -> str:
    """The measurement's aggregation kind (``Measurement.aggregation`` where it is recorded)."""
    kind = getattr(measurement, "aggregation", None)
    if isinstance(kind, str):
        return kind
    kinds = getattr(METHODS.get(measurement.ci_method), "kinds", ())
    return "mean" if "mean" in kinds else "ratio" if kinds else "custom"


def _uncertainty(measurement: Measurement, items: Sequence[ItemResult]) -> dict[str, Any]:
    out: dict[str, Any] = {"num_samples": measurement.n}
    if measurement.ci_low is not None and measurement.ci_high is not None:
        out["confidence_interval"] = {
            "lower": measurement.ci_low,
            "upper": measurement.ci_high,
            "confidence_level": measurement.confidence,
            "method": measurement.ci_method,
        }
    se = _standard_error(measurement, items)
    if se is not None:
        out["standard_error"] = {"value": se[0], "method": se[1]}
        if se[2] is not None:
            out["standard_deviation"] = se[2]
    if measurement.ci_method in ("bootstrap", "cluster-bootstrap"):
        resamples = measurement.extra.get("n_resamples")
        if resamples is None and _aggregation(measurement) in ("ratio", "mean"):
            # The default aggregate's count; a metric's own bootstrap draws its own, unrecorded.
            from .. import aggregate

            resamples = inspect.signature(aggregate.mean).parameters["n_resamples"].default
        if resamples is not None:
            out["num_bootstrap_samples"] = int(resamples)
    return out


def _standard_error(
    measurement: Measurement, items: Sequence[ItemResult]
) -> tuple[float, str, float | None] | None:
    """(value, method, standard deviation) of the measurement's standard error, when it has one.

    In order: the cluster-robust one it recorded (``se_cluster``); the one over questions it
    recorded with attempts, or that its own aggregate recorded (``se``, with ``sd``); the
    analytic one of its item values (a ratio or a mean of items); else, for any other
    measurement with an interval, the interval's width over ``2 z`` (``from-interval``).
    """
    extra = measurement.extra
    if "se_cluster" in extra:
        return float(extra["se_cluster"]), "cluster-robust", None
    if "se" in extra:
        sd = extra.get("sd")
        return float(extra["se"]), "analytic", None if sd is None else float(sd)
    kind = _aggregation(measurement)
    if kind not in ("ratio", "mean") or "n_attempts" in extra:
        return _from_interval(measurement)
    if measurement.n < 2:
        return None
    values = [
        float(score.value)
        for item in items
        if (score := item.scores.get(measurement.metric)) is not None
        and score.status in _SCORED
        and score.value is not None
    ]
    n = len(values)
    if n != measurement.n or n < 2:
        return None
    mean = math.fsum(values) / n
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    if kind == "ratio":
        p = float(measurement.value) if measurement.value is not None else mean
        return math.sqrt(p * (1 - p) / n), "analytic", sd
    return sd / math.sqrt(n), "analytic", sd


def _from_interval(measurement: Measurement) -> tuple[float, str, None] | None:
    """``(upper - lower) / (2 z)`` of the measurement's interval, as its macro value uses it."""
    from statistics import NormalDist

    low, high = measurement.ci_low, measurement.ci_high
    if low is None or high is None or not 0 < measurement.confidence < 1:
        return None
    z = NormalDist().inv_cdf(0.5 + measurement.confidence / 2)
    return (high - low) / (2 * z), "from-interval", None


def _instances(
    result: RunResult, model: str | None, items: Sequence[ItemResult], evaluation_id: str
) -> Iterator[dict[str, Any]]:
    suite = result.settings.suite_id
    labels = [m.metric for m in result.by_model[model].values()]
    keys = {m.metric: m.key for m in result.by_model[model].values()}
    for item in items:
        reference = list(item.expected or ())
        raw_input = item.input if item.input is not None else ""
        base: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "evaluation_id": evaluation_id,
            "model_id": _model_id(model),
            "evaluation_name": suite,
            "sample_id": item.id,
            "sample_hash": sample_hash(raw_input, reference),
            "interaction_type": "single_turn",
            "input": {"raw": raw_input, "reference": reference},
            "output": {"raw": [] if item.output is None else [item.output]},
        }
        choices = item.metadata.get("choices")
        if isinstance(choices, list) and all(isinstance(c, str) for c in choices):
            base["input"]["choices"] = choices
        usage = _token_usage(item.metadata)
        if usage is not None:
            base["token_usage"] = usage
        harness = _harness(item)
        for label in labels:
            score = item.scores.get(label)
            if score is None:
                continue
            status = score.status.value
            scored = status in _SCORED and score.value is not None
            line = dict(base)
            line["evaluation_result_id"] = keys[label]
            line["answer_attribution"] = (
                []
                if item.output is None
                else [
                    {
                        "turn_idx": 0,
                        "source": "output.raw",
                        "extracted_value": item.output,
                        "extraction_method": label,
                        "is_terminal": True,
                    }
                ]
            )
            line["evaluation"] = {
                "score": float(score.value) if scored and score.value is not None else 0.0,
                "is_correct": status == "ok",
            }
            metadata = {"itemscore_status": status, "itemscore_metric": label}
            if score.reason is not None:
                metadata["itemscore_reason"] = score.reason
            if item.group is not None:
                metadata["group"] = item.group
            if item.cluster is not None:
                metadata["cluster"] = item.cluster
            attempt = item.attempt
            if attempt is None:
                attempt = item.metadata.get("attempt")
            if attempt is not None:
                metadata["attempt"] = str(attempt)
            metadata |= harness
            line["metadata"] = metadata
            if status == "error":
                line["error"] = score.reason
            yield line


def _harness(item: ItemResult) -> dict[str, str]:
    """The item's harness rule and the verdict it gave, as metadata texts (none: no rule).

    The verdict is the state of a metric that the rule decided (its ``extra`` names the
    rule), or ``unscored`` for a rule of that kind; when no metric applied the rule, only the
    rule is written.
    """
    rule = item.metadata.get(_RULE_KEY)
    if not isinstance(rule, Mapping):
        return {}
    try:
        text = json.dumps(_plain(rule), ensure_ascii=False, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError):  # not JSON: the scorers could not have applied it either
        return {}
    out = {"itemscore_harness_rule": text}
    if rule.get("kind") == "unscored":  # no metric's extra names it: a skip carries none
        return out | {"itemscore_harness_verdict": "unscored"}
    for score in item.scores.values():
        status = score.status.value
        if "rule" in score.extra and status in _VERDICTS:
            out["itemscore_harness_verdict"] = _VERDICTS[status]
            break
    return out


def _plain(value: Any) -> Any:
    """``value`` with its read-only mappings and tuples as JSON's objects and lists."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _token_usage(metadata: Mapping[str, Any]) -> dict[str, int] | None:
    counts = [metadata.get(k) for k in ("input_tokens", "output_tokens", "total_tokens")]
    if not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts):
        return None
    return dict(zip(("input_tokens", "output_tokens", "total_tokens"), counts))  # type: ignore[arg-type]


def _strings(values: Mapping[str, Any]) -> dict[str, str]:
    return {str(k): (repr(v) if isinstance(v, float) else str(v)) for k, v in values.items()}


def _model_id(model: str | None) -> str:
    return model if model else "unknown"


def _split_model(model: str | None) -> tuple[str, str]:
    if not model:
        return "unknown", "unknown"
    developer, slash, name = model.partition("/")
    return (developer, name) if slash and name else ("unknown", model)


def _segment(text: str) -> str:
    """A path segment from a name (no separators, no leading dot)."""
    safe = _SAFE.sub("_", text).strip("._") or "unknown"
    return safe[:100]


def _uuid(suite: str, model: str | None, created: str) -> str:
    digest = hashlib.sha256(f"{suite}\n{model}\n{created}".encode("utf-8", "surrogatepass"))
    return str(uuid.UUID(bytes=digest.digest()[:16], version=4))


def _retrieved(result: RunResult) -> str:
    """When the record was made, as Unix time (the schema's ``retrieved_timestamp``)."""
    created = result.provenance.get("created")
    if isinstance(created, str):
        try:
            moment = datetime.fromisoformat(created.replace("Z", "+00:00"))
        except ValueError:
            moment = None
        if moment is not None:
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=timezone.utc)
            return str(int(moment.timestamp()))
    return "0"
