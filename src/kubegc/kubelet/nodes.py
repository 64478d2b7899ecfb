"""Simulated nodes: registration, status heartbeats and node leases (cf. the kubelet's
``registerWithAPIServer``, ``updateNodeStatus`` and ``pkg/kubelet/nodelease``).

``kubegc serve --nodes N`` runs one simulated kubelet per node ``kubegc-node-1`` ..
``kubegc-node-N``. Each node is registered with a Ready status, capacity and allocatable
(``cpu``, ``memory``, ``pods``), ``nodeInfo`` (kubelet ``v1.32.0``), an InternalIP and
Hostname address and a pod CIDR carved out of ``10.244.0.0/16``; its pods get IPs from
that CIDR (``PodIPAllocator``). A ``Lease`` per node in ``kube-node-lease`` (owned by its
Node, so deleting the Node garbage-collects the Lease) is renewed every
``LEASE_RENEW_INTERVAL`` seconds of the injected clock, and the node status heartbeat is
re-posted every ``NODE_STATUS_REPORT_FREQUENCY`` seconds, as upstream does when leases
are on.

A node deleted through the API stays deleted: its simulated kubelet stops renewing its
Lease and stops running pods (the pod GC then removes them, as upstream).

The annotation ``kubegc.io/kubelet: stopped`` on a Node stops its kubelet, as a crashed
kubelet or a lost machine: no status heartbeat, no Lease renewal, no pod sync (the node
lifecycle controller then marks the node Unknown). ``running``, or removing the annotation,
starts it again: it posts its status and renews its Lease at once, as a restarted kubelet.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import ipaddress
import logging
import math
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from kubegc.api.clock import Clock, format_micro_time, format_time
from kubegc.api.errors import StatusError, is_already_exists, is_conflict, is_not_found
from kubegc.api.meta import uid_of
from kubegc.api.pod import NODES
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.interface import Client
from kubegc.component.config import KubeletConfiguration

log = logging.getLogger(__name__)

LEASES = GroupVersionResource("coordination.k8s.io", "v1", "leases")

NODE_NAME_PREFIX = "kubegc-node-"
KUBELET_VERSION = "v1.32.0"
CONTAINER_RUNTIME_VERSION = "containerd://1.7.24"
NODE_LEASE_NAMESPACE = "kube-node-lease"
#: upstream kubelet defaults: nodeLeaseDurationSeconds 40, renewed every 25 % of it
LEASE_DURATION_SECONDS = 40
LEASE_RENEW_INTERVAL = 10.0
#: upstream nodeStatusReportFrequency (5 minutes when node leases are on)
NODE_STATUS_REPORT_FREQUENCY = 300.0
CLUSTER_CIDR = ipaddress.IPv4Network("10.244.0.0/16")
#: used when N nodes do not fit in CLUSTER_CIDR (more than 256 nodes of a /24)
WIDE_CLUSTER_CIDR = ipaddress.IPv4Network("10.128.0.0/9")
FIRST_NODE_IP = ipaddress.IPv4Address("172.18.0.2")  # as kind numbers its nodes
#: the user's switch of a simulated kubelet: ``stopped`` or ``running`` (the default)
KUBELET_ANNOTATION = "kubegc.io/kubelet"
KUBELET_STOPPED = "stopped"

_NODE_CONDITIONS = (
    ("MemoryPressure", "False", "KubeletHasSufficientMemory",
     "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
)


def is_kubelet_stopped(node: Obj) -> bool:
    """Whether the user stopped the node's kubelet (annotation ``kubegc.io/kubelet``)."""
    annotations = (node.get("metadata") or {}).get("annotations") or {}
    return annotations.get(KUBELET_ANNOTATION) == KUBELET_STOPPED


def node_names(count: int) -> list[str]:
    """The names of ``count`` simulated nodes: ``kubegc-node-1`` .. ``kubegc-node-<count>``."""
    return [f"{NODE_NAME_PREFIX}{i}" for i in range(1, count + 1)]


def node_index(name: str) -> int:
    """1 for ``kubegc-node-1``; ValueError for a name that is not a simulated node's."""
    if not name.startswith(NODE_NAME_PREFIX) or not name[len(NODE_NAME_PREFIX):].isdigit():
        raise ValueError(f"{name!r} is not a simulated node name")
    return int(name[len(NODE_NAME_PREFIX):])


def node_ip(index: int) -> str:
    """The InternalIP of node ``index`` (1-based): 172.18.0.2, 172.18.0.3, ..."""
    return str(FIRST_NODE_IP + (index - 1))


