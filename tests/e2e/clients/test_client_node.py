"""The deletion story with ``@kubernetes/client-node`` (the version pinned in
``node/package-lock.json``; ``.ci/run`` installs it with ``npm ci``): ``node/driver.mjs``
makes the client's calls, this module sends it the story's requests over a pipe."""

from __future__ import annotations

import itertools
import json
import queue
import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from ..conftest import Server
from .adapters import Collected
from .story import Kind, Obj, PatchType, Story

NODE_DIR = Path(__file__).parent / "node"
NODE = shutil.which("node")
INSTALLED = (NODE_DIR / "node_modules" / "@kubernetes" / "client-node").is_dir()

pytestmark = pytest.mark.skipif(
    NODE is None or not INSTALLED,
    reason=f"needs node and `npm ci --prefix {NODE_DIR}` (which .ci/run does)")


class NodeWatch(Collected):
    def __init__(self, driver: NodeDriver, watch_id: int) -> None:
        super().__init__()
        self.driver = driver
        self.watch_id = watch_id

    def stop(self) -> None:
        self.driver.call("stopWatch", watchId=self.watch_id)


class NodeDriver:
    """Talks to ``node driver.mjs KUBECONFIG NAMESPACE``: one request, one answer."""

    def __init__(self, kubeconfig: Path, namespace: str) -> None:
        assert NODE is not None
        self.namespace = namespace
        self.proc = subprocess.Popen([NODE, str(NODE_DIR / "driver.mjs"), str(kubeconfig),
                                      namespace], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        self._ids = itertools.count(1)
        self._answers: dict[int, queue.Queue[dict[str, Any]]] = {}
        self._watches: dict[int, NodeWatch] = {}
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line)
            if "watch" in message:
                watch = self._watches.get(message["watch"])
                if watch is None:
                    continue
                if "error" in message:
                    watch.fail(RuntimeError(message["error"]))
                else:
                    watch.add((message["type"], message["object"]))
            else:
                self._answers[message["id"]].put(message)

    def call(self, op: str, *, timeout: float = 60, **args: Any) -> Any:
        assert self.proc.stdin is not None
        with self._lock:
            request_id = next(self._ids)
            answer: queue.Queue[dict[str, Any]] = queue.Queue()
            self._answers[request_id] = answer
            self.proc.stdin.write(json.dumps({"id": request_id, "op": op, **args}) + "\n")
            self.proc.stdin.flush()
        message = answer.get(timeout=timeout)
        del self._answers[request_id]
        if "error" in message:
            raise AssertionError(f"client-node {op} failed: {message['error']}")
        return message["result"]

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def create(self, obj: Obj) -> Obj:
        out: Obj = self.call("create", obj=obj)
        return out

    def get(self, kind: Kind, name: str) -> Obj | None:
        out: Obj | None = self.call("get", kind=_kind(kind), name=name)
        return out

    def list(self, kind: Kind, *, label_selector: str) -> list[Obj]:
        out: list[Obj] = self.call("list", kind=_kind(kind), labelSelector=label_selector)
        return out

    def patch(self, kind: Kind, name: str, patch: Any, patch_type: PatchType) -> Obj:
        out: Obj = self.call("patch", kind=_kind(kind), name=name, patch=patch,
                             patchType=patch_type.value)
        return out

    def apply(self, obj: Obj, *, field_manager: str) -> Obj:
        out: Obj = self.call("apply", obj=obj, fieldManager=field_manager)
        return out

    def delete(self, kind: Kind, name: str, *, propagation_policy: str) -> None:
        self.call("delete", kind=_kind(kind), name=name, propagationPolicy=propagation_policy)

    def wait_deleted(self, kind: Kind, name: str, *, timeout: float) -> None:
        self.call("waitDeleted", kind=_kind(kind), name=name, seconds=timeout,
                  timeout=timeout + 10)

    def watch(self, kind: Kind, *, label_selector: str) -> NodeWatch:
        watch_id = next(self._ids)
        watch = self._watches[watch_id] = NodeWatch(self, watch_id)
        self.call("watch", watchId=watch_id, kind=_kind(kind), labelSelector=label_selector)
        return watch


def _kind(kind: Kind) -> dict[str, Any]:
    out = asdict(kind)
    out["apiVersion"] = out.pop("api_version")
    return out


@pytest.fixture
def driver(server: Server, namespace: str) -> Iterator[NodeDriver]:
    d = NodeDriver(server.kubeconfig, namespace)
    yield d
    d.close()


def test_deletion_story(driver: NodeDriver) -> None:
    Story(driver).run()
