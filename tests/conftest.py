"""Fake plugin installations, shared by the registry, plugin, hook and entry-point tests.

Test modules cannot import this file at run time (``--import-mode=importlib``, no package):
they get the helpers through the fixtures, and name the types under ``TYPE_CHECKING`` only.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

import itemscore
from itemscore._entrypoints import AUTOLOAD_ENV

# A defaults file in the home folder of whoever runs the tests must not change their numbers;
# the tests of that file set up one of their own (tests/test_cli_user_config.py).
os.environ["ITEMSCORE_NO_USER_CONFIG"] = "1"

METRICS_GROUP = "itemscore.metrics"
PLUGINS_GROUP = "itemscore.plugins"

#: What :meth:`Plugins.metric` writes: metric ``M``, ok when the output is in upper case.
METRIC_SOURCE = """
from itemscore import Metric

class M(Metric):
    metric_id = {metric_id!r}
    description = "Test metric {metric_id}."

    def score_item(self, item, ctx):
        return self.ok() if item.output and item.output.isupper() else self.fail()
"""


class FakeDist:
    """The part of ``importlib.metadata.Distribution`` itemscore reads."""

    def __init__(self, name: str, version: str = "1.0") -> None:
        self.metadata = {"Name": name}
        self.version = version


class Plugins:
    """Fake installed plugins: modules in a temporary folder, entry points pointing at them."""

    def __init__(self, folder: Path, prefix: str) -> None:
        self.folder = folder
        self.prefix = prefix
        self.eps: list[Any] = []
        #: Whether itemscore's own entry points stay installed next to the fakes.
        self.own = True

    def module(self, name: str, source: str) -> str:
        """Write module ``<prefix>_<name>`` and return its full name."""
        full = f"{self.prefix}_{name}"
        (self.folder / f"{full}.py").write_text(textwrap.dedent(source))
        return full

    def entry_point(
        self,
        name: str,
        value: str,
        dist: str | None = "fake-dist",
        group: str = METRICS_GROUP,
        *,
        version: str = "1.0",
    ) -> None:
        """Declare an entry point of distribution ``dist`` (``None``: of no distribution)."""
        ep: Any = metadata.EntryPoint(name=name, value=value, group=group)
        self.eps.append(ep if dist is None else ep._for(FakeDist(dist, version)))

    def metric(
        self, ep_name: str, metric_id: str, dist: str = "fake-dist", *, module: str | None = None
    ) -> str:
        """Declare a metric class in its own module (or ``module``), with an entry point."""
        source = METRIC_SOURCE.format(metric_id=metric_id)
        mod = self.module(module or metric_id.replace("-", "_"), source)
        self.entry_point(ep_name, f"{mod}:M", dist)
        return mod

    def add(self, ep_name: str, source: str, dist: str = "fake-dist", module: str = "") -> str:
        """Write a plugin module and declare it in ``itemscore.plugins``; return the module."""
        full = self.module(module or ep_name.replace("-", "_"), source)
        self.entry_point(ep_name, full, dist, PLUGINS_GROUP)
        return full

    def imported(self, module: str) -> bool:
        """Whether the module was imported."""
        return module in sys.modules


@pytest.fixture
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Autoload on, no registry or plugin manager left from before, none left after."""
    monkeypatch.delenv(AUTOLOAD_ENV, raising=False)
    itemscore.reset_registry()
    yield
    itemscore.reset_registry()


@pytest.fixture
def plugins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_registry: None
) -> Iterator[Plugins]:
    """Installed entry points of the itemscore groups: itemscore's own + the fakes of the test.

    ``importlib.metadata.entry_points`` is patched, as pluggy's tests patch
    ``importlib.metadata.distributions``; other groups, and calls without a group, are real.
    """
    real = metadata.entry_points
    fake = Plugins(tmp_path, f"fake_{uuid.uuid4().hex[:8]}")

    def entry_points(**params: Any) -> Any:
        found = real(**params)
        group = params.get("group")
        if not isinstance(group, str) or not group.startswith("itemscore."):
            return found
        own = [ep for ep in found if fake.own and ep.dist and ep.dist.name == "itemscore"]
        return own + [ep for ep in fake.eps if ep.group == group]

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield fake
    for name in [m for m in sys.modules if m.startswith(fake.prefix)]:
        del sys.modules[name]


