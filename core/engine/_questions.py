"""Questions: a run table's attempts grouped by question, and each label's scores reduced.

Items with the same ``model`` and ``id`` are attempts at one question. :class:`Questions`
numbers the questions of a :class:`~._table.RunTable` in order of first appearance and sorts
each question's attempts by ``attempt``; :class:`LabelAttempts` holds one label's *scored*
attempts (ok and fail) question by question, with what every measurement records of them
(attempts per question, the within-question variance, the agreement of the attempts); and
:meth:`LabelAttempts.reduce` makes one reducer's question-level score column, in the run
table's own Arrow shape, so that measurements, groups and comparisons work on questions as
they work on items.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np
import pyarrow as pa

from .._columns import score_type
from .._reducers import Attempts, ReducerSpec
from ._table import RunTable

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "LabelAttempts",
    "Questions",
    "attempt_extra",
    "question_columns",
    "question_error_reasons",
    "question_frame",
]

_OK, _FAIL, _SKIP, _ERROR = 0, 1, 2, 3


def _codes(column: pa.ChunkedArray | pa.Array) -> tuple[NDArray[np.int64], int]:
    """Dictionary codes of a string column (nulls share one code), and how many codes."""
    import pyarrow.compute as pc

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    encoded = column.dictionary_encode()
    size = len(encoded.dictionary)
    indices = pc.fill_null(encoded.indices, size) if encoded.null_count else encoded.indices
    return np.asarray(indices.to_numpy(zero_copy_only=False), dtype=np.int64), size + 1


def _in_order(of_row: NDArray[np.intp], attempt: NDArray[np.int64]) -> bool:
    """Whether rows already come question by question, attempts in increasing order."""
    if of_row.size < 2:
        return True
    step = np.diff(of_row)
    same = step == 0
    return bool(np.all(step >= 0) and np.all(np.diff(attempt)[same] > 0))


def _first_per_owner(owner: NDArray[np.intp], n: int) -> NDArray[np.intp]:
    """Per owner ``0..n-1``, the first position where it appears in ``owner`` (``-1``: none)."""
    out = np.full(n, -1, dtype=np.intp)
    # Written backwards, so the first position of each owner is the one that stays.
    positions = np.arange(owner.size, dtype=np.intp)
    out[owner[::-1]] = positions[::-1]
    return out


@attrs.frozen(eq=False)
class Questions:
    """The questions of a run table: one per distinct ``(model, id)``, in order of appearance."""

    #: How many questions.
    n: int
    #: The question of each table row.
    of_row: NDArray[np.intp]
    #: The table's rows sorted by question, then by attempt number.
    order: NDArray[np.intp]
    #: Question ``q``'s rows are ``order[offsets[q]:offsets[q + 1]]``.
    offsets: NDArray[np.intp]
    #: The table row of each question's first attempt (whose group and cluster it takes).
    first_row: NDArray[np.intp]
    #: Whether any item has an ``attempt``.
    has_attempts: bool
    #: The key columns of the questions (``attempt`` null), one row per question.
    keys: pa.Table

    @classmethod
    def of(cls, table: RunTable) -> Questions:
        """The questions of ``table``."""
        n_rows = len(table)
        has_attempts = table.has("attempt")
        if not has_attempts:
            # Ids are unique per model without attempts: every item is a question of its own.
            identity = np.arange(n_rows, dtype=np.intp)
            offsets = np.arange(n_rows + 1, dtype=np.intp)
            return cls(n_rows, identity, identity, offsets, identity, False, table.keys)
        ids, n_ids = _codes(table.keys.column("id"))
        if table.has("model"):
            models, _ = _codes(table.keys.column("model"))
            combined = models * n_ids + ids
        else:
            combined = ids
        _, first, inverse = np.unique(combined, return_index=True, return_inverse=True)
        by_appearance = np.argsort(first, kind="stable")
        rank = np.empty(by_appearance.size, dtype=np.intp)
        rank[by_appearance] = np.arange(by_appearance.size, dtype=np.intp)
        of_row = rank[inverse.reshape(-1)]
        attempt = table.keys.column("attempt").to_numpy(zero_copy_only=False)
        attempt = np.where(np.isnan(attempt.astype(np.float64)), -1, attempt).astype(np.int64)
        if _in_order(of_row, attempt):  # each question's attempts together, in order
            order = np.arange(n_rows, dtype=np.intp)
        else:
            order = np.lexsort((np.arange(n_rows), attempt, of_row)).astype(np.intp)
        n = int(by_appearance.size)
        offsets = np.zeros(n + 1, dtype=np.intp)
        np.cumsum(np.bincount(of_row, minlength=n), out=offsets[1:])
        first_row = first[by_appearance].astype(np.intp)
        keys = table.keys.take(pa.array(first_row, pa.int64()))
        keys = keys.set_column(
            keys.schema.get_field_index("attempt"), "attempt", pa.nulls(n, pa.int64())
        )
        return cls(n, of_row, order, offsets, first_row, has_attempts, keys)

    def table(self, scores: Mapping[str, pa.StructArray]) -> RunTable:
        """A run table of the questions (no items kept) with question-level ``scores``."""
        return RunTable(self.keys, scores, None)

    def sizes(self) -> NDArray[np.intp]:
        """Attempts per question, every state counted."""
        return np.diff(self.offsets)


@attrs.frozen(eq=False)
class LabelAttempts:
    """One label's scored attempts, question by question, and what is recorded of them.

    Build one with :meth:`of`. Arrays of one entry per question have ``questions.n`` entries.
    """

    #: The questions.
    questions: Questions
    #: The label.
    label: str
    #: The attempt-level score column (the run table's).
    column: pa.StructArray
    #: The table row of each scored attempt, question by question, in attempt order.
    rows: NDArray[np.intp]
    #: The questions with at least one scored attempt.
    active: NDArray[np.intp]
    #: The scored attempts of the active questions, as reducers receive them.
    attempts: Attempts
    #: Scored attempts per question (0 where none).
    sizes: NDArray[np.intp]
    #: Per question: the state when it has no scored attempt (skip, or error when any attempt
    #: errored), else -1; and the table row whose reason it takes.
    empty_state: NDArray[np.int8]
    empty_row: NDArray[np.intp]
    #: Per question: the mean credit of its attempts (NaN: none).
    mean: NDArray[np.float64]
    #: Per question: the unbiased variance of its attempts' credit (NaN: fewer than 2).
    within: NDArray[np.float64]
    #: Per question: the share of its attempts that agree with the most frequent verdict
    #: (ok or fail for a binary metric, the value otherwise); NaN with fewer than 2 attempts.
    agreement: NDArray[np.float64]

    @classmethod
    def of(
        cls,
        questions: Questions,
        table: RunTable,
        label: str,
        *,
        binary: bool,
        normalizer: Callable[[str], str] | None = None,
        codings: dict[Any, Any] | None = None,
    ) -> LabelAttempts:
        """``label``'s attempts in ``table``; ``binary``: the metric says right or wrong.

        ``codings``: where the outputs' answer codes are kept for the other labels of the
        same table (a dict per table; ``None``: for this label only).
        """
        kept: dict[Any, Any] = {} if codings is None else codings
        column = table.scores[label]
        arrow = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
        if not isinstance(arrow, pa.StructArray):  # no rows
            arrow = pa.array([], type=score_type())
        codes = table.codes(label)
        values = table.values(label)
        n = questions.n
        order = questions.order
        sorted_codes = codes[order]
        owner = questions.of_row[order]
        scored = sorted_codes <= _FAIL
        rows = order[scored]
        owner_scored = owner[scored]
        sizes = np.bincount(owner_scored, minlength=n).astype(np.intp)
        active = np.flatnonzero(sizes > 0).astype(np.intp)
        offsets = np.zeros(active.size + 1, dtype=np.intp)
        np.cumsum(sizes[active], out=offsets[1:])
        ok = codes[rows] == _OK
        attempt_values = values[rows]

        def answers() -> NDArray[np.int64]:
            return _answer_codes(table, arrow, rows, normalizer, kept)

        attempts = Attempts(offsets, ok, attempt_values, binary, answers)
        empty_state = np.full(n, -1, dtype=np.int8)
        empty_row = np.full(n, -1, dtype=np.intp)
        empty = sizes == 0
        if empty.any():
            first_error = _first_per_owner(owner[sorted_codes == _ERROR], n)
            error_rows = order[sorted_codes == _ERROR]
            first_skip = _first_per_owner(owner[sorted_codes == _SKIP], n)
            skip_rows = order[sorted_codes == _SKIP]
            errs = empty & (first_error >= 0)
            empty_state[errs] = _ERROR
            empty_row[errs] = error_rows[first_error[errs]]
            skips = empty & ~errs & (first_skip >= 0)
            empty_state[skips] = _SKIP
            empty_row[skips] = skip_rows[first_skip[skips]]
        mean, within, agreement = _question_stats(attempts, active, n)
        return cls(
            questions, label, arrow, rows, active, attempts, sizes, empty_state, empty_row,
            mean, within, agreement,
        )  # fmt: skip

    def reduce(self, spec: ReducerSpec) -> tuple[pa.StructArray, bool]:
        """``spec``'s question-level scores, as one :func:`score_type` column.

        Also whether they are attempts' own scores (the reducer picked one per question).

        Raises:
            Exception: whatever the reducer raised, or a ``TypeError`` for what it returned
                (the caller makes it the measurement's error).
        """
        n = self.questions.n
        status = np.full(n, _ERROR, dtype=np.int8)
        value = np.full(n, np.nan)
        reasons: list[str | None] = [None] * n
        picked_rows = np.full(n, -1, dtype=np.int64)
        result = spec(self.attempts)
        active = self.active
        if result.dtype.kind == "f":
            ok = ~np.isnan(result)
            where = active[ok]
            value[where] = result[ok]
            status[where] = np.where(result[ok] > 0, _OK, _FAIL)
            missing = active[~ok]
        else:
            ok = result >= 0
            where = active[ok]
            rows = self.rows[result[ok]]
            picked_rows[where] = rows
            codes = self.column.field("status").to_numpy(zero_copy_only=False)
            status[where] = codes[rows]
            values = self.column.field("value").to_numpy(zero_copy_only=False)
            value[where] = values[rows]
            missing = active[~ok]
        for q in missing.tolist():
            reasons[q] = f"the reducer {spec.name!r} gave this question no score"
        if spec.k is not None:
            few = active[self.sizes[active] < spec.k]
            status[few] = _ERROR
            value[few] = np.nan
            picked_rows[few] = -1
            for q in few.tolist():
                count = int(self.sizes[q])
                reasons[q] = (
                    f"{spec.name} needs at least {spec.k} scored attempts; this question has "
                    f"{count}"
                )
        empty = np.flatnonzero(self.empty_state >= 0)
        status[empty] = self.empty_state[empty]
        if empty.size:
            texts = self.column.field("reason").take(pa.array(self.empty_row[empty])).to_pylist()
            for q, text in zip(empty.tolist(), texts):
                reasons[q] = text
        picked = picked_rows >= 0
        extra = pa.nulls(n, pa.string())
        if picked.any():
            indices = pa.array(picked_rows, pa.int64(), mask=~picked)
            extra = self.column.field("extra").take(indices)
            for q, text in zip(
                np.flatnonzero(picked).tolist(),
                self.column.field("reason").take(pa.array(picked_rows[picked])).to_pylist(),
            ):
                if text is not None:
                    reasons[q] = text
        unscored = status >= _SKIP
        column = pa.StructArray.from_arrays(
            [
                pa.array(status, pa.int8()),
                pa.array(value, pa.float64(), mask=unscored | np.isnan(value)),
                pa.array(reasons, pa.string()),
                extra,
            ],
            fields=list(score_type()),
        )
        return column, result.dtype.kind != "f"


def _question_stats(
    attempts: Attempts, active: NDArray[np.intp], n: int
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Per question: mean credit, unbiased within-question variance, agreement."""
    mean = np.full(n, np.nan)
    within = np.full(n, np.nan)
    agreement = np.full(n, np.nan)
    if active.size == 0:
        return mean, within, agreement
    credit = attempts.credit
    sizes = attempts.sizes
    offsets = attempts.offsets
    sums = np.add.reduceat(credit, offsets[:-1])
    means = sums / sizes
    deviations = credit - means[attempts.question]
    squares = np.add.reduceat(deviations * deviations, offsets[:-1])
    several = sizes >= 2
    mean[active] = means
    spread = np.full(active.size, np.nan)
    spread[several] = squares[several] / (sizes[several] - 1)
    within[active] = spread
    if attempts.binary:
        right = attempts.successes
        agree = np.maximum(right, sizes - right) / sizes
    else:
        agree = _mode_share(credit, attempts.question, sizes)
    agree = np.where(several, agree, np.nan)
    agreement[active] = agree
    return mean, within, agreement


def _mode_share(
    values: NDArray[np.float64], question: NDArray[np.intp], sizes: NDArray[np.intp]
) -> NDArray[np.float64]:
    """Per question, the share of its attempts equal to its most frequent value."""
    order = np.lexsort((values, question))
    q_sorted, v_sorted = question[order], values[order]
    starts = np.ones(order.size, dtype=bool)
    starts[1:] = (q_sorted[1:] != q_sorted[:-1]) | (v_sorted[1:] != v_sorted[:-1])
    heads = np.flatnonzero(starts)
    runs = np.diff(np.append(heads, order.size))
    best = np.zeros(sizes.size, dtype=np.int64)
    np.maximum.at(best, q_sorted[heads], runs)
    return best / sizes


def _answer_codes(
    table: RunTable,
    column: pa.StructArray,
    rows: NDArray[np.intp],
    normalizer: Callable[[str], str] | None,
    codings: dict[Any, Any],
) -> NDArray[np.int64]:
    """Each scored attempt's normalised answer as a code (see :meth:`Attempts.answers`).

    Every distinct text is normalised once; the metrics of a run whose normalisers are equal
    share one coding of the outputs, kept in ``codings`` (one dict per run table).
    """
    import json

    from ..text import Normalizer

    normalize = normalizer if callable(normalizer) else Normalizer()
    out = _output_codes(table, normalize, codings)[rows]
    extras = column.field("extra")
    if extras.null_count < len(extras) and rows.size:
        import pyarrow.compute as pc

        # Scores repeat their extra texts: look for an extracted answer in each text once.
        encoded = extras.dictionary_encode()
        texts = encoded.dictionary
        marked = np.flatnonzero(
            np.asarray(pc.match_substring(texts, '"extracted"').to_numpy(zero_copy_only=False))
        )
        if marked.size:
            memo = codings.setdefault(("normal", normalize), {})
            of_text = np.full(len(texts), -1, dtype=np.int64)
            for position, text in zip(marked.tolist(), texts.take(pa.array(marked)).to_pylist()):
                found = json.loads(text)
                if "extracted" in found:
                    of_text[position] = _code_of(found["extracted"], normalize, memo)
            at = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False)[rows]
            extracted = np.where(at >= 0, of_text[np.maximum(at, 0)], -1)
            out = np.where(extracted >= 0, extracted, out)
    return out


