"""Generate ``src/kubegc/registry/openapi_data/schemas.json.gz`` from the official Python client.

Run once, by hand, when the resource catalog gains a built-in kind or the client is upgraded:

    PYTHONPATH=src python scripts/gen_openapi.py

The ``kubernetes`` client (37.0.2, pydantic models) carries each definition's field names
(``attribute_map``), types (``openapi_types``), required-ness and descriptions. This script
walks the models reachable from the built-in kinds kubegc serves (plus their lists, Status,
DeleteOptions and Scale), names each one as upstream does (``io.k8s.api.core.v1.Pod``) and
writes OpenAPI v3 component schemas with ``$ref: "#/components/schemas/<name>"``.

What the client does not carry and this script adds: the upstream definition package of each
model (inferred, see ``definition_name``), ``x-kubernetes-group-version-kind`` on kinds, the
strategic-merge-patch metadata of list fields (``PATCH_META``, checked against the struct tags
compiled into kubectl 1.32), and ``io.k8s.apimachinery.pkg.apis.meta.v1.Patch``. Field
descriptions of object-typed fields are not in the client and stay absent.

kubegc's own kinds (``kubegc.io/v1 DeletionRecord``) are not upstream's: their schemas are
written by hand here (``kubegc_definitions``), named as upstream names a custom resource's
(``io.kubegc.v1.DeletionRecord``), so that ``kubectl explain`` documents every field.

The server never imports the client; it reads the generated file (``kubegc.registry.definitions``).
"""

from __future__ import annotations

import gzip
import inspect
import json
import re
import sys
import types
import typing
from collections import deque
from pathlib import Path
from typing import Any

import kubernetes
import kubernetes.client.models as models

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from kubegc.component.deletions import DELETION_REASONS  # noqa: E402
from kubegc.registry import builtin_catalog  # noqa: E402

OUTPUT = ROOT / "src" / "kubegc" / "registry" / "openapi_data" / "schemas.json.gz"
REF_PREFIX = "#/components/schemas/"
META = "io.k8s.apimachinery.pkg.apis.meta.v1"

#: group → upstream definition package prefix (the version is appended).
GROUP_PACKAGES = {
    "": "io.k8s.api.core",
    "apps": "io.k8s.api.apps",
    "authentication.k8s.io": "io.k8s.api.authentication",
    "batch": "io.k8s.api.batch",
    "autoscaling": "io.k8s.api.autoscaling",
    "coordination.k8s.io": "io.k8s.api.coordination",
    "events.k8s.io": "io.k8s.api.events",
    "scheduling.k8s.io": "io.k8s.api.scheduling",
    "apiextensions.k8s.io": "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions",
    "admissionregistration.k8s.io": "io.k8s.api.admissionregistration",
    "apiregistration.k8s.io": "io.k8s.kube-aggregator.pkg.apis.apiregistration",
    "authorization.k8s.io": "io.k8s.api.authorization",
    "certificates.k8s.io": "io.k8s.api.certificates",
    "discovery.k8s.io": "io.k8s.api.discovery",
    "flowcontrol.apiserver.k8s.io": "io.k8s.api.flowcontrol",
    "networking.k8s.io": "io.k8s.api.networking",
    "node.k8s.io": "io.k8s.api.node",
    "policy": "io.k8s.api.policy",
    "rbac.authorization.k8s.io": "io.k8s.api.rbac",
    "storage.k8s.io": "io.k8s.api.storage",
}
#: The client prefixes a model with its group when two groups share a kind name.
CLIENT_GROUP_PREFIXES = {
    "Core": "", "Events": "events.k8s.io", "Apiextensions": "apiextensions.k8s.io",
    "Apps": "apps", "Authentication": "authentication.k8s.io",
    "Batch": "batch", "Admissionregistration": "admissionregistration.k8s.io",
    "Apiregistration": "apiregistration.k8s.io", "Discovery": "discovery.k8s.io",
    "Flowcontrol": "flowcontrol.apiserver.k8s.io", "Rbac": "rbac.authorization.k8s.io",
    "Storage": "storage.k8s.io",
}
#: Models that live in apimachinery's meta/v1 (the client gives them a bare ``V1`` prefix).
META_MODELS = {
    "Condition", "DeleteOptions", "LabelSelector", "LabelSelectorRequirement", "ListMeta",
    "ManagedFieldsEntry", "ObjectMeta", "OwnerReference", "Preconditions", "Status",
    "StatusCause", "StatusDetails",
}
AUTOSCALING_MODELS = {"Scale", "ScaleSpec", "ScaleStatus"}
EXTRA_ROOTS = ("V1Status", "V1DeleteOptions", "V1Scale")