# -- a headless browser, driven over the DevTools protocol --------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class BrowserPage:
    """One tab of :class:`Browser`: navigate, run script, wait for a condition, screenshot."""

    def __init__(self, browser: Browser, session: str) -> None:
        self.browser = browser
        self.session = session
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")

    def call(self, method: str, **params: Any) -> Any:
        return self.browser.call(method, params, session=self.session)

    def goto(self, url: str) -> None:
        """Open ``url`` and wait for its load event (a fragment change alone reloads too)."""
        for address in ("about:blank", url):
            self.browser.events.clear()
            self.call("Page.navigate", url=address)
            self.browser.wait_event("Page.loadEventFired", self.session)

    def js(self, expression: str) -> Any:
        """The value of ``expression`` in the page (promises awaited)."""
        answer = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in answer:
            raise AssertionError(f"{expression}: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    def wait_for(self, expression: str, attempts: int = 200) -> Any:
        """The first truthy value of ``expression``, asked every 50 ms (10 s at most)."""
        for _ in range(attempts):
            value = self.js(expression)
            if value:
                return value
            time.sleep(0.05)
        raise AssertionError(f"never true in the page: {expression}")

    def click(self, selector: str) -> None:
        self.js(f"document.querySelector({json.dumps(selector)}).click()")

    def choose(self, selector: str, value: str) -> None:
        """Set a field's value and tell the page, as typing or choosing would."""
        self.js(
            f"(function(e){{e.value={json.dumps(value)};"
            "e.dispatchEvent(new Event('input',{bubbles:true}));})"
            f"(document.querySelector({json.dumps(selector)}))"
        )

    def problems(self) -> list[str]:
        """Script errors and console errors so far (a refused policy shows as one)."""
        out = []
        for event in self.browser.events:
            if event.get("sessionId") != self.session:
                continue
            if event["method"] == "Runtime.exceptionThrown":
                out.append(str(event["params"]["exceptionDetails"]))
            elif event["method"] == "Log.entryAdded" and event["params"]["entry"]["level"] == (
                "error"
            ):
                out.append(event["params"]["entry"]["text"])
            elif event["method"] == "Runtime.consoleAPICalled" and event["params"]["type"] in (
                "error",
                "assert",
            ):
                out.append(str(event["params"]["args"]))
        return out

    def screenshot(self, path: Path, width: int, height: int) -> Path:
        """The whole page at a window ``width`` x ``height`` wide, as a PNG at ``path``."""
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        full = min(int(self.js("document.documentElement.scrollHeight")), 16_000)
        shot = self.call(
            "Page.captureScreenshot",
            format="png",
            captureBeyondViewport=True,
            clip={"x": 0, "y": 0, "width": width, "height": full, "scale": 1},
        )
        path.write_bytes(base64.b64decode(shot["data"]))
        return path


class Browser:
    """Headless Chromium on a DevTools websocket: one process, a tab per :meth:`page`."""

    def __init__(self, profile: Path) -> None:
        import websocket

        assert CHROMIUM is not None
        self.process = subprocess.Popen(
            [
                CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-extensions", "--no-first-run",
                "--disable-default-apps", "--remote-debugging-port=0",
                "--remote-allow-origins=*", f"--user-data-dir={profile}", "about:blank",
            ],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        address = None
        assert self.process.stderr is not None
        for line in self.process.stderr:  # the first lines name the websocket
            if "DevTools listening on " in line:
                address = line.split("DevTools listening on ", 1)[1].strip()
                break
        if address is None:
            self.process.kill()
            raise RuntimeError("chromium did not open its DevTools websocket")
        self._drain = threading.Thread(target=self.process.stderr.read, daemon=True)
        self._drain.start()  # chromium blocks on a full pipe
        self.socket = websocket.create_connection(address, timeout=60, suppress_origin=True)
        self.events: list[dict[str, Any]] = []
        self._id = 0

    def _receive(self) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(self.socket.recv())
        return message

    def call(self, method: str, params: dict[str, Any] | None = None, session: str = "") -> Any:
        self._id += 1
        request: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session:
            request["sessionId"] = session
        self.socket.send(json.dumps(request))
        while True:
            message = self._receive()
            if message.get("id") == self._id:
                if "error" in message:
                    raise AssertionError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def wait_event(self, method: str, session: str) -> dict[str, Any]:
        for i, event in enumerate(self.events):
            if event["method"] == method and event.get("sessionId") == session:
                return self.events.pop(i)
        while True:  # bounded by the socket's time-out
            message = self._receive()
            if message.get("method") == method and message.get("sessionId") == session:
                return message
            self.events.append(message)

    def page(self) -> BrowserPage:
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})
        return BrowserPage(self, session["sessionId"])

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.call("Browser.close")
        self.socket.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=30)
        self._drain.join(timeout=30)
        assert self.process.stderr is not None
        self.process.stderr.close()


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """One headless Chromium for the session's page tests; skipped without chromium."""
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (make test installs Debian's package as root)")
    pytest.importorskip("websocket", reason="websocket-client is not installed")
    started = Browser(tmp_path_factory.mktemp("chromium-profile"))
    yield started
    started.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[BrowserPage]:
    """A fresh tab of the session's browser, closed after the test."""
    tab = browser.page()
    yield tab
    with contextlib.suppress(Exception):
        tab.call("Page.close")
