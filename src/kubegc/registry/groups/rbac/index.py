"""The stored RBAC policy in memory: every Role, ClusterRole, RoleBinding and
ClusterRoleBinding, decoded once, as the authorizer reads them (upstream's RBAC authorizer
reads the same four kinds from shared informers' listers).

Upstream's listers trail the write that changed them by a watch event; this index is
current as soon as a write of this server returns: the RBAC storages hand it every write
of this server (``apply_object``, from their ``after_write``) before answering, and every
event of the watch cache (``apply_event``), which carries the writes of the other servers
sharing the storage. Both paths may deliver one change twice or out of order, so each key
remembers the revision it was last set at and older news is dropped: a deletion counts as
newer than the state it deleted (a delete is a compare-and-swap on that state's revision,
so nothing can come in between).

Ownership: the registry's write path and the watch cache's dispatch task (both on the
loop) are the only writers; the authorizer and the RBAC storages read. ``generation`` grows
with every change, so readers can cache what they derived from it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from kubegc.api.types import Obj
from kubegc.authz.rules import GROUP, PolicyRule, rules_of
from kubegc.registry.generic.keys import ROOT
from kubegc.storage import KV

KINDS = ("roles", "clusterroles", "rolebindings", "clusterrolebindings")
PREFIXES = {kind: f"{ROOT}{GROUP}/{kind}/" for kind in KINDS}


@dataclass(frozen=True, slots=True)
class Subject:
    """``rbacv1.Subject``: kind, name and (for a ServiceAccount) namespace."""

    kind: str
    name: str
    namespace: str = ""


@dataclass(frozen=True, slots=True)
class Binding:
    """A RoleBinding (``namespace`` set) or ClusterRoleBinding, as the resolver reads it."""

    name: str
    namespace: str
    role_kind: str
    role_name: str
    subjects: tuple[Subject, ...]

    @classmethod
    def from_obj(cls, obj: Obj) -> Binding:
        meta = obj.get("metadata") or {}
        ref = _mapping(obj.get("roleRef"))
        subjects = [s for s in obj.get("subjects") or [] if isinstance(s, dict)]
        return cls(name=str(meta.get("name") or ""), namespace=str(meta.get("namespace") or ""),
                   role_kind=str(ref.get("kind") or ""), role_name=str(ref.get("name") or ""),
                   subjects=tuple(Subject(str(s.get("kind") or ""), str(s.get("name") or ""),
                                          str(s.get("namespace") or "")) for s in subjects))


@dataclass(frozen=True, slots=True)
class Role:
    """A Role or ClusterRole: its rules, labels and aggregation rule, decoded once."""

    name: str
    namespace: str
    rules: tuple[PolicyRule, ...]
    obj: Obj  # the stored object (shared: never mutate)

    @classmethod
    def from_obj(cls, obj: Obj) -> Role:
        meta = obj.get("metadata") or {}
        return cls(str(meta.get("name") or ""), str(meta.get("namespace") or ""),
                   rules_of(obj), obj)


def _split(key: str) -> tuple[str, str, str] | None:
    """(kind, namespace, name) of an RBAC storage key, or None for another key."""
    for kind, prefix in PREFIXES.items():
        if key.startswith(prefix):
            rest = key[len(prefix):]
            namespace, _, name = rest.rpartition("/")
            return kind, namespace, name
    return None


class PolicyIndex:
    """The four kinds by namespace and name; see the module docstring."""

    def __init__(self) -> None:
        self.roles: dict[tuple[str, str], Role] = {}
        self.cluster_roles: dict[str, Role] = {}
        self.role_bindings: dict[str, dict[str, Binding]] = {}
        self.cluster_role_bindings: dict[str, Binding] = {}
        self.generation = 0
        #: key -> (revision, deleted) of the newest state applied
        self._seen: dict[str, tuple[int, bool]] = {}
        #: storage revision each kind was listed at: older events are already in
        self._listed_at: dict[str, int] = {}

    async def load(self, kv: KV) -> None:
        """Read the four kinds from storage: at start (events the watch cache replays from
        before are already in), and again when the watch cache lost events (compaction
        overtook it). In place and revision-ordered, so events applied meanwhile stay; an
        object the listing lacks and no newer news kept is gone."""
        for kind, prefix in PREFIXES.items():
            listed = await kv.range(prefix, prefix=True)
            self._listed_at[kind] = max(self._listed_at.get(kind, 0), listed.revision)
            present = {item.key for item in listed.kvs}
            for item in listed.kvs:
                self._apply(item.key, _decode(item.value, item.mod_revision), item.mod_revision,
                            deleted=False)
            for key, (revision, deleted) in list(self._seen.items()):
                if (key.startswith(prefix) and key not in present and not deleted
                        and revision <= listed.revision):
                    self._apply(key, None, listed.revision, deleted=True)

    # -- the two feeds --------------------------------------------------------------------

    def apply_object(self, key: str, obj: Obj, *, removed: bool = False) -> None:
        """A write of this server: ``obj`` as stored (with its resourceVersion) or, when
        ``removed``, the last state of a deleted object."""
        try:
            revision = int(str((obj.get("metadata") or {}).get("resourceVersion") or "0"))
        except ValueError:
            return
        self._apply(key, None if removed else obj, revision, deleted=removed)

    def apply_event(self, key: str, obj: Obj, revision: int, *, deleted: bool) -> None:
        """An event of the watch cache (any server's write)."""
        split = _split(key)
        if split is None or revision <= self._listed_at.get(split[0], 0):
            return
        self._apply(key, None if deleted else obj, revision, deleted=deleted)

    def _apply(self, key: str, obj: Obj | None, revision: int, *, deleted: bool) -> None:
        split = _split(key)
        if split is None:
            return
        if (revision, deleted) <= self._seen.get(key, (0, False)):
            return  # older news than what is applied
        self._seen[key] = (revision, deleted)
        kind, namespace, name = split
        self.generation += 1
        if kind == "roles":
            _put(self.roles, (namespace, name), None if obj is None else Role.from_obj(obj))
        elif kind == "clusterroles":
            _put(self.cluster_roles, name, None if obj is None else Role.from_obj(obj))
        elif kind == "clusterrolebindings":
            _put(self.cluster_role_bindings, name,
                 None if obj is None else Binding.from_obj(obj))
        else:
            bindings = self.role_bindings.setdefault(namespace, {})
            _put(bindings, name, None if obj is None else Binding.from_obj(obj))
            if not bindings:
                del self.role_bindings[namespace]

    # -- reads ----------------------------------------------------------------------------

    def role(self, namespace: str, name: str) -> Role | None:
        return self.roles.get((namespace, name))

    def cluster_role(self, name: str) -> Role | None:
        return self.cluster_roles.get(name)

    def bindings_in(self, namespace: str) -> Iterator[Binding]:
        return iter(list(self.role_bindings.get(namespace, {}).values()))

    def cluster_bindings(self) -> Iterator[Binding]:
        return iter(list(self.cluster_role_bindings.values()))


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _put(table: dict[Any, Any], key: Any, value: Any) -> None:
    if value is None:
        table.pop(key, None)
    else:
        table[key] = value


def _decode(value: bytes, revision: int) -> Obj:
    """A stored value as ``target.decode_value`` reads it (this package sits below
    ``target``, whose conversions import the groups' strategies, which import it)."""
    obj: Obj = orjson.loads(value)
    obj.setdefault("metadata", {})["resourceVersion"] = str(revision)
    return obj