#: (definition, json field) → (x-kubernetes-patch-strategy, x-kubernetes-patch-merge-key).
#: Mirrors the ``patchStrategy``/``patchMergeKey`` struct tags of k8s.io/api; every
#: (field, strategy, key) triple here appears in ``strings kubectl.1.32 | grep patchStrategy``.
_CORE = "io.k8s.api.core.v1."
_ADMISSION = "io.k8s.api.admissionregistration.v1."
_CONTAINER_LISTS = {
    "ports": ("merge", "containerPort"), "env": ("merge", "name"),
    "volumeMounts": ("merge", "mountPath"), "volumeDevices": ("merge", "devicePath"),
}
PATCH_META: dict[tuple[str, str], tuple[str, str]] = {
    (f"{META}.ObjectMeta", "finalizers"): ("merge", ""),
    (f"{META}.ObjectMeta", "ownerReferences"): ("merge", "uid"),
    **{(_CORE + "Container", f): v for f, v in _CONTAINER_LISTS.items()},
    **{(_CORE + "EphemeralContainer", f): v for f, v in _CONTAINER_LISTS.items()},
    (_CORE + "PodSpec", "volumes"): ("merge,retainKeys", "name"),
    (_CORE + "PodSpec", "initContainers"): ("merge", "name"),
    (_CORE + "PodSpec", "containers"): ("merge", "name"),
    (_CORE + "PodSpec", "ephemeralContainers"): ("merge", "name"),
    (_CORE + "PodSpec", "imagePullSecrets"): ("merge", "name"),
    (_CORE + "PodSpec", "hostAliases"): ("merge", "ip"),
    (_CORE + "PodSpec", "topologySpreadConstraints"): ("merge", "topologyKey"),
    (_CORE + "PodSpec", "resourceClaims"): ("merge,retainKeys", "name"),
    (_CORE + "PodSpec", "schedulingGates"): ("merge", "name"),
    (_CORE + "PodStatus", "conditions"): ("merge", "type"),
    (_CORE + "PodStatus", "podIPs"): ("merge", "ip"),
    (_CORE + "PodStatus", "hostIPs"): ("merge", "ip"),
    (_CORE + "PodStatus", "resourceClaimStatuses"): ("merge,retainKeys", "name"),
    (_CORE + "ContainerStatus", "allocatedResourcesStatus"): ("merge", "name"),
    (_CORE + "ServiceSpec", "ports"): ("merge", "port"),
    (_CORE + "ServiceStatus", "conditions"): ("merge", "type"),
    (_CORE + "ServiceAccount", "secrets"): ("merge", "name"),
    (_CORE + "NodeSpec", "podCIDRs"): ("merge", ""),
    (_CORE + "NodeStatus", "conditions"): ("merge", "type"),
    (_CORE + "NodeStatus", "addresses"): ("merge", "type"),
    (_CORE + "NamespaceStatus", "conditions"): ("merge", "type"),
    (_CORE + "PersistentVolumeClaimStatus", "conditions"): ("merge", "type"),
    (_CORE + "ReplicationControllerStatus", "conditions"): ("merge", "type"),
    ("io.k8s.api.apps.v1.DeploymentSpec", "strategy"): ("retainKeys", ""),
    ("io.k8s.api.apps.v1.DeploymentStatus", "conditions"): ("merge", "type"),
    ("io.k8s.api.apps.v1.ReplicaSetStatus", "conditions"): ("merge", "type"),
    ("io.k8s.api.apps.v1.StatefulSetStatus", "conditions"): ("merge", "type"),
    ("io.k8s.api.apps.v1.DaemonSetStatus", "conditions"): ("merge", "type"),
    ("io.k8s.api.batch.v1.JobStatus", "conditions"): ("merge", "type"),
    (_CORE + "ComponentStatus", "conditions"): ("merge", "type"),
    ("io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus", "conditions"): ("merge", "type"),
    ("io.k8s.api.policy.v1.PodDisruptionBudgetSpec", "selector"): ("replace", ""),
    ("io.k8s.api.policy.v1.PodDisruptionBudgetStatus", "conditions"): ("merge", "type"),
    ("io.k8s.api.storage.v1.CSINodeSpec", "drivers"): ("merge", "name"),
    ("io.k8s.api.flowcontrol.v1.FlowSchemaStatus", "conditions"): ("merge", "type"),
    ("io.k8s.api.networking.v1.ServiceCIDRStatus", "conditions"): ("merge", "type"),
    ("io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationStatus", "conditions"):
        ("merge", "type"),
    **{(f"{_ADMISSION}{kind}WebhookConfiguration", "webhooks"): ("merge", "name")
       for kind in ("Mutating", "Validating")},
    **{(f"{_ADMISSION}{kind}Webhook", "matchConditions"): ("merge", "name")
       for kind in ("Mutating", "Validating")},
    (_ADMISSION + "ValidatingAdmissionPolicySpec", "matchConditions"): ("merge", "name"),
    (_ADMISSION + "ValidatingAdmissionPolicySpec", "variables"): ("merge", "name"),
}
METADATA_DESCRIPTION = (
    "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#metadata"
)
LIST_METADATA_DESCRIPTION = (
    "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#types-kinds"
)

