"""Storage keys (cf. ``KeyFunc``/``KeyRootFunc`` of the generic registry).

``/registry/<group or "core">/<resource>/<namespace>/<name>`` for namespaced resources and
``/registry/<group or "core">/<resource>/<name>`` for cluster-scoped ones. ``events.k8s.io``
events share core events' keys: one store, two views, as in kube-apiserver.
"""

from __future__ import annotations

from kubegc.api.resources import ResourceInfo

ROOT = "/registry/"

_SHARED_STORAGE = {("events.k8s.io", "events"): ("core", "events")}


def storage_group_resource(info: ResourceInfo) -> tuple[str, str]:
    return _SHARED_STORAGE.get((info.group, info.resource), (info.group or "core", info.resource))


def key_root(info: ResourceInfo, namespace: str = "") -> str:
    """The prefix of every key of ``info`` (in ``namespace`` when given)."""
    group, resource = storage_group_resource(info)
    root = f"{ROOT}{group}/{resource}/"
    if info.namespaced and namespace:
        root += f"{namespace}/"
    return root


def key_for(info: ResourceInfo, namespace: str, name: str) -> str:
    group, resource = storage_group_resource(info)
    if info.namespaced:
        return f"{ROOT}{group}/{resource}/{namespace}/{name}"
    return f"{ROOT}{group}/{resource}/{name}"
