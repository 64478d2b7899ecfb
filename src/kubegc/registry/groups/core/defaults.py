"""Defaulting of the core kinds (cf. ``pkg/apis/core/v1/defaults.go``): fill the fields so
objects read back look like a real cluster's and controllers find what they expect.

Functions mutate the object in place. They never overwrite a field the user set.
"""

from __future__ import annotations

import base64
from typing import Any

from kubegc.api.types import Obj


def spec_of(obj: Obj) -> dict[str, Any]:
    return _member_map(obj, "spec")


def _status(obj: Obj) -> dict[str, Any]:
    return _member_map(obj, "status")


def _member_map(obj: Obj, key: str) -> dict[str, Any]:
    """``obj[key]``, made an empty map first when it is missing or not a map."""
    value = obj.get(key)
    if not isinstance(value, dict):
        value = obj[key] = {}
    return value


def _image_pull_policy(image: str) -> str:
    tail = image.rpartition("/")[2]
    if "@" in tail:
        return "IfNotPresent"
    tag = tail.partition(":")[2]
    return "Always" if not tag or tag == "latest" else "IfNotPresent"


def _default_container(container: dict[str, Any]) -> None:
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    container.setdefault("imagePullPolicy", _image_pull_policy(str(container.get("image", ""))))
    container.setdefault("resources", {})
    for port in container.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        if isinstance(container.get(key), dict):
            _default_probe(container[key])
    lifecycle = container.get("lifecycle")
    for hook in ("postStart", "preStop"):
        handler = lifecycle.get(hook) if isinstance(lifecycle, dict) else None
        if isinstance(handler, dict) and isinstance(handler.get("httpGet"), dict):
            _default_http_get(handler["httpGet"])


#: ``SetDefaults_Probe``: what a zero (or absent) field becomes
PROBE_DEFAULTS = {"timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1,
                  "failureThreshold": 3}


def _default_probe(probe: dict[str, Any]) -> None:
    for key, value in PROBE_DEFAULTS.items():
        if not probe.get(key):
            probe[key] = value
    if isinstance(probe.get("httpGet"), dict):
        _default_http_get(probe["httpGet"])


def _default_http_get(action: dict[str, Any]) -> None:
    """``SetDefaults_HTTPGetAction``: path ``/``, scheme ``HTTP``."""
    if not action.get("path"):
        action["path"] = "/"
    if not action.get("scheme"):
        action["scheme"] = "HTTP"


def default_pod_spec(spec: dict[str, Any]) -> None:
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("enableServiceLinks", True)
    for key in ("containers", "initContainers"):
        for container in spec.get(key) or []:
            if isinstance(container, dict):
                _default_container(container)
    if spec.get("serviceAccountName") and not spec.get("serviceAccount"):
        spec["serviceAccount"] = spec["serviceAccountName"]


def default_template(spec: dict[str, Any]) -> None:
    template = spec.get("template")
    if isinstance(template, dict):
        template.setdefault("metadata", {})
        pod_spec = template.get("spec")
        if isinstance(pod_spec, dict):
            default_pod_spec(pod_spec)


def default_pod(obj: Obj) -> None:
    default_pod_spec(spec_of(obj))






def default_replicationcontroller(obj: Obj) -> None:
    spec = spec_of(obj)
    spec.setdefault("replicas", 1)
    template = spec.get("template")
    labels = ((template or {}).get("metadata") or {}).get("labels") if isinstance(
        template, dict) else None
    if labels and not spec.get("selector"):
        spec["selector"] = dict(labels)
    metadata = obj.setdefault("metadata", {})
    if labels and not metadata.get("labels"):
        metadata["labels"] = dict(labels)
    default_template(spec)










def default_service(obj: Obj) -> None:
    spec = spec_of(obj)
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if spec["type"] != "ExternalName":
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
        spec.setdefault("internalTrafficPolicy", "Cluster")
    for port in spec.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
            if "port" in port:
                port.setdefault("targetPort", port["port"])


def default_endpoints(obj: Obj) -> None:
    """``SetDefaults_EndpointPort``: a port's protocol is TCP."""
    for subset in obj.get("subsets") or []:
        for port in (subset.get("ports") or []) if isinstance(subset, dict) else []:
            if isinstance(port, dict) and not port.get("protocol"):
                port["protocol"] = "TCP"


def default_secret(obj: Obj) -> None:
    """Type Opaque; ``stringData`` is write-only: merged into ``data`` (base64), as the
    v1 → internal conversion does upstream."""
    obj.setdefault("type", "Opaque")
    string_data = obj.pop("stringData", None)
    if isinstance(string_data, dict) and string_data:
        data = obj.get("data")
        if not isinstance(data, dict):
            data = obj["data"] = {}
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()


def default_namespace(obj: Obj) -> None:
    """``SetDefaults_Namespace``: the ``kubernetes.io/metadata.name`` label (a nameless,
    generateName namespace gets it from the strategy once it has a name)."""
    meta = obj.get("metadata")
    if isinstance(meta, dict) and meta.get("name"):
        labels = meta.get("labels")
        if not isinstance(labels, dict):
            labels = meta["labels"] = {}
        labels["kubernetes.io/metadata.name"] = meta["name"]


def default_persistentvolumeclaim(obj: Obj) -> None:
    """``SetDefaults_PersistentVolumeClaim(Spec)``: phase Pending until a volume is bound
    (kubegc binds none: no PersistentVolume controller), volumeMode Filesystem."""
    spec_of(obj).setdefault("volumeMode", "Filesystem")
    _status(obj).setdefault("phase", "Pending")


def default_persistentvolume(obj: Obj) -> None:
    """``SetDefaults_PersistentVolume``: reclaim policy Retain, volumeMode Filesystem,
    phase Pending (the PersistentVolume controller, not simulated, would make it
    Available)."""
    spec = spec_of(obj)
    spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
    spec.setdefault("volumeMode", "Filesystem")
    _status(obj).setdefault("phase", "Pending")


def default_pod_template(obj: Obj) -> None:
    """``SetDefaults_PodSpec`` of the template (``PodTemplate.template``)."""
    default_template(obj)
