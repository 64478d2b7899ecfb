"""Patch metadata of the built-in kinds: the ``patchStrategy`` / ``patchMergeKey`` struct tags.

Strategic merge patch (``strategic.py``) and server-side apply (``apply.py``) both need to
know, for a field of a built-in type, how a list is merged (by a key, as a set, or replaced
whole) and which type its values have. Upstream reads this from Go struct tags; here it is a
table of the types that carry such tags and the paths that lead to them. The tags come from
``k8s.io/api`` types.go (v0.32) and ``k8s.io/apimachinery`` meta/v1 types.go;
they match the ``x-kubernetes-patch-*`` extensions of the generated OpenAPI schemas.

A field missing from the table has no metadata: maps merge key by key, lists are replaced
whole (upstream's default for an untagged field). A type missing from the table has no
tagged fields. Unlike upstream, unknown fields are not an error.

Server-side apply additionally reads ``list_keys`` (``+listMapKey`` markers, when they differ
from the merge key), ``key_defaults`` (defaults of key fields, e.g. ``protocol: TCP``) and
``atomic`` (``+structType=atomic`` / ``+mapType=atomic``: owned as one value).

Everything here is immutable module data; readers share it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubegc.api.memo import Memo
from kubegc.api.resources import BUILTIN_RESOURCES

MERGE = "merge"
REPLACE = "replace"
RETAIN_KEYS = "retainKeys"


@dataclass(frozen=True, slots=True)
class FieldMeta:
    """What upstream's struct tags say about one field of one type."""

    strategy: str = ""  # the patchStrategy tag: "", "merge", "replace", "retainKeys", ...
    merge_key: str = ""  # the patchMergeKey tag
    type: str = ""  # schema type of the value (of the elements, for a list); "" = unknown
    list_keys: tuple[str, ...] = ()  # SSA list-map keys, when not just (merge_key,)
    key_defaults: tuple[tuple[str, Any], ...] = ()  # SSA defaults of key fields
    atomic: bool = False  # SSA: the whole value is one owned field

    @property
    def strategies(self) -> tuple[str, ...]:
        return _split_strategies(self.strategy)

    @property
    def associative_keys(self) -> tuple[str, ...]:
        """Keys identifying the items of a merged list of maps; () when not keyed."""
        if MERGE not in self.strategies or not self.merge_key:
            return ()
        return self.list_keys or (self.merge_key,)


NO_META = FieldMeta()
_NO_FIELDS: Mapping[str, FieldMeta] = {}


@functools.cache
def _split_strategies(strategy: str) -> tuple[str, ...]:
    return tuple(s for s in strategy.split(",") if s)


class PatchSchema:
    """A table ``type name → field name → FieldMeta`` plus the root type of each kind."""

    def __init__(
        self,
        types: Mapping[str, Mapping[str, FieldMeta]],
        kinds: Mapping[tuple[str, str], str] | None = None,
    ) -> None:
        self._types = types
        self._kinds = kinds or {}
        #: results computed against this schema, by the JSON of their input
        #: (``created_fields``); the only mutable part of a schema.
        self.memo = Memo()

    def fields(self, type_name: str) -> Mapping[str, FieldMeta]:
        """Every field of ``type_name`` that has metadata (empty for an unknown type)."""
        return self._types.get(type_name, _NO_FIELDS)

    def field(self, type_name: str, name: str) -> FieldMeta:
        """Metadata of ``name`` in ``type_name``; ``NO_META`` when nothing is known."""
        return self._types.get(type_name, {}).get(name, NO_META)

    def root(self, group: str, kind: str) -> str | None:
        """The type of a whole object of this kind, or None for an unknown kind."""
        return self._kinds.get((group, kind))


def _merge(merge_key: str, type_name: str, *, strategy: str = MERGE, **ssa: Any) -> FieldMeta:
    return FieldMeta(strategy=strategy, merge_key=merge_key, type=type_name, **ssa)


def _t(type_name: str, **ssa: Any) -> FieldMeta:
    """A field without patch tags whose type leads to tagged fields."""
    return FieldMeta(type=type_name, **ssa)


_ATOMIC = FieldMeta(atomic=True)  # LabelSelector (+structType=atomic), +mapType=atomic maps
_CONDITIONS = _merge("type", "Condition")
_TCP = (("protocol", "TCP"),)