def _code_of(answer: Any, normalize: Callable[[str], str], memo: dict[str, int]) -> int:
    """The code of one answer in the coding ``memo`` (normalised text -> code; 0: none)."""
    if not isinstance(answer, str):
        return 0
    return memo.setdefault(normalize(answer), len(memo) + 1)


def _output_codes(
    table: RunTable, normalize: Callable[[str], str], codings: dict[Any, Any]
) -> NDArray[np.int64]:
    """The code of every row's output under ``normalize`` (0: a failed request)."""
    found = codings.get(("codes", normalize))
    if found is not None:
        return found  # type: ignore[no-any-return]
    encoded = codings.get("texts")
    if encoded is None:
        listed = table.items.listed if table.items is not None else None
        if listed is not None:  # items given from Python: read the field at C speed
            import operator

            outputs = list(map(operator.attrgetter("output"), listed))
        else:
            (outputs,) = table.item_fields(("output",))
        encoded = codings["texts"] = pa.array(outputs, pa.string()).dictionary_encode()
    memo = codings.setdefault(("normal", normalize), {})
    uniques = encoded.dictionary.to_pylist()
    of_unique = np.fromiter(
        (_code_of(text, normalize, memo) for text in uniques), np.int64, len(uniques)
    )
    indices = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False)
    codes = np.where(indices >= 0, of_unique[np.maximum(indices, 0)] if len(uniques) else 0, 0)
    codes = codings[("codes", normalize)] = np.asarray(codes, dtype=np.int64)
    return codes


