"""Aggregated APIs against a real ``kubegc serve`` with the real kubectl: an APIService
served by a tiny HTTPS backend on loopback (tests/e2e/aggregated_api.py) through a
Service without selector and its Endpoints; its ``Available`` condition, the proxy, 503
and a stale group while the backend is down, and what that does to deletion: a namespace
held with ``NamespaceDeletionDiscoveryFailure`` until the backend comes back (kubernetes
#60807). The server is this module's own: a down APIService holds every namespace.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.aggregated_api import GROUP, VERSION, AggregatedAPI, self_signed
from tests.e2e.aggregation_setup import (
    API_SERVICE,
    agg_server,
    apply,
    available,
    backend,
    registered,
    service_objects,
    wait_available,
)
from tests.e2e.conftest import Server, eventually

__all__ = ["agg_server", "backend", "registered"]  # module fixtures


def test_local_apiservices_for_the_built_in_groups(agg_server: Server) -> None:
    def listed() -> str | None:
        out = agg_server.kubectl("get", "apiservices").stdout
        return out if "v1.apps" in out and "v1." in out else None
    out = eventually(listed, what="local APIServices")
    assert "Local" in out and "True" in out
    assert available(agg_server, "v1.apps") == {
        **(available(agg_server, "v1.apps") or {}), "status": "True", "reason": "Local",
        "message": "Local APIServices are always available"}


def test_a_remote_group_is_proxied_with_the_user_in_requestheaders(
        agg_server: Server, backend: AggregatedAPI, registered: str) -> None:
    out = agg_server.kubectl("get", "apiservice", API_SERVICE).stdout
    assert "metrics/metrics-api" in out and "True" in out
    doc = json.loads(agg_server.kubectl("get", "--raw", f"/apis/{GROUP}/{VERSION}").stdout)
    assert [r["name"] for r in doc["resources"]] == ["podmetrics", "widgets"]
    backend.requests.clear()
    listed = agg_server.kubectl("get", "podmetrics.metrics.example.io", "-n", "default",
                                "-o", "json")
    assert json.loads(listed.stdout)["items"] == []
    sent = [r for r in backend.requests if "podmetrics" in r["path"]]
    me = json.loads(agg_server.kubectl("auth", "whoami", "-o", "json").stdout)["status"]
    assert sent and sent[-1]["user"] == me["userInfo"]["username"]
    assert sent[-1]["groups"] == me["userInfo"].get("groups", [])
    assert sent[-1]["authorization"] is None  # the client's credentials stay here
    resources = agg_server.kubectl("api-resources", "--api-group", GROUP).stdout
    assert "podmetrics" in resources and "widgets" in resources


def test_the_proxy_verifies_the_backend_with_the_ca_bundle(
        agg_server: Server, backend: AggregatedAPI, registered: str,
        tmp_path: Path) -> None:
    """Upstream's availability check trusts any certificate; its proxy verifies the
    backend's against ``caBundle`` as ``<service>.<namespace>.svc``."""
    _, _, other = self_signed(tmp_path, "metrics-api.metrics.svc")
    patch = {"spec": {"caBundle": base64.b64encode(other).decode()}}
    agg_server.kubectl("patch", "apiservice", API_SERVICE, "--type=merge",
                       "-p", json.dumps(patch))
    try:
        def refused() -> bool:
            done = agg_server.kubectl("get", "--raw", f"/apis/{GROUP}/{VERSION}", check=False)
            return done.returncode != 0 and "ServiceUnavailable" in done.stderr
        eventually(refused, what="the proxied request refused")
        assert available(agg_server)["status"] == "True"  # type: ignore[index]
    finally:
        agg_server.kubectl("patch", "apiservice", API_SERVICE, "--type=merge", "-p", json.dumps(
            {"spec": {"caBundle": backend.ca_bundle}}))
    eventually(lambda: agg_server.kubectl("get", "--raw", f"/apis/{GROUP}/{VERSION}",
                                          check=False).returncode == 0, what="proxied again")


