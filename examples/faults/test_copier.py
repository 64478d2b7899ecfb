"""The robust controller (``copier.Copier``) converges under every fault of docs/faults.md,
against a real kubegc (``kubegc.testing``) with the official client."""

from __future__ import annotations

from typing import Any

from conftest import copy_data, eventually, of_controller, owner, running
from copier import Copier
from kubernetes import client

from kubegc.testing import Cluster


def converged(core: client.CoreV1Api, ns: str, name: str, data: dict[str, str]) -> Any:
    return eventually(lambda: copy_data(core, ns, name) == data, what=f"{name}-copy")


def test_on_a_healthy_cluster(api: Any, core: Any, ns: str) -> None:
    owner(core, ns, "a", {"k": "1"})
    with running(Copier(api, ns)):
        converged(core, ns, "a", {"k": "1"})
        core.patch_namespaced_config_map("a", ns, {"data": {"k": "2"}})
        converged(core, ns, "a", {"k": "2"})


def test_conflicts_and_server_errors(cluster: Cluster, api: Any, core: Any, ns: str) -> None:
    owner(core, ns, "a", {"k": "1"})
    copier = Copier(api, ns)
    with cluster.faults.conflicts(on=of_controller(ns, resource="configmaps"), times=3), \
            cluster.faults.errors(503, on=of_controller(ns, verb="get"), times=2), \
            cluster.faults.errors(429, on=of_controller(ns, verb="list"), times=2,
                                  retry_after=1), running(copier):
        converged(core, ns, "a", {"k": "1"})
    # 409 on create reads as AlreadyExists: read again ("again"); then the 429 and 503s
    assert {"again", "429 Too Many Requests", "503 Service Unavailable"} <= set(copier.errors)


def test_a_hung_watch(cluster: Cluster, api: Any, core: Any, ns: str) -> None:
    with cluster.faults.hang(on=of_controller(ns, verb="watch")), \
            running(Copier(api, ns)):
        owner(core, ns, "a", {"k": "1"})
        converged(core, ns, "a", {"k": "1"})  # the relist after the watch timeout sees it


def test_closed_and_expired_watches(cluster: Cluster, api: Any, core: Any, ns: str) -> None:
    with cluster.faults.close_watches(after_events=1, on=of_controller(ns)), \
            running(Copier(api, ns)):
        owner(core, ns, "a", {"k": "1"})
        owner(core, ns, "b", {"k": "1"})
        converged(core, ns, "a", {"k": "1"})
        converged(core, ns, "b", {"k": "1"})
        with cluster.faults.expire_watches(on=of_controller(ns)):
            owner(core, ns, "c", {"k": "1"})
            converged(core, ns, "c", {"k": "1"})


def test_stale_reads(cluster: Cluster, api: Any, core: Any, ns: str) -> None:
    with cluster.faults.stale_reads(on=of_controller(ns, verb="get"), seconds=2), \
            running(Copier(api, ns)):
        owner(core, ns, "a", {"k": "1"})
        eventually(lambda: copy_data(core, ns, "a") is not None or None, timeout=20)
    converged(core, ns, "a", {"k": "1"})


def test_a_paused_controller_manager_and_a_recreated_owner(
        cluster: Cluster, api: Any, core: Any, ns: str) -> None:
    first = owner(core, ns, "a", {"k": "1"})
    with running(Copier(api, ns)):
        converged(core, ns, "a", {"k": "1"})
        fresh = cluster.delete_and_recreate("v1/configmaps", "a", ns)
        # the GC collects the copy of the old owner; the controller writes the new one's
        eventually(lambda: (c := _copy(core, ns)) is not None
                   and c.metadata.owner_references[0].uid == fresh["metadata"]["uid"],
                   what="the copy of the new owner")
    assert fresh["metadata"]["uid"] != first.metadata.uid


def test_an_api_server_restart(cluster: Cluster, api: Any, core: Any, ns: str) -> None:
    with running(Copier(api, ns)):
        owner(core, ns, "a", {"k": "1"})
        converged(core, ns, "a", {"k": "1"})
        cluster.restart_api_server()
        owner(core, ns, "b", {"k": "1"})
        converged(core, ns, "b", {"k": "1"})


def _copy(core: Any, ns: str) -> Any:
    from kubernetes.client.rest import ApiException

    try:
        return core.read_namespaced_config_map("a-copy", ns)
    except ApiException:
        return None
