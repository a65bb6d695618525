"""Paired comparison of models: which is better, by how much, and how sure we can be.

:func:`compare` pairs the items of two models by id and, for every metric label both sides
have, computes the difference ``value_b - value_a`` with an interval and a p-value:

- ratio metrics (the default aggregate with ``aggregation = "ratio"``): the exact McNemar test
  on the discordant pairs and Newcombe's hybrid score interval (1998, method 10);
- mean metrics: the paired t interval and test on the per-item differences;
- metrics with their own aggregate (f1, plugins overriding ``aggregate``) and geometric means:
  a seeded paired bootstrap over item ids, both sides recomputed on the same resampled ids
  (vectorised when the metric has ``paired_bootstrap``, as f1 does);
- items with a ``cluster``: cluster-robust standard errors for ratio and mean metrics, a
  cluster bootstrap (whole clusters resampled) for the others.

p-values of several comparisons are adjusted (Holm by default, or Benjamini-Hochberg): the
headline comparisons of one metric across model pairs form one family, the group comparisons
of one metric and one pair another.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

import attrs
import numpy as np

from ._columns import ScoreColumn
from ._exceptions import ConfigError, describe_exception, did_you_mean, one_of
from ._metric import Metric, MetricContext
from ._records import EMPTY, ItemScore, Measurement
from .aggregate import _check_confidence, percentile_interval
from .engine._table import FINGERPRINT
from .stats import _paired as _stats

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ._result import RunResult
    from .engine._table import RunTable

__all__ = ["Comparison", "check_same_metrics", "compare", "score_range", "significant_leaders"]

Kind = Literal["ratio", "mean", "bootstrap"]

#: Bootstrap resamples of a paired bootstrap.
N_RESAMPLES = 2000
#: Bootstrap resamples when a metric's own aggregate is called once per resample.
N_RESAMPLES_LOOP = 500
#: With ``ci_method="auto"``, paired ratio comparisons of fewer pairs take the Jeffreys
#: posterior's interval of the difference and report P(candidate better) in ``extra``.
AUTO_POSTERIOR_BELOW = 100


def _freeze(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return value if value else EMPTY


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
    groups: Mapping[str, Comparison] = attrs.field(default=EMPTY, converter=_freeze)
    #: Secondary numbers: discordant pairs, clusters, design effect, resamples...
    extra: Mapping[str, float] = attrs.field(default=EMPTY, converter=_freeze)

    def __repr__(self) -> str:
        """One line: key, the models, difference and interval, adjusted p, pairs."""
        from .reports._notebook import comparison_repr

        return comparison_repr(self)

    def _repr_html_(self) -> str:
        """The comparison and its groups as an HTML table, for notebooks."""
        from .reports._notebook import comparison_html

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


# --------------------------------------------------------------------------- reading results


class _Columns:
    """A run table as compare reads it: ids, models, groups, clusters, scores.

    By default the result's own table; for runs with attempts, the table of its questions
    (or its attempts under ids that name the attempt too).
    """

    def __init__(
        self,
        result: RunResult,
        table: RunTable | None = None,
        *,
        ids: list[str] | None = None,
        clusters: list[str | None] | None = None,
        contents_rows: NDArray[np.intp] | None = None,
    ) -> None:
        table = result.table if table is None else table
        self.table = table
        self.result = result
        self.n = len(table)
        self.ids: list[str] = table.key("id") if ids is None else ids
        self.groups: list[str | None] | None = table.key("group") if table.has("group") else None
        if clusters is None and table.has("cluster"):
            clusters = table.key("cluster")
        self.clusters: list[str | None] | None = clusters
        self._contents_rows = contents_rows

    def scores(self, label: str) -> ScoreColumn:
        return self.table.score(label)

    def codes(self, label: str) -> NDArray[np.int8]:
        """Status codes of ``label`` per item: 0 ok, 1 fail, 2 skip, 3 error."""
        return self.table.codes(label)

    def values(self, label: str) -> NDArray[np.float64]:
        """Values of ``label`` per item (NaN where none)."""
        return self.table.values(label)

    def rows_of(self, model: str | None, several: bool) -> NDArray[np.intp]:
        """Positions of ``model``'s items (all of them when the run has one model)."""
        if not several:
            return np.arange(self.n)
        models = self.table.key("model")
        return np.flatnonzero(np.fromiter((m == model for m in models), bool, self.n))

    def question_ids(self, rows: NDArray[np.intp]) -> list[str]:
        """The question (the plain id) of each of ``rows``."""
        ids = self.table.key("id")
        return [ids[i] for i in rows.tolist()]

    def fingerprints(self) -> NDArray[np.uint64]:
        """Each item's content fingerprint (its input and answer key, hashed; see the table)."""
        keys = self.result.table.keys
        found = keys.column(FINGERPRINT).to_numpy() if FINGERPRINT in keys.schema.names else None
        if found is None:
            found = np.zeros(keys.num_rows, dtype=np.uint64)
        found = np.asarray(found, dtype=np.uint64)
        return found if self._contents_rows is None else found[self._contents_rows]


@attrs.frozen
class _Entry:
    """One comparison per pair of models: a label under one reducer, and where its scores are."""

    label: str
    key: str
    #: The score column of each side (the label, or a reduced column's name).
    column_a: str
    column_b: str
    #: The measurement key of side b, when it differs (another first reducer).
    key_b: str | None = None
    #: The range of the values compared as means (shares of right attempts: 0 to 1).
    bounds: tuple[float, float] | None = None
    #: Whether it pairs attempts (a metric with its own aggregate under ``mean``) rather
    #: than questions.
    by_attempt: bool = False


#: ``(baseline, candidate, rows of a, rows of b, ids on one side only, groups)``.
_Aligned = tuple[str | None, str | None, "NDArray[np.intp]", "NDArray[np.intp]", int, Any]


