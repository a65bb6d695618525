"""itemscore: evaluation metrics as plugins.

Score each item with each metric, one item at a time and every score isolated, then
aggregate the scores into ratios or means with confidence intervals. Metrics come from the
built-ins and from any package that declares an ``itemscore.metrics`` entry point.
"""

from __future__ import annotations

from importlib.metadata import version as _version

from ._columns import ScoreColumn
from ._exceptions import (
    ConfigError,
    InputError,
    ItemscoreError,
    MetricCollisionError,
    OptionError,
    PluginLoadError,
    ResultsFormatError,
    UnknownMetricError,
    UnknownSuiteError,
)
from ._metric import Metric, MetricContext
from ._options import OptionInfo
from ._plan import RunPlan, plan
from ._plugins import plugin_manager
from ._records import Estimate, ItemResult, ItemScore, Measurement, MetricResult, Status
from ._registry import MetricInfo, Registry, register, reset_registry, unregister
from ._reports import export
from ._result import RunResult
from ._runner import rescore, run, score
from ._settings import RunSettings
from ._spec import MetricSpec
from ._suite import Suite, get_suite
from .hookspecs import hookimpl
from .inputs import read_items

__version__ = _version("itemscore")

__all__ = [
    "ConfigError",
    "Estimate",
    "InputError",
    "ItemResult",
    "ItemScore",
    "ItemscoreError",
    "Measurement",
    "Metric",
    "MetricCollisionError",
    "MetricContext",
    "MetricInfo",
    "MetricResult",
    "MetricSpec",
    "OptionError",
    "OptionInfo",
    "PluginLoadError",
    "Registry",
    "ResultsFormatError",
    "RunPlan",
    "RunResult",
    "RunSettings",
    "ScoreColumn",
    "Status",
    "Suite",
    "UnknownMetricError",
    "UnknownSuiteError",
    "__version__",
    "export",
    "get_suite",
    "hookimpl",
    "plan",
    "plugin_manager",
    "read_items",
    "register",
    "rescore",
    "reset_registry",
    "run",
    "score",
    "unregister",
]
