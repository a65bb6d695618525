"""The report sets a viewer serves: found inside the given folders, listed, loaded on demand.

A folder is a report set when it holds ``results.json`` (what ``--out`` writes, or
``RunResult.save_json``); a folder given to the viewer is one, or holds some in its
subfolders up to :data:`MAX_DEPTH` levels down (hidden folders, such as a set's own
``.itemscore``, are not searched, and no link to a folder is followed). A ``results.json``
whose real file lies outside the folder it was found in (a link out) is listed as refused
and never read.

Each set is named by a token made from its path, so an address never holds a path: no
request can name a file outside the sets. The listing reads each ``results.json`` again when
it changed, with each run's headline measurements (metric label and value per model); loaded
runs (:meth:`Runs.load`) are kept for the few runs last opened.

Loading a run reads its ``results.json`` and checks its ``items.parquet`` (:mod:`._store`)
without reading its rows: the report page holds the first rows, read from the first row
group(s), and says how many items the run has from the checked count. A run with several
models also reads every item's keys and scores once, for the comparison of its models that
the page shows; so does a run compared with another.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from .._exceptions import ConfigError
from .._result import RunResult
from .._serialize import read_document
from ..display._text import printable
from ..engine._table import RunTable, ScoredItems
from ._query import ItemIndex
from ._store import ItemStore

__all__ = [
    "MAX_DEPTH",
    "Headline",
    "Loaded",
    "NoReportSet",
    "Run",
    "RunInfo",
    "Runs",
    "find_runs",
]

#: How many folder levels below a given folder are searched for report sets.
MAX_DEPTH = 4
#: How many loaded runs are kept in memory.
KEEP_LOADED = 4
_RESULTS = "results.json"


class NoReportSet(ConfigError):
    """Raised when a folder given to the viewer holds no report set."""


@attrs.frozen
class Run:
    """One report set: where it was found and its token."""

    #: The address-safe name of the set (from its path).
    token: str
    #: The folder given to the viewer, resolved.
    root: Path
    #: The set's folder, as found (not resolved: a set switched in later stays the same run).
    folder: Path
    #: How the listing names it: the given folder's name and the path below it.
    name: str

    @property
    def results(self) -> Path:
        """The set's ``results.json``."""
        return self.folder / _RESULTS

    def inside(self) -> bool:
        """Whether the real ``results.json`` lies inside the folder given to the viewer."""
        real = Path(os.path.realpath(self.results))
        return real.is_file() and real.is_relative_to(self.root)


@attrs.frozen(kw_only=True)
class Headline:
    """One headline measurement of a run, as ``results.json`` records it."""

    #: The model (``None``: the run has none, or the numbers pool every model).
    model: str | None
    #: The metric label.
    label: str
    #: The value (``None`` when the measurement failed).
    value: float | None
    #: The interval's ends, when it has one.
    low: float | None = None
    high: float | None = None


@attrs.frozen(kw_only=True)
class RunInfo:
    """What the listing shows of a run, read from its ``results.json`` (no items)."""

    #: The run.
    run: Run
    #: Why it cannot be opened (unreadable, damaged, a link out); ``None`` when it can.
    error: str | None = None
    #: The suite id.
    suite: str = ""
    #: The model names.
    models: tuple[str, ...] = ()
    #: The metric labels.
    labels: tuple[str, ...] = ()
    #: How many items.
    n_items: int | None = None
    #: The ``provenance`` object.
    provenance: Mapping[str, Any] = attrs.field(factory=dict)
    #: The headline measurements, model by model (each model's, from ``by_model``).
    scores: tuple[Headline, ...] = ()


class _Counted(ScoredItems):
    """The first items of a run, counted as the run's items (the checked count)."""

    __slots__ = ("_count",)

    def __init__(self, table: RunTable, count: int) -> None:
        super().__init__(table)
        self._count = count

    def __len__(self) -> int:
        return self._count