def pod_cidr(index: int, *, nodes: int, max_pods: int = KubeletConfiguration.node_max_pods,
             ) -> ipaddress.IPv4Network:
    """Node ``index``'s pod CIDR: the ``index``-th subnet (a /24 unless ``max_pods`` needs a
    larger one) of 10.244.0.0/16, or of 10.128.0.0/9 when the nodes do not fit."""
    prefix = min(24, 32 - math.ceil(math.log2(max_pods + 3)))
    cluster = CLUSTER_CIDR
    if nodes > 2 ** (prefix - cluster.prefixlen):
        cluster = WIDE_CLUSTER_CIDR
    if nodes > 2 ** (prefix - cluster.prefixlen):
        raise ValueError(f"{nodes} nodes of {max_pods} pods do not fit in {cluster}")
    size = 2 ** (32 - prefix)
    return ipaddress.IPv4Network((int(cluster.network_address) + (index - 1) * size, prefix))


def _hex_id(*parts: str, length: int = 32) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:length]


def node_conditions(now: datetime, previous: Iterable[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    """The four kubelet-owned node conditions, healthy; a condition whose status did not
    change keeps its ``lastTransitionTime``."""
    old = {c.get("type"): c for c in previous}
    stamp = format_time(now)
    out = []
    for type_, status, reason, message in _NODE_CONDITIONS:
        prior = old.get(type_)
        transition = (prior.get("lastTransitionTime") if prior and prior.get("status") == status
                      else stamp)
        out.append({"type": type_, "status": status, "lastHeartbeatTime": stamp,
                    "lastTransitionTime": transition, "reason": reason, "message": message})
    return out


def node_status(name: str, index: int, *, now: datetime, max_pods: int,
                previous: Iterable[dict[str, Any]] = ()) -> dict[str, Any]:
    resources = {"cpu": "4", "ephemeral-storage": "100Gi", "hugepages-1Gi": "0",
                 "hugepages-2Mi": "0", "memory": "16Gi", "pods": str(max_pods)}
    return {
        "capacity": dict(resources),
        "allocatable": dict(resources),
        "conditions": node_conditions(now, previous),
        "addresses": [{"type": "InternalIP", "address": node_ip(index)},
                      {"type": "Hostname", "address": name}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "machineID": _hex_id("machine", name), "systemUUID": _hex_id("system", name),
            "bootID": _hex_id("boot", name), "kernelVersion": "6.1.0-kubegc",
            "osImage": "kubegc simulated node", "containerRuntimeVersion":
                CONTAINER_RUNTIME_VERSION, "kubeletVersion": KUBELET_VERSION,
            "kubeProxyVersion": KUBELET_VERSION, "operatingSystem": "linux",
            "architecture": "amd64",
        },
    }


def build_node(name: str, *, nodes: int, now: datetime,
               max_pods: int = KubeletConfiguration.node_max_pods) -> Obj:
    """The Node object a simulated kubelet registers."""
    index = node_index(name)
    cidr = str(pod_cidr(index, nodes=nodes, max_pods=max_pods))
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
                       "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name,
                       "kubernetes.io/os": "linux"},
            "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                            "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
        },
        "spec": {"podCIDR": cidr, "podCIDRs": [cidr], "providerID": f"kubegc://{name}"},
        "status": node_status(name, index, now=now, max_pods=max_pods),
    }


def build_lease(node: Obj, *, now: datetime) -> Obj:
    """The node's Lease in ``kube-node-lease``, owned by the Node (cf. ``newLease``)."""
    name = str(node["metadata"]["name"])
    return {
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": name, "namespace": NODE_LEASE_NAMESPACE, "ownerReferences": [
            {"apiVersion": "v1", "kind": "Node", "name": name, "uid": uid_of(node)}]},
        "spec": {"holderIdentity": name, "leaseDurationSeconds": LEASE_DURATION_SECONDS,
                 "renewTime": format_micro_time(now)},
    }


class PodIPAllocator:
    """Hands out pod IPs of one node's CIDR sequentially (as host-local IPAM does),
    skipping the network, gateway (.1) and broadcast addresses and addresses in use.

    Ownership: the node's kubelet; one event loop, no locking."""

    def __init__(self, cidr: ipaddress.IPv4Network) -> None:
        self.cidr = cidr
        self._first = int(cidr.network_address) + 2
        self._last = int(cidr.broadcast_address) - 1
        self._next = self._first
        self._by_uid: dict[str, str] = {}
        self._used: set[str] = set()

    def allocate(self, uid: str) -> str:
        """The IP of pod ``uid`` (the same one on repeated calls). RuntimeError when full."""
        if uid in self._by_uid:
            return self._by_uid[uid]
        span = self._last - self._first + 1
        for offset in range(span):
            candidate = self._first + (self._next - self._first + offset) % span
            ip = str(ipaddress.IPv4Address(candidate))
            if ip not in self._used:
                self._next = candidate + 1 if candidate < self._last else self._first
                self.adopt(uid, ip)
                return ip
        raise RuntimeError(f"no free pod IP left in {self.cidr}")

    def adopt(self, uid: str, ip: str) -> None:
        """Record that pod ``uid`` already holds ``ip`` (after a restart)."""
        self._by_uid[uid] = ip
        self._used.add(ip)

    def release(self, uid: str) -> None:
        ip = self._by_uid.pop(uid, None)
        if ip is not None:
            self._used.discard(ip)

    def __len__(self) -> int:
        return len(self._by_uid)


