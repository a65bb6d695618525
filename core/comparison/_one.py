"""One comparison: the paired items of one metric and one pair of models, and their test."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from .._metric import Metric
from .._records import ItemScore
from ._bootstrap import _bootstrap
from ._metrics import Kind
from ._pairing import _pick
from ._ratio_mean import _mean, _ratio
from ._record import Comparison

if TYPE_CHECKING:
    from numpy.typing import NDArray


@attrs.define
class _Paired:
    """The paired items of one metric and one pair of models (index arrays into each side)."""

    label: str
    key: str
    kind: Kind
    metric: Metric | None
    baseline: str | None
    candidate: str | None
    codes_a: NDArray[np.int8]
    codes_b: NDArray[np.int8]
    values_a: NDArray[np.float64] | None
    values_b: NDArray[np.float64] | None
    scores_a: Sequence[ItemScore | None] | None
    scores_b: Sequence[ItemScore | None] | None
    groups: list[str | None] | None
    clusters: list[str | None] | None
    n_only: int
    confidence: float
    seed: int
    suite_id: str
    higher_is_better: bool
    #: The run's interval method: ``"auto"`` takes the Beta posterior for small ratio tables.
    ci_method: str | None = None
    #: The range a mean's values lie in (its interval is clipped to it), or ``None``.
    bounds: tuple[float, float] | None = None
    #: With attempts paired one by one: the question of each paired row (side a's).
    questions: list[str] | None = None


def _compare_one(p: _Paired, select: NDArray[np.intp] | None) -> Comparison:
    codes_a = p.codes_a if select is None else p.codes_a[select]
    codes_b = p.codes_b if select is None else p.codes_b[select]
    valid = (codes_a < 2) & (codes_b < 2)
    rows = np.flatnonzero(valid)
    rows_full = select[rows] if select is not None else rows
    n = int(rows.size)
    n_unpaired = int(codes_a.size - n) + (p.n_only if select is None else 0)
    common: dict[str, Any] = {
        "key": p.key,
        "metric": p.label,
        "baseline": p.baseline,
        "candidate": p.candidate,
        "confidence": p.confidence,
        "n_pairs": n,
        "n_unpaired": n_unpaired,
        "higher_is_better": p.higher_is_better,
    }
    if n == 0:
        return Comparison(**common, method="none")
    clusters = None if p.kind == "bootstrap" else _pick(p.clusters, rows_full)
    if p.kind == "ratio":
        fields = _ratio(
            codes_a[rows] == 0, codes_b[rows] == 0, clusters, p.confidence, p.ci_method == "auto"
        )
    elif p.kind == "mean":
        assert p.values_a is not None
        assert p.values_b is not None
        fields = _mean(
            p.values_a[rows_full], p.values_b[rows_full], clusters, p.confidence, p.bounds
        )
    else:
        fields = _bootstrap(p, select, rows_full)
    if p.questions is not None:  # attempts paired: the questions they answer are the pairs
        fields["extra"] = {**fields.get("extra", {}), "n_attempt_pairs": float(n)}
        common["n_pairs"] = len({p.questions[i] for i in rows_full.tolist()})
    return Comparison(**common, **fields)
