"""A corpus of objects kube-apiserver refuses, built by construction (issue 26): a valid
object of a built-in kind (``BASES``) with one field made invalid per upstream rule, each
case carrying the field path and the message upstream's validation gives, and the upstream
function (``pkg/apis/<group>/validation``, apimachinery's ``ValidateObjectMeta``...) that
refuses it.

No kube-apiserver runs here, so the expectations are upstream's rules as their code words
them, not answers recorded from a server. The messages are written here, not imported
from kubegc, so the corpus checks kubegc against upstream and not against itself.

Used by ``tests/e2e/test_invalid_corpus.py`` (every case against a real ``kubegc
serve``: 422, the path and message, nothing written) and by the fuzzer
(``tests/fuzz_requests.py``: ``bench/fuzz_http.py`` and ``tests/e2e/test_fuzz.py`` send
every case and count what is accepted).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Base:
    """A valid object of one kind: its collection (``{ns}``: the namespace), apiVersion,
    kind, and body without metadata."""

    path: str
    api_version: str
    kind: str
    body: dict[str, Any]


LABELS = {"app": "c"}
POD_SPEC: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox"}]}
TEMPLATE = {"metadata": {"labels": LABELS}, "spec": POD_SPEC}
JOB_POD = {"metadata": {"labels": LABELS}, "spec": {**POD_SPEC, "restartPolicy": "Never"}}
SELECTOR = {"matchLabels": LABELS}

BASES: dict[str, Base] = {
    "configmaps": Base("api/v1/namespaces/{ns}/configmaps", "v1", "ConfigMap",
                       {"data": {"a": "b"}}),
    "secrets": Base("api/v1/namespaces/{ns}/secrets", "v1", "Secret", {"data": {"a": "Yg=="}}),
    "pods": Base("api/v1/namespaces/{ns}/pods", "v1", "Pod", {"spec": POD_SPEC}),
    "services": Base("api/v1/namespaces/{ns}/services", "v1", "Service",
                     {"spec": {"selector": LABELS, "ports": [{"port": 80}]}}),
    "serviceaccounts": Base("api/v1/namespaces/{ns}/serviceaccounts", "v1", "ServiceAccount",
                            {}),
    "replicationcontrollers": Base(
        "api/v1/namespaces/{ns}/replicationcontrollers", "v1", "ReplicationController",
        {"spec": {"replicas": 0, "selector": LABELS, "template": TEMPLATE}}),
    "persistentvolumeclaims": Base(
        "api/v1/namespaces/{ns}/persistentvolumeclaims", "v1", "PersistentVolumeClaim",
        {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {
            "storage": "1Gi"}}}}),
    "persistentvolumes": Base(
        "api/v1/persistentvolumes", "v1", "PersistentVolume",
        {"spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                  "hostPath": {"path": "/tmp"}}}),
    "podtemplates": Base("api/v1/namespaces/{ns}/podtemplates", "v1", "PodTemplate",
                         {"template": TEMPLATE}),
    "limitranges": Base("api/v1/namespaces/{ns}/limitranges", "v1", "LimitRange",
                        {"spec": {"limits": [{"type": "Container"}]}}),
    "resourcequotas": Base("api/v1/namespaces/{ns}/resourcequotas", "v1", "ResourceQuota",
                           {"spec": {"hard": {"pods": "10"}}}),
    "endpoints": Base("api/v1/namespaces/{ns}/endpoints", "v1", "Endpoints",
                      {"subsets": [{"addresses": [{"ip": "10.0.0.1"}],
                                    "ports": [{"port": 80}]}]}),
    "nodes": Base("api/v1/nodes", "v1", "Node", {"spec": {"unschedulable": True}}),
    "namespaces": Base("api/v1/namespaces", "v1", "Namespace", {}),
    "events": Base("api/v1/namespaces/{ns}/events", "v1", "Event",
                   {"involvedObject": {"kind": "Pod", "name": "p"}, "reason": "R"}),
    "deployments": Base("apis/apps/v1/namespaces/{ns}/deployments", "apps/v1", "Deployment",
                        {"spec": {"replicas": 0, "selector": SELECTOR, "template": TEMPLATE}}),
    "replicasets": Base("apis/apps/v1/namespaces/{ns}/replicasets", "apps/v1", "ReplicaSet",
                        {"spec": {"replicas": 0, "selector": SELECTOR, "template": TEMPLATE}}),
    "statefulsets": Base("apis/apps/v1/namespaces/{ns}/statefulsets", "apps/v1", "StatefulSet",
                         {"spec": {"replicas": 0, "serviceName": "s", "selector": SELECTOR,
                                   "template": TEMPLATE}}),
    "daemonsets": Base("apis/apps/v1/namespaces/{ns}/daemonsets", "apps/v1", "DaemonSet",
                       {"spec": {"selector": SELECTOR, "template": TEMPLATE}}),
    "jobs": Base("apis/batch/v1/namespaces/{ns}/jobs", "batch/v1", "Job",
                 {"spec": {"suspend": True, "template": JOB_POD}}),
    "cronjobs": Base("apis/batch/v1/namespaces/{ns}/cronjobs", "batch/v1", "CronJob",
                     {"spec": {"schedule": "*/5 * * * *", "suspend": True,
                               "jobTemplate": {"spec": {"template": JOB_POD}}}}),
    "endpointslices": Base("apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices",
                           "discovery.k8s.io/v1", "EndpointSlice",
                           {"addressType": "IPv4", "endpoints": [{"addresses": ["10.0.0.1"]}],
                            "ports": [{"name": "http", "port": 80}]}),
    "leases": Base("apis/coordination.k8s.io/v1/namespaces/{ns}/leases",
                   "coordination.k8s.io/v1", "Lease",
                   {"spec": {"holderIdentity": "h", "leaseDurationSeconds": 15}}),
}
CLUSTER_SCOPED = frozenset(("persistentvolumes", "nodes", "namespaces"))


@dataclass(frozen=True)
class Invalid:
    """One invalid object: ``change`` merged into ``BASES[resource]`` (maps merge, other
    values replace); upstream refuses it with ``code`` and a cause ``field: text``."""

    id: str
    resource: str
    change: dict[str, Any]
    field: str
    text: str
    upstream: str
    code: int = 422
    #: a further part of the message, where the value between is not spelled here (a Go
    #: struct, a map)
    detail: str = ""

    def body(self, name: str) -> dict[str, Any]:
        base = BASES[self.resource]
        obj = {"apiVersion": base.api_version, "kind": base.kind,
               "metadata": {"name": name}, **copy.deepcopy(base.body)}
        return merged(obj, self.change)

    @property
    def expected(self) -> list[str]:
        """What the Status message must contain."""
        return [f"{self.field}: {self.text}", *([self.detail] if self.detail else [])]


def merged(base: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in change.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merged(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


# upstream's messages (apimachinery util/validation), cut after their first sentence
SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
             "characters, '-' or '.', and must start and end with an alphanumeric character")
LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
         "'-', and must start and end with an alphanumeric character")
DNS1035 = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
           "with an alphabetic character, and end with an alphanumeric character")
NAME_PART = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must "
             "start and end with an alphanumeric character")
#: ``IsQualifiedName`` of a key with two '/' (TestValidateLabels' ``nameErrMsg``)
QUALIFIED = ("a valid label key must consist of alphanumeric characters, '-', '_' or '.', and "
             "must start and end with an alphanumeric character")
LABEL_VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, "
               "'-', '_' or '.', and must start and end with an alphanumeric character")
PORT_NAME = "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"
PORT_RANGE = "must be between 1 and 65535, inclusive"
IP = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
IS_NEGATIVE = "must be greater than or equal to 0"
ENV_NAME = ("a valid environment variable name must consist only of printable ASCII "
            "characters other than '='")
CONFIG_KEY = ("a valid config key must consist of alphanumeric characters, '-', '_' or '.'")
SYSCTL = "must have at most 253 characters and match regex"
#: ``IsValidUserID`` / ``IsValidGroupID``
ID_RANGE = "must be between 0 and 2147483647, inclusive"


def q(value: str) -> str:
    """A string value as ``field.Error`` prints it (``%q``, for these ASCII values)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def bad(value: str, message: str) -> str:
    return f"Invalid value: {q(value)}: {message}"


LONG_NAME = "x" * 254
BAD_SUBDOMAINS = [("UPPER", SUBDOMAIN), ("-a", SUBDOMAIN), ("a-", SUBDOMAIN),
                  ("a_b", SUBDOMAIN), ("a..b", SUBDOMAIN), ("a b", SUBDOMAIN), (".a", SUBDOMAIN),
                  (LONG_NAME, "must be no more than 253 characters")]
BAD_LABELS = [("UPPER", LABEL), ("-a", LABEL), ("a_b", LABEL), ("a.b", LABEL),
              ("x" * 64, "must be no more than 63 characters")]
BAD_DNS1035 = [("1abc", DNS1035), ("UPPER", DNS1035), ("a.b", DNS1035), ("-a", DNS1035),
               ("x" * 64, "must be no more than 63 characters")]
