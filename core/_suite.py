"""``Suite``: a benchmark's items and the metrics bound to it; suite discovery."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from importlib import resources
from typing import Any, ClassVar

import attrs

from ._entrypoints import entry_points
from ._exceptions import InputError, UnknownSuiteError, did_you_mean
from ._records import ItemResult
from .inputs import to_items
from .inputs.jsonl import parse_line

__all__ = ["SUITES_GROUP", "Suite", "get_suite", "suite_refs"]

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
        return to_items(raw)

    def load_data(self) -> Iterator[Mapping[str, Any]]:
        """The rows of the suite's bundled data (JSON lines).

        Raises:
            InputError: the suite bundles no data.
        """
        if self.bundled_data is None:
            raise InputError(f"Suite {self.suite_id!r} bundles no data; pass your own rows.")
        package, name = self.bundled_data
        text = resources.files(package).joinpath(name).read_text(encoding="utf-8")
        for lineno, line in enumerate(text.splitlines(), 1):
            if line.strip():
                yield parse_line(line, f"{package}/{name}", lineno)


@attrs.frozen
class SuiteRef:
    """A suite declared in ``itemscore.suites``."""

    #: The entry point's name.
    name: str
    #: ``module:attribute``.
    target: str
    #: The declaring distribution.
    distribution: str | None


def suite_refs() -> list[SuiteRef]:
    """Every suite declared through entry points (not loaded)."""
    return [SuiteRef(r.name, r.value, r.distribution) for r in entry_points(SUITES_GROUP)]


def get_suite(name: str) -> Suite:
    """An instance of the suite with id or entry-point name ``name``.

    Raises:
        UnknownSuiteError: no installed suite has that name.
    """
    refs = entry_points(SUITES_GROUP)
    for ref in refs:
        if ref.name == name or ref.name.replace("-", "_") == name.replace("-", "_"):
            suite_cls = ref.entry_point.load()
            return suite_cls()  # type: ignore[no-any-return]
    for ref in refs:
        suite_cls = ref.entry_point.load()
        if getattr(suite_cls, "suite_id", None) == name:
            return suite_cls()  # type: ignore[no-any-return]
    names = [r.name for r in refs]
    raise UnknownSuiteError(
        f"No suite is named {name!r}.{did_you_mean(name, names)} "
        f"Installed suites: {', '.join(names) or 'none'}."
    )
