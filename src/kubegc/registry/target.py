"""What a request addresses (``Target``) and the stored form of objects.

Objects are stored as JSON without ``metadata.resourceVersion``; on the way out the
storage ``mod_revision`` becomes the opaque string ``resourceVersion`` (this module and
``watch_cache`` are the only places that convert).
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from kubegc.api.errors import GroupResource
from kubegc.api.resources import ResourceInfo
from kubegc.api.types import Obj
from kubegc.registry.keys import key_for
from kubegc.storage import KeyValue


@dataclass(frozen=True, slots=True)
class Target:
    """What a request addresses: a resource, the version it is served at, a namespace."""

    info: ResourceInfo
    version: str
    namespace: str = ""

    @property
    def gr(self) -> GroupResource:
        return GroupResource(self.info.group, self.info.resource)

    def key(self, name: str) -> str:
        return key_for(self.info, self.namespace, name)


def encode(obj: Obj) -> bytes:
    meta = obj.get("metadata") or {}
    if "resourceVersion" in meta:
        meta = {k: v for k, v in meta.items() if k != "resourceVersion"}
        obj = {**obj, "metadata": meta}
    return orjson.dumps(obj)


def decode(kv: KeyValue) -> Obj:
    obj: Obj = orjson.loads(kv.value)
    obj.setdefault("metadata", {})["resourceVersion"] = str(kv.mod_revision)
    return obj


def same_object(a: Obj, b: Obj) -> bool:
    """Equal but for resourceVersion and managedFields (a no-op write is skipped)."""
    ma, mb = a.get("metadata") or {}, b.get("metadata") or {}
    skip = ("resourceVersion", "managedFields")
    if {k: v for k, v in ma.items() if k not in skip} != {
        k: v for k, v in mb.items() if k not in skip
    }:
        return False
    return {k: v for k, v in a.items() if k != "metadata"} == {
        k: v for k, v in b.items() if k != "metadata"
    }
