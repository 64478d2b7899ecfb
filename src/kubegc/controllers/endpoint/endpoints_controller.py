"""The endpoints controller: an ``Endpoints`` object per Service with a selector (cf.
pkg/controller/endpoint/endpoints_controller.go ``syncService``).

A pod is listed when it matches the selector, has a ``podIP``, is not in a terminal
phase and has no ``deletionTimestamp`` (``ShouldPodBeInEndpoints`` without
terminating pods): a pod being deleted leaves its Services' endpoints at once, before its
processes even get TERM (docs/kubelet.md, Termination). Ready pods go to ``addresses``, the
others to ``notReadyAddresses`` (all to ``addresses`` with ``publishNotReadyAddresses``).
Addresses carry ``ip``, ``nodeName`` and a ``targetRef`` to the pod; each Service port
becomes an endpoint port (named ``targetPort``s resolved against the pod's container
ports), and subsets are packed as ``RepackSubsets`` does: ports with the same address
sets share one subset, addresses sorted by IP.

The Endpoints object gets the Service's labels (plus ``service.kubernetes.io/headless``
for headless Services). Services without a selector are left alone (their Endpoints are
the user's); the Endpoints of a deleted Service are deleted.
"""

from __future__ import annotations

import contextlib
import ipaddress
from typing import Any

from kubegc.api.errors import StatusError, is_already_exists, is_not_found
from kubegc.api.labels import selector_from_set
from kubegc.api.meta import ObjectReference, is_being_deleted, name_of, namespace_of, uid_of
from kubegc.api.pod import PODS
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.cache import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    FuncHandler,
    meta_namespace_index_func,
)
from kubegc.client.interface import DeleteOptions
from kubegc.component import objects
from kubegc.component.base_controller import BaseController
from kubegc.component.config import EndpointControllerConfiguration
from kubegc.component.context import ControllerContext
from kubegc.component.deletions import SERVICE_DELETED, Deletion, DeletionSink, NullDeletionSink

SERVICES = GroupVersionResource("", "v1", "services")
ENDPOINTS = GroupVersionResource("", "v1", "endpoints")
HEADLESS_LABEL = "service.kubernetes.io/headless"


def is_pod_ready(pod: Obj) -> bool:
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return bool(condition.get("status") == "True")
    return False


def should_pod_be_in_endpoints(pod: Obj) -> bool:
    status = pod.get("status") or {}
    return bool(status.get("podIP")) and status.get("phase") not in ("Succeeded", "Failed") and (
        not is_being_deleted(pod))


def find_port(pod: Obj, service_port: dict[str, Any]) -> int | None:
    """The container port a Service port targets on ``pod`` (cf. ``podutil.FindPort``)."""
    target = service_port.get("targetPort", service_port.get("port"))
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    protocol = service_port.get("protocol") or "TCP"
    for container in (pod.get("spec") or {}).get("containers") or []:
        for port in container.get("ports") or []:
            if port.get("name") == target and (port.get("protocol") or "TCP") == protocol:
                return int(port["containerPort"])
    return None


def endpoint_address(pod: Obj) -> dict[str, Any]:
    spec = pod.get("spec") or {}
    address: dict[str, Any] = {"ip": pod["status"]["podIP"]}
    if spec.get("nodeName"):
        address["nodeName"] = spec["nodeName"]
    address["targetRef"] = {"kind": "Pod", "namespace": namespace_of(pod), "name": name_of(pod),
                            "uid": uid_of(pod)}
    return address


def _endpoint_port(service_port: dict[str, Any], number: int) -> dict[str, Any]:
    port: dict[str, Any] = {"port": number, "protocol": service_port.get("protocol") or "TCP"}
    if service_port.get("name"):
        port["name"] = service_port["name"]
    if service_port.get("appProtocol"):
        port["appProtocol"] = service_port["appProtocol"]
    return port


def _ip_key(address: dict[str, Any]) -> tuple[int, str]:
    try:
        return int(ipaddress.ip_address(address["ip"])), address.get("targetRef", {}).get("uid", "")
    except ValueError:
        return 0, str(address["ip"])


