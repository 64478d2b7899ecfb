"""The controllers' roles (cf. plugin/pkg/auth/authorizer/rbac/bootstrappolicy/
controller_policy.go ``buildControllerRoles``), for the controllers kubegc runs. Data only:
``bootstrappolicy`` makes each a ``system:controller:<name>`` ClusterRole bound to the
ServiceAccount kube-system/<name>.

kubegc's differences are marked ``kubegc:`` (see ``bootstrappolicy``): status written with a
patch, events recorded by every controller, DeletionRecords written by the deleting ones.
"""

from __future__ import annotations

from kubegc.authz.rules import GROUP, PolicyRule, rule

READ = "get list watch"


def events_rule() -> PolicyRule:
    """``eventsRule``."""
    return rule("create update patch", '"" events.k8s.io', "events")


STATUS_PATCH = "update patch"  # kubegc: status writes are patches (upstream: update)

#: controller_policy.go, for the controllers kubegc runs: role name (without
#: ``system:controller:``) -> rules; each bound to ServiceAccount kube-system/<name>
CONTROLLER_ROLES: dict[str, tuple[PolicyRule, ...]] = {
    "clusterrole-aggregation-controller": (
        rule("escalate get list watch update patch", GROUP, "clusterroles"),
        events_rule()),  # kubegc: events
    "cronjob-controller": (
        rule("get list watch update", "batch", "cronjobs"),
        rule("get list watch create update delete patch", "batch", "jobs"),
        rule(STATUS_PATCH, "batch", "cronjobs/status"),
        rule("update", "batch", "cronjobs/finalizers"),
        rule("list delete", "", "pods"),
        events_rule(),
        rule("create", "kubegc.io", "deletionrecords")),  # kubegc: its DeletionRecords
    "daemon-set-controller": (
        rule(READ, "extensions apps", "daemonsets"),
        rule(STATUS_PATCH, "extensions apps", "daemonsets/status"),
        rule("update", "extensions apps", "daemonsets/finalizers"),
        rule("list watch", "", "nodes"),
        rule("list watch create delete patch", "", "pods"),
        rule("create", "", "pods/binding"),
        rule("get list watch create delete update patch", "apps", "controllerrevisions"),
        events_rule(),
        rule("create", "kubegc.io", "deletionrecords")),  # kubegc: its DeletionRecords
    "deployment-controller": (
        rule("get list watch update", "extensions apps", "deployments"),
        rule(STATUS_PATCH, "extensions apps", "deployments/status"),
        rule("update", "extensions apps", "deployments/finalizers"),
        rule("get list watch create update patch delete", "apps extensions", "replicasets"),
        rule("get list watch update", "", "pods"),
        events_rule(),
        rule("create", "kubegc.io", "deletionrecords")),  # kubegc: its DeletionRecords
    "disruption-controller": (
        rule("get list watch", "extensions apps", "deployments"),
        rule("get list watch", "apps extensions", "replicasets"),
        rule("get list watch", "", "replicationcontrollers"),
        rule("get list watch", "policy", "poddisruptionbudgets"),
        rule("get list watch", "apps", "statefulsets"),
        rule("update", "policy", "poddisruptionbudgets/status"),
        rule("get", "*", "*/scale"),
        rule("patch update", "", "pods/status"),
        events_rule()),
    "endpoint-controller": (
        rule(READ, "", "services pods"),
        rule("get list create update delete", "", "endpoints"),
        rule("create", "", "endpoints/restricted"),
        events_rule(),
        rule("create", "kubegc.io", "deletionrecords")),  # kubegc: its DeletionRecords
    "ephemeral-volume-controller": (
        rule("get list watch", "", "pods"),
        rule("update", "", "pods/finalizers"),
        rule("get list watch create", "", "persistentvolumeclaims"),
        events_rule()),
    "generic-garbage-collector": (
        rule("get list watch patch update delete", "*", "*"),
        events_rule(),
        rule("create", "kubegc.io", "deletionrecords")),  # kubegc: its DeletionRecords
    "job-controller": (
        rule("get list watch update patch", "batch", "jobs"),
        rule(STATUS_PATCH, "batch", "jobs/status"),
        rule("update", "batch", "jobs/finalizers"),
        rule("list watch create delete patch", "", "pods"),
        events_rule(),
        rule("create", "kubegc.io", "deletionrecords")),  # kubegc: its DeletionRecords
    "namespace-controller": (
        rule("get list watch delete", "", "namespaces"),
        rule("update", "", "namespaces/finalize namespaces/status"),
        rule("get list delete deletecollection", "*", "*"),
        events_rule(),  # kubegc: events
        rule("create", "kubegc.io", "deletionrecords")),  # kubegc: its DeletionRecords
    "node-controller": (
        rule("get list update delete patch", "", "nodes"),
        rule("patch update", "", "nodes/status"),
        rule("patch update", "", "pods/status"),  # used for pod deletion
        rule("list get delete", "", "pods"),
        events_rule(),
        rule("create", "kubegc.io", "deletionrecords")),  # kubegc: taint eviction's records
    "pod-garbage-collector": (
        rule("list watch delete", "", "pods"),
        rule("get list", "", "nodes"),
        rule("patch", "", "pods/status"),
        events_rule(),  # kubegc: events
        rule("create", "kubegc.io", "deletionrecords")),  # kubegc: its DeletionRecords
    "pv-protection-controller": (
        rule("get list watch update", "", "persistentvolumes"),
        events_rule()),
    "pvc-protection-controller": (
        rule("get list watch update", "", "persistentvolumeclaims"),
        rule("list watch get", "", "pods"),
        events_rule()),
    "replicaset-controller": (
        rule("get list watch update", "apps extensions", "replicasets"),
        rule(STATUS_PATCH, "apps extensions", "replicasets/status"),
        rule("update", "apps extensions", "replicasets/finalizers"),
        rule("list watch patch create delete", "", "pods"),
        events_rule(),
        rule("create", "kubegc.io", "deletionrecords")),  # kubegc: its DeletionRecords
    "replication-controller": (
        rule("get list watch update", "", "replicationcontrollers"),
        rule(STATUS_PATCH, "", "replicationcontrollers/status"),
        rule("update", "", "replicationcontrollers/finalizers"),
        rule("list watch patch create delete", "", "pods"),
        events_rule(),
        rule("create", "kubegc.io", "deletionrecords")),  # kubegc: its DeletionRecords
    "root-ca-cert-publisher": (
        rule("create update", "", "configmaps"),
        events_rule()),
    "service-account-controller": (
        rule("create", "", "serviceaccounts"),
        events_rule()),
    "service-cidrs-controller": (
        rule("get list watch patch update", "networking.k8s.io", "servicecidrs"),
        rule("patch update", "networking.k8s.io", "servicecidrs/finalizers"),
        rule("patch update", "networking.k8s.io", "servicecidrs/status"),
        rule("get list watch", "networking.k8s.io", "ipaddresses"),
        events_rule()),
    "statefulset-controller": (
        rule("list watch", "", "pods"),
        rule(READ, "apps", "statefulsets"),
        rule(STATUS_PATCH, "apps", "statefulsets/status"),
        rule("update", "apps", "statefulsets/finalizers"),
        rule("get create delete update patch", "", "pods"),
        rule("get create delete update patch list watch", "apps", "controllerrevisions"),
        rule("get create", "", "persistentvolumeclaims"),
        rule("update delete", "", "persistentvolumeclaims"),
        events_rule(),
        rule("create", "kubegc.io", "deletionrecords")),  # kubegc: its DeletionRecords
    "ttl-after-finished-controller": (
        rule("get list watch delete", "batch", "jobs"),
        events_rule(),
        rule("create", "kubegc.io", "deletionrecords")),  # kubegc: its DeletionRecords
}
