"""Where a data file's bytes come from: the local file system, or a URL through fsspec.

A *URL* is ``SCHEME://...`` with a scheme of two characters or more (``s3://``, ``gs://``,
``memory://``, ``file://``...; a one-letter ``C:`` is a Windows drive, not a scheme). A URL is
read through `fsspec <https://filesystem-spec.readthedocs.io>`_, imported only when one is
given; its backend (``s3fs`` for ``s3://``, ``gcsfs`` for ``gs://``...) takes its credentials
from its own usual configuration (environment variables, configuration files). Anything else
is a local path, opened with :func:`open`.

Everything here takes the URL or path as the user gave it (a string that can be pickled to a
worker, which opens it itself).
"""

from __future__ import annotations

import errno
import glob
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, cast

from .._exceptions import ConfigError, describe_exception

__all__ = ["exists", "is_url", "listing", "local_path", "open_binary", "size", "stamp"]

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+)://")

#: The package that gives fsspec a protocol, for the protocols people read data from.
_BACKENDS = {
    "s3": "s3fs",
    "s3a": "s3fs",
    "gs": "gcsfs",
    "gcs": "gcsfs",
    "az": "adlfs",
    "abfs": "adlfs",
    "abfss": "adlfs",
    "adl": "adlfs",
    "hf": "huggingface_hub",
    "http": "aiohttp",
    "https": "aiohttp",
    "sftp": "paramiko",
    "ssh": "paramiko",
}


def is_url(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a URL (``SCHEME://...``), read through fsspec."""
    return isinstance(path, str) and _URL.match(path) is not None


def _protocol(url: str) -> str:
    match = _URL.match(url)
    return match.group(1).lower() if match else ""


def _filesystem(url: str) -> tuple[Any, str]:
    """``(fsspec file system, path within it)`` of ``url``.

    A backend may connect, or need settings, as soon as it is made (``ftp://`` connects;
    ``reference://`` needs a reference file no URL names): its error, which names neither the
    URL nor the way out, becomes one that does.

    Raises:
        ConfigError: fsspec is not installed, has no backend for the URL's protocol, or the
            backend cannot be made for this URL.
        FileNotFoundError: the backend found nothing at the URL.
    """
    protocol = _protocol(url)
    backend = _BACKENDS.get(protocol)
    try:
        import fsspec
    except ImportError:
        from itemscore._extras import install_hint

        raise ConfigError(
            f"{url} is a URL, which itemscore reads through fsspec, and fsspec is not "
            "installed. Install it with the backend of the protocol "
            f"{protocol}://: {install_hint('fsspec', *([backend] if backend else []))}"
        ) from None
    try:
        return cast("tuple[Any, str]", fsspec.core.url_to_fs(url))
    except ImportError as exc:
        from itemscore._extras import install_hint

        command = install_hint(backend) if backend else "pip install the package named above"
        raise ConfigError(
            f"Reading {url} needs fsspec's backend of the protocol {protocol}://, which is "
            f"not installed ({exc}). Install it: {command}"
        ) from None
    except ValueError as exc:
        if "protocol" not in str(exc).lower():
            raise _unreachable(url, exc) from exc
        raise ConfigError(
            f"{url}: fsspec knows no file system for the protocol {protocol}:// ({exc}). "
            "Check the URL, or install the package that registers that protocol with fsspec."
        ) from None
    except FileNotFoundError:
        raise _missing(url) from None
    except TypeError as exc:  # the backend's constructor wants arguments a URL cannot give
        raise ConfigError(
            f"{url}: fsspec's {protocol}:// file system cannot be opened from a URL alone "
            f"({describe_exception(exc, one_line=True).rstrip('.')}). Name the data by a URL "
            "whose backend needs nothing more (file://, s3://, gs://, https://...), or copy "
            "it to a local file and score that."
        ) from exc
    except Exception as exc:  # a backend's own types: a refused connection, a bad host...
        raise _unreachable(url, exc) from exc


#: Where a backend looks for credentials, for the protocols whose backends need them.
_CREDENTIALS = {
    "s3": "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or ~/.aws/credentials",
    "gs": "GOOGLE_APPLICATION_CREDENTIALS, or `gcloud auth application-default login`",
    "az": "AZURE_STORAGE_ACCOUNT_NAME with AZURE_STORAGE_ACCOUNT_KEY, or `az login`",
    "hf": "HF_TOKEN, or `huggingface-cli login`",
}
_CREDENTIALS.update(s3a=_CREDENTIALS["s3"], gcs=_CREDENTIALS["gs"])
_CREDENTIALS.update(dict.fromkeys(("abfs", "abfss", "adl"), _CREDENTIALS["az"]))


def _missing(url: str) -> FileNotFoundError:
    return FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), url)


