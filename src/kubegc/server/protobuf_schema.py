"""Field tables for the protobuf messages kubectl's generator commands send.

Each message maps a field number to ``(json_name, kind)``, taken from the
``k8s.io/api/{core,apps,batch}/v1/generated.proto`` and
``k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto`` files. Kinds:

  ``string`` ``int`` ``bool`` ``bytes``  scalars; Go marshals every non-pointer scalar, so a
                                          zero value means "unset" and is dropped (JSON
                                          ``omitempty``)
  ``*string`` ``*int`` ``*bool`` ``*Time``  pointers: present only when set, zero kept
  ``[]X``                                 repeated ``X``
  ``map:string`` ``map:bytes`` ``map:Quantity``  map<string, X> (bytes become base64)
  ``inline:M``                            embedded struct whose fields JSON inlines
  ``Time`` ``MicroTime`` ``Quantity`` ``IntOrString`` ``FieldsV1``  apimachinery types; a
                                          zero non-pointer ``Time`` is JSON ``null``
  any other capitalised name              a message from ``MESSAGES``

Fields not listed here are skipped when decoding; the tables cover what the ``kubectl create
namespace|configmap|secret|deployment|job|cronjob|service|serviceaccount|role|clusterrole|
rolebinding|clusterrolebinding|ingress|poddisruptionbudget|priorityclass|quota`` generators
set, the common Pod template fields, and the SelfSubjectReview of ``kubectl auth whoami``.
"""

from __future__ import annotations

Schema = dict[int, tuple[str, str]]

_REF = {1: ("name", "string")}

