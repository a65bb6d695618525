"""The leaderboard in the reports of a run: report.html's section, the viewer's page, eee/.

Runs are made with ``itemscore score ... --out`` on generated data: five models on the same
300 questions, one clearly better, three truly equal, one clearly worse and named with markup.
What the reports show is read back (html.parser, jsonschema, headless Chromium) and checked
against :func:`itemscore.leaderboard` on the saved run.
"""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from itemscore import Leaderboard, RunResult, leaderboard
from itemscore.cli import cli
from itemscore.reports import export
from itemscore.reports import leaderboard_files as files_module

HOSTILE = '<script>alert(1)</script><img src=x onerror="alert(2)"> & "q"'
#: One model clearly better, three truly equal, one clearly worse.
SKILL = {"atlas": 1.3, "birch": 0.3, "cedar": 0.3, "delta": 0.3, HOSTILE: -0.6}
RANKED = ("exact_match", "token_f1")
DASH = "\u2013"
SCHEMAS = Path(__file__).parent / "data" / "every_eval_ever"


def _write_data(path: Path, skill: dict[str, float], n: int = 300, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(size=n)
    with path.open("w", encoding="utf-8") as handle:
        for model, s in skill.items():
            p = 1 / (1 + np.exp(difficulty - s))
            for i, right in enumerate(rng.random(n) < p):
                row = {"id": f"q{i}", "model": model, "output": "yes" if right else "no",
                       "expected": "yes"}  # fmt: skip
                handle.write(json.dumps(row) + "\n")
    return path


def _score(folder: Path, skill: dict[str, float], *reports: str) -> Path:
    data = _write_data(folder / "data.jsonl", skill)
    args = ["score", str(data), "-m", "exact_match", "-m", "token_f1", "-m", "f1"]
    args += ["--out", str(folder / "run"), "-q"]
    for name in reports:
        args += ["--report", name]
    out = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert out.exit_code == 0, out.output
    return folder / "run"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report set of five models: results.json, items.parquet, report.html and eee/."""
    return _score(tmp_path_factory.mktemp("boards"), SKILL, "json", "items", "html", "eee")


@pytest.fixture(scope="module")
def boards(run: Path) -> dict[str, Leaderboard]:
    """What the Python API makes of the saved run, per ranked metric."""
    saved = RunResult.load_json(run / "results.json")
    return {label: leaderboard(saved, label) for label in RANKED}


class Section(HTMLParser):
    """The leaderboard section of a page: its boards' rows, their cells' text, its notes."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0  # inside section#leaderboard: the nesting below it, else 0
        self.tags: list[str] = []
        self.boards: dict[str, list[dict[str, Any]]] = {}
        self.groups: dict[str, list[tuple[int, bool]]] = {}  # (tie group, shaded) per tbody
        self.not_ranked: list[str] = []
        self.notes: list[str] = []
        self._board = ""
        self._row: dict[str, Any] | None = None
        self._cell: list[str] | None = None
        self._tie = False
        self.ties: dict[str, list[tuple[str, int]]] = {}  # (text, rows spanned) per group cell
        self._note: list[str] | None = None
        self.sections = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "section" and a.get("id") == "leaderboard":
            self.sections += 1
            self.depth = 1
            return
        if not self.depth:
            return
        self.tags.append(tag)
        if tag not in ("line", "circle", "rect"):
            self.depth += 1
        classes = (a.get("class") or "").split()
        if tag == "div" and "board" in classes:
            self._board = a["data-label"] or ""
            self.boards[self._board] = []
            self.groups[self._board] = []
            self.ties[self._board] = []
        elif tag == "tbody":
            self.groups[self._board].append((int(a["data-tie-group"] or 0), "shade" in classes))
        elif tag == "tr" and "data-model" in a:
            self._row = {k.removeprefix("data-"): v for k, v in a.items()} | {"cells": []}
        elif tag == "td" and self._row is not None:
            self._cell = []
            self._tie = "tie" in classes
            if self._tie:
                self.ties[self._board].append(("", int(a.get("rowspan") or 1)))
        elif tag == "p" and "board-note" in classes:
            self._note = []
        elif tag == "p" and "not-ranked" in classes:
            self.not_ranked.append(a["data-label"] or "")

    def handle_endtag(self, tag: str) -> None:
        if not self.depth:
            return
        if tag not in ("line", "circle", "rect"):
            self.depth -= 1
        if tag == "td" and self._row is not None and self._cell is not None:
            text = "".join(self._cell).strip()
            if self._tie:  # the group's cell, spanning its rows
                self.ties[self._board][-1] = (text, self.ties[self._board][-1][1])
            else:
                self._row["cells"].append(text)
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.boards[self._board].append(self._row)
            self._row = None
        elif tag == "p" and self._note is not None:
            self.notes.append("".join(self._note))
            self._note = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self._note is not None:
            self._note.append(data)


def _section(text: str) -> Section:
    parser = Section()
    parser.feed(text)
    parser.close()
    return parser


def _check_against(section: Section, boards: dict[str, Leaderboard]) -> None:
    """The section's boards list the API's rows, in order, with their ranks and groups."""
    assert list(section.boards) == list(RANKED)
    for label, board in boards.items():
        rows = section.boards[label]
        assert [r["model"] for r in rows] == [row.model for row in board.rows]
        for shown, row in zip(rows, board.rows):
            assert int(shown["rank"]) == row.rank
            assert int(shown["rank-low"]) == row.rank_low
            assert int(shown["rank-high"]) == row.rank_high
            assert int(shown["tie-group"]) == row.tie_group
            rank, model, value, interval, ranks, bar = shown["cells"]
            assert (rank, model) == (str(row.rank), row.model)
            assert ranks == f"{row.rank_low}{DASH}{row.rank_high}"
            # The bar's tooltips: its range, then its rank.
            assert bar == f"{row.model}: ranks {ranks} at this confidence{row.model}: rank {rank}"
            assert float(value) == pytest.approx(row.value, abs=0.006)
            low, high = (float(x) for x in interval.strip("[]").split(", "))
            assert (low, high) == pytest.approx((row.ci_low, row.ci_high), abs=0.006)
        # One tbody per tie group, in order, shaded every other one.
        groups = [g for g, _ in section.groups[label]]
        assert groups == sorted({row.tie_group for row in board.rows})
        assert [shaded for _, shaded in section.groups[label]] == [
            i % 2 == 1 for i in range(len(groups))
        ]
        sizes = [sum(r.tie_group == g for r in board.rows) for g in groups]
        assert section.ties[label] == [(str(g), n) for g, n in zip(groups, sizes)]


def test_the_data_have_one_leader_a_tie_of_three_and_a_last(boards: dict[str, Leaderboard]) -> None:
    """The generated run is the case the section is for: 1, then 2-4 tied, then 5."""
    for board in boards.values():
        assert [r.tie_group for r in board.rows] == [1, 2, 2, 2, 3]
        assert board.rows[0].model == "atlas"
        assert (board.rows[0].rank_low, board.rows[0].rank_high) == (1, 1)
        assert [(r.rank_low, r.rank_high) for r in board.rows[1:4]] == [(2, 4)] * 3
        assert board.rows[-1].model == HOSTILE


def test_report_html_shows_each_board_as_leaderboard_makes_it(
    run: Path, boards: dict[str, Leaderboard]
) -> None:
    """Models in the board's order, with its ranks, rank ranges and tie groups; f1 named."""
    section = _section((run / "report.html").read_text(encoding="utf-8"))
    assert section.sections == 1
    _check_against(section, boards)
    assert section.not_ranked == ["f1"]  # its own aggregate: not a mean over questions
    for note, board in zip(section.notes, boards.values()):
        assert note.startswith(f"{board.n_pairs} shared questions")
        assert "rank ranges at 95%" in note
        assert "max-t, 1000 bootstrap resamples, seed 0" in note


def test_a_hostile_model_name_stays_text(run: Path) -> None:
    """A name holding script and img markup is a cell's text and an attribute, never a tag."""
    text = (run / "report.html").read_text(encoding="utf-8")
    section = _section(text)
    assert HOSTILE in [row["model"] for row in section.boards["exact_match"]]
    last = section.boards["exact_match"][-1]
    assert HOSTILE in last["cells"]
    assert "img" not in section.tags
    assert section.tags.count("script") == 0
    start = text.index('<section id="leaderboard">')
    assert "<script>alert" not in text[start : text.index("</section>", start)]


def test_a_run_of_one_model_has_no_section(tmp_path: Path) -> None:
    """One model: no leaderboard in report.html, no rank interval in eee/."""
    run = _score(tmp_path, {"solo": 0.5}, "json", "html", "eee")
    assert _section((run / "report.html").read_text(encoding="utf-8")).sections == 0
    for path in (run / "eee").rglob("*.json"):
        for entry in json.loads(path.read_text())["evaluation_results"]:
            assert "rank_interval" not in entry["score_details"]["uncertainty"]
            assert not any(
                k.startswith("rank_interval.") for k in entry["score_details"]["details"]
            )


def test_a_report_set_ranks_each_metric_once(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """report.html, eee/ and leaderboard/ of one set share one board per metric."""
    from itemscore import _leaderboard

    calls: list[str] = []
    original = _leaderboard.leaderboard

    def counted(results: Any, metric: str, **options: Any) -> Leaderboard:
        calls.append(metric)
        return original(results, metric, **options)

    monkeypatch.setattr(_leaderboard, "leaderboard", counted)
    saved = RunResult.load_json(run / "results.json")
    export(saved, tmp_path / "set", ["json", "html", "eee", "leaderboard"])
    assert sorted(calls) == sorted([*RANKED, "f1"])  # f1 asked once too, and refused
    assert (tmp_path / "set" / "leaderboard" / "exact_match" / "leaderboard.md").is_file()
    assert files_module.run_boards(saved) is files_module.run_boards(saved)


def _serve(folder: Path) -> Iterator[Any]:
    from itemscore.viewer import make_server

    viewer = make_server([folder], 0)
    thread = threading.Thread(target=viewer.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield viewer
    finally:
        viewer.shutdown()
        viewer.server_close()
        thread.join(timeout=30)


def _get(port: int, path: str) -> str:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request("GET", path)
        answer = connection.getresponse()
        body = answer.read().decode("utf-8")
        assert answer.status == 200, body
        return body
    finally:
        connection.close()


def test_the_viewer_shows_the_same_section(run: Path, boards: dict[str, Leaderboard]) -> None:
    """The viewer's run page, made by the same writer from the saved set, has the boards."""
    for viewer in _serve(run):
        token = json.loads(_get(viewer.port, "/api/runs"))[0]["token"]
        section = _section(_get(viewer.port, f"/run/{token}/"))
        assert section.sections == 1
        _check_against(section, boards)


# -- Every Eval Ever ---------------------------------------------------------------------------


def test_eee_carries_each_models_rank_interval_valid_against_the_schema(
    run: Path, boards: dict[str, Leaderboard]
) -> None:
    """Every aggregate file validates; each ranked measurement holds the board's row."""
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((SCHEMAS / "eval.schema.json").read_text())
    validator = jsonschema.Draft7Validator(schema)
    seen = set()
    for path in sorted((run / "eee").rglob("*.json")):
        record = json.loads(path.read_text())
        assert not list(validator.iter_errors(record)), path
        model = record["model_info"]["id"]
        by_id = {e["evaluation_result_id"]: e for e in record["evaluation_results"]}
        for label, board in boards.items():
            row = next(r for r in board.rows if r.model == model)
            entry = by_id[f"default.{label}"]["score_details"]
            expected = {
                "rank": row.rank,
                "rank_low": row.rank_low,
                "rank_high": row.rank_high,
                "tie_group": row.tie_group,
                "num_models": 5,
                "method": "max-t",
                "confidence_level": 0.95,
                "num_shared_samples": board.n_pairs,
                "num_bootstrap_samples": 1000,
                "seed": 0,
            }
            assert entry["uncertainty"]["rank_interval"] == expected
            strings = {k: str(v) for k, v in expected.items()}
            assert {
                k.removeprefix("rank_interval."): v
                for k, v in entry["details"].items()
                if k.startswith("rank_interval.")
            } == strings
            seen.add(model)
        assert "rank_interval" not in by_id["default.f1"]["score_details"]["uncertainty"]
    assert seen == set(SKILL)


# -- rendered -----------------------------------------------------------------------------------


def test_chromium_shows_tie_groups_and_rank_bars_at_a_glance(
    page: Any, run: Path, boards: dict[str, Leaderboard], tmp_path: Path
) -> None:
    """Groups on alternating shades; each bar spans its rank range on the axis; a screenshot."""
    page.call(
        "Emulation.setDeviceMetricsOverride", width=1366, height=768, deviceScaleFactor=1,
        mobile=False,
    )  # fmt: skip
    page.goto((run / "report.html").as_uri() + "#leaderboard")
    assert page.problems() == []
    shades = page.js(
        "Array.from(document.querySelectorAll('.board[data-label=exact_match] tbody')).map("
        "b=>getComputedStyle(b.rows[0].cells[1]).backgroundColor)"
    )
    assert len(shades) == 3
    assert shades[0] == shades[2] != shades[1]  # neighbouring groups never share a shade
    # Each bar is centred between the axis labels of rank_low and rank_high and reaches a
    # little past both (less than half a rank); the dot sits on the rank's label.
    geometry = page.js(
        "(function(){var b=document.querySelector('.board[data-label=exact_match]');"
        "var axis=Array.from(b.querySelectorAll('svg.rank-axis text')).map(t=>{"
        "var r=t.getBoundingClientRect();return [t.textContent,r.left+r.width/2]});"
        "var bars=Array.from(b.querySelectorAll('tr[data-model]')).map(tr=>{"
        "var r=tr.querySelector('svg.rank-bar rect').getBoundingClientRect();"
        "var c=tr.querySelector('svg.rank-bar circle').getBoundingClientRect();"
        "return [tr.dataset.model,r.left,r.right,c.left+c.width/2]});"
        "return {axis:axis,bars:bars}})()"
    )
    where = {int(label): x for label, x in geometry["axis"]}
    assert sorted(where) == [1, 2, 3, 4, 5]
    step = where[2] - where[1]
    assert step > 20
    for (model, left, right, dot), row in zip(geometry["bars"], boards["exact_match"].rows):
        assert model == row.model
        low, high = where[row.rank_low], where[row.rank_high]
        assert (left + right) / 2 == pytest.approx((low + high) / 2, abs=1.5)
        assert 0 < low - left < step / 2
        assert 0 < right - high < step / 2
        assert dot == pytest.approx(where[row.rank], abs=1.5)
    # The section alone, as a reader sees it at a laptop's width (an artefact to look at).
    box = page.js(
        "(function(){var r=document.getElementById('leaderboard').getBoundingClientRect();"
        "return [r.left+scrollX,r.top+scrollY,r.width,r.height]})()"
    )
    import base64

    shot = page.call(
        "Page.captureScreenshot", format="png", captureBeyondViewport=True,
        clip={"x": box[0], "y": box[1], "width": box[2], "height": box[3], "scale": 1},
    )  # fmt: skip
    path = tmp_path / "leaderboard-section.png"
    path.write_bytes(base64.b64decode(shot["data"]))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert box[3] > 300  # two boards of five rows and their notes, not an empty section
