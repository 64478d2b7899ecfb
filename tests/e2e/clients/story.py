"""The deletion story every client is driven through, and the protocol a client's driver
implements to tell it.

One story, one set of assertions (what a user of that client would see): each client's
test module writes a small driver in that client's own idioms (kubectl's commands, the
official client's typed APIs, lightkube's models, kr8s' objects, client-node's APIs), and
``Story(driver).run()`` drives it:

1. create a namespace; start a watch on its ConfigMaps (list, then watch);
2. for each propagation policy, an owner ConfigMap with two dependents: a ConfigMap created
   with an ownerReference (``blockOwnerDeletion``) and a Secret created by server-side
   apply with one; list them by label;
3. one patch of each type: JSON (an annotation), merge (a label), strategic merge (a
   finalizer, merged into the list as ``patchStrategy: merge`` says — a merge patch would
   replace it), and a second apply that changes the applied Secret;
4. delete the owners: ``Background`` (the garbage collector deletes both dependents),
   ``Foreground`` (the owner waits, ``foregroundDeletion``, for its dependent held by a
   finalizer; a JSON patch removes the finalizer and the cascade completes) and ``Orphan``
   (the dependents stay, without the ownerReference); read what the GC did in its
   DeletionRecords;
5. the watch saw the creations, the foreground owner waiting and every deletion; delete
   the namespace and wait until it is gone.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Protocol

from ..conftest import eventually

Obj = dict[str, Any]

LABEL = "kubegc.test/story"
FIELD_MANAGER = "deletion-story"
HOLD = "example.com/hold"
FIRST = "example.com/first"
POLICIES = ("Background", "Foreground", "Orphan")


@dataclass(frozen=True)
class Kind:
    api_version: str
    kind: str
    plural: str
    namespaced: bool = True

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def version(self) -> str:
        return self.api_version.rpartition("/")[2]


NAMESPACE = Kind("v1", "Namespace", "namespaces", namespaced=False)
CONFIGMAP = Kind("v1", "ConfigMap", "configmaps")
SECRET = Kind("v1", "Secret", "secrets")
DELETION_RECORD = Kind("kubegc.io/v1", "DeletionRecord", "deletionrecords", namespaced=False)
KINDS = {k.kind: k for k in (NAMESPACE, CONFIGMAP, SECRET, DELETION_RECORD)}


class PatchType(enum.StrEnum):
    JSON = "json"
    MERGE = "merge"
    STRATEGIC = "strategic"

    @property
    def content_type(self) -> str:
        return {"json": "application/json-patch+json",
                "merge": "application/merge-patch+json",
                "strategic": "application/strategic-merge-patch+json"}[self.value]


APPLY_PATCH = "application/apply-patch+yaml"


class Watch(Protocol):
    """A watch started by ``Driver.watch``, collecting ``(type, object)`` events."""

    def events(self) -> list[tuple[str, Obj]]:
        """The events received so far, in order."""

    def stop(self) -> None:
        """Stop watching (idempotent)."""


class Driver(Protocol):
    """What the story asks of a client. Objects go in and come out as JSON-shaped dicts;
    namespaced calls work in the driver's namespace, ``self.namespace``."""

    namespace: str

    def create(self, obj: Obj) -> Obj: ...

    def get(self, kind: Kind, name: str) -> Obj | None:
        """The object, or None when the server answers 404."""

    def list(self, kind: Kind, *, label_selector: str) -> list[Obj]: ...

    def patch(self, kind: Kind, name: str, patch: Any, patch_type: PatchType) -> Obj: ...

    def apply(self, obj: Obj, *, field_manager: str) -> Obj:
        """Server-side apply (``force``: the story owns what it applies)."""

    def delete(self, kind: Kind, name: str, *, propagation_policy: str) -> None:
        """Ask for the deletion; do not wait for it."""

    def wait_deleted(self, kind: Kind, name: str, *, timeout: float) -> None:
        """Return once the object is gone (the client's own way of waiting)."""

    def watch(self, kind: Kind, *, label_selector: str) -> Watch: ...


def obj(kind: Kind, name: str, *, namespace: str = "", **fields: Any) -> Obj:
    meta: Obj = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    meta.update(fields.pop("metadata", {}))
    return {"apiVersion": kind.api_version, "kind": kind.kind, "metadata": meta, **fields}


def owner_ref(owner: Obj) -> Obj:
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"],
            "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"],
            "controller": True, "blockOwnerDeletion": True}


def names(items: list[Obj]) -> set[str]:
    return {i["metadata"]["name"] for i in items}


