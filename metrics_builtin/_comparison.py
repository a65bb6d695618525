"""What the metrics that compare a normalised answer with its valid answers share.

``exact_match``, ``accuracy``, ``f1`` and ``token_f1`` normalise the output and every valid
answer the same way (:class:`itemscore.text.Normalizer`) before comparing them, score failed
requests the same way, and need an answer key. :class:`NormalizedMetric` holds those options
once and documents them once: option descriptions are read from the ``Args:`` sections of the
class docstrings, merged along the class hierarchy.

Scoring is split in two steps so that the hot path does each piece of work once per distinct
value: :meth:`NormalizedMetric._prepare` turns one answer key (the ``expected`` tuple) into what
the comparison needs (normalised references, their tokens...), and
:meth:`NormalizedMetric._verdict` compares one output with it. ``score_items`` memoises both
within a call, so repeated answer keys (class labels) are normalised once and repeated
(output, answer key) pairs are judged once, and equal verdicts are one shared score object
(whose ``extra`` is therefore read-only by convention); ``score_item`` runs the same two steps
without a memo, which is why the two always agree.

With the ``extract`` option (:mod:`itemscore.metrics_builtin._extract`), the answer found in
the output is compared instead of the whole output; an output without one is ``fail`` with the
reason "no answer found", its ``extra`` that of a failed request. A subclass's ``_verdict`` may
return :meth:`NormalizedMetric._no_answer` itself when it finds nothing to compare (a number,
a letter).

A metric that offers the ``rules`` option (``exact_match``, ``accuracy``) calls
:meth:`NormalizedMetric._use_rules` last in its ``__init__``. An item read from a harness log
with ``rules="harness"`` carries the harness's own comparison in ``metadata["harness_rule"]``;
under ``rules="auto"`` (their default) or ``"harness"`` that rule, applied by the public
:func:`itemscore.integrations.harness_rules.verdict`, decides the item instead of the
normalised comparison, and its ``extra`` says so (``rule``). Such items bypass the memo: the
verdict depends on the rule as well as on the output and the answer key.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar, Generic, Literal, TypeVar, cast, get_args

from itemscore import (
    ItemResult,
    ItemScore,
    Metric,
    MetricContext,
    OptionError,
    ScoreColumn,
    Status,
)
from itemscore.metrics_builtin._extract import (
    NO_ANSWER_FOUND,
    AnswerExtractor,
    Pick,
    answer_extractor,
)
from itemscore.text import LabelExtractor, Normalizer

__all__ = [
    "AnswerMatchMetric",
    "NoAnswer",
    "NormalizedMetric",
    "Rules",
    "Verdict",
    "check_labels",
]

#: What :meth:`NormalizedMetric._prepare` makes of one answer key.
R = TypeVar("R")
#: One verdict: whether it is ok (else fail), its value and its ``extra``.
Verdict = tuple[bool, float, "Mapping[str, Any] | None"]

# A per-call memo of score_items decides after this many entries whether it pays (_Cache).
_CACHE_CHECK = 2048
# ... and stays on when at least one lookup in this many was served from it.
_CACHE_MIN_HIT_SHARE = 10
# It never holds more entries than this.
_CACHE_LIMIT = 1 << 18
# A memo kept for a whole run (across chunks) holds its items' texts alive: fewer entries.
_RUN_CACHE_LIMIT = 1 << 14

#: ``reason`` of a failed request left out with ``count_failed=False``.
FAILED_REASON = "the request failed (output is None); count_failed=False leaves it out"
#: ``reason`` of an item without an answer key (the runner skips those before scoring).
NO_ANSWER_KEY = "no answer key (expected is empty)"

#: Whose comparison decides an item: ``auto`` the item's harness rule when it carries one,
#: else itemscore's; ``itemscore`` always itemscore's; ``harness`` always the harness rule.
Rules = Literal["auto", "itemscore", "harness"]
_RULES: tuple[str, ...] = get_args(Rules)
#: ``reason`` of an item its harness rule leaves unscored (kind ``unscored``).
UNSCORED_REASON = (
    "the harness left this sample unscored (its harness rule is 'unscored': inspect leaves a "
    "sample that ended in an error out of every metric)"
)
#: ``reason`` of an item without a harness rule under ``rules="harness"``.
NO_RULE_REASON = (
    "rules='harness', but the item carries no harness rule (metadata 'harness_rule'): read "
    "the log with --read-option rules=harness (rules='harness' in read_items), or score with "
    "rules='auto' to compare items without one by itemscore's normalisation"
)
# Options that mean the same under a harness rule as under itemscore's comparison.
_RULE_NEUTRAL = frozenset({"rules", "count_failed"})
# What scoring an item by its rule gives: state code, value, reason, extra.
_Scored = tuple[int, "float | None", "str | None", "Mapping[str, Any] | None"]


class NoAnswer(tuple):  # type: ignore[type-arg] # a Verdict, marked
    """A ``fail`` verdict whose reason is "no answer found" (a :data:`Verdict` otherwise)."""

    __slots__ = ()


def check_labels(labels: Sequence[str] | None) -> tuple[str, ...] | None:
    """``labels`` as a tuple, or ``None``; an empty list is a configuration mistake.

    Raises:
        ValueError: ``labels`` is empty.
        TypeError: ``labels`` is a single string or holds something that is not a string.
    """
    if labels is None:
        return None
    if isinstance(labels, str):
        raise TypeError(
            f"`labels` must be a list of strings, not the single string {labels!r}: "
            f"write labels=[{labels!r}]."
        )
    checked = tuple(labels)
    if not checked:
        raise ValueError(
            "`labels` ([]) is empty: give at least one class label, e.g. "
            "labels=['positive', 'negative'], or leave `labels` out to compare answers as "
            "they are."
        )
    for index, label in enumerate(checked):
        if not isinstance(label, str):
            raise TypeError(
                f"`labels` must hold only strings, but labels[{index}] is {label!r} "
                f"({type(label).__name__})."
            )
    return checked


class NormalizedMetric(Metric, Generic[R]):
    """Base class of the built-in metrics that compare normalised answers with the answer key.

    Outputs and valid answers are normalised the same way before they are compared. Items
    without an answer key are skipped by the runner (``required_inputs = ("expected",)``). A
    failed request (output ``None``) is scored ``fail`` with value 0.0, or ``skip`` with
    ``count_failed=False``, which leaves it out of every denominator.

    Args:
        ignore_case: Compare case-insensitively.
        trim_punctuation: Strip punctuation and quotes from the start and end.
        ignore_punctuation: Remove all punctuation, including inside the text.
        nfkc: Apply Unicode NFKC, so full-width characters equal their ASCII forms.
        count_failed: Score failed requests as wrong. `false` leaves them out.
        extract: Score only the answer found in the output: a regex (its group is the
            answer), or a preset `answer_is`, `boxed`, `last_number`; an output without one
            is `fail` with the reason "no answer found".
        extract_pick: Which match of `extract` counts, `first` or `last`; none: `first` for a
            regex, `last` for a preset.
    """

    required_inputs = ("expected",)
    higher_is_better = True
    reproducibility_class = "deterministic"

    #: Maps free-form outputs to a label (metrics with ``labels``); ``None``: no extraction.
    extractor: LabelExtractor | None = None
    #: The normalised form of every label.
    _label_forms: Mapping[str, str] = MappingProxyType({})
    #: Whether ``_verdict`` may itself return :meth:`_no_answer` (a metric that looks for a
    #: number or a letter in the output).
    _finds_answers: ClassVar[bool] = False
    #: Whose comparison decides (the ``rules`` option of the metrics that offer it; the others
    #: always compare by itemscore's normalisation).
    rules: Rules = "itemscore"
    #: Why a harness rule cannot decide under this configuration (options only itemscore's
    #: comparison applies), or ``None``.
    _rule_conflict: str | None = None

    def __init__(
        self,
        *,
        ignore_case: bool = True,
        trim_punctuation: bool = True,
        ignore_punctuation: bool = False,
        nfkc: bool = True,
        count_failed: bool = True,
        extract: str | None = None,
        extract_pick: Pick | None = None,
    ) -> None:
        if not isinstance(count_failed, bool):
            raise TypeError(f"`count_failed` ({count_failed!r}) must be True or False.")
        self.extract = extract
        self.extract_pick = extract_pick
        #: Finds the answer in an output (the ``extract`` option); ``None``: the whole output.
        self.answer_extractor: AnswerExtractor | None = answer_extractor(
            getattr(self, "metric_id", type(self).__name__), extract, extract_pick
        )
        self.ignore_case = ignore_case
        self.trim_punctuation = trim_punctuation
        self.ignore_punctuation = ignore_punctuation
        self.nfkc = nfkc
        self.count_failed = count_failed
        #: How outputs and valid answers are normalised; built once, used for every item.
        self.normalizer: Callable[[str], str] = Normalizer(
            nfkc=nfkc,
            ignore_case=ignore_case,
            trim_punctuation=trim_punctuation,
            ignore_punctuation=ignore_punctuation,
        )

    def _use_rules(self, rules: Rules) -> None:
        """Take the ``rules`` option; a metric offering it calls this last in ``__init__``.

        The options off their defaults (other than ``count_failed``) are itemscore's
        comparison, which a harness rule replaces: with ``rules="harness"`` they are refused
        here, with ``"auto"`` each item that carries a rule is that item's error. Every option
        must be kept as the attribute of its name.

        Raises:
            OptionError: ``rules`` is not one of its values, or ``"harness"`` with such options.
        """
        metric_id = getattr(self, "metric_id", type(self).__name__)
        if rules not in _RULES:
            raise OptionError(
                f"`rules` ({rules!r}) must be one of {', '.join(map(repr, _RULES))}.",
                metric_id=metric_id,
                option="rules",
                allowed=_RULES,
            )
        self.rules = rules
        changed = [
            f"{name}={getattr(self, name)!r}"
            for name, parameter in inspect.signature(type(self).__init__).parameters.items()
            if name not in _RULE_NEUTRAL
            and parameter.default is not parameter.empty
            and getattr(self, name) != parameter.default
        ]
        if not changed or rules == "itemscore":
            return
        names = ", ".join(changed)
        if rules == "harness":
            raise OptionError(
                f"{metric_id}: rules='harness' compares each item as its harness did, so it "
                f"cannot be combined with {names}, which only itemscore's comparison applies: "
                "leave them out, or use rules='itemscore'.",
                metric_id=metric_id,
                option="rules",
                allowed=_RULES,
            )
        self._rule_conflict = (
            f"the item carries a harness rule (metadata 'harness_rule'), which decides it under "
            f"rules='auto', but {metric_id} is also given {names}, which only itemscore's "
            "comparison applies: give rules='itemscore' to compare by itemscore's "
            "normalisation, or leave them out to follow the harness rule"
        )

    def _by_rule(self, item: ItemResult, rule: object) -> _Scored:
        """The score of an item its harness rule decides (``rule`` ``None``: it carries none)."""
        from itemscore.integrations.harness_rules import credit, verdict

        if rule is None:
            return ScoreColumn.ERROR, None, NO_RULE_REASON, None
        if not isinstance(rule, Mapping):
            return ScoreColumn.ERROR, None, _not_a_rule(rule), None
        if self._rule_conflict is not None:
            return ScoreColumn.ERROR, None, self._rule_conflict, None
        output, expected = item.output, item.expected
        if output is None and not self.count_failed:
            return ScoreColumn.SKIP, None, FAILED_REASON, None
        try:
            right = credit(output, expected, rule)
        except ValueError as exc:  # a rule this version cannot apply: this item's error
            return ScoreColumn.ERROR, None, f"{type(exc).__name__}: {exc}", None
        if right is None:
            return ScoreColumn.SKIP, None, UNSCORED_REASON, None
        kind = rule.get("kind")
        extra = {"rule": f"{rule.get('harness', 'harness')}:{kind}", "matched": None}
        if not right:
            no_answer = item.metadata.get("no_answer")
            return ScoreColumn.FAIL, 0.0, no_answer if isinstance(no_answer, str) else None, extra
        if right < 1:  # the harness's partial credit (inspect f1()): its value, as logged
            return ScoreColumn.OK, right, None, extra
        if kind != "logged" and expected:  # a logged verdict names no answer
            extra["matched"] = next((a for a in expected if verdict(output, (a,), rule)), None)
        return ScoreColumn.OK, 1.0, None, extra

    def _use_labels(self, labels: tuple[str, ...] | None) -> None:
        """Build the label extractor once, with this metric's normalizer (``None``: none)."""
        if labels is None:
            return
        # Only metrics without normalization="squad" take labels: theirs is a Normalizer.
        self.extractor = LabelExtractor(labels, cast(Normalizer, self.normalizer))
        self._label_forms = {label: self.normalizer(label) for label in labels}

    # -- the two steps subclasses write --------------------------------------------------

    def _prepare(self, expected: tuple[str, ...]) -> R:
        """What comparing an output with the answer key ``expected`` needs (done once per key)."""
        raise NotImplementedError

    def _verdict(self, output: str, prepared: R, normalize: Callable[[str], str]) -> Verdict:
        """The verdict on one (non-failed) output against a prepared answer key.

        ``normalize`` is :attr:`normalizer`, or the run's shared memoised equal of it.
        """
        raise NotImplementedError

    def _failed_extra(self, prepared: R) -> Mapping[str, Any] | None:
        """``extra`` of the fail score of a failed request (same keys as a judged item's)."""
        return None

    def _no_answer(self, prepared: R) -> NoAnswer:
        """The verdict on an output in which no answer is found: fail, "no answer found"."""
        extra = self._failed_extra(prepared)
        if self.answer_extractor is not None:
            extra = {**(extra or {}), "extracted": None}
        return NoAnswer((False, 0.0, extra))

    def _judge(self, output: str, prepared: R, normalize: Callable[[str], str]) -> Verdict:
        """:meth:`_verdict` on the answer ``extract`` finds in ``output`` (or on ``output``)."""
        extractor = self.answer_extractor
        if extractor is None:
            return self._verdict(output, prepared, normalize)
        answer = extractor(output)
        if answer is None:
            return self._no_answer(prepared)
        verdict = self._verdict(answer, prepared, normalize)
        if type(verdict) is NoAnswer:
            return verdict
        ok, value, extra = verdict
        return (ok, value, {**(extra or {}), "extracted": answer})

    # -- scoring -------------------------------------------------------------------------

    def _failed_verdict(self, prepared: R) -> Verdict | None:
        """A failed request's verdict: fail, or ``None`` (skip) with ``count_failed=False``."""
        if not self.count_failed:
            return None
        return (False, 0.0, self._failed_extra(prepared))

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        """Score one item: compare its normalised output with its normalised valid answers.

        An item its harness rule decides (see :attr:`rules`) is scored by that rule instead.
        """
        expected = item.expected
        if not expected:
            return self.skip(NO_ANSWER_KEY)
        if self.rules != "itemscore":
            from itemscore.integrations.harness_rules import RULE_KEY

            rule = item.metadata.get(RULE_KEY)
            if rule is not None or self.rules == "harness":
                code, value, reason, extra = self._by_rule(item, rule)
                return ItemScore(
                    metric=self.label,
                    value=value,
                    status=_STATES[code],
                    reason=reason,
                    extra=extra or {},
                )
        prepared = self._prepare(expected)
        if item.output is None:
            verdict = self._failed_verdict(prepared)
            if verdict is None:
                return self.skip(FAILED_REASON)
        else:
            verdict = self._judge(item.output, prepared, self.normalizer)
        ok, value, extra = verdict
        if type(verdict) is NoAnswer:
            return ItemScore(
                metric=self.label,
                value=value,
                status=Status.FAIL,
                reason=NO_ANSWER_FOUND,
                extra=extra or {},
            )
        return self.ok(value, extra=extra) if ok else self.fail(value, extra=extra)

    def score_items(self, items: Sequence[ItemResult], ctx: MetricContext) -> ScoreColumn:
        """Score many items into one column; repeated answer keys and pairs are done once.

        The verdicts are the ones :meth:`score_item` gives, item for item; equal verdicts share
        one ``extra`` mapping (read-only by convention). No score object is built: the column
        holds state codes, values and extras.
        """
        prepare, failed = self._prepare, self._failed_verdict
        # Without `extract`, and unless a subclass finds answers itself, _verdict is the
        # judgment: one call less per item on the hot path.
        marks = self.answer_extractor is not None or self._finds_answers
        verdict_of = self._judge if marks else self._verdict
        normalize = ctx.normalizer(self.normalizer)
        prepared_cache: _Cache[tuple[str, ...], R]
        verdict_cache: _Cache[tuple[str | None, tuple[str, ...]], Verdict | None]
        if ctx.memo is None:  # this call only
            prepared_cache, verdict_cache = _Cache(), _Cache()
        else:  # the run's: a file scored chunk by chunk keeps what earlier chunks learned
            if ctx.label not in ctx.memo:
                ctx.memo[ctx.label] = (_Cache(_RUN_CACHE_LIMIT), _Cache(_RUN_CACHE_LIMIT))
            prepared_cache, verdict_cache = ctx.memo[ctx.label]
        prepared_by_key, verdicts = prepared_cache.entries, verdict_cache.entries
        # A metric without the rules pays no metadata lookup per item.
        rule_key: str | None = None
        if self.rules != "itemscore":
            from itemscore.integrations.harness_rules import RULE_KEY

            rule_key = RULE_KEY
        every_item_by_rule = self.rules == "harness"
        by_rule = self._by_rule
        states = bytearray()
        values: list[float | None] = []
        extras: list[Mapping[str, Any] | None] = []
        reasons_at: dict[int, str] = {}
        add_state, add_value, add_extra = states.append, values.append, extras.append
        ok_code, fail_code, skip_code = ScoreColumn.OK, ScoreColumn.FAIL, ScoreColumn.SKIP
        missing: Any = object()
        verdict: Verdict | None
        for index, item in enumerate(items):
            expected = item.expected
            if not expected:
                reasons_at[index] = NO_ANSWER_KEY
                verdict = None
            elif rule_key is not None and (
                every_item_by_rule
                or ((metadata := item.metadata) and metadata.get(rule_key) is not None)
            ):
                code, value, reason, extra = by_rule(item, item.metadata.get(rule_key))
                add_state(code)
                add_value(value)
                add_extra(extra)
                if reason is not None:
                    reasons_at[index] = reason
                continue
            else:
                output = item.output
                key = (output, expected)
                verdict_cache.lookups += 1
                verdict = verdicts.get(key, missing)
                if verdict is missing:
                    prepared_cache.lookups += 1
                    prepared = prepared_by_key.get(expected)
                    if prepared is None:
                        prepared = prepare(expected)
                        prepared_cache.add(expected, prepared)
                    verdict = (
                        failed(prepared)
                        if output is None
                        else verdict_of(output, prepared, normalize)
                    )
                    verdict_cache.add(key, verdict)
                if verdict is None:
                    reasons_at[index] = FAILED_REASON
                elif marks and type(verdict) is NoAnswer:
                    reasons_at[index] = NO_ANSWER_FOUND
            if verdict is None:
                add_state(skip_code)
                add_value(None)
                add_extra(None)
            else:
                ok, value, extra = verdict
                add_state(ok_code if ok else fail_code)
                add_value(value)
                add_extra(extra)
        reasons: list[str | None] | None = None
        if reasons_at:
            reasons = [None] * len(states)
            for index, reason in reasons_at.items():
                reasons[index] = reason
        return ScoreColumn(self.label, states, values, reasons, extras)