class _Sides:
    """The two sides' columns and their rows paired by id, for every pair of models."""

    def __init__(
        self,
        col_a: _Columns,
        col_b: _Columns,
        pairs: Sequence[tuple[str | None, str | None, str | None, str | None]],
        several_a: bool,
        several_b: bool,
        by_attempt: _Sides | None = None,
    ) -> None:
        self.col_a, self.col_b = col_a, col_b
        self.pairs = pairs
        self.several_a, self.several_b = several_a, several_b
        self._by_attempt = by_attempt
        self._aligned: list[_Aligned] | None = None

    def aligned(self) -> list[_Aligned]:
        if self._aligned is None:
            col_a, col_b = self.col_a, self.col_b
            out: list[_Aligned] = []
            for model_a, model_b, name_a, name_b in self.pairs:
                rows_a = col_a.rows_of(model_a, self.several_a)
                rows_b = col_b.rows_of(model_b, self.several_b)
                ids_a = [col_a.ids[i] for i in rows_a.tolist()] if self.several_a else col_a.ids
                ids_b = [col_b.ids[i] for i in rows_b.tolist()] if self.several_b else col_b.ids
                ia, ib, n_only = _align(ids_a, ids_b)
                ra, rb = rows_a[ia], rows_b[ib]
                out.append((name_a, name_b, ra, rb, n_only, _pick(col_a.groups, ra)))
            self._aligned = out
        return self._aligned

    def for_entry(self, entry: _Entry) -> _Sides:
        """The sides an entry pairs: these, or the attempts'."""
        if entry.by_attempt and self._by_attempt is not None:
            return self._by_attempt
        return self


def _reduces(result: RunResult) -> bool:
    """Whether a result's measurements were made over questions rather than its items."""
    settings = result.settings
    return result.table.has("attempt") or tuple(getattr(settings, "reduce", ("mean",))) != ("mean",)


def _question_sides(
    result: RunResult,
    other: RunResult,
    col_a: _Columns,
    col_b: _Columns,
    labels: Sequence[str],
    pairs: Sequence[tuple[str | None, str | None, str | None, str | None]],
    several_a: bool,
    several_b: bool,
) -> tuple[list[_Entry], _Sides]:
    """The entries of runs with attempts (or reducers): questions paired by id.

    Each side's attempts are reduced as its measurements were, by each reducer both runs
    have: the first one's comparison has the key ``<suite>.<label>``, each further one
    ``<suite>.<label>[<reducer>]``. A metric with its own aggregate under ``mean`` is
    compared on its attempts paired by id and attempt, each question resampled whole.
    """
    from ._reducers import reducer_key, resolve_reducer
    from .engine._questions import LabelAttempts, Questions

    reduce_a = tuple(result.settings.reduce)
    reduce_b = tuple(other.settings.reduce)
    shared = [name for name in reduce_a if name in reduce_b]
    questions = [Questions.of(result.table), Questions.of(other.table)]
    same = other is result
    if same:
        questions[1] = questions[0]
    columns: list[dict[str, Any]] = [{}, {}]
    codings: list[dict[Any, Any]] = [{}, {}]  # each side's answer codes, shared by its labels
    attempts_of = (result.table.has("attempt"), other.table.has("attempt"))
    entries: list[_Entry] = []
    for label in labels:
        metric = _metric_for(result, label, required=True)
        assert metric is not None
        binary = metric.aggregation == "ratio"
        normalizer = getattr(metric, "normalizer", None)
        custom = (
            any(m.aggregation == "custom" for m in _measurements_of(result, label)[:1])
            or type(metric).aggregate is not Metric.aggregate
        )
        found: list[LabelAttempts | None] = [None, None]
        for name in shared:
            first_a, first_b = reduce_a.index(name) == 0, reduce_b.index(name) == 0
            key = reducer_key(result.suite_id, label, name, first_a)
            key_b = reducer_key(other.suite_id, label, name, first_b)
            if custom and name == "mean" and any(attempts_of):
                entries.append(_Entry(label, key, label, label, key_b, by_attempt=True))
                continue
            spec = resolve_reducer(name)
            reduced: list[Any] = []
            for side, (run, qs) in enumerate(zip((result, other), questions)):
                if side == 1 and same:
                    reduced.append(reduced[0])
                    continue
                if found[side] is None:
                    found[side] = LabelAttempts.of(
                        qs,
                        run.table,
                        label,
                        binary=binary,
                        normalizer=normalizer,
                        codings=codings[side],
                    )
                try:
                    reduced.append(found[side].reduce(spec))  # type: ignore[union-attr]
                except Exception:  # noqa: BLE001 - that measurement is an error: nothing to pair
                    break
            if len(reduced) < 2:
                continue
            columns[0][key] = reduced[0][0]
            columns[1][key_b if not same else key] = reduced[1][0]
            picked = reduced[0][1]
            bounds = (0.0, 1.0) if binary and not picked else None
            entries.append(_Entry(label, key, key, key_b if not same else key, key_b, bounds))
    table_a = questions[0].table(columns[0])
    q_a = _Columns(result, table_a, contents_rows=questions[0].first_row)
    if same:
        q_b = q_a
    else:
        table_b = questions[1].table(columns[1])
        q_b = _Columns(other, table_b, contents_rows=questions[1].first_row)
    by_attempt = None
    if any(e.by_attempt for e in entries):
        att_a = _attempt_columns(result)
        att_b = att_a if same else _attempt_columns(other)
        by_attempt = _Sides(att_a, att_b, pairs, several_a, several_b)
    return entries, _Sides(q_a, q_b, pairs, several_a, several_b, by_attempt)


def _attempt_columns(result: RunResult) -> _Columns:
    """A result's attempts under ids naming the attempt, each question (or cluster) a cluster."""
    table = result.table
    ids = table.key("id")
    attempts = table.key("attempt")
    named = [f"{i}\x1f{a}" for i, a in zip(ids, attempts)]
    clusters = table.key("cluster") if table.has("cluster") else list(ids)
    return _Columns(result, table, ids=named, clusters=list(clusters))


def _settings(result: RunResult) -> tuple[float, int, str]:
    settings = result.settings
    return float(settings.confidence), int(settings.seed), str(settings.suite_id)


def _measurements_of(result: RunResult, label: str) -> list[Measurement]:
    return [m for ms in result.by_model.values() for m in ms.values() if m.metric == label]


def _kind_of(result: RunResult, other: RunResult, entry: _Entry) -> Kind:
    """The test of an entry's comparison, from how the measurements of both sides were made.

    A ratio on one side and a mean (of shares of right attempts) on the other compare as
    means.
    """
    kinds = set()
    sides = [(result, entry.key)]
    if entry.key_b is not None:  # runs with attempts: both sides' reductions count
        sides.append((other, entry.key_b))
    for side, key in sides:
        found = [m for m in _measurements_of(side, entry.label) if m.key == key]
        if not found:  # a result written before keys named reducers: the label's first
            found = _measurements_of(side, entry.label)[:1]
        kinds.add(found[0].aggregation if found else "custom")
    if kinds == {"ratio"}:
        return "ratio"
    if kinds <= {"ratio", "mean"}:
        return "mean"
    return "bootstrap"


