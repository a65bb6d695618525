"""The user's defaults file: settings people repeat, read before every ``score`` and ``run``.

``$XDG_CONFIG_HOME/itemscore/config.yaml`` (``~/.config/itemscore/config.yaml`` when the
variable is unset) holds a few settings in the run configuration's own syntax, e.g.::

    confidence: 0.9
    seed: 7
    workers: auto
    reports: [json, csv, md]

They are defaults: a run configuration file wins over them, and the command line over both.
Every key is checked (an unknown one is an error with a did-you-mean, naming the file, line and
column); ``--no-user-config`` or ``ITEMSCORE_NO_USER_CONFIG=1`` ignores the file.
"""

from __future__ import annotations

import os
from pathlib import Path

from itemscore._exceptions import ConfigError

from ._config import CONFIG_KEYS, _Reader
from ._request import RunRequest

__all__ = ["IGNORE_ENV", "USER_KEYS", "apply_user_defaults", "user_config_path"]

#: The settings the defaults file may hold: those of a run configuration that say how to run,
#: from ``ci_method`` on, but ``out`` (where the data, metrics and reports go is each run's own).
USER_KEYS: tuple[str, ...] = tuple(
    key for key in CONFIG_KEYS[CONFIG_KEYS.index("ci_method") :] if key != "out"
)
#: Set to 1 (or true, yes) to ignore the defaults file.
IGNORE_ENV = "ITEMSCORE_NO_USER_CONFIG"


def user_config_path() -> Path:
    """Where the defaults file is looked for (it need not exist)."""
    base = os.environ.get("XDG_CONFIG_HOME") or ""
    root = Path(base) if base.strip() else Path.home() / ".config"
    return root / "itemscore" / "config.yaml"


def ignored() -> bool:
    """Whether ``ITEMSCORE_NO_USER_CONFIG`` says to ignore the defaults file."""
    return os.environ.get(IGNORE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def _read(path: Path) -> RunRequest:
    if not path.read_bytes().strip():
        return RunRequest()
    try:
        return _Reader(path, keys=USER_KEYS).read()
    except ConfigError as exc:
        raise ConfigError(
            f"{exc} (This is your defaults file; fix it, or ignore it with --no-user-config "
            f"or {IGNORE_ENV}=1.)"
        ) from None


def apply_user_defaults(request: RunRequest, *, skip: bool = False) -> None:
    """Fill the settings ``request`` leaves unset from the defaults file.

    A setting a configuration file gave (it has a place in ``setting_where``) is kept; the
    command line's options are applied after this and win. Each default taken records its
    place (``config.yaml:2:13``) as a configuration file's setting does.

    Raises:
        ConfigError: the file holds an unknown key or a bad value.
    """
    path = user_config_path()
    if skip or ignored() or not path.is_file():
        return
    defaults = _read(path)
    for key in USER_KEYS:
        where = defaults.setting_where.get(key)
        if where is None or key in request.setting_where:
            continue
        if key in defaults.clusters:  # --dask, --ray: a cluster named by address
            request.clusters[key] = defaults.clusters[key]
        else:
            setattr(request, key, getattr(defaults, key))
        request.setting_where[key] = where
        request.user_defaults.add(key)


def describe() -> str:
    """One paragraph for ``--help``: where defaults come from."""
    path = user_config_path()
    state = "found" if path.is_file() else "none there"
    off = " (ignored: ITEMSCORE_NO_USER_CONFIG is set)" if ignored() else ""
    return (
        f"Defaults: {path} ({state}){off} may set {', '.join(USER_KEYS)}; a configuration "
        f"file wins over it, the command line over both. --no-user-config or {IGNORE_ENV}=1 "
        "ignores it; --verbose says which defaults were taken."
    )