def attempt_extra(
    attempts: LabelAttempts, questions: NDArray[np.intp], confidence: float
) -> dict[str, float]:
    """What a measurement over ``questions`` records of their attempts, for its ``extra``.

    ``n_questions``, ``n_attempts`` (scored attempts), ``attempts_min``, ``attempts_max``;
    over the questions with two or more scored attempts: ``within_var`` (the mean unbiased
    within-question variance of the attempts' credit), ``within_share`` (the share of the
    variance of the question means that the within-question variance contributes, Miller
    2024 §4: ``mean(var_q / n_q) / var(mean_q)``, clipped to [0, 1]; what more attempts per
    question could still remove), ``agreement`` (the mean share of a question's attempts
    that agree with its most frequent verdict) with ``agreement_low``/``agreement_high``.
    """
    from .. import aggregate

    sizes = attempts.sizes[questions]
    sizes = sizes[sizes > 0]
    out: dict[str, float] = {"n_questions": float(questions.size)}
    if sizes.size == 0:
        return out
    out["n_attempts"] = float(sizes.sum())
    out["attempts_min"] = float(sizes.min())
    out["attempts_max"] = float(sizes.max())
    several = questions[attempts.sizes[questions] >= 2]
    if several.size == 0:
        return out
    within = attempts.within[several]
    out["within_var"] = float(within.mean())
    if several.size >= 2:
        total = float(np.var(attempts.mean[several], ddof=1))
        part = float(np.mean(within / attempts.sizes[several]))
        if total > 0:
            out["within_share"] = min(max(part / total, 0.0), 1.0)
        elif part == 0:
            out["within_share"] = 0.0
    agree = aggregate.mean(attempts.agreement[several], confidence=confidence, bounds=(0.0, 1.0))
    if agree.value is not None:
        out["agreement"] = float(agree.value)
        if agree.low is not None and agree.high is not None:
            out["agreement_low"], out["agreement_high"] = float(agree.low), float(agree.high)
    return {k: v for k, v in out.items() if math.isfinite(v)}


