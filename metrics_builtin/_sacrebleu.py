"""What ``bleu``, ``chrf`` and ``ter`` share: sacrebleu's statistics, scored item by item.

sacrebleu computes a corpus score from per-sentence *sufficient statistics* (BLEU: hypothesis
and reference lengths, matched and total n-grams; chrF: character and word n-gram counts; TER:
edits and average reference length), summed over the corpus. These metrics keep the statistics
in each item's ``extra`` (``stats``, sacrebleu's list for that sentence, and ``refs``, its
number of references), so scoring is item by item (parallel, streamed, rescored like any other
metric) and :meth:`SacrebleuMetric.aggregate` sums them and asks sacrebleu for the score: the
number ``sacrebleu.corpus_bleu`` / ``corpus_chrf`` / ``corpus_ter`` gives on the same sentences,
to the last digit, on sacrebleu's 0-100 scale. Each item's value is its sentence-level score
(as ``sacrebleu.sentence_bleu`` / ``sentence_chrf`` / ``sentence_ter`` give it).

Intervals and significance tests resample the same statistics as sacrebleu's ``--paired-bs``
and ``--paired-ar`` do (:mod:`itemscore.metrics_builtin._resample`): with the same seed and
number of resamples, the same figures.

sacrebleu (the ``text`` extra) is imported when such a metric is configured, never
when metrics are listed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

from itemscore import (
    Estimate,
    ItemResult,
    ItemScore,
    Metric,
    MetricContext,
    OptionError,
    ScoreColumn,
)
from itemscore.metrics_builtin._comparison import FAILED_REASON, NO_ANSWER_KEY
from itemscore.metrics_builtin._extract import NO_ANSWER_FOUND, Pick, answer_extractor

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["PairedTest", "SacrebleuMetric", "import_sacrebleu"]

#: Bootstrap resamples of the measurement's interval (sacrebleu's ``--confidence-n``).
N_BOOTSTRAP = 1000
#: Resamples of the paired bootstrap test (sacrebleu's ``--paired-bs-n``).
N_PAIRED_BS = 1000
#: Trials of approximate randomisation (sacrebleu's ``--paired-ar-n``).
N_PAIRED_AR = 10000


def import_sacrebleu(metric_id: str) -> Any:
    """The ``sacrebleu`` module; a clear error naming the extra when it is not installed.

    Raises:
        ModuleNotFoundError: sacrebleu is missing.
    """
    try:
        import sacrebleu
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            f"The {metric_id} metric needs sacrebleu (the `text` extra), which is not installed.",
            name="sacrebleu",
        ) from exc
    return sacrebleu


@attrs.frozen(kw_only=True)
class PairedTest:
    """sacrebleu's paired significance test of system b against baseline a, on shared items."""

    #: The test: ``"paired-bs"`` (bootstrap resampling) or ``"paired-ar"`` (randomisation).
    method: str
    #: Corpus score of the baseline (side a) on the pairs scored on both sides.
    value_a: float | None
    #: Corpus score of the system (side b).
    value_b: float | None
    #: sacrebleu's p-value of "no difference".
    p_value: float | None
    #: Resamples (bootstrap) or trials (randomisation).
    n_resamples: int
    #: The seed of the random generator.
    seed: int
    #: Pairs scored on both sides.
    n_pairs: int
    #: sacrebleu's "μ" of the baseline: the mean of its resampled scores (bootstrap only).
    mean_a: float | None = None
    #: sacrebleu's "±" of the baseline: half the spread of its 95% interval.
    ci_a: float | None = None
    #: The system's "μ".
    mean_b: float | None = None
    #: The system's "±".
    ci_b: float | None = None


