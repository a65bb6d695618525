"""What the items say about the benchmark: difficulty, discrimination, flags, signal and noise.

With several models scored on the same items (one run with the role ``model``), for one
metric label:

- per item: its **difficulty** (the mean score over the models that scored it: the share of
  models right, for a ratio metric), its **discrimination** (the point-biserial correlation,
  over models, between the item's score and the model's total on the *other* items, so that
  the item does not correlate with itself), and flags: ``saturated`` (every model right),
  ``never_solved`` (none), ``label_error`` (models that are strong overall agree on one
  answer that the key rejects);
- per group, and for the whole run: the **signal-to-noise ratio** of Heineman et al. (2025,
  "Signal and Noise"): the signal is the relative dispersion of the models' scores,
  ``max_jk |m_j - m_k| / m̄``, the noise their relative standard deviation under resampled
  items, ``mean_j se_j / m̄`` with ``se_j = s_j / sqrt(n_j)`` each model's standard error, and
  ``snr = signal / noise``. A group whose SNR is low ranks its models by chance: the "noisy
  subtasks" table lists the groups by SNR, lowest first.

**Suspected label errors.** Each model weighs by its overall score, from 0 for the weakest
to 1 for the strongest. For each item and each answer the key rejects (an output scored
below 1/2, trimmed and case-folded), the weight of the models that gave it over the weight
of all models that scored the item: the largest is the item's ``label_error_score``. When
the key is wrong, the strong models give the same right answer, which the key rejects; on
a merely hard item their wrong answers scatter, and weak models weigh little. A score of
1/2 or more with at least two *strong* models (at or above the median) behind it is the
``label_error`` flag, and items are ranked by the score.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from ._exceptions import ConfigError, did_you_mean, one_of
from ._records import EMPTY

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ._result import RunResult

__all__ = ["Diagnosis", "GroupSignal", "ItemDiagnosis", "diagnose", "signal_to_noise"]

#: Share of strong models agreeing on one rejected answer from which an item is flagged.
LABEL_ERROR_SHARE = 0.5


@attrs.frozen(kw_only=True)
class ItemDiagnosis:
    """One item across the models that scored it."""

    #: The item's id.
    id: str
    #: Its group, or ``None``.
    group: str | None
    #: Models that scored it (ok or fail).
    n_models: int
    #: The mean score over those models (share right, for a ratio metric).
    difficulty: float
    #: Point-biserial correlation of the item's score with the models' rest totals (``None``
    #: when either does not vary).
    discrimination: float | None
    #: Strength-weighted share of the models that gave the most common rejected answer.
    label_error_score: float
    #: That answer (the output as the models gave it), or ``None``.
    suspected_answer: str | None
    #: ``"saturated"``, ``"never_solved"``, ``"label_error"``.
    flags: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready data."""
        data = attrs.asdict(self)
        data["flags"] = list(self.flags)
        return data


@attrs.frozen(kw_only=True)
class GroupSignal:
    """Signal, noise and their ratio for one group of items (or all of them)."""

    #: The group (``None``: every item).
    group: str | None
    #: Items of the group.
    n_items: int
    #: Models with a score on the group.
    n_models: int
    #: Relative dispersion of the model scores, ``max |m_j - m_k| / mean``.
    signal: float | None
    #: Relative standard deviation under resampled items, ``mean se_j / mean``.
    noise: float | None
    #: ``signal / noise``; ``None`` when undefined (one model, no spread, a mean of 0).
    snr: float | None
    #: Each model's score on the group.
    scores: Mapping[str, float] = attrs.field(default=EMPTY)

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready data."""
        data = attrs.asdict(self)
        data["scores"] = dict(self.scores)
        return data


@attrs.frozen(kw_only=True)
class Diagnosis:
    """Item diagnostics and signal-to-noise of one metric over the models of a run."""

    #: The metric label.
    metric: str
    #: The models, in order of appearance.
    models: tuple[str, ...]
    #: One per item (id), in order of the label-error score, then the difficulty.
    items: tuple[ItemDiagnosis, ...]
    #: The whole run's signal and noise.
    overall: GroupSignal
    #: One per group, lowest SNR first (the "noisy subtasks" table).
    groups: tuple[GroupSignal, ...] = ()

    def flagged(self, flag: str) -> list[ItemDiagnosis]:
        """The items carrying ``flag``."""
        return [item for item in self.items if flag in item.flags]

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready data."""
        return {
            "metric": self.metric,
            "models": list(self.models),
            "overall": self.overall.to_dict(),
            "groups": [g.to_dict() for g in self.groups],
            "items": [i.to_dict() for i in self.items],
        }


def signal_to_noise(
    scores: Sequence[float], standard_errors: Sequence[float]
) -> tuple[float | None, float | None, float | None]:
    """Heineman et al.'s signal, noise and SNR from the models' scores and standard errors.

    ``signal = max_jk |m_j - m_k| / m̄``, ``noise = mean_j se_j / m̄``, ``snr = signal /
    noise``; each ``None`` when undefined (fewer than two models, ``m̄ = 0``, no noise).
    """
    m = np.asarray(scores, dtype=np.float64)
    se = np.asarray(standard_errors, dtype=np.float64)
    if m.size < 2:
        return None, None, None
    centre = float(m.mean())
    if centre == 0.0:
        return None, None, None
    signal = float(m.max() - m.min()) / abs(centre)
    noise = float(se.mean()) / abs(centre)
    return signal, noise, (signal / noise if noise > 0.0 else None)


def _normal(text: str | None) -> str | None:
    return None if text is None else " ".join(text.split()).casefold()