MESSAGES: dict[str, Schema] = {
    # --- meta/v1 -----------------------------------------------------------------------
    "ObjectMeta": {
        1: ("name", "string"), 2: ("generateName", "string"), 3: ("namespace", "string"),
        4: ("selfLink", "string"), 5: ("uid", "string"), 6: ("resourceVersion", "string"),
        7: ("generation", "int"), 8: ("creationTimestamp", "Time"),
        9: ("deletionTimestamp", "*Time"), 10: ("deletionGracePeriodSeconds", "*int"),
        11: ("labels", "map:string"), 12: ("annotations", "map:string"),
        13: ("ownerReferences", "[]OwnerReference"), 14: ("finalizers", "[]string"),
        17: ("managedFields", "[]ManagedFieldsEntry"),
    },
    "OwnerReference": {
        5: ("apiVersion", "string"), 1: ("kind", "string"), 3: ("name", "string"),
        4: ("uid", "string"), 6: ("controller", "*bool"), 7: ("blockOwnerDeletion", "*bool"),
    },
    "ManagedFieldsEntry": {
        1: ("manager", "string"), 2: ("operation", "string"), 3: ("apiVersion", "string"),
        4: ("time", "*Time"), 6: ("fieldsType", "string"), 7: ("fieldsV1", "FieldsV1"),
        8: ("subresource", "string"),
    },
    "LabelSelector": {
        1: ("matchLabels", "map:string"), 2: ("matchExpressions", "[]LabelSelectorRequirement"),
    },
    "LabelSelectorRequirement": {
        1: ("key", "string"), 2: ("operator", "string"), 3: ("values", "[]string"),
    },
    # --- core/v1 objects -----------------------------------------------------------------
    "Namespace": {1: ("metadata", "ObjectMeta"), 2: ("spec", "NamespaceSpec"),
                  3: ("status", "NamespaceStatus")},
    "NamespaceSpec": {1: ("finalizers", "[]string")},
    "NamespaceStatus": {1: ("phase", "string")},
    "ConfigMap": {1: ("metadata", "ObjectMeta"), 2: ("data", "map:string"),
                  3: ("binaryData", "map:bytes"), 4: ("immutable", "*bool")},
    "Secret": {1: ("metadata", "ObjectMeta"), 2: ("data", "map:bytes"),
               4: ("stringData", "map:string"), 3: ("type", "string"), 5: ("immutable", "*bool")},
    "ServiceAccount": {
        1: ("metadata", "ObjectMeta"), 2: ("secrets", "[]ObjectReference"),
        3: ("imagePullSecrets", "[]LocalObjectReference"),
        4: ("automountServiceAccountToken", "*bool"),
    },
    "ObjectReference": {
        1: ("kind", "string"), 2: ("namespace", "string"), 3: ("name", "string"),
        4: ("uid", "string"), 5: ("apiVersion", "string"), 6: ("resourceVersion", "string"),
        7: ("fieldPath", "string"),
    },
    "LocalObjectReference": _REF,
    "Service": {1: ("metadata", "ObjectMeta"), 2: ("spec", "ServiceSpec"),
                3: ("status", "ServiceStatus")},
    "ServiceSpec": {
        1: ("ports", "[]ServicePort"), 2: ("selector", "map:string"),
        3: ("clusterIP", "string"), 18: ("clusterIPs", "[]string"), 4: ("type", "string"),
        5: ("externalIPs", "[]string"), 7: ("sessionAffinity", "string"),
        8: ("loadBalancerIP", "string"), 9: ("loadBalancerSourceRanges", "[]string"),
        10: ("externalName", "string"), 11: ("externalTrafficPolicy", "string"),
        12: ("healthCheckNodePort", "int"), 13: ("publishNotReadyAddresses", "bool"),
        19: ("ipFamilies", "[]string"), 17: ("ipFamilyPolicy", "*string"),
        20: ("allocateLoadBalancerNodePorts", "*bool"), 21: ("loadBalancerClass", "*string"),
        22: ("internalTrafficPolicy", "*string"), 23: ("trafficDistribution", "*string"),
    },
    "ServicePort": {
        1: ("name", "string"), 2: ("protocol", "string"), 6: ("appProtocol", "*string"),
        3: ("port", "int"), 4: ("targetPort", "IntOrString"), 5: ("nodePort", "int"),
    },
    "ServiceStatus": {1: ("loadBalancer", "LoadBalancerStatus")},
    "LoadBalancerStatus": {1: ("ingress", "[]LoadBalancerIngress")},
    "LoadBalancerIngress": {1: ("ip", "string"), 2: ("hostname", "string"),
                            3: ("ipMode", "*string")},
    "Pod": {1: ("metadata", "ObjectMeta"), 2: ("spec", "PodSpec"), 3: ("status", "PodStatus")},
    "PodStatus": {},
    "PodTemplateSpec": {1: ("metadata", "ObjectMeta"), 2: ("spec", "PodSpec")},
    "PodSpec": {
        1: ("volumes", "[]Volume"), 20: ("initContainers", "[]Container"),
        2: ("containers", "[]Container"), 3: ("restartPolicy", "string"),
        4: ("terminationGracePeriodSeconds", "*int"), 5: ("activeDeadlineSeconds", "*int"),
        6: ("dnsPolicy", "string"), 7: ("nodeSelector", "map:string"),
        8: ("serviceAccountName", "string"), 9: ("serviceAccount", "string"),
        21: ("automountServiceAccountToken", "*bool"), 10: ("nodeName", "string"),
        11: ("hostNetwork", "bool"), 12: ("hostPID", "bool"), 13: ("hostIPC", "bool"),
        27: ("shareProcessNamespace", "*bool"), 14: ("securityContext", "PodSecurityContext"),
        15: ("imagePullSecrets", "[]LocalObjectReference"), 16: ("hostname", "string"),
        17: ("subdomain", "string"), 19: ("schedulerName", "string"),
        22: ("tolerations", "[]Toleration"), 24: ("priorityClassName", "string"),
        25: ("priority", "*int"), 28: ("readinessGates", "[]PodReadinessGate"),
        29: ("runtimeClassName", "*string"), 30: ("enableServiceLinks", "*bool"),
        31: ("preemptionPolicy", "*string"), 32: ("overhead", "map:Quantity"),
        35: ("setHostnameAsFQDN", "*bool"), 37: ("hostUsers", "*bool"),
        38: ("schedulingGates", "[]PodSchedulingGate"),
    },
    "PodReadinessGate": {1: ("conditionType", "string")},
    "PodSchedulingGate": _REF,
    "PodSecurityContext": {
        2: ("runAsUser", "*int"), 6: ("runAsGroup", "*int"), 3: ("runAsNonRoot", "*bool"),
        4: ("supplementalGroups", "[]int"), 5: ("fsGroup", "*int"),
    },
    "Toleration": {
        1: ("key", "string"), 2: ("operator", "string"), 3: ("value", "string"),
        4: ("effect", "string"), 5: ("tolerationSeconds", "*int"),
    },
    "Container": {
        1: ("name", "string"), 2: ("image", "string"), 3: ("command", "[]string"),
        4: ("args", "[]string"), 5: ("workingDir", "string"), 6: ("ports", "[]ContainerPort"),
        19: ("envFrom", "[]EnvFromSource"), 7: ("env", "[]EnvVar"),
        8: ("resources", "ResourceRequirements"), 23: ("resizePolicy", "[]ContainerResizePolicy"),
        24: ("restartPolicy", "*string"), 9: ("volumeMounts", "[]VolumeMount"),
        10: ("livenessProbe", "Probe"), 11: ("readinessProbe", "Probe"),
        22: ("startupProbe", "Probe"), 13: ("terminationMessagePath", "string"),
        20: ("terminationMessagePolicy", "string"), 14: ("imagePullPolicy", "string"),
        15: ("securityContext", "SecurityContext"), 16: ("stdin", "bool"),
        17: ("stdinOnce", "bool"), 18: ("tty", "bool"),
    },
    "ContainerPort": {
        1: ("name", "string"), 2: ("hostPort", "int"), 3: ("containerPort", "int"),
        4: ("protocol", "string"), 5: ("hostIP", "string"),
    },
    "ContainerResizePolicy": {1: ("resourceName", "string"), 2: ("restartPolicy", "string")},
    "EnvVar": {1: ("name", "string"), 2: ("value", "string"), 3: ("valueFrom", "EnvVarSource")},
    "EnvVarSource": {
        1: ("fieldRef", "ObjectFieldSelector"), 2: ("resourceFieldRef", "ResourceFieldSelector"),
        3: ("configMapKeyRef", "ConfigMapKeySelector"), 4: ("secretKeyRef", "SecretKeySelector"),
    },
    "ObjectFieldSelector": {1: ("apiVersion", "string"), 2: ("fieldPath", "string")},
    "ResourceFieldSelector": {1: ("containerName", "string"), 2: ("resource", "string"),
                              3: ("divisor", "Quantity")},
    "ConfigMapKeySelector": {1: ("", "inline:LocalObjectReference"), 2: ("key", "string"),
                             3: ("optional", "*bool")},
    "SecretKeySelector": {1: ("", "inline:LocalObjectReference"), 2: ("key", "string"),
                          3: ("optional", "*bool")},
    "EnvFromSource": {1: ("prefix", "string"), 2: ("configMapRef", "ConfigMapEnvSource"),
                      3: ("secretRef", "SecretEnvSource")},
    "ConfigMapEnvSource": {1: ("", "inline:LocalObjectReference"), 2: ("optional", "*bool")},
    "SecretEnvSource": {1: ("", "inline:LocalObjectReference"), 2: ("optional", "*bool")},
    "ResourceRequirements": {1: ("limits", "map:Quantity"), 2: ("requests", "map:Quantity")},
    "VolumeMount": {
        1: ("name", "string"), 2: ("readOnly", "bool"), 3: ("mountPath", "string"),
        4: ("subPath", "string"), 5: ("mountPropagation", "*string"),
        6: ("subPathExpr", "string"),
    },
    "Volume": {1: ("name", "string"), 2: ("", "inline:VolumeSource")},
    "VolumeSource": {
        1: ("hostPath", "HostPathVolumeSource"), 2: ("emptyDir", "EmptyDirVolumeSource"),
        6: ("secret", "SecretVolumeSource"),
        10: ("persistentVolumeClaim", "PersistentVolumeClaimVolumeSource"),
        19: ("configMap", "ConfigMapVolumeSource"),
    },
    "HostPathVolumeSource": {1: ("path", "string"), 2: ("type", "*string")},
    "EmptyDirVolumeSource": {1: ("medium", "string"), 2: ("sizeLimit", "Quantity")},
    "SecretVolumeSource": {1: ("secretName", "string"), 2: ("items", "[]KeyToPath"),
                           3: ("defaultMode", "*int"), 4: ("optional", "*bool")},
    "ConfigMapVolumeSource": {1: ("", "inline:LocalObjectReference"),
                              2: ("items", "[]KeyToPath"), 3: ("defaultMode", "*int"),
                              4: ("optional", "*bool")},
    "PersistentVolumeClaimVolumeSource": {1: ("claimName", "string"), 2: ("readOnly", "bool")},
    "KeyToPath": {1: ("key", "string"), 2: ("path", "string"), 3: ("mode", "*int")},
    "Probe": {
        1: ("", "inline:ProbeHandler"), 2: ("initialDelaySeconds", "int"),
        3: ("timeoutSeconds", "int"), 4: ("periodSeconds", "int"),
        5: ("successThreshold", "int"), 6: ("failureThreshold", "int"),
        7: ("terminationGracePeriodSeconds", "*int"),
    },
    "ProbeHandler": {1: ("exec", "ExecAction"), 2: ("httpGet", "HTTPGetAction"),
                     3: ("tcpSocket", "TCPSocketAction")},
    "ExecAction": {1: ("command", "[]string")},
    "HTTPGetAction": {1: ("path", "string"), 2: ("port", "IntOrString"), 3: ("host", "string"),
                      4: ("scheme", "string"), 5: ("httpHeaders", "[]HTTPHeader")},
    "HTTPHeader": {1: ("name", "string"), 2: ("value", "string")},
    "TCPSocketAction": {1: ("port", "IntOrString"), 2: ("host", "string")},
    "SecurityContext": {
        1: ("capabilities", "Capabilities"), 2: ("privileged", "*bool"),
        4: ("runAsUser", "*int"), 8: ("runAsGroup", "*int"), 5: ("runAsNonRoot", "*bool"),
        6: ("readOnlyRootFilesystem", "*bool"), 7: ("allowPrivilegeEscalation", "*bool"),
    },
    "Capabilities": {1: ("add", "[]string"), 2: ("drop", "[]string")},
    # --- apps/v1 ---------------------------------------------------------------------------
    # meta/v1 DeleteOptions: typed clients (kubectl drain, kubectl delete through them) send
    # DELETE bodies as protobuf
    "DeleteOptions": {1: ("gracePeriodSeconds", "int"), 2: ("preconditions", "Preconditions"),
                      3: ("orphanDependents", "bool"), 4: ("propagationPolicy", "string"),
                      5: ("dryRun", "[]string")},
    "Preconditions": {1: ("uid", "string"), 2: ("resourceVersion", "string")},
    "Deployment": {1: ("metadata", "ObjectMeta"), 2: ("spec", "DeploymentSpec"),
                   3: ("status", "DeploymentStatus")},
    "DeploymentSpec": {
        1: ("replicas", "*int"), 2: ("selector", "LabelSelector"),
        3: ("template", "PodTemplateSpec"), 4: ("strategy", "DeploymentStrategy"),
        5: ("minReadySeconds", "int"), 6: ("revisionHistoryLimit", "*int"),
        7: ("paused", "bool"), 9: ("progressDeadlineSeconds", "*int"),
    },
    "DeploymentStrategy": {1: ("type", "string"), 2: ("rollingUpdate", "RollingUpdateDeployment")},
    "RollingUpdateDeployment": {1: ("maxUnavailable", "IntOrString"),
                                2: ("maxSurge", "IntOrString")},
    "DeploymentStatus": {
        1: ("observedGeneration", "int"), 2: ("replicas", "int"), 3: ("updatedReplicas", "int"),
        7: ("readyReplicas", "int"), 4: ("availableReplicas", "int"),
        5: ("unavailableReplicas", "int"), 8: ("collisionCount", "*int"),
    },
    # --- batch/v1 --------------------------------------------------------------------------
    "Job": {1: ("metadata", "ObjectMeta"), 2: ("spec", "JobSpec"), 3: ("status", "JobStatus")},
    "JobSpec": {
        1: ("parallelism", "*int"), 2: ("completions", "*int"),
        3: ("activeDeadlineSeconds", "*int"), 7: ("backoffLimit", "*int"),
        12: ("backoffLimitPerIndex", "*int"), 13: ("maxFailedIndexes", "*int"),
        4: ("selector", "LabelSelector"), 5: ("manualSelector", "*bool"),
        6: ("template", "PodTemplateSpec"), 8: ("ttlSecondsAfterFinished", "*int"),
        9: ("completionMode", "*string"), 10: ("suspend", "*bool"),
        14: ("podReplacementPolicy", "*string"), 15: ("managedBy", "*string"),
    },
    "JobStatus": {
        4: ("active", "int"), 5: ("succeeded", "int"), 6: ("failed", "int"),
        2: ("startTime", "*Time"), 3: ("completionTime", "*Time"),
    },
    "JobTemplateSpec": {1: ("metadata", "ObjectMeta"), 2: ("spec", "JobSpec")},
    "CronJob": {1: ("metadata", "ObjectMeta"), 2: ("spec", "CronJobSpec"),
                3: ("status", "CronJobStatus")},
    "CronJobSpec": {
        1: ("schedule", "string"), 8: ("timeZone", "*string"),
        2: ("startingDeadlineSeconds", "*int"), 3: ("concurrencyPolicy", "string"),
        4: ("suspend", "*bool"), 5: ("jobTemplate", "JobTemplateSpec"),
        6: ("successfulJobsHistoryLimit", "*int"), 7: ("failedJobsHistoryLimit", "*int"),
    },
    "CronJobStatus": {1: ("active", "[]ObjectReference"), 4: ("lastScheduleTime", "*Time"),
                      5: ("lastSuccessfulTime", "*Time")},
}

