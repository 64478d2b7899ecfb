"""ControllerRevisions, as pkg/controller/history/controller_history.go writes them.

A ControllerRevision snapshots a StatefulSet's or DaemonSet's pod template: ``data`` is the
patch that puts the template back (upstream's ``getPatch`` in stateful_set_utils.go and
daemon/update.go: ``{"spec":{"template":{..., "$patch":"replace"}}}``, marshalled as Go's
``json.Marshal`` writes a map — compact, keys sorted, HTML-escaped), ``revision`` a
number growing with each new template (a rollback re-numbers an old revision instead of
creating one), and it is owned by the set with ``controller: true,
blockOwnerDeletion: true``, so the garbage collector deletes it with the set.

* ``hash_controller_revision`` is ``HashControllerRevision``: FNV-32 (not 32a) of the data's
  bytes, then of the collision count in decimal, safe-encoded; ``controller_revision_name``
  is ``<parent>-<hash>`` (the parent's name cut to 223 characters);
* ``new_controller_revision`` is ``NewControllerRevision`` (the template's labels plus
  ``controller.kubernetes.io/hash``), ``equal_revision`` / ``find_equal_revisions`` compare
  hash labels then data, ``sort_controller_revisions`` orders by revision number, then
  creation time, then name (``byRevision``);
* ``ControllerHistory`` is ``realHistory``: list (the revisions matching the parent's
  selector that it controls or that are orphans), create (a name taken by a revision with
  other data bumps the collision count and tries the next name), update the number,
  delete, adopt.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from typing import Any, NamedTuple

from kubegc.api.errors import is_already_exists
from kubegc.api.goformat import json_marshal
from kubegc.api.labels import LabelSelector
from kubegc.api.meta import ObjectReference, controller_ref_of, name_of, namespace_of, uid_of
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.cache import NAMESPACE_INDEX, SharedInformer
from kubegc.client.interface import Client, DeleteOptions, PatchType
from kubegc.component import objects
from kubegc.controllers.controller_utils import new_controller_ref, safe_encode_string

CONTROLLER_REVISIONS = GroupVersionResource("apps", "v1", "controllerrevisions")
#: ``history.ControllerRevisionHashLabel``: the hash of a revision's data
CONTROLLER_REVISION_HASH_LABEL = "controller.kubernetes.io/hash"
_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193


def _fnv32(data: bytes, value: int = _FNV32_OFFSET) -> int:
    """``hash/fnv.New32``: multiply, then xor (32a xors first)."""
    for byte in data:
        value = ((value * _FNV32_PRIME) & 0xFFFFFFFF) ^ byte
    return value


def template_patch(parent: Obj) -> str:
    """``getPatch``: the patch replacing ``spec.template`` with ``parent``'s, as JSON."""
    template = copy.deepcopy((parent.get("spec") or {}).get("template") or {})
    template["$patch"] = "replace"
    return json_marshal({"spec": {"template": template}})


def raw_of(revision: Obj) -> str:
    """A revision's ``data`` as the bytes upstream compares (``Data.Raw``): the stored
    patch, re-marshalled as Go marshals it (it was written that way)."""
    return json_marshal(revision.get("data"))


def hash_controller_revision(raw: str, probe: int | None) -> str:
    """``HashControllerRevision`` of a revision whose ``Data.Raw`` is ``raw``."""
    value = _fnv32(raw.encode())
    if probe is not None:
        value = _fnv32(str(probe).encode(), value)
    return safe_encode_string(str(value))


def controller_revision_name(prefix: str, hash_: str) -> str:
    """``ControllerRevisionName``: ``<prefix>-<hash>``, the prefix cut to 223 characters."""
    return f"{prefix[:223]}-{hash_}"


def new_controller_revision(parent: Obj, *, api_version: str, kind: str,
                            template_labels: dict[str, str], raw: str, revision: int,
                            collision_count: int | None) -> Obj:
    """``NewControllerRevision``: named and labelled by the hash of ``raw``."""
    hash_ = hash_controller_revision(raw, collision_count)
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"name": controller_revision_name(name_of(parent), hash_),
                         "namespace": namespace_of(parent),
                         "labels": {**template_labels, CONTROLLER_REVISION_HASH_LABEL: hash_},
                         "ownerReferences": [new_controller_ref(parent, api_version, kind)]},
            "data": json.loads(raw), "revision": revision}


def revision_number(revision: Obj) -> int:
    try:
        return int(revision.get("revision") or 0)
    except (TypeError, ValueError):
        return 0


def _labels(obj: Obj) -> dict[str, Any]:
    return (obj.get("metadata") or {}).get("labels") or {}


def sort_controller_revisions(revisions: Iterable[Obj]) -> list[Obj]:
    """``SortControllerRevisions`` (``byRevision``): by number, creation time, name."""
    return sorted(revisions, key=lambda r: (
        revision_number(r), str((r.get("metadata") or {}).get("creationTimestamp") or ""),
        name_of(r)))


def max_revision(revisions: Iterable[Obj]) -> int:
    """``maxRevision``: the highest number, 0 for none."""
    return max((revision_number(r) for r in revisions), default=0)


def _hash_value(revision: Obj) -> int | None:
    text = _labels(revision).get(CONTROLLER_REVISION_HASH_LABEL)
    try:
        return int(str(text)) if text is not None else None
    except ValueError:
        return None