_CONTAINER: dict[str, FieldMeta] = {
    "ports": _merge("containerPort", "ContainerPort",
                    list_keys=("containerPort", "protocol"), key_defaults=_TCP),
    "env": _merge("name", "EnvVar"),
    "volumeMounts": _merge("mountPath", "VolumeMount"),
    "volumeDevices": _merge("devicePath", "VolumeDevice"),
}

_TYPES: dict[str, dict[str, FieldMeta]] = {
    "ObjectMeta": {
        "ownerReferences": _merge("uid", "OwnerReference"),
        "finalizers": FieldMeta(strategy=MERGE),
    },
    "PodSpec": {
        "volumes": _merge("name", "Volume", strategy="merge,retainKeys"),
        "initContainers": _merge("name", "Container"),
        "containers": _merge("name", "Container"),
        "ephemeralContainers": _merge("name", "EphemeralContainer"),
        "imagePullSecrets": _merge("name", "LocalObjectReference"),
        "hostAliases": _merge("ip", "HostAlias"),
        "topologySpreadConstraints": _merge(
            "topologyKey", "TopologySpreadConstraint",
            list_keys=("topologyKey", "whenUnsatisfiable")),
        "schedulingGates": _merge("name", "PodSchedulingGate"),
        "resourceClaims": _merge("name", "PodResourceClaim", strategy="merge,retainKeys"),
    },
    "Volume": {"ephemeral": _t("EphemeralVolumeSource")},
    "EphemeralVolumeSource": {"volumeClaimTemplate": _t("PersistentVolumeClaimTemplate")},
    "PersistentVolumeClaimTemplate": {"metadata": _t("ObjectMeta")},
    "Container": _CONTAINER,
    "EphemeralContainer": _CONTAINER,
    "PodStatus": {
        "conditions": _CONDITIONS,
        "podIPs": _merge("ip", "PodIP"),
        "hostIPs": _merge("ip", "HostIP"),
        "resourceClaimStatuses": _merge("name", "PodResourceClaimStatus",
                                        strategy="merge,retainKeys"),
    },
    "PodTemplateSpec": {"metadata": _t("ObjectMeta"), "spec": _t("PodSpec")},
    "ServiceSpec": {
        "ports": _merge("port", "ServicePort", list_keys=("port", "protocol"),
                        key_defaults=_TCP),
        "selector": _ATOMIC,
    },
    "ServiceStatus": {"conditions": _CONDITIONS},
    "NodeSpec": {"podCIDRs": FieldMeta(strategy=MERGE)},
    "NodeStatus": {"conditions": _CONDITIONS, "addresses": _merge("type", "NodeAddress")},
    "StatusWithConditions": {"conditions": _CONDITIONS},
    "ReplicationControllerSpec": {"selector": _ATOMIC, "template": _t("PodTemplateSpec")},
    "DeploymentSpec": {
        "selector": _ATOMIC,
        "template": _t("PodTemplateSpec"),
        "strategy": FieldMeta(strategy=RETAIN_KEYS, type="DeploymentStrategy"),
    },
    "WorkloadSpec": {"selector": _ATOMIC, "template": _t("PodTemplateSpec")},
    "CronJobSpec": {"jobTemplate": _t("JobTemplateSpec")},
    "JobTemplateSpec": {"metadata": _t("ObjectMeta"), "spec": _t("WorkloadSpec")},
    "PodDisruptionBudgetSpec": {"selector": FieldMeta(strategy=REPLACE, atomic=True)},
    "CSINodeSpec": {"drivers": _merge("name", "CSINodeDriver")},
    "Webhook": {"matchConditions": _merge("name", "MatchCondition")},
    "ValidatingAdmissionPolicySpec": {"matchConditions": _merge("name", "MatchCondition"),
                                      "variables": _merge("name", "Variable")},
}


def _kind(spec: str = "", status: str = "", **extra: FieldMeta) -> dict[str, FieldMeta]:
    fields = {"metadata": _t("ObjectMeta"), **extra}
    if spec:
        fields["spec"] = _t(spec)
    if status:
        fields["status"] = _t(status)
    return fields