BAD_KEYS = [("a b", NAME_PART), ("-a", NAME_PART), ("a/b/c", QUALIFIED),
            ("UPPER.com/a", "prefix part " + SUBDOMAIN),
            ("x" * 64, "name part must be no more than 63 characters"),
            ("/a", "prefix part must be non-empty")]
BAD_LABEL_VALUES = [("b c", LABEL_VALUE), ("-b", LABEL_VALUE),
                    ("x" * 64, "must be no more than 63 characters")]
BAD_ANNOTATION_KEYS = [("a b", NAME_PART), ("a/b/c", QUALIFIED),
                       ("x" * 64, "name part must be no more than 63 characters")]
#: the kinds named as DNS-1123 subdomains (``NameIsDNSSubdomain``); StatefulSets left out
SUBDOMAIN_NAMED = ["configmaps", "secrets", "pods", "serviceaccounts", "replicationcontrollers",
                   "persistentvolumeclaims", "persistentvolumes", "podtemplates", "limitranges",
                   "resourcequotas", "endpoints", "endpointslices", "nodes", "deployments",
                   "replicasets", "daemonsets", "jobs", "cronjobs", "leases"]
OWNER = {"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u1"}


def _object_meta() -> Iterator[Invalid]:
    """apimachinery ``ValidateObjectMeta`` (TestValidateObjectMetaNamespaces and its
    neighbours in api/validation/objectmeta_test.go), on every kind."""
    for kind in SUBDOMAIN_NAMED:
        for i, (name, msg) in enumerate(BAD_SUBDOMAINS):
            yield Invalid(f"{kind}-name-{i}", kind, {"metadata": {"name": name}},
                          "metadata.name", bad(name, msg), "NameIsDNSSubdomain")
    for i, (name, msg) in enumerate(BAD_LABELS):
        yield Invalid(f"namespaces-name-{i}", "namespaces", {"metadata": {"name": name}},
                      "metadata.name", bad(name, msg), "ValidateNamespaceName")
    for i, (name, msg) in enumerate(BAD_DNS1035):
        yield Invalid(f"services-name-{i}", "services", {"metadata": {"name": name}},
                      "metadata.name", bad(name, msg), "ValidateServiceName (NameIsDNS1035Label)")
    yield Invalid("cronjobs-name-53", "cronjobs", {"metadata": {"name": "x" * 53}},
                  "metadata.name", bad("x" * 53, "must be no more than 52 characters"),
                  "ValidateCronJobCreate")
    for kind in BASES:
        yield from _meta_maps(kind)


def _meta_maps(kind: str) -> Iterator[Invalid]:
    for i, (key, msg) in enumerate(BAD_KEYS):
        yield Invalid(f"{kind}-label-key-{i}", kind, {"metadata": {"labels": {key: "v"}}},
                      "metadata.labels", bad(key, msg), "ValidateLabels (ValidateLabelName)")
    for i, (value, msg) in enumerate(BAD_LABEL_VALUES):
        yield Invalid(f"{kind}-label-value-{i}", kind, {"metadata": {"labels": {"k": value}}},
                      "metadata.labels", bad(value, msg), "ValidateLabels (IsValidLabelValue)")
    for i, (key, msg) in enumerate(BAD_ANNOTATION_KEYS):
        yield Invalid(f"{kind}-annotation-key-{i}", kind,
                      {"metadata": {"annotations": {key: "v"}}}, "metadata.annotations",
                      bad(key, msg), "ValidateAnnotations")
    yield Invalid(f"{kind}-finalizer-standard", kind, {"metadata": {"finalizers": ["foo"]}},
                  "metadata.finalizers[0]", bad("foo", "name is neither a standard finalizer "
                                                "name nor is it fully qualified"),
                  "validateKubeFinalizerName")
    yield Invalid(f"{kind}-finalizer-qualified", kind,
                  {"metadata": {"finalizers": ["a b/c"]}}, "metadata.finalizers[0]",
                  bad("a b/c", "prefix part " + SUBDOMAIN), "ValidateFinalizerName")
    for key, upstream_key in (("uid", "uid"), ("name", "name"), ("kind", "kind"),
                              ("apiVersion", "version")):
        ref = {**OWNER, key: ""}
        yield Invalid(f"{kind}-owner-{key}", kind, {"metadata": {"ownerReferences": [ref]}},
                      f"metadata.ownerReferences.{key}",
                      f'Invalid value: "": {upstream_key} must not be empty',
                      "validateOwnerReference")
    two = [{**OWNER, "controller": True}, {**OWNER, "name": "p", "uid": "u2", "controller": True}]
    yield Invalid(f"{kind}-owner-two-controllers", kind,
                  {"metadata": {"ownerReferences": two}}, "metadata.ownerReferences",
                  "Invalid value: []v1.OwnerReference{", "ValidateOwnerReferences",
                  detail='Only one reference can have Controller set to true. Found "true" in '
                  "references for ConfigMap/o and ConfigMap/p")


#: where each kind keeps its pod spec
POD_SPEC_AT = {"pods": ("spec",), "podtemplates": ("template", "spec"),
               "replicationcontrollers": ("spec", "template", "spec"),
               "deployments": ("spec", "template", "spec"),
               "replicasets": ("spec", "template", "spec"),
               "statefulsets": ("spec", "template", "spec"),
               "daemonsets": ("spec", "template", "spec"),
               "jobs": ("spec", "template", "spec"),
               "cronjobs": ("spec", "jobTemplate", "spec", "template", "spec")}


def _container(**fields: Any) -> dict[str, Any]:
    return {"name": "c", "image": "busybox", **fields}


def _resources(**parts: Any) -> dict[str, Any]:
    return {"containers": [_container(resources=parts)]}