_NAME = re.compile(r"^([A-Z][a-z]+)?(V\d+(?:alpha\d+|beta\d+)?)([A-Z]\w*)$")
_MODEL_REF = re.compile(r"\b(?:[A-Z][a-z]+)?V\d+(?:alpha\d+|beta\d+)?[A-Z]\w*")


def model(name: str) -> Any:
    return getattr(models, name)


def referenced_models(name: str) -> list[str]:
    return [r for t in model(name).openapi_types.values() for r in _MODEL_REF.findall(t)]


def closure(roots: list[str]) -> list[str]:
    seen: dict[str, None] = {}
    queue = deque(roots)
    while queue:
        name = queue.popleft()
        if name not in seen:
            seen[name] = None
            queue.extend(referenced_models(name))
    return list(seen)


def class_for(group: str, version: str, kind: str) -> str | None:
    """The client's model class for a kind: ``V1Pod``, or ``CoreV1Event`` on a name clash;
    None for kinds the client does not know (kubegc.io's own)."""
    if group not in GROUP_PACKAGES:
        return None
    prefix = next((p for p, g in CLIENT_GROUP_PREFIXES.items() if g == group), "")
    for candidate in (f"{prefix}{version.capitalize()}{kind}", f"{version.capitalize()}{kind}"):
        if hasattr(models, candidate):
            return candidate
    raise SystemExit(f"no client model for {group}/{version} {kind}")


def api_module_groups(version: str) -> dict[str, list[str]]:
    """``{group_word: [response models]}`` of the client's ``<group>_<version>_api`` modules."""
    api_dir = Path(kubernetes.__file__).parent / "client" / "api"
    out: dict[str, list[str]] = {}
    for path in api_dir.glob(f"*_{version}_api.py"):
        word = path.name.removesuffix(f"_{version}_api.py").split("_")[0]
        names = re.findall(r"'20\d': \"(\w+)\"", path.read_text())
        out[word] = [n for n in names if hasattr(models, n)]
    return out


class Namer:
    """Maps client model names to upstream definition names (``io.k8s.api.core.v1.Pod``)."""

    def __init__(self, roots_by_group: dict[str, list[str]]) -> None:
        self._reach = {g: set(closure(r)) for g, r in roots_by_group.items()}
        # meta/v1 models only reference meta/v1 models (ListMeta → ShardInfo).
        self._meta = set(closure([f"V1{kind}" for kind in sorted(META_MODELS)]))
        self._names: dict[str, str] = {}

    def __call__(self, name: str) -> str:
        if name not in self._names:
            self._names[name] = self._name(name)
        return self._names[name]

    def _name(self, name: str) -> str:
        m = _NAME.match(name)
        if m is None:
            raise SystemExit(f"unexpected model name {name}")
        prefix, version, kind = m.group(1), m.group(2).lower(), m.group(3)
        if prefix is not None:
            return f"{GROUP_PACKAGES[CLIENT_GROUP_PREFIXES[prefix]]}.{version}.{kind}"
        if name in self._meta:
            return f"{META}.{kind}"
        if kind in AUTOSCALING_MODELS and version == "v1":
            return f"io.k8s.api.autoscaling.v1.{kind}"
        if version == "v1":
            if name in self._reach[""]:
                return f"io.k8s.api.core.v1.{kind}"
            groups = [g for g, reach in self._reach.items() if name in reach]
            if len(groups) != 1:
                raise SystemExit(f"cannot place {name}: reachable from {groups}")
            return f"{GROUP_PACKAGES[groups[0]]}.v1.{kind}"
        # A pre-release model referenced from a GA kind (batch/v1 Job → scheduling v1alpha3):
        # the group whose kinds reach it, or whose kind names prefix its name.
        modules = api_module_groups(version)
        for word, roots in modules.items():
            kinds = [r.removeprefix(m.group(2)) for r in roots]
            if name in closure(roots) or any(kind.startswith(k) for k in kinds if k):
                return f"io.k8s.api.{word}.{version}.{kind}"
        raise SystemExit(f"cannot place {name}")


