"""The bootstrap policy: the roles and bindings kube-apiserver creates at start (cf.
plugin/pkg/auth/authorizer/rbac/bootstrappolicy: policy.go ``ClusterRoles`` /
``ClusterRoleBindings``, controller_policy.go ``buildControllerRoles``,
namespace_policy.go ``NamespaceRoles`` / ``NamespaceRoleBindings``). Data only: the
reconciler (``reconciliation.ensure_policy``) writes it, nothing else reads it. The
controllers' roles are in ``controller_policy``.

What it grants, in short: ``system:masters`` everything (``cluster-admin``); every
authenticated user discovery (``system:discovery``) and questions about itself
(``system:basic-user``); everyone, anonymous included, ``/healthz``, ``/livez``,
``/readyz`` and ``/version`` (``system:public-info-viewer``); ``admin``, ``edit`` and
``view`` to whoever is bound to them (aggregated from the ``system:aggregate-to-*`` roles
and any ClusterRole labelled to join them); each controller what its work needs, bound to
its ServiceAccount in kube-system (``system:controller:<name>``); the controller manager
and the scheduler their own roles. No rule names ``/debug/*``: only ``system:masters``
reaches kubegc's debug endpoints.

kubegc's differences, each marked ``kubegc:`` below: its controllers write status with a
patch where upstream's PUT it (``patch`` on the ``*/status`` they write), its scheduler binds
a pod by patching ``spec.nodeName`` (``patch`` on pods), every controller records Warning
events when a sync fails (the events rule on the three roles without one), the garbage
collector writes DeletionRecords, and the simulated kubelet — one component for every
node, with no Node authorizer to restrict it — is bound to ``system:node`` as one user,
``system:kubegc:kubelet`` (``kubegc:kubelet``).
"""

from __future__ import annotations

from kubegc.api.auth import (
    ALL_AUTHENTICATED,
    ALL_UNAUTHENTICATED,
    KUBE_CONTROLLER_MANAGER,
    KUBE_SCHEDULER,
    SERVICE_ACCOUNTS_GROUP,
    SYSTEM_PRIVILEGED_GROUP,
)
from kubegc.api.types import Obj
from kubegc.authz.rules import GROUP, PolicyRule, rule
from kubegc.registry.groups.rbac.controller_policy import (
    CONTROLLER_ROLES,
    READ,
    events_rule,
)

BOOTSTRAP_LABEL = {"kubernetes.io/bootstrapping": "rbac-defaults"}
AUTOUPDATE_ANNOTATION = "rbac.authorization.kubernetes.io/autoupdate"
CONTROLLER_ROLE_PREFIX = "system:controller:"
KUBE_SYSTEM = "kube-system"
#: the user the simulated kubelets act as (kubegc's; upstream's are ``system:node:<name>``)
KUBELET_USER = "system:kubegc:kubelet"
MONITORING_GROUP = "system:monitoring"
KUBE_PROXY = "system:kube-proxy"

WRITE = "create update patch delete deletecollection"
READ_WRITE = f"{READ} {WRITE}"
READ_UPDATE = "get list watch update patch"
AGGREGATE_TO = "rbac.authorization.k8s.io/aggregate-to-"


def cluster_role(name: str, *rules: PolicyRule, labels: dict[str, str] | None = None,
                 aggregate: str = "") -> Obj:
    """A bootstrap ClusterRole (``addDefaultMetadata``); ``aggregate``: the name whose
    ``aggregate-to-<name>`` label selects the roles aggregated into it."""
    obj: Obj = {"apiVersion": f"{GROUP}/v1", "kind": "ClusterRole",
                "metadata": _metadata(name, labels), "rules": [r.to_obj() for r in rules]}
    if aggregate:
        obj["aggregationRule"] = {"clusterRoleSelectors": [
            {"matchLabels": {AGGREGATE_TO + aggregate: "true"}}]}
    return obj


def role(namespace: str, name: str, *rules: PolicyRule) -> Obj:
    return {"apiVersion": f"{GROUP}/v1", "kind": "Role",
            "metadata": {**_metadata(name), "namespace": namespace},
            "rules": [r.to_obj() for r in rules]}


def _metadata(name: str, labels: dict[str, str] | None = None) -> dict[str, object]:
    return {"name": name, "labels": {**(labels or {}), **BOOTSTRAP_LABEL},
            "annotations": {AUTOUPDATE_ANNOTATION: "true"}}


def group(name: str) -> dict[str, str]:
    return {"apiGroup": GROUP, "kind": "Group", "name": name}


def user(name: str) -> dict[str, str]:
    return {"apiGroup": GROUP, "kind": "User", "name": name}


def service_account(namespace: str, name: str) -> dict[str, str]:
    return {"kind": "ServiceAccount", "name": name, "namespace": namespace}


