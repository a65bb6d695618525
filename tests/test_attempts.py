"""Attempts: the question is the unit of every measurement, interval, group and comparison."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from click.testing import CliRunner

import itemscore
from itemscore import ItemResult, compare, score
from itemscore.cli import cli

HARNESS = Path(__file__).parent / "data" / "harness"
EPOCHS_LOG = HARNESS / "epochs" / "epochs_qa_scripted-a.eval"


def attempts_items(
    right: list[list[bool]], model: str | None = None, groups: list[str] | None = None
) -> list[ItemResult]:
    """Items whose attempts are right (output "yes") or wrong ("no"), question by question."""
    return [
        ItemResult(
            id=f"q{q}",
            output="yes" if r else "no",
            expected="yes",
            attempt=j + 1,
            model=model,
            group=None if groups is None else groups[q],
        )
        for q, rows in enumerate(right)
        for j, r in enumerate(rows)
    ]


def random_right(seed: int, n: int, low: int = 2, high: int = 6) -> list[list[bool]]:
    rng = np.random.default_rng(seed)
    return [list(rng.random(int(rng.integers(low, high + 1))) < rng.random()) for _ in range(n)]


# -- a run without attempts ----------------------------------------------------------------------


def test_a_run_without_attempts_is_measured_exactly_as_before() -> None:
    """No attempt, default reducer: Wilson over items (statsmodels), no attempt keys in extra."""
    from statsmodels.stats.proportion import proportion_confint

    items = [
        ItemResult(id=str(i), output="yes" if i % 3 else "no", expected="yes") for i in range(30)
    ]
    m = score(items, ["exact_match"]).measurements["default.exact_match"]
    low, high = proportion_confint(20, 30, method="wilson")
    assert (m.value, m.n, m.aggregation) == (20 / 30, 30, "ratio")
    assert (m.ci_low, m.ci_high) == pytest.approx((low, high), abs=1e-12)
    assert not [key for key in m.extra if "attempt" in key or "question" in key or "reducer" in key]
    assert set(m.extra) == {"coverage", "coverage_min"}  # the interval's coverage receipt


# -- the question is the unit ------------------------------------------------------------------


def test_n_counts_questions_and_the_interval_rests_on_their_shares() -> None:
    """The mean of the questions' shares, with the normal interval over questions (statsmodels)."""
    from statsmodels.stats.weightstats import DescrStatsW

    right = random_right(1, 40)
    shares = np.array([np.mean(r) for r in right])
    m = score(attempts_items(right), ["exact_match"]).measurements["default.exact_match"]
    low, high = DescrStatsW(shares).zconfint_mean(alpha=0.05)
    assert m.value == pytest.approx(shares.mean(), abs=1e-12)
    assert (m.ci_low, m.ci_high) == pytest.approx((max(low, 0), min(high, 1)), abs=1e-12)
    assert m.n == 40
    assert sum(m.counts.values()) == 40
    assert m.aggregation == "mean"
    sizes = [len(r) for r in right]
    assert m.extra["n_questions"] == 40
    assert m.extra["n_attempts"] == sum(sizes)
    assert (m.extra["attempts_min"], m.extra["attempts_max"]) == (min(sizes), max(sizes))
    assert m.extra["reducer[mean]"] == 1.0


def test_the_within_question_variance_and_its_share_follow_miller() -> None:
    """within_var is the attempts' mean unbiased variance; within_share its part of Var(x̄).

    Miller (2024), section 4: the variance of a question's mean is Var(x) + E[σ²/K].
    """
    right = random_right(2, 50)
    m = score(attempts_items(right), ["exact_match"]).measurements["default.exact_match"]
    within = np.array([np.var(np.array(r, float), ddof=1) for r in right])
    sizes = np.array([len(r) for r in right])
    means = np.array([np.mean(r) for r in right])
    assert m.extra["within_var"] == pytest.approx(within.mean(), abs=1e-12)
    share = np.mean(within / sizes) / np.var(means, ddof=1)
    assert m.extra["within_share"] == pytest.approx(min(share, 1.0), abs=1e-12)


