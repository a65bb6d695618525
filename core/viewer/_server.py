r"""The viewer's HTTP server: the standard library's, on the loopback interface only.

Addresses (nothing else is served; no address names a file):

- ``/``: every run with its provenance, and a form to compare two;
- ``/run/TOKEN/``: a run's report.html, made by the same writer, holding its first items
  and paging the rest from ``/api/runs/TOKEN/items``;
- ``/api/runs``: the runs as JSON;
- ``/api/runs/TOKEN/items?q=&model=&metric=&state=&sort=&dir=&offset=&limit=``: one view of
  a run's items (:mod:`._query`), in the page's item shape; a text search may answer before
  it has looked at every item (``"complete": false``, ``"scanned"``), and goes on when asked
  again;
- ``/compare?a=TOKEN&b=TOKEN``: two runs compared by :func:`itemscore.compare`, or why it
  refuses them;
- ``/changed?a=TOKEN&b=TOKEN&metric=&change=&model_a=&model_b=&offset=&limit=`` (and
  ``/api/changed?...``, as JSON): the items whose verdict changed between two runs
  (:mod:`._views`);
- ``/disagree?run=TOKEN&metric=&offset=&limit=`` (and ``/api/runs/TOKEN/disagree?...``): the
  questions a run's models disagree on.

Bounds: only ``GET`` and ``HEAD``, no request body, an address of at most :data:`MAX_URL`
characters with at most :data:`MAX_FIELDS` query fields, at most :data:`~._query.MAX_LIMIT`
items per answer, a slow client cut off after :data:`TIMEOUT` seconds. A request whose
``Host`` is not the viewer's own address is refused, so a web page elsewhere cannot reach
the viewer through a name that resolves to 127.0.0.1 (DNS rebinding). Every answer forbids
framing, sniffing and caching, and carries the policy of its page. The request log
(``log``) shows control characters of a request line as escapes (``\x1b``).
"""

from __future__ import annotations

import contextlib
import json
import sys
import urllib.parse
from collections.abc import Callable, Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from .._exceptions import ConfigError, ItemscoreError
from .._records import ItemResult
from ..display._text import printable
from ..reports._html_data import item_json
from ..reports._html_markup import policy
from ..reports._html_script import SCRIPT
from ..reports.report_html import MAX_TEXT, report_html
from ._pages import (
    PAGE_POLICY,
    changed_page,
    compare_page,
    disagree_page,
    index_page,
    message_page,
)
from ._query import MAX_LIMIT, ItemIndex, ItemView
from ._runs import Loaded, Run, Runs
from ._views import CHANGES, Refused, changed_items, disagreements, questions_at

__all__ = [
    "HOST",
    "MAX_FIELDS",
    "MAX_URL",
    "PAGE_ITEMS",
    "TIMEOUT",
    "Viewer",
    "make_server",
    "serve",
]

#: The one interface the viewer listens on.
HOST = "127.0.0.1"
#: The longest address served.
MAX_URL = 4096
#: The most query fields an address may have.
MAX_FIELDS = 16
#: Seconds a client may take to send its request.
TIMEOUT = 30
#: The items a report page served by the viewer holds; the rest are asked for as needed.
PAGE_ITEMS = 500
_API_POLICY = "default-src 'none'; frame-ancestors 'none'"
#: A served report's policy, as its page says it: its script, and asking this server for items.
_REPORT_POLICY = policy(script=SCRIPT, connect=True)


