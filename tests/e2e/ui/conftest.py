"""Fixtures of the owner-graph page's tests: headless Chromium — Debian's
``/usr/bin/chromium`` driven over CDP by Playwright, which never downloads a browser
here (``executable_path``; ``playwright install`` is never run). The machine has no
network, so Chromium runs without anything that would try to reach one."""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ..conftest import Server

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-dev-shm-usage"]
SUMMARY = re.compile(r"(\d+) objects, (\d+) deleting")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium for one test module: Playwright's sync API holds this thread's event loop
    while it runs, which the asyncio tests of other modules need back."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not shutil.which(CHROMIUM):
        pytest.skip("chromium is not installed (apt-get install chromium)")
    with sync_api.sync_playwright() as playwright:
        # a launch without a persistent context gets a fresh --user-data-dir of its own
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                              args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def login_url(server: Server) -> str:
    """A fresh one-time login URL of ``server``'s page (``GET /ui/api/login`` with the
    API token, as ``kubectl get --raw /ui/api/login`` asks for one)."""
    status, body = server.http("GET", "/ui/api/login")
    assert status == 200, body
    return body.decode().strip()


def new_page(browser: Any, *, bypass_csp: bool = True) -> Any:
    """A page in a context of its own (its own cookies). ``bypass_csp`` lets the tests
    evaluate their waiting conditions, which the page's Content-Security-Policy forbids."""
    context = browser.new_context(ignore_https_errors=True, bypass_csp=bypass_csp,
                                  viewport={"width": 1400, "height": 850})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.js_errors = errors
    return page


def wait_for(page: Any, condition: str, arg: Any = None, *, timeout: float = 30) -> Any:
    """Wait (in the page, on each animation frame) until the JavaScript ``condition``
    (a function body over ``arg``) is truthy; returns its value."""
    handle = page.wait_for_function(f"(arg) => {{ {condition} }}", arg=arg,
                                    timeout=timeout * 1000)
    return handle.json_value()


def wait_text(page: Any, selector: str, test: Callable[[str], bool], *,
              timeout: float = 30) -> str:
    """Poll ``selector``'s text from outside the page (works under its CSP)."""
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        text = page.inner_text(selector)
        if test(text):
            return text
        page.wait_for_timeout(50)
    raise AssertionError(f"{selector} never matched; last text: {text!r}; page errors: "
                         f"{page.js_errors}")


def summary(page: Any) -> tuple[int, int]:
    match = SUMMARY.search(page.inner_text("#summary"))
    assert match is not None, page.inner_text("#summary")
    return int(match.group(1)), int(match.group(2))


def open_page(page: Any, login_url: str, namespace: str = "") -> None:
    """Log in with ``login_url`` and show ``namespace`` (the whole cluster when empty),
    waiting for the first drawing."""
    page.goto(login_url)
    if namespace:
        page.goto(page.url.split("?")[0] + f"?namespace={namespace}")
    wait_for(page, "return window.kubegcUI && window.kubegcUI.firstRender !== null")


def find(page: Any, query: str) -> None:
    """Type ``KIND/NAME`` and Enter; wait for the details panel to name it."""
    page.fill("#search", query)
    page.press("#search", "Enter")
    name = query.partition("/")[2]
    wait_for(page, "return document.querySelector('#details').innerText.includes(arg)",
             f"/{name}")


def details(page: Any, *, until: str = "Descendants", timeout: float = 30) -> str:
    """The details panel's text once it has the tools' answers."""
    return wait_text(page, "#details", lambda t: until in t, timeout=timeout)


def whatif_sections(text: str) -> dict[str, set[str]]:
    """``#whatif-result``'s lists: heading word → {"Kind/name"}."""
    out: dict[str, set[str]] = {}
    current = None
    for line in text.splitlines():
        head = re.match(r"^(deleted|orphaned|survives|hangs)\b.*\(\d+\):$", line)
        if head:
            current = head.group(1)
            out[current] = set()
        elif current and line.startswith("  ") and line.strip() != "none":
            out[current].add(line.strip().split(" -n ")[0])
    return out


def node_classes(page: Any, node_id: str) -> list[str]:
    classes: list[str] = page.evaluate(
        "(id) => { const e = window.kubegcUI.cy.getElementById(id); "
        "return e.empty() ? [] : e.classes(); }", node_id)
    return classes