def equal_revision(lhs: Obj | None, rhs: Obj | None) -> bool:
    """``EqualRevision``: both absent, or the same data (hash labels first, when both
    parse as numbers — upstream's ``strconv.ParseInt``, which safe-encoded hashes rarely
    pass)."""
    if lhs is None or rhs is None:
        return lhs is rhs
    left, right = _hash_value(lhs), _hash_value(rhs)
    if left is not None and right is not None and left != right:
        return False
    return raw_of(lhs) == raw_of(rhs)


def find_equal_revisions(revisions: Iterable[Obj], needle: Obj) -> list[Obj]:
    """``FindEqualRevisions``: the revisions with ``needle``'s data."""
    return [r for r in revisions if equal_revision(r, needle)]


def apply_revision(parent: Obj, revision: Obj) -> Obj:
    """``ApplyRevision``: ``parent`` with the template ``revision`` holds (its patch
    replaces ``spec.template`` whole)."""
    out = copy.deepcopy(parent)
    template = copy.deepcopy(((revision.get("data") or {}).get("spec") or {}).get(
        "template") or {})
    template.pop("$patch", None)
    out.setdefault("spec", {})["template"] = template
    return out


def revision_reference(revision: Obj) -> ObjectReference:
    return ObjectReference("apps/v1", "ControllerRevision", name_of(revision),
                           uid_of(revision), namespace_of(revision))


class Created(NamedTuple):
    """What ``create_controller_revision`` made (or found) and the collision count it
    took to get there."""

    revision: Obj
    collision_count: int


class ControllerHistory:
    """``realHistory``: ControllerRevisions through the API, listed from an informer of
    them (indexed by namespace)."""

    def __init__(self, client: Client, informer: SharedInformer) -> None:
        self.client = client
        self.informer = informer

    def list_controller_revisions(self, parent: Obj, selector: LabelSelector) -> list[Obj]:
        """``ListControllerRevisions``: revisions of ``parent``'s namespace matching
        ``selector``, controlled by ``parent`` or by nothing (to adopt); leaves out those
        whose fields the controllers cannot understand (``objects.CONTROLLER_REVISION``)."""
        out = []
        for revision in self.informer.indexer.by_index(NAMESPACE_INDEX, namespace_of(parent)):
            # one whose fields upstream could not decode is nobody's
            if not objects.CONTROLLER_REVISION.understood(revision):
                continue
            if selector.empty or not selector.matches(_labels(revision)):
                continue
            ref = controller_ref_of(revision)
            if ref is None or ref.get("uid") == uid_of(parent):
                out.append(revision)
        return out

    async def create_controller_revision(self, parent: Obj, revision: Obj,
                                         collision_count: int) -> Created:
        """``CreateControllerRevision``: create ``revision`` under the name its hash gives;
        when a revision of other data holds that name, count a collision and try the next
        name. An equal revision already there is the answer."""
        raw = raw_of(revision)
        clone = copy.deepcopy(revision)
        while True:
            name = controller_revision_name(
                name_of(parent), hash_controller_revision(raw, collision_count))
            clone["metadata"]["name"] = name
            try:
                created = await self.client.create(CONTROLLER_REVISIONS, clone,
                                                   namespace=namespace_of(parent))
                return Created(created, collision_count)
            except Exception as err:
                if not is_already_exists(err):
                    raise
            exists = await self.client.get(CONTROLLER_REVISIONS, name,
                                           namespace=namespace_of(parent))
            if raw_of(exists) == raw:
                return Created(exists, collision_count)
            collision_count += 1

    async def update_controller_revision(self, revision: Obj, new_revision: int) -> Obj:
        """``UpdateControllerRevision``: give ``revision`` the number ``new_revision``."""
        if revision_number(revision) == new_revision:
            return revision
        meta = revision.get("metadata") or {}
        patch: dict[str, Any] = {"revision": new_revision,
                                 "metadata": {"resourceVersion": meta.get("resourceVersion")}}
        if not meta.get("resourceVersion"):
            del patch["metadata"]
        return await self.client.patch(CONTROLLER_REVISIONS, name_of(revision), patch,
                                       namespace=namespace_of(revision))

    async def delete_controller_revision(self, revision: Obj) -> None:
        """``DeleteControllerRevision`` (kubegc: with the uid it was judged by as a
        precondition, so a namesake created since is not deleted)."""
        await self.client.delete(CONTROLLER_REVISIONS, name_of(revision),
                                 namespace=namespace_of(revision),
                                 options=DeleteOptions(preconditions_uid=uid_of(revision)
                                                       or None))

    async def adopt_controller_revision(self, parent: Obj, revision: Obj, *,
                                        api_version: str, kind: str) -> Obj:
        """``AdoptControllerRevision``: a strategic merge patch adding the controller
        reference, with the revision's uid (so a namesake is not adopted)."""
        if controller_ref_of(revision) is not None:
            raise RuntimeError(f"attempt to adopt revision owned by "
                               f"{controller_ref_of(revision)}")
        patch = {"metadata": {"ownerReferences": [new_controller_ref(parent, api_version, kind)],
                              "uid": uid_of(revision)}}
        return await self.client.patch(CONTROLLER_REVISIONS, name_of(revision), patch,
                                       namespace=namespace_of(revision),
                                       patch_type=PatchType.STRATEGIC)