def question_columns(result: Any) -> dict[str, list[Any]]:
    """The columns of ``RunResult.questions_df()``: one row per question of ``result``.

    Each item-level label's metric is configured again from the result's configuration to
    learn whether it says right or wrong; one that is not installed here is taken as right
    or wrong when its headline measurement is a ratio.
    """
    table = result.table
    questions = Questions.of(table)
    found: list[LabelAttempts] = []
    for entry in result.metric_configs:
        label = entry["label"]
        if label not in table.scores:
            continue
        shape = _label_shape(result, entry)
        if shape is None:
            continue
        binary, normalizer = shape
        found.append(
            LabelAttempts.of(questions, table, label, binary=binary, normalizer=normalizer)
        )
    return question_frame(questions, found)


def _label_shape(result: Any, entry: Mapping[str, Any]) -> tuple[bool, Any] | None:
    """Whether a saved label's metric says right or wrong, and its normaliser.

    ``None`` for a corpus metric (no score per question). A metric that is not installed
    here is taken as right or wrong when its headline measurement is a ratio.
    """
    from .._plan import plan_metrics, saved_spec

    label = entry["label"]
    try:
        metric = plan_metrics([saved_spec(entry)])[0].metric
        if metric.is_corpus:
            return None
        return metric.aggregation == "ratio", getattr(metric, "normalizer", None)
    except Exception:  # noqa: BLE001 - not installed here: what the measurement says
        headline = result.measurements.get(f"{result.suite_id}.{label}")
        return headline is not None and headline.aggregation == "ratio", None


