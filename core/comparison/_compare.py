""":func:`compare`: the models of one run, or two runs, compared metric by metric."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._exceptions import ConfigError, did_you_mean, one_of
from ..aggregate import _check_confidence
from ._family import _adjusted, _check_adjust, _group_rows, _with_groups
from ._joined import comparison_of, join
from ._metrics import (
    _higher_is_better,
    _kind_of,
    _labels,
    _metric_for,
    check_same_metrics,
    score_range,
)
from ._one import _compare_one, _Paired
from ._pairing import (
    _check_same_items,
    _Columns,
    _Entry,
    _pick,
    _question_sides,
    _reduces,
    _Sides,
    _take,
)
from ._record import Comparison

if TYPE_CHECKING:
    from .._result import RunResult


def _model_names(result: RunResult) -> list[str | None]:
    return list(result.by_model) or [None]


def compare(
    result: RunResult,
    other: RunResult | str | None = None,
    *,
    baseline: str | None = None,
    metrics: Sequence[str] | None = None,
    adjust: str = "holm",
    confidence: float | None = None,
    seed: int | None = None,
    allow_different_inputs: bool = False,
    names: tuple[str, str] | None = None,
    labels: Sequence[str] | None = None,
) -> list[Comparison]:
    """Compare models on the items they share, metric by metric.

    - ``compare(result)``: every pair of models of one run (the earlier one is the baseline);
      ``compare(result, "model-a")`` or ``compare(result, baseline="model-a")``: every model
      against ``model-a``.
    - ``compare(result_a, result_b)``: two runs (two saved results, or one model before and
      after a change); models of the same name are compared, or the only model of each.

    Items pair by id (and by model inside one result). A pair where either side is skip or
    error is left out and counted in ``n_unpaired``, as is an id only one side has.

    Args:
        result: A run, or the baseline run.
        other: The candidate run, or the baseline model's name.
        baseline: The baseline model (one run only).
        metrics: Labels to compare (default: every label both sides have).
        adjust: Multiple-comparison adjustment: "holm" (default), "bh" or "none".
        confidence: Confidence level (default: the run's).
        seed: Seed of the bootstraps (default: the run's).
        allow_different_inputs: Pair items by id even when their ``input`` or ``expected``
            differ between the sides (by default that is an error: different data).
        names: How messages name the two runs, or the one (the command line gives the file
            names; default "the baseline results", "the candidate results"). Two runs, or
            one named, are checked as read back from files: one metric per label on both
            sides, and every per-item score of the compared labels one its metric can give.
        labels: Two runs: a short label of each (e.g. the folders of the results files,
            ``("v1", "v2")``; default ``("a", "b")``). A model both runs hold is named
            ``model @ label`` on each side.

    Returns:
        One :class:`Comparison` per metric label and pair of models, in the order of the
        labels, with per-group comparisons in ``groups``.

    Raises:
        ConfigError: an unknown model or label, a bad ``adjust``, ``confidence`` or
            ``labels`` (``labels`` with one run); one model
            and nothing to compare it with; sides that share no item, or whose items with one
            id differ (unless ``allow_different_inputs``); a metric whose own aggregate must be
            recomputed but is not installed.
        MetricMismatchError: two runs give a compared label to different metrics or options
            (a :class:`ConfigError`).
        ResultsFormatError: a per-item score of a compared label that its metric cannot give
            (a value outside its range, not finite, or missing), naming the run and the item.
    """
    return _comparisons(
        result, other, baseline=baseline, metrics=metrics, adjust=adjust,
        confidence=confidence, seed=seed, allow_different_inputs=allow_different_inputs,
        with_groups=True, checked=other is not None or names is not None, run_names=names,
        run_labels=_check_labels(labels, other),
    )  # fmt: skip


def _check_labels(labels: Sequence[str] | None, other: RunResult | str | None) -> tuple[str, str]:
    """The two runs' labels: two distinct, non-empty strings; only with a second run."""
    if labels is None:
        return ("a", "b")
    if other is None or isinstance(other, str):
        raise ConfigError(
            f"`labels` ({labels!r}) names two runs, and one run is compared: give the second "
            "run, or leave `labels` out."
        )
    pair = (labels,) if isinstance(labels, str) else tuple(labels)
    if (
        len(pair) != 2
        or not all(isinstance(x, str) and x.strip() for x in pair)
        or (pair[0].strip() == pair[1].strip())
    ):
        raise ConfigError(
            f"`labels` ({labels!r}) must be two different, non-empty names, one per run "
            "(e.g. ('v1', 'v2'))."
        )
    return (pair[0].strip(), pair[1].strip())


def _comparisons(
    result: RunResult,
    other: RunResult | str | None,
    *,
    baseline: str | None,
    metrics: Sequence[str] | None,
    adjust: str,
    confidence: float | None,
    seed: int | None,
    allow_different_inputs: bool,
    with_groups: bool,
    checked: bool = False,
    run_names: tuple[str, str] | None = None,
    run_labels: tuple[str, str] = ("a", "b"),
) -> list[Comparison]:
    """:func:`compare`; ``with_groups=False`` leaves the group comparisons out (bold cells).

    ``checked``: the runs are checked as if read back from files (``run_names`` names them): one
    metric per label on both sides, and every per-item score of the compared labels possible
    for its metric.
    """
    adjust = _check_adjust(adjust)
    if isinstance(other, str):
        if baseline is not None and baseline != other:
            raise ConfigError(
                f"The baseline is given twice ({other!r} and {baseline!r}); give it once."
            )
        baseline, other = other, None
    settings = result.settings
    level = float(settings.confidence) if confidence is None else _check_confidence(confidence)
    seed = int(settings.seed) if seed is None else seed
    suite_id = str(settings.suite_id)

    models_a = _model_names(result)
    pairs: list[tuple[str | None, str | None, str | None, str | None]] = []
    if other is None:
        if len(models_a) < 2:
            raise ConfigError(
                f"The run has {'one model' if models_a != [None] else 'no model names'}, so "
                "there is nothing to compare within it: give a second run to compare against "
                "(compare(result_a, result_b)), or score several models in one run (the role "
                "`model`)."
            )
        if baseline is not None and baseline not in models_a:
            names = [m for m in models_a if m is not None]
            raise ConfigError(
                f"`baseline` ({baseline!r}) is no model of the run; its models are "
                f"{one_of(names)}.{did_you_mean(baseline, names)}"
            )
        if baseline is not None:
            pairs = [(baseline, m, baseline, m) for m in models_a if m != baseline]
        else:
            pairs = [(a, b, a, b) for i, a in enumerate(models_a) for b in models_a[i + 1 :]]
    else:
        if baseline is not None:
            raise ConfigError(
                "`baseline` applies to the models of one run; with two runs the first is the "
                "baseline."
            )
        models_b = _model_names(other)
        shared = [m for m in models_a if m in models_b]
        if len(models_a) == 1 and len(models_b) == 1:
            ma, mb = models_a[0], models_b[0]
            na, nb = (ma, mb) if ma != mb else (_tag(ma, run_labels[0]), _tag(mb, run_labels[1]))
            pairs = [(ma, mb, na, nb)]
        elif not shared:
            raise ConfigError(
                f"The two runs share no model (first: {one_of(models_a)}; second: "
                f"{one_of(models_b)}); compare runs of one model each, or of the same models."
            )
        else:
            pairs = [(m, m, _tag(m, run_labels[0]), _tag(m, run_labels[1])) for m in shared]

    labels_a = _labels(result)
    labels_b = set(_labels(other)) if other is not None else set(labels_a)
    labels = [label for label in labels_a if label in labels_b]
    if metrics is not None:
        unknown = [m for m in metrics if m not in labels]
        if unknown:
            raise ConfigError(
                f"`metrics` names {one_of(unknown)}, which {'is' if len(unknown) == 1 else 'are'}"
                f" not a label of both runs; the shared labels are {one_of(labels)}."
                f"{did_you_mean(unknown[0], labels)}"
            )
        labels = [label for label in labels if label in metrics]

    side_b = other if other is not None else result
    several = len(models_a) > 1, len(_model_names(side_b)) > 1
    sides: _Sides | None = None
    if _reduces(result) or _reduces(side_b):
        entries, sides = _question_sides(result, side_b, labels, pairs, *several)
    else:
        entries = [_Entry(label, f"{suite_id}.{label}", label, label) for label in labels]
    kinds = [_kind_of(result, side_b, entry) for entry in entries]
    if checked:
        _check_runs(result, other, entries, labels, run_names)
    if sides is None and not result.table.has("cluster") and "bootstrap" not in kinds:
        # Ratio and mean metrics compare from the join's counts and tallies, out of core.
        joined = join(
            (result, side_b), [(a, b) for a, b, _, _ in pairs], several,
            [(e.column_a, e.column_b, kind == "mean") for e, kind in zip(entries, kinds)],
            check_items=not allow_different_inputs,
        )  # fmt: skip
        if entries and not any(joined.n_matched):
            raise _nothing_paired(other)
    else:
        if sides is None:
            col_a = _Columns(result)
            sides = _Sides(col_a, col_a if other is None else _Columns(other), pairs, *several)
        if labels and all(ra.size == 0 for _, _, ra, _, _, _ in sides.aligned()):
            raise _nothing_paired(other)
        if not allow_different_inputs:
            _check_same_items(sides.col_a, sides.col_b, sides.aligned())
    out: list[Comparison] = []
    for e, (entry, kind) in enumerate(zip(entries, kinds)):
        # A mean's interval is clipped to its metric's value bounds when the metric is here.
        required = kind == "bootstrap"
        metric = None if kind == "ratio" else _metric_for(result, entry.label, required=required)
        bounds = entry.bounds if entry.bounds is not None or metric is None else metric.value_bounds
        higher = _higher_is_better(result, entry.label)
        family: list[Comparison] = []
        if sides is None:
            for p, (_, _, name_a, name_b) in enumerate(pairs):
                stats = joined.stats[(e, p)]
                common = {
                    "key": entry.key,
                    "metric": entry.label,
                    "baseline": name_a,
                    "candidate": name_b,
                    "confidence": level,
                    "higher_is_better": higher,
                }
                make = functools.partial(
                    comparison_of, stats, common=common, n_only=joined.n_only[p],
                    ratio=kind == "ratio", auto=settings.ci_method == "auto", bounds=bounds,
                )  # fmt: skip
                groups = sorted((str(joined.groups[g]), g) for g in stats.states if g != 0)
                family.append(_with_groups(make, groups if with_groups else None, adjust))
        else:
            own = sides.for_entry(entry)
            ca, cb = own.col_a, own.col_b
            for name_a, name_b, ra, rb, n_only, groups in own.aligned():
                paired = _Paired(
                    label=entry.label,
                    key=entry.key,
                    kind=kind,
                    metric=metric,
                    baseline=name_a,
                    candidate=name_b,
                    codes_a=ca.codes(entry.column_a)[ra],
                    codes_b=cb.codes(entry.column_b)[rb],
                    values_a=ca.values(entry.column_a)[ra] if kind == "mean" else None,
                    values_b=cb.values(entry.column_b)[rb] if kind == "mean" else None,
                    scores_a=_take(ca.table.score(entry.column_a), ra) if required else None,
                    scores_b=_take(cb.table.score(entry.column_b), rb) if required else None,
                    groups=groups,
                    clusters=_pick(ca.clusters, ra),
                    n_only=n_only,
                    confidence=level,
                    seed=seed,
                    suite_id=suite_id,
                    higher_is_better=higher,
                    ci_method=settings.ci_method,
                    bounds=bounds,
                    questions=ca.question_ids(ra) if entry.by_attempt else None,
                )
                make = functools.partial(_compare_one, paired)
                rows = _group_rows(groups) if with_groups else None
                family.append(_with_groups(make, rows, adjust))
        out.extend(_adjusted(family, adjust))
    return out


def _nothing_paired(other: RunResult | None) -> ConfigError:
    return ConfigError(
        "The items of the two sides share no id, so there is no pair to compare: compare "
        "runs over the same questions (items pair by id"
        + (", and by model within a run)." if other is None else ").")
    )


def _check_runs(
    result: RunResult,
    other: RunResult | None,
    entries: Sequence[_Entry],
    labels: Sequence[str],
    run_names: tuple[str, str] | None,
) -> None:
    """Runs read back from files: one metric per label on both, and possible scores only."""
    from .._score_values import check_score_values

    if other is None:
        runs = [(result, run_names[0] if run_names else "the results")]
    else:
        sources = run_names or ("the baseline results", "the candidate results")
        check_same_metrics(result, other, [entry.label for entry in entries], names=sources)
        runs = [(result, sources[0]), (other, sources[1])]
    for run, name in runs:
        check_score_values(run, labels, name, bounds_of=functools.partial(score_range, run))


def _tag(model: str | None, run: str) -> str:
    """A model both runs hold, named by its run: ``model @ run`` (the run alone: no name)."""
    return f"{model} @ {run}" if model is not None else run
