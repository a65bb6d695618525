"""The normalisation of the official SQuAD v1.1 evaluation, for ``normalization="squad"``.

``exact_match`` and ``token_f1`` use it instead of :class:`itemscore.text.Normalizer` when a
run must reproduce published SQuAD numbers to the digit. The official script (evaluate-v1.1.py)
lower-cases the text with :meth:`str.lower`, deletes the ASCII punctuation of
:data:`string.punctuation` (``-``, ``%``, ``$`` and ``+`` included, while ``«`` or ``。`` stay),
replaces each whole word *a*, *an* and *the* with a space (a word as Python's ``re`` sees it:
letters, digits and ``_`` of any script), and collapses whitespace. Its F1 splits on whitespace
and is 0 when no token is shared, so two answers that both normalise to nothing have an exact
match but an F1 of 0. Nothing of Unicode NFKC or case folding is applied.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Mapping
from typing import Final

from itemscore.text import Normalizer

__all__ = ["check_squad_options", "normalizer_for", "squad_normalize"]

_DELETE_PUNCTUATION: Final = str.maketrans("", "", string.punctuation)
_ARTICLES: Final = re.compile(r"\b(?:a|an|the)\b")


def squad_normalize(text: str) -> str:
    """Normalise ``text`` exactly as the official SQuAD v1.1 evaluation does.

    Args:
        text: An answer.

    Returns:
        The text lower-cased, without ASCII punctuation or articles, its whitespace collapsed.

    Example:
        >>> squad_normalize("The U.S.A.'s  army, a force.")
        'usas army force'
    """
    text = text.lower().translate(_DELETE_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def check_squad_options(
    metric_id: str, given: Mapping[str, bool], defaults: Mapping[str, bool]
) -> None:
    """Refuse normalisation options that ``normalization="squad"`` would silently override.

    Raises:
        ValueError: An option in ``given`` differs from its default in ``defaults``.
    """
    changed = [name for name, value in given.items() if value != defaults[name]]
    if changed:
        names = ", ".join(f"`{name}` ({given[name]!r})" for name in changed)
        raise ValueError(
            f"{metric_id}: normalization='squad' normalises exactly as the official SQuAD v1.1 "
            f"evaluation does, so it cannot be combined with {names}: leave "
            f"{'it' if len(changed) == 1 else 'them'} out, or use "
            "normalization='itemscore' to set the normalisation option by option."
        )


def normalizer_for(
    metric_id: str,
    normalization: str,
    options: Mapping[str, bool],
    defaults: Mapping[str, bool],
) -> Callable[[str], str]:
    """The normaliser a metric's options ask for: a :class:`Normalizer`, or SQuAD's.

    Args:
        metric_id: The metric, for the error message.
        normalization: ``"itemscore"`` (``options`` apply) or ``"squad"``.
        options: The metric's normalisation options, as keyword arguments of ``Normalizer``.
        defaults: Their defaults in this metric; with ``"squad"`` none may differ from them.

    Raises:
        ValueError: ``normalization="squad"`` with an option off its default.
    """
    if normalization == "squad":
        check_squad_options(metric_id, options, defaults)
        return squad_normalize
    return Normalizer(**options)
