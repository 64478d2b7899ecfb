"""Pods, claims and volumes for the volume controllers' unit tests."""

from __future__ import annotations

from typing import Any

from kubegc.api.types import Obj


def pod(name: str = "p", *, node: str = "n1", claim: str = "", ephemeral: str = "",
        uid: str = "", **meta: Any) -> Obj:
    volumes: list[dict[str, Any]] = []
    if claim:
        volumes.append({"name": "data", "persistentVolumeClaim": {"claimName": claim}})
    if ephemeral:
        volumes.append({"name": ephemeral, "ephemeral": {"volumeClaimTemplate": {
            "metadata": {"labels": {"app": "x"}},
            "spec": {"accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}}}}})
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}], "volumes": volumes}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ns", "uid": uid or f"uid-{name}", **meta},
            "spec": spec, "status": {"phase": "Running"}}


def pvc(name: str = "data", *, finalizers: tuple[str, ...] = ("kubernetes.io/pvc-protection",),
        deleting: bool = False, owner: Obj | None = None) -> Obj:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": f"uid-pvc-{name}",
                            "finalizers": list(finalizers)}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod",
                                    "name": owner["metadata"]["name"],
                                    "uid": owner["metadata"]["uid"], "controller": True,
                                    "blockOwnerDeletion": True}]
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
            "spec": {"accessModes": ["ReadWriteOnce"]}}


def pv(name: str = "vol", *, phase: str = "Bound", deleting: bool = False,
       finalizers: tuple[str, ...] = ("kubernetes.io/pv-protection",)) -> Obj:
    meta: dict[str, Any] = {"name": name, "uid": f"uid-pv-{name}",
                            "finalizers": list(finalizers)}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta,
            "spec": {"claimRef": {"namespace": "ns", "name": "data"}},
            "status": {"phase": phase}}
