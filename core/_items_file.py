"""The per-item store a ``results.json`` refers to: found, checked, read.

A report set's ``results.json`` does not list its items; it refers to the file beside it that
holds them — ``{"file": "items.parquet", "count": N, "sha256": "..."}`` (``items.jsonl`` in
sets written before the Parquet store). The file is trusted only as far as it is checked:

- its name is a plain file name, and it is opened in the folder of the real
  ``results.json`` (a report set's links resolved), never through a symbolic link of its own,
  and only when it is a regular file (not a folder, a pipe or a device);
- its SHA-256, computed while it is read, and its row count equal what the results record
  (a set whose results record no hash is read, and ``itemscore verify`` says so).

``items.parquet`` written by a run's workers is a folder of Parquet parts, and the reference
names each: ``{"file": "items.parquet", "count": N, "parts": [{"file": "part-00000.parquet",
"rows": n, "sha256": "..."}, ...]}``. Every check above then holds for each part: the folder
is a real folder (not a link) holding exactly the parts named, in the order of their names;
each part is a plain file opened without following a link, with its own SHA-256 and, by its
footer, its own rows, which add up to the count — all before any row is read.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any, TypeGuard

import attrs

from ._exceptions import ResultsFormatError

__all__ = [
    "CheckedItems",
    "Declared",
    "check_parquet_items",
    "declared_items",
    "items_reference",
    "open_items_file",
    "open_part",
    "resolve_items",
    "resolve_table",
]


def items_reference(data: Any, path: Path) -> tuple[str, Mapping[str, Any], Path] | None:
    """``(file name, reference, path of the file)`` when ``data`` refers to an items file.

    Raises:
        ResultsFormatError: the reference names something other than a file beside it.
    """
    if not isinstance(data, dict) or not isinstance(data.get("items"), Mapping):
        return None
    ref = data["items"]
    name = ref.get("file")
    if not _plain_name(name):
        raise ResultsFormatError(
            f"{path}: the items file {name!r} must be a file name in the same folder."
        )
    # Beside the file the link points to, so a report set switched meanwhile is not mixed.
    return name, ref, Path(os.path.realpath(path)).parent / name


def _plain_name(name: object) -> TypeGuard[str]:
    """Whether ``name`` is a file name in a folder (no path, no ``.``/``..``, no NUL)."""
    return (
        isinstance(name, str)
        and name not in ("", ".", "..")
        and name == os.path.basename(name)
        and "\\" not in name
        and "\0" not in name
    )


def open_items_file(items_path: Path, results: Path) -> IO[bytes]:
    """Open the items file for reading: a regular file, not followed through a link.

    Raises:
        ResultsFormatError: it is missing, a link, or not a regular file.
    """
    name = items_path.name
    return _open_plain(
        os.fspath(items_path), {}, results, called=f"items file {name}",
        unreadable=f"items are in {name}, which cannot be read",
        kept="a plain file beside results.json", together="the items file",
    )  # fmt: skip


def _check_hash(
    digest: str, ref: Mapping[str, Any], name: str, results: Path, what: str = "items file"
) -> None:
    expected_hash = ref.get("sha256")
    if expected_hash is not None and digest != expected_hash:
        raise ResultsFormatError(
            f"{results}: {name} is not the {what} this results file was written with "
            "(its SHA-256 differs)."
        )


def _check_count(count: int, ref: Mapping[str, Any], name: str, results: Path) -> None:
    if ref.get("count") is not None and ref["count"] != count:
        raise ResultsFormatError(
            f"{results}: {name} holds {count} items, but the results file expects {ref['count']}."
        )


@attrs.frozen
class Declared:
    """How many items a results document says its items file holds, and where it says so."""

    #: The item count (``items.count``): the rows the items file must hold.
    count: int
    #: Whether the measurements count questions (the items are attempts at them), so that
    #: they bound the count only from below.
    attempts: bool


def declared_items(data: Mapping[str, Any], path: Path) -> Declared:
    """The number of items ``data`` declares: ``items.count``, checked against its measurements.

    Read from results.json alone, before the items file is opened. Without attempts, every
    top-level measurement counts each item once (its four counts add up to the items); with
    attempts they count questions, at most the items.

    Raises:
        ResultsFormatError: no count, a count that is not a whole number, or one that the
            measurements contradict.
    """
    count = data["items"].get("count")
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise ResultsFormatError(
            f"{path}: its items reference records no item count (`items.count` is "
            f"{count!r}), so its items file cannot be bounded before it is read. Re-create "
            "the report set with `itemscore score --out` or `itemscore rescore --out`."
        )
    measurements = data.get("measurements")
    attempts = False
    totals: list[tuple[str, int, bool]] = []
    for m in measurements if isinstance(measurements, list) else ():
        counts = m.get("counts") if isinstance(m, Mapping) else None
        if not isinstance(counts, Mapping):
            continue
        numbers = [v for v in counts.values() if isinstance(v, int) and not isinstance(v, bool)]
        extra = m.get("extra") if isinstance(m.get("extra"), Mapping) else {}
        questions = "n_questions" in extra or "n_attempts" in extra
        attempts = attempts or questions
        totals.append((str(m.get("key")), sum(numbers), questions))
    for key, total, questions in totals:
        if total > count or (total != count and not (questions or attempts)):
            raise ResultsFormatError(
                f"{path}: `items.count` ({count}) disagrees with the measurement {key!r}, "
                f"which counts {total} items: the results were altered. Re-create the report "
                "set with `itemscore score --out`, or run `itemscore verify` on an untouched "
                "copy."
            )
    return Declared(count, attempts)


def _check_rows(footer: Any, declared: Declared, name: str, results: Path) -> None:
    """The items file must hold the declared rows, by its footer: checked before any is read."""
    groups = sum(footer.row_group(i).num_rows for i in range(footer.num_row_groups))
    if footer.num_rows != declared.count or groups != declared.count:
        rows = footer.num_rows if footer.num_rows != declared.count else groups
        raise ResultsFormatError(
            f"{results}: {name} holds {rows} rows by its Parquet footer, but the results "
            f"declare {declared.count} items; it was refused before any row was read. Copy "
            "results.json together with its own items file, or score the items again."
        )


#: A file's identity when it was checked: inode, size, modification time (ns).
Stamp = tuple[int, int, int]


@attrs.frozen
class CheckedItems:
    """The Parquet items of a results document, checked, before any row is read."""

    #: The name the reference gives (``items.parquet``).
    name: str
    #: The file, or the folder of parts.
    path: Path
    #: The parts of a folder, in order; ``None`` for one file.
    parts: tuple[Any, ...] | None
    #: Each file (one, or each part), in order.
    files: tuple[Path, ...]
    #: Each file's Parquet footer, in order.
    footers: tuple[Any, ...]
    #: Each file's identity when it was checked, in order.
    stamps: tuple[Stamp, ...]
    #: The item count the results declare.
    declared: Declared

    def shown(self, index: int) -> str:
        """How messages name file ``index`` (``items.parquet/part-00001.parquet``)."""
        if self.parts is None:
            return self.name
        return f"{self.name}/{self.files[index].name}"


def _hashed_footer(
    handle: IO[bytes], ref: Mapping[str, Any], shown: str, results: Path, what: str
) -> tuple[Any, Stamp]:
    """An open items file (or part) checked against its SHA-256: its Parquet footer and stamp."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .engine._store import handle_sha256

    _check_hash(handle_sha256(handle), ref, shown, results, what)
    handle.seek(0)
    try:
        footer = pq.ParquetFile(handle, pre_buffer=False).metadata
    except (pa.ArrowException, OSError) as exc:
        raise ResultsFormatError(
            f"{results}: {shown} is not a readable Parquet file ({exc})."
        ) from None
    st = os.fstat(handle.fileno())
    return footer, (st.st_ino, st.st_size, st.st_mtime_ns)


