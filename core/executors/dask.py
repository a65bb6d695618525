"""``dask``: shards as tasks of a Dask cluster (the ``dask`` extra).

Pass a ``distributed.Client`` as ``client=``, or its scheduler's address (``client=
"tcp://HOST:8786"``: the run connects, and closes its connection after), to use a running
cluster; without one, a local cluster of ``workers`` processes (one thread each) is started
for the run and closed after it. An address is checked when the run is configured: its form,
and that something listens there. Tasks go through the client's ``concurrent.futures``
executor (``Client.get_executor``); each carries what it needs (its items, or the part of a
file it reads), so nothing is left on a worker that may die: a task whose worker was lost
(``KilledWorker``) is tried again by the run, and cut in two when it keeps killing its worker
(see :mod:`itemscore.engine._dispatch`). On a local cluster the run starts, Dask gives a task
up at its first lost worker; on a caller's cluster, after its own
``distributed.scheduler.allowed-failures``.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from itemscore._exceptions import ConfigError
from itemscore._settings import refused
from itemscore.display._text import printable

from ._engine import Cluster, Engine, needed

__all__ = ["CONNECT_TIMEOUT", "check_options", "open_executor"]

#: How a run names the cluster it scores on.
CLUSTER = Cluster("client", "client's cluster", "Score on a Dask cluster.")

#: Seconds to wait for a Dask scheduler to answer before the run is refused.
CONNECT_TIMEOUT = 10.0


def _import_distributed() -> Any:
    return needed("dask", "distributed", "the `distributed` package", "distributed")


def check_options(workers: int | None, client: Any) -> None:
    """Check the Dask options before anything starts; an address is tried (not connected).

    Raises:
        ConfigError: ``distributed`` is missing, ``workers`` given with a ``client``, or a
            scheduler address that is malformed or where none listens (``setting``:
            ``"client"``).
    """
    _import_distributed()
    if client is not None and workers is not None:
        raise ConfigError(
            f"`workers` ({workers!r}) does not apply with a Dask `client`: the cluster behind "
            "the client has the workers it has. Leave `workers` out, or leave `client` out to "
            "start a local cluster of that many processes."
        )
    if isinstance(client, str):
        _check_address(client)


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


def _check_address(address: str) -> None:
    """Check a scheduler address, ``[PROTOCOL://]HOST:PORT``, and that something listens there.

    For TCP-based protocols a connection is tried: a refused port fails at once, a silent
    host after :data:`CONNECT_TIMEOUT`.
    """
    try:
        _scheme, host, port = _split_address(address.strip())
    except ValueError as exc:
        raise refused(
            "client",
            f"{printable(address)!r} is not a Dask scheduler address: {exc}. Write "
            "[tcp://]HOST:PORT, e.g. tcp://127.0.0.1:8786.",
        ) from None
    if host is None or port is None:
        return
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT):
            pass
    except OSError as exc:
        raise _unreachable(address, exc.strerror or str(exc) or type(exc).__name__) from None


def _unreachable(address: str, why: str) -> ConfigError:
    return refused(
        "client",
        f"no Dask scheduler answers at {printable(address)} ({printable(why)}). Start one "
        "(`dask scheduler`, then `dask worker ADDRESS`), or check the address and that this "
        "machine can reach it.",
    )


def open_executor(workers: int | None, given: Any) -> Engine:
    """The executor of ``given``, or of a local cluster of ``workers`` processes.

    ``given`` is the caller's client (left open), or a scheduler's address: connected here,
    and the client closed after the run.
    """
    distributed = _import_distributed()
    if given is not None:
        client = given
        if isinstance(given, str):
            try:
                client = distributed.Client(given, timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError) as exc:
                raise _unreachable(given, f"{type(exc).__name__}: {exc}") from None
        count = max(1, len(client.scheduler_info().get("workers", {})))
        return Engine(
            "dask", client.get_executor(pure=False), workers=count, parallel=True,
            close=(lambda executor: client.close()) if client is not given else None,
        )  # fmt: skip
    count = workers or os.cpu_count() or 1
    cluster = distributed.LocalCluster(
        n_workers=count,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        # A free port on this machine only: the default, 8787, is often taken.
        dashboard_address="127.0.0.1:0",
        # The run tries a lost task again itself, and cuts one that keeps killing its worker
        # in two to find the item that does: Dask trying it on three more workers first
        # would cost three more deaths (a restart each) for every cut.
        scheduler_kwargs={"allowed_failures": 0},
    )
    own = distributed.Client(cluster)

    def close(executor: Any) -> None:
        own.close()
        cluster.close()

    return Engine("dask", own.get_executor(pure=False), workers=count, parallel=True, close=close)