@contextmanager
def _backend(url: str) -> Iterator[None]:
    """Turn a backend's failure to reach ``url`` into a sentence that names it and the way out.

    A backend raises its own types (botocore's ``NoCredentialsError``, a ``PermissionError``
    for a denied bucket, a client error for a network failure); none names the URL. A missing
    file stays a :class:`FileNotFoundError`, so it reads as a missing local file does.
    """
    try:
        yield
    except (FileNotFoundError, ConfigError):
        raise
    except Exception as exc:
        raise _unreachable(url, exc) from exc


def _unreachable(url: str, exc: Exception) -> ConfigError:
    """The error for a backend that failed to reach ``url``: the URL, its error, the way out."""
    protocol = _protocol(url)
    where = _CREDENTIALS.get(protocol)
    hint = (
        f" Its backend takes credentials from {where}; check that they are set and "
        "allow reading this URL."
        if where
        else " Check the URL (its host, port and path), that its server is up and reachable "
        "from here, and the access the backend is given; or download the file and score the "
        "local copy."
    )
    return ConfigError(
        f"{url} could not be read through fsspec's {protocol}:// backend: "
        f"{describe_exception(exc, one_line=True).rstrip('.')}.{hint}"
    )


def open_binary(path: str) -> BinaryIO:
    """``path`` opened for reading bytes, seekable (the caller closes it).

    Raises:
        ConfigError: a URL that fsspec cannot read (see :func:`_filesystem`).
        FileNotFoundError: no such file.
        OSError: the file cannot be read.
    """
    if not is_url(path):
        return open(path, "rb")
    return cast("BinaryIO", _remote(path, "open", "rb"))


def size(path: str) -> int:
    """The size of the file ``path`` names, in bytes.

    Raises:
        FileNotFoundError: no such file.
    """
    if not is_url(path):
        return os.path.getsize(path)
    return int(_remote(path, "size"))


def _remote(url: str, method: str, *args: Any) -> Any:
    """``method`` of ``url``'s file system called on its path; a missing file named by ``url``."""
    fs, inner = _filesystem(url)
    try:
        with _backend(url):
            return getattr(fs, method)(inner, *args)
    except FileNotFoundError:
        raise _missing(url) from None


def stamp(path: str) -> tuple[int, int | None]:
    """``(size in bytes, modification time in ns)`` of the file ``path`` names, to pin it.

    A URL has no modification time every backend gives alike: ``None`` stands for it, and
    its size (with the hashes of what is read) must do.

    Raises:
        FileNotFoundError: no such file.
        OSError: the file cannot be looked at.
    """
    if not is_url(path):
        found = os.stat(path)
        return found.st_size, found.st_mtime_ns
    return size(path), None


def exists(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a file or folder (for a URL, an object or a prefix of some)."""
    if not is_url(path):
        return os.path.exists(path)
    text = os.fspath(path)
    fs, inner = _filesystem(text)
    with _backend(text):
        return bool(fs.exists(inner))


def local_path(path: str | os.PathLike[str]) -> Path | None:
    """The local file a path or a ``file://`` URL names; ``None`` for other URLs."""
    if not is_url(path):
        return Path(path)
    text = os.fspath(path)
    if _protocol(text) != "file":
        return None
    return Path(text[len("file://") :])


def listing(text: str) -> tuple[str, list[str]] | None:
    """``(kind, files)`` of a folder (recursively) or a glob, sorted; ``None``: one file.

    ``kind`` is ``"folder"`` or ``"pattern"``, as messages name it. Only files are listed,
    not folders; a URL's files are URLs again.

    Raises:
        ConfigError: a URL that fsspec cannot read.
        FileNotFoundError: a URL that names nothing (no object, no prefix, no pattern).
    """
    if not is_url(text):
        if os.path.isdir(text):
            return "folder", sorted(str(p) for p in Path(text).rglob("*") if p.is_file())
        if not os.path.exists(text) and glob.has_magic(text):
            found = glob.glob(text, recursive=True)
            return "pattern", sorted(p for p in found if os.path.isfile(p))
        return None
    fs, inner = _filesystem(text)
    with _backend(text):
        if fs.isdir(inner):
            kind, files = "folder", list(fs.find(inner))
        elif fs.exists(inner):
            return None
        elif glob.has_magic(inner):
            found = fs.glob(inner, detail=True)
            kind, files = "pattern", [p for p, i in found.items() if i.get("type") == "file"]
        else:
            raise _missing(text)
    return kind, sorted(fs.unstrip_protocol(p) for p in files)