#: The top-level kinds a protobuf body may carry: (apiVersion, kind) → message name.
# --- the other generators' kinds (kubectl create role|clusterrole|rolebinding|
# clusterrolebinding|ingress|poddisruptionbudget|priorityclass|quota) -------------------
_BINDING = {1: ("metadata", "ObjectMeta"), 2: ("subjects", "[]Subject"),
            3: ("roleRef", "RoleRef")}
MESSAGES.update({
    "PolicyRule": {1: ("verbs", "[]string"), 2: ("apiGroups", "[]string"),
                   3: ("resources", "[]string"), 4: ("resourceNames", "[]string"),
                   5: ("nonResourceURLs", "[]string")},
    "Role": {1: ("metadata", "ObjectMeta"), 2: ("rules", "[]PolicyRule")},
    "ClusterRole": {1: ("metadata", "ObjectMeta"), 2: ("rules", "[]PolicyRule"),
                    3: ("aggregationRule", "AggregationRule")},
    "AggregationRule": {1: ("clusterRoleSelectors", "[]LabelSelector")},
    "RoleBinding": _BINDING,
    "ClusterRoleBinding": _BINDING,
    "RoleRef": {1: ("apiGroup", "string"), 2: ("kind", "string"), 3: ("name", "string")},
    "Subject": {1: ("kind", "string"), 2: ("apiGroup", "string"), 3: ("name", "string"),
                4: ("namespace", "string")},
    "Ingress": {1: ("metadata", "ObjectMeta"), 2: ("spec", "IngressSpec"),
                3: ("status", "IngressStatus")},
    "IngressSpec": {4: ("ingressClassName", "*string"), 1: ("defaultBackend", "IngressBackend"),
                    2: ("tls", "[]IngressTLS"), 3: ("rules", "[]IngressRule")},
    "IngressStatus": {},
    "IngressTLS": {1: ("hosts", "[]string"), 2: ("secretName", "string")},
    "IngressRule": {1: ("host", "string"), 2: ("", "inline:IngressRuleValue")},
    "IngressRuleValue": {1: ("http", "HTTPIngressRuleValue")},
    "HTTPIngressRuleValue": {1: ("paths", "[]HTTPIngressPath")},
    "HTTPIngressPath": {1: ("path", "string"), 3: ("pathType", "*string"),
                        2: ("backend", "IngressBackend")},
    "IngressBackend": {4: ("service", "IngressServiceBackend"),
                       3: ("resource", "TypedLocalObjectReference")},
    "IngressServiceBackend": {1: ("name", "string"), 2: ("port", "ServiceBackendPort")},
    "ServiceBackendPort": {1: ("name", "string"), 2: ("number", "int")},
    "TypedLocalObjectReference": {1: ("apiGroup", "*string"), 2: ("kind", "string"),
                                  3: ("name", "string")},
    "PodDisruptionBudget": {1: ("metadata", "ObjectMeta"),
                            2: ("spec", "PodDisruptionBudgetSpec"),
                            3: ("status", "PodDisruptionBudgetStatus")},
    "PodDisruptionBudgetSpec": {1: ("minAvailable", "IntOrString"),
                                2: ("selector", "LabelSelector"),
                                3: ("maxUnavailable", "IntOrString"),
                                4: ("unhealthyPodEvictionPolicy", "*string")},
    "PodDisruptionBudgetStatus": {},
    "PriorityClass": {1: ("metadata", "ObjectMeta"), 2: ("value", "int"),
                      3: ("globalDefault", "bool"), 4: ("description", "string"),
                      5: ("preemptionPolicy", "*string")},
    "ResourceQuota": {1: ("metadata", "ObjectMeta"), 2: ("spec", "ResourceQuotaSpec"),
                      3: ("status", "ResourceQuotaStatus")},
    "ResourceQuotaSpec": {1: ("hard", "map:Quantity"), 2: ("scopes", "[]string"),
                          3: ("scopeSelector", "ScopeSelector")},
    "ResourceQuotaStatus": {},
    "ScopeSelector": {1: ("matchExpressions", "[]ScopedResourceSelectorRequirement")},
    "ScopedResourceSelectorRequirement": {1: ("scopeName", "string"), 2: ("operator", "string"),
                                          3: ("values", "[]string")},
})
# --- what kubectl auth whoami sends (k8s.io/api/authentication/v1/generated.proto) ------
MESSAGES.update({
    "SelfSubjectReview": {1: ("metadata", "ObjectMeta"),
                          2: ("status", "SelfSubjectReviewStatus")},
    "SelfSubjectReviewStatus": {1: ("userInfo", "UserInfo")},
    "UserInfo": {1: ("username", "string"), 2: ("uid", "string"), 3: ("groups", "[]string")},
})