class Loaded:
    """A loaded run: its items (read as needed), their index, and its report page.

    Args:
        data: The run's results document.
        source: Where it was read from.
        store: Its items.
        result: The run loaded whole, when it was (a run without ``items.parquet``).
    """

    def __init__(
        self,
        data: Mapping[str, Any],
        source: Path,
        store: ItemStore,
        result: RunResult | None = None,
    ) -> None:
        self.data = data
        self.source = source
        #: The run's items.
        self.store = store
        #: The model names, as the run records them.
        self.models = list(_models(data))
        #: The run's items, indexed for views.
        self.index = ItemIndex(store, [printable(m) for m in self.models])
        #: The report page, rendered on first request.
        self.page: str | None = None
        #: Held while the page is rendered, so that two first requests render it once.
        self.rendering = threading.Lock()
        self._result = result

    def _shell(self, items: ScoredItems) -> RunResult:
        """The run's measurements and settings from its document, with ``items``."""
        bare = RunResult.from_dict({**self.data, "items": []}, source=str(self.source))
        return attrs.evolve(bare, items=items)

    @property
    def result(self) -> RunResult:
        """The run with every item's keys and scores (what ``compare`` reads)."""
        return self.whole(0)

    def whole(self, held: int) -> RunResult:
        """The run with every item's keys and scores, holding its first ``held`` items.

        Raises:
            ItemscoreError, OSError: the items file cannot be read (or changed meanwhile).
        """
        if self._result is not None:
            return self._result
        return self._shell(self.store.full_table(self.store.first(held)).scored_items())

    def page_result(self, held: int) -> RunResult:
        """The run as its report page needs it: the first ``held`` items, counted as all.

        With several models the page compares them, which reads every item's scores.

        Raises:
            ItemscoreError, OSError: the items file cannot be read (or changed meanwhile).
        """
        if self._result is not None or len(self.models) >= 2:
            return self.whole(held)
        table = self.store.page_table(self.store.first(held))
        return self._shell(_Counted(table, self.store.n))


def _token(folder: Path) -> str:
    return hashlib.sha256(os.fsencode(folder)).hexdigest()[:16]


def _sets_in(root: Path) -> list[Path]:
    """The folders holding ``results.json`` in ``root`` and below (up to :data:`MAX_DEPTH`)."""
    found = []
    for here, folders, files in os.walk(root, followlinks=False):
        depth = len(Path(here).relative_to(root).parts)
        folders[:] = (
            sorted(f for f in folders if not f.startswith(".")) if depth < MAX_DEPTH else []
        )
        if _RESULTS in files:
            found.append(Path(here))
    return found


def find_runs(folders: Sequence[Path]) -> list[Run]:
    """Every report set in ``folders``, in the order given, each folder's sets by path.

    Raises:
        NoReportSet: a folder holds no report set (it, or its subfolders up to
            :data:`MAX_DEPTH` levels down, hold no ``results.json``).
    """
    runs: list[Run] = []
    seen: set[Path] = set()
    for folder in folders:
        root = Path(os.path.realpath(folder))
        if not root.is_dir():
            raise NoReportSet(f"{folder} is not a folder; give the viewer folders of report sets.")
        sets = _sets_in(root)
        if not sets:
            raise NoReportSet(
                f"{folder} holds no report set: no results.json in it or in its subfolders "
                f"(up to {MAX_DEPTH} levels down; hidden folders are not searched). Write one "
                "with `itemscore score FILE -m METRIC --out DIR`, then view DIR."
            )
        for found in sets:
            if found in seen:
                continue
            seen.add(found)
            below = found.relative_to(root)
            name = root.name if not below.parts else f"{root.name}/{below.as_posix()}"
            runs.append(Run(token=_token(found), root=root, folder=found, name=name))
    return runs


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _models(data: Mapping[str, Any]) -> tuple[str, ...]:
    """The model names a results document records, in its order."""
    return tuple(
        str(entry.get("model"))
        for entry in data.get("by_model") or []
        if isinstance(entry, dict) and entry.get("model") is not None
    )


