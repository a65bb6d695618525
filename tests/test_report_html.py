"""report.html as a reader meets it: rendered by headless Chromium, driven, looked at.

The page tests drive the page over the DevTools protocol (the ``page`` fixture of
conftest.py) and are skipped when no ``chromium`` is installed (``make test`` installs
Debian's package as root). Expected numbers come from the item records and from scipy, not
from the writer; the screenshots (desktop 1920 and laptop 1366 pixels wide) are written under
the test's ``tmp_path`` to be looked at.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import math
import re
import struct
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import binomtest

import itemscore
from itemscore import ItemResult, ItemScore, Metric, MetricContext, RunResult
from itemscore.reports import export
from itemscore.reports import report_html as report_module
from itemscore.reports._html_svg import MODEL_COLOURS, STATE_COLOURS
from itemscore.reports.report_html import OPEN_GROUPS, report_html

HOSTILE_MODEL = '<img src=x onerror="document.title=1">'
HOSTILE_OUTPUT = "</script><script>document.title='pwned'</script>"
DESKTOP, LAPTOP = (1920, 1080), (1366, 768)


class FailsOnQ(Metric):
    """Raises on items whose output starts with q; scores the rest ok."""

    metric_id = "test_html_fails_on_q"
    required_inputs = ("output",)

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        assert item.output is not None
        if item.output.startswith("q"):
            raise ValueError(f"no q please: {item.output}")
        return self.ok()


class Length(Metric):
    """The output's length: a mean metric whose values sort."""

    metric_id = "test_html_length"
    required_inputs = ("output",)
    aggregation = "mean"

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        assert item.output is not None
        return self.ok(float(len(item.output)))


def result() -> RunResult:
    """Two models (one named with markup), 12 ids, two groups, outputs that raise."""
    data = []
    for i in range(12):
        for model in ("alpha", HOSTILE_MODEL):
            output = HOSTILE_OUTPUT if i == 0 else ("q" if i % 4 == 0 else "x") + str(i)
            data.append(
                ItemResult(
                    id=f"item-{i}",
                    model=model,
                    group=("geo", "sci")[i % 2],
                    output=output,
                    expected=("x" + str(i),),
                )
            )
    return itemscore.score(data, ["exact_match", FailsOnQ], suite_id="html_demo")


def many(n: int = 65, groups: int = 3, models: tuple[str, ...] = ("alpha", "beta")) -> RunResult:
    """``n`` questions per model, right at different rates, lengths that differ, groups."""
    data = []
    for i in range(n):
        for k, model in enumerate(models):
            right = (i * (k + 3)) % (k + 6) != 0 if k else i % 3 != 0
            data.append(
                ItemResult(
                    id=f"item-{i}",
                    model=model,
                    group=f"g{i % groups:02d}",
                    input=f"What is {i} + {i}?",
                    output=str(2 * i) if right else f"{2 * i + 1}{'!' * (i % 5)}",
                    expected=(str(2 * i),),
                )
            )
    return itemscore.score(data, ["exact_match", Length], suite_id="many")


class Page(HTMLParser):
    """Start tags with attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def opened(page: Any, folder: Path, run: RunResult, fragment: str = "") -> Path:
    """Write ``run``'s report set into ``folder`` and open its report.html in ``page``."""
    export(run, folder, ["json", "items", "html"])
    path = folder / "report.html"
    page.goto(path.as_uri() + fragment)
    return path


def rows(page: Any) -> list[list[str]]:
    """The item table's rows as cell texts."""
    value: list[list[str]] = page.js(
        "Array.from(document.querySelectorAll('#items tbody tr')).map("
        "r=>Array.from(r.cells).map(c=>c.textContent))"
    )
    return value


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def shoot(page: Any, folder: Path, name: str) -> list[Path]:
    """Screenshots of the whole page at desktop and laptop widths (artefacts to look at)."""
    shots = []
    for label, (width, height) in (("desktop", DESKTOP), ("laptop", LAPTOP)):
        shot = page.screenshot(folder / f"{name}-{label}.png", width, height)
        assert png_size(shot)[0] == width
        shots.append(shot)
    return shots


# -- the file itself ------------------------------------------------------------------------