@pytest.mark.parametrize(("objects", "reason", "message"), [
    ([], "ServiceNotFound", 'service/metrics-api in "{ns}" is not present'),
    (["service"], "EndpointsNotFound",
     'cannot find endpoints for service/metrics-api in "{ns}"'),
    (["service", "empty-endpoints"], "MissingEndpoints",
     'endpoints for service/metrics-api in "{ns}" have no addresses with port name "https"'),
], ids=["no-service", "no-endpoints", "no-addresses"])
def test_unavailable_reasons(agg_server: Server, objects: list[str], reason: str,
                             message: str) -> None:
    name = f"v1.{reason.lower()}.example.io"
    namespace = f"r-{reason.lower()}"
    agg_server.kubectl("create", "namespace", namespace)
    items: list[dict[str, Any]] = []
    service, _ = service_objects(namespace, 1)
    if "service" in objects:
        items.append(service)
    if "empty-endpoints" in objects:
        items.append({"apiVersion": "v1", "kind": "Endpoints",
                      "metadata": {"name": "metrics-api", "namespace": namespace}})
    items.append({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                  "metadata": {"name": name},
                  "spec": {"group": f"{reason.lower()}.example.io", "version": "v1",
                           "groupPriorityMinimum": 100, "versionPriority": 100,
                           "insecureSkipTLSVerify": True,
                           "service": {"namespace": namespace, "name": "metrics-api"}}})
    apply(agg_server, *items)
    try:
        condition = eventually(lambda: available(agg_server, name), what="a condition")
        assert (condition["status"], condition["reason"], condition["message"]) == (
            "False", reason, message.format(ns=namespace))
        out = agg_server.kubectl("get", "apiservice", name).stdout
        assert f"False ({reason})" in out
    finally:
        agg_server.kubectl("delete", "apiservice", name)
        agg_server.kubectl("delete", "namespace", namespace, "--wait=false")


def test_down_backend_holds_a_namespace_until_it_comes_back(
        agg_server: Server, backend: AggregatedAPI, registered: str) -> None:
    agg_server.kubectl("create", "namespace", "s2")
    agg_server.kubectl("create", "configmap", "c", "-n", "s2")
    backend.stop()
    try:
        condition = wait_available(agg_server, "False", "FailedDiscoveryCheck")
        url = f"https://127.0.0.1:{backend.port}/apis/{GROUP}/{VERSION}"
        assert condition["message"].startswith(f"failing or missing response from {url}: ")
        raw = agg_server.kubectl("get", "--raw", f"/apis/{GROUP}/{VERSION}", check=False)
        assert raw.returncode != 0
        assert "the server is currently unable to handle the request" in raw.stderr
        # kubectl 1.32 reads aggregated discovery, where the group is Stale: it lists the
        # rest and leaves the group out (client-go drops a group with no fresh version)
        listed = agg_server.kubectl("api-resources")
        assert "configmaps" in listed.stdout and "podmetrics" not in listed.stdout
        aggregated = json.loads(agg_server.kubectl("get", "--raw", "/apis").stdout)
        assert GROUP in [g["name"] for g in aggregated["groups"]]  # legacy: still listed
        planned = agg_server.kubegc_json("plan", "delete", "namespace/s2")
        assert planned["verdict"]["completes"] is False  # as it then happens, below
        (hang,) = planned["hanging"]
        assert hang["object"]["name"] == "s2"
        assert hang["causes"][0]["object"]["name"] == API_SERVICE
        agg_server.kubectl("delete", "namespace", "s2", "--wait=false")
        gv = f"{GROUP}/{VERSION}"
        expected = (f"Discovery failed for some groups, 1 failing: unable to retrieve the "
                    f"complete list of server APIs: {gv}: stale GroupVersion discovery: {gv}")

        def held() -> dict[str, Any] | None:
            ns = json.loads(agg_server.kubectl("get", "ns", "s2", "-o", "json").stdout)
            conditions = {c["type"]: c for c in ns["status"].get("conditions") or []}
            failure = conditions.get("NamespaceDeletionDiscoveryFailure")
            gone = agg_server.kubectl("get", "configmap", "c", "-n", "s2", check=False)
            return conditions if failure and failure["status"] == "True" and (
                gone.returncode != 0) else None
        conditions = eventually(held, what="discovery failure condition")
        failure = conditions["NamespaceDeletionDiscoveryFailure"]
        assert (failure["reason"], failure["message"]) == ("DiscoveryFailed", expected)
        assert len(conditions) == 5
        assert conditions["NamespaceDeletionContentFailure"]["reason"] == "ContentDeleted"
        ns = json.loads(agg_server.kubectl("get", "ns", "s2", "-o", "json").stdout)
        assert ns["status"]["phase"] == "Terminating"
        assert ns["spec"]["finalizers"] == ["kubernetes"]
        why = agg_server.kubegc_json("why", "namespace/s2")
        assert f"APIService {API_SERVICE} is unavailable" in why["conclusion"]
        assert f"kubectl delete apiservice {API_SERVICE}" in why["conclusion"]
        live = doctor(agg_server, "--kubeconfig", str(agg_server.kubeconfig), "-n", "s2")
        dump = agg_server.data_dir / "dump.json"
        dump.write_text(agg_server.kubectl("get", "namespaces,apiservices", "-o", "json").stdout)
        from_dump = doctor(agg_server, "--from", str(dump))
        for report in (live, from_dump):
            (finding,) = [f for f in report["findings"] if f["object"]["name"] == "s2"]
            assert finding["causes"][0]["object"]["name"] == API_SERVICE
            assert "FailedDiscoveryCheck" in finding["causes"][0]["cause"]
            assert any("kubectl delete apiservice " + API_SERVICE in f for f in finding["fix"])
    finally:
        backend.start()
    wait_available(agg_server, "True", "Passed")
    eventually(lambda: agg_server.kubectl("get", "ns", "s2", check=False).returncode != 0,
               timeout=90, what="namespace s2 released")