def _metric_for(result: RunResult, label: str, *, required: bool) -> Metric | None:
    """The configured metric of ``label``: needed to resample a metric's own aggregate.

    Raises:
        ConfigError: ``required`` and the metric cannot be configured here (not installed).
    """
    for entry in result.config.get("metrics", []):
        if entry.get("label") != label:
            continue
        spec = {"name": entry["name"], "label": label, **entry.get("options", {})}
        try:
            from ._plan import plan_metrics

            planned = plan_metrics([spec])
        except Exception as exc:
            if not required:
                return None
            raise ConfigError(
                f"Comparing {label!r} needs its metric {entry['name']!r}, whose own aggregate is "
                f"recomputed on resampled items, but it cannot be configured here "
                f"({describe_exception(exc)}). Install the package that provides it, or leave "
                "the label out with `metrics=`."
            ) from exc
        metric = planned[0].metric
        metric.bind(label)
        return metric
    if required:
        raise ConfigError(
            f"The results name no metric for the label {label!r}, so its own aggregate cannot "
            "be recomputed on resampled items; leave the label out with `metrics=`."
        )
    return None


def score_range(result: RunResult, label: str) -> tuple[float, float] | None:
    """The range every scored value of ``label`` lies in, or ``None`` when none is known.

    [0, 1] for a right-or-wrong (ratio) metric; otherwise the metric's ``value_bounds``, when
    it is installed here and declares them.
    """
    kinds = {m.aggregation for m in _measurements_of(result, label)}
    if kinds == {"ratio"}:
        return 0.0, 1.0
    metric = _metric_for(result, label, required=False)
    bounds = None if metric is None else metric.value_bounds
    return None if bounds is None else (float(bounds[0]), float(bounds[1]))


def _metric_identity(entry: Mapping[str, Any]) -> dict[str, Any]:
    """``{"name", "options"}`` of a saved metric entry, every option's value spelled out.

    ``exact_match`` and ``exact_match:ignore_case=true`` are one metric: when the metric is
    installed its defaults fill the options not given, so only a real difference counts.
    """
    from ._options import check_options, option_infos
    from ._registry import default_registry
    from ._serialize import json_safe

    name = str(entry.get("name"))
    given = dict(entry.get("options") or {})
    options = given
    try:
        infos = option_infos(default_registry().get(name))
        checked = check_options(name, infos, given)
    except Exception:  # noqa: BLE001 - not installed here: the options as saved
        pass
    else:
        options = {n: checked.get(n, info.default) for n, info in infos.items()
                   if n in checked or not info.required}  # fmt: skip
    return {"name": name, "options": json_safe(options)}


def _what_differs(
    label: str, a: Mapping[str, Any], b: Mapping[str, Any], names: tuple[str, str]
) -> str:
    """``label`` is metric X in one run and Y in the other, or which options differ."""
    if a["name"] != b["name"]:
        return f"{label!r} is metric {a['name']!r} in {names[0]} but {b['name']!r} in {names[1]}"
    missing = object()
    options = [
        f"`{key}` is {_option_value(a['options'], key)} in {names[0]} and "
        f"{_option_value(b['options'], key)} in {names[1]}"
        for key in sorted(set(a["options"]) | set(b["options"]))
        if a["options"].get(key, missing) != b["options"].get(key, missing)
    ]
    return f"{label!r} is metric {a['name']!r} in both, but {', '.join(options)}"


def _option_value(options: Mapping[str, Any], key: str) -> str:
    return repr(options[key]) if key in options else "not set"


def check_same_metrics(
    result: RunResult,
    other: RunResult,
    labels: Sequence[str],
    *,
    names: tuple[str, str] = ("the baseline results", "the candidate results"),
) -> None:
    """Each of ``labels`` must name the same metric with the same options in both runs.

    Two runs may give one label to different metrics (``-m exact_match`` against
    ``-m includes@exact_match``) or options; their numbers then measure different things.
    The identity is read from each run's saved configuration (``config["metrics"]``); a label
    that one run does not configure is not checked here.

    Raises:
        MetricMismatchError: a label whose metric id or options differ, with both spelled out.
    """
    from ._exceptions import MetricMismatchError

    entries_a = {e.get("label"): e for e in result.metric_configs}
    entries_b = {e.get("label"): e for e in other.metric_configs}
    differ: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    for label in labels:
        if label not in entries_a or label not in entries_b:
            continue
        a, b = _metric_identity(entries_a[label]), _metric_identity(entries_b[label])
        if a != b:
            differ.append((label, a, b))
    if not differ:
        return
    what = "; ".join(_what_differs(label, a, b, names) for label, a, b in differ)
    raise MetricMismatchError(
        f"The two runs give {'a label' if len(differ) == 1 else 'labels'} to different "
        f"metrics or options: {what}. Their numbers measure different things and cannot be "
        "paired. Score both runs with the same metric and options under each label (or "
        "compare only the other labels, naming them with `--metric`/`metrics=`).",
        label=differ[0][0],
        baseline=differ[0][1],
        candidate=differ[0][2],
    )


# --------------------------------------------------------------------------- one comparison


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


#: Why a comparison with clusters fell back, appended to its method in parentheses.
_ONE_CLUSTER = "1 cluster: items taken as independent"
_NO_SPREAD = "no spread between clusters"
#: Why a bootstrap p-value was raised: it fell below what its few differing pairs support.
_FLOORED = "p raised to 2/2^m, m differing pairs"


def _noted(method: str, note: str | None) -> str:
    """``method`` with the fallback it took, if any, in parentheses."""
    return method if note is None else f"{method} ({note})"


