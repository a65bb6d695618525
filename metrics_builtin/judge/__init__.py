"""Judge-based metrics: ``llm_judge`` grades outputs with an LLM over an OpenAI-compatible API.

httpx (the ``judge`` extra) is imported only when the metric is configured, so listing the
metrics or reading their options needs none of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from itemscore.metrics_builtin.judge._cache import (
    JudgeCacheWarning,
    ReplyCache,
    default_cache_dir,
    request_key,
)
from itemscore.metrics_builtin.judge._metric import LlmJudge
from itemscore.metrics_builtin.judge._parse import SCALES, Scale, UnparseableReply, parse_verdict

if TYPE_CHECKING:
    from itemscore.metrics_builtin.judge._agreement import cohen_kappa, kappa_with_interval

__all__ = [
    "SCALES",
    "JudgeCacheWarning",
    "LlmJudge",
    "ReplyCache",
    "Scale",
    "UnparseableReply",
    "cohen_kappa",
    "default_cache_dir",
    "kappa_with_interval",
    "parse_verdict",
    "request_key",
]


def __getattr__(name: str) -> Any:
    """The agreement statistics, imported on first use: they need numpy, listing does not."""
    if name in ("cohen_kappa", "kappa_with_interval"):
        from itemscore.metrics_builtin.judge import _agreement

        return getattr(_agreement, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
