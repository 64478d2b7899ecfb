"""``kubegc.testing``'s faults (issue 25, docs/faults.md): ``cluster.faults`` context
managers seen by the official client, ``cluster.requests``, ``cluster.paused``, and the
seed's accidents (``delete_and_recreate``, ``restart_api_server``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from kubegc.testing import Cluster


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with Cluster() as c:
        yield c


@pytest.fixture(scope="module")
def core(cluster: Cluster) -> Iterator[Any]:
    from kubernetes import client

    api = cluster.kubernetes_client()
    api.configuration.retries = 0
    yield client.CoreV1Api(api)
    api.close()


def configmap(name: str, owner: Any = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap",
                                    "name": owner.metadata.name, "uid": owner.metadata.uid}]
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"a": "1"}}


def gone(core: Any, name: str) -> bool:
    from kubernetes.client.rest import ApiException

    try:
        core.read_namespaced_config_map(name, "default")
    except ApiException as e:
        return bool(e.status == 404)
    return False


def eventually(check: Any, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def test_conflicts_answer_the_next_writes_then_clear_themselves(
        cluster: Cluster, core: Any) -> None:
    from kubernetes.client.rest import ApiException

    core.create_namespaced_config_map("default", configmap("read"))
    with cluster.faults.conflicts(on="configmaps", times=3) as fault:
        core.read_namespaced_config_map("read", "default")  # reads are no writes: no 409
        for _ in range(3):
            with pytest.raises(ApiException) as raised:
                core.create_namespaced_config_map("default", configmap("conflicted"))
            assert raised.value.status == 409 and raised.value.reason == "Conflict"
        core.create_namespaced_config_map("default", configmap("conflicted"))
    assert cluster.faults.items() == []
    writes = [r for r in cluster.requests() if r["name"] == "conflicted"]
    assert [(r["verb"], r["code"], r["fault"]) for r in writes] == [
        ("create", 409, fault["id"])] * 3 + [("create", 201, None)]
    assert writes[0]["userAgent"].startswith("OpenAPI-Generator")


def test_a_hang_while_the_block_runs(cluster: Cluster, core: Any) -> None:
    from urllib3.exceptions import MaxRetryError, ReadTimeoutError

    core.create_namespaced_config_map("default", configmap("hung"))
    with (cluster.faults.hang(on={"resource": "configmaps", "name": "hung"}),
          pytest.raises((ReadTimeoutError, MaxRetryError))):
        core.read_namespaced_config_map("hung", "default", _request_timeout=1)
    assert core.read_namespaced_config_map("hung", "default").metadata.name == "hung"


def test_a_paused_garbage_collector_catches_up(cluster: Cluster, core: Any) -> None:
    owner = core.create_namespaced_config_map("default", configmap("owner"))
    core.create_namespaced_config_map("default", configmap("child", owner))
    with cluster.paused("garbagecollector"):
        core.delete_namespaced_config_map("owner", "default")
        cluster.settle()
        assert not gone(core, "child")
    eventually(lambda: gone(core, "child"))
    with pytest.raises(KeyError), cluster.paused("no-such-controller"):
        pass


def test_an_owner_deleted_and_recreated_between_two_cascade_steps(
        cluster: Cluster, core: Any) -> None:
    owner = core.create_namespaced_config_map("default", configmap("parent"))
    core.create_namespaced_config_map("default", configmap("kid", owner))
    fresh = cluster.delete_and_recreate("v1/configmaps", "parent", "default")
    assert fresh["metadata"]["uid"] != owner.metadata.uid
    eventually(lambda: gone(core, "kid"))  # its owner's uid is gone: garbage
    cluster.settle()
    assert core.read_namespaced_config_map("parent", "default").metadata.uid == \
        fresh["metadata"]["uid"]


def test_restart_api_server_drops_watches_and_keeps_state(cluster: Cluster, core: Any) -> None:
    from kubernetes import watch

    core.create_namespaced_config_map("default", configmap("kept"))
    opened, ended = threading.Event(), threading.Event()

    def watching() -> None:
        try:
            for _ in watch.Watch().stream(core.list_namespaced_config_map, "default",
                                          timeout_seconds=60):
                opened.set()  # the initial ADDED of "kept": the watch is open
        except Exception:
            pass
        ended.set()

    threading.Thread(target=watching, daemon=True).start()
    assert opened.wait(10)  # else the watch could start after the restart, and not end
    with cluster.faults.inject({"action": {"type": "delay", "seconds": 0}}):
        cluster.restart_api_server()
        assert cluster.faults.items() == []  # a fault never outlives the server
    assert ended.wait(10)
    assert core.read_namespaced_config_map("kept", "default").metadata.name == "kept"


def test_a_paused_kubelet_runs_no_pod_until_resumed(cluster: Cluster, core: Any) -> None:
    with cluster.paused("kubelet"):
        core.create_namespaced_pod("default", {
            "metadata": {"name": "waits"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
        cluster.settle()
        assert core.read_namespaced_pod("waits", "default").status.phase == "Pending"
    eventually(lambda: core.read_namespaced_pod("waits", "default").status.phase == "Running")


def test_the_request_log_since_a_time_and_of_a_user(cluster: Cluster, core: Any) -> None:
    from datetime import UTC, datetime

    core.create_namespaced_config_map("default", configmap("before"))
    since = datetime.now(UTC)
    core.create_namespaced_config_map("default", configmap("after"))
    core.delete_namespaced_config_map("after", "default")
    names = [(r["verb"], r["name"], r["code"]) for r in cluster.requests(since=since)]
    assert ("create", "before", 201) not in names
    assert [n for n in names if n[1] == "after"] == [("create", "after", 201),
                                                    ("delete", "after", 200)]
    assert cluster.requests(user="nobody-at-all") == []


def test_the_request_log_tells_the_time_on_the_clusters_clock() -> None:
    """A write's ``time`` is the cluster clock's when it was made, whatever the clock (kept
    as the clock's monotonic time, made a wall time when the log is read)."""
    from datetime import UTC, datetime, timedelta

    from kubernetes import client

    from kubegc.api.clock import ManualClock, parse_time

    start = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    with Cluster(controllers=(), clock=ManualClock(start)) as c:
        api = c.kubernetes_client()
        core = client.CoreV1Api(api)
        core.create_namespaced_config_map("default", configmap("first"))
        c.advance(90)
        core.create_namespaced_config_map("default", configmap("second"))
        c.advance(30)
        times = {r["name"]: parse_time(r["time"]) for r in c.requests()}
        assert times == {"first": start, "second": start + timedelta(seconds=90)}
        assert [r["name"] for r in c.requests(since=start + timedelta(seconds=60))] == [
            "second"]
        api.close()