def _ratio(
    ok_a: NDArray[np.bool_],
    ok_b: NDArray[np.bool_],
    clusters: list[str | None] | None,
    confidence: float,
    auto: bool = False,
) -> dict[str, Any]:
    n = ok_a.size
    both = int(np.count_nonzero(ok_a & ok_b))
    only_a = int(np.count_nonzero(ok_a & ~ok_b))
    only_b = int(np.count_nonzero(ok_b & ~ok_a))
    neither = n - both - only_a - only_b
    value_a, value_b = (both + only_a) / n, (both + only_b) / n
    extra = {"only_baseline": float(only_a), "only_candidate": float(only_b)}
    note = None
    if clusters is not None:
        diffs = ok_b.astype(np.float64) - ok_a.astype(np.float64)
        clustered, note = _clustered(
            diffs, clusters, confidence, values=(value_a, value_b), bounds=(0.0, 1.0), scale=1.0
        )
        if clustered is not None:
            extra.update(clustered.pop("extra"))
            return {"value_a": value_a, "value_b": value_b, **clustered, "extra": extra}
    theta, low, high = _stats.newcombe_paired(both, only_b, only_a, neither, confidence)
    method = "mcnemar-exact, newcombe-10"
    if auto and n < AUTO_POSTERIOR_BELOW:
        low, high, better = _stats.beta_posterior_difference(only_a, only_b, n, confidence)
        low, high = min(low, theta), max(high, theta)
        extra["p_b_better"] = better
        method = f"mcnemar-exact, beta-posterior (auto: n = {n} < {AUTO_POSTERIOR_BELOW})"
    elif auto:
        method = f"{method} (auto: n = {n} >= {AUTO_POSTERIOR_BELOW})"
    return {
        "value_a": value_a,
        "value_b": value_b,
        "difference": theta,
        "ci_low": low,
        "ci_high": high,
        "p_value": _stats.mcnemar_exact(only_a, only_b),
        "method": _noted(method, note),
        "mde": _stats.mcnemar_mde(n, only_a + only_b, confidence),
        "extra": extra,
    }


def _clustered(
    diffs: NDArray[np.float64],
    clusters: list[str | None],
    confidence: float,
    *,
    values: tuple[float, float],
    bounds: tuple[float, float] | None,
    scale: float,
) -> tuple[dict[str, Any] | None, str | None]:
    """Cluster-robust paired t on the differences, or why it cannot be estimated.

    Returns the comparison's fields, or ``None`` and the fallback the caller's iid test must
    name (one cluster: no between-cluster variance at all). When every cluster has the same
    mean difference (``se = 0``, rounding noise included) the clusters are still the sample:
    the cluster sign test (every cluster one way: ``p = 2 / 2^G``) and, for values in
    ``bounds``, the Wilson bounds of both sides' ``values`` as shares of that range over ``G``
    trials at the t(G-1) quantile, combined by square-and-add. ``scale``: the size of the
    values the differences came from, for telling a zero mean from rounding.
    """
    from .aggregate import _cluster_se
    from .stats._intervals import _t_bounds

    codes, n_clusters = _stats.cluster_codes(clusters)
    n = diffs.size
    if n_clusters < 2:
        return None, _ONE_CLUSTER
    mean = float(diffs.mean())
    se = _cluster_se(diffs, mean, codes, n_clusters)
    t_low, t_high = _t_bounds(n_clusters - 1, confidence)
    naive = float(diffs.std(ddof=1)) / math.sqrt(n) if n > 1 else 0.0
    extra = {
        "n_clusters": float(n_clusters),
        "se_cluster": se,
        "design_effect": (se / naive) ** 2 if se > 0 and naive > 0 else n / n_clusters,
    }
    width = None if bounds is None else bounds[1] - bounds[0]
    if se > 0.0:
        low, high = mean + t_low * se, mean + t_high * se
        if width is not None:
            low, high = max(low, -width), min(high, width)
        fields = {
            "difference": mean,
            "ci_low": low,
            "ci_high": high,
            "p_value": _stats.t_two_sided_p(mean / se, n_clusters - 1),
            "method": "cluster-paired-t",
            "mde": _stats.mde(se, confidence, n_clusters - 1),
            "extra": extra,
        }
        return fields, None
    zero = _stats.is_constant(np.array([0.0, mean]), scale)
    low = high = mean
    method = "cluster-sign-test"
    if bounds is not None and width is not None:
        share_a, share_b = ((v - bounds[0]) / width for v in values)
        share_low, share_high = _stats.wilson_difference(
            share_a, share_b, float(n_clusters), confidence, z=t_high
        )
        low, high = min(share_low * width, mean), max(share_high * width, mean)
        method = "cluster-sign-test, cluster-wilson-bound"
    fields = {
        "difference": mean,
        "ci_low": low,
        "ci_high": high,
        "p_value": 1.0 if zero else _stats.sign_test(n_clusters, 0),
        "method": _noted(method, _NO_SPREAD),
        "mde": None,
        "extra": extra,
    }
    return fields, None


def _mean(
    values_a: NDArray[np.float64],
    values_b: NDArray[np.float64],
    clusters: list[str | None] | None,
    confidence: float,
    bounds: tuple[float, float] | None,
) -> dict[str, Any]:
    n = values_a.size
    value_a, value_b = float(values_a.mean()), float(values_b.mean())
    diffs = values_b - values_a
    # Differences are as exact as the values they came from: spreads within their rounding
    # are no spread ((a + 0.1) - a is not the same float for every a).
    scale = max(float(np.max(np.abs(values_a))), float(np.max(np.abs(values_b))))
    out: dict[str, Any] = {"value_a": value_a, "value_b": value_b}
    note = None
    if clusters is not None:
        clustered, note = _clustered(
            diffs, clusters, confidence, values=(value_a, value_b), bounds=bounds, scale=scale
        )
        if clustered is not None:
            return {**out, **clustered}
    width = None if bounds is None else bounds[1] - bounds[0]
    if n > 1 and not _stats.is_constant(diffs, scale):
        mean, se, low, high, p = _stats.paired_t(diffs, confidence)
        if width is not None:
            low, high = max(low, -width), min(high, width)
        return {
            **out,
            "difference": mean,
            "ci_low": low,
            "ci_high": high,
            "p_value": p,
            "method": _noted("paired-t", note),
            "mde": _stats.mde(se, confidence, n - 1),
        }
    # Every pair differs by the same amount (or one pair): no spread to estimate. The sign
    # test is exact; a bounded metric gets Newcombe's square-and-add of the Wilson bounds.
    d = float(diffs.mean())
    zero = _stats.is_constant(np.array([0.0, d]), scale)
    low = high = d
    method = "sign-test"
    if bounds is not None and width is not None:
        share_a, share_b = ((v - bounds[0]) / width for v in (value_a, value_b))
        share_low, share_high = _stats.wilson_difference(share_a, share_b, n, confidence)
        low, high = min(share_low * width, d), max(share_high * width, d)
        method = "sign-test, newcombe-wilson-bound"
    return {
        **out,
        "difference": d,
        "ci_low": low,
        "ci_high": high,
        "p_value": 1.0 if zero else _stats.sign_test(n, 0),
        "method": _noted(method, note),
        "mde": None,
    }