def description(name: str) -> str:
    doc = inspect.cleandoc(model(name).__doc__ or "")
    return doc.split("Attributes:")[0].strip()


def _leaf_types(annotation: Any) -> set[Any]:
    """The plain types in an annotation: ``Optional[StrictInt | StrictStr]`` → {int, str, None}."""
    if typing.get_origin(annotation) is typing.Annotated:
        return _leaf_types(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return set().union(*(_leaf_types(a) for a in typing.get_args(annotation)))
    return {typing.get_origin(annotation) or annotation}


def _is_int_or_string(annotation: Any) -> bool:
    return _leaf_types(annotation) - {type(None)} == {int, str}


def type_schema(type_str: str, annotation: Any, namer: Namer) -> dict[str, Any]:
    if type_str.startswith("List["):
        return {"type": "array", "items": type_schema(type_str[5:-1], None, namer)}
    if type_str.startswith("Dict[str, "):
        return {"type": "object", "additionalProperties": type_schema(type_str[10:-1], None,
                                                                       namer)}
    simple: dict[str, dict[str, Any]] = {
        "str": {"type": "string"}, "int": {"type": "integer"}, "bool": {"type": "boolean"},
        "float": {"type": "number", "format": "double"},
        "datetime": {"type": "string", "format": "date-time"},
        "bytes": {"type": "string", "format": "byte"},
    }
    if type_str in simple:
        return dict(simple[type_str])
    if type_str == "object":
        if annotation is not None and _is_int_or_string(annotation):
            return {"type": "string", "format": "int-or-string", "x-kubernetes-int-or-string": True}
        return {"x-kubernetes-preserve-unknown-fields": True}
    return {"$ref": REF_PREFIX + namer(type_str)}


def model_field(cls: Any, attr: str) -> Any:
    """The pydantic field behind an ``openapi_types`` key (``_continue`` → ``var_continue``)."""
    json_name = cls.attribute_map[attr]
    for name, field in cls.model_fields.items():
        if (field.serialization_alias or name) == json_name:
            return field
    raise SystemExit(f"{cls.__name__}: no field for {attr}")


def property_schema(cls: Any, attr: str, namer: Namer) -> dict[str, Any]:
    field = model_field(cls, attr)
    schema = type_schema(cls.openapi_types[attr], field.annotation, namer)
    desc = field.description or ("" if attr != "metadata" else (
        LIST_METADATA_DESCRIPTION if cls.__name__.endswith("List") else METADATA_DESCRIPTION))
    if "$ref" in schema and desc:
        return {"allOf": [schema], "description": desc}
    if desc:
        schema["description"] = desc
    return schema


def model_schema(name: str, namer: Namer) -> dict[str, Any]:
    cls = model(name)
    properties = {
        cls.attribute_map[attr]: property_schema(cls, attr, namer) for attr in cls.openapi_types
    }
    required = sorted(
        cls.attribute_map[attr] for attr in cls.openapi_types
        if model_field(cls, attr).is_required()
    )
    schema: dict[str, Any] = {"type": "object", "description": description(name),
                              "properties": properties}
    if required:
        schema["required"] = required
    return schema


def add_patch_meta(definitions: dict[str, dict[str, Any]]) -> None:
    for (definition, field), (strategy, key) in PATCH_META.items():
        properties = definitions[definition]["properties"]
        prop = properties[field]  # KeyError: the table is stale
        if "$ref" in prop:  # OpenAPI 3.0 ignores siblings of $ref: wrap it
            prop = properties[field] = {"allOf": [prop]}
        prop["x-kubernetes-patch-strategy"] = strategy
        if key:
            prop["x-kubernetes-patch-merge-key"] = key


KUBEGC = "io.kubegc.v1."


def _string(description: str, *, enum: dict[str, str] | None = None,
            fmt: str = "") -> dict[str, Any]:
    """A string property; ``enum`` maps each value to what it means (listed in the
    description, as upstream's generated docs list enum values)."""
    out: dict[str, Any] = {"type": "string", "description": description}
    if enum:
        out["description"] += "\n\nPossible enum values:\n" + "\n".join(
            f" - `\"{value}\"` {meaning}" for value, meaning in enum.items())
        out["enum"] = list(enum)
    if fmt:
        out["format"] = fmt
    return out


_ACTIONS = {
    "delete": "the garbage collector deleted the object (with propagationPolicy)",
    "orphan-patch": "the garbage collector removed the object's reference to an owner being "
                    "deleted with propagation policy Orphan",
    "unblock-patch": "the garbage collector set blockOwnerDeletion=false on the object's owner "
                     "references, to unblock a possible ownership cycle",
    "remove-dangling-refs": "the garbage collector removed the object's references to absent "
                            "owners and to owners deleting in the foreground, because another "
                            "owner remains",
    "remove-finalizer": "the garbage collector removed its own finalizer (foregroundDeletion or "
                        "orphan) from the object",
    "evict": "the pod was deleted through its eviction subresource (pods/eviction), by the "
             "user the record names, as its disruption budget allowed",
}
_REASONS = {
    "OwnerAbsent": "every owner was verified absent (not found)",
    "OwnerRecreated": "an owner's name exists with a different uid: the owner was recreated",
    "OwnerInOtherNamespace": "an owner's uid belongs to an object in another namespace; in "
                             "the object's own namespace the owner does not exist",
    "OwnerWaitingForeground": "an owner is being deleted in the foreground and no other owner "
                              "remains",
    "SolidOwnerRemains": "dangling or waiting references were removed; a solid owner keeps the "
                         "object",
    "CycleUnblocking": "a dependent is itself deleting its dependents (possible cycle)",
    "OwnerDeletedWithOrphanPolicy": "the owner is deleted with propagation policy Orphan",
    "NoBlockingDependents": "no dependent with blockOwnerDeletion=true is left: "
                            "foregroundDeletion removed",
    "DependentsOrphaned": "every dependent was orphaned: the orphan finalizer removed",
    "EvictionByEvictionAPI": "an eviction (pods/eviction) deleted the pod",
    **DELETION_REASONS,
}
_CLASSIFICATIONS = {
    "solid": "the owner exists (and is not deleting in the foreground): it keeps the object",
    "dangling": "the owner does not exist (not found, other uid, or other namespace)",
    "waitingForDependentsDeletion": "the owner is being deleted in the foreground",
    "orphaned": "the owner being deleted with propagation policy Orphan, whose reference the "
                "patch removed",
}


def _owner_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "description": "One owner reference of the object, and what the garbage collector "
                       "concluded about it.",
        "properties": {
            "apiVersion": _string("API version of the owner, as in the owner reference."),
            "kind": _string("Kind of the owner, as in the owner reference."),
            "name": _string("Name of the owner, as in the owner reference."),
            "uid": _string("UID of the owner, as in the owner reference."),
            "classification": _string("How the garbage collector classified this owner.",
                                      enum=_CLASSIFICATIONS),
            "detail": _string(
                "How the classification was reached: NotFound (the owner's GET answered 404), "
                "UIDMismatch (the name exists with another uid), ObservedDeleted (the owner "
                "was seen deleted, possibly remembered in the absent-owner cache), "
                "OtherNamespace (the uid belongs to an object in another namespace), Exists "
                "or Foreground. Empty when not applicable."),
        },
        "required": ["apiVersion", "kind", "name", "uid", "classification"],
    }


