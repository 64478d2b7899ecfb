"""The kopf operator of the client tests, run as ``kopf run`` with kopf's default login
(no ``@kopf.on.login``: kopf asks the ``kubernetes`` client, which reads ``$KUBECONFIG``).

* A ``Parent`` (``parents.story.kubegc.test``) gets a ConfigMap ``<parent>-child``, adopted
  (``kopf.adopt``: ``controller`` and ``blockOwnerDeletion`` owner reference), so the
  garbage collector deletes it with its parent.
* Both have a deletion handler, so kopf keeps its finalizer on both until the handler ran;
  each handler leaves a ConfigMap ``deleted-<name>`` behind (a stand-in for cleaning up
  outside state), which the test reads to know which handlers ran.
"""

from __future__ import annotations

from typing import Any

import kopf
import kubernetes

GROUP, VERSION, PLURAL = "story.kubegc.test", "v1", "parents"
CHILD_LABEL = "story.kubegc.test/child"
MARKER_LABEL = "story.kubegc.test/marker"


def _core() -> kubernetes.client.CoreV1Api:
    kubernetes.config.load_kube_config()  # type: ignore[no-untyped-call]
    return kubernetes.client.CoreV1Api()


def _configmap(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": labels}}


@kopf.on.create(GROUP, VERSION, PLURAL)
def create_child(name: str, namespace: str, **_: Any) -> dict[str, str]:
    child = _configmap(f"{name}-child", {CHILD_LABEL: "yes"})
    kopf.adopt(child)
    _core().create_namespaced_config_map(namespace, child)
    return {"child": child["metadata"]["name"]}


@kopf.on.delete(GROUP, VERSION, PLURAL)
@kopf.on.delete("", "v1", "configmaps", labels={CHILD_LABEL: "yes"})
def leave_marker(name: str, namespace: str, **_: Any) -> None:
    _core().create_namespaced_config_map(
        namespace, _configmap(f"deleted-{name}", {MARKER_LABEL: "yes"}))