def test_agreement_is_the_share_of_attempts_that_agree_with_the_majority_verdict() -> None:
    """Per question max(c, n - c) / n; the measurement holds their mean with its interval."""
    right = [[True, True, False], [False, False, False, True], [True, False]]
    result = score(attempts_items(right), ["exact_match"])
    m = result.measurements["default.exact_match"]
    per_question = [2 / 3, 3 / 4, 1 / 2]
    assert m.extra["agreement"] == pytest.approx(np.mean(per_question), abs=1e-12)
    assert m.extra["agreement_low"] < m.extra["agreement"] < m.extra["agreement_high"]
    frame = result.questions_df()
    assert frame["exact_match:agreement"].tolist() == pytest.approx(per_question)
    assert frame["exact_match:attempts"].tolist() == [3, 4, 2]
    assert frame["id"].tolist() == ["q0", "q1", "q2"]


def test_each_question_is_one_unit_of_its_group() -> None:
    """Group tables count questions: each group's n and value are over its questions' shares."""
    right = random_right(3, 30)
    groups = [("a", "b", "c")[q % 3] for q in range(30)]
    m = score(attempts_items(right, groups=groups), ["exact_match"]).measurements[
        "default.exact_match"
    ]
    for name in ("a", "b", "c"):
        mine = [np.mean(r) for r, g in zip(right, groups) if g == name]
        assert m.groups[name].n == len(mine) == 10
        assert m.groups[name].value == pytest.approx(np.mean(mine), abs=1e-12)
        assert m.groups[name].extra["n_questions"] == 10


