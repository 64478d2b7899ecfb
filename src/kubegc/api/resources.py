"""The resource catalog: which resources exist, their kinds, scope and discovery data.

``Catalog`` is the shared RESTMapper of kubegc: the registry serves what it lists, the
server builds discovery from it, and clients map ``apiVersion``/``kind`` to resources
with it. The registry fills it from its storages (the verbs and subresources a resource
has are what its storage implements, ``kubegc.registry.generic.rest``); custom resources
are added and removed at runtime when CustomResourceDefinitions are established or
deleted.

``BUILTIN_RESOURCES`` is vocabulary: the names of the built-in resources kubegc serves as a
v1.33 cluster's discovery names them (group, versions, plural, kind, scope, short names,
categories), for whoever must map kinds to resources without a server (a dump, a plan);
it says nothing of verbs (see ``kubegc.registry.builtin_catalog`` for the served ones), nor
of the emulated versions that serve each (``kubegc.api.lifecycle``).

Ownership: the registry's CRD handling is the only writer after start-up; every other
component reads. Readers get immutable ``ResourceInfo`` values.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True, slots=True, order=True)
class GroupVersionResource:
    group: str
    version: str
    resource: str

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return f"{self.resource}.{self.version}.{self.group}" if self.group else (
            f"{self.resource}.{self.version}"
        )


@dataclass(frozen=True, slots=True, order=True)
class GroupVersionKind:
    group: str
    version: str
    kind: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @classmethod
    def from_api_version(cls, api_version: str, kind: str) -> GroupVersionKind:
        group, version = split_api_version(api_version)
        return cls(group, version, kind)


def split_api_version(api_version: str) -> tuple[str, str]:
    """``apps/v1`` → ``("apps", "v1")``; ``v1`` → ``("", "v1")``."""
    if "/" in api_version:
        group, _, version = api_version.partition("/")
        return group, version
    return "", api_version


@dataclass(frozen=True, slots=True)
class Subresource:
    name: str
    kind: str = ""  # empty: same kind as the parent
    group: str | None = None  # None: same group/version as the parent
    version: str | None = None
    verbs: tuple[str, ...] = ("get", "patch", "update")


@dataclass(frozen=True, slots=True)
class ResourceInfo:
    """One served resource in one group (all its served versions)."""

    group: str
    versions: tuple[str, ...]  # served versions, preferred (storage) first
    resource: str  # plural, lower case
    kind: str
    namespaced: bool
    singular: str = ""
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    subresources: tuple[Subresource, ...] = ()
    custom: bool = False  # defined by a CRD
    list_kind: str = ""

    def __hash__(self) -> int:
        # Hashing every field (nested tuples included) cost ~1 us per lookup where infos
        # key dicts and sets; equal infos still hash equal.
        return hash((self.group, self.resource))

    @property
    def storage_version(self) -> str:
        return self.versions[0]

    @property
    def singular_name(self) -> str:
        return self.singular or self.kind.lower()

    @property
    def list_kind_name(self) -> str:
        return self.list_kind or f"{self.kind}List"

    def api_version(self, version: str | None = None) -> str:
        v = version or self.storage_version
        return f"{self.group}/{v}" if self.group else v

    def gvr(self, version: str | None = None) -> GroupVersionResource:
        return GroupVersionResource(self.group, version or self.storage_version, self.resource)

    @property
    def group_resource(self) -> str:
        return f"{self.resource}.{self.group}" if self.group else self.resource

    def has_subresource(self, name: str) -> bool:
        return any(s.name == name for s in self.subresources)

    def supports(self, verb: str) -> bool:
        return verb in self.verbs


def _r(
    group: str, versions: str, resource: str, kind: str, *, namespaced: bool = True,
    short: str = "", categories: str = "", singular: str = "",
) -> ResourceInfo:
    return ResourceInfo(
        group=group, versions=tuple(versions.split()), resource=resource, kind=kind,
        namespaced=namespaced, singular=singular, short_names=tuple(short.split()),
        categories=tuple(categories.split()), verbs=(),
    )


#: The built-in resources kubegc serves, in discovery order.
BUILTIN_RESOURCES: tuple[ResourceInfo, ...] = (
    _r("", "v1", "namespaces", "Namespace", namespaced=False, short="ns"),
    _r("", "v1", "pods", "Pod", short="po", categories="all"),
    _r("", "v1", "services", "Service", short="svc", categories="all"),
    _r("", "v1", "endpoints", "Endpoints", short="ep", singular="endpoints"),
    _r("", "v1", "configmaps", "ConfigMap", short="cm"),
    _r("", "v1", "secrets", "Secret"),
    _r("", "v1", "serviceaccounts", "ServiceAccount", short="sa"),
    _r("", "v1", "events", "Event", short="ev"),
    _r("", "v1", "replicationcontrollers", "ReplicationController", short="rc",
       categories="all"),
    _r("", "v1", "nodes", "Node", namespaced=False, short="no"),
    _r("", "v1", "persistentvolumes", "PersistentVolume", namespaced=False, short="pv"),
    _r("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", short="pvc"),
    _r("apps", "v1", "deployments", "Deployment", short="deploy", categories="all"),
    _r("apps", "v1", "replicasets", "ReplicaSet", short="rs", categories="all"),
    _r("apps", "v1", "statefulsets", "StatefulSet", short="sts", categories="all"),
    _r("apps", "v1", "daemonsets", "DaemonSet", short="ds", categories="all"),
    _r("batch", "v1", "jobs", "Job", categories="all"),
    _r("batch", "v1", "cronjobs", "CronJob", short="cj", categories="all"),
    _r("coordination.k8s.io", "v1", "leases", "Lease"),
    _r("events.k8s.io", "v1", "events", "Event", short="ev"),
    _r("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition",
       namespaced=False, short="crd crds", categories="api-extensions"),
    # The rest of a v1.32 kube-apiserver's default resources (its api-resources, but the
    # authentication.k8s.io TokenReview), as its REST storages declare them.
    _r("", "v1", "bindings", "Binding"),
    _r("authentication.k8s.io", "v1", "selfsubjectreviews", "SelfSubjectReview",
       namespaced=False),
    # the authorization reviews: create-only, answered and not stored
    _r("authorization.k8s.io", "v1", "localsubjectaccessreviews", "LocalSubjectAccessReview"),
    _r("authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview",
       namespaced=False),
    _r("authorization.k8s.io", "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview",
       namespaced=False),
    _r("authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview",
       namespaced=False),
    _r("", "v1", "podtemplates", "PodTemplate"),
    _r("", "v1", "limitranges", "LimitRange", short="limits"),
    _r("", "v1", "resourcequotas", "ResourceQuota", short="quota"),
    _r("", "v1", "componentstatuses", "ComponentStatus", namespaced=False, short="cs"),
    _r("apps", "v1", "controllerrevisions", "ControllerRevision"),
    _r("autoscaling", "v2 v1", "horizontalpodautoscalers", "HorizontalPodAutoscaler",
       short="hpa", categories="all"),
    _r("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", short="pdb"),
    _r("networking.k8s.io", "v1", "ingresses", "Ingress", short="ing"),
    _r("networking.k8s.io", "v1", "ingressclasses", "IngressClass", namespaced=False),
    _r("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", short="netpol"),
    # 1.33+ (docs/versions.md: kubegc.api.lifecycle says at which versions each is served)
    _r("networking.k8s.io", "v1", "ipaddresses", "IPAddress", namespaced=False, short="ip"),
    _r("networking.k8s.io", "v1", "servicecidrs", "ServiceCIDR", namespaced=False),
    _r("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice"),
    _r("storage.k8s.io", "v1", "storageclasses", "StorageClass", namespaced=False, short="sc"),
    _r("storage.k8s.io", "v1", "csidrivers", "CSIDriver", namespaced=False),
    _r("storage.k8s.io", "v1", "csinodes", "CSINode", namespaced=False),
    _r("storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity"),
    _r("storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", namespaced=False),
    _r("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", namespaced=False,
       short="pc"),
    _r("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", namespaced=False),
    _r("certificates.k8s.io", "v1", "certificatesigningrequests", "CertificateSigningRequest",
       namespaced=False, short="csr"),
    _r("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding",
       namespaced=False),
    _r("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", namespaced=False),
    _r("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding"),
    _r("rbac.authorization.k8s.io", "v1", "roles", "Role"),
    _r("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
       "MutatingWebhookConfiguration", namespaced=False, categories="api-extensions"),
    _r("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies",
       "ValidatingAdmissionPolicy", namespaced=False, categories="api-extensions"),
    _r("admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings",
       "ValidatingAdmissionPolicyBinding", namespaced=False, categories="api-extensions"),
    _r("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
       "ValidatingWebhookConfiguration", namespaced=False, categories="api-extensions"),
    _r("apiregistration.k8s.io", "v1", "apiservices", "APIService", namespaced=False,
       categories="api-extensions"),
    # v1beta3 until 1.32 (kubegc.api.lifecycle)
    _r("flowcontrol.apiserver.k8s.io", "v1 v1beta3", "flowschemas", "FlowSchema",
       namespaced=False),
    _r("flowcontrol.apiserver.k8s.io", "v1 v1beta3", "prioritylevelconfigurations",
       "PriorityLevelConfiguration", namespaced=False),
    # authentication.k8s.io: create-only reviews, not stored
    _r("authentication.k8s.io", "v1", "tokenreviews", "TokenReview", namespaced=False),
    # kubegc's own: what the garbage collector did and why, kept longer than events live.
    _r("kubegc.io", "v1", "deletionrecords", "DeletionRecord", namespaced=False, short="dr"),
)


@dataclass
class Catalog:
    """Mutable set of ``ResourceInfo`` with lookups by resource, kind and short name."""

    _by_gr: dict[tuple[str, str], ResourceInfo] = field(default_factory=dict)
    _order: list[tuple[str, str]] = field(default_factory=list)
    generation: int = 0  # bumped on every change, so caches (discovery, OpenAPI) can key on it

    def add(self, info: ResourceInfo) -> None:
        key = (info.group, info.resource)
        if key not in self._by_gr:
            self._order.append(key)
        self._by_gr[key] = info
        self.generation += 1

    def remove(self, group: str, resource: str) -> ResourceInfo | None:
        key = (group, resource)
        info = self._by_gr.pop(key, None)
        if info is not None:
            self._order.remove(key)
            self.generation += 1
        return info

    def __iter__(self) -> Iterator[ResourceInfo]:
        return iter([self._by_gr[k] for k in self._order])

    def get(self, group: str, resource: str) -> ResourceInfo | None:
        return self._by_gr.get((group, resource))

    def lookup(self, group: str, version: str, resource: str) -> ResourceInfo | None:
        """The resource served at ``/apis/<group>/<version>/<resource>``, if any."""
        info = self._by_gr.get((group, resource))
        if info is None or version not in info.versions:
            return None
        return info

    def for_kind(self, group: str, kind: str) -> ResourceInfo | None:
        for info in self._by_gr.values():
            if info.group == group and info.kind == kind:
                return info
        return None

    def for_gvk(self, gvk: GroupVersionKind) -> ResourceInfo | None:
        """RESTMapper: the resource for an ``apiVersion``/``kind``, if that version is served."""
        info = self.for_kind(gvk.group, gvk.kind)
        if info is None or gvk.version not in info.versions:
            return None
        return info

    def groups(self) -> list[tuple[str, list[str]]]:
        """Served groups (``""`` for core) with their versions, preferred first."""
        out: dict[str, list[str]] = {}
        for info in self:
            versions = out.setdefault(info.group, [])
            for v in info.versions:
                if v not in versions:
                    versions.append(v)
        return [(g, _sort_versions(vs)) for g, vs in out.items()]

    def in_group_version(self, group: str, version: str) -> list[ResourceInfo]:
        return [i for i in self if i.group == group and version in i.versions]


_BUILTIN = {(info.group, info.resource): info for info in BUILTIN_RESOURCES}


def builtin(group: str, resource: str) -> ResourceInfo:
    """The names of a built-in resource (``KeyError`` for one kubegc does not have)."""
    return _BUILTIN[(group, resource)]


def _version_priority(version: str) -> tuple[int, int, int]:
    """Kubernetes version ordering: GA > beta > alpha, higher numbers first."""
    import re

    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if not m:
        return (3, 0, 0)
    major = int(m.group(1))
    stage = {"alpha": 2, "beta": 1, None: 0}[m.group(2)]
    minor = int(m.group(3) or 0)
    return (stage, -major, -minor)


def _sort_versions(versions: Iterable[str]) -> list[str]:
    return sorted(versions, key=_version_priority)