@dataclass
class Story:
    """One run of the story; ``uids`` by object name and ``owners`` by policy, filled as
    objects are created."""

    driver: Driver
    timeout: float = 30

    def __post_init__(self) -> None:
        self.ns = self.driver.namespace
        self.uids: dict[str, str] = {}
        self.owners: dict[str, Obj] = {}

    # -- steps -----------------------------------------------------------------------------

    def run(self) -> None:
        created = self.driver.create(obj(NAMESPACE, self.ns))
        assert created["metadata"]["name"] == self.ns
        watch = self.driver.watch(CONFIGMAP, label_selector=LABEL)
        try:
            self.create_owners_and_dependents(watch)
            self.patch_each_type()
            self.delete_background()
            self.delete_foreground()
            self.delete_orphan()
            self.check_watch(watch)
        finally:
            watch.stop()
        self.delete_namespace()

    def create_owners_and_dependents(self, watch: Watch) -> None:
        for policy in POLICIES:
            p = policy.lower()
            owner = self.owners[p] = self._create(CONFIGMAP, f"{p}-owner",
                                                  data={"policy": policy})
            if policy == POLICIES[0]:  # the watch is live: it saw the first creation
                eventually(lambda: ("ADDED", "background-owner") in _seen(watch),
                           what="the watch delivers ADDED background-owner")
            meta: Obj = {"ownerReferences": [owner_ref(owner)]}
            if policy == "Foreground":
                meta["finalizers"] = [FIRST]
            self._create(CONFIGMAP, f"{p}-dep", metadata=meta)
            applied = self.driver.apply(
                obj(SECRET, f"{p}-applied", namespace=self.ns, type="Opaque",
                    metadata={"labels": {LABEL: "yes"}, "ownerReferences": [owner_ref(owner)]},
                    stringData={"v": "1"}),
                field_manager=FIELD_MANAGER)
            assert applied["metadata"]["ownerReferences"][0]["uid"] == owner["metadata"]["uid"]
            self.uids[f"{p}-applied"] = applied["metadata"]["uid"]
        cms = self.driver.list(CONFIGMAP, label_selector=LABEL)
        assert names(cms) == {f"{p.lower()}-{r}" for p in POLICIES for r in ("owner", "dep")}
        secrets = self.driver.list(SECRET, label_selector=f"{LABEL}=yes")
        assert names(secrets) == {f"{p.lower()}-applied" for p in POLICIES}

    def patch_each_type(self) -> None:
        d = self.driver
        got = d.patch(CONFIGMAP, "background-dep", {"metadata": {"labels": {"patched": "merge"}}},
                      PatchType.MERGE)
        assert got["metadata"]["labels"] == {LABEL: "yes", "patched": "merge"}
        got = d.patch(CONFIGMAP, "orphan-dep", [
            {"op": "add", "path": "/metadata/annotations", "value": {"patched": "json"}}],
            PatchType.JSON)
        assert got["metadata"]["annotations"] == {"patched": "json"}
        got = d.patch(CONFIGMAP, "foreground-dep", {"metadata": {"finalizers": [HOLD]}},
                      PatchType.STRATEGIC)
        # upstream's mergeSlice: the patch's new items first, then the server's
        assert got["metadata"]["finalizers"] == [HOLD, FIRST]
        got = d.apply(obj(SECRET, "orphan-applied", namespace=self.ns, type="Opaque",
                          metadata={"labels": {LABEL: "yes", "applied": "twice"},
                                    "ownerReferences": [owner_ref(self.owners["orphan"])]},
                          stringData={"v": "2"}),
                      field_manager=FIELD_MANAGER)
        assert got["metadata"]["labels"]["applied"] == "twice"
        assert got["data"] == {"v": "Mg=="}

    def delete_background(self) -> None:
        d = self.driver
        d.delete(CONFIGMAP, "background-owner", propagation_policy="Background")
        d.wait_deleted(CONFIGMAP, "background-owner", timeout=self.timeout)
        d.wait_deleted(CONFIGMAP, "background-dep", timeout=self.timeout)
        d.wait_deleted(SECRET, "background-applied", timeout=self.timeout)
        record = self._record("background-dep", "delete")
        owner = record["owners"][0]
        assert (owner["name"], owner["classification"]) == ("background-owner", "dangling")
        assert record["reason"] == "OwnerAbsent"

    def delete_foreground(self) -> None:
        d = self.driver
        d.delete(CONFIGMAP, "foreground-owner", propagation_policy="Foreground")
        d.wait_deleted(SECRET, "foreground-applied", timeout=self.timeout)
        held = eventually(lambda: _deleting(d.get(CONFIGMAP, "foreground-dep")),
                          timeout=self.timeout, what="the GC deletes foreground-dep")
        assert held["metadata"]["finalizers"] == [HOLD, FIRST]
        owner = d.get(CONFIGMAP, "foreground-owner")  # blocked by foreground-dep
        assert owner is not None and owner["metadata"].get("deletionTimestamp")
        assert owner["metadata"]["finalizers"] == ["foregroundDeletion"]
        d.patch(CONFIGMAP, "foreground-dep", [
            {"op": "test", "path": "/metadata/finalizers", "value": [HOLD, FIRST]},
            {"op": "remove", "path": "/metadata/finalizers"}], PatchType.JSON)
        d.wait_deleted(CONFIGMAP, "foreground-dep", timeout=self.timeout)
        d.wait_deleted(CONFIGMAP, "foreground-owner", timeout=self.timeout)
        record = self._record("foreground-dep", "delete")
        assert record["reason"] == "OwnerWaitingForeground"

    def delete_orphan(self) -> None:
        d = self.driver
        d.delete(CONFIGMAP, "orphan-owner", propagation_policy="Orphan")
        d.wait_deleted(CONFIGMAP, "orphan-owner", timeout=self.timeout)
        for kind, name in ((CONFIGMAP, "orphan-dep"), (SECRET, "orphan-applied")):
            kept = d.get(kind, name)
            assert kept is not None and not kept["metadata"].get("ownerReferences"), kept
            assert not kept["metadata"].get("deletionTimestamp")
        record = self._record("orphan-dep", "orphan-patch")
        assert record["reason"] == "OwnerDeletedWithOrphanPolicy"

    def check_watch(self, watch: Watch) -> None:
        gone = {"background-owner", "background-dep", "foreground-owner", "foreground-dep",
                "orphan-owner"}
        eventually(lambda: gone <= {n for t, n in _seen(watch) if t == "DELETED"},
                   timeout=self.timeout, what="the watch delivers every DELETED")
        seen = _seen(watch)
        added = {n for t, n in seen if t == "ADDED"}
        assert added == {f"{p.lower()}-{r}" for p in POLICIES for r in ("owner", "dep")}
        assert ("DELETED", "orphan-dep") not in seen
        waiting = [e for t, e in _changes(watch) if t == "MODIFIED"
                   and e["metadata"]["name"] == "foreground-owner"
                   and "foregroundDeletion" in e["metadata"].get("finalizers", [])]
        assert waiting and waiting[0]["metadata"]["deletionTimestamp"]

    def delete_namespace(self) -> None:
        self.driver.delete(NAMESPACE, self.ns, propagation_policy="Background")
        self.driver.wait_deleted(NAMESPACE, self.ns, timeout=self.timeout)

    # -- helpers ---------------------------------------------------------------------------

    def _create(self, kind: Kind, name: str, *, metadata: Obj | None = None,
                **fields: Any) -> Obj:
        meta = {"labels": {LABEL: "yes"}, **(metadata or {})}
        created = self.driver.create(obj(kind, name, namespace=self.ns, metadata=meta,
                                         **fields))
        assert created["metadata"]["uid"] and created["metadata"]["resourceVersion"]
        self.uids[name] = created["metadata"]["uid"]
        return created

    def _record(self, name: str, action: str) -> Obj:
        """The garbage collector's DeletionRecord of ``action`` on ``name`` (written once
        the GC's queues are idle)."""
        selector = f"kubegc.io/object-uid={self.uids[name]},kubegc.io/action={action}"
        records = eventually(lambda: self.driver.list(DELETION_RECORD, label_selector=selector),
                             timeout=self.timeout, what=f"a {action} record of {name}")
        assert len(records) == 1, records
        record: Obj = records[0]
        assert record["object"]["name"] == name and record["object"]["namespace"] == self.ns
        return record


def _changes(watch: Watch) -> list[tuple[str, Obj]]:
    """The watch's events but BOOKMARKs (which a client may ask for)."""
    return [(t, o) for t, o in watch.events() if t != "BOOKMARK"]


def _seen(watch: Watch) -> list[tuple[str, str]]:
    return [(t, o["metadata"]["name"]) for t, o in _changes(watch)]


def _deleting(o: Obj | None) -> Obj | None:
    return o if o is not None and o["metadata"].get("deletionTimestamp") else None