class Viewer(ThreadingHTTPServer):
    """The server: its runs, and the addresses a request may name it by."""

    daemon_threads = True  # Ctrl-C never waits for a client that keeps its connection open

    def __init__(self, runs: Runs, port: int, log: Callable[[str], None] | None = None) -> None:
        super().__init__((HOST, port), _Handler)
        self.runs = runs
        self.log = log
        self.port = int(self.server_address[1])
        self.hosts = {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away is no error; anything else is said in one line."""
        error = sys.exc_info()[1]
        if isinstance(error, (ConnectionError, TimeoutError)):
            return
        message = printable(f"{type(error).__name__}: {error}")
        print(f"itemscore view: a request failed: {message}", file=sys.stderr)

    @property
    def url(self) -> str:
        """The address to open."""
        return f"http://127.0.0.1:{self.port}/"


def make_server(
    folders: Sequence[Path], port: int = 0, log: Callable[[str], None] | None = None
) -> Viewer:
    """A viewer of the report sets in ``folders`` on ``127.0.0.1:port`` (0: a free port).

    Raises:
        NoReportSet: a folder holds no report set.
        OSError: the port cannot be had (taken, or not allowed).
    """
    return Viewer(Runs(folders), port, log)


class _Refused(Exception):
    """A request the viewer answers with an error status and a message."""

    def __init__(self, status: HTTPStatus, message: str, *, page: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.page = page


class _Handler(BaseHTTPRequestHandler):
    server: Viewer
    server_version = "itemscore-view"
    sys_version = ""
    timeout = TIMEOUT

    # -- plumbing --------------------------------------------------------------------------

    def log_message(self, format: str, *args: Any) -> None:
        # The request line is the client's bytes: an escape sequence in it (`GET /\x1b]0;...`)
        # is shown, never obeyed by the terminal the log goes to.
        if self.server.log is not None:
            self.server.log(printable(f"{self.address_string()} {format % args}"))

    def _send(self, status: HTTPStatus, body: bytes, kind: str, csp: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", csp)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cache-Control", "no-store")
        if status == HTTPStatus.METHOD_NOT_ALLOWED:
            self.send_header("Allow", "GET, HEAD")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _html(self, text: str, status: HTTPStatus = HTTPStatus.OK, csp: str = PAGE_POLICY) -> None:
        body = text.encode("utf-8", "backslashreplace")
        self._send(status, body, "text/html; charset=utf-8", f"{csp}; frame-ancestors 'none'")

    def _json(self, data: Any, status: HTTPStatus = HTTPStatus.OK) -> None:
        body = (data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)).encode(
            "utf-8", "backslashreplace"
        )
        self._send(status, body, "application/json; charset=utf-8", _API_POLICY)

    def _json_with(self, head: dict[str, Any], key: str, items: str) -> None:
        """``head`` as JSON, with the list ``key`` of ``items`` (JSON texts joined) last."""
        text = json.dumps(head, ensure_ascii=False)
        self._json(f'{text[:-1]}, "{key}": [{items}]}}')

    def _refuse(self, status: HTTPStatus, message: str, *, page: bool) -> None:
        if page:
            self._html(message_page(status.phrase, message), status)
        else:
            self._json({"error": message}, status)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The base class's errors (a bad request line, too long a line) as plain text."""
        status = HTTPStatus(code)
        self.close_connection = True
        body = f"{status.value} {status.phrase}: {message or status.description}\n".encode()
        with contextlib.suppress(OSError):  # the client is gone
            self._send(status, body, "text/plain; charset=utf-8", _API_POLICY)

    # -- requests --------------------------------------------------------------------------

    def do_GET(self) -> None:
        try:
            self._check()
            self._route()
        except _Refused as refused:
            self._refuse(refused.status, str(refused), page=refused.page)

    do_HEAD = do_GET

    def _not_allowed(self) -> None:
        self.close_connection = True
        self._refuse(
            HTTPStatus.METHOD_NOT_ALLOWED,
            f"The viewer only reads: {self.command} is not allowed (GET and HEAD are).",
            page=False,
        )

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _not_allowed

    def _check(self) -> None:
        """Refuse what the viewer never serves: other hosts, long addresses, bodies."""
        if self.headers.get("Host", "") not in self.server.hosts:
            raise _Refused(
                HTTPStatus.MISDIRECTED_REQUEST,
                f"The viewer answers only at {self.server.url} (this request named the host "
                f"{self.headers.get('Host', '')!r}).",
            )
        if len(self.path) > MAX_URL:
            raise _Refused(
                HTTPStatus.REQUEST_URI_TOO_LONG,
                f"The address is {len(self.path)} characters long; the viewer reads at most "
                f"{MAX_URL}.",
            )
        if self.headers.get("Transfer-Encoding") or self.headers.get("Content-Length", "0") != "0":
            self.close_connection = True
            raise _Refused(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                "The viewer reads no request body; send a GET request without one.",
            )

    def _query(self, query: str) -> dict[str, str]:
        try:
            fields = urllib.parse.parse_qs(
                query, keep_blank_values=True, strict_parsing=False, max_num_fields=MAX_FIELDS
            )
        except ValueError:
            raise _Refused(
                HTTPStatus.BAD_REQUEST, f"The address has more than {MAX_FIELDS} query fields."
            ) from None
        return {key: values[-1] for key, values in fields.items()}

    def _route(self) -> None:
        parsed = urllib.parse.urlsplit(self.path)
        parts = [p for p in parsed.path.split("/") if p]
        query = self._query(parsed.query)
        if not parts:
            self._index()
        elif parts == ["api", "runs"]:
            self._runs_json()
        elif len(parts) == 4 and parts[:2] == ["api", "runs"] and parts[3] == "items":
            self._items(parts[2], query)
        elif len(parts) == 2 and parts[0] == "run":
            self._report(parts[1])
        elif parts == ["compare"]:
            self._compare(query)
        elif parts == ["changed"]:
            self._changed(query, page=True)
        elif parts == ["api", "changed"]:
            self._changed(query, page=False)
        elif parts == ["disagree"]:
            self._disagree(query.get("run", ""), query, page=True)
        elif len(parts) == 4 and parts[:2] == ["api", "runs"] and parts[3] == "disagree":
            self._disagree(parts[2], query, page=False)
        else:
            raise _Refused(
                HTTPStatus.NOT_FOUND,
                f"The viewer has no page {parsed.path!r}; its runs are listed at /.",
                page=True,
            )

    def _run(self, token: str, *, page: bool) -> Any:
        run = self.server.runs.get(token)
        if run is None:
            raise _Refused(
                HTTPStatus.NOT_FOUND,
                f"No run has the token {token!r}; the runs are listed at /.",
                page=page,
            )
        return run

    def _loaded(self, token: str, *, page: bool) -> Any:
        run = self._run(token, page=page)
        with self._reading(run, page=page, done="loaded"):
            return run, self.server.runs.load(run)

    # -- pages -----------------------------------------------------------------------------

    def _index(self) -> None:
        runs = self.server.runs
        infos = [runs.info(run) for run in runs.refresh()]
        self._html(index_page(infos, [str(f) for f in runs.folders]))

    def _runs_json(self) -> None:
        runs = self.server.runs
        out = []
        for run in runs.refresh():
            info = runs.info(run)
            out.append(
                {
                    "token": run.token,
                    "name": run.name,
                    "report": f"/run/{run.token}/",
                    "items": f"/api/runs/{run.token}/items",
                    "error": info.error,
                    "suite": info.suite,
                    "models": list(info.models),
                    "metrics": list(info.labels),
                    "n_items": info.n_items,
                    "scores": [
                        {"model": h.model, "metric": h.label, "value": h.value} for h in info.scores
                    ],
                    "provenance": dict(info.provenance),
                }
            )
        self._json(out)

    def _report(self, token: str) -> None:
        run, loaded = self._loaded(token, page=True)
        with loaded.rendering:
            if loaded.page is None:
                with self._reading(run, page=True, done="loaded"):
                    result = loaded.page_result(PAGE_ITEMS)
                loaded.page = report_html(
                    result,
                    source={"items": f"/api/runs/{token}/items"},
                    max_items=PAGE_ITEMS,
                    back="/",
                )
        self._html(loaded.page, csp=_REPORT_POLICY)

    def _page(self, query: dict[str, str], default: int = 50) -> tuple[int, int]:
        """``offset`` and ``limit`` of the query, checked."""
        try:
            offset = int(query.get("offset") or "0")
            limit = int(query.get("limit") or str(default))
        except ValueError:
            raise _Refused(
                HTTPStatus.BAD_REQUEST, "`offset` and `limit` must be whole numbers."
            ) from None
        if not 1 <= limit <= MAX_LIMIT:
            raise _Refused(
                HTTPStatus.BAD_REQUEST, f"`limit` ({limit}) must be between 1 and {MAX_LIMIT}."
            )
        if offset < 0:
            raise _Refused(HTTPStatus.BAD_REQUEST, f"`offset` ({offset}) must be 0 or more.")
        return offset, limit

    def _items(self, token: str, query: dict[str, str]) -> None:
        run, loaded = self._loaded(token, page=False)
        index = loaded.index
        try:
            view = ItemView(
                **{k: query.get(k, "") for k in ("q", "model", "metric", "state", "sort")},
                dir=query.get("dir", "asc"),
                offset=int(query.get("offset", "0")),
                limit=int(query.get("limit", "50")),
            )
        except ValueError:
            raise _Refused(
                HTTPStatus.BAD_REQUEST, "`offset` and `limit` must be whole numbers."
            ) from None
        problem = index.check(view)
        if problem is not None:
            raise _Refused(HTTPStatus.BAD_REQUEST, problem)
        with self._reading(run):
            answer = index.view(view)
            rows = index.items_at(answer.positions)
        items = ", ".join(map(_item_encoder(), rows))
        self._json(
            f'{{"total": {answer.total}, "offset": {view.offset}, "positions": '
            f'{json.dumps(answer.positions)}, "complete": {json.dumps(answer.complete)}, '
            f'"scanned": {answer.scanned}, "of": {index.n}, "items": [{items}]}}'
        )

    @contextlib.contextmanager
    def _reading(self, run: Run, *, page: bool = False, done: str = "read") -> Any:
        """Items read after the run was loaded: a file changed since is said, not read.

        A view the run cannot give (:class:`~._views.Refused`) is said as it is.
        """
        try:
            yield
        except Refused as exc:
            raise _Refused(HTTPStatus.UNPROCESSABLE_ENTITY, str(exc), page=page) from None
        except (ItemscoreError, OSError) as exc:
            raise _Refused(
                HTTPStatus.UNPROCESSABLE_ENTITY, f"{run.name} cannot be {done}: {exc}", page=page
            ) from exc

    def _label(self, index: ItemIndex, shown: str, labels: list[str], *, page: bool) -> str:
        """The run's label that ``shown`` names (the first of ``labels`` when empty)."""
        if not shown:
            if not labels:
                raise _Refused(
                    HTTPStatus.UNPROCESSABLE_ENTITY, "The run has no metric label.", page=page
                )
            return labels[0]
        label = index.shown_labels.get(shown)
        if label is None or label not in labels:
            choices = ", ".join(printable(x) for x in labels)
            raise _Refused(
                HTTPStatus.BAD_REQUEST,
                f"`metric` ({shown!r}) is no metric label of {'both runs' if page else 'the run'}"
                f"; choose one of {choices}.",
                page=page,
            )
        return label

    def _model(self, loaded: Loaded, shown: str, which: str, *, page: bool) -> str | None:
        if not shown:
            return None
        found = next((m for m in loaded.models if printable(m) == shown), None)
        if found is None:
            raise _Refused(
                HTTPStatus.BAD_REQUEST,
                f"`{which}` ({shown!r}) is no model of that run; its models are "
                f"{', '.join(printable(m) for m in loaded.models) or 'none'}.",
                page=page,
            )
        return found

    def _changed(self, query: dict[str, str], *, page: bool) -> None:
        a, b = query.get("a", ""), query.get("b", "")
        if not a or not b or a == b:
            raise _Refused(
                HTTPStatus.BAD_REQUEST,
                "Choose two different runs (a=TOKEN&b=TOKEN); the list at / has a form.",
                page=page,
            )
        change = query.get("change", "")
        if change and change not in CHANGES:
            raise _Refused(
                HTTPStatus.BAD_REQUEST,
                f"`change` ({change!r}) must be empty, {', '.join(CHANGES)}.",
                page=page,
            )
        offset, limit = self._page(query)
        run_a, loaded_a = self._loaded(a, page=page)
        run_b, loaded_b = self._loaded(b, page=page)
        shared = [x for x in loaded_a.index.labels if x in loaded_b.index.labels]
        if not shared:
            raise _Refused(
                HTTPStatus.UNPROCESSABLE_ENTITY,
                f"{run_a.name} and {run_b.name} share no metric label; the items can change "
                "only on a metric both runs have.",
                page=page,
            )
        label = self._label(loaded_a.index, query.get("metric", ""), shared, page=page)
        models = (
            self._model(loaded_a, query.get("model_a", ""), "model_a", page=page),
            self._model(loaded_b, query.get("model_b", ""), "model_b", page=page),
        )
        with self._reading(run_a, page=page):
            found = changed_items(
                loaded_a.index,
                loaded_b.index,
                label,
                change=change,
                names=(run_a.name, run_b.name),
                models=models,
            )
            chosen = found.pairs[offset : offset + limit]
            pos_a, pos_b = chosen[:, 0].tolist(), chosen[:, 1].tolist()
            rows = list(
                zip(pos_a, loaded_a.index.items_at(pos_a), pos_b, loaded_b.index.items_at(pos_b))
            )
        if page:
            runs = self.server.runs
            shown = {k: v for k, v in query.items() if k in _CHANGED_FIELDS}
            shown["metric"] = printable(label)
            self._html(
                changed_page(
                    runs.info(run_a),
                    runs.info(run_b),
                    printable(label),
                    [printable(x) for x in shared],
                    shown,
                    found,
                    rows,
                    offset,
                    limit,
                )
            )
            return
        encode = _item_encoder()
        items = ", ".join(
            f'{{"position_a": {pa_}, "position_b": {pb}, "a": {encode(ia)}, "b": {encode(ib)}}}'
            for pa_, ia, pb, ib in rows
        )
        self._json_with(
            {
                "metric": printable(label),
                "paired_by": list(found.keys),
                "shared": found.shared,
                "only_a": found.only_a,
                "only_b": found.only_b,
                "counts": found.counts,
                "total": len(found.pairs),
                "offset": offset,
            },
            "items",
            items,
        )

    def _disagree(self, token: str, query: dict[str, str], *, page: bool) -> None:
        if not token:
            raise _Refused(
                HTTPStatus.BAD_REQUEST,
                "Choose a run (run=TOKEN); the list at / links each run with several models.",
                page=page,
            )
        offset, limit = self._page(query)
        run, loaded = self._loaded(token, page=page)
        # Each question brings one item per model: the answer stays within MAX_LIMIT items.
        limit = max(1, min(limit, MAX_LIMIT // max(1, len(loaded.models))))
        index = loaded.index
        graded = _graded(loaded)
        labels = sorted(index.labels, key=lambda x: x not in graded)  # graded first
        label = self._label(index, query.get("metric", ""), labels, page=page)
        with self._reading(run, page=page):
            found = disagreements(index, label)
            chosen = questions_at(index, found.questions.slice(offset, limit))
            positions = [p for q in chosen for p in q.positions.values()]
            rows = dict(zip(positions, index.items_at(positions)))
        models = [printable(m) for m in loaded.models]
        by_question = [(q, {printable(m): rows[p] for m, p in q.positions.items()}) for q in chosen]
        if page:
            shown = {"run": token, "metric": printable(label)}
            self._html(
                disagree_page(
                    self.server.runs.info(run),
                    printable(label),
                    [printable(x) for x in labels],
                    shown,
                    found,
                    by_question,
                    models,
                    offset,
                    limit,
                )
            )
            return
        encode = _item_encoder()
        questions = ", ".join(
            f'{{"id": {json.dumps(printable(q.id), ensure_ascii=False)}, '
            f'"attempt": {json.dumps(q.attempt)}, "items": {{'
            + ", ".join(
                f"{json.dumps(m, ensure_ascii=False)}: {encode(i)}" for m, i in by_model.items()
            )
            + "}}"
            for q, by_model in by_question
        )
        self._json_with(
            {
                "metric": printable(label),
                "compared": found.compared,
                "total": found.questions.num_rows,
                "ok_by_model": {printable(m): n for m, n in found.ok_by_model.items()},
                "offset": offset,
                "limit": limit,
            },
            "questions",
            questions,
        )

    def _compare(self, query: dict[str, str]) -> None:
        a, b = query.get("a", ""), query.get("b", "")
        if not a or not b:
            raise _Refused(
                HTTPStatus.BAD_REQUEST,
                "Choose two runs to compare (a=TOKEN&b=TOKEN); the list at / has a form.",
                page=True,
            )
        if a == b:
            raise _Refused(
                HTTPStatus.BAD_REQUEST,
                "Choose two different runs; the models of one run are compared in its report.",
                page=True,
            )
        run_a, loaded_a = self._loaded(a, page=True)
        run_b, loaded_b = self._loaded(b, page=True)
        from ..comparison import compare

        comparisons = None
        refusal = None
        with self._reading(run_a, page=True):
            result_a = loaded_a.result
        with self._reading(run_b, page=True):
            result_b = loaded_b.result
        try:
            # A model both runs hold is named by its run ("model @ run"), not "(a)"/"(b)".
            labels = (run_a.name, run_b.name) if run_a.name != run_b.name else None
            comparisons = compare(result_a, result_b, labels=labels)
        except ConfigError as exc:
            refusal = str(exc)
        runs = self.server.runs
        page = compare_page(runs.info(run_a), runs.info(run_b), result_a, comparisons, refusal)
        status = HTTPStatus.OK if refusal is None else HTTPStatus.UNPROCESSABLE_ENTITY
        self._html(page, status)


_CHANGED_FIELDS = ("a", "b", "metric", "change", "model_a", "model_b")


def _item_encoder() -> Callable[[ItemResult], str]:
    """Items as the page's JSON (texts cut past ``MAX_TEXT``), labels' names memoised."""
    names: dict[str, str] = {}
    return lambda item: item_json(item, MAX_TEXT, [0], names)


def _graded(loaded: Loaded) -> set[str]:
    """The labels whose ``ok`` means right (ratios), from the run's measurements."""
    return {
        str(m.get("metric"))
        for m in loaded.data.get("measurements") or []
        if isinstance(m, dict) and m.get("aggregation") == "ratio"
    }


def serve(viewer: Viewer, out: Callable[[str], None] = print) -> None:
    """Serve until Ctrl-C (or SIGTERM), then close the socket; says when it stops."""
    import signal

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        viewer.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        viewer.server_close()
    out("Stopped the viewer.")
    sys.stdout.flush()