class NodeStatusReporter:
    """Registers the simulated nodes and keeps their leases and statuses fresh.

    Ownership: ``register`` then ``run`` in one task of the kubelet controller; the
    kubelet reads ``registered`` and ``node_uid``. ``forget(name)`` (a node deleted
    through the API) stops the heartbeats of that node for good."""

    def __init__(self, client: Client, *, clock: Clock, names: list[str],
                 max_pods: int = KubeletConfiguration.node_max_pods) -> None:
        self.client = client
        self.clock = clock
        self.names = list(names)
        self.max_pods = max_pods
        self.registered: dict[str, Obj] = {}
        self._leases: dict[str, Obj] = {}
        self._forgotten: set[str] = set()
        #: nodes whose kubelet the user stopped: no heartbeats until ``resume``
        self.stopped: set[str] = set()
        self._last_status = 0.0

    def node_uid(self, name: str) -> str:
        node = self.registered.get(name)
        return uid_of(node) if node is not None else ""

    def forget(self, name: str) -> None:
        self._forgotten.add(name)
        self.registered.pop(name, None)
        self._leases.pop(name, None)

    def pause(self, name: str) -> None:
        """The kubelet of ``name`` stopped: no status, no Lease renewal."""
        self.stopped.add(name)

    async def resume(self, name: str) -> None:
        """The kubelet of ``name`` started again: status and Lease at once."""
        if name not in self.stopped:
            return
        self.stopped.discard(name)
        if name in self.registered:
            await self._post_status(name)
            await self.renew_lease(name)

    async def register(self) -> None:
        """Create (or, after a restart, refresh) every node and its lease."""
        for name in self.names:
            try:
                await self._register_node(name)
                await self.renew_lease(name)
            except StatusError as exc:
                log.error("unable to register node %s: %s", name, exc)
        self._last_status = self.clock.monotonic()

    async def run(self) -> None:
        """Renew leases every ``LEASE_RENEW_INTERVAL``; re-post node status every
        ``NODE_STATUS_REPORT_FREQUENCY`` (until cancelled)."""
        while True:
            await self.clock.sleep(LEASE_RENEW_INTERVAL)
            report = self.clock.monotonic() - self._last_status >= NODE_STATUS_REPORT_FREQUENCY
            for name in self.names:  # registrations that failed are retried
                if name not in self.registered and name not in self._forgotten:
                    with contextlib.suppress(StatusError):
                        await self._register_node(name)
            for name in [n for n in self.registered if n not in self.stopped]:
                try:
                    await self.renew_lease(name)
                    if report:
                        await self._post_status(name)
                except StatusError as exc:
                    log.warning("heartbeat of node %s failed: %s", name, exc)
            if report:
                self._last_status = self.clock.monotonic()

    async def _register_node(self, name: str) -> None:
        now = self.clock.now()
        node = build_node(name, nodes=len(self.names), now=now, max_pods=self.max_pods)
        try:
            created = await self.client.create(NODES, node)
        except StatusError as exc:
            if not is_already_exists(exc):
                raise
            created = await self.client.get(NODES, name)
        self.registered[name] = created
        if is_kubelet_stopped(created):
            self.stopped.add(name)
            return
        await self._post_status(name)

    async def _post_status(self, name: str) -> None:
        if name in self._forgotten or name in self.stopped:
            return
        try:
            current = await self.client.get(NODES, name)
        except StatusError as exc:
            if is_not_found(exc):
                self.forget(name)
                return
            raise
        updated = copy.deepcopy(current)
        previous = (current.get("status") or {}).get("conditions") or []
        updated["status"] = node_status(name, node_index(name), now=self.clock.now(),
                                        max_pods=self.max_pods, previous=previous)
        with contextlib.suppress(StatusError):
            self.registered[name] = await self.client.update(NODES, updated, subresource="status")

    async def renew_lease(self, name: str) -> None:
        node = self.registered.get(name)
        if node is None or name in self._forgotten or name in self.stopped:
            return
        lease = self._leases.get(name)
        if lease is None:  # cf. ensureLease: read it, or create it
            try:
                lease = await self.client.get(LEASES, name, namespace=NODE_LEASE_NAMESPACE)
            except StatusError as exc:
                if not is_not_found(exc):
                    raise
                fresh = build_lease(node, now=self.clock.now())
                self._leases[name] = await self.client.create(LEASES, fresh,
                                                              namespace=NODE_LEASE_NAMESPACE)
                return
        lease = copy.deepcopy(lease)
        lease["spec"].update(build_lease(node, now=self.clock.now())["spec"])
        lease["metadata"]["ownerReferences"] = build_lease(
            node, now=self.clock.now())["metadata"]["ownerReferences"]
        try:
            self._leases[name] = await self.client.update(LEASES, lease,
                                                          namespace=NODE_LEASE_NAMESPACE)
        except StatusError as exc:
            if not (is_conflict(exc) or is_not_found(exc)):
                raise
            self._leases.pop(name, None)  # re-read (or re-create) on the next renewal