def _matrix(
    result: RunResult, label: str
) -> tuple[list[str], list[str], list[str | None], NDArray[np.float64], list[list[str | None]]]:
    """Models, item ids, groups, the (model x item) score matrix (NaN: not scored), outputs."""
    table = result.table
    if not table.has("model"):
        raise ConfigError(
            "Item diagnostics need several models scored on the same items; the run has no "
            "model names (give the items the role `model`)."
        )
    models_col = table.key("model")
    ids = table.key("id")
    groups = table.key("group") if table.has("group") else [None] * len(ids)
    (outputs,) = table.item_fields(("output",))
    codes = table.codes(label)
    values = table.values(label)
    models = list(dict.fromkeys(m for m in models_col if m is not None))
    if len(models) < 2:
        raise ConfigError(
            f"Item diagnostics need at least two models; the run has {one_of(models) or 'none'}. "
            "Score the other models' outputs of the same items into the same run (one model "
            "name per output, the role `model`)."
        )
    item_ids = list(dict.fromkeys(ids))
    col = {item: j for j, item in enumerate(item_ids)}
    row = {model: i for i, model in enumerate(models)}
    matrix = np.full((len(models), len(item_ids)), np.nan)
    answers: list[list[str | None]] = [[None] * len(item_ids) for _ in models]
    group_of: list[str | None] = [None] * len(item_ids)
    for index, (model, item) in enumerate(zip(models_col, ids)):
        if model is None:
            continue
        i, j = row[model], col[item]
        group_of[j] = groups[index]
        if codes[index] < 2:  # ok or fail: scored
            matrix[i, j] = values[index] if not math.isnan(values[index]) else 0.0
            answers[i][j] = outputs[index]
    return models, item_ids, group_of, matrix, answers


def diagnose(result: RunResult, metric: str | None = None) -> Diagnosis:
    """Item diagnostics and signal-to-noise of one metric over the models of ``result``.

    Args:
        result: A run with several models scored on the same items (by id).
        metric: The metric label (default: the run's only label, or its first).

    Raises:
        ConfigError: an unknown label, or fewer than two models.
    """
    labels = list(result.labels)
    if metric is None:
        if not labels:
            raise ConfigError("The results hold no metric to diagnose.")
        metric = labels[0]
    elif metric not in labels:
        raise ConfigError(
            f"`metric` ({metric!r}) is no label of the run; its labels are {one_of(labels)}."
            f"{did_you_mean(metric, labels)}"
        )
    models, item_ids, group_of, matrix, answers = _matrix(result, metric)
    scored = ~np.isnan(matrix)
    x = np.where(scored, matrix, 0.0)
    totals = x.sum(axis=1)
    counts = scored.sum(axis=1)
    means = np.divide(totals, counts, out=np.zeros_like(totals), where=counts > 0)
    strong = means >= float(np.median(means))
    spread = float(means.max() - means.min())
    weights = (means - means.min()) / spread if spread > 0 else np.ones_like(means)
    items = []
    for j, item in enumerate(item_ids):
        have = scored[:, j]
        n_models = int(have.sum())
        if n_models == 0:
            continue
        col = matrix[have, j]
        difficulty = float(col.mean())
        rest = (totals[have] - col) / np.maximum(counts[have] - 1, 1)
        discrimination = None
        if n_models > 2 and np.ptp(col) > 0 and np.ptp(rest) > 0:
            discrimination = float(np.corrcoef(col, rest)[0, 1])
        # Each model's rejected answer, weighted by how strong the model is overall.
        votes: dict[str, list[int]] = {}
        for i in np.flatnonzero(have).tolist():
            if matrix[i, j] < 0.5:
                key = _normal(answers[i][j])
                if key:
                    votes.setdefault(key, []).append(i)
        total_weight = float(weights[have].sum())
        best: list[int] = []
        share = 0.0
        for voters in votes.values():
            weight = float(weights[voters].sum()) / total_weight if total_weight > 0 else 0.0
            if weight > share:
                best, share = voters, weight
        strong_voters = [i for i in best if strong[i]]
        flags = []
        if bool(np.all(col >= 1.0)):
            flags.append("saturated")
        if bool(np.all(col <= 0.0)):
            flags.append("never_solved")
        if len(strong_voters) >= 2 and share >= LABEL_ERROR_SHARE:
            flags.append("label_error")
        items.append(
            ItemDiagnosis(
                id=item,
                group=group_of[j],
                n_models=n_models,
                difficulty=difficulty,
                discrimination=discrimination,
                label_error_score=share,
                suspected_answer=answers[best[0]][j] if best else None,
                flags=tuple(flags),
            )
        )
    items.sort(key=lambda d: (-d.label_error_score, d.difficulty))
    overall = _signal(None, models, matrix)
    groups = []
    names = sorted({g for g in group_of if g is not None})
    for name in names:
        columns = [j for j, g in enumerate(group_of) if g == name]
        groups.append(_signal(name, models, matrix[:, columns]))
    groups.sort(key=lambda g: (math.inf if g.snr is None else g.snr, g.group or ""))
    return Diagnosis(
        metric=metric, models=tuple(models), items=tuple(items), overall=overall,
        groups=tuple(groups),
    )  # fmt: skip


def _signal(group: str | None, models: list[str], matrix: NDArray[np.float64]) -> GroupSignal:
    scores: dict[str, float] = {}
    errors: list[float] = []
    for i, model in enumerate(models):
        row = matrix[i][~np.isnan(matrix[i])]
        if row.size == 0:
            continue
        scores[model] = float(row.mean())
        errors.append(float(row.std(ddof=1)) / math.sqrt(row.size) if row.size > 1 else 0.0)
    signal, noise, snr = signal_to_noise(list(scores.values()), errors)
    return GroupSignal(
        group=group, n_items=int(matrix.shape[1]), n_models=len(scores), signal=signal,
        noise=noise, snr=snr, scores=scores,
    )  # fmt: skip