def compute_subsets(service: Obj, pods: list[Obj]) -> list[dict[str, Any]]:
    """The ``subsets`` of ``service``'s Endpoints given the candidate ``pods``."""
    spec = service.get("spec") or {}
    tolerate_unready = bool(spec.get("publishNotReadyAddresses"))
    headless = spec.get("clusterIP") == "None"
    ports = spec.get("ports") or []
    # port (as a hashable tuple) -> (ready addresses, not-ready addresses) by IP
    by_port: dict[tuple[Any, ...], tuple[dict[str, Any], dict[str, Any]]] = {}
    for pod in pods:
        if not should_pod_be_in_endpoints(pod):
            continue
        ready = tolerate_unready or is_pod_ready(pod)
        address = endpoint_address(pod)
        wanted: list[dict[str, Any] | None] = [] if ports else ([None] if headless else [])
        for sp in ports:
            number = find_port(pod, sp)
            if number is not None:
                wanted.append(_endpoint_port(sp, number))
        for port in wanted:
            key = tuple(sorted(port.items())) if port else ()
            slot = by_port.setdefault(key, ({}, {}))
            slot[0 if ready else 1][address["ip"]] = address
    groups: dict[tuple[tuple[str, ...], tuple[str, ...]], list[tuple[Any, ...]]] = {}
    for key, (ready_addrs, unready_addrs) in by_port.items():
        same_addresses = (tuple(sorted(ready_addrs)), tuple(sorted(unready_addrs)))
        groups.setdefault(same_addresses, []).append(key)
    subsets = []
    for port_keys in groups.values():
        ready_addrs, unready_addrs = by_port[port_keys[0]]
        subset: dict[str, Any] = {}
        if ready_addrs:
            subset["addresses"] = sorted(ready_addrs.values(), key=_ip_key)
        if unready_addrs:
            subset["notReadyAddresses"] = sorted(unready_addrs.values(), key=_ip_key)
        real_ports = [dict(k) for k in port_keys if k]
        if real_ports:
            subset["ports"] = sorted(real_ports, key=lambda p: (p.get("name", ""), p["port"]))
        subsets.append(subset)
    return sorted(subsets, key=lambda s: _ip_key((s.get("addresses") or s["notReadyAddresses"])[0]))


def desired_labels(service: Obj) -> dict[str, str]:
    labels = dict((service.get("metadata") or {}).get("labels") or {})
    if (service.get("spec") or {}).get("clusterIP") == "None":
        labels[HEADLESS_LABEL] = ""
    else:
        labels.pop(HEADLESS_LABEL, None)
    return labels