class SacrebleuMetric(Metric):
    """Base class of the metrics computed by sacrebleu from summed sentence statistics.

    Args:
        n_bootstrap: Bootstrap resamples of the interval (sacrebleu's `--confidence-n`); 1:
            no interval.
        count_failed: Score failed requests as an empty hypothesis. `false` leaves them out.
        extract: Score only the answer found in the output: a regex (its group is the
            answer), or a preset `answer_is`, `boxed`, `last_number`; an output without one
            is `fail` with the reason "no answer found".
        extract_pick: Which match of `extract` counts, `first` or `last`; none: `first` for a
            regex, `last` for a preset.
    """

    required_inputs = ("expected",)
    reproducibility_class = "deterministic"
    aggregation = "mean"  # unused: aggregate() is the corpus score
    value_bounds: ClassVar[tuple[float, float] | None] = (0.0, 100.0)

    #: The class in ``sacrebleu.metrics`` that computes the metric.
    sacrebleu_class: ClassVar[str]
    #: ``Measurement.extra`` names of the score object's attributes worth keeping.
    score_extras: ClassVar[Mapping[str, str]] = {}
    #: Resamples a paired comparison should draw: sacrebleu's ``--paired-bs-n`` default, so
    #: that a comparison reproduces its figures (read by a ``compare`` that honours it).
    paired_n_resamples: ClassVar[int] = N_PAIRED_BS

    def _setup(
        self,
        options: Mapping[str, Any],
        *,
        n_bootstrap: int,
        count_failed: bool,
        extract: str | None,
        extract_pick: Pick | None,
    ) -> None:
        """Check the options and build sacrebleu's metric once (subclasses call it)."""
        if n_bootstrap < 1:
            raise OptionError(
                f"Metric {self.metric_id!r}: `n_bootstrap` ({n_bootstrap}) must be at least 1 "
                "(1: no interval; sacrebleu's default is 1000).",
                metric_id=self.metric_id,
                option="n_bootstrap",
            )
        self.n_bootstrap = n_bootstrap
        self.count_failed = count_failed
        self.extract = extract
        self.extract_pick = extract_pick
        self.answer_extractor = answer_extractor(self.metric_id, extract, extract_pick)
        self._options = dict(options)
        self._sacrebleu: Any = None
        self._sentence: Any = None
        self._corpus()  # sacrebleu installed, and the options valid: said before any item

    # -- sacrebleu's objects (rebuilt in each process: they are not shipped to workers) ---

    def _corpus(self) -> Any:
        if self._sacrebleu is None:
            module = import_sacrebleu(self.metric_id)
            cls = getattr(module.metrics, self.sacrebleu_class)
            try:
                self._sacrebleu = cls(**self._options)
            except (AssertionError, ValueError, KeyError, ImportError) as exc:
                raise OptionError(
                    f"Metric {self.metric_id!r}: sacrebleu refused the options "
                    f"{self._options!r}: {type(exc).__name__}: {exc}",
                    metric_id=self.metric_id,
                ) from exc
        return self._sacrebleu

    def _sentence_metric(self) -> Any:
        """The sacrebleu metric that gives the sentence-level score (see subclasses)."""
        return self._corpus()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_sacrebleu"] = state["_sentence"] = None
        return state

    # -- scoring ---------------------------------------------------------------------------

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore | None:
        """Score one sentence: its statistics in ``extra``, its sentence score as the value."""
        return self.score_items([item], ctx)[0]

    def score_items(self, items: Sequence[ItemResult], ctx: MetricContext) -> ScoreColumn:
        """Score many sentences with one call into sacrebleu (as ``corpus_score`` makes it).

        A failed request is an empty hypothesis (``fail``), or ``skip`` with
        ``count_failed=False``; an output in which ``extract`` finds nothing is an empty
        hypothesis too, ``fail`` with the reason "no answer found".
        """
        n = len(items)
        states = bytearray([ScoreColumn.SKIP]) * n
        values: list[float | None] = [None] * n
        reasons: list[str | None] = [None] * n
        extras: list[Mapping[str, Any] | None] = [None] * n
        rows: list[int] = []
        hypotheses: list[str] = []
        references: list[tuple[str, ...]] = []
        extracted: list[str | None] = []
        extractor = self.answer_extractor
        for index, item in enumerate(items):
            expected = item.expected
            if not expected:
                reasons[index] = NO_ANSWER_KEY
                continue
            output = item.output
            answer: str | None = output
            if output is None:
                if not self.count_failed:
                    reasons[index] = FAILED_REASON
                    continue
                states[index] = ScoreColumn.FAIL
            elif extractor is not None:
                answer = extractor(output)
                if answer is None:
                    states[index] = ScoreColumn.FAIL
                    reasons[index] = NO_ANSWER_FOUND
                else:
                    states[index] = ScoreColumn.OK
            else:
                states[index] = ScoreColumn.OK
            rows.append(index)
            hypotheses.append("" if answer is None else answer)
            references.append(expected)
            extracted.append(answer)
        if rows:
            stats = self._statistics(hypotheses, references)
            sentence = self._sentence_metric()
            for position, index in enumerate(rows):
                row = stats[position]
                values[index] = float(sentence._compute_score_from_stats(list(row)).score)
                extra: dict[str, Any] = {"stats": row, "refs": len(references[position])}
                if extractor is not None:
                    extra["extracted"] = extracted[position]
                extras[index] = extra
        return ScoreColumn(
            self.label,
            states,
            values,
            reasons if any(r is not None for r in reasons) else None,
            extras,
        )

    def _statistics(
        self, hypotheses: Sequence[str], references: Sequence[tuple[str, ...]]
    ) -> list[list[Any]]:
        """sacrebleu's statistics of each sentence, computed as ``corpus_score`` computes them.

        References come as sacrebleu's streams (reference ``k`` of every sentence), padded with
        ``None`` where a sentence has fewer: sacrebleu leaves those out.
        """
        width = max(len(refs) for refs in references)
        streams = [
            [refs[k] if k < len(refs) else None for refs in references] for k in range(width)
        ]
        stats: list[list[Any]] = self._corpus()._extract_corpus_statistics(
            list(hypotheses), streams
        )
        return stats

    # -- aggregation -----------------------------------------------------------------------

    def _scored_stats(
        self, scores: Sequence[ItemScore | None]
    ) -> tuple[list[list[Any]], list[int], list[int]]:
        """The statistics of the scored items, their reference counts and their positions."""
        stats: list[list[Any]] = []
        refs: list[int] = []
        positions: list[int] = []
        if isinstance(scores, ScoreColumn):
            extras: Sequence[Mapping[str, Any] | None] = (
                scores.extras if scores.extras is not None else [None] * len(scores)
            )
            scored = [code <= ScoreColumn.FAIL for code in scores.states]
        else:
            extras = [None if s is None else s.extra for s in scores]
            scored = [s is not None and s.status.scored for s in scores]
        for index, (is_scored, extra) in enumerate(zip(scored, extras)):
            if not is_scored:
                continue
            if not extra or "stats" not in extra:
                raise ValueError(
                    f"The {self.metric_id} score of item {index} has no sentence statistics "
                    "(`extra['stats']`): it was not made by this metric; rescore the results."
                )
            stats.append(list(extra["stats"]))
            refs.append(int(extra.get("refs", 0)))
            positions.append(index)
        return stats, refs, positions

    def _corpus_score(self, stats: Sequence[Sequence[Any]]) -> float:
        """sacrebleu's corpus score of sentence statistics, summed in their order."""
        return float(self._corpus()._aggregate_and_compute([list(r) for r in stats]).score)

    def _result_extra(self, result: Any) -> dict[str, float]:
        """``Measurement.extra`` figures of sacrebleu's score object ``result``."""
        return {name: float(getattr(result, attr)) for name, attr in self.score_extras.items()}

    def _resampled_scores(
        self,
        arrays: Sequence[NDArray[np.generic]],
        n_resamples: int,
        seed: int,
    ) -> list[NDArray[np.float64]]:
        """Each system's score on every bootstrap resample (sacrebleu's, same seed and count)."""
        import numpy as np

        from itemscore.metrics_builtin._resample import bootstrap_sums

        compute = self._corpus()._compute_score_from_stats
        out: list[list[Any]] = [[] for _ in arrays]
        for block in bootstrap_sums(arrays, n_resamples, seed):
            for side, sums in zip(out, block):
                side.extend(compute(row.copy()).score for row in sums)
        # One array of sacrebleu's own scores, as sacrebleu makes it: chrF and TER score float32
        # sums in float32, and its mean and interval are then float32 computations too.
        return [np.array(side) for side in out]

    def aggregate(self, scores: Sequence[ItemScore], ctx: MetricContext) -> Estimate:
        """Corpus score of the summed statistics (sacrebleu), bootstrap interval; paired bootstrap.

        Paired comparison resamples the same statistics: sacrebleu's paired bootstrap for the
        interval of the difference, approximate randomisation for the p-value.

        The value is sacrebleu's corpus score of the scored items, in order. The interval
        (method ``"bootstrap"``) takes the order statistics of ``n_bootstrap`` resamples drawn
        as sacrebleu draws them with the run's seed (whole clusters with ``ctx.clusters``);
        ``extra`` keeps sacrebleu's "μ ± ci" as ``bootstrap_mean`` and ``bootstrap_ci``, the
        score's own figures, and sacrebleu's signature as the key ``signature[...]`` (1.0).
        """
        import numpy as np

        from itemscore.metrics_builtin._resample import (
            by_cluster,
            estimate_ci,
            order_statistic_interval,
        )

        stats, refs, positions = self._scored_stats(scores)
        if not stats:
            return Estimate(value=None, n=0, confidence=ctx.confidence)
        corpus = self._corpus()
        result = corpus._aggregate_and_compute([list(row) for row in stats])
        value = float(result.score)
        extra = self._result_extra(result)
        low = high = None
        method = "none"
        clusters = ctx.clusters
        if clusters is not None:
            clusters = [clusters[i] for i in positions]
        if self.n_bootstrap > 1:
            array = by_cluster(np.asarray(stats), clusters)
            (samples,) = self._resampled_scores([array], self.n_bootstrap, ctx.seed)
            low, high = order_statistic_interval(samples, ctx.confidence)
            mean, half = estimate_ci(samples)
            extra["bootstrap_mean"], extra["bootstrap_ci"] = mean, half
            method = "bootstrap" if array.shape[0] == len(stats) else "cluster-bootstrap"
        extra[f"signature[{self.signature(refs, ctx.seed)}]"] = 1.0
        return Estimate(
            value=value,
            low=low,
            high=high,
            n=len(stats),
            method=method,
            confidence=ctx.confidence,
            extra=extra,
        )

    def signature(self, refs: Sequence[int], seed: int | None = None) -> str:
        """sacrebleu's signature of a score over sentences with ``refs`` references each.

        ``nrefs`` is the common number of references, or ``var``; with a bootstrap interval
        the signature names its resamples (``bs``) and seed (``seed``), as sacrebleu's does.
        """
        corpus = self._corpus()
        counts = set(refs)
        state = dict(corpus.__dict__)
        state["num_refs"] = counts.pop() if len(counts) == 1 else -1
        if self.n_bootstrap > 1:
            state["n_bootstrap"] = self.n_bootstrap
            state["seed"] = seed
        return str(corpus._SIGNATURE_TYPE(state).format())

    # -- paired comparison -----------------------------------------------------------------

    def _paired_arrays(
        self,
        scores_a: Sequence[ItemScore | None],
        scores_b: Sequence[ItemScore | None],
        clusters: Sequence[str | None] | None,
    ) -> tuple[list[list[Any]], list[list[Any]], list[str | None] | None]:
        """Both sides' statistics on the pairs scored on both sides (and their clusters)."""
        stats_a, _, positions_a = self._scored_stats(scores_a)
        stats_b, _, positions_b = self._scored_stats(scores_b)
        where_b = {p: i for i, p in enumerate(positions_b)}
        pairs = [(i, where_b[p]) for i, p in enumerate(positions_a) if p in where_b]
        shared = [positions_a[i] for i, _ in pairs]
        picked = None if clusters is None else [clusters[p] for p in shared]
        return [stats_a[i] for i, _ in pairs], [stats_b[j] for _, j in pairs], picked

    def paired_bootstrap(
        self,
        scores_a: Sequence[ItemScore | None],
        scores_b: Sequence[ItemScore | None],
        ctx: MetricContext,
        *,
        n_resamples: int = N_PAIRED_BS,
        clusters: Sequence[str | None] | None = None,
    ) -> tuple[float | None, float | None, NDArray[np.float64], NDArray[np.float64]]:
        """Both sides' corpus scores and their scores on the same bootstrap resamples.

        ``scores_a[i]`` and ``scores_b[i]`` score the same item; pairs not scored on both
        sides are left out. The resamples are sacrebleu's ``--paired-bs`` ones for the seed
        ``ctx.seed`` (whole clusters with ``clusters``).

        Returns:
            ``(score_a, score_b, samples_a, samples_b)``, the samples ``n_resamples`` long.
        """
        value_a, value_b, samples_a, samples_b, _ = self._paired_resamples(
            scores_a, scores_b, ctx, n_resamples, clusters
        )
        return value_a, value_b, samples_a, samples_b

    def _paired_resamples(
        self,
        scores_a: Sequence[ItemScore | None],
        scores_b: Sequence[ItemScore | None],
        ctx: MetricContext,
        n_resamples: int,
        clusters: Sequence[str | None] | None,
    ) -> tuple[float | None, float | None, NDArray[np.float64], NDArray[np.float64], int]:
        import numpy as np

        from itemscore.metrics_builtin._resample import by_cluster

        stats_a, stats_b, picked = self._paired_arrays(scores_a, scores_b, clusters)
        if not stats_a:
            empty = np.full(n_resamples, np.nan)
            return None, None, empty, empty.copy(), 0
        value_a, value_b = self._corpus_score(stats_a), self._corpus_score(stats_b)
        arrays = [by_cluster(np.asarray(s), picked) for s in (stats_a, stats_b)]
        samples_a, samples_b = self._resampled_scores(arrays, n_resamples, ctx.seed)
        return value_a, value_b, samples_a, samples_b, len(stats_a)

    def paired_bs(
        self,
        scores_a: Sequence[ItemScore | None],
        scores_b: Sequence[ItemScore | None],
        ctx: MetricContext,
        *,
        n_resamples: int = N_PAIRED_BS,
        clusters: Sequence[str | None] | None = None,
    ) -> PairedTest:
        """sacrebleu's paired bootstrap resampling test (``--paired-bs``), b against a.

        The p-value, and each side's "μ ± ci", are sacrebleu's for the same seed
        (``ctx.seed``; sacrebleu's default is 12345) and number of resamples.
        """
        from itemscore.metrics_builtin._resample import estimate_ci, paired_bs_p_value

        value_a, value_b, samples_a, samples_b, n_pairs = self._paired_resamples(
            scores_a, scores_b, ctx, n_resamples, clusters
        )
        if value_a is None or value_b is None:
            return PairedTest(
                method="paired-bs", value_a=None, value_b=None, p_value=None,
                n_resamples=n_resamples, seed=ctx.seed, n_pairs=0,
            )  # fmt: skip
        mean_a, ci_a = estimate_ci(samples_a)
        mean_b, ci_b = estimate_ci(samples_b)
        return PairedTest(
            method="paired-bs",
            value_a=value_a,
            value_b=value_b,
            p_value=paired_bs_p_value(samples_a, samples_b, abs(value_a - value_b)),
            n_resamples=n_resamples,
            seed=ctx.seed,
            n_pairs=n_pairs,
            mean_a=mean_a,
            ci_a=ci_a,
            mean_b=mean_b,
            ci_b=ci_b,
        )

    def paired_ar(
        self,
        scores_a: Sequence[ItemScore | None],
        scores_b: Sequence[ItemScore | None],
        ctx: MetricContext,
        *,
        n_trials: int = N_PAIRED_AR,
        clusters: Sequence[str | None] | None = None,
    ) -> PairedTest:
        """sacrebleu's paired approximate randomisation test (``--paired-ar``), b against a.

        Each trial swaps every item (every cluster, with ``clusters``) between the two systems
        with probability 1/2; the p-value is sacrebleu's for the same seed and trials.
        """
        import numpy as np

        from itemscore.metrics_builtin._resample import ar_p_value, by_cluster, swapped_sums

        stats_a, stats_b, picked = self._paired_arrays(scores_a, scores_b, clusters)
        if not stats_a:
            return PairedTest(
                method="paired-ar", value_a=None, value_b=None, p_value=None,
                n_resamples=n_trials, seed=ctx.seed, n_pairs=0,
            )  # fmt: skip
        value_a, value_b = self._corpus_score(stats_a), self._corpus_score(stats_b)
        array_a = by_cluster(np.asarray(stats_a), picked)
        array_b = by_cluster(np.asarray(stats_b), picked)
        aggregate = self._corpus()._aggregate_and_compute
        trials_a: list[Any] = []
        trials_b: list[Any] = []
        for sums_a, sums_b in swapped_sums(array_a, array_b, n_trials, ctx.seed):
            # sacrebleu scores each trial's row as a one-sentence corpus; so do we.
            trials_a.extend(aggregate(row[np.newaxis, :]).score for row in sums_a)
            trials_b.extend(aggregate(row[np.newaxis, :]).score for row in sums_b)
        p_value = ar_p_value(np.array(trials_a), np.array(trials_b), abs(value_a - value_b))
        return PairedTest(
            method="paired-ar",
            value_a=value_a,
            value_b=value_b,
            p_value=p_value,
            n_resamples=n_trials,
            seed=ctx.seed,
            n_pairs=len(stats_a),
        )

    def paired_p_value(
        self,
        scores_a: Sequence[ItemScore | None],
        scores_b: Sequence[ItemScore | None],
        ctx: MetricContext,
        *,
        clusters: Sequence[str | None] | None = None,
    ) -> tuple[float | None, str]:
        """The p-value a comparison should report, and its method: approximate randomisation.

        sacrebleu recommends ``--paired-ar`` for the p-value (it is the default test of its
        ``--paired`` mode); the interval of the difference comes from :meth:`paired_bootstrap`.
        """
        test = self.paired_ar(scores_a, scores_b, ctx, clusters=clusters)
        return test.p_value, "paired-ar"
