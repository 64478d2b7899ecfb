"""The doctor on a namespace held by an unavailable aggregated API, read from a dump of a
real cluster with that condition and that APIService (kubernetes #60807)."""

from __future__ import annotations

from typing import Any

from kubegc.tools.doctor import FindingKind, diagnose

from .conftest import inventory_of

GV = "metrics.example.io/v1beta1"
MESSAGE = (f"Discovery failed for some groups, 1 failing: unable to retrieve the complete list "
           f"of server APIs: {GV}: stale GroupVersion discovery: {GV}")


def _namespace() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "s2", "uid": "ns-uid",
                         "creationTimestamp": "2026-01-01T00:00:00Z",
                         "deletionTimestamp": "2026-01-01T00:01:00Z"},
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Terminating", "conditions": [
                {"type": "NamespaceDeletionDiscoveryFailure", "status": "True",
                 "reason": "DiscoveryFailed", "message": MESSAGE,
                 "lastTransitionTime": "2026-01-01T00:01:00Z"},
                {"type": "NamespaceDeletionContentFailure", "status": "False",
                 "reason": "ContentDeleted", "message": "All content successfully deleted"}]}}


def _api_service(reason: str, status: str = "False") -> dict[str, Any]:
    return {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": {"name": "v1beta1.metrics.example.io", "uid": "as-uid",
                         "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"group": "metrics.example.io", "version": "v1beta1",
                     "groupPriorityMinimum": 100, "versionPriority": 100,
                     "service": {"namespace": "metrics", "name": "metrics-api", "port": 443}},
            "status": {"conditions": [{"type": "Available", "status": status,
                                       "reason": reason, "message": "...",
                                       "lastTransitionTime": "2026-01-01T00:00:30Z"}]}}


async def test_the_unavailable_apiservice_is_the_root_cause_with_its_fix() -> None:
    inv = await inventory_of([_namespace(), _api_service("MissingEndpoints")])
    report = diagnose(inv)
    (finding,) = [f for f in report.findings if f.object.name == "s2"]
    assert finding.kind is FindingKind.STUCK_NAMESPACE
    assert f"condition NamespaceDeletionDiscoveryFailure: {MESSAGE}" in finding.facts
    (cause,) = finding.causes
    assert cause.object is not None and cause.object.name == "v1beta1.metrics.example.io"
    assert "APIService v1beta1.metrics.example.io is unavailable" in cause.what
    assert "MissingEndpoints" in cause.what
    assert "nothing to do but wait" not in " ".join(finding.fix + finding.next)
    assert "bring back the backend of service/metrics-api in namespace metrics" in finding.fix[0]
    assert "kubectl delete apiservice v1beta1.metrics.example.io" in " ".join(finding.fix)
    assert "keeps the 'kubernetes' finalizer" in finding.next[0]


async def test_an_available_apiservice_is_no_cause() -> None:
    inv = await inventory_of([_namespace(), _api_service("Passed", "True")])
    (finding,) = [f for f in diagnose(inv).findings if f.object.name == "s2"]
    assert all(c.object is None or c.object.kind != "APIService" for c in finding.causes)
    assert "retries discovery" in finding.next[0]


async def test_a_malformed_apiservice_in_a_dump_is_no_crash() -> None:
    broken = _api_service("MissingEndpoints")
    broken["status"] = {"conditions": "nope"}
    broken["spec"]["service"]["name"] = 7
    inv = await inventory_of([_namespace(), broken])
    (finding,) = [f for f in diagnose(inv).findings if f.object.name == "s2"]
    assert finding.kind is FindingKind.STUCK_NAMESPACE


async def test_an_owner_of_the_unavailable_group_names_the_apiservice() -> None:
    dependent = {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": "of-widget", "namespace": "app", "uid": "cm-uid",
                              "creationTimestamp": "2026-01-01T00:00:00Z",
                              "ownerReferences": [{"apiVersion": GV, "kind": "Widget",
                                                   "name": "w1", "uid": "w-uid"}]}}
    inv = await inventory_of([dependent, _api_service("FailedDiscoveryCheck")])
    (finding,) = [f for f in diagnose(inv).findings if f.object.name == "of-widget"]
    assert finding.kind is FindingKind.UNKNOWN_OWNER_KIND
    assert "APIService v1beta1.metrics.example.io is unavailable" in finding.title
    assert "kubectl delete apiservice v1beta1.metrics.example.io" in finding.fix[0]
    assert "retries" in finding.next[0]
