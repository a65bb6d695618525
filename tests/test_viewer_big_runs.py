"""``itemscore view`` on runs of many row groups: lazy reads, streamed searches, two new views.

Each run here is scored from a JSON lines file with ``itemscore score FILE -m exact_match
--out DIR``, with row groups made small so that a few hundred items span several groups.
What the viewer answers is checked against what the test computes itself from the sets'
``items.parquet`` with pyarrow (and from ``results.json`` for the scores in the list).
"""

from __future__ import annotations

import html
import http.client
import json
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from itemscore.cli import cli
from itemscore.engine import _store as engine_store
from itemscore.viewer import Viewer, make_server
from itemscore.viewer import _query as query_module
from itemscore.viewer import _server as server_module

ROWS = 40  # rows per row group of the sets written here
N = 300  # questions per run


def request(viewer: Viewer, path: str) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", viewer.port, timeout=60)
    try:
        connection.request("GET", path)
        answer = connection.getresponse()
        return answer.status, dict(answer.getheaders()), answer.read()
    finally:
        connection.close()


def get_json(viewer: Viewer, path: str) -> Any:
    status, _, body = request(viewer, path)
    assert status == 200, body
    return json.loads(body)


def token_of(viewer: Viewer, name: str) -> str:
    return next(r["token"] for r in get_json(viewer, "/api/runs") if r["name"] == name)


def bounds_of(folder: Path) -> list[int]:
    """Where each row group of the set's items.parquet starts, and the row count last."""
    footer = pq.ParquetFile(folder / "items.parquet").metadata
    out = [0]
    for i in range(footer.num_row_groups):
        out.append(out[-1] + footer.row_group(i).num_rows)
    return out


def _rows(n: int, *, models: tuple[str | None, ...], flip: int = 0) -> list[dict[str, Any]]:
    """``n`` questions per model; ``flip`` changes every flip-th answer (right <-> wrong)."""
    out = []
    for i in range(n):
        for k, model in enumerate(models):
            right = (i % 3 != 0) != (flip > 0 and (i + k) % flip == 0)
            row: dict[str, Any] = {
                "id": f"q{i}",
                "input": f"Question {i}: what is {i} doubled?",
                "output": str(2 * i) if right else f"{2 * i + 1} (Paris)",
                "expected": [str(2 * i)] if i % 50 != 7 else None,
            }
            if model is not None:
                row["model"] = model
            out.append(row)
    return out


@pytest.fixture
def scored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Path]:
    """Score rows with the command line into ``runs/NAME`` (row groups of :data:`ROWS`)."""
    monkeypatch.setattr(engine_store, "ROW_GROUP", ROWS)

    def make(name: str, rows: list[dict[str, Any]]) -> Path:
        data = tmp_path / f"{name}.jsonl"
        data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        out = tmp_path / "runs" / name
        run = CliRunner().invoke(cli, ["score", str(data), "-m", "exact_match", "--out", str(out)])
        assert run.exit_code == 0, run.output
        assert pq.ParquetFile(out / "items.parquet").metadata.num_row_groups > 3
        return out

    return make


@pytest.fixture
def serve() -> Iterator[Callable[..., Viewer]]:
    started: list[tuple[Viewer, threading.Thread]] = []

    def start(*folders: Path) -> Viewer:
        viewer = make_server(list(folders), 0)
        thread = threading.Thread(target=viewer.serve_forever, args=(0.05,), daemon=True)
        thread.start()
        started.append((viewer, thread))
        return viewer

    yield start
    for viewer, thread in started:
        viewer.shutdown()
        viewer.server_close()
        thread.join(timeout=30)


@pytest.fixture
def spy_reads(monkeypatch: pytest.MonkeyPatch) -> Callable[[], list[int]]:
    """Once called: the row groups read from any Parquet file; reading a whole one fails."""

    def install() -> list[int]:
        read: list[int] = []
        original = pq.ParquetFile.read_row_group

        def spy(self: pq.ParquetFile, i: int, *args: Any, **kwargs: Any) -> Any:
            read.append(i)
            return original(self, i, *args, **kwargs)

        def whole(*_: Any, **__: Any) -> None:
            raise AssertionError("a whole items file was read")

        monkeypatch.setattr(pq.ParquetFile, "read_row_group", spy)
        for name in ("read", "read_row_groups", "iter_batches"):
            monkeypatch.setattr(pq.ParquetFile, name, whole)
        return read

    return install


