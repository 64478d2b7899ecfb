"""The fields the components read of each kind they act on, with the types and ranges of
upstream's typed objects (k8s.io/api) and of its validation (``ValidateNonnegativeField``:
replicas, completions, history limits, ...). See ``kubegc.component.fields``.

One place: a Deployment's controller and the ReplicaSet controller read ReplicaSets through
the same ``REPLICA_SET``; every component reads Pods through ``POD``.
"""

from __future__ import annotations

from kubegc.component.fields import METADATA, Field, Fields, Type, label_selector, pod_template

INT, BOOL, STRING, MAP, LIST = Type.INT, Type.BOOL, Type.STRING, Type.MAP, Type.LIST
TIME, STRING_MAP, INT_OR_STRING = Type.TIME, Type.STRING_MAP, Type.INT_OR_STRING


def _conditions(path: str) -> tuple[Field, ...]:
    return (Field(path, LIST), Field(f"{path}[]", MAP), Field(f"{path}[].type", STRING),
            Field(f"{path}[].status", STRING), Field(f"{path}[].reason", STRING),
            Field(f"{path}[].lastTransitionTime", TIME),
            Field(f"{path}[].lastUpdateTime", TIME))


def _counts(*names: str) -> tuple[Field, ...]:
    return tuple(Field(f"status.{n}", INT, minimum=0) for n in names)


POD = Fields(
    *METADATA,
    Field("spec", MAP),
    Field("spec.nodeName", STRING),
    Field("spec.nodeSelector", STRING_MAP),
    Field("spec.restartPolicy", STRING),
    Field("spec.containers", LIST),
    Field("spec.containers[]", MAP),
    Field("spec.containers[].name", STRING),
    Field("spec.containers[].ports", LIST),
    Field("spec.containers[].ports[]", MAP),
    Field("spec.containers[].ports[].containerPort", INT),
    Field("spec.containers[].ports[].name", STRING),
    Field("spec.tolerations", LIST),
    Field("spec.tolerations[]", MAP),
    Field("spec.terminationGracePeriodSeconds", INT, minimum=0),
    Field("spec.volumes", LIST),
    Field("spec.volumes[]", MAP),
    Field("spec.volumes[].name", STRING),
    Field("spec.volumes[].persistentVolumeClaim", MAP),
    Field("spec.volumes[].persistentVolumeClaim.claimName", STRING),
    Field("spec.volumes[].ephemeral", MAP),
    Field("spec.volumes[].ephemeral.volumeClaimTemplate", MAP),
    Field("spec.volumes[].ephemeral.volumeClaimTemplate.metadata", MAP),
    Field("spec.volumes[].ephemeral.volumeClaimTemplate.metadata.labels", STRING_MAP),
    Field("spec.volumes[].ephemeral.volumeClaimTemplate.metadata.annotations", STRING_MAP),
    Field("spec.volumes[].ephemeral.volumeClaimTemplate.spec", MAP),
    Field("status", MAP),
    Field("status.phase", STRING),
    Field("status.podIP", STRING),
    Field("status.startTime", TIME),
    *_conditions("status.conditions"),
    Field("status.containerStatuses", LIST),
    Field("status.containerStatuses[]", MAP),
    Field("status.containerStatuses[].state", MAP),
    Field("status.containerStatuses[].state.terminated", MAP),
    Field("status.containerStatuses[].state.terminated.finishedAt", TIME),
)

_WORKLOAD = (
    *METADATA,
    Field("spec", MAP),
    Field("spec.replicas", INT, minimum=0),
    Field("spec.minReadySeconds", INT, minimum=0),
    *pod_template("spec.template"),
    Field("status", MAP),
    Field("status.observedGeneration", INT),
    Field("status.collisionCount", INT, minimum=0),
    *_conditions("status.conditions"),
)

REPLICA_SET = Fields(
    *_WORKLOAD, *label_selector("spec.selector"),
    *_counts("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas"),
)

REPLICATION_CONTROLLER = Fields(
    *_WORKLOAD, Field("spec.selector", STRING_MAP),
    *_counts("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas"),
)

DEPLOYMENT = Fields(
    *_WORKLOAD, *label_selector("spec.selector"),
    Field("spec.paused", BOOL),
    Field("spec.revisionHistoryLimit", INT, minimum=0),
    Field("spec.progressDeadlineSeconds", INT, minimum=0),
    Field("spec.strategy", MAP),
    Field("spec.strategy.type", STRING),
    Field("spec.strategy.rollingUpdate", MAP),
    Field("spec.strategy.rollingUpdate.maxSurge", Type.INT_OR_PERCENT, minimum=0),
    Field("spec.strategy.rollingUpdate.maxUnavailable", Type.INT_OR_PERCENT, minimum=0),
    *_counts("replicas", "updatedReplicas", "readyReplicas", "availableReplicas",
             "unavailableReplicas"),
)

STATEFUL_SET = Fields(
    *_WORKLOAD, *label_selector("spec.selector"),
    Field("spec.serviceName", STRING),
    Field("spec.podManagementPolicy", STRING),
    Field("spec.ordinals", MAP),
    Field("spec.ordinals.start", INT, minimum=0),
    Field("spec.updateStrategy", MAP),
    Field("spec.updateStrategy.type", STRING),
    Field("spec.updateStrategy.rollingUpdate", MAP),
    Field("spec.updateStrategy.rollingUpdate.partition", INT, minimum=0),
    Field("spec.revisionHistoryLimit", INT, minimum=0),
    Field("status.currentRevision", STRING),
    Field("status.updateRevision", STRING),
    Field("spec.persistentVolumeClaimRetentionPolicy", MAP),
    Field("spec.persistentVolumeClaimRetentionPolicy.whenDeleted", STRING),
    Field("spec.volumeClaimTemplates", LIST),
    Field("spec.volumeClaimTemplates[]", MAP),
    Field("spec.volumeClaimTemplates[].metadata", MAP),
    Field("spec.volumeClaimTemplates[].metadata.name", STRING),
    Field("spec.volumeClaimTemplates[].metadata.labels", STRING_MAP),
    *_counts("replicas", "readyReplicas", "currentReplicas", "updatedReplicas",
             "availableReplicas"),
)