def test_questions_nest_in_clusters() -> None:
    """With clusters, the standard error is statsmodels' cluster-robust one over question shares."""
    import statsmodels.api as sm

    right = random_right(4, 60)
    items = [
        ItemResult(
            id=item.id,
            output=item.output,
            expected=item.expected,
            attempt=item.attempt,
            cluster=f"c{int(item.id[1:]) // 4}",
        )
        for item in attempts_items(right)
    ]
    m = score(items, ["exact_match"]).measurements["default.exact_match"]
    shares = np.array([np.mean(r) for r in right])
    clusters = np.array([q // 4 for q in range(60)])
    fit = sm.OLS(shares, np.ones(60)).fit(cov_type="cluster", cov_kwds={"groups": clusters})
    assert m.extra["n_clusters"] == 15
    assert m.extra["se_cluster"] == pytest.approx(float(fit.bse[0]), rel=1e-9)
    assert m.n == 60


def test_a_metric_with_its_own_aggregate_counts_questions_under_mean() -> None:
    """F1 under mean sees every attempt, each question a cluster; n counts the questions."""
    right = random_right(5, 20)
    m = score(attempts_items(right), ["f1"]).measurements["default.f1"]
    assert m.n == 20
    assert m.extra["n_attempts"] == sum(len(r) for r in right)
    assert "cluster" in m.ci_method or m.ci_method == "wilson"


def test_picking_reducers_give_a_ratio_over_questions() -> None:
    """max, min and majority leave each question right or wrong: a Wilson ratio of questions."""
    from statsmodels.stats.proportion import proportion_confint

    right = random_right(6, 40)
    result = score(attempts_items(right), ["exact_match"], reduce=["max", "min", "majority"])
    for name, rule in (
        ("max", any),
        ("min", all),
        ("majority", lambda r: sum(r) > len(r) / 2 or (sum(r) * 2 == len(r) and r[0])),
    ):
        key = "default.exact_match" + ("" if name == "max" else f"[{name}]")
        m = result.measurements[key]
        k = sum(bool(rule(r)) for r in right)
        low, high = proportion_confint(k, 40, method="wilson")
        assert (m.value, m.n, m.aggregation) == (k / 40, 40, "ratio")
        assert (m.ci_low, m.ci_high) == pytest.approx((low, high), abs=1e-12)


def test_run_takes_reduce_for_a_suites_items() -> None:
    """run(suite, rows, reduce=...) reduces the suite's items' attempts like score does."""

    class Twice(itemscore.Suite):
        suite_id = "twice"
        metrics = ("exact_match",)

        def items(self, raw: Any) -> list[ItemResult]:
            return attempts_items([[r, not r] for r in raw])

    result = itemscore.run(Twice(), [True, False, True], reduce=["max", "min"])
    assert result.measurements["twice.exact_match"].value == 1.0
    assert result.measurements["twice.exact_match[min]"].value == 0.0
    assert result.settings.reduce == ("max", "min")


# -- comparisons pair questions ----------------------------------------------------------------


def two_models(seed: int, n: int = 50) -> list[ItemResult]:
    return attempts_items(random_right(seed, n, 3, 3), "a") + attempts_items(
        random_right(seed + 100, n, 3, 3), "b"
    )


def test_compare_pairs_questions_with_a_paired_t_on_their_shares() -> None:
    """Under mean: the paired t of the question shares (scipy), n_pairs = questions."""
    from scipy import stats

    items = two_models(7)
    result = score(items, ["exact_match"])
    (c,) = compare(result)
    shares = {}
    for model in ("a", "b"):
        per: dict[str, list[bool]] = {}
        for item in items:
            if item.model == model:
                per.setdefault(item.id, []).append(item.output == "yes")
        shares[model] = np.array([np.mean(v) for v in per.values()])
    test = stats.ttest_rel(shares["b"], shares["a"])
    assert c.n_pairs == 50
    assert c.method == "paired-t"
    assert c.difference == pytest.approx(float(np.mean(shares["b"] - shares["a"])), abs=1e-12)
    assert c.p_value == pytest.approx(float(test.pvalue), rel=1e-9)


def test_compare_uses_mcnemar_on_questions_under_majority() -> None:
    """Under majority: the exact McNemar test on questions right or wrong (statsmodels)."""
    from statsmodels.stats.contingency_tables import mcnemar

    items = two_models(8, 80)
    result = score(items, ["exact_match"], reduce=["mean", "majority"])
    found = {c.key: c for c in compare(result)}
    c = found["default.exact_match[majority]"]
    verdict: dict[str, list[bool]] = {"a": [], "b": []}
    per: dict[tuple[str, str], list[bool]] = {}
    for item in items:
        per.setdefault((str(item.model), item.id), []).append(item.output == "yes")
    for (model, _), rows in per.items():
        verdict[model].append(sum(rows) >= 2)  # three attempts: no ties
    a, b = np.array(verdict["a"]), np.array(verdict["b"])
    table = [[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]]
    assert c.method.startswith("mcnemar-exact")
    assert c.n_pairs == 80
    assert c.p_value == pytest.approx(float(mcnemar(table, exact=True).pvalue), rel=1e-12)
    assert "default.exact_match" in found


def test_a_metric_with_its_own_aggregate_pairs_attempts_but_counts_questions() -> None:
    """F1 under mean: attempts pair by id and attempt, whole questions resampled.

    n_pairs counts the questions; the attempt pairs are in extra.
    """
    result = score(two_models(10, 40), ["f1"])
    (c,) = compare(result)
    assert c.n_pairs == 40
    assert c.extra["n_attempt_pairs"] == 120
    assert c.method.startswith("cluster-bootstrap")


def test_the_comparison_table_names_each_reducer(tmp_path: Path) -> None:
    """itemscore compare shows a further reducer's comparison as `label [reducer]`."""
    out = tmp_path / "out"
    result = score(two_models(11, 30), ["exact_match"], reduce=["mean", "pass@2"])
    result.save_json(tmp_path / "results.json")
    run = CliRunner().invoke(
        cli, ["compare", str(tmp_path / "results.json"), "--out", str(out)], catch_exceptions=False
    )
    assert run.exit_code == 0, run.output
    assert "exact_match [pass@2]" in run.output
    keys = [row["key"] for row in json.loads((out / "comparison.json").read_text())["comparisons"]]
    assert keys == ["default.exact_match", "default.exact_match[pass@2]"]


def test_a_run_with_epochs_compares_with_a_run_without() -> None:
    """Two runs, one with three attempts per question and one with one: questions pair by id."""
    with_attempts = score(attempts_items(random_right(9, 30, 3, 3)), ["exact_match"])
    single = score(
        [ItemResult(id=f"q{q}", output="yes", expected="yes") for q in range(30)], ["exact_match"]
    )
    (c,) = compare(with_attempts, single)
    assert c.n_pairs == 30
    assert c.value_b == 1.0


# -- harness logs ------------------------------------------------------------------------------


def test_an_inspect_log_with_epochs_gives_n_samples_and_inspects_own_standard_error() -> None:
    """5 samples x 3 epochs: n = 5, the value is inspect's accuracy and se is inspect's stderr."""
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(EPOCHS_LOG))
    assert log.results is not None
    metrics = log.results.scores[0].metrics
    items = itemscore.read_items(EPOCHS_LOG, format="inspect")
    assert len(items) == 15
    m = next(iter(score(items, ["exact_match"]).measurements.values()))
    assert m.n == len(log.eval.dataset.sample_ids or []) == 5
    assert m.extra["n_attempts"] == 15
    assert m.value == pytest.approx(metrics["accuracy"].value, abs=1e-12)
    z = 1.959963984540054
    assert (m.ci_high - m.value) / z == pytest.approx(metrics["stderr"].value, abs=1e-12)
    assert (m.value - m.ci_low) / z == pytest.approx(metrics["stderr"].value, abs=1e-12)


def test_lm_eval_repeats_are_every_response_reduced_per_document() -> None:
    """repeats: 3 read as attempts (every response kept): 4 documents, 12 attempts."""
    path = next((HARNESS / "lm-eval-cases").rglob("samples_repeat_gen_*.jsonl"))
    items = itemscore.read_items(path, format="lm-eval", output="completion")
    m = next(iter(score(items, ["exact_match"]).measurements.values()))
    assert (m.n, m.extra["n_attempts"]) == (4, 12)


# -- the command line and the reports ------------------------------------------------------------


def write_attempts(path: Path) -> Path:
    rows = [
        {"id": f"q{q}", "attempt": j, "output": out, "expected": "yes"}
        for q, outs in enumerate([["yes", "no", "yes"], ["no", "no", "yes"], ["yes"] * 3])
        for j, out in enumerate(outs)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_reduce_on_the_command_line_and_in_the_reports(tmp_path: Path) -> None:
    """--reduce gives one measurement per reducer; the table shows n as questions x attempts."""
    data = write_attempts(tmp_path / "a.jsonl")
    out = tmp_path / "out"
    run = CliRunner().invoke(
        cli,
        ["score", str(data), "-m", "exact_match", "--reduce", "mean,pass@2", "--out", str(out)],
        catch_exceptions=False,
    )
    assert run.exit_code == 0, run.output
    assert "3 \u00d7 3" in run.output
    assert "exact_match [pass@2]" in run.output
    header, *rows = (out / "summary.csv").read_text(encoding="utf-8").splitlines()
    assert header.endswith(",reducer,attempts,n_attempts")
    assert [row.split(",")[-3:] for row in rows] == [["mean", "3", "9"], ["pass@2", "3", "9"]]
    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert saved["settings"]["reduce"] == ["mean", "pass@2"]
    assert r"n=3$\times$3" in (out / "table.tex").read_text(encoding="utf-8")
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.index('"id": "q0", "attempt": 2') < page.index('"id": "q1", "attempt": 0')


def test_majority_without_out_reads_the_outputs_it_needs(tmp_path: Path) -> None:
    """The command line without --out keeps no items, but majority votes on the outputs."""
    data = write_attempts(tmp_path / "a.jsonl")
    run = CliRunner().invoke(
        cli,
        ["score", str(data), "-m", "exact_match", "--reduce", "majority,maj@1", "--json"],
        catch_exceptions=False,
    )
    assert run.exit_code == 0, run.output
    got = {m["key"]: m for m in json.loads(run.output)["measurements"]}
    items = itemscore.read_items(data)
    expected = score(items, ["exact_match"], reduce=["majority", "maj@1"]).measurements
    for key in ("default.exact_match", "default.exact_match[maj@1]"):
        assert got[key]["error"] is None
        assert got[key]["value"] == expected[key].value
    assert got["default.exact_match"]["value"] == 2 / 3  # q0 and q2 vote yes, q1 no


def test_reduce_in_a_configuration_is_checked_where_it_is_written(tmp_path: Path) -> None:
    """`reduce:` takes a list; an unknown reducer is an error at its line, with did-you-mean."""
    data = write_attempts(tmp_path / "a.jsonl")
    config = tmp_path / "run.yaml"
    config.write_text(
        f"data: {data.name}\nmetrics: [exact_match]\nreduce: [mean, pas@2]\n", encoding="utf-8"
    )
    run = CliRunner().invoke(cli, ["run", str(config)])
    assert run.exit_code == 2
    assert f"{config}:3:9" in run.output
    assert "Did you mean 'pass@2'?" in run.output
    config.write_text(
        f"data: {data.name}\nmetrics: [exact_match]\nreduce: [max, pass@2]\n", encoding="utf-8"
    )
    run = CliRunner().invoke(cli, ["run", str(config), "--json"], catch_exceptions=False)
    assert run.exit_code == 0, run.output
    keys = [m["key"] for m in json.loads(run.output)["measurements"]]
    assert keys == ["default.exact_match", "default.exact_match[pass@2]"]


def test_rescore_keeps_the_saved_reducers_or_takes_new_ones(tmp_path: Path) -> None:
    """rescore without --reduce reduces as the saved run did; with it, as it says."""
    data = write_attempts(tmp_path / "a.jsonl")
    out = tmp_path / "out"
    CliRunner().invoke(
        cli, ["score", str(data), "-m", "exact_match", "--reduce", "max", "--out", str(out)]
    )
    saved = itemscore.RunResult.load_json(out / "results.json")
    assert itemscore.rescore(saved).measurements["default.exact_match"].value == 1.0
    again = itemscore.rescore(saved, reduce="min")
    assert again.measurements["default.exact_match"].value == pytest.approx(1 / 3)
    other = tmp_path / "other"
    run = CliRunner().invoke(
        cli, ["rescore", str(out / "results.json"), "--reduce", "min", "--out", str(other)]
    )
    assert run.exit_code == 0, run.output
    rescored = json.loads((other / "results.json").read_text(encoding="utf-8"))
    assert rescored["settings"]["reduce"] == ["min"]
    verify = CliRunner().invoke(cli, ["verify", str(out / "results.json")])
    assert verify.exit_code == 0, verify.output


def test_rescoring_with_other_reducers_keeps_no_measurement_of_the_old_ones() -> None:
    """A label recomputed under new reducers loses its measurements under the old ones."""
    result = score(attempts_items(random_right(12, 10)), ["exact_match"], reduce="mean,pass@2")
    again = itemscore.rescore(result, reduce="min")
    assert list(again.measurements) == ["default.exact_match"]
    assert list(again.by_model[None]) == ["default.exact_match"]


# -- the interval covers: a simulation -----------------------------------------------------------

QUESTIONS, REPETITIONS, TRUTH = 200, 2000, 0.6


def simulated_table(attempts: int, rho: float, seed: int) -> Any:
    """A run table of REPETITIONS runs as groups, QUESTIONS questions each, made vectorised.

    Each question has its own chance of being right, drawn from a beta distribution with mean
    TRUTH whose intra-question correlation is ``rho``; its attempts are drawn from it.
    """
    from itemscore._columns import score_type
    from itemscore.engine._table import RunTable

    rng = np.random.default_rng(seed)
    shape = (REPETITIONS, QUESTIONS)
    if rho == 0:
        chance = np.full(shape, TRUTH)
    else:
        scale = 1 / rho - 1
        chance = rng.beta(TRUTH * scale, (1 - TRUTH) * scale, size=shape)
    right = (rng.random((*shape, attempts)) < chance[..., None]).reshape(-1)
    n = right.size
    question = np.arange(n) // attempts
    keys = pa.table(
        {
            "id": pa.array(question).cast(pa.string()),
            "model": pa.nulls(n, pa.string()),
            "group": pa.array(question // QUESTIONS).cast(pa.string()),
            "cluster": pa.nulls(n, pa.string()),
            "attempt": pa.array(np.arange(n) % attempts, pa.int64()),
        }
    )
    scores = pa.StructArray.from_arrays(
        [
            pa.array(np.where(right, 0, 1).astype(np.int8)),
            pa.array(right.astype(np.float64)),
            pa.nulls(n, pa.string()),
            pa.nulls(n, pa.string()),
        ],
        fields=list(score_type()),
    )
    return RunTable(keys, {"exact_match": scores}, None), right.reshape(REPETITIONS, -1)


@pytest.mark.parametrize(("attempts", "rho"), [(1, 0.0), (1, 0.9), (3, 0.5), (10, 0.0), (10, 0.9)])
def test_the_question_level_interval_covers_where_attempts_as_items_do_not(
    attempts: int, rho: float
) -> None:
    """2,000 simulated runs of 200 questions: the runner's interval covers 94-96%.

    Wilson over attempts taken as items covers far less once attempts are correlated.
    """
    from itemscore import aggregate
    from itemscore._plan import plan
    from itemscore._settings import RunSettings
    from itemscore.engine._measure import measure_all

    table, right = simulated_table(attempts, rho, seed=attempts * 10 + int(rho * 10))
    headline, _ = measure_all(plan(["exact_match"]), table, RunSettings(), {})
    runs = headline["default.exact_match"].groups
    assert len(runs) == REPETITIONS
    low = np.array([runs[str(r)].ci_low for r in range(REPETITIONS)])
    high = np.array([runs[str(r)].ci_high for r in range(REPETITIONS)])
    covered = float(np.mean((low <= TRUTH) & (high >= TRUTH)))
    assert 0.94 <= covered <= 0.96
    k = right.sum(axis=1)
    naive_low, naive_high = aggregate.ratio_interval(k, np.full(REPETITIONS, right.shape[1]))
    naive = float(np.mean((naive_low <= TRUTH) & (naive_high >= TRUTH)))
    if attempts > 1 and rho >= 0.5:
        assert naive < 0.9