def _info(run: Run) -> RunInfo:
    if not run.inside():
        return RunInfo(
            run=run,
            error="its results.json lies outside the folder given to the viewer (a link out); "
            "it is not read.",
        )
    try:
        data = json.loads(run.results.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return RunInfo(run=run, error=f"results.json cannot be read: {exc}")
    if not isinstance(data, dict):
        return RunInfo(run=run, error="results.json is not a results file.")
    settings = _mapping(data.get("settings"))
    config = _mapping(data.get("config"))
    items = data.get("items")
    n_items = len(items) if isinstance(items, list) else _mapping(items).get("count")
    models = _models(data)
    labels = tuple(str(m.get("label")) for m in config.get("metrics") or [] if isinstance(m, dict))
    provenance = _mapping(data.get("provenance"))
    scores = tuple(_headlines(data.get("by_model")))
    return RunInfo(
        run=run,
        suite=str(settings.get("suite_id") or config.get("suite_id") or ""),
        models=models,
        labels=labels,
        n_items=n_items if isinstance(n_items, int) else None,
        provenance=provenance,
        scores=scores,
    )


def _number(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value) if ok else None


def _headlines(by_model: Any) -> list[Headline]:
    """Each model's measurements (label and value), in the order the results list them."""
    out = []
    for entry in by_model if isinstance(by_model, list) else ():
        if not isinstance(entry, dict):
            continue
        model = entry.get("model")
        for m in entry.get("measurements") or []:
            if not isinstance(m, dict) or m.get("metric") is None:
                continue
            out.append(
                Headline(
                    model=None if model is None else str(model),
                    label=str(m["metric"]),
                    value=_number(m.get("value")),
                    low=_number(m.get("ci_low")),
                    high=_number(m.get("ci_high")),
                )
            )
    return out


class Runs:
    """The viewer's runs: found again for each listing, read when changed, loaded on demand."""

    def __init__(self, folders: Sequence[Path]) -> None:
        self.folders = list(folders)
        self._lock = threading.Lock()
        self._runs = find_runs(self.folders)
        self._infos: dict[str, tuple[Any, RunInfo]] = {}
        self._loaded: OrderedDict[str, tuple[Any, Loaded]] = OrderedDict()

    def refresh(self) -> list[Run]:
        """Search the folders again (a set written since appears); the sets found before stay."""
        try:
            runs = find_runs(self.folders)
        except NoReportSet:  # a folder emptied meanwhile: keep what was listed
            return self.runs()
        with self._lock:
            self._runs = runs
        return runs

    def runs(self) -> list[Run]:
        """The runs found last."""
        with self._lock:
            return list(self._runs)

    def get(self, token: str) -> Run | None:
        """The run of ``token``, or ``None``."""
        return next((r for r in self.runs() if r.token == token), None)

    def info(self, run: Run) -> RunInfo:
        """What the listing shows of ``run``, read again when its ``results.json`` changed."""
        stamp = _stamp(run.results)
        with self._lock:
            cached = self._infos.get(run.token)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        info = _info(run)
        with self._lock:
            self._infos[run.token] = (stamp, info)
        return info

    def load(self, run: Run) -> Loaded:
        """The run's results read and its items file checked (no row read), kept for next time.

        A run whose items are not in ``items.parquet`` is loaded whole (``load_json``).

        Raises:
            ConfigError: the run's results.json lies outside its folder.
            ItemscoreError, OSError: it cannot be loaded (what ``load_json`` raises).
        """
        if not run.inside():
            raise ConfigError(
                f"{run.name}: its results.json lies outside the folder given to the viewer; it "
                "is not read."
            )
        stamp = _stamp(run.results)
        with self._lock:
            cached = self._loaded.get(run.token)
            # An items file written over in place is checked again (and refused) when read.
            if cached is not None and cached[0] == stamp and cached[1].store.fresh():
                self._loaded.move_to_end(run.token)
                return cached[1]
        data = read_document(run.results)
        store = ItemStore.open(data, run.results)
        if store is None:
            whole = RunResult.load_json(run.results)
            loaded = Loaded(data, run.results, ItemStore.of_result(whole), whole)
        else:
            loaded = Loaded(data, run.results, store)
        with self._lock:
            self._loaded[run.token] = (stamp, loaded)
            self._loaded.move_to_end(run.token)
            while len(self._loaded) > KEEP_LOADED:
                self._loaded.popitem(last=False)
        return loaded