def cluster_role_binding(role_name: str, *subjects: dict[str, str], name: str = "") -> Obj:
    """``NewClusterBinding(role)``: named as the role unless told."""
    obj: Obj = {"apiVersion": f"{GROUP}/v1", "kind": "ClusterRoleBinding",
                "metadata": _metadata(name or role_name),
                "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": role_name}}
    if subjects:
        obj["subjects"] = list(subjects)
    return obj


def role_binding(namespace: str, role_name: str, *subjects: dict[str, str]) -> Obj:
    return {"apiVersion": f"{GROUP}/v1", "kind": "RoleBinding",
            "metadata": {**_metadata(role_name), "namespace": namespace},
            "roleRef": {"apiGroup": GROUP, "kind": "Role", "name": role_name},
            "subjects": list(subjects)}


def _aggregated(name: str) -> dict[str, str]:
    return {AGGREGATE_TO + name: "true"}


_KUBE_SCHEDULER_RULES = (
    events_rule(),
    rule("create", "coordination.k8s.io", "leases"),
    rule("get update", "coordination.k8s.io", "leases", names="kube-scheduler"),
    rule("create", "", "endpoints"),
    rule("get update", "", "endpoints", names="kube-scheduler"),
    rule(READ, "", "nodes"),
    rule("get list watch delete", "", "pods"),
    rule("create", "", "pods/binding bindings"),
    rule("patch update", "", "pods/status"),
    rule(READ, "", "services replicationcontrollers"),
    rule(READ, "apps extensions", "replicasets"),
    rule(READ, "apps", "statefulsets"),
    rule(READ, "policy", "poddisruptionbudgets"),
    rule(READ, "", "persistentvolumeclaims persistentvolumes"),
    rule("create", "authentication.k8s.io", "tokenreviews"),
    rule("create", "authorization.k8s.io", "subjectaccessreviews"),
    rule(READ, "storage.k8s.io", "csinodes"),
    rule(READ, "", "namespaces"),
    rule(READ, "storage.k8s.io", "csidrivers csistoragecapacities"),
    rule("patch", "", "pods"),  # kubegc: binds a pod by patching spec.nodeName
)

_NODE_RULES = (  # NodeRules
    rule("create", "authentication.k8s.io", "tokenreviews"),
    rule("create", "authorization.k8s.io", "subjectaccessreviews localsubjectaccessreviews"),
    rule(READ, "", "services"),
    rule("create get list watch", "", "nodes"),
    rule("update patch", "", "nodes/status"),
    rule("update patch", "", "nodes"),
    rule("create update patch", "", "events"),
    rule(READ, "", "pods"),
    rule("create delete", "", "pods"),
    rule("update patch", "", "pods/status"),
    rule("create", "", "pods/eviction"),
    rule(READ, "", "secrets configmaps"),
    rule("get", "", "persistentvolumeclaims persistentvolumes"),
    rule("get", "", "endpoints"),
    rule("create get list watch", "certificates.k8s.io", "certificatesigningrequests"),
    rule("get create update patch delete", "coordination.k8s.io", "leases"),
    rule("get", "storage.k8s.io", "volumeattachments"),
    rule("create", "", "serviceaccounts/token"),
    rule("get update patch", "", "persistentvolumeclaims/status"),
    rule("get watch list", "storage.k8s.io", "csidrivers"),
    rule("get create update patch delete", "storage.k8s.io", "csinodes"),
    rule(READ, "node.k8s.io", "runtimeclasses"),
)

