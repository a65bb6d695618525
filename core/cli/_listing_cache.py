"""The listing cache: ``itemscore metrics --json`` and ``plugins --json`` without loading plugins.

Listing imports every metric, suite and hook plugin, because a metric's id and description are
class attributes; with attrs, typing and click that is about ten times ``python -c pass``. So
:func:`~itemscore.cli.main` keeps the last output of each JSON listing, with what it was
computed from, and prints it again while none of that has changed. The answer is the same
bytes and exit code click gives; anything unusual goes through click.

What the output is computed from (the key), all compared on every use:

- the command, the Python version and executable, ``sys.flags``, ``-W`` and ``-X`` options,
  ``sys.path``, the working directory when ``sys.path`` holds a relative entry, and the
  environment variables named ``ITEMSCORE_*``, ``PYTHON*``, ``LC_*``, ``LANG`` and ``LANGUAGE``;
- each ``sys.path`` entry, and in it each ``*.dist-info``/``*.egg-info`` folder with its
  ``entry_points.txt`` and ``METADATA``/``PKG-INFO`` (inode, size, mtime and ctime; a zip file
  on ``sys.path`` by its own stat): a distribution installed, removed or edited changes it;
- every module file the listing imported (plugins and what they import, itemscore, the
  standard library), and each folder holding one: an edited plugin, or a new file that could
  shadow a module, changes it.

It is never written when anything could make it wrong:

- a hook plugin implements ``itemscore_add_metrics`` (code that decides at run time which
  metrics exist);
- the command wrote more than the listing, in one write, on stdout, or anything on stderr (a
  plugin printing or warning as it loads), or failed;
- an importer other than Python's path finder can find distributions;
- a file it depends on is younger than :data:`SETTLE_NS` (file times are coarse: an edit right
  after another may keep the same stat), or changed while the command ran;
- itemscore was imported before :func:`~itemscore.cli.main` ran (a process that may hold
  in-process registrations).

Only what loading runs, not what it reads, is beyond the key: a plugin whose metric ids or
descriptions depend on other files or environment variables than the above.

The cache is one file per command, Python executable and one of :data:`SLOTS` slots picked by
the environment variables and ``sys.path``, in ``$XDG_CACHE_HOME/itemscore`` (else
``~/.cache/itemscore``), written atomically; a file that fails its checksum or cannot be read is
ignored, and a failure to write is silent. ``ITEMSCORE_NO_CACHE=1`` switches it off.

This module imports only what Python has loaded at start-up anyway (and ``binascii``), and
``itemscore._distributions``.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, NoReturn

__all__ = ["NO_CACHE_ENV", "SETTLE_NS", "Recorder", "answer", "cache_file", "serve"]

#: Set to ``1`` to list through click every time, neither reading nor writing the cache.
NO_CACHE_ENV = "ITEMSCORE_NO_CACHE"
#: Files younger than this (ns) at the start of the command keep its output out of the cache.
SETTLE_NS = 2_000_000_000
#: How many set-ups (environment variables and sys.path) of one interpreter keep a file each.
SLOTS = 32
#: The first field of every key: a new layout or rule gets a new number.
FORMAT = "itemscore-listing-cache 1"
#: Environment variables in the key: by prefix, and by name.
ENV_PREFIXES = ("ITEMSCORE_", "PYTHON", "LC_")
ENV_NAMES = ("LANG", "LANGUAGE")
#: Modules whose presence means this process may hold in-process registrations or state.
_STATEFUL = ("itemscore._registry", "itemscore._plugins", "itemscore._entrypoints")


def cache_file(args: Sequence[str], environ: Sequence[tuple[str, str]] = ()) -> str | None:
    """The cache file for the command ``args``, or ``None`` when there is no cache folder.

    One file per command and interpreter and, so that a few set-ups used in turn do not evict
    each other, per one of :data:`SLOTS` slots picked by ``environ`` and ``sys.path``.
    """
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):
        return None
    import binascii

    interpreter = binascii.crc32(os.fsencode(sys.executable))
    slot = binascii.crc32(repr((environ, sys.path)).encode("utf-8", "surrogateescape")) % SLOTS
    command = "-".join(a.strip("-") for a in args)
    return os.path.join(base, "itemscore", f"{command}-{interpreter:08x}-{slot}")


class _Stats:
    """Stat strings of paths, remembering the newest modification time seen."""

    def __init__(self) -> None:
        self.newest = 0

    def __call__(self, path: str) -> str:
        try:
            st = os.stat(path)
        except OSError:
            return "-"
        self.newest = max(self.newest, st.st_mtime_ns)
        return f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def _variables() -> list[tuple[str, str]]:
    """The environment variables in the key."""
    return sorted(
        (name, value)
        for name, value in os.environ.items()
        if name.startswith(ENV_PREFIXES) or name in ENV_NAMES
    )


def _environment(args: Sequence[str], stat: _Stats) -> str:
    """The key's first part: the command, the interpreter, and the distributions on sys.path."""
    environ = _variables()
    parts: list[object] = [FORMAT, list(args), sys.version, sys.executable, sys.flags]
    parts += [sys.warnoptions, sys._xoptions, environ, sys.path]
    if not all(os.path.isabs(entry) for entry in sys.path):
        parts.append(os.getcwd())
    for entry in sys.path:
        folder = entry or "."
        parts += [folder, stat(folder)]
        infos = []
        if folder.lower().endswith(".egg"):
            infos.append(os.path.join(folder, "EGG-INFO"))
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            names = []
        for name in names:
            if name.lower().endswith((".dist-info", ".egg-info")):
                infos.append(os.path.join(folder, name))
        for info in infos:
            parts += [info, stat(info)]
            for member in ("entry_points.txt", "METADATA", "PKG-INFO"):
                parts.append(stat(os.path.join(info, member)))
    return repr(parts)


