"""``itemscore view``: the runs it finds, what it serves and refuses, and the pages in Chromium.

The servers run on 127.0.0.1 in a thread of the test (or a subprocess for Ctrl-C) and are
stopped by the test itself; every request goes to them only. Expected views of the items are
computed here from the item records, not by the viewer's code.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import itemscore
from itemscore import ItemResult, RunResult
from itemscore.cli import cli
from itemscore.reports import export
from itemscore.viewer import NoReportSet, Viewer, find_runs, make_server
from itemscore.viewer import _server as server_module

HOSTILE = '<img src=x onerror="document.title=1">'


def run_of(
    models: tuple[str, ...] = ("alpha", "beta"), n: int = 65, shift: int = 0, skill: int = 0
) -> RunResult:
    """``n`` questions per model; ``shift`` changes the answer key, ``skill`` the answers."""
    data = []
    for i in range(n):
        for k, model in enumerate(models, skill):
            right = (i * (k + 2)) % (k + 5) != 0
            data.append(
                ItemResult(
                    id=f"item-{i}",
                    model=model,
                    group=("geo", "sci", None)[i % 3],
                    input=f"What is {i} + {i}?",
                    output=str(2 * i) if right else f"{2 * i + 1}{'?' * (i % 4)}",
                    expected=(str(2 * i + shift),),
                )
            )
    return itemscore.score(data, ["exact_match", "answered_rate"], suite_id="arith")


def write_set(folder: Path, result: RunResult) -> Path:
    export(result, folder, ["json", "items", "html"])
    return folder


@pytest.fixture
def serve() -> Iterator[Callable[..., Viewer]]:
    """Start viewers in threads of this test; each is shut down and closed afterwards."""
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


def request(
    viewer: Viewer,
    path: str,
    *,
    method: str = "GET",
    host: str | None = None,
    body: bytes | None = None,
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", viewer.port, timeout=60)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        connection.putheader("Host", host if host is not None else f"127.0.0.1:{viewer.port}")
        if body is not None:
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
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


# -- finding the sets -----------------------------------------------------------------------


def test_a_folder_without_a_report_set_exits_2(tmp_path: Path) -> None:
    (tmp_path / "empty" / "deeper").mkdir(parents=True)
    answer = CliRunner().invoke(cli, ["view", str(tmp_path / "empty")])
    assert answer.exit_code == 2
    assert f"{tmp_path / 'empty'} holds no report set" in answer.output
    assert "itemscore score FILE -m METRIC --out DIR" in answer.output
    with pytest.raises(NoReportSet):
        find_runs([tmp_path / "empty"])


def test_sets_are_found_below_but_not_in_hidden_folders_or_through_links(tmp_path: Path) -> None:
    """A folder of sets: nested ones found; hidden folders and links to folders not followed."""
    root, outside = tmp_path / "runs", tmp_path / "outside"
    result = run_of(n=6)
    write_set(root / "a", result)
    write_set(root / "x" / "y" / "b", result)
    write_set(root / ".hidden" / "c", result)
    write_set(outside / "d", result)
    (root / "linked").symlink_to(outside / "d", target_is_directory=True)
    names = [r.name for r in find_runs([root])]
    assert names == ["runs/a", "runs/x/y/b"]
    assert [r.name for r in find_runs([root / "a"])] == ["a"]  # a set itself


def test_a_results_file_linked_from_outside_is_listed_refused_and_never_read(
    tmp_path: Path, serve: Callable[..., Viewer]
) -> None:
    root, outside = tmp_path / "runs", tmp_path / "outside"
    write_set(root / "fine", run_of(n=6))
    write_set(outside / "secret", run_of(models=("secret-model",), n=6))
    (root / "sneaky").mkdir()
    (root / "sneaky" / "results.json").symlink_to(outside / "secret" / "results.json")
    viewer = serve(root)
    runs = {r["name"]: r for r in get_json(viewer, "/api/runs")}
    assert runs["runs/sneaky"]["error"].startswith("its results.json lies outside")
    assert runs["runs/sneaky"]["models"] == []
    status, _, body = request(viewer, runs["runs/sneaky"]["report"])
    assert status == 422
    assert b"secret-model" not in body
    status, _, body = request(viewer, runs["runs/sneaky"]["items"])
    assert status == 422
    assert b"secret-model" not in body


def test_a_damaged_run_is_listed_with_its_reason_and_a_saved_result_is_served(
    tmp_path: Path, serve: Callable[..., Viewer]
) -> None:
    """A results.json that is no JSON is listed with why; a saved result pages its items.

    The saved one (``RunResult.save_json``) holds its items inline, without items.parquet.
    """
    (tmp_path / "runs" / "damaged").mkdir(parents=True)
    (tmp_path / "runs" / "damaged" / "results.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "runs" / "saved").mkdir()
    saved = run_of(n=6)
    saved.save_json(tmp_path / "runs" / "saved" / "results.json")
    viewer = serve(tmp_path / "runs")
    runs = {r["name"]: r for r in get_json(viewer, "/api/runs")}
    assert runs["runs/damaged"]["error"].startswith("results.json cannot be read")
    status, _, body = request(viewer, runs["runs/damaged"]["report"])
    assert status == 422
    assert b"cannot be loaded" in body
    answer = get_json(viewer, runs["runs/saved"]["items"] + "?sort=id&dir=desc&limit=2")
    assert [i["id"] for i in answer["items"]] == ["item-5", "item-5"]
    assert answer["total"] == 12


# -- what is served and refused ---------------------------------------------------------------


def test_the_list_names_every_run_with_its_provenance(
    tmp_path: Path, serve: Callable[..., Viewer]
) -> None:
    first, second = run_of(n=6), run_of(models=("gamma",), n=9)
    write_set(tmp_path / "runs" / "one", first)
    write_set(tmp_path / "runs" / "two", second)
    viewer = serve(tmp_path / "runs")
    status, headers, body = request(viewer, "/")
    assert status == 200
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert "script-src 'none'" in headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
    assert headers["X-Content-Type-Options"] == "nosniff"
    page = body.decode()
    for result, name in ((first, "runs/one"), (second, "runs/two")):
        assert f">{name}</a>" in page
        assert str(result.provenance["created"]) in page
    listed = get_json(viewer, "/api/runs")
    assert [r["name"] for r in listed] == ["runs/one", "runs/two"]
    assert listed[1]["models"] == ["gamma"]
    assert listed[1]["n_items"] == 9
    assert listed[0]["provenance"]["itemscore_version"] == first.provenance["itemscore_version"]


def test_other_hosts_methods_bodies_and_long_addresses_are_refused(
    tmp_path: Path, serve: Callable[..., Viewer]
) -> None:
    write_set(tmp_path / "set", run_of(n=6))
    viewer = serve(tmp_path / "set")
    assert request(viewer, "/", host=f"localhost:{viewer.port}")[0] == 200
    status, _, body = request(viewer, "/", host="attacker.example:80")
    assert status == 421
    assert b"answers only at" in body
    status, headers, _ = request(viewer, "/", method="POST", body=b"x=1")
    assert status == 405
    assert headers["Allow"] == "GET, HEAD"
    assert request(viewer, "/", method="DELETE")[0] == 405
    assert request(viewer, "/", body=b"12345")[0] == 413
    assert request(viewer, "/?" + "a" * 5000)[0] == 414
    assert request(viewer, "/?" + "&".join(f"k{i}=1" for i in range(40)))[0] == 400
    status, _, body = request(viewer, "/", method="HEAD")
    assert (status, body) == (200, b"")


@pytest.mark.parametrize(
    "path",
    [
        "/../secret.txt",
        "/run/../../secret.txt",
        "/run/%2e%2e/%2e%2e/secret.txt",
        "/%2e%2e%2fsecret.txt",
        "/run/..%2f..%2fsecret.txt/",
        "/api/runs/..%2f..%2fsecret.txt/items",
        "//etc/passwd",
        "/run/set/results.json",
        "/set/report.html",
    ],
)
def test_no_address_reaches_a_file(path: str, tmp_path: Path, serve: Callable[..., Viewer]) -> None:
    """Addresses name runs by token; none maps to a file, inside the sets or out."""
    (tmp_path / "secret.txt").write_text("TOP-SECRET", encoding="utf-8")
    write_set(tmp_path / "set", run_of(n=6))
    viewer = serve(tmp_path / "set")
    status, _, body = request(viewer, path)
    assert status == 404
    assert b"TOP-SECRET" not in body
    assert b"root:" not in body


def reference_view(result: RunResult, **view: Any) -> list[int]:
    """The positions a view shows, from the item records (the rules the page documents)."""
    records = list(result.items)
    positions = list(range(len(records)))
    if view.get("model"):
        positions = [p for p in positions if records[p].model == view["model"]]
    if view.get("state"):
        labels = [view["metric"]] if view.get("metric") else list(records[0].scores)
        positions = [
            p
            for p in positions
            if any(records[p].scores[x].status == view["state"] for x in labels)
        ]
    if view.get("q"):
        needle = view["q"].lower()

        def texts(r: ItemResult) -> str:
            parts = [r.id, r.model, r.group, r.input, r.output, " | ".join(r.expected or ())]
            parts += [s.reason for s in r.scores.values()]
            return "\n".join(p for p in parts if p).lower()

        positions = [p for p in positions if needle in texts(records[p])]
    sort, desc = view.get("sort", ""), view.get("dir") == "desc"
    if sort == "id":
        number = {p: int(records[p].id.split("-")[1]) for p in positions}
        positions.sort(key=lambda p: (-number[p] if desc else number[p], p))
    elif sort.startswith("metric:"):
        label = sort[7:]
        known = [p for p in positions if records[p].scores[label].value is not None]
        rest = [p for p in positions if records[p].scores[label].value is None]
        sign = -1 if desc else 1
        known.sort(key=lambda p: (sign * records[p].scores[label].value, p))  # type: ignore[operator]
        positions = known + rest
    offset, limit = view.get("offset", 0), view.get("limit", 50)
    return positions[offset : offset + limit]


VIEWS = [
    {},
    {"offset": 120, "limit": 20},
    {"state": "fail"},
    {"state": "fail", "metric": "exact_match", "model": "beta"},
    {"q": "WHAT IS 1"},
    {"q": "1??", "model": "alpha"},
    {"sort": "id", "dir": "desc", "limit": 30},
    {"sort": "metric:exact_match", "limit": 500},
    {"sort": "metric:exact_match", "dir": "desc", "offset": 10, "limit": 40},
]


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: "&".join(f"{k}={x}" for k, x in v.items()))
def test_the_items_endpoint_pages_the_views_the_records_give(
    view: dict[str, Any], tmp_path: Path, serve: Callable[..., Viewer]
) -> None:
    result = run_of()
    write_set(tmp_path / "set", result)
    viewer = serve(tmp_path / "set")
    token = token_of(viewer, "set")
    query = "&".join(f"{k}={v}" for k, v in view.items()).replace(" ", "%20").replace("?", "%3F")
    answer = get_json(viewer, f"/api/runs/{token}/items?{query}")
    expected = reference_view(result, **view)
    assert expected  # a view that shows something
    assert answer["positions"] == expected
    records = list(result.items)
    assert [i["id"] for i in answer["items"]] == [records[p].id for p in expected]
    assert answer["items"][0]["input"] == records[expected[0]].input


@pytest.mark.parametrize(
    ("query", "told"),
    [
        ("limit=501", "`limit` (501) must be between 1 and 500."),
        ("limit=ten", "`offset` and `limit` must be whole numbers."),
        ("state=broken", "`state` ('broken') must be one of ok, fail, skip, error."),
        ("metric=nope", "`metric` ('nope') is no metric label of this run."),
        ("sort=output", "`sort` ('output') must be empty, id, model, group or metric:LABEL."),
        ("model=zeta", "`model` ('zeta') is no model of this run."),
    ],
)
def test_bad_views_are_refused_with_a_reason(
    query: str, told: str, tmp_path: Path, serve: Callable[..., Viewer]
) -> None:
    write_set(tmp_path / "set", run_of(n=6))
    viewer = serve(tmp_path / "set")
    status, _, body = request(viewer, f"/api/runs/{token_of(viewer, 'set')}/items?{query}")
    assert status == 400
    assert json.loads(body) == {"error": told}


def test_two_runs_on_different_data_are_refused_as_compare_refuses_them(
    tmp_path: Path, serve: Callable[..., Viewer]
) -> None:
    base, other = run_of(models=("alpha",)), run_of(models=("beta",), shift=1)
    write_set(tmp_path / "runs" / "base", base)
    write_set(tmp_path / "runs" / "other", other)
    viewer = serve(tmp_path / "runs")
    a, b = token_of(viewer, "runs/base"), token_of(viewer, "runs/other")
    status, _, body = request(viewer, f"/compare?a={a}&b={b}")
    assert status == 422
    with pytest.raises(itemscore.ConfigError) as refused:
        itemscore.compare(base, other)
    text = body.decode()
    message = re.search(r'<p class="error-note" id="refused">(.*?)</p>', text, re.S)
    assert message is not None
    import html

    assert html.unescape(message.group(1)) == f"These runs cannot be compared: {refused.value}"
    assert request(viewer, f"/compare?a={a}&b={a}")[0] == 400


# -- Ctrl-C, ports ------------------------------------------------------------------------------


def _limit_memory() -> None:  # pragma: no cover - runs in the child
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def test_ctrl_c_stops_the_viewer_cleanly(tmp_path: Path) -> None:
    """The command prints its address, serves, and on SIGINT closes the port and exits 0."""
    write_set(tmp_path / "set", run_of(n=6))
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from itemscore.cli import main; main()",
            "view",
            str(tmp_path / "set"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_limit_memory,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        found = re.search(r"at (http://127\.0\.0\.1:(\d+)/) \(Ctrl-C stops it\)\.", line)
        assert found is not None, line
        port = int(found.group(2))
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        connection.request("GET", "/")
        assert connection.getresponse().status == 200
        connection.close()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "Stopped the viewer." in out
    assert "Traceback" not in err
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), 5):
        pass


def test_a_port_in_use_exits_2(tmp_path: Path) -> None:
    write_set(tmp_path / "set", run_of(n=6))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        answer = CliRunner().invoke(cli, ["view", str(tmp_path / "set"), "--port", str(port)])
    assert answer.exit_code == 2
    assert f"--port {port}: the port is in use on 127.0.0.1" in answer.output


# -- in Chromium ----------------------------------------------------------------------------


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, [name for name, _ in attrs]))


def test_markup_in_folder_and_model_names_stays_text(
    tmp_path: Path, serve: Callable[..., Viewer], page: Any
) -> None:
    folder = tmp_path / "runs" / HOSTILE.replace("/", "_")
    write_set(folder, run_of(models=(HOSTILE, "beta"), n=6))
    write_set(tmp_path / "runs" / "plain", run_of(n=6))
    viewer = serve(tmp_path / "runs")
    _, _, body = request(viewer, "/")
    tags = _Tags()
    tags.feed(body.decode())
    assert not [t for t, _ in tags.tags if t in ("img", "script")]
    assert not [a for _, attrs in tags.tags for a in attrs if a.startswith("on")]
    page.goto(viewer.url)
    assert page.js("document.title") == "itemscore view"
    page.goto(viewer.url + f"run/{token_of(viewer, 'runs/' + folder.name)}/")
    assert page.js("document.title") == "itemscore report: arith"
    assert page.js("document.querySelectorAll('img').length") == 0
    assert page.problems() == []


def test_the_report_pages_every_item_through_the_viewer(
    tmp_path: Path, serve: Callable[..., Viewer], page: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page holds 40 items; the rest come from items.parquet as the reader pages."""
    monkeypatch.setattr(server_module, "PAGE_ITEMS", 40)
    result = run_of()
    write_set(tmp_path / "set", result)
    viewer = serve(tmp_path / "set")
    page.goto(viewer.url + f"run/{token_of(viewer, 'set')}/")
    assert (
        page.js("JSON.parse(document.getElementById('items-data').textContent).items.length") == 40
    )
    count = "document.getElementById('count').textContent"
    assert page.wait_for(f"{count}.startsWith('130 matching')") is True
    assert "reads the 130 items from items.parquet" in page.js(
        "document.getElementById('truncated').textContent"
    )
    page.click("#p-last")
    page.wait_for(f"{count}.endsWith('101\u2013130')")
    records = list(result.items)
    shown = page.js(
        "Array.from(document.querySelectorAll('#items tbody tr')).map(r=>r.cells[1].textContent)"
    )
    assert shown == [r.id for r in records[100:]]
    page.choose("#f-status", "fail")
    fails = [r for r in records if any(s.status.value == "fail" for s in r.scores.values())]
    page.wait_for(f"{count}.startsWith('{len(fails)} matching')")
    assert page.problems() == []


