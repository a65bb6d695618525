"""Notebook display: ``_repr_html_`` of a run, a measurement and a comparison."""

from __future__ import annotations

import html.parser

import itemscore
from itemscore import ItemResult, compare


class _Cells(html.parser.HTMLParser):
    """The text of every table cell, and the tags seen (to check the HTML is well formed)."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[str] = []
        self.open: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.open.append(tag)
        if tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        assert self.open.pop() == tag
        if tag in ("td", "th") and self._cell is not None:
            self.cells.append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def cells(page: str) -> list[str]:
    parser = _Cells()
    parser.feed(page)
    assert parser.open == []
    return parser.cells


def _run() -> itemscore.RunResult:
    data = [
        ItemResult(id=str(i), model=m, output="a" if (i % (2 + k)) else "b", expected="a",
                   group=("x", "y")[i % 2], metadata={"cost": 0.0004 + 0.0003 * k})
        for k, m in enumerate(("<b>model-a</b>", "model-b"))
        for i in range(60)
    ]  # fmt: skip
    return itemscore.score(data, ["exact_match", "cost"], suite_id="nb")


def test_run_result_shows_every_model_and_derived_row() -> None:
    """A run is one table: each model's measurements, the cost of one success, names escaped."""
    result = _run()
    page = result._repr_html_()
    shown = cells(page)
    assert "<b>model-a</b>" in shown  # the model name as text, not markup
    assert "&lt;b&gt;model-a&lt;/b&gt;" in page
    assert "Cost per success (exact_match) ↓" in shown
    m = result.by_model["model-b"]["nb.exact_match"]
    assert m.value is not None
    assert m.ci_low is not None
    assert m.ci_high is not None
    # the value then its interval in the model's cell, as the terminal prints them (the
    # interval ~0.2 wide: two decimals; the coverage mark may stand before the interval)
    assert any(
        cell.startswith(f"{m.value:.2f} ") and cell.endswith(f"[{m.ci_low:.2f}, {m.ci_high:.2f}]")
        for cell in shown
    )


def test_measurement_shows_groups_and_direction() -> None:
    """A measurement's table has its groups and says which way is better."""
    m = _run().by_model["model-b"]["nb.cost"]
    page = m._repr_html_()
    shown = cells(page)
    assert "  x ↓" in shown
    assert "  y ↓" in shown
    assert "lower is better" in page
    assert "$0.0007000" in shown  # no spread: four significant digits


def test_comparison_shows_the_difference_and_its_test() -> None:
    """A comparison's table: difference with sign, interval, p-values, the method."""
    (c, *_) = compare(_run())
    page = c._repr_html_()
    shown = cells(page)
    assert shown[:8] == ["metric", "baseline", "candidate", "difference", "interval", "p",
                         "adj. p", "pairs"]  # fmt: skip
    assert c.method in page
    assert str(c.n_pairs) in shown
