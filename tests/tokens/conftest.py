from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from kubegc.api import errors
from kubegc.api.errors import GroupResource
from kubegc.api.types import Obj

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def obj(kind: str, name: str, uid: str, namespace: str = "ns", **extra: Any) -> Obj:
    meta: dict[str, Any] = {"name": name, "uid": uid}
    if namespace:
        meta["namespace"] = namespace
    meta.update(extra.pop("metadata", {}))
    return {"kind": kind, "metadata": meta, **extra}


@dataclass
class FakeGetter:
    """``ServiceAccountTokenGetter`` and ``SecretsWriter`` over a dict."""

    objects: dict[tuple[str, str, str], Obj] = field(default_factory=dict)
    labelled: list[tuple[str, str, str, dict[str, str]]] = field(default_factory=list)

    def add(self, resource: str, o: Obj) -> Obj:
        meta = o["metadata"]
        self.objects[(resource, meta.get("namespace", ""), meta["name"])] = o
        return o

    def remove(self, resource: str, namespace: str, name: str) -> None:
        del self.objects[(resource, namespace, name)]

    async def _get(self, resource: str, namespace: str, name: str) -> Obj:
        try:
            return self.objects[(resource, namespace, name)]
        except KeyError:
            raise errors.not_found(GroupResource("", resource), name) from None

    async def get_service_account(self, namespace: str, name: str) -> Obj:
        return await self._get("serviceaccounts", namespace, name)

    async def get_pod(self, namespace: str, name: str) -> Obj:
        return await self._get("pods", namespace, name)

    async def get_secret(self, namespace: str, name: str) -> Obj:
        return await self._get("secrets", namespace, name)

    async def get_node(self, name: str) -> Obj:
        return await self._get("nodes", "", name)

    async def label_secret(self, namespace: str, name: str, uid: str,
                           labels: dict[str, str]) -> None:
        self.labelled.append((namespace, name, uid, dict(labels)))
