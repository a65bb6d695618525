"""The house's layering: a lower room never imports a higher one, not even inside a function.

The rooms are the folders of ``core/`` and the modules at its top, in the order of
``docs/architecture.md``. An import counts when it runs (at module level or inside a function);
one under ``if TYPE_CHECKING:`` does not, since it only names a type.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[1] / "core"

#: Lowest first. A room may import its own layer's rooms and any lower layer's, never a higher.
LAYERS: list[tuple[str, ...]] = [
    # what everything else stands on: errors, extras' install hints, text safety, credentials
    ("_defaults", "_exceptions", "_extras", "_hashing", "_lean", "_secrets", "_status", "text"),
    # statistics: estimates with intervals, the table of interval methods, clusters, paired tests
    ("stats",),
    # how numbers and text are shown, for records, the terminal and every report
    ("display",),
    # the data model: records, score columns, the canonical Arrow batch, JSON-safe values
    ("_records", "_columns", "_schema", "_serialize"),
    # the public statistics facade and the per-item value checks
    ("aggregate", "_score_values"),
    # metrics and plugins: the base class, options, entry points, registry, reducers
    (
        "hookspecs",
        "_plugins",
        "_options",
        "_metric",
        "_entrypoints",
        "_spec",
        "_registry",
        "_derived",
        "_reducers",
    ),
    # a run's configuration
    ("_plan", "_settings"),
    # outside data into items
    ("inputs",),
    # suites (which name their data) and the checks of a whole run
    ("_suite", "_checks"),
    # where and how parts are scored
    ("executors",),
    ("engine",),
    # reading a run's numbers: comparisons and diagnostics (functions of a RunResult)
    ("comparison", "_diagnose"),
    # the run's result as data, its files and frames; writing a file or a folder whole
    ("_commit", "_items_file", "_frames", "summary", "_result"),
    # score/run/rescore: the engine's output made a RunResult
    ("_run",),
    # the questions asked of several runs
    ("_gate", "_leaderboard", "_arena"),
    # report files, the terminal, documentation generated from the code
    ("reports", "_terminal", "_docgen", "_compare_out"),
    # itemscore inside the harnesses and the test runner
    ("integrations", "pytest_plugin"),
    # the viewer, the demo and the command line
    ("viewer", "_demo", "cli", "__main__"),
    # the public face, which names everything lazily
    ("__init__",),
]


#: Imports that run upward on purpose (room -> room: why). At most three.
UPWARD: dict[tuple[str, str], str] = {}


def _room(module: str) -> str:
    """``itemscore.engine._runner`` -> ``engine``; ``itemscore._records`` -> ``_records``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _module_name(path: Path) -> str:
    rel = path.relative_to(CORE).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["itemscore", *parts])


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """Every itemscore module ``path`` imports at run time, with the line of the import."""
    current = _module_name(path)
    package = current if path.name == "__init__.py" else current.rsplit(".", 1)[0]

    def visit(node: ast.AST) -> Iterator[tuple[int, str]]:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                yield from visit(child)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            if module == "itemscore":  # `from itemscore import x` (or `from .. import x`)
                for alias in node.names:
                    is_module = (CORE / alias.name).is_dir() or (CORE / f"{alias.name}.py").exists()
                    # a public name, not a module: the import runs the package's face
                    yield node.lineno, f"itemscore.{alias.name}" if is_module else "itemscore"
            else:
                yield node.lineno, module
        for child in ast.iter_child_nodes(node):
            yield from visit(child)

    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for line, module in visit(tree):
        if module == "itemscore" or module.startswith("itemscore."):
            yield line, module


def _rooms_on_disk() -> set[str]:
    rooms = {p.stem for p in CORE.glob("*.py")}
    rooms |= {p.parent.name for p in CORE.glob("*/__init__.py")}
    return rooms


LEVEL = {room: level for level, rooms in enumerate(LAYERS) for room in rooms}


def test_every_room_has_a_layer() -> None:
    """A new folder or top-level module is placed in the layering when it is added."""
    missing = sorted(_rooms_on_disk() - set(LEVEL))
    assert not missing, f"add these to LAYERS (and to docs/architecture.md): {missing}"
    gone = sorted(set(LEVEL) - _rooms_on_disk())
    assert not gone, f"these rooms no longer exist: remove them from LAYERS: {gone}"


def _arrows() -> dict[tuple[str, str], list[str]]:
    arrows: dict[tuple[str, str], list[str]] = {}
    for path in sorted(CORE.rglob("*.py")):
        source = _room(_module_name(path)) if path.parent != CORE else path.stem
        for line, module in _imports(path):
            target = _room(module)
            if target != source and target in LEVEL:
                where = f"{path.relative_to(CORE.parent)}:{line} imports {module}"
                arrows.setdefault((source, target), []).append(where)
    return arrows


def test_no_room_imports_a_higher_one() -> None:
    upward = {
        pair: where
        for pair, where in _arrows().items()
        if LEVEL[pair[1]] > LEVEL[pair[0]] and pair not in UPWARD
    }
    assert not upward, "imports that run upward:\n" + "\n".join(
        line for lines in upward.values() for line in lines
    )


def test_the_upward_imports_kept_are_few_and_still_needed() -> None:
    assert len(UPWARD) <= 3
    arrows = _arrows()
    for pair in UPWARD:
        assert pair in arrows, f"{pair} no longer imports upward: remove it from UPWARD"


@pytest.mark.parametrize("level", range(len(LAYERS)))
def test_the_rooms_of_one_layer_do_not_lean_on_each_other_in_a_circle(level: int) -> None:
    rooms = set(LAYERS[level])
    edges: dict[str, set[str]] = {room: set() for room in rooms}
    for source, target in _arrows():
        if source in rooms and target in rooms:
            edges[source].add(target)
    # depth-first search for a back edge
    state: dict[str, int] = {}

    def circle_from(room: str, path: list[str]) -> list[str] | None:
        state[room] = 1
        for nxt in sorted(edges[room]):
            if state.get(nxt) == 1:
                return [*path, room, nxt]
            if nxt not in state:
                found = circle_from(nxt, [*path, room])
                if found:
                    return found
        state[room] = 2
        return None

    for room in sorted(rooms):
        if room not in state:
            found = circle_from(room, [])
            assert found is None, " -> ".join(found)