DAEMON_SET = Fields(
    *METADATA,
    Field("spec", MAP),
    Field("spec.minReadySeconds", INT, minimum=0),
    *label_selector("spec.selector"),
    *pod_template("spec.template"),
    Field("spec.template.spec.tolerations", LIST),
    Field("spec.template.spec.tolerations[]", MAP),
    Field("spec.revisionHistoryLimit", INT, minimum=0),
    Field("spec.updateStrategy", MAP),
    Field("spec.updateStrategy.type", STRING),
    Field("spec.updateStrategy.rollingUpdate", MAP),
    Field("spec.updateStrategy.rollingUpdate.maxUnavailable", Type.INT_OR_PERCENT, minimum=0),
    Field("spec.updateStrategy.rollingUpdate.maxSurge", Type.INT_OR_PERCENT, minimum=0),
    Field("status", MAP),
    Field("status.observedGeneration", INT),
    Field("status.collisionCount", INT, minimum=0),
)

#: what the StatefulSet and DaemonSet controllers read of their history
CONTROLLER_REVISION = Fields(
    *METADATA,
    Field("revision", INT, minimum=0),
)

JOB = Fields(
    *METADATA,
    Field("spec", MAP),
    Field("spec.parallelism", INT, minimum=0),
    Field("spec.completions", INT, minimum=0),
    Field("spec.activeDeadlineSeconds", INT, minimum=0),
    Field("spec.backoffLimit", INT, minimum=0),
    Field("spec.ttlSecondsAfterFinished", INT, minimum=0),
    Field("spec.suspend", BOOL),
    Field("spec.podReplacementPolicy", STRING),
    *label_selector("spec.selector"),
    *pod_template("spec.template"),
    Field("status", MAP),
    Field("status.startTime", TIME),
    Field("status.completionTime", TIME),
    *_counts("active", "succeeded", "failed"),
    *_conditions("status.conditions"),
    Field("status.uncountedTerminatedPods", MAP),
    Field("status.uncountedTerminatedPods.succeeded", LIST),
    Field("status.uncountedTerminatedPods.failed", LIST),
)

CRON_JOB = Fields(
    *METADATA,
    Field("spec", MAP),
    Field("spec.schedule", STRING),
    Field("spec.timeZone", STRING),
    Field("spec.suspend", BOOL),
    Field("spec.concurrencyPolicy", STRING),
    Field("spec.startingDeadlineSeconds", INT, minimum=0),
    Field("spec.successfulJobsHistoryLimit", INT, minimum=0),
    Field("spec.failedJobsHistoryLimit", INT, minimum=0),
    Field("spec.jobTemplate", MAP),
    Field("spec.jobTemplate.metadata", MAP),
    Field("spec.jobTemplate.metadata.labels", STRING_MAP),
    Field("spec.jobTemplate.metadata.annotations", STRING_MAP),
    Field("spec.jobTemplate.spec", MAP),
    Field("status", MAP),
    Field("status.active", LIST),
    Field("status.active[]", MAP),
    Field("status.active[].uid", STRING),
    Field("status.lastScheduleTime", TIME),
    Field("status.lastSuccessfulTime", TIME),
)

SERVICE = Fields(
    *METADATA,
    Field("spec", MAP),
    Field("spec.selector", STRING_MAP),
    Field("spec.clusterIP", STRING),
    Field("spec.type", STRING),
    Field("spec.publishNotReadyAddresses", BOOL),
    Field("spec.ports", LIST),
    Field("spec.ports[]", MAP),
    Field("spec.ports[].name", STRING),
    Field("spec.ports[].port", INT, minimum=0),
    Field("spec.ports[].protocol", STRING),
    Field("spec.ports[].appProtocol", STRING),
    Field("spec.ports[].targetPort", INT_OR_STRING),
)

EVENT = Fields(
    *METADATA,
    Field("count", INT),
    Field("firstTimestamp", TIME),
    Field("lastTimestamp", TIME),
    Field("eventTime", TIME),
    Field("series", MAP),
    Field("series.lastObservedTime", TIME),
)

NODE = Fields(
    *METADATA,
    Field("spec", MAP),
    Field("spec.unschedulable", BOOL),
    Field("spec.taints", LIST),
    Field("spec.taints[]", MAP),
    Field("spec.taints[].key", STRING),
    Field("spec.taints[].effect", STRING),
    Field("status", MAP),
    *_conditions("status.conditions"),
)

NAMESPACE = Fields(
    *METADATA,
    Field("spec", MAP),
    Field("spec.finalizers", LIST),
    Field("spec.finalizers[]", STRING),
    Field("status", MAP),
    Field("status.phase", STRING),
    *_conditions("status.conditions"),
)

PERSISTENT_VOLUME_CLAIM = Fields(
    *METADATA,
    Field("spec", MAP),
    Field("status", MAP),
    Field("status.phase", STRING),
)

PERSISTENT_VOLUME = Fields(
    *METADATA,
    Field("spec", MAP),
    Field("spec.claimRef", MAP),
    Field("spec.claimRef.namespace", STRING),
    Field("spec.claimRef.name", STRING),
    Field("status", MAP),
    Field("status.phase", STRING),
)
