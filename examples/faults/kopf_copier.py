"""The copier of ``copier.py`` as a kopf operator: for every ConfigMap labelled
``copy=yes``, a ConfigMap ``<name>-copy`` with the same data, owned by it.

What makes it survive the faults of docs/faults.md (``test_kopf_copier.py``):

* kopf's watches have a server and a client timeout (``hang``: a stalled watch is
  abandoned and re-established), kopf re-watches a closed stream and relists on 410
  (``closeWatch``, ``expireWatch``);
* a handler that fails is retried (``backoff=1``: after a second, not kopf's default
  minute) — a 409, a 429 or a 5xx of its writes raises, and kopf tries again; a create
  answered AlreadyExists (a stale read) is read again and updated;
* a timer re-reconciles every few seconds (level-triggered): a copy the garbage collector
  collected (its owner was deleted and recreated) is written again for the new owner.
"""

from __future__ import annotations

from typing import Any

import kopf
from kubernetes import client, config
from kubernetes.client.rest import ApiException

AGENT = "kopf-copier/1.0"
REQUEST_TIMEOUT = 3.0


def _core() -> client.CoreV1Api:
    configuration = client.Configuration()
    config.load_kube_config(client_configuration=configuration)
    configuration.retries = 0
    api = client.ApiClient(configuration)
    api.user_agent = AGENT
    return client.CoreV1Api(api)


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, memo: kopf.Memo, **_: Any) -> None:
    settings.watching.server_timeout = 5
    settings.watching.client_timeout = 8
    settings.watching.connect_timeout = 3
    settings.networking.request_timeout = 5
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage()
    settings.posting.enabled = False
    memo.core = _core()


@kopf.on.resume("configmaps", labels={"copy": "yes"}, backoff=1)
@kopf.on.create("configmaps", labels={"copy": "yes"}, backoff=1)
@kopf.on.update("configmaps", labels={"copy": "yes"}, field="data", backoff=1)
@kopf.timer("configmaps", labels={"copy": "yes"}, interval=3, idle=1, backoff=1)
def reconcile(body: kopf.Body, memo: kopf.Memo, **_: Any) -> None:
    core: client.CoreV1Api = memo.core
    meta = body["metadata"]
    ns, name, uid = meta["namespace"], f"{meta['name']}-copy", meta["uid"]
    want = {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": ns, "ownerReferences": [{
                "apiVersion": "v1", "kind": "ConfigMap", "name": meta["name"], "uid": uid,
                "controller": True, "blockOwnerDeletion": True}]},
            "data": dict(body.get("data") or {})}
    try:
        current = core.read_namespaced_config_map(name, ns, _request_timeout=REQUEST_TIMEOUT)
    except ApiException as e:
        if e.status != 404:
            raise kopf.TemporaryError(f"reading {name}: {e.status}", delay=1) from e
        current = None
    if current is not None and not any(r.uid == uid for r in
                                       current.metadata.owner_references or []):
        raise kopf.TemporaryError(f"{name} belongs to a former {meta['name']}", delay=1)
    try:
        if current is None:
            core.create_namespaced_config_map(ns, want, _request_timeout=REQUEST_TIMEOUT)
        elif (current.data or {}) != want["data"]:
            want["metadata"]["resourceVersion"] = current.metadata.resource_version
            core.replace_namespaced_config_map(name, ns, want,
                                               _request_timeout=REQUEST_TIMEOUT)
    except ApiException as e:
        raise kopf.TemporaryError(f"writing {name}: {e.status}", delay=1) from e
