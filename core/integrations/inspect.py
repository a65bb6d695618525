"""Any itemscore metric as an inspect_ai scorer: ``itemscore_scorer("token_f1", ...)``.

A task author writes::

    from inspect_ai import Task
    from itemscore.integrations.inspect import itemscore_scorer

    Task(dataset=..., solver=generate(), scorer=itemscore_scorer("token_f1", remove_articles=True))

and the log inspect writes carries, per sample, itemscore's score: ``value`` (the item's value;
inspect's ``"N"`` for an item itemscore scored skip or error, which no metric below counts),
``answer`` (the output scored), ``explanation`` (itemscore's reason, when it gives one) and
``metadata`` (``itemscore_metric``, ``itemscore_status``, ``itemscore_value``,
``itemscore_reason``, ``itemscore_extra``). The scorer's metrics are itemscore's own aggregate
of those scores, through the metric's ``aggregate`` (so a ratio gets its Wilson interval, F1
its own aggregate): ``value``, ``ci_low`` and ``ci_high``. With several epochs, each sample's
scored attempts are first averaged (itemscore's default reducer, ``mean``), and the question
values averaged with a normal interval.

The metric and its options are checked when ``itemscore_scorer`` is called, before any sample:
an unknown metric or option is an itemscore ``ConfigError`` naming the valid ones. The call
also imports what scoring needs, so that samples scored at once on inspect's threads
(``max_samples``, ``max_connections``) do not import it at once.

How a sample becomes the item scored: ``id`` the sample id, ``output`` the completion
(``None`` when the model gave none), ``expected`` the target's texts, ``input`` the input
text, ``model`` the model's name; metadata: the sample's metadata and ``choices`` (their
texts). Needs inspect_ai (``pip install inspect_ai``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._exceptions import ConfigError
from .._metric import MetricContext
from .._plan import RunPlan
from .._plan import plan as make_plan
from .._records import STATES, ItemResult, ItemScore
from .._run import score as run_score
from .._secrets import mask_secrets

try:
    from inspect_ai.scorer import (
        NOANSWER,
        Metric,
        SampleScore,
        Score,
        Scorer,
        Target,
        metric,
        scorer,
    )
    from inspect_ai.solver import TaskState
except ImportError as exc:  # pragma: no cover - the hint names the fix
    from itemscore._extras import install_hint

    raise ImportError(
        f"itemscore.integrations.inspect needs inspect_ai: {install_hint('inspect_ai')}."
    ) from exc

__all__ = ["ci_high", "ci_low", "itemscore_scorer", "value"]

_SUITE = "inspect"


def itemscore_scorer(metric: str, *, label: str | None = None, **options: Any) -> Scorer:
    """An inspect_ai scorer that scores each sample with itemscore's ``metric``.

    Args:
        metric: An itemscore metric id (built-in or from any installed plugin).
        label: The scorer's name in the log (default: the metric id); two itemscore scorers
            of one task need two labels.
        options: The metric's options, as itemscore takes them.

    Raises:
        ConfigError: an unknown metric, an unknown option or a value it does not take.
    """
    planned = _plan(metric, label, options)
    name = planned.metrics[0].label
    # inspect scores samples on worker threads (below), and the scoring path imports some
    # modules on first use: pyarrow imports pandas on its first conversion, and a thread that
    # finds pandas half imported by another fails. Scoring no items here, in the caller's
    # thread, imports all of them first, without calling the metric.
    run_score([], planned, suite_id=_SUITE)
    # inspect writes these into its log: a credential option (`body={api_key: ...}`) is `***`
    # there, as in results.json; the metric scoring the samples is `planned`, with the value.
    masked, _ = mask_secrets(dict(options))
    args: dict[str, Any] = {"metric": metric, "label": name, "options": masked}

    @scorer(
        metrics=[value(**args), ci_low(**args), ci_high(**args)],
        name=name,
    )
    def itemscore(metric: str, label: str, options: Mapping[str, Any]) -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            import anyio.to_thread  # inspect_ai's own async library

            item = _item(state, target)
            # itemscore.score runs an event loop of its own for async metrics: not in this one.
            result = await anyio.to_thread.run_sync(
                lambda: run_score([item], planned, suite_id=_SUITE)
            )
            return _inspect_score(result.items[0].scores[name], item)

        return score

    return itemscore(**args)


def _plan(metric: str, label: str | None, options: Mapping[str, Any]) -> RunPlan:
    if not isinstance(metric, str) or not metric:
        raise ConfigError(f"`metric` ({metric!r}) must be an itemscore metric id, e.g. 'token_f1'.")
    spec: dict[str, Any] = {"name": metric, **options}
    if label is not None:
        spec["label"] = label
    return make_plan([spec])


def _item(state: TaskState, target: Target) -> ItemResult:
    metadata: dict[str, Any] = dict(state.metadata or {})
    choices = [c.value for c in state.choices] if state.choices else []
    if choices:
        metadata["choices"] = choices
    completion = state.output.completion if state.output is not None else None
    return ItemResult(
        id=str(state.sample_id),
        output=completion if completion or state.output.choices else None,
        expected=tuple(target.target) or None,
        input=state.input_text,
        model=str(state.model),
        metadata=metadata,
    )


#: The names of the states that count in aggregates, and of those that do not.
_SCORED = frozenset(s.value for s in STATES if s.scored)
_UNSCORED = frozenset(s.value for s in STATES if not s.scored)


def _inspect_score(result: ItemScore, item: ItemResult) -> Score:
    status = str(getattr(result.status, "value", result.status))
    scored = status in _SCORED and result.value is not None
    return Score(
        value=float(result.value) if scored and result.value is not None else NOANSWER,
        answer=item.output,
        explanation=result.reason,
        metadata={
            "itemscore_metric": result.metric,
            "itemscore_status": status,
            "itemscore_value": result.value,
            "itemscore_reason": result.reason,
            "itemscore_extra": dict(result.extra),
        },
    )


# -- the scorer's metrics: itemscore's aggregate of the logged scores --------------------------


def _estimate(
    metric: str, label: str, options: Mapping[str, Any], scores: Sequence[SampleScore]
) -> Any:
    planned = _plan(metric, label, options).metrics[0]
    by_sample: dict[Any, list[ItemScore]] = {}
    for sample in scores:
        by_sample.setdefault(sample.sample_id, []).append(_item_score(label, sample.score))
    if any(len(attempts) > 1 for attempts in by_sample.values()):
        from .. import aggregate

        means = []
        for attempts in by_sample.values():
            values = [s.value for s in attempts if s.status in _SCORED]
            if values:
                means.append(math.fsum(v for v in values if v is not None) / len(values))
        return aggregate.mean(means)
    flat = [attempts[0] for attempts in by_sample.values()]
    return planned.metric.aggregate(flat, MetricContext(suite_id=_SUITE, label=label))


def _item_score(label: str, score: Score) -> ItemScore:
    metadata = score.metadata or {}
    status = metadata.get("itemscore_status")
    if status in _SCORED:
        return ItemScore(
            metric=label,
            value=metadata.get("itemscore_value"),
            status=status,
            extra=metadata.get("itemscore_extra") or {},
        )
    if status in _UNSCORED:
        return ItemScore(metric=label, status=status, reason=metadata.get("itemscore_reason"))
    # a score edited or written without itemscore's metadata: its value, as inspect reads it
    number = score.as_float()
    return ItemScore(metric=label, value=number, status="ok" if number > 0 else "fail")


def _estimate_metric(name: str, field: str) -> Callable[..., Metric]:
    """The inspect_ai metric ``name``: the ``field`` of itemscore's estimate over the samples."""

    def made(metric: str, label: str, options: Mapping[str, Any]) -> Metric:
        def compute(scores: list[SampleScore]) -> float:
            found = getattr(_estimate(metric, label, options, scores), field)
            return float("nan") if found is None else float(found)

        return compute

    return metric(name=name, scores="unreduced")(made)


#: itemscore's headline number for the scorer's metric, over the samples it scored.
value = _estimate_metric("value", "value")
#: The lower end of itemscore's interval for the headline number.
ci_low = _estimate_metric("ci_low", "low")
#: The upper end of itemscore's interval for the headline number.
ci_high = _estimate_metric("ci_high", "high")