def doctor(server: Server, *args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "kubegc.cli", "doctor", "-o", "json", *args],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1, 2), done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report



def owned_configmap(name: str, owner: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "ownerReferences": [owner]}}


def test_gc_keeps_dependents_of_an_unavailable_group_until_it_is_back(
        agg_server: Server, backend: AggregatedAPI, registered: str) -> None:
    """Upstream's GC (1.32) with partial discovery: the other groups are collected; a
    reference to a kind of the unavailable group cannot be mapped, so it is retried,
    never taken as absent; once the group is back the owner is looked up there (404:
    the dependent goes)."""
    ns = "gc-agg"
    agg_server.kubectl("create", "namespace", ns)
    backend.stop()
    try:
        wait_available(agg_server, "False", "FailedDiscoveryCheck")
        widget = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Widget", "name": "w1",
                  "uid": "6a5c7b1e-0000-4000-8000-000000000001"}
        gone_cm = {"apiVersion": "v1", "kind": "ConfigMap", "name": "gone",
                   "uid": "6a5c7b1e-0000-4000-8000-000000000002"}
        agg_server.kubectl("apply", "-n", ns, "-f", "-", input=json.dumps(
            {"apiVersion": "v1", "kind": "List", "items": [
                owned_configmap("of-widget", widget), owned_configmap("of-configmap", gone_cm)]}))
        eventually(lambda: agg_server.kubectl("get", "cm", "of-configmap", "-n", ns,
                                              check=False).returncode != 0,
                   what="the dependent of a reachable group collected")
        assert agg_server.kubectl("get", "cm", "of-widget", "-n", ns).returncode == 0
    finally:
        backend.start()
    wait_available(agg_server, "True", "Passed")
    eventually(lambda: agg_server.kubectl("get", "cm", "of-widget", "-n", ns,
                                          check=False).returncode != 0,
               timeout=60, what="the dependent of the widget collected once its group is back")
    assert any(r["path"] == f"/apis/{GROUP}/{VERSION}/namespaces/{ns}/widgets/w1"
               for r in backend.requests)


def test_a_crd_group_gets_its_local_apiservice_and_loses_it_with_the_crd(
        agg_server: Server) -> None:
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "gadgets.crd.example.io"},
           "spec": {"group": "crd.example.io", "scope": "Namespaced",
                    "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                        "openAPIV3Schema": {"type": "object",
                                            "x-kubernetes-preserve-unknown-fields": True}}}]}}
    apply(agg_server, crd)
    condition = eventually(lambda: available(agg_server, "v1.crd.example.io"),
                           what="the CRD group's APIService")
    assert (condition["status"], condition["reason"]) == ("True", "Local")
    labels = json.loads(agg_server.kubectl("get", "apiservice", "v1.crd.example.io", "-o",
                                           "json").stdout)["metadata"]["labels"]
    assert labels == {"kube-aggregator.kubernetes.io/automanaged": "true"}
    agg_server.kubectl("delete", "crd", "gadgets.crd.example.io")
    eventually(lambda: agg_server.kubectl("get", "apiservice", "v1.crd.example.io",
                                          check=False).returncode != 0,
               what="the CRD group's APIService gone")
