"""Take the owner-graph page's screenshot shown in README.md and docs/tools.md: a held
foreground deletion (a Deployment whose pods carry a finalizer nobody removes), with the
Deployment selected so that the panel names the blocking chain.

    python scripts/ui_screenshot.py [docs/images/ui-held-foreground.png]

Starts its own ``kubegc serve --storage memory --insecure-http`` on a free port, drives
Debian's headless Chromium with Playwright (the dev extra), and stops both.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NS = "shop"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def call(base: str, method: str, path: str, body: Any = None, content_type: str =
         "application/json") -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"Content-Type": content_type})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def until(check: Any, timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.05)
    raise TimeoutError("the scene did not come about")


def scene(base: str) -> None:
    call(base, "POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
    call(base, "POST", f"/apis/apps/v1/namespaces/{NS}/deployments", {
        "metadata": {"name": "web"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"},
                                           "finalizers": ["shop.example.com/drain"]},
                              "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}})
    call(base, "POST", f"/api/v1/namespaces/{NS}/configmaps", {"metadata": {"name": "settings"}})
    until(lambda: len(call(base, "GET", f"/api/v1/namespaces/{NS}/pods")["items"]) == 3)
    call(base, "DELETE", f"/apis/apps/v1/namespaces/{NS}/deployments/web",
         {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground"})
    until(lambda: all(p["metadata"].get("deletionTimestamp") for p in call(
        base, "GET", f"/api/v1/namespaces/{NS}/pods")["items"]))


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs/images/ui-held-foreground.png"
    from playwright.sync_api import sync_playwright

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "serve.log"
        proc = subprocess.Popen([sys.executable, "-m", "kubegc.cli", "serve", "--port",
                                 str(port), "--data-dir", tmp, "--storage", "memory",
                                 "--insecure-http"], stdout=log.open("wb"),
                                stderr=subprocess.STDOUT)
        try:
            login = until(lambda: (re.search(r"login works once\): (\S+)", log.read_text())
                                   if "ready" in log.read_text() else None)).group(1)
            scene(f"http://127.0.0.1:{port}")
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path="/usr/bin/chromium",
                                                     headless=True, args=ARGS)
                page = browser.new_page(viewport={"width": 1400, "height": 820})
                page.goto(login)
                page.goto(page.url.split("?")[0] + f"?namespace={NS}")
                until(lambda: "5 deleting" in page.inner_text("#summary"))
                page.fill("#search", "deployment/web")
                page.press("#search", "Enter")
                until(lambda: "Descendants" in page.inner_text("#details"))
                page.select_option("#whatif-policy", "Foreground")
                page.wait_for_timeout(500)  # the centring animation
                out.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(out))
                browser.close()
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