def _bootstrap(
    p: _Paired, select: NDArray[np.intp] | None, rows: NDArray[np.intp]
) -> dict[str, Any]:
    """Paired bootstrap of a metric's own aggregate over ``select`` (scored pairs: ``rows``)."""
    assert p.metric is not None
    assert p.scores_a is not None
    assert p.scores_b is not None
    metric = p.metric
    ctx = MetricContext(suite_id=p.suite_id, label=p.label, confidence=p.confidence, seed=p.seed)
    resampler = getattr(metric, "paired_bootstrap", None)
    clusters = None if p.clusters is None else _pick(p.clusters, rows)
    if resampler is not None:
        # The metric leaves out pairs not scored on both sides itself: no copy of the scores.
        every = np.arange(len(p.scores_a)) if select is None else select
        n_resamples = _paired_n_resamples(metric, p.label, N_RESAMPLES)
        given_a, given_b = _take(p.scores_a, every), _take(p.scores_b, every)
        given_clusters = None if p.clusters is None else _pick(p.clusters, every)
        value_a, value_b, samples_a, samples_b = resampler(
            given_a, given_b, ctx, n_resamples=n_resamples, clusters=given_clusters
        )
    else:
        scores_a = cast("Sequence[ItemScore]", _take(p.scores_a, rows))
        scores_b = cast("Sequence[ItemScore]", _take(p.scores_b, rows))
        given_a, given_b, given_clusters = scores_a, scores_b, clusters
        value_a = metric.aggregate(scores_a, attrs.evolve(ctx, model=p.baseline)).value
        value_b = metric.aggregate(scores_b, attrs.evolve(ctx, model=p.candidate)).value
        n_resamples = _paired_n_resamples(metric, p.label, N_RESAMPLES_LOOP)
        if value_a is not None and value_b is not None:
            samples_a, samples_b = _loop_resamples(
                metric, scores_a, scores_b, ctx, n_resamples, clusters
            )
    out: dict[str, Any] = {"value_a": value_a, "value_b": value_b}
    name = "cluster-bootstrap" if clusters is not None else "paired-bootstrap"
    if value_a is None or value_b is None:
        return {**out, "method": name}
    diffs = np.asarray(samples_b, dtype=np.float64) - np.asarray(samples_a, dtype=np.float64)
    diffs = diffs[~np.isnan(diffs)]
    extra = {"n_resamples": float(n_resamples), "seed": float(p.seed)}
    difference = value_b - value_a
    if diffs.size == 0:
        return {**out, "difference": difference, "method": name, "extra": extra}
    own_test = _own_p_value(metric, p.label, given_a, given_b, ctx, given_clusters)
    scale = max(abs(value_a), abs(value_b), float(np.max(np.abs(diffs))))
    if _stats.is_constant(diffs, scale):
        fields = _degenerate(p, rows, clusters, ctx, name, value_a, value_b)
        return {**out, **_with_own_test(fields, own_test), "extra": extra}
    low, high = percentile_interval(diffs, p.confidence)
    raw = _stats.bootstrap_p(diffs)
    # The floor 2 / 2^m binds only for m < 1 - log2(p): count differing pairs that far.
    limit = math.ceil(1.0 - math.log2(raw)) + 1
    n_differing = _differing_pairs(p.scores_a, p.scores_b, rows, limit)
    p_value = _stats.bootstrap_p(diffs, n_differing)
    method = name
    if p_value > raw and own_test is None:  # then the count stopped below its limit: exact
        extra["n_differing"] = float(n_differing)
        method = _noted(name, _FLOORED)
    se = float(diffs.std(ddof=1)) if diffs.size > 1 else 0.0
    fields = {"p_value": p_value, "method": method}
    return {
        **out,
        "difference": difference,
        "ci_low": low,
        "ci_high": high,
        **_with_own_test(fields, own_test),
        "mde": _stats.mde(se, p.confidence) if se > 0 else None,
        "extra": extra,
    }


def _paired_n_resamples(metric: Metric, label: str, default: int) -> int:
    """The resamples the metric asks its paired bootstrap for (``paired_n_resamples``).

    A metric whose figures should reproduce another tool's (sacrebleu's ``--paired-bs-n``)
    says how many resamples that tool draws.

    Raises:
        ConfigError: the attribute is there but is not a positive integer.
    """
    asked = getattr(metric, "paired_n_resamples", None)
    if asked is None:
        return default
    if isinstance(asked, bool) or not isinstance(asked, int) or asked < 1:
        raise ConfigError(
            f"The metric of {label!r} ({type(metric).__qualname__}) sets `paired_n_resamples` "
            f"to {asked!r}, which must be a positive integer (the resamples of its paired "
            "bootstrap); fix the metric, or remove the attribute to use the default "
            f"({default})."
        )
    return asked


def _own_p_value(
    metric: Metric,
    label: str,
    scores_a: Sequence[ItemScore | None],
    scores_b: Sequence[ItemScore | None],
    ctx: MetricContext,
    clusters: Sequence[str | None] | None,
) -> tuple[float, str] | None:
    """The metric's own paired test (``paired_p_value``): its p-value and name, or ``None``.

    Called with the arguments its paired bootstrap got. ``None`` when the metric has no such
    test or its test gives no p-value (then the bootstrap's p-value stands).

    Raises:
        ConfigError: the test returns something other than ``(p-value or None, name)``.
    """
    test = getattr(metric, "paired_p_value", None)
    if test is None:
        return None
    answer = test(scores_a, scores_b, ctx, clusters=clusters)
    ok = isinstance(answer, tuple) and len(answer) == 2 and isinstance(answer[1], str)
    if ok and answer[0] is not None:
        value = answer[0]
        ok = not isinstance(value, bool) and isinstance(value, (int, float))
        ok = ok and 0.0 <= float(value) <= 1.0
    if not ok or not answer[1].strip():
        raise ConfigError(
            f"The metric of {label!r} ({type(metric).__qualname__}): `paired_p_value` returned "
            f"{answer!r}; it must return a pair (p-value in [0, 1] or None, the test's name)."
        )
    if answer[0] is None:
        return None
    return float(answer[0]), str(answer[1]).strip()


