"""``RunPlan``: the metrics of one run, resolved, configured and checked once.

``itemscore.plan(...)`` builds one; ``score``, ``run`` and ``rescore`` accept it in place of
metric names, so each metric is configured exactly once per run. A plan's metrics are never
changed by a run (their label comes from the context), so a plan pickles and ships to workers.
"""

from __future__ import annotations

import functools
import pickle
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from ._exceptions import ConfigError, ItemscoreError, OptionError
from ._metric import Metric
from ._registry import MetricInfo, Registry, default_registry
from ._secrets import MASK, mask_secrets, masked_fields
from ._spec import MetricLike, MetricSpec

__all__ = ["PlannedMetric", "RunPlan", "plan", "plan_metrics", "reduce_of", "saved_spec"]


@attrs.frozen
class PlannedMetric:
    """A metric configured for one run: its label, the spec it came from, the instance."""

    #: The measurement's label, distinct within the run.
    label: str
    #: The configured instance.
    metric: Metric = attrs.field(eq=False)
    #: The metric's id.
    metric_id: str
    #: The options it was configured with.
    options: Mapping[str, Any]
    #: Where it comes from (``None`` for an instance given directly).
    info: MetricInfo | None = attrs.field(default=None, eq=False)

    @property
    def is_corpus(self) -> bool:
        """Whether the metric scores every row at once (``compute``) instead of item by item."""
        return self.metric.is_corpus

    def to_config(self) -> dict[str, Any]:
        """The entry of ``RunResult.config["metrics"]``, secret values masked.

        The configuration is written into every report, so a value under a credential's name
        (``headers``/``body`` fields such as ``api_key``; see :func:`._secrets.is_secret_name`)
        is kept as ``***``.
        """
        options, _ = mask_secrets(dict(self.options))
        out: dict[str, Any] = {
            "name": self.metric_id,
            "label": self.label,
            "options": options,
        }
        if self.info is not None:
            out["distribution"] = self.info.distribution
            out["version"] = self.info.version
        return out

    def spec(self) -> MetricSpec:
        """The spec that configures this metric again (for ``rescore``), secrets included."""
        return MetricSpec(self.metric_id, self.label, self.options)


@attrs.frozen
class RunPlan:
    """The configured metrics of one run, in order, with distinct labels.

    Build one with :func:`itemscore.plan`; pass it to ``score``, ``run`` or ``rescore``.
    """

    #: The metrics, in the order their measurements are reported.
    metrics: tuple[PlannedMetric, ...]
    #: How attempts are reduced (checked reducer names, the first one the headline's);
    #: ``None``: the plan does not say, and the run's ``reduce`` (default ``"mean"``) holds.
    reduce: tuple[str, ...] | None = None

    @property
    def labels(self) -> list[str]:
        """The labels, in order."""
        return [pm.label for pm in self.metrics]

    def __len__(self) -> int:
        return len(self.metrics)

    def __iter__(self) -> Any:
        return iter(self.metrics)

    def to_config(self) -> list[dict[str, Any]]:
        """The ``metrics`` entry of ``RunResult.config`` (secret values masked)."""
        return [pm.to_config() for pm in self.metrics]

    def check_secrets_given(self) -> None:
        """Check that no metric is configured with ``***`` in a credential's place.

        A configuration read back from results.json holds ``***`` where each secret was;
        scoring with it would send ``***`` as the secret.

        Raises:
            OptionError: a credential field whose value is ``***``, named with the fix.
        """
        for pm in self.metrics:
            fields = masked_fields(dict(pm.options))
            if fields:
                raise OptionError(
                    f"Metric {pm.label!r} ({pm.metric_id}): {', '.join(f'`{f}`' for f in fields)} "
                    f"is {MASK!r}, the mark of a secret left out when the run's configuration was "
                    "saved: results.json never keeps one. Give the metric's options again with "
                    f"the secret (-m '{pm.metric_id}:...' or `metrics:` in a configuration file).",
                    metric_id=pm.metric_id,
                    option=fields[0].split(".")[0].split("[")[0],
                )

    def packages(self) -> dict[str, str]:
        """The distribution and version of every metric, by distribution name."""
        out: dict[str, str] = {}
        for pm in self.metrics:
            if pm.info is not None and pm.info.distribution:
                out[pm.info.distribution] = pm.info.version or "unknown"
            else:
                found = _distribution_of(type(pm.metric))
                if found is not None:
                    out[found[0]] = found[1]
        return dict(sorted(out.items()))

    def equal_normalizers(self) -> list[Any]:
        """The normalisers (``itemscore.text.Normalizer``) that two or more metrics share."""
        from .text import Normalizer

        seen: dict[Any, int] = {}
        for pm in self.metrics:
            normalizer = getattr(pm.metric, "normalizer", None)
            if isinstance(normalizer, Normalizer) and not pm.is_corpus:
                seen[normalizer] = seen.get(normalizer, 0) + 1
        return [normalizer for normalizer, count in seen.items() if count > 1]

    def check_picklable(self, executor: str) -> None:
        """Check that every metric can be shipped to a worker process.

        Raises:
            ConfigError: a metric that cannot be pickled, named, with the serial executor
                suggested.
        """
        for pm in self.metrics:
            if pm.is_corpus:
                continue  # corpus metrics run on the driver
            try:
                pickle.dumps(pm.metric)
            except Exception as exc:
                raise ConfigError(
                    f"Metric {pm.label!r} ({type(pm.metric).__qualname__}) cannot be sent to "
                    f"the {executor!r} executor's workers: it cannot be pickled "
                    f"({type(exc).__name__}: {exc}). Use executor='serial', or keep the "
                    "metric's state picklable (no open clients, locks or lambdas)."
                ) from exc