HASHES = [
    "",
    "#sort=id&dir=desc&size=25&page=2",
    "#state=fail&metric=exact_match",
    "#model=beta&sort=metric:exact_match&dir=desc",
    "#q=what%20is%201",
]


def test_the_page_alone_and_through_the_viewer_show_the_same_items(
    tmp_path: Path, serve: Callable[..., Viewer], page: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each view: the file (every item in it) and the viewer (asked of the endpoint) agree."""
    monkeypatch.setattr(server_module, "PAGE_ITEMS", 10)
    result = run_of()
    write_set(tmp_path / "set", result)
    viewer = serve(tmp_path / "set")
    served = viewer.url + f"run/{token_of(viewer, 'set')}/"
    shown = (
        "Array.from(document.querySelectorAll('#items tbody tr'))"
        ".map(r=>r.cells[0].textContent+' '+r.cells[1].textContent)"
    )
    count = "document.getElementById('count').textContent"
    for fragment in HASHES:
        page.goto((tmp_path / "set" / "report.html").as_uri() + fragment)
        alone, alone_count = page.js(shown), page.js(count)
        page.goto(served + fragment)
        page.wait_for(f"!{count}.startsWith('loading')&&{count}.length>0")
        assert (page.js(shown), page.js(count)) == (alone, alone_count), fragment
        assert alone
    assert page.problems() == []


def test_two_runs_compared_in_the_viewer(
    tmp_path: Path, serve: Callable[..., Viewer], page: Any
) -> None:
    """Chosen in the list's form: the comparison compare computes on the two loaded runs."""
    base, candidate = run_of(models=("alpha",)), run_of(models=("beta",), skill=1)
    write_set(tmp_path / "runs" / "base", base)
    write_set(tmp_path / "runs" / "candidate", candidate)
    viewer = serve(tmp_path / "runs")
    page.goto(viewer.url)
    page.choose("#pick-a", token_of(viewer, "runs/base"))
    page.choose("#pick-b", token_of(viewer, "runs/candidate"))
    shots = tmp_path / "shots"
    shots.mkdir()
    for label, (width, height) in (("desktop", (1920, 1080)), ("laptop", (1366, 768))):
        page.screenshot(shots / f"list-{label}.png", width, height)
    page.js("document.getElementById('compare-form').submit()")
    page.browser.wait_event("Page.loadEventFired", page.session)
    rows = page.wait_for(
        "Array.from(document.querySelectorAll('#comparisons tbody tr')).map(r=>Array.from(r.cells)"
        ".map(c=>c.getAttribute('data-v')===null?c.textContent:c.getAttribute('data-v')))"
    )
    expected = itemscore.compare(base, candidate)
    assert [r[0] for r in rows] == [c.metric for c in expected]
    assert [float(r[5]) for r in rows] == [c.difference for c in expected]
    assert [float(r[8]) for r in rows] == [c.p_adjusted for c in expected]
    for label, (width, height) in (("desktop", (1920, 1080)), ("laptop", (1366, 768))):
        page.screenshot(shots / f"compare-{label}.png", width, height)
    page.goto(viewer.url + f"run/{token_of(viewer, 'runs/base')}/")
    for label, (width, height) in (("desktop", (1920, 1080)), ("laptop", (1366, 768))):
        page.screenshot(shots / f"report-{label}.png", width, height)
    assert len(list(shots.glob("*.png"))) == 6
    assert page.problems() == []