def _with_own_test(fields: dict[str, Any], own: tuple[float, str] | None) -> dict[str, Any]:
    """``fields`` with the metric's own test's p-value and its name appended to the method."""
    if own is None:
        return fields
    return {**fields, "p_value": own[0], "method": f"{fields['method']}, {own[1]}"}


def _degenerate(
    p: _Paired,
    rows: NDArray[np.intp],
    clusters: list[str | None] | None,
    ctx: MetricContext,
    name: str,
    value_a: float,
    value_b: float,
) -> dict[str, Any]:
    """A bootstrap whose every resample gives one difference: it measures no spread.

    Its percentile interval has zero width and its p-value is ``2 / (B + 1)`` whatever the
    data: neither may be reported. The test becomes the exact sign test on the per-item
    differences, by cluster when there are clusters (when every pair has a value on both
    sides; otherwise there is no test, ``p = None``), and the interval square-and-adds each
    side's own interval on the paired items (:func:`_stats.mover`), which for a metric that
    collapses like this is its Wilson bound (F1 of items that are all right).
    """
    assert p.metric is not None
    assert p.scores_a is not None
    assert p.scores_b is not None
    scores_a = cast("Sequence[ItemScore]", _take(p.scores_a, rows))
    scores_b = cast("Sequence[ItemScore]", _take(p.scores_b, rows))
    values_a = [s.value for s in scores_a]
    values_b = [s.value for s in scores_b]
    p_value: float | None = None
    test = "no exact test"
    if None not in values_a and None not in values_b:
        codes = None if clusters is None else _stats.cluster_codes(clusters)[0]
        p_value = _stats.sign_test(
            *_stats.sign_counts(
                np.asarray(values_a, dtype=np.float64),
                np.asarray(values_b, dtype=np.float64),
                codes,
            )
        )
        test = "cluster-sign-test" if clusters is not None else "sign-test"
    own = attrs.evolve(ctx, clusters=clusters)
    side_a = p.metric.aggregate(scores_a, attrs.evolve(own, model=p.baseline))
    side_b = p.metric.aggregate(scores_b, attrs.evolve(own, model=p.candidate))
    difference = value_b - value_a
    low: float | None = None
    high: float | None = None
    interval = "no interval"
    if None not in (side_a.low, side_a.high, side_b.low, side_b.high):
        low, high = _stats.mover(
            difference,
            (value_a, cast("float", side_a.low), cast("float", side_a.high)),
            (value_b, cast("float", side_b.low), cast("float", side_b.high)),
        )
        low, high = min(low, difference), max(high, difference)
        interval = "mover"
    return {
        "difference": difference,
        "ci_low": low,
        "ci_high": high,
        "p_value": p_value,
        "method": f"{test}, {interval} ({name} degenerate: every resample gives one difference)",
        "mde": None,
    }


#: Pairs compared one by one before :func:`_differing_pairs` compares whole columns.
_HEAD = 512


def _differing_pairs(
    scores_a: Sequence[ItemScore | None],
    scores_b: Sequence[ItemScore | None],
    rows: NDArray[np.intp],
    limit: int,
) -> int:
    """How many of the pairs at ``rows`` differ in state, value or ``extra``, up to ``limit``.

    Models that differ often reach ``limit`` within the first few hundred pairs, compared
    score by score. Past those, score columns are compared column by column (states and
    values as arrays, extras only where those agree), without building a score per item.
    """
    head, rows = rows[:_HEAD], rows[_HEAD:]
    count = 0
    for i in head.tolist():
        a, b = scores_a[i], scores_b[i]
        if a is None or b is None or (a.status, a.value, a.extra) != (b.status, b.value, b.extra):
            count += 1
            if count >= limit:
                return count
    if isinstance(scores_a, ScoreColumn) and isinstance(scores_b, ScoreColumn):
        picked = rows.tolist()
        states_a = np.frombuffer(bytes(scores_a.states), dtype=np.uint8)[rows]
        states_b = np.frombuffer(bytes(scores_b.states), dtype=np.uint8)[rows]
        get_a, get_b = scores_a.values.__getitem__, scores_b.values.__getitem__
        values_a = np.array([math.nan if v is None else v for v in map(get_a, picked)])
        values_b = np.array([math.nan if v is None else v for v in map(get_b, picked)])
        differ = (states_a != states_b) | ~(
            (values_a == values_b) | (np.isnan(values_a) & np.isnan(values_b))
        )
        count += int(np.count_nonzero(differ))
        extras_a, extras_b = scores_a.extras, scores_b.extras
        if count >= limit or (extras_a is None and extras_b is None):
            return min(count, limit)
        for i in rows[~differ].tolist():
            if (None if extras_a is None else extras_a[i]) != (
                None if extras_b is None else extras_b[i]
            ):
                count += 1
                if count >= limit:
                    break
        return min(count, limit)
    for i in rows.tolist():
        a, b = scores_a[i], scores_b[i]
        if a is None or b is None or (a.status, a.value, a.extra) != (b.status, b.value, b.extra):
            count += 1
            if count >= limit:
                break
    return count


def resample_weights(
    n: int, n_resamples: int, seed: int, clusters: Sequence[str | None] | None = None
) -> NDArray[np.int64]:
    """Bootstrap weights: how often each item appears in each resample, ``(B, n)``.

    Items are drawn with replacement; with ``clusters``, whole clusters are drawn (an item
    whose cluster is None is a cluster of its own) and every item of a drawn cluster counts.
    """
    rng = np.random.default_rng(seed)
    if clusters is None:
        return np.asarray(rng.multinomial(n, np.full(n, 1.0 / n), size=n_resamples))
    codes, n_clusters = _stats.cluster_codes(clusters)
    draws = rng.multinomial(n_clusters, np.full(n_clusters, 1.0 / n_clusters), size=n_resamples)
    return np.asarray(draws[:, codes])