def _distribution_of(cls: type) -> tuple[str, str] | None:
    """The installed distribution that provides ``cls``'s module, with its version."""
    from importlib.metadata import version

    top = cls.__module__.partition(".")[0]
    names = _packages_distributions().get(top)
    if not names:
        return None
    try:
        return names[0], version(names[0])
    except Exception:  # noqa: BLE001 - provenance is best effort, never a failure
        return None


@functools.lru_cache(maxsize=1)
def _packages_distributions() -> Mapping[str, list[str]]:
    from importlib.metadata import packages_distributions

    return packages_distributions()


def _plan_one(obj: MetricLike, registry: Registry) -> PlannedMetric:
    if isinstance(obj, Metric):
        return PlannedMetric(obj.metric_id, obj, obj.metric_id, {}, None)
    if isinstance(obj, type) and issubclass(obj, Metric):
        return PlannedMetric(obj.metric_id, obj.configure(), obj.metric_id, {}, None)
    spec = MetricSpec.parse(obj)
    info = registry.find(spec.name)
    assert info.cls is not None
    try:
        metric = info.cls.configure(spec.options)
    except OptionError:
        raise
    except ModuleNotFoundError as exc:
        if not exc.name:
            raise
        from ._extras import install_hint

        # The metric names what it needs; the versions are its distribution's to say.
        hint = install_hint(exc.name, distribution=info.distribution or "itemscore")
        raise OptionError(
            f"Metric {info.id!r} cannot be used: {exc} Install it with: {hint}",
            metric_id=info.id,
        ) from exc
    except Exception as exc:  # a metric's own __init__ check, e.g. labels=[]
        raise OptionError(
            f"Metric {info.id!r} rejected its options {mask_secrets(dict(spec.options))[0]!r}: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    label = spec.label or info.cls.metric_id
    return PlannedMetric(label, metric, info.cls.metric_id, dict(spec.options), info)


def plan_metrics(
    metrics: Iterable[MetricLike],
    extra_metrics: Iterable[MetricLike] = (),
    *,
    registry: Registry | None = None,
) -> list[PlannedMetric]:
    """The metrics of :func:`plan`, as a list: resolved, configured and checked the same way."""
    return list(plan(metrics, extra_metrics, registry=registry).metrics)


def saved_spec(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The spec that configures a saved ``{"name", "label", "options"}`` entry again."""
    return {"name": entry["name"], "label": entry["label"], **(entry.get("options") or {})}


def reduce_of(asked: object, metrics: object) -> tuple[str, ...] | None:
    """The reducers of a run: ``reduce=`` of ``score``/``run``/``rescore``, else its plan's.

    Returns ``None`` when neither says (the run's default, ``"mean"``, or a saved run's own).

    Raises:
        ConfigError: a bad reducer, or a plan with other reducers than ``reduce=``.
    """
    from ._reducers import check_reduce

    planned = metrics.reduce if isinstance(metrics, RunPlan) else None
    if asked is None:
        return planned
    names = check_reduce(asked)
    if planned is not None and planned != names:
        raise ConfigError(
            f"The reducers are given twice: the plan has {list(planned)!r} and `reduce` "
            f"{list(names)!r}. Give them once, in plan(..., reduce=...) or in `reduce`."
        )
    return names


def plan(
    metrics: Iterable[MetricLike] | RunPlan,
    extra_metrics: Iterable[MetricLike] = (),
    *,
    reduce: str | Iterable[str] | None = None,
    registry: Registry | None = None,
) -> RunPlan:
    """Resolve and configure the metrics of a run once, checking labels; score nothing.

    Args:
        metrics: Metric names, mappings ``{"name": ..., "label": ..., <options>}``,
            ``MetricSpec``, metric classes or configured instances (or a plan, returned
            with ``extra_metrics`` added).
        extra_metrics: More metrics; repeats of ``metrics`` (same label, metric and options)
            are dropped rather than scored twice.
        reduce: How each question's attempts are reduced: a reducer name (``"mean"``,
            ``"pass@5"``...) or a list of them, the first giving the headline measurement;
            ``None``: the run's ``reduce`` (default ``"mean"``).
        registry: Where to find metrics (default: every installed one).

    Returns:
        The plan ``score``, ``run`` and ``rescore`` accept.

    Raises:
        UnknownMetricError: a name no installed metric has.
        OptionError: an unknown option or a bad value.
        ConfigError: two metrics with one label, or an extra metric that reuses a bound
            metric's label with other options, or no metric at all; an unknown reducer.
    """
    from ._reducers import check_reduce

    reducers = None if reduce is None else check_reduce(reduce)
    if isinstance(metrics, RunPlan) and reducers is None:
        reducers = metrics.reduce
    registry = registry or default_registry()
    planned: list[PlannedMetric] = []
    by_label: dict[str, PlannedMetric] = {}
    sources: list[tuple[str, Iterable[Any]]] = []
    if isinstance(metrics, RunPlan):
        planned = list(metrics.metrics)
        by_label = {pm.label: pm for pm in planned}
    else:
        sources.append(("metrics", metrics))
    sources.append(("extra_metrics", extra_metrics))
    for source, objs in sources:
        if isinstance(objs, (str, Mapping, MetricSpec)):
            objs = [objs]
        for index, obj in enumerate(objs):
            try:
                pm = obj if isinstance(obj, PlannedMetric) else _plan_one(obj, registry)
            except ItemscoreError as exc:  # say which entry, for messages that point at it
                exc.at_entry(source, index)
                raise
            other = by_label.get(pm.label)
            if other is not None:
                same = other.metric_id == pm.metric_id and dict(other.options) == dict(pm.options)
                if source == "extra_metrics" and same:
                    continue  # already bound to the suite: not scored twice
                shown = [mask_secrets(dict(m.options))[0] for m in (other, pm)]
                clash = ConfigError(
                    f"Two metrics have the label {pm.label!r} ({other.metric_id} "
                    f"{shown[0]} and {pm.metric_id} {shown[1]}). Labels "
                    "must be distinct: give one a `label`, e.g. "
                    f"{{'name': {pm.metric_id!r}, 'label': '{pm.label}_2', ...}}."
                )
                clash.at_entry(source, index)
                raise clash
            by_label[pm.label] = pm
            planned.append(pm)
    if not planned:
        raise ConfigError("No metrics to score: name at least one, e.g. metrics=['exact_match'].")
    return RunPlan(tuple(planned), reducers)
