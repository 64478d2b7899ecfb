"""The Site operator of seed 001, written with kopf: one Site owns two ConfigMaps, a Service
and a Secret, and holds a finalizer that cleans up state outside the cluster.

    kubectl apply -f examples/site-crd.yaml
    kopf run --standalone -A examples/site_operator.py      # KUBECONFIG points at the cluster

What it does:

* on create: makes ``<site>-config`` and ``<site>-content`` (ConfigMaps), ``<site>``
  (Service) and ``<site>-credentials`` (Secret), each with an ownerReference to the Site
  (``controller: true``, ``blockOwnerDeletion: true``, the Site's *current* uid — read from
  the event, never cached), so the garbage collector removes them with it;
* it also provisions "outside state" the garbage collector knows nothing about. In the lab
  a ConfigMap ``labhub-outside/<namespace>.<site>`` stands for it (a cloud load balancer,
  a DNS record: something that costs money while it exists);
* on delete: kopf's finalizer ``own.labhub.io/cleanup`` keeps the Site (Terminating)
  until this handler has removed the outside state; then kopf removes the finalizer.
  Strip that finalizer by hand and the outside state stays behind — that is the point;
* while it runs it holds the Lease ``labhub-system/site-operator.own.labhub.io``
  (renewed every 5 s, 15 s long, released on a clean exit), which is how ``kubegc doctor``
  tells whether whoever removes ``own.labhub.io/cleanup`` is alive.

Uses the official ``kubernetes`` client for the children (``pip install kopf kubernetes``).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
import os
import socket
from typing import Any

import kopf
import kubernetes

GROUP, VERSION, PLURAL = "own.labhub.io", "v1", "sites"
FINALIZER = "own.labhub.io/cleanup"
OUTSIDE_NAMESPACE = "labhub-outside"
LEASE_NAMESPACE, LEASE_NAME = "labhub-system", "site-operator.own.labhub.io"
LEASE_SECONDS, RENEW_EVERY = 15, 5.0

Logger = logging.Logger | logging.LoggerAdapter[Any]
_api: kubernetes.client.ApiClient | None = None


def api() -> kubernetes.client.ApiClient:
    """The kubernetes client, configured from $KUBECONFIG on first use."""
    global _api
    if _api is None:
        configuration = kubernetes.client.Configuration()
        kubernetes.config.load_kube_config(  # type: ignore[no-untyped-call]
            config_file=os.environ.get("KUBECONFIG"), client_configuration=configuration)
        _api = kubernetes.client.ApiClient(configuration)
    return _api


def core() -> kubernetes.client.CoreV1Api:
    return kubernetes.client.CoreV1Api(api())


@kopf.on.login()
def login(**kwargs: Any) -> kopf.ConnectionInfo | None:
    return kopf.login_with_kubeconfig(**kwargs)


@kopf.on.startup()
async def startup(settings: kopf.OperatorSettings, memo: kopf.Memo, **_: Any) -> None:
    settings.persistence.finalizer = FINALIZER
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix=GROUP)
    settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(
        prefix=GROUP, key="last-handled-configuration")
    settings.posting.level = logging.WARNING
    for ns in (OUTSIDE_NAMESPACE, LEASE_NAMESPACE):
        await asyncio.to_thread(_ensure_namespace, ns)
    memo.identity = f"{socket.gethostname()}-{os.getpid()}"
    memo.heartbeat = asyncio.create_task(_hold_lease(memo.identity))


@kopf.on.cleanup()
async def cleanup(memo: kopf.Memo, **_: Any) -> None:
    task = memo.get("heartbeat")
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    await asyncio.to_thread(_release_lease)


@kopf.on.create(GROUP, VERSION, PLURAL)
def create_site(body: kopf.Body, name: str, namespace: str | None, spec: kopf.Spec,
                logger: Logger, **_: Any) -> dict[str, str]:
    namespace = namespace or "default"
    tier = str(spec.get("tier", "web"))
    children: list[dict[str, Any]] = [
        _obj("ConfigMap", f"{name}-config", data={"site": name, "tier": tier}),
        _obj("ConfigMap", f"{name}-content", data={"index.html": f"<h1>{name}</h1>"}),
        _obj("Service", name, spec={"selector": {"site": name},
                                    "ports": [{"port": 80, "targetPort": 8080}]}),
        _obj("Secret", f"{name}-credentials", stringData={"password": f"{name}-secret"}),
    ]
    kopf.adopt(children, owner=body)  # ownerReferences with the Site's uid from this event
    client = core()
    for child in children:
        create = {"ConfigMap": client.create_namespaced_config_map,
                  "Service": client.create_namespaced_service,
                  "Secret": client.create_namespaced_secret}[child["kind"]]
        _create(create, namespace, child)
    outside = _obj("ConfigMap", f"{namespace}.{name}",
                   data={"site": f"{namespace}/{name}", "billing": "running"})
    _create(client.create_namespaced_config_map, OUTSIDE_NAMESPACE, outside)
    logger.info("site %s/%s provisioned", namespace, name)
    return {"children": "4", "outside": f"{OUTSIDE_NAMESPACE}/{namespace}.{name}"}


@kopf.on.delete(GROUP, VERSION, PLURAL)
def delete_site(name: str, namespace: str | None, logger: Logger, **_: Any) -> None:
    """Release the outside state; only then may the Site go (kopf removes the finalizer)."""
    try:
        core().delete_namespaced_config_map(f"{namespace}.{name}", OUTSIDE_NAMESPACE)
    except kubernetes.client.ApiException as e:
        if e.status != 404:
            raise
    logger.info("outside state of %s/%s released", namespace, name)


def _obj(kind: str, name: str, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": kind, "metadata": {"name": name}, **fields}


def _create(create: Any, namespace: str, body: dict[str, Any]) -> None:
    try:
        create(namespace, body)
    except kubernetes.client.ApiException as e:
        if e.status != 409:  # already there: a retried handler
            raise


def _ensure_namespace(name: str) -> None:
    with contextlib.suppress(kubernetes.client.ApiException):
        core().create_namespace(kubernetes.client.V1Namespace(
            metadata=kubernetes.client.V1ObjectMeta(name=name)))


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _lease_body(holder: str | None) -> dict[str, Any]:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            # names the finalizer this operator removes, so that `kubegc doctor` and `kubegc
            # plan` can tell who removes it (docs/tools.md, "Who removes a finalizer")
            "metadata": {"name": LEASE_NAME, "namespace": LEASE_NAMESPACE,
                         "annotations": {"kubegc.io/removes-finalizers": FINALIZER}},
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": LEASE_SECONDS,
                     "renewTime": _now()}}


def _write_lease(holder: str | None) -> None:
    leases = kubernetes.client.CoordinationV1Api(api())
    body: Any = _lease_body(holder)  # the client accepts plain dicts as bodies
    try:
        leases.patch_namespaced_lease(LEASE_NAME, LEASE_NAMESPACE, body)
    except kubernetes.client.ApiException as e:
        if e.status != 404:
            raise
        leases.create_namespaced_lease(LEASE_NAMESPACE, body)


async def _hold_lease(identity: str) -> None:
    while True:
        try:
            await asyncio.to_thread(_write_lease, identity)
        except Exception:  # keep trying: a missed renewal only makes the lease look stale
            logging.getLogger(__name__).exception("renewing the lease failed")
        await asyncio.sleep(RENEW_EVERY)


def _release_lease() -> None:
    with contextlib.suppress(Exception):
        _write_lease(None)
