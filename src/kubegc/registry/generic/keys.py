"""Storage keys (cf. ``KeyFunc``/``KeyRootFunc`` of the generic registry).

``/registry/<group or "core">/<resource>/<namespace>/<name>`` for namespaced resources and
``/registry/<group or "core">/<resource>/<name>`` for cluster-scoped ones. A resource may
keep its objects under another's keys (``Strategy.storage_resource``: events.k8s.io Events
under core Events': one store, two views, as in kube-apiserver).
"""

from __future__ import annotations

ROOT = "/registry/"


def key_root(group: str, resource: str, namespace: str = "") -> str:
    """The prefix of every key of ``group``/``resource`` (in ``namespace`` when given: a
    namespaced resource's)."""
    root = f"{ROOT}{group or 'core'}/{resource}/"
    return f"{root}{namespace}/" if namespace else root


def key_for(group: str, resource: str, namespace: str, name: str) -> str:
    """The key of one object (``namespace`` "" for a cluster-scoped resource)."""
    return f"{key_root(group, resource, namespace)}{name}"