def test_report_html_is_self_contained() -> None:
    """No element loads anything; the policy forbids the network and allows one script."""
    text = report_html(result())
    page = Page()
    page.feed(text)
    assert not [(t, a) for t, a in page.tags if "src" in a or "href" in a]
    policy = next(a for t, a in page.tags if a.get("http-equiv") == "Content-Security-Policy")
    content = policy["content"] or ""
    assert "default-src 'none'" in content
    assert "connect-src 'none'" in content
    assert "form-action 'none'" in content
    scripts = re.findall(r"<script>(.*?)</script>", text, re.S)
    assert len(scripts) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    directive = next(d.strip() for d in content.split(";") if d.strip().startswith("script-src"))
    assert directive == f"script-src 'sha256-{digest}'"  # no 'unsafe-inline'
    assert [t for t, _ in page.tags].count("script") == 2
    assert not [t for t, _ in page.tags if t == "img"]


def test_model_colours_are_never_state_colours_and_stay_apart_when_colour_blind() -> None:
    """CIEDE2000 above 10 between all model and state colours, for four kinds of vision.

    Normal, deutan, protan and tritan vision, as coloraide simulates them.
    """
    from coloraide import Color

    visions = (None, "deutan", "protan", "tritan")

    def distance(a: str, b: str) -> float:
        return min(
            (Color(a).filter(v) if v else Color(a)).delta_e(
                Color(b).filter(v) if v else Color(b), method="2000"
            )
            for v in visions
        )

    states = list(STATE_COLOURS.values())
    assert not set(MODEL_COLOURS) & set(states)
    assert min(distance(m, s) for m in MODEL_COLOURS for s in states) > 10
    assert min(distance(a, b) for a, b in itertools.combinations(MODEL_COLOURS, 2)) > 10
    assert min(distance(a, b) for a, b in itertools.combinations(states, 2)) > 10


# -- rendered -------------------------------------------------------------------------------


def test_chromium_shows_plots_counts_and_every_item(page: Any, tmp_path: Path) -> None:
    """One plot per measurement, group tables, 24 item rows; markup in the data stays text."""
    opened(page, tmp_path, result())
    assert page.js("document.querySelectorAll('section.measurement svg.plot').length") == 2
    assert page.js("document.querySelectorAll('table.groups').length") == 2
    assert "24 matching items" in page.js("document.getElementById('count').textContent")
    table = page.js("document.getElementById('items').textContent")
    assert "item-11" in table
    assert HOSTILE_OUTPUT in table  # shown as text
    assert HOSTILE_MODEL in table
    assert page.js("document.getElementById('suite').textContent") == "html_demo"
    assert page.js("document.title") == "itemscore report: html_demo"  # no script of the data ran
    assert page.js("document.querySelectorAll('img').length") == 0
    assert page.js("document.querySelectorAll('script').length") == 2
    assert page.problems() == []


def test_ok_is_a_verdict_only_where_the_metric_says_right_or_wrong(
    page: Any, tmp_path: Path
) -> None:
    """exact_match's ok reads "ok"; token_f1's 0.0 reads as its value, never a green ok."""
    items = [
        ItemResult(id="a", output="Paris", expected="Paris"),
        ItemResult(id="b", output="Lyon", expected="Paris"),
    ]
    opened(page, tmp_path, itemscore.score(items, ["exact_match", "token_f1"]))
    cells = {r[1]: r[-2:] for r in rows(page)}
    assert cells["a"][0].endswith(" ok")  # exact_match: right
    assert cells["b"][0].endswith(" fail")
    assert cells["b"][1].strip() == "0"  # token_f1 of Lyon against Paris: a value, no state
    assert page.js("document.querySelectorAll('#items td.score span.ok').length") == 1
    assert page.problems() == []


def test_chromium_filters_the_items_from_the_address(page: Any, tmp_path: Path) -> None:
    """The filters, preset from the address, keep only matching items."""
    path = opened(page, tmp_path, result(), "#state=error&model=alpha")
    # alpha's outputs q4 and q8 raise in test_html_fails_on_q.
    assert page.js("document.getElementById('count').textContent").startswith("2 matching items")
    table = page.js("document.getElementById('items').textContent")
    assert "no q please: q4" in table
    assert "item-5" not in table
    page.goto(path.as_uri() + "#q=x11")
    assert page.js("document.getElementById('count').textContent").startswith("2 matching items")