# Root type of each built-in kind. Kinds whose only tagged fields are in ObjectMeta share
# "Object"; statuses whose only tagged list is ``conditions`` share "StatusWithConditions";
# specs whose tagged fields are ``selector`` and ``template`` share "WorkloadSpec".
_ROOTS: dict[str, dict[str, FieldMeta]] = {
    "Object": _kind(),
    "Pod": _kind("PodSpec", "PodStatus"),
    "Service": _kind("ServiceSpec", "ServiceStatus"),
    "Node": _kind("NodeSpec", "NodeStatus"),
    "ConditionedObject": _kind(status="StatusWithConditions"),
    "ServiceAccount": _kind(secrets=_merge("name", "ObjectReference")),
    "ReplicationController": _kind("ReplicationControllerSpec", "StatusWithConditions"),
    "Deployment": _kind("DeploymentSpec", "StatusWithConditions"),
    "Workload": _kind("WorkloadSpec", "StatusWithConditions"),
    "CronJob": _kind("CronJobSpec"),
    "PodTemplate": _kind(template=_t("PodTemplateSpec")),
    "ComponentStatus": _kind(conditions=_merge("type", "ComponentCondition")),
    "PodDisruptionBudget": _kind("PodDisruptionBudgetSpec", "StatusWithConditions"),
    "CSINode": _kind("CSINodeSpec"),
    "WebhookConfiguration": _kind(webhooks=_merge("name", "Webhook")),
    "ValidatingAdmissionPolicy": _kind("ValidatingAdmissionPolicySpec"),
}

_KINDS: dict[tuple[str, str], str] = {
    ("", "Pod"): "Pod",
    ("", "Service"): "Service",
    ("", "Node"): "Node",
    ("", "Namespace"): "ConditionedObject",
    ("", "PersistentVolumeClaim"): "ConditionedObject",
    ("", "ServiceAccount"): "ServiceAccount",
    ("", "ReplicationController"): "ReplicationController",
    ("", "PodTemplate"): "PodTemplate",
    ("", "ComponentStatus"): "ComponentStatus",
    ("policy", "PodDisruptionBudget"): "PodDisruptionBudget",
    ("storage.k8s.io", "CSINode"): "CSINode",
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): "WebhookConfiguration",
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): "WebhookConfiguration",
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): "ValidatingAdmissionPolicy",
    ("autoscaling", "HorizontalPodAutoscaler"): "ConditionedObject",
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"): "ConditionedObject",
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"): "ConditionedObject",
    ("networking.k8s.io", "ServiceCIDR"): "ConditionedObject",
    ("apps", "Deployment"): "Deployment",
    ("apps", "ReplicaSet"): "Workload",
    ("apps", "StatefulSet"): "Workload",
    ("apps", "DaemonSet"): "Workload",
    ("batch", "Job"): "Workload",
    ("batch", "CronJob"): "CronJob",
    **{key: "Object" for key in (
        ("", "Endpoints"), ("", "ConfigMap"), ("", "Secret"), ("", "Event"),
        ("", "PersistentVolume"), ("", "LimitRange"), ("", "ResourceQuota"),
        ("coordination.k8s.io", "Lease"), ("events.k8s.io", "Event"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"), ("autoscaling", "Scale"),
        ("networking.k8s.io", "Ingress"),
        ("rbac.authorization.k8s.io", "Role"), ("rbac.authorization.k8s.io", "RoleBinding"),
        ("rbac.authorization.k8s.io", "ClusterRole"),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    )},
}

# Every other built-in kind kubegc serves has tagged fields in ObjectMeta only.
_KINDS.update({(info.group, info.kind): "Object" for info in BUILTIN_RESOURCES
               if (info.group, info.kind) not in _KINDS})

#: The built-in patch metadata (every kind in ``BUILTIN_RESOURCES``, and a few more).
BUILTIN_SCHEMA = PatchSchema({**_TYPES, **_ROOTS}, _KINDS)


def has_strategic_schema(group: str, kind: str) -> bool:
    """True when ``group``/``kind`` is a built-in kind: strategic merge patch is accepted.

    Custom resources have no Go struct tags, so the API server answers 415 for
    ``application/strategic-merge-patch+json`` on them.
    """
    return BUILTIN_SCHEMA.root(group, kind) is not None
