"""``RunResult``: the scored items and their measurements, saved and loaded as JSON."""

from __future__ import annotations

import glob
import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ._exceptions import ResultsFormatError
from ._items_file import resolve_items, resolve_table
from ._records import ItemResult, Measurement
from ._serialize import (
    SCHEMA,
    SCHEMA_VERSION,
    check_schema,
    item_from_dict,
    item_to_dict,
    json_safe,
    measurement_from_dict,
    measurement_to_dict,
    read_document,
)
from ._settings import RunSettings
from .engine._table import RunTable, ScoredItems

if TYPE_CHECKING:
    from ._diagnose import Diagnosis
    from .comparison import Comparison

__all__ = ["RunResult", "atomic_write_text"]

_TMP_SUFFIX = ".tmp"


def _to_items(items: Iterable[ItemResult]) -> ScoredItems:
    if isinstance(items, ScoredItems):
        return items
    return RunTable.of_scored_items(list(items)).scored_items()


def _to_metric_configs(value: Iterable[Mapping[str, Any]]) -> tuple[Mapping[str, Any], ...]:
    return tuple(dict(m) for m in value)


def _damaged(source: str, exc: Exception) -> ResultsFormatError:
    return ResultsFormatError(
        f"{source} is damaged: {type(exc).__name__}: {exc}. "
        "Re-create it with `itemscore score --out` or RunResult.save_json."
    )