def question_error_reasons(result: Any, label: str) -> list[tuple[str | None, str]] | None:
    """``(model, reason)`` of each question in error in ``label``'s headline measurement.

    With attempts (or a first reducer other than ``mean``) the headline counts questions,
    whose reasons are those of the reduced scores ("pass@5 needs at least 5 scored
    attempts; this question has 3"), kept by no table: they are made again here. ``None``
    when the headline counts the run table's own items (their reasons are the table's).
    """
    from .._reducers import resolve_reducer

    table = result.table
    first = resolve_reducer(result.settings.reduce[0])
    if label not in table.scores or (first.name == "mean" and not table.has("attempt")):
        return None
    entry = next((e for e in result.metric_configs if e.get("label") == label), None)
    shape = None if entry is None else _label_shape(result, entry)
    if shape is None:
        return None
    binary, normalizer = shape
    values = table.values(label)
    # Partial credit among a right-or-wrong metric's values (a harness's): measured as values.
    partial = bool(np.any((values > 0.0) & (values < 1.0)))
    questions = Questions.of(table)
    attempts = LabelAttempts.of(
        questions, table, label, binary=binary and not partial, normalizer=normalizer
    )
    reduced, _ = attempts.reduce(first)
    status = reduced.field("status").to_numpy(zero_copy_only=False)
    wrong = np.flatnonzero(status == _ERROR)
    reasons = reduced.field("reason").take(pa.array(wrong)).to_pylist()
    models = questions.keys.column("model").take(pa.array(wrong)).to_pylist()
    return [(model, reason or "no reason given") for model, reason in zip(models, reasons)]


def question_frame(questions: Questions, attempts: Sequence[LabelAttempts]) -> dict[str, list[Any]]:
    """One row per question: its keys, and per label its attempts, mean and agreement."""
    keys = questions.keys
    out: dict[str, list[Any]] = {
        "id": keys.column("id").to_pylist(),
        "model": keys.column("model").to_pylist(),
        "group": keys.column("group").to_pylist(),
        "cluster": keys.column("cluster").to_pylist(),
        "attempts": questions.sizes().tolist(),
    }
    for label in attempts:
        out[f"{label.label}:attempts"] = label.sizes.tolist()
        out[f"{label.label}:mean"] = _nan_none(label.mean)
        out[f"{label.label}:agreement"] = _nan_none(label.agreement)
    return out


def _nan_none(values: NDArray[np.float64]) -> list[float | None]:
    return [None if math.isnan(v) else float(v) for v in values.tolist()]