# --- authorization/v1 (kubectl auth can-i sends its reviews as protobuf) -------------------
_REVIEW = {1: ("metadata", "ObjectMeta"), 2: ("spec", "SubjectAccessReviewSpec")}
MESSAGES.update({
    "SelfSubjectAccessReview": {1: ("metadata", "ObjectMeta"),
                                2: ("spec", "SelfSubjectAccessReviewSpec")},
    "SelfSubjectAccessReviewSpec": {1: ("resourceAttributes", "ResourceAttributes"),
                                    2: ("nonResourceAttributes", "NonResourceAttributes")},
    "ResourceAttributes": {1: ("namespace", "string"), 2: ("verb", "string"),
                           3: ("group", "string"), 4: ("version", "string"),
                           5: ("resource", "string"), 6: ("subresource", "string"),
                           7: ("name", "string")},
    "NonResourceAttributes": {1: ("path", "string"), 2: ("verb", "string")},
    "SubjectAccessReview": _REVIEW,
    "LocalSubjectAccessReview": _REVIEW,
    "SubjectAccessReviewSpec": {1: ("resourceAttributes", "ResourceAttributes"),
                                2: ("nonResourceAttributes", "NonResourceAttributes"),
                                3: ("user", "string"), 4: ("groups", "[]string"),
                                6: ("uid", "string")},
    "SelfSubjectRulesReview": {1: ("metadata", "ObjectMeta"),
                               2: ("spec", "SelfSubjectRulesReviewSpec")},
    "SelfSubjectRulesReviewSpec": {1: ("namespace", "string")},
})