def test_items_page_and_say_which_are_shown(page: Any, tmp_path: Path) -> None:
    """130 items: 50 a page, next and last pages, another page size."""
    opened(page, tmp_path, many())
    count = "document.getElementById('count').textContent"
    assert page.js(count) == "130 matching items · showing 1\u201350"
    assert len(rows(page)) == 50
    assert page.js("document.getElementById('page').textContent") == "page 1 of 3"
    assert page.js("document.getElementById('p-prev').disabled") is True
    page.click("#p-next")
    assert page.js(count) == "130 matching items · showing 51\u2013100"
    assert rows(page)[0][0] == "51"
    page.click("#p-last")
    assert len(rows(page)) == 30
    assert page.js("document.getElementById('p-next').disabled") is True
    assert "page=3" in page.js("location.hash")
    page.choose("#f-size", "25")
    assert len(rows(page)) == 25
    assert page.js("document.getElementById('page').textContent") == "page 1 of 6"


def test_items_sort_by_id_naturally_and_by_a_metric_value(page: Any, tmp_path: Path) -> None:
    """id: item-2 before item-10; a value column by value, ties in the run's order."""
    run = many(30)
    opened(page, tmp_path, run, "#size=100")
    page.click('#items th[data-sort="id"] button')
    ids = [r[1] for r in rows(page)]
    assert ids == [f"item-{i}" for i in range(30) for _ in range(2)]
    page.click('#items th[data-sort="id"] button')  # again: descending, ties keep their order
    assert [r[1] for r in rows(page)] == [f"item-{i}" for i in reversed(range(30)) for _ in (0, 1)]
    page.click('#items th[data-sort="metric:test_html_length"] button')
    records = list(run.items)
    lengths = [r.scores["test_html_length"].value for r in records]
    assert [int(r[0]) - 1 for r in rows(page)] == sorted(range(60), key=lambda p: (lengths[p], p))
    page.click('#items th[data-sort="metric:test_html_length"] button')
    assert [int(r[0]) - 1 for r in rows(page)] == sorted(
        range(60), key=lambda p: (-(lengths[p] or 0.0), p)
    )
    assert "sort=metric%3Atest_html_length&dir=desc" in page.js("location.hash")


def test_items_filter_by_state_metric_and_model(page: Any, tmp_path: Path) -> None:
    """Each filter and their mix keep exactly the items the records say."""
    run = many(40)
    opened(page, tmp_path, run, "#size=250")
    records = list(run.items)
    page.choose("#f-status", "fail")
    want = [r for r in records if any(s.status.value == "fail" for s in r.scores.values())]
    assert len(rows(page)) == len(want)
    page.choose("#f-metric", "exact_match")
    page.choose("#f-model", "beta")
    want = [r for r in records if r.model == "beta" and r.scores["exact_match"].status == "fail"]
    shown = rows(page)
    assert [row[1] for row in shown] == [r.id for r in want]
    # With a metric chosen only its column is shown: # id model group input output expected m.
    assert {len(row) for row in shown} == {8}
    assert shown[0][4] == want[0].input
    assert shown[0][5] == want[0].output
    assert shown[0][6] == " | ".join(want[0].expected or ())


def test_several_models_get_a_comparison_with_mcnemar_p_values(page: Any, tmp_path: Path) -> None:
    """A row per metric and pair, its p the exact McNemar test scipy computes, a forest each."""
    run = many(80, models=("alpha", "beta", "gamma"))
    opened(page, tmp_path, run)
    assert page.js("!!document.getElementById('comparison')")
    table = page.js(
        "Array.from(document.querySelectorAll('#comparisons tbody tr')).map(r=>"
        "Array.from(r.cells).map(c=>c.getAttribute('data-v')===null?c.textContent:"
        "c.getAttribute('data-v')))"
    )
    assert len(table) == 2 * 3  # two metrics, three pairs
    by_model = {m: {r.id: r for r in run.items if r.model == m} for m in ("alpha", "beta", "gamma")}
    for row in table:
        if row[0] != "exact_match":
            continue
        a, b = by_model[row[1]], by_model[row[2]]
        ok_a = [a[i].scores["exact_match"].status == "ok" for i in a]
        ok_b = [b[i].scores["exact_match"].status == "ok" for i in a]
        only_a = sum(x and not y for x, y in zip(ok_a, ok_b))
        only_b = sum(y and not x for x, y in zip(ok_a, ok_b))
        reference = binomtest(only_a, only_a + only_b, 0.5).pvalue
        assert math.isclose(float(row[7]), reference, rel_tol=1e-9)
        assert row[9].startswith("mcnemar")
    assert page.js("document.querySelectorAll('svg.forest').length") == 2
    assert page.js("document.querySelector('svg.forest').textContent").count("better") == 2
    shoot(page, tmp_path, "three-models")
    assert page.problems() == []