def kubegc_definitions(definitions: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Hand-written schemas of kubegc's own kinds (fields of
    ``kubegc.controllers.deletionrecords.to_object``)."""
    standard = definitions[f"{META}.Status"]["properties"]
    record = {
        "type": "object",
        "description": (
            "DeletionRecord is kubegc's durable record of one action the garbage collector "
            "took on its own initiative: a deletion, an orphaning patch, a cycle-unblocking "
            "patch, the removal of dangling owner references or of one of its finalizers, "
            "with the reason and how each owner reference was classified; or of a deletion "
            "by pod GC or taint eviction, with the node, taint and toleration involved. "
            "Events about the "
            "same decisions expire after an hour; records are kept for --decision-ttl "
            "(default 7 days). Records are cluster-scoped so that they outlive the namespace "
            "of the object they explain. Written by kubegc's garbage collector, read by "
            "`kubegc why`; find the records about one object with `kubectl get "
            "deletionrecords -l kubegc.io/object-uid=<uid>`."),
        "properties": {
            "apiVersion": standard["apiVersion"],
            "kind": standard["kind"],
            "metadata": {"allOf": [{"$ref": f"{REF_PREFIX}{META}.ObjectMeta"}],
                         "description": (
                             "Standard object's metadata. The name is "
                             "<object uid>.<action>.<sequence>; the labels kubegc.io/object-uid, "
                             "kubegc.io/object-namespace, kubegc.io/object-kind, "
                             "kubegc.io/object-name, kubegc.io/action, kubegc.io/reason and "
                             "kubegc.io/deleter repeat the record's fields for label "
                             "selectors.")},
            "deleter": _string("The controller that acted, by its event source: "
                               "garbage-collector-controller, namespace-controller, "
                               "replicaset-controller, pod-garbage-collector, "
                               "taint-eviction-controller, ttl-after-finished-controller, "
                               "... (docs/deleters.md lists them)."),
            "node": _string("For pod GC and taint eviction: the node the decision was about "
                            "(deleted, out of service, or tainted)."),
            "taint": _string("For taint eviction: the node's NoExecute taint "
                             "(key=value:effect)."),
            "toleration": _string("For taint eviction: the pod's toleration of the taint "
                                  "whose tolerationSeconds ran out; absent when no "
                                  "toleration matched the taint."),
            "time": _string("When the garbage collector took the action (RFC 3339, UTC).",
                            fmt="date-time"),
            "action": _string("What the garbage collector did to the object.",
                              enum=_ACTIONS),
            "reason": _string("Why, as a machine-readable code (CamelCase, like an Event "
                              "reason).", enum=_REASONS),
            "message": _string("Why, in words, naming the owners involved."),
            "object": {
                "type": "object",
                "description": "The object the garbage collector acted on.",
                "properties": {
                    "apiVersion": _string("API version of the object."),
                    "kind": _string("Kind of the object."),
                    "namespace": _string("Namespace of the object; empty for a "
                                         "cluster-scoped object."),
                    "name": _string("Name of the object."),
                    "uid": _string("UID of the object: this incarnation, not a later object "
                                   "of the same name."),
                },
                "required": ["kind", "name", "uid"],
            },
            "owners": {
                "type": "array", "items": _owner_schema(),
                "description": "The object's owner references when the garbage collector "
                               "decided, each with its classification. Empty for "
                               "remove-finalizer.",
            },
            "user": _string("For action evict: the user who asked for the eviction."),
            "budget": {
                "type": "object",
                "description": "For action evict: the PodDisruptionBudget that allowed the "
                               "eviction, as the eviction left its status.",
                "properties": {
                    "name": _string("Name of the PodDisruptionBudget."),
                    **{k: {"type": "integer", "format": "int32", "description": d}
                       for k, d in (
                           ("disruptionsAllowed", "Disruptions still allowed."),
                           ("currentHealthy", "Healthy pods the budget counted."),
                           ("desiredHealthy", "Healthy pods the budget needs."),
                           ("expectedPods", "Pods the budget expects."))},
                },
            },
            "propagationPolicy": _string(
                "For action delete: the propagation policy of the garbage collector's DELETE "
                "(Orphan if the object already had the orphan finalizer; Foreground if it had "
                "foregroundDeletion, or if it has dependents of its own and its owner is being "
                "deleted in the foreground; else Background)."),
        },
        "required": ["action", "message", "object", "reason", "time"],
        "x-kubernetes-group-version-kind": [
            {"group": "kubegc.io", "kind": "DeletionRecord", "version": "v1"}],
    }
    record_list = {
        "type": "object",
        "description": "DeletionRecordList is a list of DeletionRecords.",
        "properties": {
            "apiVersion": standard["apiVersion"],
            "items": {"type": "array",
                      "items": {"$ref": f"{REF_PREFIX}{KUBEGC}DeletionRecord"},
                      "description": "List of deletion records."},
            "kind": standard["kind"],
            "metadata": {"allOf": [{"$ref": f"{REF_PREFIX}{META}.ListMeta"}],
                         "description": LIST_METADATA_DESCRIPTION},
        },
        "required": ["items"],
        "x-kubernetes-group-version-kind": [
            {"group": "kubegc.io", "kind": "DeletionRecordList", "version": "v1"}],
    }
    return {f"{KUBEGC}DeletionRecord": record, f"{KUBEGC}DeletionRecordList": record_list}


#: group-versions an older emulated version serves that the client (1.33) has no models
#: for, with the package of the same shape their definitions are copied from:
#: flowcontrol v1beta3 (served by default until 1.32, ``--emulated-version`` 1.30 and 1.31)
REMOVED_COPIES = {"io.k8s.api.flowcontrol.v1beta3.": "io.k8s.api.flowcontrol.v1."}


def removed_versions(definitions: dict[str, Any]) -> dict[str, Any]:
    """``REMOVED_COPIES``'s definitions: every type of the source package under the
    target's name, references and ``x-kubernetes-group-version-kind`` renamed likewise."""
    out: dict[str, Any] = {}
    for target, source in REMOVED_COPIES.items():
        version = target.rstrip(".").rpartition(".")[2]
        for name, schema in definitions.items():
            if not name.startswith(source) or "." in name.removeprefix(source):
                continue
            text = json.dumps(schema).replace(f"{REF_PREFIX}{source}", f"{REF_PREFIX}{target}")
            copy = json.loads(text)
            for gvk in copy.get("x-kubernetes-group-version-kind") or []:
                gvk["version"] = version
            out[target + name.removeprefix(source)] = copy
    return out