# --- authentication/v1: kubectl create token (TokenRequest) and TokenReview -----------------
MESSAGES.update({
    "TokenRequest": {1: ("metadata", "ObjectMeta"), 2: ("spec", "TokenRequestSpec")},
    "TokenRequestSpec": {1: ("audiences", "[]string"), 4: ("expirationSeconds", "*int"),
                         3: ("boundObjectRef", "BoundObjectReference")},
    "BoundObjectReference": {1: ("kind", "string"), 2: ("apiVersion", "string"),
                             3: ("name", "string"), 4: ("uid", "string")},
    "TokenReview": {1: ("metadata", "ObjectMeta"), 2: ("spec", "TokenReviewSpec")},
    "TokenReviewSpec": {1: ("token", "string"), 2: ("audiences", "[]string")},
})

TOP_LEVEL: dict[tuple[str, str], str] = {
    ("authentication.k8s.io/v1", "SelfSubjectReview"): "SelfSubjectReview",
    **{("authorization.k8s.io/v1", kind): kind
       for kind in ("SelfSubjectAccessReview", "SubjectAccessReview",
                    "LocalSubjectAccessReview", "SelfSubjectRulesReview")},
    **{("rbac.authorization.k8s.io/v1", kind): kind
       for kind in ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")},
    ("networking.k8s.io/v1", "Ingress"): "Ingress",
    ("policy/v1", "PodDisruptionBudget"): "PodDisruptionBudget",
    ("scheduling.k8s.io/v1", "PriorityClass"): "PriorityClass",
    ("v1", "ResourceQuota"): "ResourceQuota",
    ("v1", "Namespace"): "Namespace",
    ("v1", "ConfigMap"): "ConfigMap",
    ("v1", "Secret"): "Secret",
    ("v1", "Service"): "Service",
    ("v1", "ServiceAccount"): "ServiceAccount",
    ("v1", "Pod"): "Pod",
    ("apps/v1", "Deployment"): "Deployment",
    ("batch/v1", "Job"): "Job",
    ("batch/v1", "CronJob"): "CronJob",
    ("authentication.k8s.io/v1", "TokenRequest"): "TokenRequest",
    ("authentication.k8s.io/v1", "TokenReview"): "TokenReview",
    ("v1", "DeleteOptions"): "DeleteOptions",
    ("meta.k8s.io/v1", "DeleteOptions"): "DeleteOptions",
}