def test_one_model_has_no_comparison(page: Any, tmp_path: Path) -> None:
    opened(page, tmp_path, many(10, models=("alpha",)))
    assert page.js("!!document.getElementById('comparison')") is False


def test_legend_and_plots_use_the_palettes(page: Any, tmp_path: Path) -> None:
    """The legend's model swatches are the model colours; the state bars the state colours."""
    opened(page, tmp_path, many(20))
    swatches = page.js(
        "Array.from(document.querySelectorAll('#legend .swatch')).map("
        "s=>getComputedStyle(s).backgroundColor)"
    )

    def rgb(hex_colour: str) -> str:
        r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
        return f"rgb({r}, {g}, {b})"

    assert swatches == [rgb(MODEL_COLOURS[0]), rgb(MODEL_COLOURS[1])] + [
        rgb(c) for c in STATE_COLOURS.values()
    ]
    attribute = "Array.from(document.querySelectorAll('{}')).map(e=>e.getAttribute('{}'))"
    fills = set(page.js(attribute.format("svg.states rect", "fill")))
    assert fills <= set(STATE_COLOURS.values())
    dots = set(page.js(attribute.format("section.measurement svg.plot circle", "stroke")))
    assert dots == {MODEL_COLOURS[0], MODEL_COLOURS[1]}


def test_groups_are_collapsed_when_many_and_sort(page: Any, tmp_path: Path) -> None:
    """20 groups start collapsed (3 open); a column's button sorts its rows by value."""
    run = many(60, groups=20)
    opened(page, tmp_path, run)
    assert page.js("document.querySelector('details.groups').open") is False
    assert OPEN_GROUPS < 20
    page.js("document.querySelector('details.groups').open=true")
    page.click("table.groups thead th:nth-child(2) button")  # alpha's value
    order = page.js(
        "Array.from(document.querySelector('table.groups').tBodies[1].rows).map(r=>r.cells[0]"
        ".getAttribute('data-v'))"
    )
    alpha = run.by_model["alpha"]["many.exact_match"].groups
    assert order == sorted(alpha, key=lambda g: (alpha[g].value, list(alpha).index(g)))
    page.click("table.groups thead th:nth-child(1) button")
    page.click("table.groups thead th:nth-child(1) button")  # by name, descending
    order = page.js(
        "Array.from(document.querySelector('table.groups').tBodies[1].rows).map(r=>r.cells[0]"
        ".getAttribute('data-v'))"
    )
    assert order == sorted(alpha, reverse=True)
    opened(page, tmp_path / "few", many(30, groups=3))
    assert page.js("document.querySelector('details.groups').open") is True


