"""``Suite``: a benchmark's items and the metrics bound to it; suite discovery."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from importlib import resources
from typing import Any, ClassVar

from ._entrypoints import EntryPointRef, entry_points, load
from ._exceptions import InputError, PluginLoadError, UnknownSuiteError, did_you_mean
from ._records import ItemResult

__all__ = ["SUITES_GROUP", "Suite", "find_suite", "get_suite"]

#: The entry-point group suites are declared in.
SUITES_GROUP = "itemscore.suites"


class Suite:
    """A benchmark as itemscore sees it: how to turn raw rows into items, and bound metrics.

    Subclass it, set ``suite_id`` and ``metrics``, and override :meth:`items` when the harness's
    rows are not already mappings with the item fields as keys.
    """

    #: The suite's id; measurement keys are ``"<suite_id>.<label>"``.
    suite_id: ClassVar[str] = "default"
    #: One sentence, shown by ``itemscore demo``.
    description: ClassVar[str] = ""
    #: The metrics bound to the suite: names, mappings or ``MetricSpec``.
    metrics: ClassVar[Sequence[Any]] = ()
    #: A data file bundled in ``package`` (for demo suites): ``("itemscore", "demo_data/x.jsonl")``.
    bundled_data: ClassVar[tuple[str, str] | None] = None

    def items(self, raw: Iterable[Any]) -> Iterable[ItemResult]:
        """Turn a harness's raw rows into items.

        The default accepts items as they are, and mappings keyed by role (``id``, ``output``,
        ``expected``, ``input``, ``group``, ``model``...), converted by the rules every file
        follows: other keys go to ``metadata``, NaN means missing, a missing ``id`` becomes the
        row number.
        """
        from .inputs import to_items  # here: listing suites must not load the readers

        return to_items(raw)

    def load_data(self) -> Iterator[Mapping[str, Any]]:
        """The rows of the suite's bundled data (JSON lines).

        Raises:
            InputError: the suite bundles no data.
        """
        if self.bundled_data is None:
            raise InputError(f"Suite {self.suite_id!r} bundles no data; pass your own rows.")
        from .inputs.jsonl import parse_line  # here: listing suites must not load the readers

        package, name = self.bundled_data
        text = resources.files(package).joinpath(name).read_text(encoding="utf-8")
        for lineno, line in enumerate(text.splitlines(), 1):
            if line.strip():
                yield parse_line(line, f"{package}/{name}", lineno)


def _same(a: str, b: str) -> bool:
    return a.replace("-", "_") == b.replace("-", "_")


def _suite_class(ref: EntryPointRef) -> type[Suite]:
    """The suite class of ``ref``, loaded once.

    Raises:
        PluginLoadError: it cannot be imported, or is not a ``Suite`` subclass.
    """
    loaded = load(ref)
    where = f"suite entry point {ref.name!r} ({ref.value}) of distribution {ref.distribution!r}"
    if not loaded.ok:
        problem = f"cannot be loaded: {loaded.error}"
    elif not isinstance(loaded.obj, type) or not issubclass(loaded.obj, Suite):
        problem = f"is {loaded.obj!r}, not a subclass of itemscore.Suite."
    else:
        return loaded.obj
    raise PluginLoadError(
        f"The {where} {problem}",
        entry_point=ref.name,
        distribution=ref.distribution,
        group=SUITES_GROUP,
    )


def find_suite(name: str, *, near_miss: float | None = 0.8) -> Suite | None:
    """The installed suite with entry-point name or id ``name``, or ``None`` when none is.

    An entry point named ``name`` is loaded first; only when none is are the others loaded to
    compare their ids. A suite entry point that fails to load never stops a suite that loads.

    Args:
        name: The suite's id or entry-point name.
        near_miss: A ``name`` at least this similar (difflib ratio) to an installed suite's
            name is taken for a typo of it: an error, not a new id. ``None``: no such check.

    Raises:
        PluginLoadError: the entry point named ``name`` cannot be loaded.
        UnknownSuiteError: ``name`` is a near miss of an installed suite's name.
    """
    refs = entry_points(SUITES_GROUP)
    for ref in refs:
        if _same(ref.name, name):
            return _suite_class(ref)()
    names: list[str] = []
    for ref in refs:
        names.append(ref.name)
        try:
            cls = _suite_class(ref)
        except PluginLoadError:
            continue  # another suite's problem; `itemscore plugins` reports it
        names.append(cls.suite_id)
        if _same(cls.suite_id, name):
            return cls()
    close = [] if near_miss is None else difflib.get_close_matches(name, names, 1, near_miss)
    if close:
        raise UnknownSuiteError(
            f"No suite is named {name!r}. Did you mean {close[0]!r}? Installed suites: "
            f"{', '.join(sorted(set(names)))}. (An id that resembles no installed suite only "
            "names the measurement keys.)",
            name=name,
        )
    return None


def get_suite(name: str) -> Suite:
    """An instance of the suite with id or entry-point name ``name``.

    Raises:
        UnknownSuiteError: no installed suite has that name.
        PluginLoadError: the suite named ``name`` cannot be loaded.
    """
    suite = find_suite(name, near_miss=None)
    if suite is not None:
        return suite
    names = [r.name for r in entry_points(SUITES_GROUP)]
    raise UnknownSuiteError(
        f"No suite is named {name!r}.{did_you_mean(name, names)} "
        f"Installed suites: {', '.join(names) or 'none'}.",
        name=name,
    )
