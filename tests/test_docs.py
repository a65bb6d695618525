"""Every Python block in docs/*.md and README.md runs as written, or is marked as a fragment.

A block runs on its own: in a fresh namespace, in an empty temporary folder, with a fresh
metric registry and plugin manager, so it must import what it uses and define what it needs.
An excerpt that is not meant to run (a few lines of a class, a signature) carries the marker
:data:`FRAGMENT` on a line of its own just above its fence; mkdocs renders the comment as
nothing. A top-level line ``expression  # literal`` (or ``print(expression)  # literal``) must
give that literal: ``normalize("U.S.A.")  # 'usa'`` is checked, ``# the defaults`` is prose.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from itemscore._registry import _REGISTERED

ROOT = Path(__file__).parents[1]
#: The marker of a block that is not meant to run, on a line of its own above the fence; a
#: reason may follow a colon: ``<!-- fragment: needs a judge server -->``.
FRAGMENT = "<!-- fragment -->"
_MARKER = re.compile(r"^\s*<!-- fragment(?:: [^>]*\S)? -->\s*$")
#: Info strings of the fences that hold Python to run.
PYTHON = frozenset({"python", "py", "python3"})

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\s]*)[^`]*$")
_EXCERPT = re.compile(r"<!-- fragment: excerpt of (?P<path>\S+) -->")
_COMMENT = re.compile(r"^\s*<!--.*-->\s*$")


@attrs.frozen
class Block:
    """One fenced code block of a Markdown file."""

    path: Path  #: the Markdown file
    line: int  #: 1-based line number of the opening fence
    info: str  #: the fence's language, lower case ("" when none)
    source: str  #: the code, its indentation removed
    marker: str | None  #: the fragment marker above the fence, or None

    @property
    def fragment(self) -> bool:
        """Whether the block is marked as not meant to run."""
        return self.marker is not None

    @property
    def where(self) -> str:
        """``file:line`` of the opening fence, relative to the repository."""
        return f"{self.path.relative_to(ROOT).as_posix()}:{self.line}"


def markdown_files() -> list[Path]:
    """README.md and every Markdown file under docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _marker(lines: list[str], fence_index: int) -> str | None:
    """The fragment marker among the HTML comments just above a fence (blank lines allowed)."""
    index = fence_index - 1
    while index >= 0 and (not lines[index].strip() or _COMMENT.match(lines[index])):
        if _MARKER.match(lines[index]):
            return lines[index].strip()
        index -= 1
    return None


