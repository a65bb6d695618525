"""The judge-corrected score is a row of the tables, derived by llm_judge through the plugin API.

Real runs against the stub judge endpoint on 127.0.0.1; the expected corrected values are
computed here from the truth table the stub answers by (the Rogan-Gladen and PPI formulas
written out), not by the correction code.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from rich.console import Console

from itemscore import ItemResult, RunResult, score
from itemscore._terminal import result_tables
from itemscore.metrics_builtin.judge.stub import StubReply, StubRequest, StubServer
from itemscore.reports.report_html import report_html
from itemscore.reports.results_md import markdown_table
from itemscore.summary._summary import summary_rows

N, SLICE = 120, 40
RG_NAME = "LLM judge, judge-corrected (Rogan-Gladen)"
PPI_NAME = "LLM judge, judge-corrected (prediction-powered)"

rng = np.random.default_rng(4)
TRUTH = rng.random(N) < 0.6
JUDGED = np.where(TRUTH, rng.random(N) < 0.85, rng.random(N) >= 0.8)
GRADES = rng.integers(1, 6, N)
KIND = np.clip(GRADES + (rng.random(N) < 0.4), 1, 5)  # a judge one point too kind, often


def _index(request: StubRequest) -> int:
    return int(request.last_message.split("<item-")[1].split(">")[0])


def _pass_fail(request: StubRequest) -> StubReply:
    return StubReply.verdict("pass" if JUDGED[_index(request)] else "fail")


def _grade(request: StubRequest) -> StubReply:
    return StubReply.verdict(int(KIND[_index(request)]))


@pytest.fixture(scope="module")
def server() -> Iterator[StubServer]:
    with StubServer(_pass_fail) as stub:
        yield stub


@pytest.fixture(scope="module")
def grader() -> Iterator[StubServer]:
    with StubServer(_grade) as stub:
        yield stub


def _judge(server: StubServer, **options: Any) -> dict[str, Any]:
    return {"name": "llm_judge", "model": "stub", "base_url": server.base_url,
            "api_key_env": None, "cache": False, **options}  # fmt: skip


def _items(human: bool = True, grades: bool = False) -> list[ItemResult]:
    out = []
    for i in range(N):
        metadata: dict[str, Any] = {}
        if human and i < SLICE:
            metadata["human"] = int(GRADES[i]) if grades else ("pass" if TRUTH[i] else "fail")
        out.append(ItemResult(id=f"q{i}", output=f"answer <item-{i}>", metadata=metadata,
                              group="a" if i % 2 else "b"))  # fmt: skip
    return out


@pytest.fixture(scope="module")
def pass_fail(server: StubServer) -> RunResult:
    return score(_items(), [_judge(server)])


def _rogan_gladen(rows: np.ndarray) -> float:
    """(q + Sp - 1) / (Se + Sp - 1), clipped, from the truth table over ``rows``."""
    labelled, alone = rows[rows < SLICE], rows[rows >= SLICE]
    t, j = TRUTH[labelled], JUDGED[labelled]
    se, sp = (t & j).sum() / t.sum(), (~t & ~j).sum() / (~t).sum()
    q = JUDGED[alone].mean()
    return float(np.clip((q + sp - 1) / (se + sp - 1), 0, 1))


def _terminal(result: RunResult, by_group: bool = False) -> list[str]:
    console = Console(width=300, file=io.StringIO(), color_system=None)
    for table in result_tables(result, by_group=by_group, width=300, layout="wide"):
        console.print(table)
    return console.file.getvalue().splitlines()  # type: ignore[attr-defined]


def test_the_corrected_pass_rate_is_a_derived_measurement(pass_fail: RunResult) -> None:
    """Its value is the Rogan-Gladen formula on the stub's truth table, interval and method."""
    m = pass_fail.measurements["default.llm_judge"]
    d = m.derived["llm_judge_corrected"]
    assert d.value == pytest.approx(_rogan_gladen(np.arange(N)), abs=1e-12)
    assert d.value != pytest.approx(m.value)  # not the naive judge score
    assert d.ci_low is not None
    assert d.ci_high is not None
    assert d.value is not None
    assert d.ci_low <= d.value <= d.ci_high
    assert d.ci_method == "rogan-gladen-jeffreys"
    assert d.display_name == RG_NAME
    for group, parity in (("a", 1), ("b", 0)):
        rows = np.arange(N)[np.arange(N) % 2 == parity]
        assert d.groups[group].value == pytest.approx(_rogan_gladen(rows), abs=1e-12)


def test_the_terminal_table_shows_the_corrected_row_beside_the_naive_one(
    pass_fail: RunResult,
) -> None:
    d = pass_fail.measurements["default.llm_judge"].derived["llm_judge_corrected"]
    lines = _terminal(pass_fail)
    naive = next(i for i, line in enumerate(lines) if line.strip().startswith("llm_judge "))
    row = lines[naive + 1]
    assert row.strip().startswith(RG_NAME)
    assert "rogan-gladen-jeffreys" in row
    low, high = re.search(r"\[(-?[\d.]+), (-?[\d.]+)\]", row).groups()  # type: ignore[union-attr]
    assert float(low) == pytest.approx(d.ci_low, abs=0.01)
    assert float(high) == pytest.approx(d.ci_high, abs=0.01)
    grouped = _terminal(pass_fail, by_group=True)
    head = next(i for i, line in enumerate(grouped) if RG_NAME in line)
    assert [grouped[head + k].split()[0] for k in (1, 2)] == ["a", "b"]


def test_report_html_and_the_other_reports_show_it(pass_fail: RunResult) -> None:
    page = report_html(pass_fail)
    start = page.index('data-label="llm_judge_corrected"')
    section = page[start : page.index("</section>", start)]
    assert RG_NAME in section
    assert "<th>interval</th><th>method</th>" in section
    assert "rogan-gladen-jeffreys" in section
    assert "no interval" not in section
    assert RG_NAME in markdown_table(pass_fail)
    rows = [r for r in summary_rows(pass_fail) if r["metric"] == "llm_judge_corrected"]
    assert [r["group"] for r in rows] == [None, "a", "b"]
    assert all(r["aggregation"] == "derived" and r["ci_low"] is not None for r in rows)


def test_a_numeric_scale_gets_the_prediction_powered_row(grader: StubServer) -> None:
    """1-5 with human grades: PPI, mean f(unlabelled) + mean(y - f)(labelled), rescaled."""
    result = score(_items(grades=True), [_judge(grader, scale="1-5", human_field="human")])
    m = result.measurements["default.llm_judge"]
    d = m.derived["llm_judge_corrected"]
    f, y = (KIND - 1) / 4, (GRADES - 1) / 4
    expected = f[SLICE:].mean() + (y[:SLICE] - f[:SLICE]).mean()
    assert d.value == pytest.approx(float(np.clip(expected, 0, 1)), abs=1e-12)
    assert d.ci_method == "prediction-powered"
    assert any(line.strip().startswith(PPI_NAME) for line in _terminal(result))


def test_without_human_verdicts_there_is_no_corrected_row(server: StubServer) -> None:
    result = score(_items(human=False), [_judge(server)])
    assert result.measurements["default.llm_judge"].derived == {}
    assert not any("judge-corrected" in line for line in _terminal(result))
    assert "llm_judge_corrected" not in report_html(result)
