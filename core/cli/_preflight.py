"""Checks of a request before any work, beyond the library's: each refusal says the fix.

- the output folder (``--out``): nothing the user made may be replaced, none of the run's
  inputs either (:func:`check_out`);
- ``--report`` without ``--out`` (:func:`check_reports_have_out`);
- a data file given where a results.json belongs (:func:`check_results_file`);
- ``--dask ADDRESS``: a well-formed address whose scheduler answers (:func:`check_dask`,
  :func:`connect_dask`).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from itemscore._exceptions import ConfigError, InputError, ItemscoreError
from itemscore.display._text import printable

from ._request import RunRequest, located

__all__ = [
    "DASK_CONNECT_TIMEOUT",
    "check_dask",
    "check_out",
    "check_reports_have_out",
    "check_results_file",
    "connect_dask",
    "locate_mapping",
]

#: Seconds to wait for a Dask scheduler to answer before the run is refused.
DASK_CONNECT_TIMEOUT = 10.0

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


def _split_address(address: str) -> tuple[str, str | None, int | None]:
    """``(scheme, host, port)`` of a scheduler address; host and port ``None`` where unused.

    Raises:
        ValueError: a malformed address, with the reason.
    """
    scheme, sep, rest = address.partition("://")
    if not sep:
        scheme, rest = "tcp", address
    scheme = scheme.lower()
    if scheme in ("inproc", "ucx"):
        return scheme, None, None
    if scheme not in ("tcp", "tls", "ws", "wss"):
        raise ValueError(f"the protocol {scheme!r} is not one of tcp, tls, ws, wss, ucx, inproc")
    rest = rest.rstrip("/")
    if rest.startswith("["):  # [::1]:8786
        host, close, port_text = rest[1:].partition("]")
        if not close or not port_text.startswith(":"):
            raise ValueError("an IPv6 address is written [HOST]:PORT")
        port_text = port_text[1:]
    else:
        host, colon, port_text = rest.rpartition(":")
        if not colon:
            raise ValueError("the port is missing (HOST:PORT, e.g. 127.0.0.1:8786)")
    if not host:
        raise ValueError("the host is missing (HOST:PORT, e.g. 127.0.0.1:8786)")
    if not port_text.isdecimal() or not 0 < int(port_text) < 65536:
        raise ValueError(f"the port {port_text!r} is not a number from 1 to 65535")
    return scheme, host, int(port_text)


def check_dask(address: str, place: str) -> None:
    """Check a scheduler address and that something listens there, before any work.

    The address must be ``[PROTOCOL://]HOST:PORT``; for TCP-based protocols a connection is
    tried (a refused port fails at once, a silent host after :data:`DASK_CONNECT_TIMEOUT`).

    Raises:
        ConfigError: a malformed address or an unreachable scheduler, placed at ``place``.
    """
    try:
        _scheme, host, port = _split_address(address.strip())
    except ValueError as exc:
        raise ConfigError(
            f"{place}: {printable(address)!r} is not a Dask scheduler address: {exc}. Write "
            "[tcp://]HOST:PORT, e.g. --dask tcp://127.0.0.1:8786."
        ) from None
    if host is None or port is None:
        return
    try:
        with socket.create_connection((host, port), timeout=DASK_CONNECT_TIMEOUT):
            pass
    except OSError as exc:
        raise _unreachable(address, place, exc.strerror or str(exc) or type(exc).__name__) from None


def _unreachable(address: str, place: str, why: str) -> ConfigError:
    return ConfigError(
        f"{place}: no Dask scheduler answers at {printable(address)} ({printable(why)}). Start "
        "one (`dask scheduler`, then `dask worker ADDRESS`), or check the address and that "
        "this machine can reach it."
    )


def connect_dask(address: str, place: str) -> Any:
    """A ``distributed.Client`` of the scheduler at ``address``, connected within a timeout.

    Raises:
        ConfigError: Dask is not installed, or the scheduler does not answer within
            :data:`DASK_CONNECT_TIMEOUT` seconds.
    """
    try:
        from distributed import Client
    except ImportError:
        from itemscore._extras import install_hint

        raise ConfigError(f"--dask needs Dask: {install_hint('distributed')}.") from None
    try:
        return Client(address, timeout=DASK_CONNECT_TIMEOUT)  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError) as exc:
        raise _unreachable(address, place, f"{type(exc).__name__}: {exc}") from None
