"""Reducers: the scores of a question's attempts made into one score for the question.

A model that answered one question several times (inspect_ai's epochs, lm-eval's repeats, n
samples for pass@k) gives several *attempts* at one *question*: items with the same ``model``
and ``id`` and different ``attempt``. Before any aggregate, every item-level metric's attempt
scores are reduced to one score per question, so that the question is the unit of every
interval, comparison and group table (Miller 2024, "Adding Error Bars to Evals").

A reducer is one function. It receives :class:`Attempts` — one metric's *scored* attempts (ok
or fail; skip and error never count), question by question, in attempt order — and returns
one array with an entry per question:

- a float array: the question's score (``NaN``: no score, the question is an ``error`` for
  this reducer); the question is ``ok`` when the score is above 0, ``fail`` at 0;
- or an integer array: the index (into the attempts) of the attempt whose whole score — state,
  value, reason and ``extra`` — stands for the question (``-1``: none, an ``error``). A metric
  with its own aggregate (F1 reads each score's ``extra``) can only be reduced this way.

A reducer whose name ends in a number (``pass@K``, ``maj@K``, ``pass^K``, ``at_least:K``) is
registered with the letter ``K`` in its name and called as ``reducer(attempts, k)``; a
question with fewer than ``K`` scored attempts is an ``error`` for it, whatever the function
returns. Built-in reducers (``mean`` is the default):

========== =========================================================================
mean        the mean over the attempts (of 1 for ok and 0 for fail when the metric is
            right or wrong, of the values otherwise)
max         the best attempt's score (right when any attempt is right)
min         the worst attempt's score (right when every attempt is right)
majority    the score of the most frequent answer among the attempts; a tie goes to the
            answer given first (at the lowest attempt number)
maj@K       ``majority`` over the first K attempts
pass@K      ``1 - C(n - c, K) / C(n, K)`` (n attempts, c right: Chen et al. 2021)
pass^K      ``C(c, K) / C(n, K)``: the chance that K attempts drawn without replacement are
            all right
at_least:K  1 when at least K attempts are right, else 0
========== =========================================================================

``pass@K``, ``pass^K`` and ``at_least:K`` count right attempts, so they need a metric that says
right or wrong (``aggregation = "ratio"``); on a partial-credit metric they raise, which makes
that measurement an error saying so.

Plugins add reducers through the hook ``itemscore_reducers`` (see :mod:`itemscore.hookspecs`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import attrs
import numpy as np

from ._exceptions import ConfigError, ItemscoreError, did_you_mean, one_of

if TYPE_CHECKING:
    import pyarrow as pa
    from numpy.typing import NDArray

__all__ = [
    "BUILTIN_REDUCERS",
    "REDUCER_EXTRA",
    "Attempts",
    "Reducer",
    "ReducerSpec",
    "check_attempt_counts",
    "check_reduce",
    "pass_at_k",
    "pass_power_k",
    "question_sizes",
    "reducer_key",
    "reducer_of",
    "reducers",
    "resolve_reducer",
    "shape_of_reduce",
]

#: A reducer: ``reducer(attempts)``, or ``reducer(attempts, k)`` for a name with ``K``.
Reducer = Callable[..., Any]

#: A reducer's registered name: letters, digits and ``_``, then optionally ``@K``, ``^K`` or
#: ``:K`` (the place of its whole-number parameter).
_REGISTERED = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:[@^:]K)?")
#: A reducer as a run names it: ``pass@5`` is the family ``pass@K`` with ``k = 5``.
_ASKED = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9_]*[@^:])(?P<k>[0-9]+)")


def _segment_sums(values: NDArray[Any], offsets: NDArray[np.intp]) -> NDArray[Any]:
    """Sums of ``values`` over each question's attempts (every question has at least one)."""
    if values.size == 0:
        return np.zeros(offsets.size - 1, dtype=values.dtype)
    return np.add.reduceat(values, offsets[:-1])