def _loop_resamples(
    metric: Metric,
    scores_a: Sequence[ItemScore],
    scores_b: Sequence[ItemScore],
    ctx: MetricContext,
    n_resamples: int,
    clusters: list[str | None] | None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Both sides' own aggregate on the same resampled ids, one call per resample."""
    n = len(scores_a)
    out_a = np.full(n_resamples, np.nan)
    out_b = np.full(n_resamples, np.nan)
    block = max(1, (1 << 20) // max(n, 1))
    for start in range(0, n_resamples, block):
        stop = min(start + block, n_resamples)
        weights = resample_weights(n, stop - start, ctx.seed + start, clusters)
        for row, counts in enumerate(weights, start):
            index = np.repeat(np.arange(n), counts).tolist()
            a = metric.aggregate(_resampled(scores_a, index), ctx).value
            b = metric.aggregate(_resampled(scores_b, index), ctx).value
            out_a[row] = math.nan if a is None else a
            out_b[row] = math.nan if b is None else b
    return out_a, out_b


def _resampled(scores: Sequence[ItemScore], index: list[int]) -> Sequence[ItemScore]:
    """The scores at ``index``: a score column stays a column (no record built per item)."""
    if isinstance(scores, ScoreColumn):
        return scores.take(index)
    return [scores[i] for i in index]


# --------------------------------------------------------------------------- pairing


def _align(ids_a: list[str], ids_b: list[str]) -> tuple[NDArray[np.intp], NDArray[np.intp], int]:
    """Positions in a and in b of the ids both have, and how many ids only one side has."""
    if ids_a == ids_b:
        index = np.arange(len(ids_a))
        return index, index, 0
    where_b = {item_id: i for i, item_id in enumerate(ids_b)}
    pos_b = np.fromiter((where_b.get(i, -1) for i in ids_a), dtype=np.intp, count=len(ids_a))
    found = pos_b >= 0
    ia = np.flatnonzero(found)
    ib = pos_b[found]
    return ia, ib, (len(ids_a) - ia.size) + (len(ids_b) - ib.size)


def _check_adjust(adjust: object) -> str:
    if isinstance(adjust, str) and adjust in _stats.ADJUSTMENTS:
        return adjust
    hint = did_you_mean(adjust, _stats.ADJUSTMENTS) if isinstance(adjust, str) else ""
    raise ConfigError(f"`adjust` ({adjust!r}) must be one of {one_of(_stats.ADJUSTMENTS)}.{hint}")


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
    run_confidence, run_seed, suite_id = _settings(result)
    level = run_confidence if confidence is None else _check_confidence(confidence)
    seed = run_seed if seed is None else seed

    col_a = _Columns(result)
    col_b = col_a if other is None else _Columns(other)
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
            shared = []
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

    several_a = len(models_a) > 1
    several_b = len(_model_names(other)) > 1 if other is not None else several_a
    side_b_result = other if other is not None else result
    if not _reduces(result) and not _reduces(side_b_result):
        entries = [_Entry(label, f"{suite_id}.{label}", label, label) for label in labels]
        sides = _Sides(col_a, col_b, pairs, several_a, several_b)
    else:
        entries, sides = _question_sides(
            result, side_b_result, col_a, col_b, labels, pairs, several_a, several_b
        )
    if checked:
        from ._score_values import check_score_values

        if other is None:
            runs = [(result, run_names[0] if run_names else "the results")]
        else:
            sources = run_names or ("the baseline results", "the candidate results")
            check_same_metrics(result, other, [entry.label for entry in entries], names=sources)
            runs = [(result, sources[0]), (other, sources[1])]
        for run, name in runs:
            check_score_values(run, labels, name, bounds_of=functools.partial(score_range, run))
    aligned = sides.aligned()
    if labels and all(ra.size == 0 for _, _, ra, _, _, _ in aligned):
        raise ConfigError(
            "The items of the two sides share no id, so there is no pair to compare: compare "
            "runs over the same questions (items pair by id"
            + (", and by model within a run)." if other is None else ").")
        )
    if not allow_different_inputs:
        _check_same_items(sides.col_a, sides.col_b, aligned)
    out: list[Comparison] = []
    for entry in entries:
        label = entry.label
        kind = _kind_of(result, side_b_result, entry)
        # A mean's interval is clipped to its metric's value bounds when the metric is here.
        metric = (
            None if kind == "ratio" else _metric_for(result, label, required=kind == "bootstrap")
        )
        higher = _higher_is_better(result, label)
        own = sides.for_entry(entry)
        bounds = entry.bounds
        if bounds is None and metric is not None:
            bounds = metric.value_bounds
        family: list[Comparison] = []
        for name_a, name_b, ra, rb, n_only, groups in own.aligned():
            ca, cb = own.col_a, own.col_b
            paired = _Paired(
                label=label,
                key=entry.key,
                kind=kind,
                metric=metric,
                baseline=name_a,
                candidate=name_b,
                codes_a=ca.codes(entry.column_a)[ra],
                codes_b=cb.codes(entry.column_b)[rb],
                values_a=ca.values(entry.column_a)[ra] if kind == "mean" else None,
                values_b=cb.values(entry.column_b)[rb] if kind == "mean" else None,
                scores_a=_take(ca.scores(entry.column_a), ra) if kind == "bootstrap" else None,
                scores_b=_take(cb.scores(entry.column_b), rb) if kind == "bootstrap" else None,
                groups=groups,
                clusters=_pick(ca.clusters, ra),
                n_only=n_only,
                confidence=level,
                seed=seed,
                suite_id=suite_id,
                higher_is_better=higher,
                ci_method=result.settings.ci_method,
                bounds=bounds,
                questions=own.col_a.question_ids(ra) if entry.by_attempt else None,
            )
            headline = _compare_one(paired, None)
            if with_groups:
                headline = attrs.evolve(headline, groups=_by_group(paired, adjust))
            family.append(headline)
        out.extend(_adjusted(family, adjust))
    return out


def _pick(column: list[str | None] | None, rows: NDArray[np.intp]) -> list[str | None] | None:
    """``column`` at ``rows``; ``None`` when it holds nothing but ``None``."""
    if column is None:
        return None
    picked = column if _is_whole(rows, len(column)) else [column[i] for i in rows.tolist()]
    return None if picked.count(None) == len(picked) else picked


def _is_whole(rows: NDArray[np.intp], n: int) -> bool:
    return rows.size == n and (n == 0 or (rows[0] == 0 and bool(np.all(np.diff(rows) == 1))))


def _tag(model: str | None, run: str) -> str:
    """A model both runs hold, named by its run: ``model @ run`` (the run alone: no name)."""
    return f"{model} @ {run}" if model is not None else run


def _take(column: Sequence[ItemScore | None], rows: NDArray[np.intp]) -> Sequence[ItemScore | None]:
    whole = _is_whole(rows, len(column))
    if isinstance(column, ScoreColumn):
        return column if whole else column.take(rows.tolist())
    if whole:
        return list(column)
    return [column[i] for i in rows.tolist()]


def _labels(result: RunResult) -> list[str]:
    labels = list(result.labels)
    if labels:
        return labels
    seen: dict[str, None] = {}
    for measurements in result.by_model.values():
        for m in measurements.values():
            seen.setdefault(m.metric, None)
    return list(seen)


def _check_same_items(col_a: _Columns, col_b: _Columns, aligned: Sequence[Any]) -> None:
    """Paired items must be the same item: equal ``input`` and ``expected`` on both sides.

    Read from the items' content fingerprints (kept in the run table's keys), so that two
    runs compare without their items in memory.

    Raises:
        ConfigError: some pairs hold different questions or answer keys (the first few named).
    """
    prints_a = col_a.fingerprints()
    prints_b = prints_a if col_b is col_a else col_b.fingerprints()
    low = np.uint64(0xFFFFFFFF)
    differ: list[str] = []
    n_differ = 0
    for _, _, ra, rb, _, _ in aligned:
        a, b = prints_a[ra], prints_b[rb]
        keys_a, keys_b = a & low, b & low
        # An item without an answer key on one side is skipped there, never scored against a
        # different key: only two keys can disagree. Inputs must agree (a missing one too).
        bad = ((a >> np.uint64(32)) != (b >> np.uint64(32))) | (
            (keys_a != 0) & (keys_b != 0) & (keys_a != keys_b)
        )
        for i in ra[np.flatnonzero(bad)].tolist():
            n_differ += 1
            if len(differ) < 5 and col_a.ids[i] not in differ:
                differ.append(col_a.ids[i])
    if n_differ:
        shown = ", ".join(repr(i) for i in differ)
        raise ConfigError(
            f"{n_differ} paired item{'s' if n_differ != 1 else ''} with one id "
            f"{'hold' if n_differ != 1 else 'holds'} a different input or answer key on the "
            f"two sides (ids {shown}{', ...' if n_differ > len(differ) else ''}): these are not "
            "the same questions, and pairing them would compare different data. Check that "
            "both runs scored the same benchmark; pass allow_different_inputs=True "
            "(--allow-different-inputs) to pair by id anyway."
        )


def _higher_is_better(result: RunResult, label: str) -> bool:
    for measurements in result.by_model.values():
        for m in measurements.values():
            if m.metric == label:
                return m.higher_is_better
    return True


def _by_group(paired: _Paired, adjust: str) -> dict[str, Comparison]:
    if paired.groups is None:
        return {}
    members: dict[str, list[int]] = {}
    for index, group in enumerate(paired.groups):
        if group is not None:
            members.setdefault(group, []).append(index)
    if not members:
        return {}
    names = sorted(members)
    comparisons = [_compare_one(paired, np.asarray(members[name], dtype=np.intp)) for name in names]
    return dict(zip(names, _adjusted(comparisons, adjust)))


def _adjusted(family: list[Comparison], adjust: str) -> list[Comparison]:
    """``family`` with ``p_adjusted`` filled in by ``adjust`` over the p-values it has."""
    tested = [i for i, c in enumerate(family) if c.p_value is not None]
    adjusted = _stats.adjust_pvalues([cast("float", family[i].p_value) for i in tested], adjust)
    out = [attrs.evolve(c, adjustment=adjust) for c in family]
    for i, value in zip(tested, adjusted.tolist()):
        out[i] = attrs.evolve(out[i], p_adjusted=value)
    return out


# --------------------------------------------------------------------------- bold cells


def significant_leaders(result: RunResult) -> dict[str, str]:
    """Per metric label, the model whose lead over every other model is significant.

    The leader is the model with the best value (by ``higher_is_better``); it is returned only
    when its paired comparison against every other model has a Holm-adjusted p-value below
    ``1 - confidence`` (the run's level) and favours it. With one model the result is empty.
    """
    models = [m for m in result.by_model if m is not None]
    if len(models) < 2:
        return {}
    leaders: dict[str, str] = {}
    by_label: dict[str, list[Comparison]] = {}
    try:
        comparisons = _comparisons(
            result, None, baseline=None, metrics=None, adjust="holm", confidence=None,
            seed=None, allow_different_inputs=False, with_groups=False,
        )  # fmt: skip
    except ConfigError:  # models with nothing to pair, or a metric not installed: no bold
        return {}
    suite_id = result.suite_id
    for c in comparisons:
        if c.key == f"{suite_id}.{c.metric}":  # a further reducer's comparison bolds nothing
            by_label.setdefault(c.metric, []).append(c)
    for label, comparisons in by_label.items():
        best = _best_model(result, label, models)
        if best is None:
            continue
        against = [c for c in comparisons if best in (c.baseline, c.candidate)]
        if len(against) != len(models) - 1:
            continue
        # A p-value that underflowed to 0.0 is the strongest evidence, not a missing one.
        p_values = [1.0 if c.p_value is None else c.p_value for c in against]
        adjusted = _stats.adjust_pvalues(p_values, "holm")
        alpha = 1.0 - against[0].confidence
        if all(
            p < alpha and c.difference is not None and c.difference != 0 and _favours(c, best)
            for c, p in zip(against, adjusted.tolist())
        ):
            leaders[label] = best
    return leaders


def _favours(c: Comparison, model: str) -> bool:
    assert c.difference is not None
    up = c.difference > 0
    winner = c.candidate if up == c.higher_is_better else c.baseline
    return winner == model


def _best_model(result: RunResult, label: str, models: list[str]) -> str | None:
    values: dict[str, float] = {}
    higher = True
    for model in models:
        for m in result.by_model.get(model, {}).values():
            if m.metric == label and m.value is not None:
                values[model] = m.value
                higher = m.higher_is_better
    if len(values) < 2:
        return None
    return (max if higher else min)(values, key=values.__getitem__)