def generate() -> dict[str, Any]:
    roots_by_group: dict[str, list[str]] = {}
    kinds: dict[str, tuple[str, str, str]] = {}
    for info in builtin_catalog():
        kinds_of = (info.kind, info.list_kind_name) if info.supports("list") else (info.kind,)
        for version, kind in ((v, k) for v in info.versions for k in kinds_of):
            name = class_for(info.group, version, kind)
            if name is None:
                print(f"skipped {info.group}/{version} {kind}: not an upstream kind")
                continue
            roots_by_group.setdefault(info.group, []).append(name)
            kinds[name] = (info.group, version, kind)
        for sub in info.subresources:  # kinds of their own (serviceaccounts/token)
            group = info.group if sub.group is None else sub.group
            version = sub.version or info.storage_version
            if not sub.kind or group == "autoscaling" or (group, sub.kind) == ("", "Binding"):
                continue  # Scale is an extra root; Binding is the bindings resource's
            name = class_for(group, version, sub.kind)
            if name is not None:
                roots_by_group.setdefault(group, []).append(name)
                kinds[name] = (group, version, sub.kind)
    kinds.update({"V1Status": ("", "v1", "Status"), "V1Scale": ("autoscaling", "v1", "Scale")})
    namer = Namer(roots_by_group)
    all_roots = [n for roots in roots_by_group.values() for n in roots] + list(EXTRA_ROOTS)
    definitions = {namer(name): model_schema(name, namer) for name in closure(all_roots)}
    for name, (group, version, kind) in kinds.items():
        definitions[namer(name)]["x-kubernetes-group-version-kind"] = [
            {"group": group, "kind": kind, "version": version}
        ]
    definitions[f"{META}.Patch"] = {
        "type": "object",
        "description": "Patch is provided to give a concrete name and type to the Kubernetes "
                       "PATCH request body.",
    }
    add_patch_meta(definitions)
    definitions.update(removed_versions(definitions))
    definitions.update(kubegc_definitions(definitions))
    return {
        "source": f"kubernetes=={kubernetes.__version__} (official Python client models)",
        "definitions": dict(sorted(definitions.items())),
    }


def main() -> None:
    data = generate()
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    raw = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
    OUTPUT.write_bytes(gzip.compress(raw, compresslevel=9, mtime=0))
    print(f"{OUTPUT.relative_to(ROOT)}: {len(data['definitions'])} definitions, "
          f"{len(raw)} bytes, {OUTPUT.stat().st_size} compressed")


if __name__ == "__main__":
    main()