class EndpointsController(BaseController):
    """Keeps Endpoints in step with Services and pods. Handlers only enqueue Service
    keys; one worker at a time syncs a Service."""

    name = "endpoints"
    component = "endpoint-controller"

    def __init__(self, ctx: ControllerContext[EndpointControllerConfiguration], *,
                 deletions: DeletionSink | None = None) -> None:
        super().__init__(ctx, workers=ctx.options.concurrent_endpoint_syncs)
        #: where each Endpoints it deleted is recorded (``kubegc why``)
        self.deletions = deletions if deletions is not None else NullDeletionSink()
        self.services = self.informer_factory.for_resource(SERVICES)
        self.pods = self.informer_factory.for_resource(PODS)
        self.endpoints = self.informer_factory.for_resource(ENDPOINTS)
        self.synced_informers = [self.services, self.pods, self.endpoints]
        self.primary_informer = self.services

    def register_handlers(self) -> None:
        for informer in (self.services, self.pods):
            with contextlib.suppress(ValueError):  # another controller added it already
                informer.indexer.add_indexers({NAMESPACE_INDEX: meta_namespace_index_func})
        self.services.add_event_handler(FuncHandler(
            add=lambda obj, _: self._enqueue(obj), update=lambda _, new: self._enqueue(new),
            delete=lambda obj: self._enqueue(_unwrap(obj))))
        self.pods.add_event_handler(FuncHandler(
            add=lambda obj, _: self._on_pod(None, obj), update=self._on_pod,
            delete=lambda obj: self._on_pod(None, _unwrap(obj))))
        self.endpoints.add_event_handler(
            FuncHandler(delete=lambda obj: self._enqueue(_unwrap(obj))))

    def _enqueue(self, obj: Obj) -> None:
        self.enqueue_key(f"{namespace_of(obj)}/{name_of(obj)}")

    def _on_pod(self, old: Obj | None, new: Obj) -> None:
        """Enqueue the Services selecting the pod before or after the change."""
        label_sets = [(new.get("metadata") or {}).get("labels") or {}]
        if old is not None:
            label_sets.append((old.get("metadata") or {}).get("labels") or {})
        for service in self.services.indexer.by_index(NAMESPACE_INDEX, namespace_of(new)):
            if not objects.SERVICE.understood(service):
                continue  # its own sync reports it; the others still hear of the pod
            selector = (service.get("spec") or {}).get("selector")
            if selector and any(selector_from_set(selector).matches(ls) for ls in label_sets):
                self._enqueue(service)

    async def sync(self, key: str) -> float | None:
        await self.sync_service(key)
        return None

    async def sync_service(self, key: str) -> None:
        namespace, _, name = key.partition("/")
        service = self.services.indexer.get_by_key(key)
        current = self.endpoints.indexer.get_by_key(key)
        if service is None:
            if current is not None:  # the Endpoints seen, not one made since
                options = DeleteOptions(preconditions_uid=uid_of(current) or None)
                with contextlib.suppress(StatusError):
                    await self.client.delete(ENDPOINTS, name, namespace=namespace,
                                             options=options)
                    self.deletions.record_deletion(Deletion(
                        self.clock.now(), self.component,
                        ObjectReference("v1", "Endpoints", name, uid_of(current), namespace),
                        SERVICE_DELETED, f"Service {namespace}/{name} is gone"))
            return
        objects.SERVICE.check(service)
        selector = (service.get("spec") or {}).get("selector")
        if not selector or is_being_deleted(service):
            return
        match = selector_from_set(selector)
        pods = [p for p in self.pods.indexer.by_index(NAMESPACE_INDEX, namespace)
                if objects.POD.understood(p)
                and match.matches((p.get("metadata") or {}).get("labels") or {})]
        subsets = compute_subsets(service, pods)
        labels = desired_labels(service)
        if current is not None and (current.get("subsets") or []) == subsets and (
                (current.get("metadata") or {}).get("labels") or {}) == labels:
            return
        await self._write(namespace, name, current, subsets, labels)

    async def _write(self, namespace: str, name: str, current: Obj | None,
                     subsets: list[dict[str, Any]], labels: dict[str, str]) -> None:
        meta: dict[str, Any] = {"name": name, "namespace": namespace}
        if labels:
            meta["labels"] = labels
        endpoints: Obj = {"apiVersion": "v1", "kind": "Endpoints", "metadata": meta}
        if subsets:
            endpoints["subsets"] = subsets
        if current is None:
            try:
                await self.client.create(ENDPOINTS, endpoints, namespace=namespace)
                return
            except StatusError as exc:
                if is_namespace_terminating(exc):
                    return  # the namespace controller is emptying it (as upstream: ignore)
                if not is_already_exists(exc):
                    raise
                current = await self.client.get(ENDPOINTS, name, namespace=namespace)
        meta["resourceVersion"] = current["metadata"].get("resourceVersion")
        for keep in ("annotations", "ownerReferences", "finalizers"):
            if current["metadata"].get(keep):
                meta[keep] = current["metadata"][keep]
        try:
            await self.client.update(ENDPOINTS, endpoints, namespace=namespace)
        except StatusError as exc:
            if not is_not_found(exc):
                raise


def is_namespace_terminating(exc: StatusError) -> bool:
    return any(c.reason == "NamespaceTerminating" for c in exc.details.causes)


def _unwrap(obj: Obj | DeletedFinalStateUnknown) -> Obj:
    return obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
