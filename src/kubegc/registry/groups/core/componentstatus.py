"""``componentstatuses``: computed, not stored (cf. pkg/registry/core/componentstatus, a
``Getter`` and ``Lister`` only: no watch, no writes).

kube-apiserver probes the scheduler, the controller manager and each etcd member.
kubegc's scheduler and controllers run in the server's own process: both are Healthy
once its controllers have synced (the ``healthy`` callable the registry is given). No
etcd member is listed, whatever the storage. Every answer carries upstream's deprecation
warning.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from kubegc.api import errors
from kubegc.api.types import Obj
from kubegc.registry.generic.rest import Getter, Lister, ListOptions
from kubegc.registry.generic.target import Target

COMPONENTS = ("controller-manager", "scheduler")


def component_status(name: str, healthy: bool) -> dict[str, Any]:
    condition = {"type": "Healthy", "status": "True" if healthy else "False",
                 "message": "ok" if healthy else "", "error": "" if healthy else (
                     "kubegc's controllers have not synced yet")}
    return {"kind": "ComponentStatus", "apiVersion": "v1",
            "metadata": {"name": name, "creationTimestamp": None},
            "conditions": [{k: v for k, v in condition.items() if v}]}


class ComponentStatusREST(Getter, Lister):
    deprecation: ClassVar[str | None] = "v1 ComponentStatus is deprecated in v1.19+"

    def __init__(self, healthy: Callable[[], bool]) -> None:
        self.healthy = healthy

    def _items(self) -> list[Obj]:
        healthy = self.healthy()
        return [component_status(n, healthy) for n in COMPONENTS]

    async def get(self, t: Target, name: str) -> Obj:
        for item in self._items():
            if item["metadata"]["name"] == name:
                return item
        raise errors.not_found(t.gr, name)

    async def list(self, t: Target, options: ListOptions) -> Obj:
        return {"kind": "ComponentStatusList", "apiVersion": "v1", "metadata": {},
                "items": self._items()}
