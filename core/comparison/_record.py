"""The record of one paired comparison: :class:`Comparison`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ..stats._estimate import EMPTY, _freeze_mapping


@attrs.frozen(kw_only=True)
class Comparison:
    """One metric compared between two models on the items they share.

    ``difference`` is always ``value_b - value_a`` (candidate minus baseline);
    ``higher_is_better`` says which sign is an improvement.
    """

    #: ``"<suite_id>.<label>"``, the key of the measurements compared.
    key: str
    #: The metric's label.
    metric: str
    #: The baseline model (side a).
    baseline: str | None
    #: The candidate model (side b).
    candidate: str | None
    #: The baseline's value on the paired items.
    value_a: float | None = None
    #: The candidate's value on the paired items.
    value_b: float | None = None
    #: ``value_b - value_a``.
    difference: float | None = None
    #: Lower end of the interval of the difference.
    ci_low: float | None = None
    #: Upper end of the interval of the difference.
    ci_high: float | None = None
    #: Two-sided p-value of "no difference".
    p_value: float | None = None
    #: ``p_value`` adjusted for the other comparisons of its family (see ``adjustment``).
    p_adjusted: float | None = None
    #: How the interval and p-value were computed.
    method: str = "none"
    #: Confidence level of the interval (the run's level).
    confidence: float = 0.95
    #: Pairs scored (ok or fail) on both sides.
    n_pairs: int = 0
    #: Items left out: skip or error on either side, or an id only one side has.
    n_unpaired: int = 0
    #: Smallest true difference the test detects with 80% power at the run's level.
    mde: float | None = None
    #: Whether a larger value is better.
    higher_is_better: bool = True
    #: The multiple-comparison adjustment of ``p_adjusted``: "holm", "bh" or "none".
    adjustment: str = "holm"
    #: One comparison per item group, same shape.
    groups: Mapping[str, Comparison] = attrs.field(default=EMPTY, converter=_freeze_mapping)
    #: Secondary numbers: discordant pairs, clusters, design effect, resamples...
    extra: Mapping[str, float] = attrs.field(default=EMPTY, converter=_freeze_mapping)

    def __repr__(self) -> str:
        """One line: key, the models, difference and interval, adjusted p, pairs."""
        from ..display._notebook import comparison_repr

        return comparison_repr(self)

    def _repr_html_(self) -> str:
        """The comparison and its groups as an HTML table, for notebooks."""
        from ..display._notebook import comparison_html

        return comparison_html(self)

    @property
    def significant(self) -> bool:
        """Whether the adjusted p-value is below ``1 - confidence``."""
        return self.p_adjusted is not None and self.p_adjusted < 1.0 - self.confidence

    @property
    def better(self) -> str | None:
        """The model the difference favours when it is significant, else ``None``."""
        if not self.significant or not self.difference:
            return None
        up = self.difference > 0
        return self.candidate if up == self.higher_is_better else self.baseline

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready data (groups nested the same way)."""
        data = {
            field.name: getattr(self, field.name)
            for field in attrs.fields(Comparison)
            if field.name not in ("groups", "extra")
        }
        data["extra"] = dict(self.extra)
        data["groups"] = {name: c.to_dict() for name, c in self.groups.items()}
        return data