def _not_a_rule(rule: object) -> str:
    """Why metadata ``harness_rule`` that is no mapping decides nothing."""
    shown = repr(rule)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return (
        f"metadata 'harness_rule' must be a harness rule (a JSON object with 'kind', as a "
        f"harness-log reader writes it with rules='harness'), not {shown}; rename that column, "
        "or score with rules='itemscore'"
    )


# The states by column code (Status order is the code order), for building one score from a
# rule's verdict.
_STATES = dict(enumerate(Status))

K = TypeVar("K")
V = TypeVar("V")


class _Cache(Generic[K, V]):
    """A per-call memo that turns itself off when it does not pay.

    Class labels repeat and stay small. Unique answers (open QA) would only grow the heap. So
    after the first :data:`_CACHE_CHECK` entries the memo looks at how many lookups it served:
    it stays on when at least one in :data:`_CACHE_MIN_HIT_SHARE` did, and stops storing
    otherwise. On the QA benchmark, where 48% of items repeat an earlier (output, answer key)
    pair, the first 2,048 entries already see about 16% of lookups served. Past
    :data:`_CACHE_LIMIT` entries it stops growing but keeps serving what it holds.
    """

    __slots__ = ("checked", "enabled", "entries", "limit", "lookups")

    def __init__(self, limit: int = _CACHE_LIMIT) -> None:
        #: Past this many entries the memo keeps serving but stops growing.
        self.limit = limit
        self.entries: dict[K, V] = {}
        #: Lookups made (the caller counts them); each miss added one entry until the check.
        self.lookups = 0
        self.enabled = True
        self.checked = False

    def add(self, key: K, value: V) -> None:
        if not self.enabled:
            return
        entries = self.entries
        if len(entries) >= _CACHE_CHECK and not self.checked:
            self.checked = True
            lookups = self.lookups
            hits = lookups - len(entries)
            if hits * _CACHE_MIN_HIT_SHARE < lookups:
                self.enabled = False
                entries.clear()
                return
        if len(entries) < self.limit:
            entries[key] = value