#: policy.go ``ClusterRoles``
CLUSTER_ROLES: tuple[Obj, ...] = (
    cluster_role("cluster-admin", rule("*", "*", "*"), rule("*", urls="*")),
    cluster_role("system:discovery", rule("get", urls=(
        "/livez /readyz /healthz /version /version/ /openapi /openapi/* /api /api/* /apis "
        "/apis/*"))),
    cluster_role("system:monitoring", rule("get", urls=(
        "/metrics /metrics/slis /livez /readyz /healthz /livez/* /readyz/* /healthz/*"))),
    cluster_role("system:basic-user",
                 rule("create", "authorization.k8s.io",
                      "selfsubjectaccessreviews selfsubjectrulesreviews"),
                 rule("create", "authentication.k8s.io", "selfsubjectreviews")),
    cluster_role("system:public-info-viewer",
                 rule("get", urls="/livez /readyz /healthz /version /version/")),
    cluster_role("admin", aggregate="admin"),
    cluster_role("edit", labels=_aggregated("admin"), aggregate="edit"),
    cluster_role("view", labels=_aggregated("edit"), aggregate="view"),
    cluster_role("system:aggregate-to-admin",
                 rule("create", "authorization.k8s.io", "localsubjectaccessreviews"),
                 rule(READ_WRITE, GROUP, "roles rolebindings"),
                 labels=_aggregated("admin")),
    cluster_role(
        "system:aggregate-to-edit",
        rule(READ, "", "pods/attach pods/proxy pods/exec pods/portforward secrets "
             "services/proxy"),
        rule("impersonate", "", "serviceaccounts"),
        rule(WRITE, "", "pods pods/attach pods/proxy pods/exec pods/portforward"),
        rule("create", "", "pods/eviction"),
        rule(WRITE, "", "replicationcontrollers replicationcontrollers/scale serviceaccounts "
             "services services/proxy persistentvolumeclaims configmaps secrets events"),
        rule("create", "", "serviceaccounts/token"),
        rule(WRITE, "apps", "statefulsets statefulsets/scale daemonsets deployments "
             "deployments/scale deployments/rollback replicasets replicasets/scale"),
        rule(WRITE, "autoscaling", "horizontalpodautoscalers"),
        rule(WRITE, "batch", "jobs cronjobs"),
        rule(WRITE, "extensions", "daemonsets deployments deployments/scale "
             "deployments/rollback ingresses replicasets replicasets/scale "
             "replicationcontrollers/scale networkpolicies"),
        rule(WRITE, "policy", "poddisruptionbudgets"),
        rule(WRITE, "networking.k8s.io", "networkpolicies ingresses"),
        rule(READ_WRITE, "coordination.k8s.io", "leases"),
        labels=_aggregated("edit")),
    cluster_role(
        "system:aggregate-to-view",
        rule(READ, "", "pods replicationcontrollers replicationcontrollers/scale "
             "serviceaccounts services services/status endpoints persistentvolumeclaims "
             "persistentvolumeclaims/status configmaps"),
        rule(READ, "", "limitranges resourcequotas bindings events pods/status "
             "resourcequotas/status namespaces/status replicationcontrollers/status pods/log"),
        rule(READ, "", "namespaces"),
        rule(READ, "discovery.k8s.io", "endpointslices"),
        rule(READ, "apps", "controllerrevisions statefulsets statefulsets/status "
             "statefulsets/scale daemonsets daemonsets/status deployments deployments/status "
             "deployments/scale replicasets replicasets/status replicasets/scale"),
        rule(READ, "autoscaling", "horizontalpodautoscalers horizontalpodautoscalers/status"),
        rule(READ, "batch", "jobs cronjobs cronjobs/status jobs/status"),
        rule(READ, "extensions", "daemonsets daemonsets/status deployments deployments/scale "
             "deployments/status ingresses ingresses/status replicasets replicasets/scale "
             "replicasets/status replicationcontrollers/scale networkpolicies"),
        rule(READ, "policy", "poddisruptionbudgets poddisruptionbudgets/status"),
        rule(READ, "networking.k8s.io", "networkpolicies ingresses ingresses/status"),
        labels=_aggregated("view")),
    cluster_role("system:heapster", rule(READ, "", "events pods nodes namespaces"),
                 rule(READ, "extensions", "deployments")),
    cluster_role("system:node", *_NODE_RULES),
    cluster_role("system:node-problem-detector", rule("get", "", "nodes"),
                 rule("patch", "", "nodes/status"), events_rule()),
    cluster_role("system:kubelet-api-admin", rule(READ, "", "nodes"),
                 rule("proxy", "", "nodes"),
                 rule("*", "", "nodes/proxy nodes/metrics nodes/stats nodes/log")),
    cluster_role("system:node-bootstrapper",
                 rule("create get list watch", "certificates.k8s.io",
                      "certificatesigningrequests")),
    cluster_role("system:auth-delegator",
                 rule("create", "authentication.k8s.io", "tokenreviews"),
                 rule("create", "authorization.k8s.io", "subjectaccessreviews")),
    cluster_role("system:kube-aggregator", rule(READ, "", "services endpoints")),
    cluster_role(
        "system:kube-controller-manager",
        events_rule(),
        rule("create", "coordination.k8s.io", "leases"),
        rule("get update", "coordination.k8s.io", "leases", names="kube-controller-manager"),
        rule("create", "", "endpoints"),
        rule("get update", "", "endpoints", names="kube-controller-manager"),
        rule("create", "", "secrets serviceaccounts"),
        rule("delete", "", "secrets"),
        rule("get", "", "namespaces secrets serviceaccounts configmaps"),
        rule("update", "", "secrets serviceaccounts"),
        rule("create", "authentication.k8s.io", "tokenreviews"),
        rule("create", "authorization.k8s.io", "subjectaccessreviews"),
        rule("list watch", "*", "*"),
        rule("create", "", "serviceaccounts/token"),
        # kubegc: the token controller's DeletionRecords (it acts as the manager)
        rule("create", "kubegc.io", "deletionrecords")),
    cluster_role("system:kube-dns", rule("list watch", "", "endpoints services")),
    cluster_role(
        "system:persistent-volume-provisioner",
        rule("get list watch create delete", "", "persistentvolumes"),
        rule("get list watch update", "", "persistentvolumeclaims"),
        rule(READ, "storage.k8s.io", "storageclasses"),
        rule("watch", "", "events"),
        events_rule()),
    cluster_role("system:kube-scheduler", *_KUBE_SCHEDULER_RULES),
    cluster_role("system:volume-scheduler", rule(READ_UPDATE, "", "persistentvolumes"),
                 rule(READ, "storage.k8s.io", "storageclasses"),
                 rule(READ_UPDATE, "", "persistentvolumeclaims")),
    cluster_role("system:service-account-issuer-discovery", rule("get", urls=(
        "/.well-known/openid-configuration /.well-known/openid-configuration/ "
        "/openid/v1/jwks /openid/v1/jwks/"))),
    cluster_role("system:node-proxier", rule("list watch", "", "services endpoints"),
                 rule(READ, "", "nodes"), events_rule(),
                 rule("list watch", "discovery.k8s.io", "endpointslices")),
)

