"""The install command for an optional dependency, read from the installed distribution.

itemscore is installed from a clone, not from a package index, so ``pip install
'itemscore[xlsx]'`` fails: pip looks the name up on PyPI. What works anywhere is installing the
dependency itself, with the version its extra asks for; the distribution's metadata
(``importlib.metadata.requires``) holds exactly that (``XlsxWriter>=3.1; extra == "xlsx"``),
so every hint is built here from it and none is typed by hand.
"""

from __future__ import annotations

import re
import sys

__all__ = ["install_hint", "requirement"]

#: ``name[extras] specifiers ; marker`` of one line of a distribution's ``Requires-Dist``.
_REQUIREMENT = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?P<extras>\[[^\]]*\])?\s*"
    r"(?P<spec>[^;]*?)\s*(?:;\s*(?P<marker>.*))?$"
)
#: One clause of a marker: ``extra == "xlsx"``, ``python_version < "3.14"``.
_CLAUSE = re.compile(
    r"""^\s*(?P<key>\w+)\s*(?P<op>==|!=|<=|>=|<|>)\s*["'](?P<value>[^"']*)["']\s*$"""
)


def _normal(name: str) -> str:
    """A package or module name as PEP 503 compares them: ``rouge_score`` is ``rouge-score``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text))


def _holds(marker: str | None, extra: str | None) -> tuple[bool, str | None]:
    """Whether ``marker`` holds on this Python, and the extra it names (``None``: none).

    Only ``and`` of ``extra`` and ``python_version`` clauses is read (all itemscore writes); a
    clause of another kind counts as holding, so a hint names too much rather than too little.
    """
    if not marker:
        return True, None
    named = None
    holds = True
    for clause in re.split(r"\s+and\s+", marker.strip()):
        found = _CLAUSE.match(clause.strip("() "))
        if found is None:
            continue
        key, op, value = found["key"], found["op"], found["value"]
        if key == "extra":
            named = value
        elif key == "python_version":
            here, there = tuple(sys.version_info[:2]), _version(value)
            holds = holds and {
                "==": here == there, "!=": here != there, "<": here < there,
                "<=": here <= there, ">": here > there, ">=": here >= there,
            }[op]  # fmt: skip
    return holds and (extra is None or named == extra), named


def _requirements(distribution: str) -> list[tuple[str, str, str | None]]:
    """``(name, requirement without its marker, extra)`` of each applicable requirement."""
    from importlib.metadata import PackageNotFoundError, requires

    try:
        lines = requires(distribution) or []
    except PackageNotFoundError:
        return []
    found = []
    for line in lines:
        parsed = _REQUIREMENT.match(line)
        if parsed is None:
            continue
        holds, extra = _holds(parsed["marker"], None)
        if holds:
            spec = re.sub(r"\s+", "", parsed["spec"])
            # The package's own extras too (`ray[data]`): without them it is not what works.
            extras = re.sub(r"\s+", "", parsed["extras"] or "")
            found.append((parsed["name"], parsed["name"] + extras + spec, extra))
    return found


def requirement(name: str, distribution: str = "itemscore") -> str | None:
    """The requirement ``distribution`` declares for the package or module ``name``.

    Example:
        ``requirement("xlsxwriter")`` is ``"XlsxWriter>=3.1"`` (the xlsx extra's);
        ``requirement("rouge_score")`` is ``"rouge-score>=0.1.2"``. ``None`` when
        ``distribution`` names no such requirement (or is not installed).
    """
    wanted = _normal(name.partition(".")[0])
    for found, text, _ in _requirements(distribution):
        if _normal(found) == wanted:
            return text
    return None


def install_hint(*names: str, extra: str | None = None, distribution: str = "itemscore") -> str:
    """``pip install 'XlsxWriter>=3.1'``: the command that installs what is missing.

    Args:
        names: The packages (or modules) that are needed, each installed with the version
            ``distribution`` asks for; a name it does not list is named as it is.
        extra: Every requirement of this extra of ``distribution``, after ``names``.
        distribution: The installed distribution whose metadata says the versions.

    When the metadata says nothing (no names, an unknown extra), the hint is the command that
    installs the extra from the folder of a clone: ``pip install '.[xlsx]'``.
    """
    wanted = [requirement(name, distribution) or name for name in names]
    if extra is not None:
        for _, text, of in _requirements(distribution):
            if of == extra and text not in wanted:
                wanted.append(text)
    if not wanted:
        return f"pip install '.[{extra}]' (in the folder of a clone of {distribution})"
    return "pip install " + " ".join(
        f"'{w}'" if re.search(r"[<>=!~,; [\]]", w) else w for w in wanted
    )
