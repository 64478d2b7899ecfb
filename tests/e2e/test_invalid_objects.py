"""Objects kube-apiserver refuses, refused by a real ``kubegc serve`` the same way — on
create, and on update and patch of a valid object — with upstream's code, field path and
message, and nothing written."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from tests.e2e.conftest import Server
from tests.invalid_corpus import merged

JSON = {"Content-Type": "application/json"}
MERGE = {"Content-Type": "application/merge-patch+json"}
LABELS = {"app": "a"}
POD_SPEC = {"containers": [{"name": "c", "image": "busybox"}]}
TEMPLATE = {"metadata": {"labels": LABELS}, "spec": POD_SPEC}
JOB_TEMPLATE = {"spec": {**POD_SPEC, "restartPolicy": "Never"}}

#: resource path under the namespace (or cluster) → a valid object without a name
VALID: dict[str, dict[str, Any]] = {
    "configmaps": {"data": {"a": "b"}},
    "secrets": {"data": {"a": "Yg=="}},
    "pods": {"spec": POD_SPEC},
    "services": {"spec": {"ports": [{"port": 80}]}},
    "persistentvolumeclaims": {"spec": {"accessModes": ["ReadWriteOnce"],
                                        "resources": {"requests": {"storage": "1Gi"}}}},
    "replicationcontrollers": {"spec": {"replicas": 0, "selector": LABELS,
                                        "template": TEMPLATE}},
    "events": {"involvedObject": {"kind": "Pod", "name": "p"}, "reason": "R"},
    "deployments": {"spec": {"replicas": 0, "selector": {"matchLabels": LABELS},
                             "template": TEMPLATE}},
    "statefulsets": {"spec": {"replicas": 0, "serviceName": "s",
                              "selector": {"matchLabels": LABELS}, "template": TEMPLATE}},
    "daemonsets": {"spec": {"selector": {"matchLabels": LABELS}, "template": TEMPLATE}},
    "jobs": {"spec": {"suspend": True, "template": JOB_TEMPLATE}},
    "cronjobs": {"spec": {"schedule": "*/5 * * * *", "suspend": True,
                          "jobTemplate": {"spec": {"template": JOB_TEMPLATE}}}},
    "leases": {"spec": {"holderIdentity": "h", "leaseDurationSeconds": 15}},
    "eventsv1": {"eventTime": "2024-01-01T00:00:00.000000Z", "reportingController": "x/y",
                 "reportingInstance": "i", "action": "A", "reason": "R", "type": "Normal"},
    "persistentvolumes": {"spec": {"capacity": {"storage": "1Gi"},
                                   "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/x"}}},
    "namespaces": {},
    "limitranges": {"spec": {"limits": [{"type": "Container"}]}},
    "resourcequotas": {"spec": {"hard": {"pods": "10"}}},
    "endpoints": {"subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}]},
    "nodes": {"spec": {"unschedulable": True}},
}
GROUPS = {"deployments": "apis/apps/v1", "statefulsets": "apis/apps/v1",
          "daemonsets": "apis/apps/v1", "jobs": "apis/batch/v1", "cronjobs": "apis/batch/v1",
          "leases": "apis/coordination.k8s.io/v1", "eventsv1": "apis/events.k8s.io/v1"}
CLUSTER_SCOPED = ("persistentvolumes", "namespaces", "nodes")
BIG = "x" * (1024 * 1024 + 1)

LONG_ANNOTATION = {"metadata": {"annotations": {"a": "x" * (256 * 1024)}}}
CM_KEY = ("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
          "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
          "'[-._a-zA-Z0-9]+')")
DNS_LABEL = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters"
QUALIFIED = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must "
             "start and end with an alphanumeric character")


def create(kind: str, change: dict[str, Any], text: str, **kw: Any) -> Any:
    return pytest.param(kind, "create", change, text, kw.get("code", 422), id=kw["id"])


def update(kind: str, change: dict[str, Any], text: str, **kw: Any) -> Any:
    return pytest.param(kind, kw.get("how", "merge"), change, text, kw.get("code", 422),
                        id=kw["id"])


# (kind, how, change merged into the valid object (create) or sent as patch/update, message
#  text, code)
CASES = [
    create("configmaps", {"metadata": {"name": ""}}, 'ConfigMap "" is invalid: metadata.name: '
           "Required value: name or generateName is required", id="empty-name"),
    create("configmaps", {"metadata": {"generateName": "UP-"}},
           'metadata.generateName: Invalid value: "UP-": a lowercase RFC 1123 subdomain',
           id="bad-generate-name"),
    create("configmaps", {"data": {"a": BIG}},
           "[]: Too long: may not be more than 1048576 bytes", id="configmap-over-1-mib"),
    create("configmaps", LONG_ANNOTATION,
           "metadata.annotations: Too long: may not be more than 262144 bytes",
           id="annotations-over-256-kib"),
    create("configmaps", {"data": {"a b": "x"}}, f'data[a b]: Invalid value: "a b": {CM_KEY}',
           id="configmap-bad-key"),
    update("configmaps", {"data": {"a b": "x"}}, f'data[a b]: Invalid value: "a b": {CM_KEY}',
           id="configmap-bad-key-by-merge-patch"),
    update("configmaps", LONG_ANNOTATION, "metadata.annotations: Too long",
           id="annotations-over-256-kib-by-patch"),
    create("configmaps", {"metadata": {"finalizers": ["foo"]}},
           'metadata.finalizers[0]: Invalid value: "foo": name is neither a standard finalizer '
           "name nor is it fully qualified", id="finalizer-without-domain"),
    create("configmaps", {"metadata": {"ownerReferences": [
        {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": ""}]}},
           'metadata.ownerReferences.uid: Invalid value: "": uid must not be empty',
           id="owner-without-uid"),
    create("configmaps", {"metadata": {"ownerReferences": [
        {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": 5}]}},
           "json: cannot unmarshal number into Go struct field "
           "OwnerReference.metadata.ownerReferences.uid of type types.UID", code=400,
           id="owner-uid-number"),
    create("configmaps", {"metadata": {"ownerReferences": [
        {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u",
         "blockOwnerDeletion": "yes"}]}}, "of type bool", code=400,
           id="owner-block-owner-deletion-string"),
    update("configmaps", {"immutable": True}, "", code=200, id="make-immutable"),
    create("secrets", {"data": {"a": base64.b64encode(b"x" * (1024 * 1024 + 1)).decode()}},
           "data: Too long: may not be more than 1048576 bytes", id="secret-over-1-mib"),
    create("secrets", {"type": "kubernetes.io/tls"}, "data[tls.crt]: Required value",
           id="tls-secret-without-keys"),
    update("secrets", {"type": "kubernetes.io/basic-auth", "data": {"username": "dQ=="}},
           'type: Invalid value: "kubernetes.io/basic-auth": field is immutable',
           id="secret-type-change"),
    create("pods", {"spec": {"containers": [{"name": "UPPER", "image": "i"}]}},
           f'spec.containers[0].name: Invalid value: "UPPER": {DNS_LABEL}',
           id="container-name-upper"),
    create("pods", {"spec": {"containers": [{"name": "c"}]}},
           "spec.containers[0].image: Required value", id="container-without-image"),
    create("pods", {"spec": {"restartPolicy": "Sometimes"}},
           'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", '
           '"OnFailure", "Never"', id="pod-restart-policy"),
    create("pods", {"spec": {"containers": [{"name": "c", "image": "i", "ports": [
        {"containerPort": 70000}]}]}}, "spec.containers[0].ports[0].containerPort: Invalid "
           "value: 70000: must be between 1 and 65535, inclusive", id="container-port-range"),
    create("pods", {"spec": {"activeDeadlineSeconds": 0}}, "spec.activeDeadlineSeconds: "
           "Invalid value: 0: must be between 1 and 2147483647, inclusive",
           id="pod-active-deadline-zero"),
    create("pods", {"spec": {"volumes": [{"name": "v"}]}},
           "spec.volumes[0]: Required value: must specify a volume type",
           id="volume-without-source"),
    create("services", {"spec": {"ports": [{"port": 0}]}}, "spec.ports[0].port: Invalid value: "
           "0: must be between 1 and 65535, inclusive", id="service-port-zero"),
    create("services", {"spec": {"type": "Weird"}}, 'spec.type: Unsupported value: "Weird": '
           'supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
           id="service-type"),
    create("persistentvolumeclaims", {"spec": {"resources": {"requests": None}}},
           "spec.resources[storage]: Required value", id="claim-without-storage"),
    update("persistentvolumeclaims", {"spec": {"accessModes": ["ReadWriteMany"]}},
           "spec: Forbidden: spec is immutable after creation except resources.requests",
           id="claim-spec-change"),
    create("persistentvolumes", {"spec": {"hostPath": None}},
           "spec: Required value: must specify a volume type", id="pv-without-source"),
    create("persistentvolumes", {"spec": {"accessModes": []}},
           "spec.accessModes: Required value", id="pv-without-access-modes"),
    create("replicationcontrollers", {"spec": {"template": {"metadata": {"labels": {
        "app": "b"}}}}}, 'spec.template.metadata.labels: Invalid value: map[string]string'
           '{"app":"b"}: `selector` does not match template `labels`', id="rc-selector-mismatch"),
    create("events", {"involvedObject": {"namespace": "other"}},
           'involvedObject.namespace: Invalid value: "other": does not match event.namespace',
           id="event-namespace-mismatch"),
    create("eventsv1", {"reportingController": ""}, "reportingController: Required value",
           id="events-v1-without-reporter"),
    create("deployments", {"spec": {"replicas": -1}}, "spec.replicas: Invalid value: -1: must "
           "be greater than or equal to 0", id="deployment-negative-replicas"),
    update("deployments", {"spec": {"replicas": -1}}, "spec.replicas: Invalid value: -1",
           id="deployment-negative-replicas-by-patch"),
    create("deployments", {"spec": {"selector": {"matchLabels": None}}},
           "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
           "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for "
           "deployment", id="deployment-empty-selector"),
    create("deployments", {"spec": {"strategy": {"rollingUpdate": {"maxUnavailable": "x"}}}},
           'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString'
           '{Type:1, IntVal:0, StrVal:"x"}: a valid percent string must be a numeric string '
           "followed by an ending '%'", id="deployment-bad-max-unavailable"),
    create("deployments", {"spec": {"template": {"spec": {"restartPolicy": "Never"}}}},
           'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: '
           '"Always"', id="deployment-restart-never"),
    update("deployments", {"spec": {"selector": {"matchLabels": {"app": "b"}},
                                    "template": {"metadata": {"labels": {"app": "b"}}}}},
           'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string'
           '{"app":"b"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is '
           "immutable", id="deployment-selector-change"),
    create("statefulsets", {"spec": {"podManagementPolicy": "Weird"}},
           "spec.podManagementPolicy: Invalid value: \"Weird\": must be 'OrderedReady' or "
           "'Parallel'", id="statefulset-pod-management"),
    update("statefulsets", {"spec": {"serviceName": "other"}}, "spec: Forbidden: updates to "
           "statefulset spec for fields other than 'replicas'", id="statefulset-spec-change"),
    create("daemonsets", {"spec": {"selector": {"matchLabels": {"app": "b"}}}},
           "`selector` does not match template `labels`", id="daemonset-selector-mismatch"),
    create("jobs", {"spec": {"completions": "abc"}}, "json: cannot unmarshal string into Go "
           "struct field JobSpec.spec.completions of type int32", code=400,
           id="job-completions-string"),
    create("jobs", {"spec": {"backoffLimit": -1}}, "spec.backoffLimit: Invalid value: -1: must "
           "be greater than or equal to 0", id="job-negative-backoff"),
    create("jobs", {"spec": {"template": {"spec": {"restartPolicy": "Always"}}}},
           'spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: '
           '"OnFailure", "Never"', id="job-restart-always"),
    update("jobs", {"spec": {"template": {"spec": {"activeDeadlineSeconds": 5}}}},
           "spec.template: Invalid value:", id="job-template-change"),
    update("jobs", {"spec": {"completions": 3}}, "spec.completions: Invalid value: 3: field is "
           "immutable", id="job-completions-change"),
    create("cronjobs", {"spec": {"schedule": "not a schedule"}}, 'spec.schedule: Invalid value: '
           '"not a schedule": expected exactly 5 fields, found 3: [not a schedule]',
           id="cronjob-bad-schedule"),
    update("cronjobs", {"spec": {"schedule": "61 * * * *"}}, "end of range (61) above maximum "
           "(59): 61", id="cronjob-bad-schedule-by-patch"),
    create("cronjobs", {"spec": {"concurrencyPolicy": "Sometimes"}},
           'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: '
           '"Allow", "Forbid", "Replace"', id="cronjob-concurrency-policy"),
    create("cronjobs", {"spec": {"timeZone": "Mars/Base"}}, 'spec.timeZone: Invalid value: '
           '"Mars/Base": unknown time zone Mars/Base', id="cronjob-time-zone"),
    # the map keys of a pod spec (issue 26: every key rule of upstream's validation)
    create("pods", {"spec": {"nodeSelector": {"a b": "x"}}},
           f'spec.nodeSelector: Invalid value: "a b": {QUALIFIED}', id="pod-node-selector-key"),
    create("pods", {"spec": {"containers": [{"name": "c", "image": "i", "env": [
        {"name": "A=B", "value": "x"}]}]}}, 'spec.containers[0].env[0].name: Invalid value: '
           '"A=B": a valid environment variable name must consist only of printable ASCII '
           "characters other than '='", id="pod-env-name"),
    create("pods", {"spec": {"containers": [{"name": "c", "image": "i", "env": [
        {"value": "x"}]}]}}, "spec.containers[0].env[0].name: Required value",
           id="pod-env-without-name"),
    create("pods", {"spec": {"containers": [{"name": "c", "image": "i", "resources": {
        "limits": {"a b": "1"}}}]}}, f'spec.containers[0].resources.limits[a b]: Invalid '
           f'value: "a b": {QUALIFIED}', id="pod-resource-name"),
    create("pods", {"spec": {"containers": [{"name": "c", "image": "i", "resources": {
        "requests": {"pods": "1"}}}]}}, 'spec.containers[0].resources.requests[pods]: Invalid '
           'value: "pods": must be a standard resource for containers',
           id="pod-resource-not-for-containers"),
    update("pods", {"spec": {"tolerations": [{"key": "a b", "operator": "Exists"}]}},
           f'spec.tolerations[0].key: Invalid value: "a b": {QUALIFIED}',
           id="pod-toleration-key-by-patch"),
    create("pods", {"spec": {"topologySpreadConstraints": [{
        "maxSkew": 1, "topologyKey": "a b", "whenUnsatisfiable": "DoNotSchedule"}]}},
           f'spec.topologySpreadConstraints[0].topologyKey: Invalid value: "a b": {QUALIFIED}',
           id="pod-topology-key"),
    create("pods", {"spec": {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
            "matchExpressions": [{"key": "a b", "operator": "Exists"}]}]}}}}},
           "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
           f'nodeSelectorTerms[0].matchExpressions[0].key: Invalid value: "a b": {QUALIFIED}',
           id="pod-node-affinity-key"),
    create("pods", {"spec": {"affinity": {"nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 0, "preference": {
            "matchExpressions": [{"key": "k", "operator": "Gt", "values": ["1", "2"]}]}}]}}}},
           "[spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
           "weight: Invalid value: 0: must be in the range 1-100, spec.affinity.nodeAffinity."
           "preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0]."
           "values: Required value: must be specified single value when `operator` is 'Lt' or "
           "'Gt']", id="pod-node-affinity-preferred"),
    create("pods", {"spec": {"affinity": {"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "a b"}]}}}},
           "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
           f'topologyKey: Invalid value: "a b": {QUALIFIED}', id="pod-anti-affinity-key"),
    create("deployments", {"spec": {"template": {"spec": {"nodeSelector": {"a": "b c"}}}}},
           'spec.template.spec.nodeSelector: Invalid value: "b c": a valid label must be an '
           "empty string", id="template-node-selector-value"),
    create("limitranges", {"spec": {"limits": [{"type": "Container", "max": {"foo": "1"}}]}},
           'spec.limits[0].max[foo]: Invalid value: "foo": must be a standard resource type or '
           "fully qualified", id="limit-range-resource-name"),
    create("resourcequotas", {"spec": {"hard": {"storage": "1Gi"}}},
           'spec.hard[storage]: Invalid value: "storage": must be a standard resource for quota',
           id="quota-resource-name"),
    create("resourcequotas", {"spec": {"hard": {"requests.example.com/gpu": "1"}}}, "",
           code=201, id="quota-extended-resource"),
    create("endpoints", {"subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [
        {"name": "A B", "port": 80}, {"port": 0, "protocol": "XYZ"}]}]},
           '[subsets[0].ports[0].name: Invalid value: "A B": a lowercase RFC 1123 label must '
           "consist of lower case alphanumeric characters or '-', and must start and end with "
           "an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation"
           " is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), subsets[0].ports[1].name: Required value, "
           "subsets[0].ports[1].port: Invalid value: 0: must be between 1 and 65535, inclusive,"
           ' subsets[0].ports[1].protocol: Unsupported value: "XYZ": supported values: "SCTP",'
           ' "TCP", "UDP"]', id="endpoints-ports"),
    create("nodes", {"spec": {"taints": [{"key": "a b", "effect": "NoSchedule"}]}},
           f'metadata.taints[0].key: Invalid value: "a b": {QUALIFIED}', id="node-taint-key"),
    update("nodes", {"spec": {"taints": [{"key": "k", "effect": "Sometimes"}]}},
           'metadata.taints[0].effect: Unsupported value: "Sometimes": supported values: '
           '"NoSchedule", "PreferNoSchedule", "NoExecute"', id="node-taint-effect-by-patch"),
    create("leases", {"spec": {"leaseDurationSeconds": 0}}, "spec.leaseDurationSeconds: "
           "Invalid value: 0: must be greater than 0", id="lease-zero-duration"),
    create("namespaces", {"metadata": {"name": "UPPER"}},
           f'metadata.name: Invalid value: "UPPER": {DNS_LABEL}', id="namespace-name-upper"),
    create("namespaces", {"spec": {"finalizers": ["foo"]}}, 'spec.finalizers[0]: Invalid value:'
           ' "foo": name is neither a standard finalizer name nor is it fully qualified',
           id="namespace-finalizer"),
]


def touched(obj: Any, change: Any) -> Any:
    """The parts of ``obj`` that ``change`` names."""
    if not isinstance(change, dict) or not isinstance(obj, dict):
        return obj
    return {k: touched(obj.get(k), v) for k, v in change.items()}


def path(kind: str, ns: str, name: str = "") -> str:
    group = GROUPS.get(kind, "api/v1")
    resource = "events" if kind == "eventsv1" else kind
    where = "" if kind in CLUSTER_SCOPED else f"namespaces/{ns}/"
    return f"/{group}/{where}{resource}" + (f"/{name}" if name else "")


@pytest.mark.parametrize(("kind", "how", "change", "text", "code"), CASES)
def test_invalid_object_refused_as_upstream(server: Server, ns: str, kind: str, how: str,
                                            change: dict[str, Any], text: str,
                                            code: int) -> None:
    name = f"{ns}-v" if kind in CLUSTER_SCOPED else "v"
    valid = merged(VALID[kind], {"metadata": {"name": name}})
    if how == "create":
        status, answer = server.http("POST", path(kind, ns), merged(valid, change),
                                     headers=JSON)
        written = server.http("GET", path(kind, ns, name))[0]
        expected_written = 200 if code < 400 else 404
    else:
        created = server.http("POST", path(kind, ns), valid, headers=JSON)
        assert created[0] == 201, created
        before = json.loads(server.http("GET", path(kind, ns, name))[1])
        status, answer = server.http("PATCH", path(kind, ns, name), change, headers=MERGE)
        after = json.loads(server.http("GET", path(kind, ns, name))[1])
        # what the change touches (controllers go on writing status and annotations)
        written = 200 if touched(after, change) != touched(before, change) else 404
        expected_written = 200 if code < 400 else 404
    assert status == code, answer
    if code >= 400:
        body = json.loads(answer)
        assert body["kind"] == "Status" and body["code"] == code, body
        assert text in body["message"], body["message"]
    assert written == expected_written  # nothing written when refused


def test_immutable_config_map_data_cannot_change(server: Server, ns: str) -> None:
    cm = {"metadata": {"name": "frozen"}, "data": {"a": "b"}, "immutable": True}
    assert server.http("POST", path("configmaps", ns), cm, headers=JSON)[0] == 201
    status, answer = server.http("PATCH", path("configmaps", ns, "frozen"),
                                 {"data": {"a": "c"}}, headers=MERGE)
    assert status == 422, answer
    assert ("data: Forbidden: field is immutable when `immutable` is set"
            in json.loads(answer)["message"])


def test_namespace_deletion_still_works_with_its_finalizer(server: Server) -> None:
    """The namespace controller's ``kubernetes`` finalizer is a standard name."""
    status, answer = server.http("POST", "/api/v1/namespaces", {"metadata": {"name": "fin-ok"}},
                                 headers=JSON)
    assert status == 201, answer
    assert json.loads(answer)["spec"]["finalizers"] == ["kubernetes"]
    assert server.http("DELETE", "/api/v1/namespaces/fin-ok")[0] == 200
