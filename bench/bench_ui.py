"""The owner-graph page at 1,000 and 10,000 objects (issue 16): time to first render and
to an update after a change, in headless Chromium, against ``kubegc serve``.

For each size: a ``kubegc serve --storage memory --insecure-http`` process (no controllers:
only the page's own work is measured) holds ``--owners`` ConfigMaps each owning an equal
share of the rest; the page opens on their namespace and
* **first render**: from navigating to the login URL to the first drawing of the graph
  (``window.kubegcUI.firstRender``, in the page's own clock), next to the baseline of a
  LIST of the same objects through the API (what kubectl-tree-like tools start with);
* **update**: a dependent is deleted through the API; time until the page's summary
  counts one fewer, next to the baseline of a plain API watch receiving that DELETED.

Usage: python bench/bench_ui.py [--sizes 1000,10000] [--updates 5] [--quick]
Needs Debian's chromium and the Python package playwright (the dev extra).
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
from _common import free_port  # puts src/ on sys.path too

NS = "bench"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-dev-shm-usage"]


def run(coro: Any) -> Any:
    """Run ``coro`` on an event loop of its own thread (Playwright's sync API holds this
    thread's)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def start_server(data_dir: Path) -> tuple[subprocess.Popen[bytes], str, str]:
    port = free_port()
    log = data_dir / "serve.log"
    proc = subprocess.Popen([sys.executable, "-m", "kubegc.cli", "serve", "--port", str(port),
                             "--data-dir", str(data_dir), "--storage", "memory",
                             "--insecure-http", "--controllers", ""],
                            stdout=log.open("wb"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = re.search(r"login works once\): (\S+)", log.read_text())
        if found and "ready" in log.read_text():
            return proc, f"http://127.0.0.1:{port}", found.group(1)
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(log.read_text())


async def populate(url: str, total: int, owners: int) -> None:
    async with aiohttp.ClientSession(url) as http:
        await http.post("/api/v1/namespaces", json={"metadata": {"name": NS}})
        gate = asyncio.Semaphore(64)

        async def create(body: dict[str, Any]) -> dict[str, Any]:
            async with gate, http.post(f"/api/v1/namespaces/{NS}/configmaps",
                                       json=body) as resp:
                made: dict[str, Any] = await resp.json()
                return made

        tops = await asyncio.gather(*(create({"metadata": {"name": f"owner-{i}"}})
                                      for i in range(owners)))
        refs = [{"apiVersion": "v1", "kind": "ConfigMap", "name": t["metadata"]["name"],
                 "uid": t["metadata"]["uid"], "blockOwnerDeletion": True} for t in tops]
        await asyncio.gather(*(create({"metadata": {
            "name": f"dep-{i}", "ownerReferences": [refs[i % owners]]}, "data": {"i": str(i)}})
            for i in range(total - owners)))


async def list_time(url: str, runs: int = 3) -> float:
    times = []
    async with aiohttp.ClientSession(url) as http:
        for _ in range(runs):
            start = time.perf_counter()
            async with http.get(f"/api/v1/namespaces/{NS}/configmaps") as resp:
                json.loads(await resp.read())
            times.append(time.perf_counter() - start)
    return statistics.median(times)


async def watch_delete_time(url: str, name: str) -> float:
    """Baseline: a DELETED event reaching a plain API watch."""
    async with aiohttp.ClientSession(url) as http:
        listed = await (await http.get(f"/api/v1/namespaces/{NS}/configmaps?limit=1")).json()
        rv = listed["metadata"]["resourceVersion"]
        async with http.get(f"/api/v1/namespaces/{NS}/configmaps?watch=1&resourceVersion={rv}"
                            ) as stream:
            start = time.perf_counter()
            await http.delete(f"/api/v1/namespaces/{NS}/configmaps/{name}")
            async for line in stream.content:
                if b'"DELETED"' in line:
                    return time.perf_counter() - start
    raise RuntimeError("no DELETED event")


def measure_page(browser: Any, login: str, total: int, url: str, updates: int
                 ) -> tuple[float, float, list[float], list[float]]:
    context = browser.new_context(bypass_csp=True, viewport={"width": 1400, "height": 850})
    page = context.new_page()
    start = time.perf_counter()
    page.goto(f"{login}")
    page.goto(page.url.split("?")[0] + f"?namespace={NS}")
    page.wait_for_function("() => window.kubegcUI && window.kubegcUI.firstRender !== null",
                           timeout=300_000)
    wall = time.perf_counter() - start
    first = page.evaluate("() => window.kubegcUI.firstRender") / 1000
    shown = page.evaluate("() => window.kubegcUI.cy.nodes().length")
    ui = page.evaluate("() => ({script: window.kubegcUI.scriptAt, snapshot: "
                       "window.kubegcUI.snapshotAt, nav: performance.getEntriesByType("
                       "'navigation')[0].toJSON()})")
    print(f"    page: scripts run at {ui['script']:.0f} ms, snapshot at {ui['snapshot']:.0f} ms, "
          f"DOM loaded at {ui['nav']['domContentLoadedEventEnd']:.0f} ms")
    assert f"{total} objects" in page.inner_text("#summary"), page.inner_text("#summary")
    page_times, watch_times = [], []
    for i in range(updates):
        count = total - 2 * i
        name = f"dep-{2 * i}"
        t0 = time.perf_counter()
        run(_delete(url, name))
        page.wait_for_function(f"() => document.querySelector('#summary').textContent"
                               f".startsWith('{count - 1} objects')", polling="raf",
                               timeout=60_000)
        page_times.append(time.perf_counter() - t0)
        watch_times.append(run(watch_delete_time(url, f"dep-{2 * i + 1}")))
        page.wait_for_function(f"() => document.querySelector('#summary').textContent"
                               f".startsWith('{count - 2} objects')", timeout=60_000)
    context.close()
    print(f"    nodes drawn: {shown} (of {total} objects)")
    return first, wall, page_times, watch_times


async def _delete(url: str, name: str) -> None:
    async with aiohttp.ClientSession(url) as http:
        await http.delete(f"/api/v1/namespaces/{NS}/configmaps/{name}")


def run_size(browser: Any, total: int, owners: int, updates: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        proc, url, login = start_server(Path(tmp))
        try:
            run(populate(url, total, owners))
            baseline = run(list_time(url))
            first, wall, page_times, watch_times = measure_page(browser, login, total, url,
                                                                updates)
            upd, watch = statistics.median(page_times), statistics.median(watch_times)
            print(f"  {total:>6} objects: first render {first * 1000:7.0f} ms "
                  f"(navigation → drawn; {wall * 1000:.0f} ms seen from here) | LIST of the "
                  f"same objects {baseline * 1000:6.0f} ms | ratio {first / baseline:5.1f}x")
            print(f"  {'':>6}          update after a delete {upd * 1000:5.0f} ms median of "
                  f"{len(page_times)} | API watch sees it in {watch * 1000:5.1f} ms | "
                  f"ratio {upd / watch:5.1f}x")
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--owners", type=int, default=10)
    parser.add_argument("--updates", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="1,000 objects, 3 updates")
    args = parser.parse_args()
    sizes = [1000] if args.quick else [int(s) for s in args.sizes.split(",")]
    updates = 3 if args.quick else args.updates
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium",
                                             headless=True, args=CHROMIUM_ARGS)
        print(f"owner-graph page, {args.owners} owner ConfigMaps sharing the rest as "
              "dependents, kubegc serve --storage memory, headless Chromium")
        for total in sizes:
            run_size(browser, total, args.owners, updates)
        browser.close()


if __name__ == "__main__":
    main()