def _eligible() -> bool:
    """Whether this process may use the cache: fresh, standard importers, UTF-8 streams."""
    if os.environ.get(NO_CACHE_ENV, "").strip() not in ("", "0"):
        return False
    if any(name in sys.modules for name in _STATEFUL):
        return False
    from .._distributions import Unusual, check_finders

    try:
        check_finders()
    except Unusual:
        return False
    for stream in (sys.stdout, sys.stderr):
        encoding = str(getattr(stream, "encoding", None) or "").lower().replace("_", "-")
        if stream is None or encoding not in ("utf-8", "utf8"):
            return False
    return True


def _read(path: str, key: str) -> str | None:
    """The output stored in ``path`` when its key is ``key`` and its files are unchanged."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    import binascii

    body, _, checksum = data.rpartition(b"\0")
    if checksum != b"%08x" % binascii.crc32(body):
        return None
    fields = body.decode("utf-8", "surrogateescape").split("\0")
    if len(fields) < 2 or len(fields) % 2 or fields[0] != key:
        return None
    stat = _Stats()
    for index in range(1, len(fields) - 1, 2):
        if stat(fields[index]) != fields[index + 1]:
            return None
    return fields[-1]


class _PacifyFlush:
    """``sys.stdout`` after a broken pipe: flushing at exit is silent (as click does it)."""

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped

    def flush(self) -> None:
        import contextlib

        with contextlib.suppress(BrokenPipeError):
            self.wrapped.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)


def answer(text: str) -> NoReturn:
    """Print ``text`` as click would, and exit with click's code (also after an interrupt)."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        sys.stdout = _PacifyFlush(sys.stdout)
        sys.stderr = _PacifyFlush(sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:  # pragma: no cover - as click reports an interrupt
        sys.stderr.write("\nAborted!\n")
        sys.exit(1)
    except Exception as exc:  # noqa: BLE001 - reported as click's path reports it
        from ._app import report_unexpected

        report_unexpected(exc)
    sys.exit(0)


def serve(args: Sequence[str]) -> Recorder | None:
    """Answer the listing ``args`` from the cache and exit; else a recorder to fill the cache.

    Returns:
        ``None`` when the cache is not to be used; otherwise a :class:`Recorder`, already
        recording stdout and stderr, for :func:`itemscore.cli._app.run` to store on success.
    """
    try:
        import time

        start = time.time_ns()
        if not _eligible() or (path := cache_file(args, _variables())) is None:
            return None
        stat = _Stats()
        key = _environment(args, stat)
        text = _read(path, key)
    except Exception:  # noqa: BLE001 - the cache never breaks a command: click lists instead
        return None
    if text is not None:
        answer(text)
    return Recorder(args, path, key, start - SETTLE_NS if stat.newest < start - SETTLE_NS else 0)


class _Tee:
    """A text stream that writes through and remembers what was written."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        count: int = self.stream.write(text)
        self.parts.append(text)
        return count

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    @property
    def buffer(self) -> Any:
        self.parts.append("\0")  # bytes may go around the record: never store
        return self.stream.buffer

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


class Recorder:
    """Records a listing's stdout and stderr, and stores the output when nothing can go stale."""

    def __init__(self, args: Sequence[str], path: str, key: str, settled_before: int) -> None:
        self.args = list(args)
        self.path = path
        self.key = key
        #: Files modified at or after this time (ns) keep the output out; 0: never store.
        self.settled_before = settled_before
        self.out = _Tee(sys.stdout)
        self.err = _Tee(sys.stderr)
        sys.stdout = self.out
        sys.stderr = self.err

    def release(self) -> None:
        """Give the streams back."""
        if sys.stdout is self.out:
            sys.stdout = self.out.stream
        if sys.stderr is self.err:
            sys.stderr = self.err.stream

    def store(self) -> None:
        """Write the recorded output to the cache, when it is safe to; never raises."""
        import contextlib

        with contextlib.suppress(Exception):  # a cache that cannot be written is no cache
            self._store()

    def _store(self) -> None:
        written = [part for part in self.out.parts if part]
        if len(written) != 1 or "\0" in written[0] or "".join(self.err.parts):
            return  # the listing is one write: anything more came from a plugin
        output = written[0]
        if not self.settled_before:
            return
        if _adds_metrics_at_run_time():
            return
        stat = _Stats()
        if _environment(self.args, stat) != self.key:
            return
        fields = [self.key]
        for path in _imported_files():
            fields += [path, stat(path)]
        if stat.newest >= self.settled_before or any("\0" in f for f in fields):
            return
        fields.append(output)
        import binascii

        body = "\0".join(fields).encode("utf-8", "surrogateescape")
        data = body + b"\0" + b"%08x" % binascii.crc32(body)
        temporary = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            with open(temporary, "wb") as handle:
                handle.write(data)
            os.replace(temporary, self.path)
        except OSError:
            import contextlib

            with contextlib.suppress(OSError):
                os.unlink(temporary)


def _adds_metrics_at_run_time() -> bool:
    """Whether a loaded hook plugin implements ``itemscore_add_metrics``."""
    plugins = sys.modules.get("itemscore._plugins")
    manager = getattr(plugins, "_PM", None)
    return manager is not None and bool(manager.hook.itemscore_add_metrics.get_hookimpls())


def _imported_files() -> list[str]:
    """Every imported module's file, each folder holding one, and every package folder."""
    paths: set[str] = set()
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str):
            paths.add(file)
            paths.add(os.path.dirname(file) or ".")
        for folder in getattr(module, "__path__", None) or ():
            if isinstance(folder, str):
                paths.add(folder)
    return sorted(paths)
