"""A tiny Chrome DevTools Protocol client over ``--remote-debugging-pipe`` (no websocket library needed).

Chromium reads NUL-terminated JSON commands from file descriptor 3 and writes NUL-terminated JSON
replies and events to file descriptor 4. One page target is attached in flat mode; its console
errors, uncaught exceptions, log errors and every requested URL are collected as they arrive.
"""
from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_browser() -> str | None:
    """The first Chromium-like browser on PATH (``$CHROMIUM`` first, when set)."""
    for name in (os.environ.get("CHROMIUM"), *BROWSERS):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


class CDPError(RuntimeError):
    """A protocol error, a timeout, or a browser that exited."""


class Browser:
    """Headless Chromium driven over a pipe; use as a context manager.

    Args:
        binary: the browser executable.
        profile: an empty folder for the browser's user data.
        timeout: seconds to wait for any one reply or event.
    """

    def __init__(self, binary: str, *, profile: Path, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self._next_id = 0
        self._buffer = b""
        self.events: list[dict] = []
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        args = [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--metrics-recording-only", "--mute-audio",
                "--remote-debugging-pipe", f"--user-data-dir={profile}", "--window-size=1280,900", "about:blank"]

        def wire_fds() -> None:  # in the child: the pipe ends on fds 3 and 4, as Chromium expects
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        # Popen closes every fd not in pass_fds after preexec_fn runs: 3 and 4 must be kept.
        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        preexec_fn=wire_fds, pass_fds=(3, 4))
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.session: str | None = None

    def __enter__(self) -> Browser:
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        return self

    def __exit__(self, *exc) -> None:
        try:
            self.call("Browser.close", session=False)
        except CDPError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)

    def _read(self) -> dict:
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or self.process.poll() is not None:
                raise CDPError("no message from the browser" if left <= 0 else "the browser exited")
            ready, _, _ = select.select([self._from_browser], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(self._from_browser, 1 << 16)
                if not chunk:
                    raise CDPError("the browser closed its pipe")
                self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def call(self, method: str, params: dict | None = None, *, session: bool = True) -> dict:
        """Send one command (to the attached page unless ``session`` is False) and return its result;
        events that arrive meanwhile are kept in :attr:`events`."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise CDPError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str) -> dict:
        """The next event named ``method`` (already received ones first, each consumed once)."""
        for event in self.events:
            if event.get("method") == method and not event.get("_seen"):
                event["_seen"] = True
                return event
        while True:
            event = self._read()
            self.events.append(event)
            if event.get("method") == method:
                event["_seen"] = True
                return event

    def open(self, url: str) -> None:
        """Navigate and wait for the load event."""
        result = self.call("Page.navigate", {"url": url})
        if result.get("errorText"):
            raise CDPError(f"navigating to {url}: {result['errorText']}")
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> object:
        """The value of a JavaScript expression in the page (JSON-serialisable values only)."""
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            raise CDPError(f"{expression!r} threw: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and error log entries received so far."""
        found = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append("console: " + " ".join(str(a.get("value", a.get("description"))) for a in params.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                found.append(f"exception: {details.get('text', '')} {details.get('exception', {}).get('description', '')}".strip())
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                found.append(f"log: {params['entry'].get('text')} ({params['entry'].get('url', '')})")
            elif method == "Network.loadingFailed":
                found.append(f"network: {params.get('errorText')} ({params.get('type')})")
        return found

    def requested_urls(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]