def _legacy_aggregations(metrics: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """How each label aggregates, for results written before measurements said so.

    Learned by configuring the metric again; a label whose metric is not installed stays
    ``"custom"`` (its comparison then needs the metric, and says so).
    """
    from ._plan import plan_metrics, saved_spec
    from .engine._measure import aggregation_of

    kinds: dict[str, str] = {}
    for entry in metrics:
        try:
            (planned,) = plan_metrics([saved_spec(entry)])
        except Exception:  # noqa: BLE001 - an uninstalled plugin: left "custom"
            continue
        kinds[str(entry["label"])] = aggregation_of(planned)
    return kinds


def _with_kind(m: Measurement, kinds: Mapping[str, str]) -> Measurement:
    kind = kinds.get(m.metric)
    if kind is None or m.aggregation != "custom":
        return m
    groups = {g: _with_kind(gm, kinds) for g, gm in m.groups.items()}
    return attrs.evolve(m, aggregation=kind, groups=groups)


def _settings_from_config(config: Mapping[str, Any]) -> RunSettings:
    """Settings of a results file written before they were saved on their own."""
    return RunSettings.from_dict({k: v for k, v in config.items() if v is not None})


@attrs.frozen(kw_only=True)
class RunResult:
    """What a run produced: every item with one score per metric, and the measurements.

    With one model (or none), ``measurements`` is that model's dict, and ``by_model`` holds the
    same dict under the model's name. With several models, ``by_model[model]`` holds one dict per
    model and ``measurements`` the numbers pooled over all of them (``model`` is ``None``).
    """

    #: Every item, in input order, with ``scores`` filled in (built on first access): the
    #: public view of the run table.
    items: ScoredItems = attrs.field(converter=_to_items)
    #: Measurements by key (``"<suite_id>.<label>"``).
    measurements: Mapping[str, Measurement]
    #: One measurements dict per model.
    by_model: Mapping[str | None, Mapping[str, Measurement]]
    #: How the run was made: suite id, interval settings, executor.
    settings: RunSettings = attrs.field(factory=RunSettings)
    #: One entry per metric, in order: ``name``, ``label``, ``options``, and where it came
    #: from (``distribution``, ``version``).
    metric_configs: tuple[Mapping[str, Any], ...] = attrs.field(
        default=(), converter=_to_metric_configs
    )
    #: Where the result comes from: ``created`` (UTC, ISO 8601), ``duration_s``,
    #: ``itemscore_version``, ``python``, ``platform``, ``packages`` (distribution ->
    #: version of every metric used), and whatever :meth:`with_provenance` added.
    provenance: Mapping[str, Any] = attrs.field(factory=dict)
    #: What readers derive from the result once and share (the bold cells every table shows,
    #: the leaderboards of a report set), by name: made on first use, never saved or compared.
    _derived: dict[str, Any] = attrs.field(factory=dict, init=False, eq=False, repr=False)

    @property
    def table(self) -> RunTable:
        """The run's items and scores as columns (what reports and comparisons read)."""
        return self.items.table

    @property
    def config(self) -> dict[str, Any]:
        """The run's configuration as one plain mapping: the settings plus ``metrics``."""
        return {
            **self.settings.to_dict(),
            "metrics": [dict(m) for m in self.metric_configs],
            "itemscore_version": self.provenance.get("itemscore_version"),
        }

    @property
    def suite_id(self) -> str:
        """The suite id the run was made under."""
        return self.settings.suite_id

    def with_provenance(self, **more: Any) -> RunResult:
        """A copy whose ``provenance`` also holds ``more`` (e.g. ``command``, ``data``)."""
        return attrs.evolve(self, provenance={**self.provenance, **more})

    @property
    def models(self) -> list[str | None]:
        """The models, in the order they first appear among the items."""
        return list(self.by_model)

    @property
    def labels(self) -> list[str]:
        """The metric labels of the run, in configuration order."""
        return [m["label"] for m in self.metric_configs]

    def __repr__(self) -> str:
        """One line: suite, models times metrics, items, data file (see ``result_repr``)."""
        from .summary._notebook import result_repr

        return result_repr(self)

    def _repr_html_(self) -> str:
        """The table ``itemscore score`` prints, as HTML for notebooks (one row per metric)."""
        from .summary._notebook import result_html

        return result_html(self)

    def items_df(self) -> Any:
        """A pandas DataFrame with one row per item and metric (needs ``itemscore[pandas]``).

        Columns: ``id``, ``model``, ``group``, the other roles (``output``, ``expected`` as a
        list, ``input``, ``cluster``), ``metric``, ``status``, ``value`` (NaN for skip and
        error), ``reason``, then one per metadata key.
        """
        from ._frames import items_df

        return items_df(self)

    def questions_df(self) -> Any:
        """A pandas DataFrame with one row per question (needs ``itemscore[pandas]``).

        A question is the items of one ``model`` and ``id`` (its attempts). Columns: ``id``,
        ``model``, ``group``, ``cluster``, ``attempts`` (every state), then per item-level
        label ``<label>:attempts`` (scored attempts), ``<label>:mean`` (their mean: the share
        right for a right-or-wrong metric) and ``<label>:agreement`` (the share of them that
        agree with the most frequent verdict; none with fewer than 2).
        """
        from ._frames import _pandas
        from .engine._questions import question_columns

        return _pandas("RunResult.questions_df()").DataFrame(question_columns(self))

    def measurements_df(self, extra: str = "expand") -> Any:
        """A pandas DataFrame with one row per measurement and group (``group`` ``None``: all).

        Needs ``itemscore[pandas]``. Columns: ``key``, ``suite``, ``metric``, ``model``,
        ``group``, ``value``, ``ci_low``, ``ci_high``, ``ci_method``, ``confidence``, ``n``,
        ``n_ok``, ``n_fail``, ``n_skip``, ``n_error``, ``higher_is_better``,
        ``reproducibility_class``, ``error``, then the secondary numbers of ``extra``.

        Args:
            extra: ``"expand"`` (default): one column ``extra.<name>`` per secondary number,
                NaN on the rows without it, so every cell is a scalar; ``"column"``: one
                column ``extra`` holding each row's dict; ``"drop"``: none.
        """
        from ._frames import measurements_df

        return measurements_df(self, extra=extra)

    def compare(self, other: RunResult | str | None = None, **options: Any) -> list[Comparison]:
        """Paired comparison of models: :func:`itemscore.compare` with this run first."""
        from .comparison import compare

        return compare(self, other, **options)

    def diagnose(self, metric: str | None = None) -> Diagnosis:
        """Item diagnostics and signal-to-noise across this run's models (docs/diagnostics.md).

        Per item its difficulty, discrimination and flags (saturated, never solved, suspected
        label error); per group Heineman et al.'s signal-to-noise ratio, lowest first.
        """
        from ._diagnose import diagnose

        return diagnose(self, metric)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document :meth:`save_json` writes."""
        return {
            "schema": SCHEMA,
            "version": SCHEMA_VERSION,
            "config": json_safe(self.config),
            "settings": json_safe(self.settings.to_dict()),
            "provenance": json_safe(self.provenance),
            "measurements": [measurement_to_dict(m) for m in self.measurements.values()],
            "by_model": [
                {"model": model, "measurements": [measurement_to_dict(m) for m in ms.values()]}
                for model, ms in self.by_model.items()
            ],
            "items": [item_to_dict(item) for item in self.items],
        }

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "results") -> RunResult:
        """Rebuild a result from :meth:`to_dict`'s document (its items listed inside).

        Raises:
            ResultsFormatError: the document is not a results file this version can read.
        """
        check_schema(data, source)
        try:
            items: Any = [item_from_dict(i) for i in data["items"]]
        except (KeyError, TypeError, ValueError) as exc:
            raise _damaged(source, exc) from exc
        return cls._from_document(data, items, source)

    @classmethod
    def _from_document(cls, data: Any, items: Any, source: str) -> RunResult:
        """A result from a checked document and its items (records, or a table's view)."""
        try:
            by_model: dict[str | None, dict[str, Measurement]] = {}
            for entry in data["by_model"]:
                ms = [measurement_from_dict(m) for m in entry["measurements"]]
                by_model[entry["model"]] = {m.key: m for m in ms}
            measurements = [measurement_from_dict(m) for m in data["measurements"]]
            config = data.get("config") or {}
            if any("aggregation" not in m for m in data["measurements"]):
                kinds = _legacy_aggregations(config.get("metrics") or ())
                measurements = [_with_kind(m, kinds) for m in measurements]
                by_model = {
                    model: {k: _with_kind(m, kinds) for k, m in ms.items()}
                    for model, ms in by_model.items()
                }
            settings = data.get("settings")
            return cls(
                items=items,
                measurements={m.key: m for m in measurements},
                by_model=by_model,
                settings=RunSettings.from_dict(settings)
                if settings is not None
                else _settings_from_config(config),
                metric_configs=config.get("metrics") or (),
                provenance=data.get("provenance") or {},
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise _damaged(source, exc) from exc

    def save_json(self, path: str | os.PathLike[str]) -> Path:
        """Write the result to ``path`` as JSON (atomically: a temporary file, then renamed)."""
        text = json.dumps(self.to_dict(), ensure_ascii=False, allow_nan=False)
        return atomic_write_text(Path(path), text)

    @classmethod
    def load_json(cls, path: str | os.PathLike[str]) -> RunResult:
        """Read a result written by :meth:`save_json` or into a report set (``--out``).

        A report set's results refer to its per-item store, ``items.parquet`` (or, written
        before it, ``items.jsonl``) beside them: only a plain file in the same folder is read,
        checked against the row count and SHA-256 the results record.

        Raises:
            ResultsFormatError: the file is not valid JSON or not a results file, or its items
                file is missing, altered or not a plain file beside it.
            OSError: the file cannot be read.
        """
        path = Path(path)
        data = read_document(path)
        table = resolve_table(data, path)
        if table is None:
            return cls.from_dict(resolve_items(data, path), source=str(path))
        return cls._from_document(data, table.scored_items(), str(path))


def atomic_write_text(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file in the same folder, then rename.

    A failure never leaves a half-written ``path`` behind. The temporary ``.NAME.*.tmp`` is
    locked while it is written, so one that a killed writer left is removed by the next write
    of ``path`` (only that pattern, only when no live process holds it).
    """
    from ._commit import hold, remove_unheld

    path.parent.mkdir(parents=True, exist_ok=True)
    prefix = f".{path.name}."
    remove_unheld(path.parent.glob(f"{glob.escape(prefix)}*{_TMP_SUFFIX}"))
    while True:
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=_TMP_SUFFIX, dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace", newline="") as out:
                if not hold(out):  # a cleaner took it before the lock: make another
                    continue
                out.write(text)
                out.flush()
                if os.name != "nt":  # renamed under the lock, so no cleaner can take it first
                    os.replace(tmp, path)
            if os.name == "nt":  # an open file cannot be renamed there
                os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path
