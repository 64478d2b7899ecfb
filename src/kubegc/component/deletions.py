"""Deletions made by controllers other than the garbage collector (pod GC, taint eviction,
TTL-after-finished, the Job and CronJob controllers, the StatefulSet, DaemonSet and
Deployment controllers: history limits, scale-down, failed and outdated pods), as they hand
them to kubegc's durable "why was this deleted" (``kubegc.io/v1
DeletionRecord``, kubegc's own; upstream's answer is the audit log).

A deleting controller is handed a ``DeletionSink`` and calls ``record_deletion`` once for
each DELETE it made that succeeded. The sink must be quick and must not raise (it runs on
the controller's event loop); the controller manager gives each such controller the
durable one (``kubegc.controllers.deletionrecords.DeletionRecordSink``).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from kubegc.api.meta import ObjectReference
from kubegc.api.types import Obj

#: Why a deleting controller's DELETE happened (DeletionRecord ``reason``), in words: the
#: deleter's rule, said once (``kubegc why`` joins it to a record, and to a DELETE an audit
#: log names, ``kubegc.tools.audit_log``).
DELETION_REASONS = {
    "NodeDeleted": "pod GC: the pod's node no longer exists (missing for the quarantine "
                   "time and confirmed by a GET)",
    "NodeOutOfService": "pod GC: the pod was terminating on a NotReady node tainted "
                        "node.kubernetes.io/out-of-service",
    "TerminatedPodThreshold": "pod GC: more terminated pods than "
                              "--terminated-pod-gc-threshold; the oldest go first",
    "UnscheduledTerminating": "pod GC: the pod was terminating and never bound to a node",
    "UntoleratedTaint": "taint eviction: the pod does not tolerate a NoExecute taint of its "
                        "node",
    "TolerationExpired": "taint eviction: the tolerationSeconds of the pod's toleration of a "
                         "NoExecute taint ran out",
    "TTLAfterFinished": "TTL-after-finished: the Job finished ttlSecondsAfterFinished ago",
    # the Job controller's pod deletions, by the reason of the Job's condition
    "BackoffLimitExceeded": "the Job controller: the Job failed more than backoffLimit "
                            "times, so its active pods are deleted",
    "DeadlineExceeded": "the Job controller: the Job ran longer than activeDeadlineSeconds, "
                        "so its active pods are deleted",
    "CompletionsReached": "the Job controller: the Job reached its completions, so its "
                          "remaining active pods are deleted",
    "TooManyActivePods": "the Job controller: more active pods than the Job wants "
                         "(parallelism, or completions left)",
    "JobSuspended": "the Job controller: the Job is suspended, so its active pods are "
                    "deleted",
    # the ReplicaSet (and ReplicationController) controller's pod deletions
    "SurplusReplicas": "the ReplicaSet (or ReplicationController) controller: more active "
                       "pods than spec.replicas; "
                       "the surplus goes, unscheduled, pending, not ready and newest first",
    # the namespace controller's deletions
    "NamespaceDeleted": "the namespace controller: the object's namespace is being deleted, "
                        "so everything in it is deleted (pods first)",
    # the token controller's and the endpoints controller's
    "ServiceAccountDeleted": "the token controller: the Secret is a token of a ServiceAccount "
                             "that no longer exists",
    "ServiceDeleted": "the endpoints controller: the Endpoints' Service no longer exists",
    # the CronJob controller's Job deletions
    "SuccessfulJobsHistoryLimit": "the CronJob controller: more finished successful Jobs "
                                  "than successfulJobsHistoryLimit; the oldest go first",
    "FailedJobsHistoryLimit": "the CronJob controller: more failed Jobs than "
                              "failedJobsHistoryLimit; the oldest go first",
    "ConcurrencyPolicyReplace": "the CronJob controller: concurrencyPolicy Replace; the "
                                "running Job makes way for the next scheduled one",
    # the workload controllers' own deletions (history, pods)
    "RevisionHistoryLimit": "the StatefulSet, DaemonSet or Deployment controller: an old "
                            "revision (a ControllerRevision, a Deployment's empty ReplicaSet) "
                            "beyond the owner's spec.revisionHistoryLimit; the oldest unused "
                            "go first",
    "ScaleDown": "the StatefulSet controller: the pod's ordinal is beyond spec.replicas; the "
                 "highest goes first",
    "PodFailed": "the StatefulSet or DaemonSet controller: the pod failed (a StatefulSet's: "
                 "or succeeded) and is deleted to be created again",
    "RollingUpdate": "the StatefulSet or DaemonSet controller, RollingUpdate: the pod has an "
                     "old revision and makes way for one of the update revision",
    "NodeNotEligible": "the DaemonSet controller: the pod's node should no longer run it "
                       "(nodeSelector, a taint it does not tolerate, the node being deleted)",
    "ExcessDaemonPod": "the DaemonSet controller: more than one of its pods on a node; all "
                       "but the oldest go",
}


#: Each deleting controller's rule in words, by the user its DELETEs carry (its ServiceAccount
#: in kube-system, or the controller manager's own user): what an audit log's DELETE by that
#: user means, where nothing says which of its reasons applied (``kubegc why --audit-log``).
DELETER_RULES = {
    "generic-garbage-collector": "the garbage collector: an owner was gone, or was deleted "
                                 "in the foreground",
    "namespace-controller": DELETION_REASONS["NamespaceDeleted"],
    "ttl-after-finished-controller": DELETION_REASONS["TTLAfterFinished"],
    "pod-garbage-collector": "pod GC: terminated pods above the threshold, or the pod's node "
                             "was gone or out of service, or it was terminating unscheduled",
    "node-controller": "taint eviction: a NoExecute taint the pod did not tolerate (or no "
                       "longer did)",
    "replicaset-controller": DELETION_REASONS["SurplusReplicas"],
    "replication-controller": DELETION_REASONS["SurplusReplicas"],
    "deployment-controller": "the Deployment controller: an old ReplicaSet past "
                             "revisionHistoryLimit",
    "statefulset-controller": "the StatefulSet controller: a scale-down, a failed or outdated "
                              "pod, or a ControllerRevision past revisionHistoryLimit",
    "daemon-set-controller": "the DaemonSet controller: a pod on a node it should not run on, "
                             "a surplus, failed or outdated pod, or a ControllerRevision past "
                             "revisionHistoryLimit",
    "job-controller": "the Job controller: a pod past parallelism or the Job's end",
    "cronjob-controller": "the CronJob controller: a Job past its history limit, or replaced "
                          "(concurrencyPolicy Replace)",
    "endpoint-controller": DELETION_REASONS["ServiceDeleted"],
    # the token controller acts as the controller manager itself
    "system:kube-controller-manager": DELETION_REASONS["ServiceAccountDeleted"],
}


#: the ReplicaSet controller's reason (a name the controller imports)
SURPLUS_REPLICAS = "SurplusReplicas"
#: the namespace controller's reason
NAMESPACE_DELETED = "NamespaceDeleted"
#: the token controller's and the endpoints controller's reasons
SERVICE_ACCOUNT_DELETED = "ServiceAccountDeleted"
SERVICE_DELETED = "ServiceDeleted"


@dataclass(frozen=True, slots=True)
class Deletion:
    """One DELETE a controller made on its own initiative, and why.

    ``deleter`` is the controller (its event source: ``pod-garbage-collector``,
    ``taint-eviction-controller``); ``node`` the node the decision was about (gone,
    tainted, out of service); ``taint`` (``key=value:effect``) and ``toleration`` (the
    toleration whose ``tolerationSeconds`` ran out; empty: none tolerated the taint) say
    why a taint eviction happened; ``propagation_policy`` is the DELETE's, if it set one."""

    time: datetime
    deleter: str
    object: ObjectReference
    reason: str
    message: str
    node: str = ""
    taint: str = ""
    toleration: str = ""
    propagation_policy: str = ""


