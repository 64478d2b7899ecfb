"""The built-in kinds beyond the workloads, created through the registry as an API
client creates them: upstream's defaults and zero statuses, its validation messages for
what clients rely on, generation tracking and immutable fields."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from kubegc.api.errors import StatusError
from kubegc.registry import Registry
from kubegc.registry.generic.strategy import GCPolicy

GROUPS = {
    "podtemplates": "", "limitranges": "", "resourcequotas": "",
    "controllerrevisions": "apps", "poddisruptionbudgets": "policy",
    "ingresses": "networking.k8s.io", "ingressclasses": "networking.k8s.io",
    "networkpolicies": "networking.k8s.io", "endpointslices": "discovery.k8s.io",
    "storageclasses": "storage.k8s.io", "csidrivers": "storage.k8s.io",
    "csinodes": "storage.k8s.io", "volumeattachments": "storage.k8s.io",
    "priorityclasses": "scheduling.k8s.io", "runtimeclasses": "node.k8s.io",
    "certificatesigningrequests": "certificates.k8s.io",
    "roles": "rbac.authorization.k8s.io", "clusterroles": "rbac.authorization.k8s.io",
    "rolebindings": "rbac.authorization.k8s.io",
    "clusterrolebindings": "rbac.authorization.k8s.io",
    "validatingwebhookconfigurations": "admissionregistration.k8s.io",
    "mutatingwebhookconfigurations": "admissionregistration.k8s.io",
    "validatingadmissionpolicies": "admissionregistration.k8s.io",
    "validatingadmissionpolicybindings": "admissionregistration.k8s.io",
    "apiservices": "apiregistration.k8s.io",
    "flowschemas": "flowcontrol.apiserver.k8s.io",
    "prioritylevelconfigurations": "flowcontrol.apiserver.k8s.io",
}
SELECTOR = {"matchLabels": {"app": "web"}}
RULES = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]


async def create(registry: Registry, resource: str, body: dict[str, Any]) -> dict[str, Any]:
    t = registry.target(GROUPS[resource], "v1", resource, "default")
    return await registry.create(t, {"metadata": {"name": "x"}, **body})


async def update(registry: Registry, resource: str, obj: dict[str, Any]) -> dict[str, Any]:
    t = registry.target(GROUPS[resource], "v1", resource, "default")
    updated, _ = await registry.update(t, obj["metadata"]["name"], obj)
    return updated


DEFAULTS = [
    pytest.param("networkpolicies", {"spec": {"podSelector": SELECTOR}},
                 {"spec": {"podSelector": SELECTOR, "policyTypes": ["Ingress"]}},
                 id="networkpolicy-ingress"),
    pytest.param("networkpolicies", {"spec": {"egress": [{"ports": [{"port": 53}]}]}},
                 {"spec": {"podSelector": {}, "policyTypes": ["Ingress", "Egress"],
                           "egress": [{"ports": [{"port": 53, "protocol": "TCP"}]}]}},
                 id="networkpolicy-egress"),
    pytest.param("ingresses", {"spec": {"defaultBackend": {"service": {
        "name": "web", "port": {"number": 80}}}}}, {"status": {"loadBalancer": {}}},
                 id="ingress-status"),
    pytest.param("poddisruptionbudgets", {"spec": {"minAvailable": 1, "selector": SELECTOR}},
                 {"status": {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0,
                             "expectedPods": 0}}, id="pdb-zero-status"),
    pytest.param("storageclasses", {"provisioner": "example.com/fast"},
                 {"reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"},
                 id="storageclass"),
    pytest.param("csidrivers", {"spec": {"attachRequired": False}},
                 {"spec": {"attachRequired": False, "podInfoOnMount": False,
                           "storageCapacity": False, "fsGroupPolicy": "ReadWriteOnceWithFSType",
                           "requiresRepublish": False, "seLinuxMount": False,
                           "volumeLifecycleModes": ["Persistent"]}}, id="csidriver"),
    pytest.param("priorityclasses", {"value": 1000},
                 {"value": 1000, "preemptionPolicy": "PreemptLowerPriority"}, id="priorityclass"),
    pytest.param("limitranges", {"spec": {"limits": [{"type": "Container",
                                                      "max": {"cpu": "2"}, "min": {"cpu": "1m"},
                                                      "default": {"memory": "1Gi"}}]}},
                 {"spec": {"limits": [{"type": "Container", "max": {"cpu": "2"},
                                       "min": {"cpu": "1m"},
                                       "default": {"memory": "1Gi", "cpu": "2"},
                                       "defaultRequest": {"memory": "1Gi", "cpu": "2"}}]}},
                 id="limitrange-container"),
    pytest.param("resourcequotas", {"spec": {"hard": {"pods": "3"}},
                                    "status": {"used": {"pods": "9"}}},
                 {"spec": {"hard": {"pods": "3"}}, "status": {}}, id="quota-status-cleared"),
    pytest.param("rolebindings", {"roleRef": {"kind": "Role", "name": "r"},
                                  "subjects": [{"kind": "User", "name": "jane"},
                                               {"kind": "ServiceAccount", "name": "app"}]},
                 {"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                              "name": "r"},
                  "subjects": [{"kind": "User", "name": "jane",
                                "apiGroup": "rbac.authorization.k8s.io"},
                               {"kind": "ServiceAccount", "name": "app"}]}, id="rolebinding"),
    pytest.param("validatingwebhookconfigurations", {"webhooks": [{
        "name": "v.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
        "clientConfig": {"service": {"name": "s", "namespace": "n"}},
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                   "resources": ["pods"]}]}]},
                 {"webhooks": [{"name": "v.example.com", "sideEffects": "None",
                                "admissionReviewVersions": ["v1"], "failurePolicy": "Fail",
                                "matchPolicy": "Equivalent", "namespaceSelector": {},
                                "objectSelector": {}, "timeoutSeconds": 10,
                                "clientConfig": {"service": {"name": "s", "namespace": "n",
                                                             "port": 443}},
                                "rules": [{"operations": ["CREATE"], "apiGroups": [""],
                                           "apiVersions": ["v1"], "resources": ["pods"],
                                           "scope": "*"}]}]}, id="webhook"),
    pytest.param("prioritylevelconfigurations", {"spec": {"type": "Limited", "limited": {
        "limitResponse": {"type": "Queue", "queuing": {"queues": 16}}}}},
                 {"spec": {"type": "Limited", "limited": {
                     "nominalConcurrencyShares": 30, "lendablePercent": 0,
                     "limitResponse": {"type": "Queue", "queuing": {
                         "queues": 16, "handSize": 8, "queueLengthLimit": 50}}}},
                  "status": {}}, id="prioritylevel"),
    pytest.param("podtemplates", {"template": {"spec": {"containers": [
        {"name": "c", "image": "busybox"}]}}},
                 {"template": {"metadata": {}, "spec": {
                     "containers": [{"name": "c", "image": "busybox",
                                     "imagePullPolicy": "Always", "resources": {},
                                     "terminationMessagePath": "/dev/termination-log",
                                     "terminationMessagePolicy": "File"}],
                     "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
                     "dnsPolicy": "ClusterFirst", "securityContext": {},
                     "schedulerName": "default-scheduler", "enableServiceLinks": True}}},
                 id="podtemplate"),
]


@pytest.mark.parametrize(("resource", "body", "expected"), DEFAULTS)
async def test_defaults(registry: Registry, resource: str, body: dict[str, Any],
                        expected: dict[str, Any]) -> None:
    created = await create(registry, resource, body)
    assert {k: created[k] for k in expected} == expected


INVALID = [
    pytest.param("poddisruptionbudgets", {"spec": {"minAvailable": "120%"}},
                 "spec.minAvailable: Invalid value: \"120%\": must not be greater than 100%",
                 id="pdb-percent"),
    pytest.param("poddisruptionbudgets", {"spec": {"maxUnavailable": -1}},
                 "spec.maxUnavailable: Invalid value: -1: must be greater than or equal to 0",
                 id="pdb-negative"),
    pytest.param("ingresses", {"spec": {}},
                 "spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` "
                 "or `rules` must be specified", id="ingress-empty"),
    pytest.param("ingresses", {"spec": {"rules": [{"http": {"paths": [
        {"path": "/", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}},
                 "spec.rules[0].http.paths[0].pathType: Required value: pathType must be "
                 "specified", id="ingress-path-type"),
    pytest.param("storageclasses", {},
                 "provisioner: Required value", id="storageclass-provisioner"),
    pytest.param("roles", {"rules": [{"apiGroups": [""], "resources": ["pods"]}]},
                 "rules[0].verbs: Required value: verbs must contain at least one value",
                 id="role-verbs"),
    pytest.param("clusterrolebindings", {"roleRef": {"kind": "Role", "name": "r"}},
                 'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
                 id="clusterrolebinding-kind"),
    pytest.param("rolebindings", {"roleRef": {"kind": "Role", "name": "r"},
                                  "subjects": [{"kind": "Robot", "name": "r2"}]},
                 'subjects[0].kind: Unsupported value: "Robot": supported values: '
                 '"ServiceAccount", "User", "Group"', id="rolebinding-subject"),
    pytest.param("validatingwebhookconfigurations", {"webhooks": [{
        "name": "short.name", "admissionReviewVersions": ["v1"],
        "clientConfig": {"url": "https://x"}}]},
                 '[webhooks[0].name: Invalid value: "short.name": should be a domain with at '
                 'least three segments separated by dots, webhooks[0].sideEffects: Required '
                 'value: must specify one of None, NoneOnDryRun]', id="webhook"),
    pytest.param("priorityclasses", {"value": 2_000_000_000},
                 "value: Forbidden: maximum allowed value of a user defined priority is "
                 "1000000000", id="priorityclass-value"),
    pytest.param("runtimeclasses", {"handler": "Run_SC"},
                 'handler: Invalid value: "Run_SC": a lowercase RFC 1123 label must consist',
                 id="runtimeclass-handler"),
    pytest.param("endpointslices", {"addressType": "IPv5"},
                 'addressType: Unsupported value: "IPv5": supported values: "FQDN", "IPv4", '
                 '"IPv6"', id="endpointslice-address-type"),
    pytest.param("controllerrevisions", {"revision": 1},
                 "data: Required value: data is mandatory", id="controllerrevision-data"),
    pytest.param("certificatesigningrequests", {"spec": {
        "request": "bm90IGEgcmVxdWVzdA==", "signerName": "example.com/s",
        "usages": ["client auth"]}},
                 "spec.request: Invalid value: []byte{0x6e, 0x6f, 0x74",
                 id="csr-request"),
    pytest.param("volumeattachments", {"spec": {"attacher": "a", "nodeName": "n",
                                                "source": {}}},
                 "spec.source: Required value: must specify exactly one of inlineVolumeSpec and "
                 "persistentVolumeName", id="volumeattachment-source"),
    pytest.param("validatingadmissionpolicybindings", {"spec": {"policyName": "p"}},
                 "spec.validationActions: Required value: at least one validation action is "
                 "required", id="policy-binding-actions"),
]


@pytest.mark.parametrize(("resource", "body", "message"), INVALID)
async def test_invalid(registry: Registry, resource: str, body: dict[str, Any],
                       message: str) -> None:
    with pytest.raises(StatusError) as caught:
        await create(registry, resource, body)
    assert caught.value.code == 422
    assert message in caught.value.message


IMMUTABLE = [
    pytest.param("rolebindings", {"roleRef": {"kind": "Role", "name": "r"}},
                 {"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                              "name": "other"}},
                 'RoleBinding.rbac.authorization.k8s.io "x" is invalid: roleRef: Invalid value: '
                 'rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"Role", Name:"other"}: '
                 "cannot change roleRef", id="rolebinding-role-ref"),
    pytest.param("storageclasses", {"provisioner": "example.com/a",
                                    "parameters": {"type": "ssd"}},
                 {"provisioner": "example.com/b", "parameters": {"type": "hdd"}},
                 'StorageClass.storage.k8s.io "x" is invalid: [parameters: Forbidden: updates to '
                 "parameters are forbidden., provisioner: Forbidden: updates to provisioner are "
                 "forbidden.]", id="storageclass-provisioning"),
    pytest.param("priorityclasses", {"value": 10}, {"value": 20},
                 'PriorityClass.scheduling.k8s.io "x" is invalid: value: Forbidden: may not be '
                 "changed in an update.", id="priorityclass-value"),
]


@pytest.mark.parametrize(("resource", "body", "change", "message"), IMMUTABLE)
async def test_immutable_fields(registry: Registry, resource: str, body: dict[str, Any],
                                change: dict[str, Any], message: str) -> None:
    created = await create(registry, resource, body)
    created.update(change)
    with pytest.raises(StatusError) as caught:
        await update(registry, resource, created)
    assert caught.value.message == message


@pytest.mark.parametrize(("resource", "body", "change", "tracked"), [
    pytest.param("ingresses", {"spec": {"defaultBackend": {"resource": {
        "kind": "Bucket", "name": "b"}}}}, ("spec", {"defaultBackend": {"resource": {
            "kind": "Bucket", "name": "c"}}}), True, id="ingress"),
    pytest.param("validatingwebhookconfigurations", {}, ("webhooks", []), True,
                 id="webhooks"),
    pytest.param("podtemplates", {"template": {"spec": {"containers": [
        {"name": "c", "image": "a"}]}}}, ("template", {"spec": {"containers": [
            {"name": "c", "image": "b"}]}}), True, id="podtemplate"),
    pytest.param("storageclasses", {"provisioner": "example.com/a"},
                 ("allowVolumeExpansion", True), False, id="storageclass"),
])
async def test_generation(registry: Registry, resource: str, body: dict[str, Any],
                          change: tuple[str, Any], tracked: bool) -> None:
    created = await create(registry, resource, body)
    assert created["metadata"].get("generation") == (1 if tracked else None)
    created[change[0]] = change[1]
    updated = await update(registry, resource, created)
    assert updated["metadata"].get("generation") == (2 if tracked else None)


def test_every_new_kind_deletes_its_dependents_by_default(registry: Registry) -> None:
    """``DefaultGarbageCollectionPolicy``: only events (Unsupported), and the core
    ReplicationController and batch Job (OrphanDependents) differ from DeleteDependents."""
    for info in registry.catalog:
        expected = {("", "events"): GCPolicy.UNSUPPORTED,
                    ("events.k8s.io", "events"): GCPolicy.UNSUPPORTED,
                    ("", "replicationcontrollers"): GCPolicy.ORPHAN_DEPENDENTS,
                    ("batch", "jobs"): GCPolicy.ORPHAN_DEPENDENTS}.get(
            (info.group, info.resource), GCPolicy.DELETE_DEPENDENTS)
        strategy = registry.target(info.group, info.storage_version, info.resource).strategy
        assert strategy.default_gc_policy is expected, info.resource


def _csr_pem() -> str:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    csr = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(
        [x509.NameAttribute(NameOID.COMMON_NAME, "jane")])).sign(key, hashes.SHA256())
    return base64.b64encode(csr.public_bytes(serialization.Encoding.PEM)).decode()


async def test_a_signed_request_is_accepted_and_its_status_cleared(registry: Registry) -> None:
    created = await create(registry, "certificatesigningrequests", {
        "spec": {"request": _csr_pem(), "signerName": "kubernetes.io/kube-apiserver-client",
                 "usages": ["client auth"]},
        "status": {"certificate": "Zm9v"}})
    assert created["status"] == {}
    assert created["metadata"].get("generation") is None


async def test_strategic_merge_patch_merges_webhooks_by_name(registry: Registry) -> None:
    """``webhooks`` carries ``patchStrategy:"merge" patchMergeKey:"name"``: a patch naming
    one webhook changes that one and keeps the others, as kubectl apply relies on."""
    hook = {"sideEffects": "None", "admissionReviewVersions": ["v1"],
            "clientConfig": {"url": "https://example.com/x"}}
    await create(registry, "validatingwebhookconfigurations", {"webhooks": [
        {"name": "a.example.com", **hook}, {"name": "b.example.com", **hook}]})
    t = registry.target(GROUPS["validatingwebhookconfigurations"], "v1",
                        "validatingwebhookconfigurations")
    patched, _ = await registry.patch(
        t, "x", "application/strategic-merge-patch+json",
        b'{"webhooks":[{"name":"b.example.com","timeoutSeconds":3}]}')
    assert [(w["name"], w["timeoutSeconds"]) for w in patched["webhooks"]] == [
        ("a.example.com", 10), ("b.example.com", 3)]
