"""itemscore: evaluation metrics as plugins.

Score each item with each metric, one item at a time and every score isolated, then
aggregate the scores into ratios or means with confidence intervals. Metrics come from the
built-ins and from any package that declares an ``itemscore.metrics`` entry point.

The names below are imported on first use (PEP 562 ``__getattr__``), so that ``import
itemscore`` costs nothing until a name is used, and a command imports only what it needs. To
export a name, add it to :data:`_EXPORTS` (name -> private module), to the ``TYPE_CHECKING``
block, and to ``__all__``.
"""

from __future__ import annotations

#: ``typing.TYPE_CHECKING`` without importing typing (60 ms of start-up on a slow machine).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ._arena import Arena, Rating, arena
    from ._columns import ScoreColumn
    from ._exceptions import (
        ConfigError,
        InputError,
        ItemscoreError,
        MetricCollisionError,
        MetricMismatchError,
        NotAMetricError,
        OptionError,
        PluginLoadError,
        ResultsFormatError,
        UnknownMetricError,
        UnknownSuiteError,
    )
    from ._leaderboard import Leaderboard, LeaderboardRow, leaderboard
    from ._metric import Metric, MetricContext
    from ._options import OptionInfo
    from ._plan import RunPlan, plan
    from ._plugins import plugin_manager
    from ._records import Estimate, ItemResult, ItemScore, Measurement, MetricResult, Status
    from ._registry import MetricInfo, Registry, register, reset_registry, unregister
    from ._result import RunResult
    from ._run import rescore, run, score
    from ._secrets import is_secret_name, mask_secrets
    from ._settings import RunSettings
    from ._spec import MetricSpec
    from ._suite import Suite, get_suite
    from .comparison import Comparison, compare
    from .hookspecs import hookimpl
    from .inputs import read_items
    from .reports import export

    __version__: str

#: Every public name, and the private module that defines it.
_EXPORTS: dict[str, str] = {
    "ScoreColumn": "._columns",
    "Arena": "._arena",
    "Rating": "._arena",
    "arena": "._arena",
    "Comparison": ".comparison",
    "compare": ".comparison",
    "ConfigError": "._exceptions",
    "InputError": "._exceptions",
    "ItemscoreError": "._exceptions",
    "MetricCollisionError": "._exceptions",
    "MetricMismatchError": "._exceptions",
    "NotAMetricError": "._exceptions",
    "OptionError": "._exceptions",
    "PluginLoadError": "._exceptions",
    "ResultsFormatError": "._exceptions",
    "UnknownMetricError": "._exceptions",
    "UnknownSuiteError": "._exceptions",
    "Leaderboard": "._leaderboard",
    "LeaderboardRow": "._leaderboard",
    "leaderboard": "._leaderboard",
    "Metric": "._metric",
    "MetricContext": "._metric",
    "OptionInfo": "._options",
    "RunPlan": "._plan",
    "plan": "._plan",
    "plugin_manager": "._plugins",
    "Estimate": "._records",
    "ItemResult": "._records",
    "ItemScore": "._records",
    "Measurement": "._records",
    "MetricResult": "._records",
    "Status": "._records",
    "MetricInfo": "._registry",
    "Registry": "._registry",
    "register": "._registry",
    "reset_registry": "._registry",
    "unregister": "._registry",
    "export": ".reports",
    "RunResult": "._result",
    "is_secret_name": "._secrets",
    "mask_secrets": "._secrets",
    "rescore": "._run",
    "run": "._run",
    "score": "._run",
    "RunSettings": "._settings",
    "MetricSpec": "._spec",
    "Suite": "._suite",
    "get_suite": "._suite",
    "hookimpl": ".hookspecs",
    "read_items": ".inputs",
}

__all__ = [
    "Arena",
    "Comparison",
    "ConfigError",
    "Estimate",
    "InputError",
    "ItemResult",
    "ItemScore",
    "ItemscoreError",
    "Leaderboard",
    "LeaderboardRow",
    "Measurement",
    "Metric",
    "MetricCollisionError",
    "MetricContext",
    "MetricInfo",
    "MetricMismatchError",
    "MetricResult",
    "MetricSpec",
    "NotAMetricError",
    "OptionError",
    "OptionInfo",
    "PluginLoadError",
    "Rating",
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
    "arena",
    "compare",
    "export",
    "get_suite",
    "hookimpl",
    "is_secret_name",
    "leaderboard",
    "mask_secrets",
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


def __getattr__(name: str) -> Any:
    """Import a public name on first use, and keep it as a module attribute."""
    if name == "__version__":
        from importlib.metadata import version

        value: Any = version("itemscore")
    elif name in _EXPORTS:
        import importlib  # here: the package imports warnings, which ``import itemscore`` needs not

        value = getattr(importlib.import_module(_EXPORTS[name], __name__), name)
    else:
        raise AttributeError(f"module 'itemscore' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