#: (id, change of the pod spec, field under the pod spec, text, upstream function[, code,
#: detail])
POD_SPEC_CASES: list[tuple[Any, ...]] = [
    ("container-name-upper", {"containers": [_container(name="UPPER")]},
     "containers[0].name", bad("UPPER", LABEL), "validateContainers"),
    ("container-name-empty", {"containers": [_container(name="")]},
     "containers[0].name", "Required value", "validateContainers"),
    ("container-name-duplicate", {"containers": [_container(), _container()]},
     "containers[1].name", 'Duplicate value: "c"', "validateContainers"),
    ("container-image-missing", {"containers": [{"name": "c"}]},
     "containers[0].image", "Required value", "validateContainers"),
    ("init-container-name", {"initContainers": [_container(name="I_C")]},
     "initContainers[0].name", bad("I_C", LABEL), "validateInitContainers"),
    ("pull-policy", {"containers": [_container(imagePullPolicy="Sometimes")]},
     "containers[0].imagePullPolicy", 'Unsupported value: "Sometimes": supported values: '
     '"Always", "IfNotPresent", "Never"', "validatePullPolicy"),
    ("termination-message-policy",
     {"containers": [_container(terminationMessagePolicy="Never")]},
     "containers[0].terminationMessagePolicy", 'Unsupported value: "Never"',
     "validateContainerCommon"),
    ("container-port-missing", {"containers": [_container(ports=[{"name": "p"}])]},
     "containers[0].ports[0].containerPort", "Required value", "validateContainerPorts"),
    ("container-port-range", {"containers": [_container(ports=[{"containerPort": 70000}])]},
     "containers[0].ports[0].containerPort", f"Invalid value: 70000: {PORT_RANGE}",
     "validateContainerPorts"),
    ("host-port-range", {"containers": [_container(ports=[{"containerPort": 80,
                                                           "hostPort": 70000}])]},
     "containers[0].ports[0].hostPort", f"Invalid value: 70000: {PORT_RANGE}",
     "validateContainerPorts"),
    ("port-protocol", {"containers": [_container(ports=[{"containerPort": 80,
                                                         "protocol": "XTP"}])]},
     "containers[0].ports[0].protocol", 'Unsupported value: "XTP": supported values: '
     '"SCTP", "TCP", "UDP"', "validateContainerPorts"),
    ("port-name", {"containers": [_container(ports=[{"containerPort": 80, "name": "P_1"}])]},
     "containers[0].ports[0].name", bad("P_1", PORT_NAME), "validateContainerPorts"),
    ("port-name-duplicate", {"containers": [_container(ports=[
        {"containerPort": 80, "name": "web"}, {"containerPort": 81, "name": "web"}])]},
     "containers[0].ports[1].name", 'Duplicate value: "web"', "validateContainerPorts"),
    ("env-name", {"containers": [_container(env=[{"name": "A=B"}])]},
     "containers[0].env[0].name", bad("A=B", ENV_NAME), "ValidateEnv"),
    ("env-name-missing", {"containers": [_container(env=[{"value": "v"}])]},
     "containers[0].env[0].name", "Required value", "ValidateEnv"),
    ("resource-name", _resources(limits={"a b": "1"}),
     "containers[0].resources.limits[a b]", bad("a b", NAME_PART), "validateResourceName"),
    ("resource-not-for-containers", _resources(requests={"pods": "1"}),
     "containers[0].resources.requests[pods]",
     bad("pods", "must be a standard resource for containers"),
     "validateContainerResourceName"),
    ("resource-negative", _resources(requests={"cpu": "-1"}),
     "containers[0].resources.requests[cpu]", bad("-1", IS_NEGATIVE),
     "ValidateNonnegativeQuantity"),
    ("resource-request-over-limit", _resources(limits={"cpu": "1"}, requests={"cpu": "2"}),
     "containers[0].resources.requests",
     bad("2", "must be less than or equal to cpu limit of 1"), "validateResourceRequirements"),
    ("extended-resource-fraction", _resources(limits={"example.com/gpu": "500m"},
                                               requests={"example.com/gpu": "500m"}),
     "containers[0].resources.limits[example.com/gpu]", "Invalid value: ",
     "ValidateResourceQuantityValue", 422, ": must be an integer"),
    ("extended-resource-no-limit", _resources(requests={"example.com/gpu": "1"}),
     "containers[0].resources.limits",
     "Required value: Limit must be set for non overcommitable resources",
     "validateResourceRequirements"),
    ("extended-resource-request-below-limit",
     _resources(limits={"example.com/gpu": "2"}, requests={"example.com/gpu": "1"}),
     "containers[0].resources.requests",
     bad("1", "must be equal to example.com/gpu limit of 2"), "validateResourceRequirements"),
    ("dns-policy", {"dnsPolicy": "Sometimes"}, "dnsPolicy",
     'Unsupported value: "Sometimes": supported values: "ClusterFirstWithHostNet", '
     '"ClusterFirst", "Default", "None"', "validateDNSPolicy"),
    ("node-selector-key", {"nodeSelector": {"a b": "x"}}, "nodeSelector",
     bad("a b", NAME_PART), "ValidateLabels"),
    ("node-selector-value", {"nodeSelector": {"a": "b c"}}, "nodeSelector",
     bad("b c", LABEL_VALUE), "ValidateLabels"),
    ("hostname", {"hostname": "Host"}, "hostname", bad("Host", LABEL), "ValidatePodSpec"),
    ("subdomain", {"subdomain": "a.b"}, "subdomain", bad("a.b", LABEL), "ValidatePodSpec"),
    ("node-name", {"nodeName": "Node_1"}, "nodeName", bad("Node_1", SUBDOMAIN),
     "ValidateNodeName"),
    ("service-account-name", {"serviceAccountName": "SA"}, "serviceAccountName",
     bad("SA", SUBDOMAIN), "ValidateServiceAccountName"),
    ("toleration-key", {"tolerations": [{"key": "a b", "operator": "Exists"}]},
     "tolerations[0].key", bad("a b", NAME_PART), "ValidateTolerations"),
    ("topology-key", {"topologySpreadConstraints": [{
        "maxSkew": 1, "topologyKey": "a b", "whenUnsatisfiable": "DoNotSchedule"}]},
     "topologySpreadConstraints[0].topologyKey", bad("a b", NAME_PART), "validateTopologyKey"),
    ("node-affinity-key", {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
            "matchExpressions": [{"key": "a b", "operator": "Exists"}]}]}}}},
     "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
     "[0].matchExpressions[0].key", bad("a b", NAME_PART), "ValidateNodeSelectorRequirement"),
    ("host-alias-ip", {"hostAliases": [{"ip": "not-an-ip", "hostnames": ["h"]}]},
     "hostAliases[0].ip", bad("not-an-ip", IP), "ValidateHostAliases"),
    ("host-alias-ip-empty", {"hostAliases": [{"hostnames": ["h"]}]},
     "hostAliases[0].ip", bad("", IP), "ValidateHostAliases"),
    ("host-alias-ip-octets", {"hostAliases": [{"ip": "1.2.3", "hostnames": ["h"]}]},
     "hostAliases[0].ip", bad("1.2.3", IP), "ValidateHostAliases"),
    ("host-alias-hostname", {"hostAliases": [{"ip": "10.0.0.1", "hostnames": ["Host_1"]}]},
     "hostAliases[0].hostnames[0]", bad("Host_1", SUBDOMAIN), "ValidateHostAliases"),
    ("sysctl-name", {"securityContext": {"sysctls": [{"name": "Kernel.Shm", "value": "1"}]}},
     "securityContext.sysctls[0].name", bad("Kernel.Shm", SYSCTL), "validateSysctls"),
    ("sysctl-name-dots", {"securityContext": {"sysctls": [{"name": "net..a", "value": "1"}]}},
     "securityContext.sysctls[0].name", bad("net..a", SYSCTL), "validateSysctls"),
    ("sysctl-name-missing", {"securityContext": {"sysctls": [{"value": "1"}]}},
     "securityContext.sysctls[0].name", "Required value", "validateSysctls"),
    ("sysctl-duplicate", {"securityContext": {"sysctls": [
        {"name": "kernel.shm_rmid_forced", "value": "1"},
        {"name": "kernel.shm_rmid_forced", "value": "0"}]}},
     "securityContext.sysctls[1].name", 'Duplicate value: "kernel.shm_rmid_forced"',
     "validateSysctls"),
    ("overhead-name", {"overhead": {"a b": "1"}}, "overhead.limits[a b]",
     bad("a b", NAME_PART), "validateOverhead"),
    ("overhead-negative", {"overhead": {"memory": "-1Mi"}}, "overhead.limits[memory]",
     bad("-1Mi", IS_NEGATIVE), "validateOverhead"),
    ("overhead-not-for-containers", {"overhead": {"pods": "1"}}, "overhead.limits[pods]",
     bad("pods", "must be a standard resource for containers"), "validateOverhead"),
    ("volume-mount-not-found", {"containers": [_container(volumeMounts=[
        {"name": "missing", "mountPath": "/m"}])]}, "containers[0].volumeMounts[0].name",
     'Not found: "missing"', "ValidateVolumeMounts"),
    ("volume-mount-path-missing", {"volumes": [{"name": "v", "emptyDir": {}}], "containers": [
        _container(volumeMounts=[{"name": "v"}])]}, "containers[0].volumeMounts[0].mountPath",
     "Required value", "ValidateVolumeMounts"),
    ("volume-mount-path-twice", {"volumes": [{"name": "v", "emptyDir": {}}], "containers": [
        _container(volumeMounts=[{"name": "v", "mountPath": "/m"},
                                 {"name": "v", "mountPath": "/m"}])]},
     "containers[0].volumeMounts[1].mountPath", bad("/m", "must be unique"),
     "ValidateVolumeMounts"),
    ("env-from-prefix", {"containers": [_container(envFrom=[
        {"prefix": "A=", "configMapRef": {"name": "cm"}}])]}, "containers[0].envFrom[0].prefix",
     bad("A=", ENV_NAME), "ValidateEnvFrom"),
    ("config-map-key-ref", {"containers": [_container(env=[{"name": "A", "valueFrom": {
        "configMapKeyRef": {"name": "cm", "key": "a b"}}}])]},
     "containers[0].env[0].valueFrom.configMapKeyRef.key", bad("a b", CONFIG_KEY),
     "validateConfigMapKeySelector"),
    ("secret-key-ref-no-key", {"containers": [_container(env=[{"name": "A", "valueFrom": {
        "secretKeyRef": {"name": "s"}}}])]}, "containers[0].env[0].valueFrom.secretKeyRef.key",
     "Required value", "validateSecretKeySelector"),
    ("priority-class-name", {"priorityClassName": "High_1"}, "priorityClassName",
     bad("High_1", SUBDOMAIN), "ValidatePriorityClassName"),
    ("runtime-class-name", {"runtimeClassName": "Run_1"}, "runtimeClassName",
     bad("Run_1", SUBDOMAIN), "ValidateRuntimeClassName"),
    ("readiness-gate", {"readinessGates": [{"conditionType": "a b"}]},
     "readinessGates[0].conditionType", bad("a b", NAME_PART), "validateReadinessGates"),
    ("scheduling-gate", {"schedulingGates": [{"name": "a b"}]}, "schedulingGates[0].name",
     bad("a b", NAME_PART), "validateSchedulingGates"),
    ("dns-none-without-config", {"dnsPolicy": "None"}, "dnsConfig",
     "Required value: must provide `dnsConfig` when `dnsPolicy` is None",
     "validatePodDNSConfig"),
    ("dns-nameserver", {"dnsConfig": {"nameservers": ["dns"]}}, "dnsConfig.nameservers[0]",
     bad("dns", IP), "validatePodDNSConfig"),
    ("dns-nameservers-four", {"dnsConfig": {"nameservers": [
        "1.1.1.1", "1.0.0.1", "8.8.8.8", "8.8.4.4"]}}, "dnsConfig.nameservers",
     'Invalid value: []string{"1.1.1.1", "1.0.0.1", "8.8.8.8", "8.8.4.4"}: must not have more '
     "than 3 nameservers", "validatePodDNSConfig"),
    ("probe-no-handler", {"containers": [_container(livenessProbe={"periodSeconds": 5})]},
     "containers[0].livenessProbe", "Required value: must specify a handler type",
     "validateHandler"),
    ("probe-two-handlers", {"containers": [_container(readinessProbe={
        "exec": {"command": ["true"]}, "tcpSocket": {"port": 80}})]},
     "containers[0].readinessProbe.tcpSocket",
     "Forbidden: may not specify more than 1 handler type", "validateHandler"),
    ("probe-exec-no-command", {"containers": [_container(startupProbe={"exec": {}})]},
     "containers[0].startupProbe.exec.command", "Required value", "validateExecAction"),
    ("probe-http-port-range", {"containers": [_container(livenessProbe={
        "httpGet": {"path": "/", "port": 70000}})]},
     "containers[0].livenessProbe.httpGet.port", f"Invalid value: 70000: {PORT_RANGE}",
     "ValidatePortNumOrName"),
    ("probe-http-port-missing", {"containers": [_container(livenessProbe={"httpGet": {}})]},
     "containers[0].livenessProbe.httpGet.port", f"Invalid value: 0: {PORT_RANGE}",
     "ValidatePortNumOrName"),
    ("probe-http-port-name", {"containers": [_container(readinessProbe={
        "httpGet": {"path": "/", "port": "Web_1"}})]},
     "containers[0].readinessProbe.httpGet.port", bad("Web_1", PORT_NAME),
     "ValidatePortNumOrName"),
    ("probe-http-scheme", {"containers": [_container(livenessProbe={
        "httpGet": {"port": 80, "scheme": "FTP"}})]},
     "containers[0].livenessProbe.httpGet.scheme",
     'Unsupported value: "FTP": supported values: "HTTP", "HTTPS"', "validateHTTPGetAction"),
    ("probe-http-header", {"containers": [_container(livenessProbe={"httpGet": {
        "port": 80, "httpHeaders": [{"name": "X Bad", "value": "v"}]}})]},
     "containers[0].livenessProbe.httpGet.httpHeaders",
     bad("X Bad", "a valid HTTP header must consist of alphanumeric characters or '-'"),
     "validateHTTPGetAction"),
    ("probe-tcp-port", {"containers": [_container(livenessProbe={"tcpSocket": {"port": 0}})]},
     "containers[0].livenessProbe.tcpSocket.port", f"Invalid value: 0: {PORT_RANGE}",
     "validateTCPSocketAction"),
    ("probe-grpc-port", {"containers": [_container(livenessProbe={"grpc": {"port": 70000}})]},
     "containers[0].livenessProbe.grpc.port", f"Invalid value: 70000: {PORT_RANGE}",
     "validateGRPCAction"),
    ("probe-period-negative", {"containers": [_container(readinessProbe={
        "tcpSocket": {"port": 80}, "periodSeconds": -1})]},
     "containers[0].readinessProbe.periodSeconds", f"Invalid value: -1: {IS_NEGATIVE}",
     "validateProbe"),
    ("probe-timeout-negative", {"containers": [_container(readinessProbe={
        "tcpSocket": {"port": 80}, "timeoutSeconds": -1})]},
     "containers[0].readinessProbe.timeoutSeconds", f"Invalid value: -1: {IS_NEGATIVE}",
     "validateProbe"),
    ("probe-failure-threshold-negative", {"containers": [_container(startupProbe={
        "tcpSocket": {"port": 80}, "failureThreshold": -3})]},
     "containers[0].startupProbe.failureThreshold", f"Invalid value: -3: {IS_NEGATIVE}",
     "validateProbe"),
    ("liveness-success-threshold", {"containers": [_container(livenessProbe={
        "tcpSocket": {"port": 80}, "successThreshold": 2})]},
     "containers[0].livenessProbe.successThreshold", "Invalid value: 2: must be 1",
     "validateLivenessProbe"),
    ("startup-success-threshold", {"containers": [_container(startupProbe={
        "tcpSocket": {"port": 80}, "successThreshold": 3})]},
     "containers[0].startupProbe.successThreshold", "Invalid value: 3: must be 1",
     "validateStartupProbe"),
    ("probe-termination-grace", {"containers": [_container(livenessProbe={
        "tcpSocket": {"port": 80}, "terminationGracePeriodSeconds": 0})]},
     "containers[0].livenessProbe.terminationGracePeriodSeconds",
     "Invalid value: 0: must be greater than 0", "validateProbe"),
    ("readiness-termination-grace", {"containers": [_container(readinessProbe={
        "tcpSocket": {"port": 80}, "terminationGracePeriodSeconds": 5})]},
     "containers[0].readinessProbe.terminationGracePeriodSeconds",
     "Invalid value: 5: must not be set for readinessProbes", "validateReadinessProbe"),
    ("init-container-probe", {"initContainers": [_container(name="i", readinessProbe={
        "tcpSocket": {"port": 80}})]}, "initContainers[0].readinessProbe",
     "Forbidden: may not be set for init containers without restartPolicy=Always",
     "validateInitContainers"),
    ("sidecar-probe", {"initContainers": [_container(name="i", restartPolicy="Always",
                                                     livenessProbe={"exec": {}})]},
     "initContainers[0].livenessProbe.exec.command", "Required value", "validateInitContainers"),
    ("lifecycle-no-handler", {"containers": [_container(lifecycle={"preStop": {}})]},
     "containers[0].lifecycle.preStop", "Required value: must specify a handler type",
     "validateLifecycle"),
    ("lifecycle-two-handlers", {"containers": [_container(lifecycle={"postStart": {
        "exec": {"command": ["true"]}, "sleep": {"seconds": 1}}})]},
     "containers[0].lifecycle.postStart.sleep",
     "Forbidden: may not specify more than 1 handler type", "validateHandler"),
    ("lifecycle-http-port", {"containers": [_container(lifecycle={"preStop": {
        "httpGet": {"port": "a--b"}}})]}, "containers[0].lifecycle.preStop.httpGet.port",
     'Invalid value: "a--b": must not contain consecutive hyphens', "ValidatePortNumOrName"),
    ("lifecycle-sleep-negative", {"containers": [_container(lifecycle={"preStop": {
        "sleep": {"seconds": -1}}})]}, "containers[0].lifecycle.preStop.sleep",
     "Invalid value: -1: must be non-negative and less than terminationGracePeriodSeconds "
     "(30)", "validateSleepAction"),
    ("lifecycle-sleep-over-grace", {"terminationGracePeriodSeconds": 10, "containers": [
        _container(lifecycle={"preStop": {"sleep": {"seconds": 11}}})]},
     "containers[0].lifecycle.preStop.sleep",
     "Invalid value: 11: must be non-negative and less than terminationGracePeriodSeconds "
     "(10)", "validateSleepAction"),
    ("init-container-lifecycle", {"initContainers": [_container(name="i", lifecycle={
        "preStop": {"exec": {"command": ["true"]}}})]}, "initContainers[0].lifecycle",
     "Forbidden: may not be set for init containers without restartPolicy=Always",
     "validateInitContainers"),
    ("sub-path-absolute", {"volumes": [{"name": "v", "emptyDir": {}}], "containers": [
        _container(volumeMounts=[{"name": "v", "mountPath": "/m", "subPath": "/etc"}])]},
     "containers[0].volumeMounts.subPath", bad("/etc", "must be a relative path"),
     "validateLocalDescendingPath"),
    ("sub-path-backstep", {"volumes": [{"name": "v", "emptyDir": {}}], "containers": [
        _container(volumeMounts=[{"name": "v", "mountPath": "/m", "subPath": "a/../.."}])]},
     "containers[0].volumeMounts.subPath", bad("a/../..", "must not contain '..'"),
     "validatePathNoBacksteps"),
    ("sub-path-expr-backstep", {"volumes": [{"name": "v", "emptyDir": {}}], "containers": [
        _container(volumeMounts=[{"name": "v", "mountPath": "/m",
                                  "subPathExpr": "../$(POD)"}])]},
     "containers[0].volumeMounts.subPathExpr", bad("../$(POD)", "must not contain '..'"),
     "validateLocalDescendingPath"),
    ("sub-path-and-expr", {"volumes": [{"name": "v", "emptyDir": {}}], "containers": [
        _container(volumeMounts=[{"name": "v", "mountPath": "/m", "subPath": "a",
                                  "subPathExpr": "$(POD)"}])]},
     "containers[0].volumeMounts[0].subPathExpr",
     bad("$(POD)", "subPathExpr and subPath are mutually exclusive"), "ValidateVolumeMounts"),
    ("pod-run-as-user", {"securityContext": {"runAsUser": -1}}, "securityContext.runAsUser",
     f"Invalid value: -1: {ID_RANGE}", "validatePodSpecSecurityContext"),
    ("pod-run-as-group", {"securityContext": {"runAsGroup": 2147483648}},
     "securityContext.runAsGroup", f"Invalid value: 2147483648: {ID_RANGE}",
     "validatePodSpecSecurityContext"),
    ("pod-fs-group", {"securityContext": {"fsGroup": -5}}, "securityContext.fsGroup",
     f"Invalid value: -5: {ID_RANGE}", "validatePodSpecSecurityContext"),
    ("pod-supplemental-group", {"securityContext": {"supplementalGroups": [1000, -1]}},
     "securityContext.supplementalGroups[1]", f"Invalid value: -1: {ID_RANGE}",
     "validatePodSpecSecurityContext"),
    ("pod-fs-group-change-policy", {"securityContext": {"fsGroupChangePolicy": "Sometimes"}},
     "securityContext.fsGroupChangePolicy", 'Unsupported value: "Sometimes": supported '
     'values: "Always", "OnRootMismatch"', "validateFSGroupChangePolicy"),
    ("share-process-namespace-host-pid", {"hostPID": True, "shareProcessNamespace": True},
     "securityContext.shareProcessNamespace",
     "Invalid value: true: ShareProcessNamespace and HostPID cannot both be enabled",
     "validatePodSpecSecurityContext"),
    ("pod-seccomp-type", {"securityContext": {"seccompProfile": {"type": "Strict"}}},
     "securityContext.seccompProfile.type", 'Unsupported value: "Strict": supported values: '
     '"Localhost", "RuntimeDefault", "Unconfined"', "validateSeccompProfileType"),
    ("pod-seccomp-no-type", {"securityContext": {"seccompProfile": {}}},
     "securityContext.seccompProfile.type",
     "Required value: type is required when seccompProfile is set",
     "validateSeccompProfileType"),
    ("container-run-as-user", {"containers": [_container(securityContext={"runAsUser": -1})]},
     "containers[0].securityContext.runAsUser", f"Invalid value: -1: {ID_RANGE}",
     "ValidateSecurityContext"),
    ("container-run-as-group", {"initContainers": [_container(name="i", securityContext={
        "runAsGroup": -2})]}, "initContainers[0].securityContext.runAsGroup",
     f"Invalid value: -2: {ID_RANGE}", "ValidateSecurityContext"),
    ("privileged-without-escalation", {"containers": [_container(securityContext={
        "privileged": True, "allowPrivilegeEscalation": False})]},
     "containers[0].securityContext", "Invalid value: ", "ValidateSecurityContext", 422,
     ": cannot set `allowPrivilegeEscalation` to false and `privileged` to true"),
    ("sys-admin-without-escalation", {"containers": [_container(securityContext={
        "allowPrivilegeEscalation": False, "capabilities": {"add": ["CAP_SYS_ADMIN"]}})]},
     "containers[0].securityContext", "Invalid value: ", "ValidateSecurityContext", 422,
     ": cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"),
    ("proc-mount", {"containers": [_container(securityContext={"procMount": "Masked"})]},
     "containers[0].securityContext.procMount",
     'Unsupported value: "Masked": supported values: "Default", "Unmasked"',
     "ValidateProcMountType"),
    ("proc-mount-unmasked-host-users", {"containers": [_container(securityContext={
        "procMount": "Unmasked"})]}, "containers[0].securityContext.procMount",
     'Invalid value: "Unmasked": `hostUsers` must be false to use `Unmasked`',
     "ValidateSecurityContext"),
    ("container-seccomp-localhost-path", {"containers": [_container(securityContext={
        "seccompProfile": {"type": "Localhost", "localhostProfile": "../p.json"}})]},
     "containers[0].securityContext.seccompProfile.localhostProfile",
     bad("../p.json", "must not contain '..'"), "validateSeccompProfileField"),
    ("container-seccomp-localhost-missing", {"containers": [_container(securityContext={
        "seccompProfile": {"type": "Localhost"}})]},
     "containers[0].securityContext.seccompProfile.localhostProfile",
     "Required value: must be set when seccomp type is Localhost",
     "validateSeccompProfileField"),
    ("volume-name", {"volumes": [{"name": "V_1", "emptyDir": {}}]}, "volumes[0].name",
     bad("V_1", LABEL), "ValidateVolumes"),
    ("volume-duplicate", {"volumes": [{"name": "v", "emptyDir": {}},
                                      {"name": "v", "emptyDir": {}}]},
     "volumes[1].name", 'Duplicate value: "v"', "ValidateVolumes"),
    ("volume-no-source", {"volumes": [{"name": "v"}]}, "volumes[0]",
     "Required value: must specify a volume type", "validateVolumeSource"),
]