class AnswerMatchMetric(NormalizedMetric[dict[str, str]]):
    """Correct when the normalised output equals one of the normalised valid answers.

    The shared core of ``exact_match`` and ``accuracy``: per item ``ok`` (1.0) or ``fail``
    (0.0), aggregated as the share of ok among scored items with a Wilson interval. With
    ``labels``, the output first goes through label extraction. Per-item ``extra``:
    ``normalized`` (the normalised output), ``matched`` (the valid answer it matched, as
    spelled in the answer key, or ``None``) and, with ``labels``, ``label`` (the label found
    in the output, or ``None``).

    An item that carries a harness rule (``metadata["harness_rule"]``, from a harness log read
    with ``rules="harness"``) is, under ``rules="auto"`` or ``"harness"``, scored by that rule:
    ``ok`` or ``fail`` as the harness scored it (``ok`` with the harness's value where it gave
    partial credit, which makes the measurement the mean of the values), ``skip`` where the
    harness left it unscored, ``error`` for a rule this version cannot apply. Its ``extra``:
    ``rule`` (the harness and the rule's kind, ``"lm-eval:exact_match"``) and ``matched`` (the
    valid answer the rule matched, or ``None``); a fail's reason is the reader's ``no_answer``
    when it gives one.

    Args:
        rules: Whose comparison decides: `auto` the harness's for an item read from a
            harness log with `rules=harness`, itemscore's for any other; `itemscore` always
            itemscore's; `harness` always the harness's (an item without a rule is an error,
            and the normalisation options are refused).
    """

    aggregation = "ratio"

    def _prepare(self, expected: tuple[str, ...]) -> dict[str, str]:
        """``{normalised answer: answer as given}``; the first of equal forms is kept."""
        forms: dict[str, str] = {}
        normalize = self.normalizer
        for answer in expected:
            forms.setdefault(normalize(answer), answer)
        return forms

    def _verdict(
        self, output: str, prepared: dict[str, str], normalize: Callable[[str], str]
    ) -> Verdict:
        normalized = normalize(output)
        extractor = self.extractor
        if extractor is None:
            matched = prepared.get(normalized)
            extra = {"normalized": normalized, "matched": matched}
        else:
            label = extractor.find(output)
            answer = normalized if label is None else self._label_forms[label]
            matched = prepared.get(answer)
            extra = {"normalized": normalized, "label": label, "matched": matched}
        if matched is None:
            return (False, 0.0, extra)
        return (True, 1.0, extra)

    def _failed_extra(self, prepared: dict[str, str]) -> Mapping[str, Any]:
        if self.extractor is None:
            return {"normalized": None, "matched": None}
        return {"normalized": None, "label": None, "matched": None}
