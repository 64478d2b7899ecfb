"""Harness for the seed-001 lab tests: a kubegc (all controllers) on a free port, the
real kubectl, the kopf Site operator of ``examples/`` in a thread, and ``kubegc`` tool
commands run in-process."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import io
import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kubegc.cli import main as kubegc_main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
LAB = EXAMPLES / "lab"
KUBECTL = shutil.which("kubectl")


def eventually(fn: Callable[[], Any], *, timeout: float = 30, interval: float = 0.05,
               what: str = "condition") -> Any:
    """Poll ``fn`` until it returns something truthy (returned); fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"{what} not met within {timeout}s (last: {last!r})")


class Kubectl:
    def __init__(self, kubeconfig: Path, cache_dir: Path) -> None:
        if KUBECTL is None:
            pytest.skip("kubectl is not installed")
        self.kubeconfig = kubeconfig
        self.cache_dir = cache_dir

    def __call__(self, *args: str, input: str | None = None, check: bool = True
                 ) -> subprocess.CompletedProcess[str]:
        cmd = [str(KUBECTL), "--kubeconfig", str(self.kubeconfig), "--cache-dir",
               str(self.cache_dir), *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, input=input, timeout=60)
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {proc.stderr}")
        return proc

    def json(self, *args: str) -> Any:
        return json.loads(self("get", *args, "-o", "json").stdout)

    def exists(self, *args: str) -> bool:
        return self("get", *args, "--ignore-not-found", "-o", "name").stdout.strip() != ""

    def apply_file(self, path: Path, **subst: str) -> None:
        text = path.read_text()
        for key, value in subst.items():
            text = text.replace(key, value)
        self("apply", "-f", "-", input=text)

    def uid(self, *args: str) -> str:
        return str(self("get", *args, "-o", "jsonpath={.metadata.uid}").stdout)


def load_operator() -> tuple[ModuleType, Any]:
    """Import examples/site_operator.py into a fresh kopf registry."""
    import kopf

    registry = kopf.OperatorRegistry()
    previous = kopf.get_default_registry()
    kopf.set_default_registry(registry)
    try:
        spec = importlib.util.spec_from_file_location("site_operator_under_test",
                                                      EXAMPLES / "site_operator.py")
        if spec is None or spec.loader is None:
            raise ImportError("cannot load examples/site_operator.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        kopf.set_default_registry(previous)
    return module, registry


@contextlib.contextmanager
def site_operator(kubeconfig: Path) -> Iterator[ModuleType]:
    """Run the Site operator (kopf, standalone, all namespaces) in a thread."""
    import kopf

    old = os.environ.get("KUBECONFIG")
    os.environ["KUBECONFIG"] = str(kubeconfig)
    module, registry = load_operator()
    loop = asyncio.new_event_loop()
    flags: dict[str, Any] = {}
    ready = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        asyncio.set_event_loop(loop)

        async def main() -> None:
            flags["stop"] = asyncio.Event()
            flags["ready"] = asyncio.Event()
            watcher = asyncio.create_task(flags["ready"].wait())
            watcher.add_done_callback(lambda _: ready.set())
            await kopf.operator(registry=registry, standalone=True, clusterwide=True,
                                stop_flag=flags["stop"], ready_flag=flags["ready"])
        try:
            loop.run_until_complete(main())
        except BaseException as e:  # reported by the test
            failure.append(e)
            ready.set()

    thread = threading.Thread(target=run, name="site-operator", daemon=True)
    thread.start()
    try:
        if not ready.wait(30) or failure:
            raise RuntimeError(f"the Site operator did not start: {failure}")
        yield module
    finally:
        if "stop" in flags:
            loop.call_soon_threadsafe(flags["stop"].set)
        thread.join(30)
        if old is None:
            os.environ.pop("KUBECONFIG", None)
        else:
            os.environ["KUBECONFIG"] = old


def kubegc(*args: str) -> tuple[int, str, str]:
    """Run ``kubegc ARGS`` in-process; returns (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = kubegc_main(list(args))
    return code, out.getvalue(), err.getvalue()


def kubegc_json(*args: str) -> Any:
    code, out, err = kubegc(*args, "-o", "json")
    if code != 0:
        raise AssertionError(f"kubegc {' '.join(args)} failed ({code}): {err}")
    return json.loads(out)