def _at(keys: tuple[str, ...], value: dict[str, Any]) -> dict[str, Any]:
    for key in reversed(keys):
        value = {key: value}
    return value


def _pod_specs() -> Iterator[Invalid]:
    """``ValidatePodSpec`` and the functions it calls (TestValidatePodSpec,
    TestValidateContainers, TestValidatePorts, TestValidateEnv, TestValidateHostAliases...
    of pkg/apis/core/validation/validation_test.go), in every kind that holds a pod spec."""
    for kind, keys in POD_SPEC_AT.items():
        prefix = ".".join(keys)
        for case_id, change, path, text, upstream, *rest in POD_SPEC_CASES:
            yield Invalid(f"{kind}-{case_id}", kind, _at(keys, change), f"{prefix}.{path}",
                          text, upstream, *rest)


def _kinds() -> Iterator[Invalid]:
    """Rules of one kind each."""
    for case in KIND_CASES:
        yield Invalid(*case)


NODE_TAINT = {"key": "k", "value": "v", "effect": "NoSchedule"}

#: (id, resource, change, field, text, upstream function[, code, detail])
KIND_CASES: list[tuple[Any, ...]] = [
    ("configmap-key", "configmaps", {"data": {"a b": "x"}}, "data[a b]", bad("a b", CONFIG_KEY),
     "ValidateConfigMap (IsConfigMapKey)"),
    ("configmap-key-dotdot", "configmaps", {"data": {"..a": "x"}}, "data[..a]",
     bad("..a", "must not start with '..'"), "ValidateConfigMap (IsConfigMapKey)"),
    ("configmap-key-dot", "configmaps", {"data": {".": "x"}}, "data[.]",
     bad(".", "must not be '.'"), "ValidateConfigMap (IsConfigMapKey)"),
    ("configmap-key-dotdot-only", "configmaps", {"data": {"..": "x"}}, "data[..]",
     bad("..", "must not be '..'"), "ValidateConfigMap (IsConfigMapKey)"),
    ("configmap-key-long", "configmaps", {"data": {"k" * 254: "x"}}, f"data[{'k' * 254}]",
     bad("k" * 254, "must be no more than 253 characters"),
     "ValidateConfigMap (IsConfigMapKey)"),
    ("secret-key-dotdot", "secrets", {"data": {"..a": "eA=="}}, "data[..a]",
     bad("..a", "must not start with '..'"), "ValidateSecret (IsConfigMapKey)"),
    ("configmap-annotations-size", "configmaps", {"metadata": {"annotations": {
        "a": "x" * (256 * 1024)}}}, "metadata.annotations",
     "Too long: may not be more than 262144 bytes", "ValidateAnnotationsSize"),
    ("pod-annotations-size", "pods", {"metadata": {"annotations": {
        "a": "x" * (128 * 1024), "b": "y" * (128 * 1024)}}}, "metadata.annotations",
     "Too long: may not be more than 262144 bytes", "ValidateAnnotationsSize"),
    ("configmap-binary-key", "configmaps", {"binaryData": {"a/b": "eA=="}}, "binaryData[a/b]",
     bad("a/b", CONFIG_KEY), "ValidateConfigMap"),
    ("configmap-key-in-both", "configmaps", {"data": {"k": "x"}, "binaryData": {"k": "eA=="}},
     "data[k]", bad("k", "duplicate of key present in binaryData"), "ValidateConfigMap"),
    ("secret-key", "secrets", {"data": {"a b": "eA=="}}, "data[a b]", bad("a b", CONFIG_KEY),
     "ValidateSecret (IsConfigMapKey)"),
    ("secret-key-dot", "secrets", {"data": {".": "eA=="}}, "data[.]", bad(".", "must not be '.'"),
     "ValidateSecret (IsConfigMapKey)"),
    ("secret-tls-keys", "secrets", {"type": "kubernetes.io/tls"}, "data[tls.crt]",
     "Required value", "ValidateSecret"),
    ("secret-ssh-key", "secrets", {"type": "kubernetes.io/ssh-auth"}, "data[ssh-privatekey]",
     "Required value", "ValidateSecret"),
    ("secret-dockercfg", "secrets", {"type": "kubernetes.io/dockercfg"}, "data[.dockercfg]",
     "Required value", "ValidateSecret"),
    ("secret-basic-auth", "secrets", {"type": "kubernetes.io/basic-auth"}, "data[username]",
     "Required value", "ValidateSecret"),
    ("secret-sa-token", "secrets", {"type": "kubernetes.io/service-account-token"},
     "metadata.annotations[kubernetes.io/service-account.name]", "Required value",
     "ValidateSecret"),
    ("service-type", "services", {"spec": {"type": "Weird"}}, "spec.type",
     'Unsupported value: "Weird"', "ValidateService"),
    ("service-port-zero", "services", {"spec": {"ports": [{"port": 0}]}}, "spec.ports[0].port",
     f"Invalid value: 0: {PORT_RANGE}", "validateServicePort"),
    ("service-port-name-required", "services", {"spec": {"ports": [
        {"port": 80, "name": "a"}, {"port": 81}]}}, "spec.ports[1].name", "Required value",
     "validateServicePort"),
    ("service-port-name-duplicate", "services", {"spec": {"ports": [
        {"port": 80, "name": "a"}, {"port": 81, "name": "a"}]}}, "spec.ports[1].name",
     'Duplicate value: "a"', "validateServicePort"),
    ("service-selector-key", "services", {"spec": {"selector": {"a b": "c"}}},
     "spec.selector", bad("a b", NAME_PART), "ValidateService"),
    ("service-external-name", "services", {"spec": {"type": "ExternalName", "ports": []}},
     "spec.externalName", "Required value", "ValidateService"),
    ("service-external-name-upper", "services", {"spec": {
        "type": "ExternalName", "externalName": "DB.example.com."}}, "spec.externalName",
     bad("DB.example.com", SUBDOMAIN), "ValidateService (ValidateDNS1123Subdomain)"),
    ("service-external-ip", "services", {"spec": {"externalIPs": ["1.2.3.4.5"]}},
     "spec.externalIPs[0]", bad("1.2.3.4.5", IP), "ValidateService (IsValidIP)"),
    ("service-external-ip-loopback", "services", {"spec": {"externalIPs": ["127.0.0.1"]}},
     "spec.externalIPs[0]", bad("127.0.0.1", "may not be in the loopback range "
                                             "(127.0.0.0/8, ::1/128)"),
     "ValidateService (ValidateNonSpecialIP)"),
    ("service-external-ip-unspecified", "services", {"spec": {"externalIPs": ["::"]}},
     "spec.externalIPs[0]", bad("::", "may not be unspecified (::)"),
     "ValidateService (ValidateNonSpecialIP)"),
    ("service-session-affinity", "services", {"spec": {"sessionAffinity": "Sticky"}},
     "spec.sessionAffinity", 'Unsupported value: "Sticky"', "ValidateService"),
    ("pvc-access-modes", "persistentvolumeclaims", {"spec": {"accessModes": []}},
     "spec.accessModes", "Required value", "ValidatePersistentVolumeClaimSpec"),
    ("pvc-access-mode", "persistentvolumeclaims", {"spec": {"accessModes": ["ReadAlways"]}},
     "spec.accessModes", 'Unsupported value: "ReadAlways"',
     "ValidatePersistentVolumeClaimSpec"),
    ("pvc-rwop-with-others", "persistentvolumeclaims", {"spec": {"accessModes": [
        "ReadWriteOncePod", "ReadWriteOnce"]}}, "spec.accessModes",
     "Forbidden: may not use ReadWriteOncePod with other access modes",
     "ValidatePersistentVolumeClaimSpec"),
    ("pvc-storage-missing", "persistentvolumeclaims", {"spec": {"resources": {
        "requests": None}}}, "spec.resources[storage]", "Required value",
     "ValidatePersistentVolumeClaimSpec"),
    ("pvc-storage-zero", "persistentvolumeclaims", {"spec": {"resources": {"requests": {
        "storage": "0"}}}}, "spec.resources[storage]", bad("0", "must be greater than zero"),
     "ValidatePositiveQuantityValue"),
    ("pvc-storage-negative", "persistentvolumeclaims", {"spec": {"resources": {"requests": {
        "storage": "-1Gi"}}}}, "spec.resources[storage]", bad("-1Gi", "must be greater than "
                                                                "zero"),
     "ValidatePositiveQuantityValue"),
    ("pvc-storage-class", "persistentvolumeclaims", {"spec": {"storageClassName": "Fast_1"}},
     "spec.storageClassName", bad("Fast_1", SUBDOMAIN), "ValidateClassName"),
    ("pvc-volume-mode", "persistentvolumeclaims", {"spec": {"volumeMode": "Raw"}},
     "spec.volumeMode", 'Unsupported value: "Raw": supported values: "Block", "Filesystem"',
     "ValidatePersistentVolumeClaimSpec"),
    ("pv-reclaim-policy", "persistentvolumes", {"spec": {
        "persistentVolumeReclaimPolicy": "Keep"}}, "spec.persistentVolumeReclaimPolicy",
     'Unsupported value: "Keep"', "ValidatePersistentVolumeSpec"),
    ("pv-capacity-zero", "persistentvolumes", {"spec": {"capacity": {"storage": "0"}}},
     "spec.capacity[storage]", bad("0", "must be greater than zero"),
     "ValidatePersistentVolumeSpec (ValidatePositiveQuantityValue)"),
    ("pv-capacity-negative", "persistentvolumes", {"spec": {"capacity": {"storage": "-1Gi"}}},
     "spec.capacity[storage]", "Invalid value: -1073741824: must be a valid resource quantity",
     "validateBasicResource"),
    ("pv-capacity-cpu", "persistentvolumes", {"spec": {"capacity": {"cpu": "1"}}},
     "spec.capacity", "Unsupported value: ", "ValidatePersistentVolumeSpec", 422,
     'supported values: "storage"'),
    ("pv-access-mode", "persistentvolumes", {"spec": {"accessModes": ["ReadSometimes"]}},
     "spec.accessModes", 'Unsupported value: "ReadSometimes": supported values: '
     '"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
     "ValidatePersistentVolumeSpec"),
    ("pv-rwop-with-others", "persistentvolumes", {"spec": {"accessModes": [
        "ReadWriteOnce", "ReadWriteOncePod"]}}, "spec.accessModes",
     "Forbidden: may not use ReadWriteOncePod with other access modes",
     "ValidatePersistentVolumeSpec"),
    ("pv-storage-class", "persistentvolumes", {"spec": {"storageClassName": "Slow_1"}},
     "spec.storageClassName", bad("Slow_1", SUBDOMAIN), "ValidateClassName"),
    ("pv-host-path", "persistentvolumes", {"spec": {"hostPath": {"path": ""}}},
     "spec.hostPath.path", "Required value", "validateHostPathVolumeSource"),
    ("pv-volume-mode", "persistentvolumes", {"spec": {"volumeMode": "Raw"}}, "spec.volumeMode",
     'Unsupported value: "Raw": supported values: "Block", "Filesystem"',
     "ValidatePersistentVolumeSpec"),
    ("pv-no-source", "persistentvolumes", {"spec": {"hostPath": None}}, "spec",
     "Required value: must specify a volume type", "ValidatePersistentVolumeSpec"),
    ("rc-replicas", "replicationcontrollers", {"spec": {"replicas": -1}}, "spec.replicas",
     f"Invalid value: -1: {IS_NEGATIVE}", "ValidateReplicationControllerSpec"),
    ("rc-restart-policy", "replicationcontrollers", {"spec": {"template": {"spec": {
        "restartPolicy": "Never"}}}}, "spec.template.spec.restartPolicy",
     'Unsupported value: "Never": supported values: "Always"', "ValidatePodTemplateSpecForRC"),
    ("pod-restart-policy", "pods", {"spec": {"restartPolicy": "Sometimes"}},
     "spec.restartPolicy", 'Unsupported value: "Sometimes"', "validateRestartPolicy"),
    ("pod-active-deadline", "pods", {"spec": {"activeDeadlineSeconds": 0}},
     "spec.activeDeadlineSeconds", "Invalid value: 0: must be between 1 and 2147483647, "
     "inclusive", "ValidatePodSpec"),
    ("deployment-replicas", "deployments", {"spec": {"replicas": -1}}, "spec.replicas",
     f"Invalid value: -1: {IS_NEGATIVE}", "ValidateDeploymentSpec"),
    ("deployment-template-labels", "deployments", {"spec": {"template": {"metadata": {
        "labels": {"app": "other"}}}}}, "spec.template.metadata.labels",
     'Invalid value: map[string]string{"app":"other"}: `selector` does not match template '
     "`labels`", "ValidateDeploymentSpec"),
    ("deployment-strategy", "deployments", {"spec": {"strategy": {"type": "Rolling"}}},
     "spec.strategy", 'Unsupported value: "Rolling"', "ValidateDeploymentStrategy"),
    ("deployment-template-label-key", "deployments", {"spec": {"template": {"metadata": {
        "labels": {"a b": "c"}}}}}, "spec.template.metadata.labels", bad("a b", NAME_PART),
     "ValidatePodTemplateSpec"),
    ("replicaset-selector-empty", "replicasets", {"spec": {"selector": {"matchLabels": None}}},
     "spec.selector", "Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
     "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for "
     "deployment", "ValidateReplicaSetSpec"),
    ("statefulset-pod-management", "statefulsets", {"spec": {"podManagementPolicy": "Serial"}},
     "spec.podManagementPolicy", bad("Serial", "must be 'OrderedReady' or 'Parallel'"),
     "ValidateStatefulSetSpec"),
    ("daemonset-update-strategy", "daemonsets", {"spec": {"updateStrategy": {"type": "Now"}}},
     "spec.updateStrategy.type", 'Unsupported value: "Now"', "ValidateDaemonSetUpdateStrategy"),
    ("job-backoff", "jobs", {"spec": {"backoffLimit": -1}}, "spec.backoffLimit",
     f"Invalid value: -1: {IS_NEGATIVE}", "validateJobSpec"),
    ("job-restart-always", "jobs", {"spec": {"template": {"spec": {"restartPolicy": "Always"}}}},
     "spec.template.spec.restartPolicy", 'Unsupported value: "Always": supported values: '
     '"OnFailure", "Never"', "validatePodTemplateSpecForJob"),
    ("cronjob-schedule", "cronjobs", {"spec": {"schedule": "not a schedule"}}, "spec.schedule",
     'Invalid value: "not a schedule"', "validateScheduleFormat"),
    ("cronjob-concurrency", "cronjobs", {"spec": {"concurrencyPolicy": "Sometimes"}},
     "spec.concurrencyPolicy", 'Unsupported value: "Sometimes"', "ValidateCronJobSpec"),
    ("cronjob-time-zone", "cronjobs", {"spec": {"timeZone": "Mars/Base"}}, "spec.timeZone",
     'Invalid value: "Mars/Base": unknown time zone Mars/Base', "validateTimeZone"),
    ("lease-duration", "leases", {"spec": {"leaseDurationSeconds": 0}},
     "spec.leaseDurationSeconds", "Invalid value: 0: must be greater than 0",
     "ValidateLeaseSpec"),
    ("namespace-finalizer", "namespaces", {"spec": {"finalizers": ["foo"]}},
     "spec.finalizers[0]", bad("foo", "name is neither a standard finalizer name nor is it "
                                      "fully qualified"), "validateFinalizerName"),
    ("event-namespace", "events", {"involvedObject": {"namespace": "other"}},
     "involvedObject.namespace", bad("other", "does not match event.namespace"),
     "legacyValidateEvent"),
    ("limit-range-resource", "limitranges", {"spec": {"limits": [
        {"type": "Container", "max": {"foo": "1"}}]}}, "spec.limits[0].max[foo]",
     bad("foo", "must be a standard resource type or fully qualified"),
     "validateLimitRangeResourceName"),
    ("limit-range-type", "limitranges", {"spec": {"limits": [{"type": "Node"}]}},
     "spec.limits[0].type", bad("Node", "must be a standard limit type or fully qualified"),
     "validateLimitRangeTypeName"),
    ("limit-range-type-twice", "limitranges", {"spec": {"limits": [
        {"type": "Container"}, {"type": "Container"}]}}, "spec.limits[1].type",
     'Duplicate value: "Container"', "ValidateLimitRange"),
    ("limit-range-pod-default", "limitranges", {"spec": {"limits": [
        {"type": "Pod", "default": {"cpu": "1"}}]}}, "spec.limits[0].default",
     "Forbidden: may not be specified when `type` is 'Pod'", "ValidateLimitRange"),
    ("limit-range-claim-storage", "limitranges", {"spec": {"limits": [
        {"type": "PersistentVolumeClaim", "max": {"cpu": "1"}}]}}, "spec.limits[0].limits",
     "Required value: either minimum or maximum storage value is required, but neither was "
     "provided", "ValidateLimitRange"),
    ("limit-range-min-over-max", "limitranges", {"spec": {"limits": [
        {"type": "Pod", "min": {"cpu": "2"}, "max": {"cpu": "1"}}]}},
     "spec.limits[0].min[cpu]", "Invalid value: ", "ValidateLimitRange", 422,
     ": min value 2 is greater than max value 1"),
    ("limit-range-default-over-max", "limitranges", {"spec": {"limits": [
        {"type": "Container", "default": {"memory": "2Gi"}, "max": {"memory": "1Gi"}}]}},
     "spec.limits[0].default[memory]", "Invalid value: ", "ValidateLimitRange", 422,
     ": default value 2Gi is greater than max value 1Gi"),
    ("limit-range-ratio", "limitranges", {"spec": {"limits": [
        {"type": "Container", "maxLimitRequestRatio": {"cpu": "500m"}}]}},
     "spec.limits[0].maxLimitRequestRatio[cpu]", "Invalid value: ", "ValidateLimitRange", 422,
     ": ratio 500m is less than 1"),
    ("quota-resource", "resourcequotas", {"spec": {"hard": {"storage": "1Gi"}}},
     "spec.hard[storage]", bad("storage", "must be a standard resource for quota"),
     "ValidateResourceQuotaResourceName"),
    ("quota-negative", "resourcequotas", {"spec": {"hard": {"cpu": "-1"}}},
     "spec.hard[cpu]", bad("-1", IS_NEGATIVE), "ValidateResourceQuantityValue"),
    ("quota-pods-fraction", "resourcequotas", {"spec": {"hard": {"pods": "1500m"}}},
     "spec.hard[pods]", "Invalid value: ", "ValidateResourceQuantityValue", 422,
     ": must be an integer"),
    # Node: validateNodeTaints, under metadata as upstream's ValidateNode names them
    ("node-taint-key", "nodes", {"spec": {"taints": [{**NODE_TAINT, "key": "a b"}]}},
     "metadata.taints[0].key", bad("a b", NAME_PART), "validateNodeTaints"),
    ("node-taint-key-empty", "nodes", {"spec": {"taints": [{**NODE_TAINT, "key": ""}]}},
     "metadata.taints[0].key", 'Invalid value: ""', "validateNodeTaints (ValidateLabelName)"),
    ("node-taint-value", "nodes", {"spec": {"taints": [{**NODE_TAINT, "value": "v w"}]}},
     "metadata.taints[0].value", bad("v w", LABEL_VALUE), "validateNodeTaints"),
    ("node-taint-effect", "nodes", {"spec": {"taints": [{**NODE_TAINT, "effect": "Never"}]}},
     "metadata.taints[0].effect", 'Unsupported value: "Never": supported values: '
     '"NoSchedule", "PreferNoSchedule", "NoExecute"', "validateTaintEffect"),
    ("node-taint-effect-missing", "nodes", {"spec": {"taints": [{"key": "k"}]}},
     "metadata.taints[0].effect", "Required value", "validateTaintEffect"),
    ("node-taint-duplicate", "nodes", {"spec": {"taints": [NODE_TAINT, {**NODE_TAINT,
                                                                       "value": "w"}]}},
     "metadata.taints[1]", 'Duplicate value: core.Taint{Key:"k", Value:"w", '
     'Effect:"NoSchedule", TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and '
     "effect pair", "validateNodeTaints"),
    ("node-pod-cidr", "nodes", {"spec": {"podCIDRs": ["10.244.0.0/33"]}}, "spec.podCIDRs[0]",
     bad("10.244.0.0/33", "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"),
     "ValidateNode (IsValidCIDR)"),
    ("node-pod-cidr-not-cidr", "nodes", {"spec": {"podCIDRs": ["10.244.0.1"]}},
     "spec.podCIDRs[0]", bad("10.244.0.1", "must be a valid CIDR value, (e.g. 10.9.8.0/24 or "
                                           "2001:db8::/64)"), "ValidateNode (IsValidCIDR)"),
    ("node-pod-cidrs-one-family", "nodes", {"spec": {"podCIDRs": [
        "10.244.0.0/24", "10.245.0.0/24"]}}, "spec.podCIDRs",
     'Invalid value: []string{"10.244.0.0/24", "10.245.0.0/24"}: may specify no more than one '
     "CIDR for each IP family", "ValidateNode"),
    ("node-pod-cidrs-twice", "nodes", {"spec": {"podCIDRs": ["fd00::/64", "fd00::/64"]}},
     "spec.podCIDRs[1]", 'Duplicate value: "fd00::/64"', "ValidateNode"),
    ("node-capacity-negative", "nodes", {"status": {"capacity": {"cpu": "-1"}}},
     "status.capacity.cpu", bad("-1", IS_NEGATIVE), "ValidateNodeResources"),
    ("node-capacity-pods-fraction", "nodes", {"status": {"capacity": {"pods": "1.5"}}},
     "status.capacity.pods", "Invalid value: ", "ValidateNodeResources", 422,
     ": must be an integer"),
    ("node-allocatable-negative", "nodes", {"status": {"allocatable": {"memory": "-1Gi"}}},
     "status.allocatable.memory", bad("-1Gi", IS_NEGATIVE), "ValidateNodeResources"),
    ("node-allocatable-extended-fraction", "nodes", {"status": {"allocatable": {
        "example.com/gpu": "0.5"}}}, "status.allocatable.example.com/gpu",
     "Invalid value: ", "ValidateNodeResources", 422, ": must be an integer"),
    # Endpoints: validateEndpointSubsets, validateEndpointAddress, ValidateNonSpecialIP
    ("endpoints-no-addresses", "endpoints", {"subsets": [{"ports": [{"port": 80}]}]},
     "subsets[0]", "Required value: must specify `addresses` or `notReadyAddresses`",
     "validateEndpointSubsets"),
    ("endpoints-ip", "endpoints", {"subsets": [{"addresses": [{"ip": "nope"}]}]},
     "subsets[0].addresses[0].ip", bad("nope", IP), "validateEndpointAddress"),
    # a loopback address is allowed: README, "What kubegc does not simulate"
    ("endpoints-ip-unspecified", "endpoints", {"subsets": [{"addresses": [{"ip": "0.0.0.0"}]}]},
     "subsets[0].addresses[0].ip", bad("0.0.0.0", "may not be unspecified (0.0.0.0)"),
     "ValidateNonSpecialIP"),
    ("endpoints-ip-link-local", "endpoints", {"subsets": [{"addresses": [
        {"ip": "169.254.169.254"}]}]}, "subsets[0].addresses[0].ip",
     bad("169.254.169.254", "may not be in the link-local range (169.254.0.0/16, fe80::/10)"),
     "ValidateNonSpecialIP"),
    ("endpoints-ip-link-local-v6", "endpoints", {"subsets": [{"addresses": [
        {"ip": "fe80::1"}]}]}, "subsets[0].addresses[0].ip",
     bad("fe80::1", "may not be in the link-local range (169.254.0.0/16, fe80::/10)"),
     "ValidateNonSpecialIP"),
    ("endpoints-ip-link-local-multicast", "endpoints", {"subsets": [{"addresses": [
        {"ip": "224.0.0.1"}]}]}, "subsets[0].addresses[0].ip",
     bad("224.0.0.1", "may not be in the link-local multicast range (224.0.0.0/24, "
                      "ff02::/10)"), "ValidateNonSpecialIP"),
    ("endpoints-not-ready-ip", "endpoints", {"subsets": [{"notReadyAddresses": [
        {"ip": "10.0.0.256"}]}]}, "subsets[0].notReadyAddresses[0].ip", bad("10.0.0.256", IP),
     "validateEndpointAddress"),
    ("endpoints-hostname", "endpoints", {"subsets": [{"addresses": [
        {"ip": "10.0.0.1", "hostname": "Host"}]}]}, "subsets[0].addresses[0].hostname",
     bad("Host", LABEL), "validateEndpointAddress"),
    ("endpoints-node-name", "endpoints", {"subsets": [{"addresses": [
        {"ip": "10.0.0.1", "nodeName": "Node_1"}]}]}, "subsets[0].addresses[0].nodeName",
     bad("Node_1", SUBDOMAIN), "validateEndpointAddress (ValidateNodeName)"),
    ("endpoints-port-name", "endpoints", {"subsets": [{"addresses": [{"ip": "10.0.0.1"}],
                                                       "ports": [{"name": "A B", "port": 80}]}]},
     "subsets[0].ports[0].name", bad("A B", LABEL), "validateEndpointPort"),
    ("endpoints-port-name-required", "endpoints", {"subsets": [{
        "addresses": [{"ip": "10.0.0.1"}], "ports": [{"name": "a", "port": 80},
                                                      {"port": 81}]}]},
     "subsets[0].ports[1].name", "Required value", "validateEndpointPort"),
    ("endpoints-port-number", "endpoints", {"subsets": [{"addresses": [{"ip": "10.0.0.1"}],
                                                         "ports": [{"port": 0}]}]},
     "subsets[0].ports[0].port", f"Invalid value: 0: {PORT_RANGE}", "validateEndpointPort"),
    ("endpoints-port-protocol", "endpoints", {"subsets": [{
        "addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80, "protocol": "XTP"}]}]},
     "subsets[0].ports[0].protocol", 'Unsupported value: "XTP": supported values: "SCTP", '
     '"TCP", "UDP"', "validateEndpointPort"),
]

def _slice(**fields: Any) -> dict[str, Any]:
    """An EndpointSlice change: one endpoint with ``fields``."""
    return {"endpoints": [{"addresses": ["10.0.0.1"], **fields}]}


#: ValidateEndpointSlice (TestValidateEndpointSlice of pkg/apis/discovery/validation)
SLICE_CASES: list[tuple[Any, ...]] = [
    ("address-type", {"addressType": "IPv5"}, "addressType",
     'Unsupported value: "IPv5": supported values: "FQDN", "IPv4", "IPv6"',
     "validateAddressType"),
    ("no-addresses", {"endpoints": [{"addresses": []}]}, "endpoints[0].addresses",
     "Required value: must contain at least 1 address", "validateEndpoints"),
    ("ipv4-not-an-ip", _slice(addresses=["foo"]), "endpoints[0].addresses[0]",
     bad("foo", "must be a valid IPv4 address"), "validateEndpoints (IsValidIPv4Address)"),
    ("ipv4-given-ipv6", _slice(addresses=["2001:db8::1"]), "endpoints[0].addresses[0]",
     bad("2001:db8::1", "must be a valid IPv4 address"), "validateEndpoints"),
    ("ipv6-given-ipv4", {"addressType": "IPv6", **_slice(addresses=["10.0.0.1"])},
     "endpoints[0].addresses[0]", bad("10.0.0.1", "must be a valid IPv6 address"),
     "validateEndpoints (IsValidIPv6Address)"),
    ("ipv4-unspecified", _slice(addresses=["0.0.0.0"]), "endpoints[0].addresses[0]",
     bad("0.0.0.0", "may not be unspecified (0.0.0.0)"), "ValidateNonSpecialIP"),
    ("ipv4-link-local", _slice(addresses=["169.254.1.1"]), "endpoints[0].addresses[0]",
     bad("169.254.1.1", "may not be in the link-local range (169.254.0.0/16, fe80::/10)"),
     "ValidateNonSpecialIP"),
    ("ipv6-link-local", {"addressType": "IPv6", **_slice(addresses=["fe80::2"])},
     "endpoints[0].addresses[0]",
     bad("fe80::2", "may not be in the link-local range (169.254.0.0/16, fe80::/10)"),
     "ValidateNonSpecialIP"),
    ("ipv6-link-local-multicast", {"addressType": "IPv6", **_slice(addresses=["ff02::1"])},
     "endpoints[0].addresses[0]", bad("ff02::1", "may not be in the link-local multicast "
                                                 "range (224.0.0.0/24, ff02::/10)"),
     "ValidateNonSpecialIP"),
    ("fqdn-one-label", {"addressType": "FQDN", **_slice(addresses=["host"])},
     "endpoints[0].addresses[0]",
     bad("host", "should be a domain with at least two segments separated by dots"),
     "IsFullyQualifiedDomainName"),
    ("fqdn-upper", {"addressType": "FQDN", **_slice(addresses=["Host.example.com"])},
     "endpoints[0].addresses[0]", bad("Host.example.com", SUBDOMAIN),
     "IsFullyQualifiedDomainName"),
    ("node-name", _slice(nodeName="Node_1"), "endpoints[0].nodeName", bad("Node_1", SUBDOMAIN),
     "validateEndpoints (ValidateNodeName)"),
    ("hostname", _slice(hostname="a.b"), "endpoints[0].hostname", bad("a.b", LABEL),
     "validateEndpoints (ValidateDNS1123Label)"),
    ("topology-key", _slice(deprecatedTopology={"a b": "c"}), "endpoints[0].deprecatedTopology",
     bad("a b", NAME_PART), "validateEndpoints (ValidateLabels)"),
    ("port-name", {"ports": [{"name": "HTTP", "port": 80}]}, "ports[0].name",
     bad("HTTP", LABEL), "validatePorts"),
    ("port-name-duplicate", {"ports": [{"name": "http", "port": 80},
                                       {"name": "http", "port": 81}]},
     "ports[1].name", 'Duplicate value: "http"', "validatePorts"),
    ("port-protocol", {"ports": [{"name": "http", "port": 80, "protocol": "XTP"}]},
     "ports[0].protocol", 'Unsupported value: "XTP": supported values: "SCTP", "TCP", "UDP"',
     "validatePorts"),
    ("port-app-protocol", {"ports": [{"name": "http", "port": 80, "appProtocol": "a b"}]},
     "ports[0].appProtocol", bad("a b", NAME_PART), "validatePorts (ValidateQualifiedName)"),
]


def _slices() -> Iterator[Invalid]:
    for case_id, change, path, text, upstream in SLICE_CASES:
        yield Invalid(f"endpointslice-{case_id}", "endpointslices", change, path, text,
                      upstream)


CORPUS_SOURCES: list[Callable[[], Iterator[Invalid]]] = [_object_meta, _pod_specs, _kinds,
                                                          _slices]


def corpus() -> list[Invalid]:
    """Every case, in a stable order, ids unique."""
    cases = [case for source in CORPUS_SOURCES for case in source()]
    ids = [case.id for case in cases]
    if len(set(ids)) != len(ids):
        raise ValueError("corpus ids repeat")
    return cases


CORPUS = corpus()
