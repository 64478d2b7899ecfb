"""``kubegc.testing``'s ``settle()`` when the garbage collector cannot finish: an admission
webhook refuses its DELETE of a dependent, the GC retries with backoff for ever (as
upstream's workqueue does), and ``settle()``'s error names the controller, the item and
the webhook's refusal; ``stuck_after`` says so without waiting for the timeout."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from kubegc.api.clock import ManualClock
from kubegc.testing import Cluster, NotSettledError, StuckError

REFUSAL = ('admission webhook "deny.example.com" denied the request: '
           "configmaps labelled keep=yes stay")


def guard(review: dict[str, Any]) -> dict[str, Any]:
    labels = review["request"]["oldObject"]["metadata"].get("labels") or {}
    if labels.get("keep") == "yes":
        return {"allowed": False, "status": {"message": "configmaps labelled keep=yes stay"}}
    return {"allowed": True}


def allow(review: dict[str, Any]) -> dict[str, Any]:
    return {"allowed": True}


def start(cluster: Cluster) -> tuple[Any, Any]:
    """The webhook guarding DELETEs of configmaps (kubegc.testing's in-process one), an
    owner ConfigMap and its dependent ``x`` labelled keep=yes; (core API, the owner)."""
    from kubernetes import client

    api = cluster.kubernetes_client()
    client.AdmissionregistrationV1Api(api).create_validating_webhook_configuration({
        "metadata": {"name": "deny"},
        "webhooks": [{
            "name": "deny.example.com", "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "clientConfig": cluster.admission_webhook("deny", guard),
            "rules": [{"operations": ["DELETE"], "apiGroups": [""], "apiVersions": ["v1"],
                       "resources": ["configmaps"]}]}]})
    core = client.CoreV1Api(api)
    owner = core.create_namespaced_config_map("default", {"metadata": {"name": "owner"}})
    core.create_namespaced_config_map("default", {"metadata": {
        "name": "x", "labels": {"keep": "yes"},
        "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                             "uid": owner.metadata.uid}]}})
    cluster.settle()  # the configuration reached admission, the GC saw the dependent
    return core, owner


def names(core: Any) -> set[str]:
    return {c.metadata.name for c in core.list_namespaced_config_map("default").items}


def records(cluster: Cluster, name: str) -> list[str]:
    """The actions of the DeletionRecords about the ConfigMap ``name``."""
    from kubernetes import client

    listed = client.CustomObjectsApi(cluster.kubernetes_client()).list_cluster_custom_object(
        "kubegc.io", "v1", "deletionrecords")
    return [r["action"] for r in listed["items"] if r["object"]["name"] == name]


@pytest.fixture
def manual() -> Iterator[Cluster]:
    with Cluster(clock=ManualClock(), controllers=["garbagecollector"]) as cluster:
        yield cluster


def test_settle_names_the_refused_delete_of_the_garbage_collector(manual: Cluster) -> None:
    """Under a ManualClock the GC's retry waits for a clock nobody moves: the one failure
    is all there is, and the error says which item and why."""
    core, _ = start(manual)
    core.delete_namespaced_config_map("owner", "default")
    # stuck after one failure: said at once, not after the timeout
    began = time.monotonic()
    with pytest.raises(StuckError, match=re.escape(f"v1/ConfigMap default/x: {REFUSAL}")):
        manual.settle(timeout=30, stuck_after=1)
    assert time.monotonic() - began < 10
    with pytest.raises(NotSettledError) as raised:
        manual.settle(timeout=1)
    assert str(raised.value).splitlines() == [
        "cluster did not settle within 1 s; still busy:",
        f"  garbagecollector: 1 item retrying: v1/ConfigMap default/x: {REFUSAL}"]
    (pending,) = raised.value.pending
    assert (pending.component, pending.items, pending.other) == ("garbagecollector", 1, ())
    assert isinstance(raised.value, TimeoutError)  # what settle() always raised
    assert not isinstance(raised.value, StuckError)
    assert names(core) == {"x"}
    # another cascade meanwhile: its DeletionRecord is written though the GC still retries
    owner = core.create_namespaced_config_map("default", {"metadata": {"name": "owner2"}})
    core.create_namespaced_config_map("default", {"metadata": {"name": "y", "ownerReferences": [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner2", "uid": owner.metadata.uid}]}})
    core.delete_namespaced_config_map("owner2", "default")
    began = time.monotonic()
    with pytest.raises(StuckError):
        manual.settle(timeout=20, stuck_after=1)
    assert time.monotonic() - began < 10  # not held back while the GC only waits to retry
    assert names(core) == {"x"}
    assert records(manual, "y") == ["delete"]
    # the webhook lets it through; the retry runs when the clock reaches it
    manual.admission_webhook("deny", allow)
    manual.advance(1)
    manual.settle(stuck_after=1)
    assert "x" not in names(core)


def test_stuck_after_counts_failures_with_the_same_error() -> None:
    """On the real clock the retries come 5 ms, 10 ms, 20 ms... apart: the timeout's error
    counts them, and ``stuck_after=3`` answers within a few of them; once the webhook
    allows the DELETE, the next retry goes through and the cluster settles."""
    with Cluster(controllers=["garbagecollector"]) as cluster:
        core, _ = start(cluster)
        core.delete_namespaced_config_map("owner", "default")
        began = time.monotonic()
        with pytest.raises(StuckError) as stuck:
            cluster.settle(timeout=30, stuck_after=3)
        assert time.monotonic() - began < 10  # a few retries, not the timeout
        assert stuck.value.pending[0].retrying[0].key == "v1/ConfigMap default/x"
        with pytest.raises(NotSettledError) as raised:
            cluster.settle(timeout=1)
        line = str(raised.value).splitlines()[1]
        times = re.fullmatch(r"  garbagecollector: 1 item retrying: v1/ConfigMap default/x "
                             rf"\(failed (\d+) times in a row\): {re.escape(REFUSAL)}", line)
        assert times is not None, line
        assert int(times[1]) >= 3
        cluster.admission_webhook("deny", allow)
        cluster.settle(timeout=30)  # the next retry (a few seconds' backoff at most)
        assert "x" not in names(core)


def test_stuck_after_must_be_positive() -> None:
    with Cluster(controllers=["garbagecollector"]) as cluster, pytest.raises(ValueError):
        cluster.settle(stuck_after=0)