def check_parquet_items(data: Any, path: Path) -> CheckedItems | None:
    """The items of a results document in ``items.parquet`` (a file or a folder), checked.

    ``None`` when the items are elsewhere (inline, ``items.jsonl``). Nothing but the footers
    is read: the rows are left to the caller, who reads them a row group at a time.

    Raises:
        ResultsFormatError: the file (or a part) is missing, a link, altered, not Parquet, or
            holds other rows than the results declare.
    """
    found = items_reference(data, path)
    if found is None or not found[0].endswith(".parquet"):
        return None
    name, ref, items_path = found
    declared = declared_items(data, path)
    if "parts" in ref:
        return _check_folder(name, ref, items_path, path, declared)
    with open_items_file(items_path, path) as handle:
        footer, stamp = _hashed_footer(handle, ref, name, path, "items file")
    _check_rows(footer, declared, name, path)
    return CheckedItems(name, items_path, None, (items_path,), (footer,), (stamp,), declared)


def _declared_parts(ref: Mapping[str, Any], name: str, results: Path, count: int) -> list[Any]:
    """The parts the reference names, each checked for form; in order."""
    from .engine._store import PartFile

    parts = ref.get("parts")
    if not isinstance(parts, list) or not parts or len(parts) > count + 1:
        raise ResultsFormatError(
            f"{results}: its items reference names {name} a folder of parts, but `items.parts` "
            f"is not a list of 1 to {count + 1} parts. Re-create the report set with "
            "`itemscore score --out`."
        )
    out: list[PartFile] = []
    for number, part in enumerate(parts):
        file = part.get("file") if isinstance(part, Mapping) else None
        rows = part.get("rows") if isinstance(part, Mapping) else None
        digest = part.get("sha256") if isinstance(part, Mapping) else None
        if (
            not _plain_name(file)
            or not file.endswith(".parquet")
            or file.startswith((".", "_"))
            or isinstance(rows, bool)
            or not isinstance(rows, int)
            or rows < 0
            or not isinstance(digest, str)
        ):
            raise ResultsFormatError(
                f"{results}: part {number} of its items folder {name} ({part!r}) must be "
                '{"file": "<name>.parquet", "rows": <count>, "sha256": "<hex>"}, its file a '
                "name in that folder."
            )
        if out and file <= out[-1].file:
            raise ResultsFormatError(
                f"{results}: the parts of its items folder {name} are not named in the order "
                f"of their items ({file!r} after {out[-1].file!r}); a Parquet reader of the "
                "folder reads them by name, so the names must sort as the items do."
            )
        out.append(PartFile(file, rows, digest))
    total = sum(part.rows for part in out)
    if total != count:
        raise ResultsFormatError(
            f"{results}: the parts of its items folder {name} declare {total} rows, but "
            f"`items.count` is {count}: the results were altered."
        )
    return out