def items_of(folder: Path) -> list[dict[str, Any]]:
    """The set's items as pyarrow reads them: one dict per row, in order."""
    return pq.read_table(folder / "items.parquet").to_pylist()


def state_of(row: dict[str, Any]) -> tuple[int, float | None]:
    score = row["score:exact_match"]
    return score["status"], score["value"]


# -- the list -----------------------------------------------------------------------------------


def test_the_run_list_shows_each_models_headline_scores(
    scored: Callable[..., Path], serve: Callable[..., Viewer]
) -> None:
    """Each model's metric label and value, as results.json records them, in the list."""
    scored("one", _rows(N, models=(None,)))
    root = scored("two", _rows(N, models=("alpha", "beta"), flip=5)).parent
    viewer = serve(root)
    listed = {r["name"]: r for r in get_json(viewer, "/api/runs")}
    status, _, body = request(viewer, "/")
    assert status == 200
    page = body.decode()
    for name in ("one", "two"):
        data = json.loads((root / name / "results.json").read_text(encoding="utf-8"))
        expected = [
            {"model": entry["model"], "metric": m["metric"], "value": m["value"]}
            for entry in data["by_model"]
            for m in entry["measurements"]
        ]
        assert listed[f"runs/{name}"]["scores"] == expected
        row = re.search(rf">runs/{name}</a>.*?</tr>", page, re.S)
        assert row is not None
        cell = re.search(r'<td class="scores">(.*?)</td>', row.group(0), re.S)
        assert cell is not None
        shown = [float(v) for v in re.findall(r'data-v="([^"]+)"', cell.group(1))]
        assert shown == [e["value"] for e in expected]
        for e in expected:
            assert e["metric"] in cell.group(1)
            if e["model"] is not None:
                assert f"{e['model']}:" in cell.group(1)
    assert '<a href="/disagree?run=' in page  # the two-model run links its disagreements
    assert page.count("models disagree</a>") == 1


# -- opening a run reads its first rows only ----------------------------------------------------