#: policy.go ``ClusterRoleBindings`` (and kubegc's one for its kubelets)
CLUSTER_ROLE_BINDINGS: tuple[Obj, ...] = (
    cluster_role_binding("cluster-admin", group(SYSTEM_PRIVILEGED_GROUP)),
    cluster_role_binding("system:monitoring", group(MONITORING_GROUP)),
    cluster_role_binding("system:discovery", group(ALL_AUTHENTICATED)),
    cluster_role_binding("system:basic-user", group(ALL_AUTHENTICATED)),
    cluster_role_binding("system:public-info-viewer", group(ALL_AUTHENTICATED),
                         group(ALL_UNAUTHENTICATED)),
    cluster_role_binding("system:node-proxier", user(KUBE_PROXY)),
    cluster_role_binding("system:kube-controller-manager", user(KUBE_CONTROLLER_MANAGER)),
    cluster_role_binding("system:kube-dns", service_account(KUBE_SYSTEM, "kube-dns")),
    cluster_role_binding("system:kube-scheduler", user(KUBE_SCHEDULER)),
    cluster_role_binding("system:volume-scheduler", user(KUBE_SCHEDULER)),
    cluster_role_binding("system:node"),  # the Node authorizer's, upstream: no subjects
    cluster_role_binding("system:service-account-issuer-discovery",
                         group(SERVICE_ACCOUNTS_GROUP)),
    cluster_role_binding("system:node", user(KUBELET_USER), name="kubegc:kubelet"),  # kubegc
)

CLUSTER_ROLES += tuple(cluster_role(CONTROLLER_ROLE_PREFIX + name, *rules)
                       for name, rules in CONTROLLER_ROLES.items())
CLUSTER_ROLE_BINDINGS += tuple(
    cluster_role_binding(CONTROLLER_ROLE_PREFIX + name, service_account(KUBE_SYSTEM, name))
    for name in CONTROLLER_ROLES)

#: namespace_policy.go ``NamespaceRoles`` (those of the components kubegc has)
ROLES: tuple[Obj, ...] = (
    role(KUBE_SYSTEM, "extension-apiserver-authentication-reader",
         rule(READ, "", "configmaps", names="extension-apiserver-authentication")),
    role(KUBE_SYSTEM, "system::leader-locking-kube-controller-manager",
         rule("watch", "", "configmaps"),
         rule("get update", "", "configmaps", names="kube-controller-manager")),
    role(KUBE_SYSTEM, "system::leader-locking-kube-scheduler",
         rule("watch", "", "configmaps"),
         rule("get update", "", "configmaps", names="kube-scheduler")),
)

#: namespace_policy.go ``NamespaceRoleBindings``
ROLE_BINDINGS: tuple[Obj, ...] = (
    {**role_binding(KUBE_SYSTEM, "extension-apiserver-authentication-reader",
                    user(KUBE_CONTROLLER_MANAGER), user(KUBE_SCHEDULER)),
     "metadata": {**_metadata("system::extension-apiserver-authentication-reader"),
                  "namespace": KUBE_SYSTEM}},
    role_binding(KUBE_SYSTEM, "system::leader-locking-kube-controller-manager",
                 user(KUBE_CONTROLLER_MANAGER),
                 service_account(KUBE_SYSTEM, "kube-controller-manager")),
    role_binding(KUBE_SYSTEM, "system::leader-locking-kube-scheduler",
                 user(KUBE_SCHEDULER), service_account(KUBE_SYSTEM, "kube-scheduler")),
)