def _check_folder(
    name: str, ref: Mapping[str, Any], folder: Path, results: Path, declared: Declared
) -> CheckedItems:
    """The folder form: every part checked as one file is (see the module's docstring)."""
    parts = _declared_parts(ref, name, results, declared.count)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_DIRECTORY", 0)
    try:
        fd = os.open(folder, flags)
    except OSError as exc:
        if os.path.islink(folder):
            raise ResultsFormatError(
                f"{results}: its items folder {name} is a symbolic link; itemscore reads only "
                "a real folder beside results.json. Copy the report set with its files, not "
                "with links to them."
            ) from None
        raise ResultsFormatError(
            f"{results}: its items are in the folder {name}, which cannot be read "
            f"({exc.strerror or exc}); copy results.json together with that folder."
        ) from None
    try:
        named = {part.file for part in parts}
        extra = sorted(entry for entry in os.listdir(fd) if entry not in named)
        if extra:
            raise ResultsFormatError(
                f"{results}: its items folder {name} holds {name}/{extra[0]}, which the results "
                "do not name; a Parquet reader of the folder would read it as items too. "
                "Remove it, or copy the report set again from where it was written."
            )
        files, footers, stamps = [], [], []
        for part in parts:
            shown = f"{name}/{part.file}"
            with open_part(fd, part.file, shown, results) as handle:
                footer, stamp = _hashed_footer(handle, part.to_dict(), shown, results, "part")
            stamps.append(stamp)
            _check_rows(footer, Declared(part.rows, False), shown, results)
            files.append(folder / part.file)
            footers.append(footer)
    finally:
        os.close(fd)
    return CheckedItems(
        name, folder, tuple(parts), tuple(files), tuple(footers), tuple(stamps), declared
    )


def open_part(folder: int | Path, file: str, shown: str, results: Path) -> IO[bytes]:
    """Open one part of an items folder (``folder`` open as ``fd``, or its path): a plain file.

    Raises:
        ResultsFormatError: it is missing, a link, or not a regular file.
    """
    where = {"dir_fd": folder} if isinstance(folder, int) else {}
    target = file if isinstance(folder, int) else os.path.join(folder, file)
    return _open_plain(
        target, where, results, called=f"items part {shown}",
        unreadable=f"items part {shown} cannot be read",
        kept="plain files in the items folder", together="the whole items folder",
    )  # fmt: skip


