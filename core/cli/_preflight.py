"""Checks of a request before any work, beyond the library's: each refusal says the fix.

- the output folder (``--out``): nothing the user made may be replaced, none of the run's
  inputs either (:func:`check_out`);
- ``--report`` without ``--out`` (:func:`check_reports_have_out`);
- a data file given where a results.json belongs (:func:`check_results_file`).

A ``--dask`` address is checked by the library's Dask executor, as ``address=`` is.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from itemscore._exceptions import ConfigError, InputError, ItemscoreError
from itemscore.display._text import printable

from ._request import RunRequest, located

__all__ = [
    "check_out",
    "check_reports_have_out",
    "check_results_file",
    "locate_mapping",
]

_DATA_SUFFIXES = {
    ".jsonl": "JSON lines",
    ".ndjson": "JSON lines",
    ".csv": "CSV",
    ".tsv": "TSV",
    ".tab": "TSV",
    ".parquet": "Parquet",
    ".pq": "Parquet",
    ".eval": "an inspect_ai log",
}


def _out_place(request: RunRequest) -> str:
    assert request.out is not None
    where = request.setting_where.get("out")
    return where if where is not None else f"--out {printable(os.fspath(request.out))}"


def check_out(request: RunRequest, names: Sequence[str], *, own: Sequence[Path] = ()) -> None:
    """Check the request's output folder for a set of ``names``; nothing is written.

    The data file and the configuration file may not be replaced by the set nor lie in its
    ``.itemscore``; ``own`` (``rescore``'s results.json) may be reports of the set replaced.

    Raises:
        ConfigError: see :func:`itemscore.reports.check_out_dir`, placed at ``--out`` or the
            YAML ``out:`` key.
        FolderBusyError: another process is writing into the folder.
    """
    from itemscore.inputs._fs import local_path
    from itemscore.reports import check_out_dir

    if request.out is None:
        return
    inputs: list[tuple[str, Path]] = []
    for data in request.data_files or ([request.data] if request.data is not None else []):
        local = local_path(data)
        if local is not None:  # a remote object cannot be replaced by a local folder
            inputs.append(("the data file", local))
    if request.config is not None:
        inputs.append(("the configuration file", request.config))
    try:
        check_out_dir(request.out, names, inputs=inputs, own_inputs=own)
    except ConfigError as exc:
        raise located(exc, _out_place(request)) from exc


def check_reports_have_out(request: RunRequest) -> None:
    """``--report`` (or ``reports:``) writes files only into an output folder: ask for one.

    Raises:
        ConfigError: report formats are named but no output folder is.
    """
    if request.reports is None or request.out is not None:
        return
    where = request.setting_where.get("reports")
    named = ", ".join(request.reports)
    asked = (
        f"{where}: `reports: [{named}]`"
        if where
        else "--report " + " --report ".join(request.reports)
    )
    raise ConfigError(
        f"{printable(asked)} names reports to write, but no output folder is given, so none "
        "would be written. Add --out DIR (or `out:` in the configuration), or leave the "
        "report formats out."
    )


def locate_mapping(exc: InputError, request: RunRequest) -> InputError:
    """An input error about a mapped column, placed where the mapping was written.

    The readers mark such errors with ``setting = "columns.<role>"``; the place is the YAML
    key of ``columns:`` or the ``--map`` option. Any other error is returned unchanged.
    """
    setting = exc.setting or ""
    if not setting.startswith("columns."):
        return exc
    role = setting.removeprefix("columns.")
    column = request.columns.get(role)
    if column is None:
        return exc
    where = request.setting_where.get(setting)
    if where is None or where.startswith("--map"):
        place = f"--map {role}={column}"
    else:
        place = f"{where} (`columns: {role}: {column}`)"
    return located(exc, printable(place))


def _data_kind(path: Path) -> str | None:
    """What kind of data file ``path`` looks like, or ``None`` when it looks like no data file."""
    kind = _DATA_SUFFIXES.get(path.suffix.lower())
    if kind is not None:
        return kind
    try:
        with open(path, "rb") as handle:
            head = handle.read(1 << 16)
    except OSError:
        return None
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"["):
        return "JSON (a list of rows)"
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) >= 2 and lines[0].startswith(b"{") and lines[1].startswith(b"{"):
        return "JSON lines"
    return None


def check_results_file(path: Path, command: str, exc: ItemscoreError) -> ItemscoreError:
    """The error for ``command`` given ``path`` that did not load as results (``exc``).

    A data file (by its name or its first lines) gets a message saying so and what to run
    instead; a report set's items file points at the results.json beside it.
    """
    name = printable(os.fspath(path))
    sibling = path.with_name("results.json")
    if path.name != "results.json" and sibling.is_file():
        return type(exc)(
            f"{name} is not an itemscore results file; the results.json beside it is. Run "
            f"`itemscore {command} {printable(os.fspath(sibling))}`."
        )
    kind = _data_kind(path)
    if kind is None:
        return exc
    if command == "verify":
        instead = (
            "to check that it is the file some results were computed from, run `itemscore "
            f"verify DIR/results.json --data {name}`"
        )
    else:
        instead = f"to score it, run `itemscore score {name} -m METRIC --out DIR`"
    return type(exc)(
        f"{name} looks like a data file ({kind}), not an itemscore results file: `itemscore "
        f"{command}` takes the results.json that `itemscore score ... --out DIR` writes; "
        f"{instead}."
    )