def object_reference(obj: Obj, api_version: str, kind: str) -> ObjectReference:
    """The reference of an object of that kind (informer items may lack apiVersion and
    kind)."""
    meta = obj.get("metadata") or {}
    return ObjectReference(api_version, kind, str(meta.get("name") or ""),
                           str(meta.get("uid") or ""), str(meta.get("namespace") or ""))


def pod_reference(pod: Obj) -> ObjectReference:
    """The pod's reference (informer items may lack apiVersion and kind)."""
    return object_reference(pod, "v1", "Pod")


class DeletionSink(Protocol):
    """Where a deleting controller sends its ``Deletion``s. Must be quick, must not raise."""

    @abstractmethod
    def record_deletion(self, deletion: Deletion) -> None: ...


class NullDeletionSink(DeletionSink):
    """Discards deletions (a controller built without a sink)."""

    def record_deletion(self, deletion: Deletion) -> None:
        return None


class InMemoryDeletionSink(DeletionSink):
    """Keeps deletions in a list, oldest first (tests, the planner's simulation)."""

    def __init__(self) -> None:
        self.deletions: list[Deletion] = []

    def record_deletion(self, deletion: Deletion) -> None:
        self.deletions.append(deletion)

    def __iter__(self) -> Iterator[Deletion]:
        return iter(list(self.deletions))

    def __len__(self) -> int:
        return len(self.deletions)
