"""report.html rendered by headless Chromium: what is on the page once its script ran.

Skipped when no ``chromium`` is installed (``make test`` installs Debian's package as root).
"""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

import itemscore
from itemscore import ItemResult, ItemScore, Metric, MetricContext, RunResult
from itemscore.reports import export
from itemscore.reports.report_html import report_html

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
HOSTILE_MODEL = '<img src=x onerror="document.title=1">'
HOSTILE_OUTPUT = "</script><script>document.title='pwned'</script>"


class FailsOnQ(Metric):
    """Raises on items whose output starts with q; scores the rest ok."""

    metric_id = "test_html_fails_on_q"
    required_inputs = ("output",)

    def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
        assert item.output is not None
        if item.output.startswith("q"):
            raise ValueError(f"no q please: {item.output}")
        return self.ok()


def result() -> RunResult:
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


class Page(HTMLParser):
    """Start tags with attributes, and the text of the elements with an id."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text_by_id: dict[str, str] = {}
        self._open: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in ("meta", "input", "br", "line", "circle", "rect"):
            self._open.append(dict(attrs).get("id"))

    def handle_endtag(self, tag: str) -> None:
        if self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for name in self._open:
            if name:
                self.text_by_id[name] = self.text_by_id.get(name, "") + data

    def rows(self) -> int:
        return sum(1 for tag, _ in self.tags if tag == "tr")


def rendered(path: Path, fragment: str = "") -> Page:
    """The DOM after the page's script ran, as Chromium serialises it."""
    assert CHROMIUM is not None
    profile = path.parent / "profile"
    dom = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--dump-dom",
            path.as_uri() + fragment,
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    page = Page()
    page.feed(dom)
    return page


def test_report_html_is_self_contained(tmp_path: Path) -> None:
    """No element loads anything: no src, no href, a policy that forbids the network."""
    page = Page()
    page.feed(report_html(result()))
    assert not [(t, a) for t, a in page.tags if "src" in a or "href" in a]
    policy = next(a for t, a in page.tags if a.get("http-equiv") == "Content-Security-Policy")
    assert "default-src 'none'" in (policy["content"] or "")
    assert [t for t, _ in page.tags].count("script") == 2
    assert not [t for t, _ in page.tags if t == "img"]


@needs_chromium
def test_chromium_shows_plots_counts_and_every_item(tmp_path: Path) -> None:
    """Rendered: one plot per measurement and per grouped measurement, and 24 item rows."""
    export(result(), tmp_path, ["html"])
    page = rendered(tmp_path / "report.html")
    plots = [a for t, a in page.tags if t == "svg" and a.get("class") == "plot"]
    assert len(plots) == 4  # 2 measurements, each with a per-group plot
    assert "24 matching items" in page.text_by_id["count"]
    item_rows = page.text_by_id.get("items", "")
    assert "item-11" in item_rows
    assert HOSTILE_OUTPUT in item_rows  # shown as text
    assert HOSTILE_MODEL in item_rows
    assert page.text_by_id["suite"] == "html_demo"
    assert not [t for t, _ in page.tags if t == "img"]  # the data made no element
    assert [t for t, _ in page.tags].count("script") == 2


@needs_chromium
def test_chromium_filters_the_items(tmp_path: Path) -> None:
    """The filters (preset from the address) keep only matching items."""
    export(result(), tmp_path, ["html"])
    page = rendered(tmp_path / "report.html", "#state=error&model=alpha")
    # alpha's outputs q4 and q8 raise in test_html_fails_on_q.
    assert "2 matching items" in page.text_by_id["count"]
    assert "no q please: q4" in page.text_by_id["items"]
    assert "item-5" not in page.text_by_id["items"]
    page = rendered(tmp_path / "report.html", "#q=x11")
    assert "2 matching items" in page.text_by_id["count"]
