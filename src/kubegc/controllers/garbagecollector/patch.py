"""Patches the GC sends (cf. patch.go, ``GenerateDeleteOwnerRefStrategicMergeBytes``).

Owner references are edited with a strategic merge patch keyed by uid, which needs no
resourceVersion and carries the dependent's uid as precondition (``metadata.uid``: a
recreated object with the same name does not match). Custom resources do not support
strategic merge (415 Unsupported Media Type); the fallback is a JSON merge patch built from
the current metadata, guarded by ``metadata.resourceVersion`` (409 on a race, retried).
All builders return JSON-ready dicts and never mutate their inputs.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from kubegc.controllers.garbagecollector.graph import OwnerRef, is_owner_reference


def delete_owner_refs_strategic_merge_patch(
    dependent_uid: str, owner_uids: Iterable[str],
) -> dict[str, Any]:
    """SMP deleting the ownerReferences with ``owner_uids`` from the object ``dependent_uid``."""
    return {
        "metadata": {
            "ownerReferences": [{"$patch": "delete", "uid": uid} for uid in owner_uids],
            "uid": dependent_uid,
        }
    }


def delete_owner_refs_json_merge_patch(
    latest: Mapping[str, Any], owner_uids: Collection[str],
) -> dict[str, Any]:
    """JSON merge patch keeping every ownerReference of ``latest`` except ``owner_uids``
    (``null`` when none remain, which removes the field)."""
    kept = [ref for ref in _raw_owner_refs(latest)
            if not (is_owner_reference(ref) and ref["uid"] in owner_uids)]
    return _owner_refs_merge_patch(latest, kept)


def unblock_owner_references_strategic_merge_patch(
    dependent_uid: str, owners: Iterable[OwnerRef],
) -> dict[str, Any]:
    """SMP setting ``blockOwnerDeletion: false`` on every blocking reference."""
    refs = [_unblocked(ref).to_dict() for ref in owners if ref.blocks_owner_deletion]
    return {"metadata": {"ownerReferences": refs, "uid": dependent_uid}}


def unblock_owner_references_json_merge_patch(
    latest: Mapping[str, Any], owners: Iterable[OwnerRef],
) -> dict[str, Any]:
    """JSON merge patch replacing the references with ``owners``, all non-blocking."""
    refs: list[dict[str, Any]] = [_unblocked(ref).to_dict() for ref in owners]
    return _owner_refs_merge_patch(latest, refs)


def remove_finalizer_merge_patch(
    latest: Mapping[str, Any], finalizer: str,
) -> dict[str, Any] | None:
    """JSON merge patch removing ``finalizer`` (guarded by resourceVersion), or ``None``
    if ``latest`` does not have it."""
    finalizers = list((latest.get("metadata") or {}).get("finalizers") or [])
    if finalizer not in finalizers:
        return None
    remaining = [f for f in finalizers if f != finalizer]
    return {
        "metadata": {
            "resourceVersion": _resource_version(latest),
            "finalizers": remaining or None,
        }
    }


def _unblocked(ref: OwnerRef) -> OwnerRef:
    return OwnerRef(ref.api_version, ref.kind, ref.name, ref.uid, ref.controller, False)


def _raw_owner_refs(obj: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every entry, those the GC cannot understand too: a patch keeps what it does not
    remove."""
    refs = (obj.get("metadata") or {}).get("ownerReferences")
    return list(refs) if isinstance(refs, list) else []


def _resource_version(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def _owner_refs_merge_patch(
    latest: Mapping[str, Any], refs: list[Mapping[str, Any]] | list[dict[str, Any]],
) -> dict[str, Any]:
    return {
        "metadata": {
            "resourceVersion": _resource_version(latest),
            "ownerReferences": [dict(r) for r in refs] or None,
        }
    }