def blocks(path: Path) -> Iterator[Block]:
    """The fenced code blocks of one Markdown file, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        body: list[str] = []
        end = index + 1
        while end < len(lines):
            closing = _FENCE.match(lines[end])
            if (
                closing is not None
                and closing["fence"][0] == fence[0]
                and len(closing["fence"]) >= len(fence)
                and not closing["info"]
            ):
                break
            line = lines[end]
            body.append(line[len(indent) :] if line.startswith(indent) else line.lstrip())
            end += 1
        yield Block(
            path=path,
            line=index + 1,
            info=opening["info"].lower(),
            source="\n".join(body) + "\n",
            marker=_marker(lines, index),
        )
        index = end + 1


def all_blocks() -> list[Block]:
    return [block for path in markdown_files() for block in blocks(path)]


def python_blocks() -> list[Block]:
    return [block for block in all_blocks() if block.info in PYTHON]


_CHECK = "__check_claim__"


class ClaimError(AssertionError):
    """A line of a block does not give what its comment says it gives."""


def _claim(comment: str) -> tuple[str, Any] | None:
    """The Python literal a ``# comment`` says a line evaluates to, with its text, or None.

    ``# 'usa'``, ``# ['a', 'b']``, ``# None`` and ``# False: kept`` (a literal, a colon and an
    explanation) are claims; ``# the defaults suit short answers`` is not.
    """
    text = comment.lstrip("#").strip()
    for candidate in (text, text.split(": ", 1)[0]):
        try:
            return candidate, ast.literal_eval(candidate)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return None


def _check_claim(actual: Any, claimed: Any, text: str, where: str) -> None:
    if isinstance(claimed, float) and isinstance(actual, (int, float)) and "." in text:
        actual = round(actual, len(text.rsplit(".", 1)[1]))
    if actual != claimed or type(actual) is not type(claimed):
        raise ClaimError(
            f"{where}: the comment says this line gives {text}, but it gives {actual!r}: "
            f"correct the comment (or the code)."
        )


def with_claims_checked(tree: ast.Module, block: Block) -> ast.Module:
    """``tree`` with every top-level ``expression  # literal`` line turned into a check.

    A bare expression, or ``print(expression)``, followed by a comment holding a Python literal
    must give that literal (a float to the digits shown).
    """
    source = "\n" * block.line + block.source
    comments = {
        token.start[0]: token.string
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    }
    for index, node in enumerate(tree.body):
        if not isinstance(node, ast.Expr) or node.end_lineno not in comments:
            continue
        claim = _claim(comments[node.end_lineno])
        if claim is None:
            continue
        value = node.value
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id == "print"
            and len(value.args) == 1
            and not value.keywords
        ):
            value = value.args[0]
        where = f"{block.path.relative_to(ROOT).as_posix()}:{node.end_lineno}"
        call = ast.Call(
            func=ast.Name(id=_CHECK, ctx=ast.Load()),
            args=[
                value,
                ast.parse(claim[0], mode="eval").body,
                ast.Constant(claim[0]),
                ast.Constant(where),
            ],
            keywords=[],
        )
        tree.body[index] = ast.copy_location(ast.Expr(call), node)
    return ast.fix_missing_locations(tree)


def _how_to_fix(block: Block) -> str:
    return (
        f"Make it run on its own: it runs in a fresh namespace, in an empty temporary folder, "
        f"so it needs its own imports and must define (or build) what it uses. If it is an "
        f"excerpt not meant to run, put the line\n\n    {FRAGMENT}\n\n"
        f"(or <!-- fragment: why it does not run -->) just above its "
        f"```{block.info or 'python'} fence (line {block.line})."
    )


@pytest.fixture
def in_temp_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def no_registrations_left() -> Iterator[None]:
    """Forget the metrics a block registers with ``@register``, as a new process would."""
    before = dict(_REGISTERED)
    yield
    _REGISTERED.clear()
    _REGISTERED.update(before)


@pytest.mark.parametrize(
    "block", [b for b in python_blocks() if not b.fragment], ids=lambda b: b.where
)
@pytest.mark.usefixtures("in_temp_folder", "no_registrations_left", "fresh_registry")
def test_python_block_runs_as_written(block: Block) -> None:
    """The block runs without raising, alone, in an empty temporary folder."""
    # Blank lines in front keep the line numbers of tracebacks those of the Markdown file.
    try:
        source = "\n" * block.line + block.source
        tree = with_claims_checked(ast.parse(source, filename=str(block.path)), block)
        code = compile(tree, str(block.path), "exec")
        exec(code, {"__name__": "__main__", _CHECK: _check_claim})
    except Exception as exc:  # noqa: BLE001 - any failure of the block is the finding
        failure = exc
    else:
        return
    # Outside the except clause, so that the report is not chained to the failure.
    where = block.where
    frames = traceback.extract_tb(failure.__traceback__)
    lines = [frame.lineno for frame in frames if frame.filename == str(block.path)]
    if lines and lines[-1] is not None:
        where = f"{block.path.relative_to(ROOT).as_posix()}:{lines[-1]}"
    hint = "" if isinstance(failure, ClaimError) else _how_to_fix(block) + "\n\n"
    pytest.fail(
        f"{where}: the Python block at {block.where} does not run as written: "
        f"{type(failure).__name__}: {failure}\n\n{hint}"
        + "".join(traceback.format_exception(failure)),
        pytrace=False,
    )


def test_every_fragment_marker_stands_above_a_python_block() -> None:
    """A marker followed by no Python fence marks nothing: a moved or mistyped block."""
    marked = {(b.path, b.line) for b in python_blocks() if b.fragment}
    for path in markdown_files():
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, start=1):
            if not _MARKER.match(line):
                continue
            following = next(
                (
                    i
                    for i in range(number, len(lines))
                    if not _COMMENT.match(lines[i]) and lines[i].strip()
                ),
                None,
            )
            message = (
                f"{path.relative_to(ROOT).as_posix()}:{number}: {FRAGMENT} must stand just "
                f"above a ```python fence (HTML comments and blank lines may come between)."
            )
            assert following is not None, message
            assert (path, following + 1) in marked, message


def test_excerpts_match_the_files_they_quote() -> None:
    """A fragment marked `excerpt of PATH` quotes PATH: its lines occur there, in order."""
    excerpts = [(b, _EXCERPT.match(b.marker or "")) for b in python_blocks()]
    checked = 0
    for block, match in excerpts:
        if match is None:
            continue
        quoted = ROOT / match["path"]
        assert quoted.is_file(), f"{block.where}: {match['path']} does not exist."
        source = iter(line.rstrip() for line in quoted.read_text(encoding="utf-8").splitlines())
        for line in block.source.splitlines():
            if line.strip() in ("", "..."):
                continue
            assert any(line.rstrip() == have for have in source), (
                f"{block.where}: the excerpt's line {line.strip()!r} is not in "
                f"{match['path']} (or not in this order): update the excerpt to match the file."
            )
        checked += 1
    assert checked >= 10


def test_the_readme_links_to_files_that_exist() -> None:
    """Every relative link of README.md names a file or folder of the repository."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if "://" not in t]
    assert targets
    for target in targets:
        path = target.split("#")[0]
        assert not path or (ROOT / path).exists(), f"README.md links to {target}, which is missing."


def test_the_parser_finds_the_blocks_of_a_known_page(tmp_path: Path) -> None:
    """Fences of any length, indented ones, languages and markers are read as written."""
    page = tmp_path / "page.md"
    page.write_text(
        "# Title\n\n```python\nx = 1\n```\n\n<!-- fragment -->\n<!-- fmt: off -->\n"
        "```python\n    y = x\n```\n\n- a list item:\n\n  ```py\n  z = 2\n  ```\n\n"
        "````markdown\n```python\nnot a block\n```\n````\n\n"
        "<!-- fragment: why -->\n```bash\nls\n```\n",
        encoding="utf-8",
    )
    found = [(b.line, b.info, b.source, b.marker) for b in blocks(page)]
    assert found == [
        (3, "python", "x = 1\n", None),
        (9, "python", "    y = x\n", "<!-- fragment -->"),
        (15, "py", "z = 2\n", None),
        (19, "markdown", "```python\nnot a block\n```\n", None),
        (26, "bash", "ls\n", "<!-- fragment: why -->"),
    ]


def test_the_docs_have_python_blocks_that_run() -> None:
    """The collection is not silently empty: README and docs hold runnable blocks."""
    runnable = [b for b in python_blocks() if not b.fragment]
    assert any(b.path.name == "README.md" for b in runnable)
    assert len(runnable) >= 20
