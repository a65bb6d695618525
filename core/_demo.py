"""The demo suites behind ``itemscore demo``: small hand-written data sets bundled in the package.

Both are declared in the ``itemscore.suites`` entry-point group, like any installed suite, and
each holds the outputs of two models for the same questions.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ._entrypoints import entry_points, load
from ._exceptions import ItemscoreError
from ._suite import SUITES_GROUP, Suite

__all__ = ["SENTIMENT_LABELS", "QADemo", "SentimentDemo", "demo_suites"]

#: The classes of the sentiment demo.
SENTIMENT_LABELS = ("positive", "negative", "neutral")


class QADemo(Suite):
    """Twenty short-answer questions (SQuAD-like) answered by two models.

    Some questions have several valid answers, a few requests failed (``"output": null``), and
    two questions have no answer key, so answer-key metrics skip them.
    """

    suite_id: ClassVar[str] = "demo_qa"
    description: ClassVar[str] = (
        "Short-answer questions answered by two models; several valid answers, failed requests."
    )
    metrics: ClassVar[tuple[Any, ...]] = ("exact_match", "token_f1", "answered_rate")
    bundled_data: ClassVar[tuple[str, str] | None] = ("itemscore", "demo_data/qa.jsonl")


class SentimentDemo(Suite):
    """Thirty product reviews in three categories, labelled by two models in free form.

    The models answer "The sentiment is positive." rather than ``positive``: accuracy and F1
    extract the label from the answer. Each review's product category is its group.
    """

    suite_id: ClassVar[str] = "demo_sentiment"
    description: ClassVar[str] = (
        "Product reviews labelled positive, negative or neutral in free-form answers."
    )
    metrics: ClassVar[tuple[Any, ...]] = (
        {"name": "accuracy", "labels": list(SENTIMENT_LABELS)},
        {"name": "f1", "labels": list(SENTIMENT_LABELS)},
        "answered_rate",
    )
    bundled_data: ClassVar[tuple[str, str] | None] = ("itemscore", "demo_data/sentiment.jsonl")


def demo_suites() -> list[Suite]:
    """The installed demo suites: itemscore's own ``itemscore.suites`` entries with bundled data.

    Raises:
        ItemscoreError: none is installed (the package metadata is missing or stale).
    """
    suites: list[Suite] = []
    for ref in entry_points(SUITES_GROUP):
        if not ref.builtin:
            continue
        cls = load(ref).obj
        if isinstance(cls, type) and issubclass(cls, Suite) and cls.bundled_data is not None:
            suites.append(cls())
    if not suites:
        raise ItemscoreError(
            "No demo suite is installed: the itemscore.suites entry points are missing. "
            "Reinstall itemscore (pip install -e .) and try again."
        )
    return suites