# Not slotted: the arrays derived from the attempts are cached_property values, made on first use.
@attrs.frozen(eq=False, slots=False)
class Attempts:
    """One metric's scored attempts, question by question (what a reducer receives).

    Arrays have one entry per attempt; question ``q``'s attempts are the entries
    ``offsets[q]:offsets[q + 1]``, in attempt order. Every question here has at least one
    scored attempt (a question with none is skip or error before any reducer is called).
    """

    #: Where each question's attempts start, and the end: ``n_questions + 1`` entries.
    offsets: NDArray[np.intp]
    #: Whether each attempt is ok (``False``: fail).
    ok: NDArray[np.bool_]
    #: Each attempt's value.
    values: NDArray[np.float64]
    #: Whether the metric says right or wrong (its default aggregate is a ratio).
    binary: bool
    #: Computes :meth:`answers` on first use (it reads and normalises the outputs).
    _answers: Callable[[], NDArray[np.int64]] = attrs.field(repr=False)

    @property
    def n_questions(self) -> int:
        """How many questions."""
        return int(self.offsets.size - 1)

    @functools.cached_property
    def sizes(self) -> NDArray[np.intp]:
        """Scored attempts per question (``n``)."""
        return np.diff(self.offsets)

    @functools.cached_property
    def successes(self) -> NDArray[np.int64]:
        """Ok attempts per question (``c``)."""
        return _segment_sums(self.ok.astype(np.int64), self.offsets)

    @functools.cached_property
    def question(self) -> NDArray[np.intp]:
        """The question of each attempt (``0 .. n_questions - 1``)."""
        return np.repeat(np.arange(self.n_questions, dtype=np.intp), self.sizes)

    @functools.cached_property
    def position(self) -> NDArray[np.intp]:
        """Each attempt's place among its question's attempts (0 for the first)."""
        return np.arange(self.ok.size, dtype=np.intp) - self.offsets[:-1][self.question]

    @property
    def credit(self) -> NDArray[np.float64]:
        """What an attempt is worth: 1 or 0 (ok or fail) for a binary metric, else its value."""
        return self.ok.astype(np.float64) if self.binary else self.values

    def answers(self) -> NDArray[np.int64]:
        """Each attempt's normalised answer as a code: equal codes, equal answers.

        The answer is what the metric extracted from the output (its score's
        ``extra["extracted"]``, with the ``extract`` option) or else the output, normalised by
        the metric's own ``normalizer`` when it has one (``itemscore.text.Normalizer()``
        otherwise). A failed request and an output with no answer found share one code.
        """
        return self._answer_codes

    @functools.cached_property
    def _answer_codes(self) -> NDArray[np.int64]:
        return np.asarray(self._answers(), dtype=np.int64)

    def first(self, k: int) -> tuple[Attempts, NDArray[np.intp]]:
        """The first ``k`` attempts of each question, and where each is among these attempts."""
        keep = np.flatnonzero(self.position < k)
        sizes = np.minimum(self.sizes, k)
        offsets = np.zeros(self.offsets.size, dtype=np.intp)
        np.cumsum(sizes, out=offsets[1:])
        parent = self

        def answers() -> NDArray[np.int64]:
            return parent.answers()[keep]

        return Attempts(offsets, self.ok[keep], self.values[keep], self.binary, answers), keep


# -- the built-in reducers -----------------------------------------------------------------------


def _first_best(attempts: Attempts, *, largest: bool) -> NDArray[np.intp]:
    """Per question, the first attempt with the highest (or lowest) credit."""
    credit = attempts.credit
    if credit.size == 0:
        return np.zeros(0, dtype=np.intp)
    reduce = np.maximum if largest else np.minimum
    best = reduce.reduceat(credit, attempts.offsets[:-1])
    return _first_where(credit == best[attempts.question], attempts)


