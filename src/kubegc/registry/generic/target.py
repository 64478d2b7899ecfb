"""What a request addresses (``Target``), the stored form of objects, and what a create
wrote (``Created``).

Objects are stored as JSON without ``metadata.resourceVersion``; on the way out the
storage ``mod_revision`` becomes the opaque string ``resourceVersion`` (this module and
``watch_cache`` are the only places that convert).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, replace
from typing import Any

import orjson

from kubegc.api import errors
from kubegc.api.errors import GroupResource
from kubegc.api.interning import intern_common
from kubegc.api.resources import ResourceInfo
from kubegc.api.types import Obj
from kubegc.registry.generic.keys import key_for, key_root
from kubegc.registry.generic.strategy import Strategy
from kubegc.storage import KeyValue


@dataclass(frozen=True, slots=True)
class Target:
    """What a request addresses: a resource (its discovery names and its storage's
    strategy), the version it is served at, a namespace ("" for a cluster-scoped resource,
    or a namespaced one across namespaces)."""

    info: ResourceInfo
    strategy: Strategy
    version: str
    namespace: str = ""

    @property
    def gr(self) -> GroupResource:
        return GroupResource(self.info.group, self.info.resource)

    def in_namespace(self, namespace: str) -> Target:
        """The same resource in ``namespace`` (unchanged for a cluster-scoped one)."""
        return replace(self, namespace=namespace) if self.info.namespaced else self

    def _stored_as(self) -> tuple[str, str]:
        return self.strategy.storage_resource or (self.info.group, self.info.resource)

    def key(self, name: str) -> str:
        group, resource = self._stored_as()
        return key_for(group, resource, self.namespace if self.info.namespaced else "", name)

    def key_root(self) -> str:
        """The prefix of every key this target addresses."""
        group, resource = self._stored_as()
        return key_root(group, resource, self.namespace if self.info.namespaced else "")

    def to_storage(self, obj: Obj) -> Obj:
        """The stored shape of ``obj`` (mutates and returns ``obj``, or a new object)."""
        if self.strategy.conversion is not None:
            return self.strategy.conversion.to_storage(obj)
        obj["apiVersion"] = self.info.api_version(self.info.storage_version)
        return obj

    def from_storage(self, obj: Obj, version: str | None = None) -> Obj:
        """A stored object as served at ``version`` (default: this target's); a new dict
        when it differs."""
        version = version or self.version
        if self.strategy.conversion is not None:
            return self.strategy.conversion.from_storage(obj, version)
        api_version = self.info.api_version(version)
        if obj.get("apiVersion") == api_version:
            return obj
        out = dict(obj)
        out["apiVersion"] = api_version
        return out

    @property
    def direct(self) -> bool:
        """Whether objects are served exactly as stored (no conversion), so the stored
        bytes can be sent with only ``resourceVersion`` spliced in."""
        conversion = self.strategy.conversion
        if conversion is not None:
            return conversion.served_as_stored(self.version)
        return self.version == self.info.storage_version and (
            self.strategy.storage_resource is None)


_METADATA = b'"metadata":{'
_UINT = re.compile(r"[0-9]+")


def resource_version_set(t: Target, value: Any) -> bool:
    """Whether an object to create carries a resourceVersion that storage refuses: one that
    parses as a non-zero integer (``APIObjectVersioner.ObjectResourceVersion`` is
    ``strconv.ParseUint``; etcd3 ``store.Create`` refuses only ``err == nil && version !=
    0``). Anything else — ``""``, ``"0"``, ``"v1"``, ``"-1"`` — is accepted and cleared
    (``PrepareObjectForStorage``). A non-string fails decoding into ObjectMeta (400); a
    custom resource's unstructured accessor reads it as ``""``."""
    if value is None or (t.info.custom and not isinstance(value, str)):
        return False
    if not isinstance(value, str):
        what = ("bool" if isinstance(value, bool) else "number" if isinstance(value, int | float)
                else "array" if isinstance(value, list) else "object")
        raise errors.bad_request(f"json: cannot unmarshal {what} into Go struct field "
                                 "ObjectMeta.metadata.resourceVersion of type string")
    return _UINT.fullmatch(value) is not None and 0 < int(value) < 1 << 64
_STORED_ORDER = ("apiVersion", "kind", "metadata")


def _compact(data: bytes) -> bytes:
    """``data`` in an allocation of its own size. ``orjson.dumps`` returns its bytes in a
    4 KiB block however short the JSON (measured: ~4.1 KB of RSS per 340-byte document),
    and stored values live long: in a memory store, in the watch cache's ring of 100,000
    events. The copy costs ~0.5 µs."""
    return bytes(memoryview(data))


def encode(obj: Obj) -> bytes:
    """The stored form: no resourceVersion, and ``apiVersion``, ``kind``, ``metadata`` first
    so that ``with_resource_version`` can find the top-level metadata without parsing."""
    meta = obj.get("metadata") or {}
    if "resourceVersion" in meta:
        meta = {k: v for k, v in meta.items() if k != "resourceVersion"}
    elif tuple(itertools.islice(obj, 3)) == _STORED_ORDER:
        return _compact(orjson.dumps(obj))  # already in stored order (most writes)
    head: Obj = {}
    for key in ("apiVersion", "kind"):
        if key in obj:
            head[key] = obj[key]
    head["metadata"] = meta
    head.update((k, v) for k, v in obj.items() if k not in head)
    return _compact(orjson.dumps(head))


def decode(kv: KeyValue, *, shared: bool = True) -> Obj:
    return decode_value(kv.value, kv.mod_revision, shared=shared)


def decode_value(value: bytes, revision: int, *, shared: bool = True) -> Obj:
    """The stored object at ``revision``, its repeated strings shared (``intern_common``);
    ``shared`` False for an object that lives only as long as the request (an update's
    copies, a selector's test, an answer): interning it would cost ~1 µs for nothing."""
    obj: Obj = orjson.loads(value)
    obj.setdefault("metadata", {})["resourceVersion"] = str(revision)
    return intern_common(obj) if shared else obj


def with_resource_version(value: bytes, revision: int) -> bytes:
    """The stored JSON with ``metadata.resourceVersion`` spliced in, without decoding: what
    GET, LIST and watch send for objects served in their stored version."""
    i = value.find(_METADATA)
    if i < 0 or value.count(b"{", 0, i) != 1:  # not the top-level metadata: do it slowly
        return orjson.dumps(decode_value(value, revision, shared=False))
    j = i + len(_METADATA)
    rv = b'"resourceVersion":"%d"' % revision
    return value[:j] + rv + (b"" if value[j:j + 1] == b"}" else b",") + value[j:]


def same_object(a: Obj, b: Obj) -> bool:
    """Equal but for resourceVersion: writing ``b`` over ``a`` would change nothing (a
    no-op write is skipped). managedFields count: a write that changes only them (a
    co-owner's apply, a client replacing or clearing them) is a write."""
    return _equal_but(a, b, ("resourceVersion",))


def same_content(a: Obj, b: Obj) -> bool:
    """Equal but for resourceVersion and managedFields: whether a writer changed anything
    its managedFields entry would record."""
    return _equal_but(a, b, ("resourceVersion", "managedFields"))


def _equal_but(a: Obj, b: Obj, skip: tuple[str, ...]) -> bool:
    ma, mb = a.get("metadata") or {}, b.get("metadata") or {}
    if {k: v for k, v in ma.items() if k not in skip} != {
        k: v for k, v in mb.items() if k not in skip
    }:
        return False
    return {k: v for k, v in a.items() if k != "metadata"} == {
        k: v for k, v in b.items() if k != "metadata"
    }


@dataclass(frozen=True, slots=True)
class Created:
    """What a create wrote: the stored bytes and their revision (0: a dry run, nothing
    written). The object itself is decoded from them on demand: the stored object holds
    pre-encoded parts (``record_update(fragments=True)``) and HTTP needs only the bytes."""

    t: Target
    value: bytes  # the stored bytes (no resourceVersion)
    revision: int

    def object(self) -> Obj:
        """The created object as served at ``t.version`` (a fresh one on every call)."""
        obj = decode_value(self.value, self.revision) if self.revision else orjson.loads(
            self.value)
        return self.t.from_storage(obj)

    def encoded(self) -> bytes:
        """The created object's JSON as served: the stored bytes when ``t`` is direct."""
        if not self.t.direct:
            return orjson.dumps(self.object())
        return with_resource_version(self.value, self.revision) if self.revision else self.value


@dataclass(frozen=True)
class DeleteAs:
    """Returned by an update function to remove the object; the request answers with
    ``obj`` — an update that empties a deleting object's finalizers answers with that
    updated object, as upstream's ``finalizeDelete`` does (kubectl then says "patched")."""

    obj: Obj | None = None  # None: the object as it was stored


#: Marker returned by an update function to remove the object (answering with it as stored).
DELETE = DeleteAs()