def _open_plain(
    target: str,
    where: Mapping[str, int],
    results: Path,
    *,
    called: str,
    unreadable: str,
    kept: str,
    together: str,
) -> IO[bytes]:
    """Open ``target`` (in the folder ``where`` names) if it is a plain file, not a link.

    The words of each refusal name what ``results`` says is there (``called``), what
    itemscore reads (``kept``) and what to copy with results.json (``together``).
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(target, flags, **where)
    except OSError as exc:
        if _is_link(target, where):
            raise ResultsFormatError(
                f"{results}: its {called} is a symbolic link; itemscore reads only {kept}. "
                "Copy the report set with its files, not with links to them."
            ) from None
        raise ResultsFormatError(
            f"{results}: its {unreadable} ({exc.strerror or exc}); copy results.json together "
            f"with {together}."
        ) from None
    # Asked of the descriptor, before a file object: os.fdopen refuses a folder on its own.
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ResultsFormatError(
            f"{results}: its {called} is not a plain file (a folder, a pipe or a device); "
            f"itemscore reads only {kept}."
        )
    return os.fdopen(fd, "rb")


def _is_link(target: str, where: Mapping[str, int]) -> bool:
    try:
        return stat.S_ISLNK(os.stat(target, follow_symlinks=False, **where).st_mode)
    except OSError:
        return False


def resolve_table(data: Any, path: Path) -> Any:
    """The run table of a results document whose items are in ``items.parquet``; else ``None``.

    Only the footers are read: the keys, the scores and the items stay in the file (or the
    folder of parts) until someone reads them, a column at a time.

    Raises:
        ResultsFormatError: the file is missing, altered, or not an items file.
    """
    checked = check_parquet_items(data, path)
    if checked is None:
        return None
    import pyarrow as pa

    from .engine._table import RunTable

    labels = [m.get("label") for m in (data.get("config") or {}).get("metrics") or []]
    try:
        return RunTable.from_parquet(
            checked.path,
            [label for label in labels if label],
            max_rows=checked.declared.count,
            parts=checked.parts,
        )
    except (ValueError, KeyError, pa.ArrowException) as exc:
        raise ResultsFormatError(
            f"{path}: {checked.name} does not hold this run's items ({exc})."
        ) from None


def resolve_items(data: Any, path: Path) -> Any:
    """``data`` (a results document read from ``path``) with its items inline.

    For documents that refer to ``items.jsonl``: the file must sit in the same folder, hold
    ``count`` lines and have that hash. Other documents are returned unchanged.

    Raises:
        ResultsFormatError: the items file is missing, of another length or content, or not
            valid JSON lines.
    """
    found = items_reference(data, path)
    if found is None:
        return data
    name, ref, items_path = found
    count = ref.get("count")
    limit = count if isinstance(count, int) and not isinstance(count, bool) else None
    with open_items_file(items_path, path) as handle:
        items, rows, digest, bad = _read_lines(handle, items_path, limit)
    _check_hash(digest, ref, name, path)
    if bad is not None:
        raise bad
    _check_count(rows, ref, name, path)
    return {**data, "items": items}


def _read_lines(
    handle: IO[bytes], items_path: Path, limit: int | None = None
) -> tuple[list[Any], int, str, ResultsFormatError | None]:
    """The JSON lines of an items file, how many, its SHA-256, and its first bad line's fault.

    Read line by line, hashing as it goes. Parsing stops at a bad line, hashing does not: the
    caller checks the hash first, which says more. Past ``limit`` lines (the count the results
    declare) they are counted, not parsed: the caller refuses the file, and its rows never
    reach memory. Lines end at a line feed only: JSON text may hold U+2028 or U+0085, which
    ``str.splitlines`` splits on.
    """
    digest = hashlib.sha256()
    items: list[Any] = []
    rows = 0
    bad: ResultsFormatError | None = None
    for number, line in enumerate(handle, 1):
        digest.update(line)
        if not line.strip():
            continue
        rows += 1
        if bad is not None or (limit is not None and rows > limit):
            continue
        try:
            items.append(json.loads(line))
        except (json.JSONDecodeError, UnicodeDecodeError):
            bad = _bad_line(items_path, number, line.removesuffix(b"\n"))
    return items, rows, digest.hexdigest(), bad


def _bad_line(items_path: Path, number: int, line: bytes) -> ResultsFormatError:
    """What is wrong with line ``number`` (without its line feed), at which column."""
    column, problem = None, "not valid JSON."
    try:
        json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        column = exc.colno if isinstance(exc, json.JSONDecodeError) else 1
        problem = f"not valid JSON ({exc})."
    return ResultsFormatError.at(str(items_path), number, column, problem)