def test_the_page_says_it_holds_the_first_items(
    page: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opened from disk, a page holding 40 of 130 items pages those 40 and says so."""
    monkeypatch.setattr(report_module, "MAX_ITEMS", 40)
    opened(page, tmp_path, many())
    note = page.js("document.getElementById('truncated').textContent")
    assert "holds the first 40 of 130 items" in note
    assert "itemscore view" in note
    assert page.js("document.getElementById('count').textContent") == (
        "40 matching items among the first 40 of 130 items this page holds · showing 1\u201340"
    )
    assert page.problems() == []  # and it asked no one for the rest


class Cents(Metric):
    """A cost metric of this test: lower is better; fixed costs per model."""

    metric_id = "test_html_cost"
    required_inputs = ()
    aggregation = "mean"
    higher_is_better = False

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        return self.ok(float(item.metadata["cost"]))


def calibrated() -> RunResult:
    """Two models with confidences, costs and answers: ece, cost, cost per success."""
    rng = np.random.default_rng(7)
    data = []
    for i in range(200):
        for model, skill in (("alpha", 0.8), ("beta", 0.6)):
            confidence = float(rng.uniform(0.3, 1.0))
            right = bool(rng.uniform() < skill)
            data.append(
                ItemResult(
                    id=f"q{i}",
                    model=model,
                    output="yes" if right else "no",
                    expected=("yes",),
                    metadata={
                        "confidence": confidence,
                        "cost": 0.0005 if model == "alpha" else 0.0008 + i * 1e-7,
                    },
                )
            )
    return itemscore.score(data, ["exact_match", "ece", "cost"], suite_id="calibrated")


def test_lower_is_better_cost_per_success_and_reliability(page: Any, tmp_path: Path) -> None:
    """Cost: lower is better, its own axis, cost per success; ece: its reliability diagram.

    Cost per success is the total cost over the ok items; the diagram has a dot per non-empty
    bin, with that bin's count and accuracy.
    """
    run = calibrated()
    opened(page, tmp_path, run)
    cost = "document.querySelector('section.measurement[data-label=\"cost\"]')"
    assert "lower is better" in page.js(f"{cost}.querySelector('h3').textContent")
    ticks = page.js(f"Array.from({cost}.querySelectorAll('svg.plot text')).map(t=>t.textContent)")
    assert any(t.startswith("0.000") and t != "0.0000" for t in ticks)  # not a 0-1 axis
    assert "← lower is better" in ticks
    per_success = page.js(
        "Array.from(document.querySelectorAll('section[data-label=\"cost_per_success\"] tbody tr'))"
        ".map(r=>Array.from(r.cells).map(c=>c.textContent))"
    )
    for name, value, successes in per_success:
        items = [r for r in run.items if r.model == name]
        ok = sum(r.scores["exact_match"].status == "ok" for r in items)
        total = math.fsum(r.metadata["cost"] for r in items)
        assert int(successes) == ok
        assert math.isclose(float(value), total / ok, rel_tol=1e-3)
    dots = page.js(
        "Array.from(document.querySelectorAll('svg.reliability circle')).map(c=>"
        "c.querySelector('title').textContent)"
    )
    for model in ("alpha", "beta"):
        items = [r for r in run.items if r.model == model]
        confidence = np.array([r.metadata["confidence"] for r in items])
        correct = np.array([r.scores["ece"].status == "ok" for r in items], dtype=float)
        index = np.clip(np.ceil(confidence * 10).astype(int) - 1, 0, 9)
        mine = [d for d in dots if d.startswith(f"{model}:")]
        assert len(mine) == len(set(index.tolist()))
        for b in sorted(set(index.tolist())):
            accuracy = correct[index == b].mean()
            told = (f"{int((index == b).sum())} items", f"accuracy {accuracy:.3f}")
            assert any(all(t in d for t in told) for d in mine)
    assert page.js("document.querySelectorAll('svg.reliability polyline').length") == 2
    forest = page.js(
        "document.querySelector('.forest-block[data-label=\"cost\"] svg.forest').textContent"
    )
    assert "← candidate better" in forest  # a rise in cost favours the baseline
    assert "baseline better →" in forest
    shoot(page, tmp_path, "calibrated")
    assert page.problems() == []


def test_page_data_is_json_inside_the_script_block() -> None:
    """The data block parses as JSON and names where more items are (nowhere, in a file)."""
    text = report_html(result())
    data = json.loads(re.search(r'id="items-data">(.*?)</script>', text, re.S).group(1))  # type: ignore[union-attr]
    assert data["source"] is None
    assert data["total"] == 24
    assert len(data["items"]) == 24


@pytest.mark.parametrize(
    ("value", "low", "high", "shown"),
    [
        (0.0005, 0.00045, 0.00055, "0.00050"),
        (0.0008, 0.00075, 0.00085, "0.00080"),
        (0.8333333, 0.6078, 0.9416, "0.83"),
        (0.8333333, None, None, "0.8333"),
        (0.0005, None, None, "0.0005000"),
        (1234.5, 1200.0, 1270.0, "1234"),
        (None, None, None, "—"),
    ],
)
def test_numbers_take_their_decimals_from_the_interval(
    value: float | None, low: float | None, high: float | None, shown: str
) -> None:
    """Two significant digits of the interval's width; four without one; small stays small."""
    from itemscore.reports._html_numbers import number

    assert number(value, low, high) == shown
