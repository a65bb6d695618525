"""Every exception itemscore raises on purpose.

The tree::

    ItemscoreError
     ├── ConfigError (ValueError)            a run, metric or option is configured wrongly
     │    ├── UnknownMetricError (LookupError)   no installed metric has that name
 │    ├── UnknownSuiteError (LookupError)    no installed suite has that name
     │    └── OptionError                        an unknown option, or a value of the wrong type
     ├── MetricCollisionError                two distributions claim one metric id
     ├── PluginLoadError (ImportError)       a plugin's entry point cannot be loaded
     └── InputError (ValueError)             the items or a data file are malformed
          └── ResultsFormatError                 a saved results file cannot be read

Each subclasses the builtin exception a caller would already catch, so ``except ValueError``
keeps working around itemscore calls.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = [
    "ConfigError",
    "InputError",
    "ItemscoreError",
    "MetricCollisionError",
    "OptionError",
    "PluginLoadError",
    "ResultsFormatError",
    "UnknownMetricError",
    "UnknownSuiteError",
]


class ItemscoreError(Exception):
    """Root of every exception itemscore raises on purpose."""


class ConfigError(ItemscoreError, ValueError):
    """Raised when a run is configured wrongly, before any item is scored.

    Examples: two metrics with one label, a bad confidence level, duplicate item ids.
    """


class UnknownMetricError(ConfigError, LookupError):
    """Raised when a metric is asked for by a name no installed metric has."""


class UnknownSuiteError(ConfigError, LookupError):
    """Raised when a suite is asked for by a name no installed suite has."""


class OptionError(ConfigError):
    """Raised when a metric gets an unknown option or a value it does not accept."""


class MetricCollisionError(ItemscoreError):
    """Raised when two distributions (or registrations) claim the same metric id."""


class PluginLoadError(ItemscoreError, ImportError):
    """Raised when a plugin's entry point cannot be imported and that plugin was asked for."""


class InputError(ItemscoreError, ValueError):
    """Raised when items or a data file are malformed; the message names the place at fault."""


class ResultsFormatError(InputError):
    """Raised when a saved results file is not one itemscore can read."""


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """A " Did you mean 'x'?" suffix for ``name``, or an empty string when nothing is close."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" Did you mean {close[0]!r}?" if close else ""


def one_of(choices: Iterable[object]) -> str:
    """``'a', 'b', 'c'``: choices quoted for an error message."""
    return ", ".join(repr(c) for c in choices)