def _first_where(hit: NDArray[np.bool_], attempts: Attempts) -> NDArray[np.intp]:
    """Per question, the first attempt where ``hit`` holds (``-1`` where none does)."""
    where = np.flatnonzero(hit)
    owner = attempts.question[where]
    starts = np.ones(where.size, dtype=bool)
    starts[1:] = owner[1:] != owner[:-1]
    out = np.full(attempts.n_questions, -1, dtype=np.intp)
    out[owner[starts]] = where[starts]
    return out


def reduce_mean(attempts: Attempts) -> NDArray[np.float64]:
    """The mean credit of each question's attempts (the share right, for a binary metric)."""
    return _segment_sums(attempts.credit, attempts.offsets) / attempts.sizes


def reduce_max(attempts: Attempts) -> NDArray[np.intp]:
    """The first attempt with the best credit stands for the question."""
    return _first_best(attempts, largest=True)


def reduce_min(attempts: Attempts) -> NDArray[np.intp]:
    """The first attempt with the worst credit stands for the question."""
    return _first_best(attempts, largest=False)


def reduce_majority(attempts: Attempts) -> NDArray[np.intp]:
    """The first attempt giving the most frequent answer stands for the question.

    Ties: of the answers given equally often, the one given first (its earliest attempt has
    the lowest attempt number) wins, as ``collections.Counter.most_common`` orders them.
    """
    n = attempts.ok.size
    if n == 0:
        return np.zeros(0, dtype=np.intp)
    widest = int(attempts.sizes.max())
    if widest <= _PADDED_WIDEST:
        return _majority_padded(attempts, widest)
    return _majority_sorted(attempts)


#: Up to this many attempts per question, majority compares each question's answers pairwise.
_PADDED_WIDEST = 32
#: Cells of the pairwise comparison made at once.
_PADDED_BLOCK = 1 << 24


