"""``kubegc serve`` killed (SIGKILL: no clean stop) and started again on its data
directory: its GC informers resume from the caches it wrote while it ran, watching from
their resourceVersion as a reflector resumes, so they see every write made after those
caches were written (issue 27: restart); caches older than the store's compaction are not
used, and the informers list."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubegc.storage import DataDir

from .conftest import Server, eventually, start_server, stop_server

CMS = "/api/v1/namespaces/default/configmaps"


def _create(server: Server, name: str, owner: dict[str, Any] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap",
                                    "name": owner["metadata"]["name"],
                                    "uid": owner["metadata"]["uid"]}]
    status, body = server.http("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap",
                                             "metadata": meta},
                               headers={"Content-Type": "application/json"})
    assert status == 201, body
    created: dict[str, Any] = json.loads(body)
    return created


def _graph(server: Server) -> str:
    status, body = server.http("GET", "/debug/controllers/garbagecollector/graph")
    assert status == 200, body
    return body.decode()


def _uid(obj: dict[str, Any]) -> str:
    return str(obj["metadata"]["uid"])


def _in_cache_file(path: Path, *objs: dict[str, Any]) -> bool:
    try:
        text = path.read_bytes()
    except FileNotFoundError:
        return False
    return all(_uid(o).encode() in text for o in objs)


def _resource_version(caches: bytes, resource: str) -> int:
    for line in caches.splitlines():
        doc = json.loads(line)
        if doc.get("resource") == resource and doc.get("group") == "":
            return int(doc["resourceVersion"])
    raise AssertionError(f"no cache of {resource}")


@pytest.mark.parametrize("compacted", [False, True], ids=["resumed", "compacted since"])
def test_a_restart_after_a_crash_sees_what_was_written_after_the_last_caches(
        tmp_path: Path, compacted: bool) -> None:
    data = tmp_path / "data"
    caches = DataDir(data).informer_caches
    extra = ("--etcd-compaction-interval", "1s", "--compact-min-retain", "0") \
        if compacted else ()
    server = start_server(data, "--informer-cache-interval", "1s", *extra)
    try:
        owner = _create(server, "owner")
        early = _create(server, "early", owner)
        eventually(lambda: _in_cache_file(caches, owner, early), timeout=30,
                   what="the caches written while serving")
        snapshot = caches.read_bytes()  # the last caches a crash leaves behind
        late = _create(server, "late", owner)
        status, body = server.http("DELETE", f"{CMS}/early")
        assert status == 200, body
        server.settle()
        if compacted:  # the store's history is compacted past the caches' revision
            rv = _resource_version(snapshot, "configmaps")
            eventually(lambda: server.http(
                "GET", f"{CMS}?resourceVersion={rv}&resourceVersionMatch=Exact")[0] == 410,
                timeout=30, what="a compaction past the caches")
        server.process.kill()  # SIGKILL: no clean stop
        server.process.wait(timeout=10)
    finally:
        if server.process.poll() is None:
            server.process.kill()
    caches.write_bytes(snapshot)  # as if killed before the next periodic write

    restarted = start_server(data)
    try:
        # used (kept) while a watch can resume from it; removed when it serves nothing
        assert caches.exists() is not compacted
        if not compacted:
            assert caches.read_bytes() == snapshot
        restarted.settle()
        graph = _graph(restarted)
        assert _uid(owner) in graph and _uid(late) in graph
        assert _uid(early) not in graph  # deleted after the caches were written
        # the GC acts on what it resumed: deleting the owner collects ``late``
        status, body = restarted.http("DELETE", f"{CMS}/owner")
        assert status == 200, body
        eventually(lambda: restarted.http("GET", f"{CMS}/late")[0] == 404, timeout=30,
                   what="late collected")
    finally:
        stop_server(restarted)
