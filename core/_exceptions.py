"""Every exception itemscore raises on purpose, and the one way to describe any exception.

The tree::

    ItemscoreError
     ├── ConfigError (ValueError)            a run, metric or option is configured wrongly
     │    ├── UnknownMetricError (LookupError)   no installed metric has that name
     │    ├── UnknownSuiteError (LookupError)    no installed suite has that name
     │    ├── OptionError                        an unknown option, or a value of the wrong type
     │    └── MetricMismatchError                two runs give one label to different metrics
     ├── MetricCollisionError                two sources claim one metric id
     ├── PluginLoadError (ImportError)       a plugin's entry point cannot be loaded
     │    └── NotAMetricError (TypeError)        what was given as a metric is no Metric class
     └── InputError (ValueError)             the items or a data file are malformed
          └── ResultsFormatError                 a saved results file cannot be read

Each subclasses the builtin exception a caller would already catch, so ``except ValueError``
keeps working around itemscore calls. The exceptions carry what their message says as
attributes (``OptionError.option``, ``InputError.line``...), so that callers never parse the
text: the command line finds the line of a bad option in a YAML file from ``option``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

__all__ = [
    "ConfigError",
    "InputError",
    "ItemscoreError",
    "MetricCollisionError",
    "MetricMismatchError",
    "NotAMetricError",
    "OptionError",
    "PluginLoadError",
    "ResultsFormatError",
    "UnknownMetricError",
    "UnknownSuiteError",
    "describe_exception",
]


class ItemscoreError(Exception):
    """Root of every exception itemscore raises on purpose.

    An error about one entry of a run's configuration says which: ``setting`` names the list
    (``"metrics"``, ``"extra_metrics"``) or setting (``"confidence"``), ``index`` the entry.
    """

    #: The setting (or list of metrics) at fault, when the error is about one.
    setting: str | None = None
    #: The 0-based position of the entry at fault in that list.
    index: int | None = None

    def at_entry(self, setting: str, index: int | None = None) -> None:
        """Record which entry of the configuration is at fault (the first caller to say wins)."""
        if self.setting is None:
            self.setting = setting
            self.index = index


class ConfigError(ItemscoreError, ValueError):
    """Raised when a run is configured wrongly, before any item is scored.

    Examples: two metrics with one label, a bad confidence level, duplicate item ids.
    """


class UnknownMetricError(ConfigError, LookupError):
    """Raised when a metric is asked for by a name no installed metric has."""

    def __init__(self, message: str, *, name: str | None = None) -> None:
        super().__init__(message)
        #: The name asked for.
        self.name = name


class UnknownSuiteError(ConfigError, LookupError):
    """Raised when a suite is asked for by a name no installed suite has."""

    def __init__(self, message: str, *, name: str | None = None) -> None:
        super().__init__(message)
        #: The name asked for.
        self.name = name


class OptionError(ConfigError):
    """Raised when a metric gets an unknown option or a value it does not accept."""

    def __init__(
        self,
        message: str,
        *,
        metric_id: str | None = None,
        option: str | None = None,
        allowed: Sequence[object] | None = None,
    ) -> None:
        super().__init__(message)
        #: The metric whose option is at fault (``None`` when not known where raised).
        self.metric_id = metric_id
        #: The option at fault (``None`` when the options as a whole are refused).
        self.option = option
        #: The option names or values that would have been accepted, when there is a list.
        self.allowed: tuple[object, ...] | None = None if allowed is None else tuple(allowed)


class MetricMismatchError(ConfigError):
    """Raised when two runs compared give one label to different metrics or options.

    Their numbers under that label measure different things, so pairing them (``compare``,
    ``gate``) would be meaningless.
    """

    def __init__(
        self,
        message: str,
        *,
        label: str | None = None,
        baseline: Mapping[str, Any] | None = None,
        candidate: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        #: The first label at fault.
        self.label = label
        #: Its metric in the baseline run: ``{"name": ..., "options": {...}}``.
        self.baseline = dict(baseline) if baseline is not None else None
        #: Its metric in the candidate run, in the same form.
        self.candidate = dict(candidate) if candidate is not None else None


class MetricCollisionError(ItemscoreError):
    """Raised when two distributions (or registrations) claim the same metric id."""

    def __init__(
        self, message: str, *, metric_id: str | None = None, sources: Sequence[str] = ()
    ) -> None:
        super().__init__(message)
        #: The id claimed twice.
        self.metric_id = metric_id
        #: Where each claim comes from, as phrases ("distribution 'a' (entry point ...)").
        self.sources = tuple(sources)


class PluginLoadError(ItemscoreError, ImportError):
    """Raised when a plugin's entry point cannot be loaded and that plugin was asked for."""

    def __init__(
        self,
        message: str,
        *,
        entry_point: str | None = None,
        distribution: str | None = None,
        group: str | None = None,
    ) -> None:
        super().__init__(message)
        #: The entry point's name.
        self.entry_point = entry_point
        #: The distribution declaring it.
        self.distribution = distribution
        #: Its entry-point group (``itemscore.metrics``, ``itemscore.suites``...).
        self.group = group


class NotAMetricError(PluginLoadError, TypeError):
    """Raised when what an entry point, hook or ``@register`` gives is not a metric class."""


_InputErrorT = TypeVar("_InputErrorT", bound="InputError")


class InputError(ItemscoreError, ValueError):
    """Raised when items or a data file are malformed; the message names the place at fault.

    Whoever raises it passes that place as data too (``path``, ``line``, ``column``, or
    :meth:`at`, which writes both); nothing reads it back from the message.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        super().__init__(message)
        #: The file at fault, as the message names it (``None`` for items given in memory).
        self.path = path
        #: Its 1-based line (the row for Parquet and DataFrames, the row's position for items
        #: given in memory), when known.
        self.line = line
        #: Its 1-based column (in characters), when known.
        self.column = column

    @classmethod
    def at(
        cls: type[_InputErrorT], path: str, line: int | None, column: int | None, text: str
    ) -> _InputErrorT:
        """The error ``"PATH:LINE:COLUMN: text"`` (the parts known), with the place as data.

        One call writes the place into the message and into the attributes, so the two
        cannot disagree.
        """
        where = path
        if line is not None:
            where += f":{line}" if column is None else f":{line}:{column}"
        return cls(f"{where}: {text}", path=path, line=line, column=column)


class ResultsFormatError(InputError):
    """Raised when a saved results file is not one itemscore can read."""


def describe_exception(exc: BaseException, *, one_line: bool = False) -> str:
    """How itemscore writes an exception in reports, error scores and messages.

    itemscore's own exceptions are full sentences and shown as they are; any other is prefixed
    with its type (``KeyError: 'x'``), which is often all its message means.

    Args:
        exc: The exception.
        one_line: Collapse the message's whitespace (line breaks included) into single spaces.
    """
    message = str(exc)
    if one_line:
        message = " ".join(message.split())
    if isinstance(exc, ItemscoreError):
        return message or type(exc).__name__
    name = type(exc).__name__
    return f"{name}: {message}" if message else name


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """A " Did you mean 'x'?" suffix for ``name``, or an empty string when nothing is close."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" Did you mean {close[0]!r}?" if close else ""


def one_of(choices: Iterable[object]) -> str:
    """``'a', 'b', 'c'``: choices quoted for an error message."""
    return ", ".join(repr(c) for c in choices)