def test_the_first_page_of_a_run_reads_only_its_first_row_group(
    scored: Callable[..., Path],
    serve: Callable[..., Viewer],
    spy_reads: Callable[[], list[int]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The page and its first items come from row group 0; the count from results.json."""
    monkeypatch.setattr(server_module, "PAGE_ITEMS", 30)
    folder = scored("one", _rows(N, models=(None,)))
    viewer = serve(folder)
    token = token_of(viewer, "one")
    groups_read = spy_reads()
    status, _, body = request(viewer, f"/run/{token}/")
    assert status == 200
    page = body.decode()
    data = re.search(r'<script type="application/json" id="items-data">(.*?)</script>', page)
    assert data is not None
    held = json.loads(data.group(1))
    assert held["total"] == N
    assert len(held["items"]) == 30
    assert f"{N} items" in page
    answer = get_json(viewer, f"/api/runs/{token}/items?limit=40")
    assert answer["total"] == N
    assert groups_read
    assert set(groups_read) == {0}
    groups_read.clear()
    answer = get_json(viewer, f"/api/runs/{token}/items?offset=205&limit=10")
    bounds = bounds_of(folder)
    holding = {g for g in range(len(bounds) - 1) if bounds[g] < 215 and bounds[g + 1] > 205}
    assert set(groups_read) == holding
    assert 0 not in holding
    rows = items_of(folder)
    assert [i["id"] for i in answer["items"]] == [r["id"] for r in rows[205:215]]
    assert answer["items"][0]["output"] == rows[205]["output"]


def test_an_items_file_changed_after_opening_is_refused_not_read(
    scored: Callable[..., Path], serve: Callable[..., Viewer], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file checked when the run was opened is the only one read; a new one is checked."""
    folder = scored("one", _rows(N, models=(None,)))
    viewer = serve(folder)
    token = token_of(viewer, "one")
    assert request(viewer, f"/run/{token}/")[0] == 200
    real = (folder / "items.parquet").resolve()
    with real.open("ab") as handle:
        handle.write(b"\0")
    status, _, body = request(viewer, f"/api/runs/{token}/items?offset=250&limit=5")
    assert status == 422  # opened again, and its hash checked
    assert (
        "items.parquet is not the items file this results file was written with"
        in (json.loads(body)["error"])
    )
    # Changed between the check and a read (the check passed, as for an untouched file).
    from itemscore.viewer._store import ItemStore

    monkeypatch.setattr(ItemStore, "fresh", lambda self: True)
    run = viewer.runs.get(token)
    assert run is not None
    loaded = viewer.runs.load(run)
    status, _, body = request(viewer, f"/api/runs/{token}/items?offset=250&limit=5")
    assert loaded is viewer.runs.load(run)  # the one checked before, still kept
    assert status == 422
    assert "changed since the viewer checked it; open the run again" in json.loads(body)["error"]


# -- a search streams row groups ----------------------------------------------------------------


def test_a_search_answers_with_its_first_page_of_hits_then_goes_on(
    scored: Callable[..., Path],
    serve: Callable[..., Viewer],
    spy_reads: Callable[[], list[int]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first answer stops at a page of hits; asked again, the search finishes the count."""
    monkeypatch.setattr(query_module, "SLICE", 60.0)  # only the page of hits stops it
    folder = scored("one", _rows(N, models=(None,)))
    viewer = serve(folder)
    token = token_of(viewer, "one")
    rows = items_of(folder)
    matching = [
        p
        for p, r in enumerate(rows)
        if any(
            "paris" in (t or "").lower()
            for t in (r["id"], r["input"], r["output"], " | ".join(r["expected"] or []))
        )
    ]
    assert len(matching) > 20
    groups_read = spy_reads()
    first = get_json(viewer, f"/api/runs/{token}/items?q=PARIS&limit=5")
    assert first["complete"] is False
    assert first["positions"] == matching[:5]
    assert [i["id"] for i in first["items"]] == [rows[p]["id"] for p in matching[:5]]
    bounds = bounds_of(folder)
    last = next(g for g in range(len(bounds)) if bounds[g + 1] > matching[4])
    # Searched up to the group of the fifth hit (then the page's rows read from theirs).
    assert sorted(set(groups_read)) == list(range(last + 1))
    assert first["scanned"] == bounds[last + 1] < N
    answer = get_json(viewer, f"/api/runs/{token}/items?q=PARIS&limit=5")
    assert answer["complete"] is True
    assert answer["total"] == len(matching)
    assert answer["scanned"] == answer["of"] == N
    later = get_json(viewer, f"/api/runs/{token}/items?q=paris&offset=15&limit=5")
    assert later["positions"] == matching[15:20]


def test_a_sorted_search_answers_when_every_group_is_searched(
    scored: Callable[..., Path], serve: Callable[..., Viewer], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sorted, no hit can be shown before all are known: progress, then the sorted page."""
    monkeypatch.setattr(query_module, "SLICE", 0.0)  # one row group per answer
    folder = scored("one", _rows(N, models=(None,)))
    viewer = serve(folder)
    token = token_of(viewer, "one")
    rows = items_of(folder)
    matching = [p for p, r in enumerate(rows) if "paris" in (r["output"] or "").lower()]
    answers = []
    while not answers or answers[-1]["complete"] is False:
        answers.append(get_json(viewer, f"/api/runs/{token}/items?q=paris&sort=id&dir=desc"))
        assert len(answers) <= N
    bounds = bounds_of(folder)
    assert [a["scanned"] for a in answers] == bounds[1:]  # one row group per answer
    assert all(a["positions"] == [] for a in answers[:-1])
    number = {p: int(rows[p]["id"][1:]) for p in matching}
    expected = sorted(matching, key=lambda p: -number[p])[:50]
    assert answers[-1]["positions"] == expected
    assert answers[-1]["total"] == len(matching)


# -- items that changed between two runs ------------------------------------------------------


def reference_changes(a: Path, b: Path) -> list[tuple[str, str]]:
    """``(id, kind)`` of every item whose state or value differs, in a's order (by pyarrow).

    Items pair by model and id (the runs here have the same models, or none).
    """
    by_key = {(r["model"], r["id"]): state_of(r) for r in items_of(b)}
    out = []
    for row in items_of(a):
        key = (row["model"], row["id"])
        if key not in by_key:
            continue
        (sa, va), (sb, vb) = state_of(row), by_key[key]
        if (sa, va) != (sb, vb):
            kind = "ok-fail" if (sa, sb) == (0, 1) else "fail-ok" if (sa, sb) == (1, 0) else "other"
            out.append((row["id"], kind))
    return out


def test_the_items_that_changed_between_two_runs_are_what_pyarrow_finds(
    scored: Callable[..., Path], serve: Callable[..., Viewer]
) -> None:
    before = scored("before", _rows(N, models=(None,)))
    after = scored("after", _rows(N - 20, models=(None,), flip=7))
    viewer = serve(before.parent)
    a, b = token_of(viewer, "runs/before"), token_of(viewer, "runs/after")
    expected = reference_changes(before, after)
    assert {k for _, k in expected} == {"ok-fail", "fail-ok"}
    answer = get_json(viewer, f"/api/changed?a={a}&b={b}&metric=exact_match&limit=500")
    assert [i["a"]["id"] for i in answer["items"]] == [i for i, _ in expected]
    assert answer["total"] == len(expected)
    assert answer["shared"] == N - 20
    assert (answer["only_a"], answer["only_b"]) == (20, 0)
    assert answer["paired_by"] == ["id"]
    counts = {k: sum(1 for _, x in expected if x == k) for k in ("ok-fail", "fail-ok", "other")}
    assert answer["counts"] == counts
    first = answer["items"][0]
    assert first["a"]["output"] != first["b"]["output"]
    wanted = [i for i, k in expected if k == "fail-ok"]
    page = get_json(viewer, f"/api/changed?a={a}&b={b}&change=fail-ok&offset=3&limit=4")
    assert [i["b"]["id"] for i in page["items"]] == wanted[3:7]
    assert [i["b"]["scores"]["exact_match"][0] for i in page["items"]] == ["ok"] * 4
    status, _, body = request(viewer, f"/changed?a={a}&b={b}&metric=exact_match&change=ok-fail")
    assert status == 200
    text = html.unescape(body.decode())
    assert f"the state or value of exact_match differs for {len(expected)}:" in re.sub(
        "<[^>]+>", "", text
    )
    shown = re.findall(r'<tr><td class="num">\d+</td><td>(q\d+)</td>', text)
    assert shown == [i for i, k in expected if k == "ok-fail"][:50]


def test_runs_that_cannot_be_paired_are_refused_with_the_reason(
    scored: Callable[..., Path], serve: Callable[..., Viewer]
) -> None:
    one = scored("one", _rows(30 * 4, models=("alpha", "beta")))
    scored("other", _rows(30 * 4, models=("gamma", "delta")))
    viewer = serve(one.parent)
    a, b = token_of(viewer, "runs/one"), token_of(viewer, "runs/other")
    status, _, body = request(viewer, f"/api/changed?a={a}&b={b}")
    assert status == 422
    said = json.loads(body)["error"]
    assert "different models (runs/one: alpha, beta; runs/other: delta, gamma)" in said
    assert "choose one model of each (model_a and model_b)" in said
    chosen = get_json(viewer, f"/api/changed?a={a}&b={b}&model_a=beta&model_b=gamma")
    assert chosen["shared"] == 120
    status, _, body = request(viewer, f"/changed?a={a}&b={b}&metric=f1")
    assert status == 400
    assert "is no metric label of both runs; choose one of exact_match" in html.unescape(
        body.decode()
    )
    assert request(viewer, f"/api/changed?a={a}&b={b}&change=better")[0] == 400
    assert request(viewer, f"/api/changed?a={a}&b={a}")[0] == 400


# -- models that disagree -----------------------------------------------------------------------


def test_the_questions_models_disagree_on_are_what_pyarrow_finds(
    scored: Callable[..., Path], serve: Callable[..., Viewer]
) -> None:
    folder = scored("two", _rows(N // 2, models=("alpha", "beta", "gamma"), flip=4))
    viewer = serve(folder)
    token = token_of(viewer, "two")
    states: dict[str, dict[str, int]] = {}
    for row in items_of(folder):
        states.setdefault(row["id"], {})[row["model"]] = state_of(row)[0]
    expected = [i for i, by in states.items() if len(set(by.values())) > 1]
    assert 0 < len(expected) < len(states)
    got: list[str] = []
    while len(got) < len(expected):
        page = get_json(viewer, f"/api/runs/{token}/disagree?offset={len(got)}&limit=40")
        assert page["total"] == len(expected)
        got += [q["id"] for q in page["questions"]]
        assert page["questions"]
    assert got == expected
    assert page["compared"] == len(states)
    assert page["ok_by_model"] == {
        m: sum(1 for i in expected if states[i][m] == 0) for m in ("alpha", "beta", "gamma")
    }
    question = page["questions"][0]
    assert sorted(question["items"]) == ["alpha", "beta", "gamma"]
    assert {m: item["scores"]["exact_match"][0] for m, item in question["items"].items()} == {
        m: ("ok", "fail", "skip", "error")[s] for m, s in states[question["id"]].items()
    }
    capped = get_json(viewer, f"/api/runs/{token}/disagree?limit=500")
    assert capped["limit"] == 500 // 3  # an item per model: at most 500 items an answer
    assert sum(len(q["items"]) for q in capped["questions"]) <= 500
    status, _, body = request(viewer, f"/disagree?run={token}&offset=40")
    assert status == 200
    shown = re.findall(r'<tr><td class="num">\d+</td><td>(q\d+)</td>', body.decode())
    assert shown == expected[40:90]


def test_a_run_of_one_model_has_nothing_to_disagree_on(
    scored: Callable[..., Path], serve: Callable[..., Viewer]
) -> None:
    folder = scored("one", _rows(N, models=(None,)))
    viewer = serve(folder)
    status, _, body = request(viewer, f"/api/runs/{token_of(viewer, 'one')}/disagree")
    assert status == 422
    assert json.loads(body)["error"] == (
        "This run has fewer than two models; there is nothing to disagree on."
    )


# -- in Chromium ----------------------------------------------------------------------------


def test_the_list_and_the_new_views_in_chromium(
    scored: Callable[..., Path],
    serve: Callable[..., Viewer],
    page: Any,
    tmp_path: Path,
) -> None:
    """The list with scores, the changed view from its form, the disagree view; screenshots."""
    before = scored("before", _rows(N, models=("alpha", "beta")))
    scored("after", _rows(N, models=("alpha", "beta"), flip=6))
    viewer = serve(before.parent)
    shots = tmp_path / "shots"
    shots.mkdir()
    page.goto(viewer.url)
    assert page.js("document.querySelectorAll('#runs td.scores div').length") == 4
    page.screenshot(shots / "list.png", 1366, 768)
    page.choose("#changed-a", token_of(viewer, "runs/before"))
    page.choose("#changed-b", token_of(viewer, "runs/after"))
    page.js("document.getElementById('changed-form').submit()")
    page.browser.wait_event("Page.loadEventFired", page.session)
    assert page.js("document.title") == "itemscore view: items that changed"
    expected = reference_changes(before, before.parent / "after")
    rows = page.js("document.querySelectorAll('#changed tbody tr').length")
    assert rows == min(50, len(expected))
    page.screenshot(shots / "changed.png", 1366, 768)
    page.goto(viewer.url + f"disagree?run={token_of(viewer, 'runs/after')}")
    assert page.js("document.querySelectorAll('#disagree tbody tr').length") > 0
    page.screenshot(shots / "disagree.png", 1366, 768)
    assert page.problems() == []


def test_the_report_shows_a_progress_bar_while_a_search_goes_on(
    scored: Callable[..., Path],
    serve: Callable[..., Viewer],
    page: Any,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """Each answer brings one row group; the page shows progress, then every hit."""
    monkeypatch.setattr(query_module, "SLICE", 0.0)
    monkeypatch.setattr(server_module, "PAGE_ITEMS", 20)
    slow = query_module.text_hits

    def slowly(group: Any, needle: str) -> Any:
        threading.Event().wait(0.15)  # long enough for the page to be seen searching
        return slow(group, needle)

    monkeypatch.setattr(query_module, "text_hits", slowly)
    folder = scored("one", _rows(N, models=(None,)))
    viewer = serve(folder)
    page.goto(viewer.url + f"run/{token_of(viewer, 'one')}/")
    count = "document.getElementById('count').textContent"
    page.wait_for(f"{count}.startsWith('{N} matching')")
    page.choose("#q", "paris")
    assert page.wait_for("document.getElementById('busy')!==null") is True
    assert page.wait_for(f"{count}.startsWith('searching: ')")
    page.screenshot(tmp_path / "searching.png", 1366, 768)
    matching = [r for r in items_of(folder) if "paris" in (r["output"] or "").lower()]
    page.wait_for(f"{count}.startsWith('{len(matching)} matching')")
    assert page.js("document.getElementById('busy')") is None
    assert page.js("document.getElementById('items').getAttribute('aria-busy')") is None
    shown = page.js(
        "Array.from(document.querySelectorAll('#items tbody tr')).map(r=>r.cells[1].textContent)"
    )
    assert shown == [r["id"] for r in matching[:50]]
    assert page.problems() == []


# -- natural order of numbered ids --------------------------------------------------------------


def natural(text: str) -> list[tuple[int, Any]]:
    """The page's natural order, written again here: digit runs as numbers, before text."""
    return [
        (0, int(run)) if run.isdigit() else (1, run) for run in re.findall(r"[0-9]+|[^0-9]+", text)
    ]


IDS = ["q10", "q2", "q02", "", "a", "a1", "b", "10", "9", "item-0042", "item-42", "item-5", None]


def test_numbered_ids_rank_by_arrow_as_the_natural_order_does() -> None:
    """Ids of text then digits are ranked without Python keys, in the page's order."""
    import pyarrow as pa

    column = pa.chunked_array([pa.array(IDS, pa.string())])
    ranks = query_module._numbered_ranks(column)
    assert ranks is not None
    keys = sorted({tuple(natural(i)) for i in IDS if i is not None})
    expected = [-1 if i is None else keys.index(tuple(natural(i))) for i in IDS]
    assert ranks.tolist() == expected
    mixed = pa.chunked_array([pa.array(["q1a", "q2"], pa.string())])
    assert query_module._numbered_ranks(mixed) is None  # text after the number: the general way


HOSTILE = '<img src=x onerror="document.title=1">'


def test_markup_in_models_ids_and_outputs_stays_text_in_the_new_views(
    scored: Callable[..., Path], serve: Callable[..., Viewer]
) -> None:
    rows = _rows(N // 2, models=(HOSTILE, "beta"), flip=4)
    for row in rows[::7]:
        row["output"] = HOSTILE
        row["id"] = row["id"] + HOSTILE
    before = scored("before", rows)
    scored("after", _rows(N // 2, models=(HOSTILE, "beta")))
    viewer = serve(before.parent)
    a, b = token_of(viewer, "runs/before"), token_of(viewer, "runs/after")
    for path in ("/", f"/changed?a={a}&b={b}", f"/disagree?run={a}", f"/disagree?run={b}"):
        status, _, body = request(viewer, path)
        assert status == 200, path
        text = body.decode()
        assert "<img" not in text, path
        assert "&lt;img src=x onerror=&quot;document.title=1&quot;&gt;" in text, path