def _majority_padded(attempts: Attempts, widest: int) -> NDArray[np.intp]:
    """Majority by counting, for each attempt, the question's attempts with its answer.

    An answer given equally often by every one of its attempts has one count, so the first
    attempt holding the largest count (``argmax`` takes the first) is the earliest attempt of
    the most frequent answer: the rule of :func:`reduce_majority`, without sorting.
    """
    n_questions = attempts.n_questions
    grid = np.full((n_questions, widest), -1, dtype=np.int64)
    grid[attempts.question, attempts.position] = attempts.answers()
    present = grid >= 0
    out = np.empty(n_questions, dtype=np.intp)
    step = max(1, _PADDED_BLOCK // (widest * widest))
    for start in range(0, n_questions, step):
        block = grid[start : start + step]
        counts = (block[:, :, None] == block[:, None, :]).sum(axis=2)
        counts[~present[start : start + step]] = -1
        out[start : start + step] = np.argmax(counts, axis=1)
    return attempts.offsets[:-1] + out


def _majority_sorted(attempts: Attempts) -> NDArray[np.intp]:
    """Majority by sorting the (question, answer) pairs: for questions with many attempts."""
    n = attempts.ok.size
    question, answers = attempts.question, attempts.answers()
    # Stable: within one (question, answer), attempts stay in attempt order.
    order = np.lexsort((answers, question))
    q_sorted, a_sorted = question[order], answers[order]
    starts = np.ones(n, dtype=bool)
    starts[1:] = (q_sorted[1:] != q_sorted[:-1]) | (a_sorted[1:] != a_sorted[:-1])
    heads = np.flatnonzero(starts)
    counts = np.diff(np.append(heads, n))
    first = np.minimum.reduceat(order, heads)  # each answer's earliest attempt
    owner = q_sorted[heads]
    # Most frequent first; among equals, the earliest given.
    pick = np.lexsort((first, -counts, owner))
    chosen_owner, chosen = owner[pick], first[pick]
    lead = np.ones(pick.size, dtype=bool)
    lead[1:] = chosen_owner[1:] != chosen_owner[:-1]
    out = np.full(attempts.n_questions, -1, dtype=np.intp)
    out[chosen_owner[lead]] = chosen[lead]
    return out


def reduce_maj_at(attempts: Attempts, k: int) -> NDArray[np.intp]:
    """``majority`` over each question's first ``k`` attempts."""
    head, keep = attempts.first(k)
    chosen = reduce_majority(head)
    return np.where(chosen >= 0, keep[np.maximum(chosen, 0)], -1)


def _need_binary(attempts: Attempts, name: str) -> None:
    if not attempts.binary:
        raise ValueError(
            f"{name} counts right attempts, and this metric gives partial credit (its "
            "aggregation is not 'ratio'), so no attempt is right or wrong. Reduce it with "
            "'mean', 'max' or 'min', or use a metric that says right or wrong."
        )


def pass_at_k(n: NDArray[np.int64], c: NDArray[np.int64], k: int) -> NDArray[np.float64]:
    """The unbiased pass@k estimator ``1 - C(n - c, k) / C(n, k)`` per question (``n >= k``).

    Computed as the Codex paper does (Chen et al. 2021, fig. 3), ``1 - prod(1 - k /
    arange(n - c + 1, n + 1))``, once per distinct ``(n, c)``: the same float, bit for bit.
    """
    pairs, where = _distinct_pairs(n, c)
    values = np.ones(len(pairs), dtype=np.float64)
    for j, (total, right) in enumerate(pairs):
        if total - right >= k:
            values[j] = 1.0 - np.prod(1.0 - k / np.arange(total - right + 1, total + 1))
    return values[where]


def pass_power_k(n: NDArray[np.int64], c: NDArray[np.int64], k: int) -> NDArray[np.float64]:
    """``C(c, k) / C(n, k)`` per question: k attempts drawn without replacement all right."""
    pairs, where = _distinct_pairs(n, c)
    values = np.zeros(len(pairs), dtype=np.float64)
    steps = np.arange(k, dtype=np.float64)
    for j, (total, right) in enumerate(pairs):
        if right >= k:
            values[j] = float(np.prod((right - steps) / (total - steps)))
    return values[where]


def _distinct_pairs(
    n: NDArray[np.int64], c: NDArray[np.int64]
) -> tuple[list[tuple[int, int]], NDArray[np.intp]]:
    """The distinct ``(n, c)`` pairs, and which one each question has."""
    if n.size == 0:
        return [], np.zeros(0, dtype=np.intp)
    width = int(n.max()) + 1
    keys, where = np.unique(n * width + c, return_inverse=True)
    pairs = [(int(key) // width, int(key) % width) for key in keys.tolist()]
    return pairs, where.reshape(-1).astype(np.intp)


def reduce_pass_at(attempts: Attempts, k: int) -> NDArray[np.float64]:
    """pass@k per question: the chance that at least one of k attempts is right."""
    _need_binary(attempts, f"pass@{k}")
    return pass_at_k(attempts.sizes.astype(np.int64), attempts.successes, k)


def reduce_pass_power(attempts: Attempts, k: int) -> NDArray[np.float64]:
    """pass^k per question: the chance that k attempts are all right."""
    _need_binary(attempts, f"pass^{k}")
    return pass_power_k(attempts.sizes.astype(np.int64), attempts.successes, k)


def reduce_at_least(attempts: Attempts, k: int) -> NDArray[np.float64]:
    """1 when at least k of the question's attempts are right, else 0."""
    _need_binary(attempts, f"at_least:{k}")
    return (attempts.successes >= k).astype(np.float64)


#: The reducers itemscore ships, by registered name.
BUILTIN_REDUCERS: Mapping[str, Reducer] = {
    "mean": reduce_mean,
    "max": reduce_max,
    "min": reduce_min,
    "majority": reduce_majority,
    "maj@K": reduce_maj_at,
    "pass@K": reduce_pass_at,
    "pass^K": reduce_pass_power,
    "at_least:K": reduce_at_least,
}


#: The built-in reducers that read only the attempts' states and values, never the outputs.
_COUNTING = frozenset({"mean", "max", "min", "pass@K", "pass^K", "at_least:K"})

#: The built-in reducers as :func:`reducers` lists them.
_BUILT_IN: Mapping[str, tuple[Reducer, str | None]] = {
    name: (function, None) for name, function in BUILTIN_REDUCERS.items()
}


# -- the registry --------------------------------------------------------------------------------


@attrs.frozen
class ReducerSpec:
    """A reducer as a run names it: ``pass@5`` is the function of ``pass@K`` with ``k = 5``."""

    #: The name as the run gives it (``"pass@5"``).
    name: str
    #: The registered name (``"pass@K"``).
    family: str
    #: The number in the name, or ``None`` for a reducer without one.
    k: int | None
    #: The function.
    function: Reducer = attrs.field(eq=False, repr=False)
    #: The plugin that added it (``None``: built in).
    plugin: str | None = None

    @property
    def reads_answers(self) -> bool:
        """Whether it may read :meth:`Attempts.answers` (the outputs): a plugin's may."""
        return self.plugin is not None or self.family not in _COUNTING

    def __call__(self, attempts: Attempts) -> NDArray[Any]:
        """The reducer's array for ``attempts`` (one entry per question), checked.

        Raises:
            Exception: whatever the reducer raised.
            TypeError: it returned something that is not such an array.
        """
        raw = self.function(attempts) if self.k is None else self.function(attempts, self.k)
        out = np.asarray(raw)
        if out.shape != (attempts.n_questions,):
            shape = getattr(raw, "shape", None)
            what = type(raw).__name__ if shape is None else f"an array of shape {tuple(shape)}"
            raise TypeError(
                f"the reducer {self.name!r} returned {what} for "
                f"{attempts.n_questions} questions; it must return one number per question"
            )
        if out.dtype.kind in "iu":
            out = out.astype(np.intp)
            bad = (out < -1) | (out >= attempts.ok.size)
            if bad.any():
                raise TypeError(
                    f"the reducer {self.name!r} picked the attempt {int(out[bad][0])}, but "
                    f"there are {attempts.ok.size} attempts (-1: none)"
                )
            return out
        if out.dtype.kind == "f":
            out = out.astype(np.float64)
            if np.isinf(out).any():
                raise TypeError(f"the reducer {self.name!r} returned an infinite score")
            return out
        raise TypeError(
            f"the reducer {self.name!r} returned an array of {out.dtype}; it must return "
            "floats (one score per question) or integers (one attempt per question)"
        )


def reducers() -> dict[str, tuple[Reducer, str | None]]:
    """Every reducer by registered name: the built-in ones, then the plugins' (with the plugin).

    Raises:
        ItemscoreError: a plugin failed in ``itemscore_reducers``, returned a bad name or
            something that is not a function, or took a name that is taken.
    """
    from ._plugins import plugin_manager

    found = dict(_BUILT_IN)
    for impl in plugin_manager().hook.itemscore_reducers.get_hookimpls():
        plugin = impl.plugin_name
        try:
            entries = list(cast("Mapping[str, Any]", impl.function() or {}).items())
        except Exception as exc:  # any plugin failure becomes a clear error
            raise ItemscoreError(
                f"Plugin {plugin!r} failed in itemscore_reducers: {type(exc).__name__}: {exc}"
            ) from exc
        for name, function in entries:
            if (
                not isinstance(name, str)
                or not _REGISTERED.fullmatch(name)
                or not callable(function)
            ):
                raise ItemscoreError(
                    f"Plugin {plugin!r} adds the reducer {name!r} -> {function!r}; a reducer "
                    "is a name of letters, digits and '_' (ending in '@K', '^K' or ':K' when "
                    "it takes a number, e.g. 'best_of@K') mapped to a function."
                )
            clash = found.get(name)
            if clash is not None:
                owner = "built in" if clash[1] is None else f"added by plugin {clash[1]!r}"
                raise ItemscoreError(
                    f"Plugin {plugin!r} adds the reducer {name!r}, which is {owner}; ask its "
                    "author to rename it."
                )
            found[name] = (function, plugin)
    return found


def _known_names(available: Iterable[str], k: str | None) -> list[str]:
    """The registered names with ``K`` filled in (with the number asked for, when one was)."""
    return [name[:-1] + k if k is not None and name.endswith("K") else name for name in available]


def resolve_reducer(
    name: object,
    available: Mapping[str, tuple[Reducer, str | None]] | None = None,
    *,
    setting: str = "`reduce`",
) -> ReducerSpec:
    """The reducer ``name`` names (``"pass@5"``), looked up among the registered ones.

    Without ``available``, a built-in name is found without asking the plugins, so a run
    that uses only built-in reducers never depends on a plugin's ``itemscore_reducers``.

    Raises:
        ConfigError: not a text, no such reducer (with a did-you-mean), ``K`` left as a
            letter, or a number below 1.
        ItemscoreError: a plugin's ``itemscore_reducers`` failed, when it was asked.
    """
    if available is None:
        try:
            return resolve_reducer(name, _BUILT_IN, setting=setting)
        except ConfigError:
            available = reducers()
    listed = one_of(available)
    if not isinstance(name, str):
        raise ConfigError(
            f"{setting} holds {name!r} ({type(name).__name__}); a reducer is a name such as "
            f"'mean' or 'pass@5'. Reducers: {listed}."
        )
    asked = _ASKED.fullmatch(name)
    if asked is not None:
        family, k = asked["head"] + "K", int(asked["k"])
        if family in available:
            if k < 1:
                raise ConfigError(
                    f"{setting} ({name!r}): K must be a whole number of at least 1, e.g. "
                    f"{asked['head']}1."
                )
            function, plugin = available[family]
            return ReducerSpec(name, family, k, function, plugin)
    elif name in available and not name.endswith("K"):
        function, plugin = available[name]
        return ReducerSpec(name, name, None, function, plugin)
    if name in available:  # 'pass@K' itself
        raise ConfigError(
            f"{setting} ({name!r}): give K a number, e.g. {name[:-1]}5 (pass@5: 5 attempts)."
        )
    digits = asked["k"] if asked is not None else None
    hint = did_you_mean(name, _known_names(available, digits))
    raise ConfigError(
        f"{setting} ({name!r}) names no reducer; the reducers are {listed} (K a whole number "
        f"of at least 1, e.g. 'pass@5').{hint}"
    )


def check_reduce(value: object, *, setting: str = "`reduce`") -> tuple[str, ...]:
    """``value`` (a reducer name or a sequence of them) as a tuple, every name checked.

    Raises:
        ConfigError: no reducer named, a name given twice, or a name :func:`resolve_reducer`
            refuses.
    """
    names = shape_of_reduce(value, setting=setting)
    for name in names:
        resolve_reducer(name, setting=setting)
    return names


def shape_of_reduce(value: object, *, setting: str = "`reduce`") -> tuple[str, ...]:
    """``value`` as a tuple of names, its shape checked but not the names (saved results)."""
    if isinstance(value, str):
        names: tuple[Any, ...] = tuple(part.strip() for part in value.split(","))
    elif isinstance(value, (Sequence, set, frozenset)):
        if isinstance(value, (set, frozenset)):
            raise ConfigError(
                f"{setting} ({value!r}) must be ordered: the first reducer gives the headline "
                "measurement. Give a list, e.g. ['mean', 'pass@5']."
            )
        names = tuple(value)
    else:
        raise ConfigError(
            f"{setting} ({value!r}) must be a reducer name or a list of them, e.g. 'mean' or "
            "['mean', 'pass@5']."
        )
    if not names or any(n == "" for n in names):
        raise ConfigError(
            f"{setting} ({value!r}) names no reducer (or an empty one); give at least one, "
            "e.g. 'mean'."
        )
    for name in names:
        if not isinstance(name, str):
            raise ConfigError(
                f"{setting} holds {name!r} ({type(name).__name__}); a reducer is a name such "
                "as 'mean' or 'pass@5'."
            )
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ConfigError(f"{setting} names the reducer {name!r} twice; name it once.")
        seen.add(name)
    return cast("tuple[str, ...]", names)


def question_sizes(keys: pa.Table) -> tuple[int, int] | None:
    """The fewest and the most items a question (model and id) of ``keys`` has.

    ``None`` when no item has an attempt (ids are unique per model: each item is a question
    of its own).
    """
    import pyarrow.compute as pc

    if keys.column("attempt").null_count == keys.num_rows:
        return None
    by = ["model", "id"] if keys.column("model").null_count < keys.num_rows else ["id"]
    counts = keys.select(by).group_by(by, use_threads=False).aggregate([([], "count_all")])
    sizes = counts.column("count_all")
    return int(pc.min(sizes).as_py()), int(pc.max(sizes).as_py())


def check_attempt_counts(
    n_items: int, sizes: Callable[[], tuple[int, int] | None], reduce: Sequence[str]
) -> None:
    """Refuse a reducer with ``K`` that no question of the run has attempts enough for.

    A question with fewer than ``K`` scored attempts is an ``error`` for ``pass@K`` (and
    ``maj@K``, ``pass^K``, ``at_least:K``); when *every* question has fewer than ``K``
    attempts of any state, every question would be an error and the measurement empty, so
    the run is refused before any item is scored, with the cause said once. Where some
    questions have enough, the others stay errors one by one.

    Args:
        n_items: The run's items.
        sizes: The fewest and the most items of a question, or ``None`` when no item has an
            attempt (:func:`question_sizes`); called only when a reducer has a ``K``.
        reduce: The run's reducer names (checked).

    Raises:
        ConfigError: a reducer asks for more attempts than any question has (its
            ``setting`` is ``"reduce"``).
    """
    specs = [spec for spec in map(resolve_reducer, reduce) if spec.k is not None]
    if not specs or n_items == 0:
        return
    found = sizes()
    if found is None:
        low = high = 1  # ids are unique per model: each item is a question of its own
    else:
        low, high = found
    short = [spec for spec in specs if spec.k is not None and spec.k > high]
    if not short:
        return
    names = " and ".join(spec.name for spec in short)
    needed = " and ".join(str(spec.k) for spec in short)
    if found is None:
        cause = (
            "the data has no attempt column, so every id is one question with one attempt. "
            "Map the column that numbers the attempts with --map attempt=COLUMN (`columns: "
            "{attempt: COLUMN}` in a configuration), or reduce with 'mean'"
        )
    else:
        these = f"{high}" if low == high else f"{low} to {high}"
        cause = (
            f"these have {these}. Reduce with a K of at most {high} (e.g. "
            f"{short[0].family[:-1]}{high}), or give each question more attempts"
        )
    error = ConfigError(
        f"{names} need{'s' if len(short) == 1 else ''} at least {needed} attempts per "
        f"question; {cause}."
    )
    error.at_entry("reduce")
    raise error


def reducer_key(suite_id: str, label: str, reducer: str, first: bool) -> str:
    """The key of a measurement: ``<suite>.<label>``, and ``<suite>.<label>[<reducer>]``."""
    return f"{suite_id}.{label}" if first else f"{suite_id}.{label}[{reducer}]"


#: How ``Measurement.extra`` names the reducer of a measurement of a run with attempts (or
#: of a further reducer): ``reducer[pass@5] = 1.0``.
REDUCER_EXTRA = "reducer[{}]"
_REDUCER_EXTRA = re.compile(r"reducer\[(.+)\]")


def reducer_of(extra: Mapping[str, float]) -> str | None:
    """The reducer a measurement's ``extra`` names, or ``None``."""
    for key in extra:
        found = _REDUCER_EXTRA.fullmatch(key)
        if found is not None:
            return found[1]
    return None
