"""What a namespace's deletion goes through, resource by resource (cf.
pkg/controller/namespace/deletion/namespaced_resources_deleter.go): the resources that can
be deleted, each one's outcome (``GVRDeletionMetadata``) and their sum over a pass
(``Totals``), and the reference a deleted item is recorded under.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubegc.api.meta import ObjectReference
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.interface import APIResource, ServerResources


@dataclass(slots=True)
class GVRDeletionMetadata:
    finalizer_estimate_seconds: int = 0
    num_remaining: int = 0
    finalizers_to_num_remaining: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class Deleted:
    """What one resource's deletes did, as far as the rest of its deletion needs: how many
    objects, whether any may still be there, and the longest grace period of a
    non-terminal pod among them (``estimateGracefulTermination``). Added to a page at a
    time (a DeleteCollection's pages), so that a million deleted objects are not kept."""

    count: int = 0
    may_remain: bool = False
    longest_grace: int = 0

    def add(self, gvr: GroupVersionResource, items: list[Obj]) -> None:
        self.count += len(items)
        self.may_remain = self.may_remain or any(may_remain(item) for item in items)
        self.longest_grace = max(self.longest_grace, longest_grace(gvr, items))


def may_remain(item: Obj) -> bool:
    """Whether an object deleted (as listed before, or as its DELETE left it) can still be
    there: held by finalizers or within a grace period (pods, whose grace the listed
    state does not tell, are always listed again); one without either was removed
    (Background propagation adds no finalizer)."""
    meta = item.get("metadata") or {}
    return bool(meta.get("finalizers")) or int(meta.get("deletionGracePeriodSeconds") or 0) > 0


def longest_grace(gvr: GroupVersionResource, items: list[Obj]) -> int:
    """Pods: the longest ``terminationGracePeriodSeconds`` of those not yet terminal; 0
    for any other resource."""
    if (gvr.group, gvr.resource) != ("", "pods"):
        return 0
    longest = 0
    for pod in items:
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
        if grace is not None:
            longest = max(longest, int(grace))
    return longest


@dataclass(slots=True)
class Totals:
    estimate: int = 0
    errors: list[str] = field(default_factory=list)
    gvr_to_num_remaining: dict[tuple[str, str], int] = field(default_factory=dict)
    finalizers_to_num_remaining: dict[str, int] = field(default_factory=dict)

    def add(self, gvr: GroupVersionResource, meta: GVRDeletionMetadata) -> None:
        self.estimate = max(self.estimate, meta.finalizer_estimate_seconds)
        if meta.num_remaining > 0:
            self.gvr_to_num_remaining[(gvr.group, gvr.resource)] = meta.num_remaining
            for finalizer, n in meta.finalizers_to_num_remaining.items():
                self.finalizers_to_num_remaining[finalizer] = (
                    self.finalizers_to_num_remaining.get(finalizer, 0) + n)


def deletable_namespaced_resources(resources: list[APIResource]) -> list[GroupVersionResource]:
    """Namespaced resources with ``delete`` and ``list``, one version per group/resource
    (the first listed: the preferred one), subresources excluded."""
    seen: set[tuple[str, str]] = set()
    out = []
    for r in resources:
        if not r.namespaced or "/" in r.resource or (r.group, r.resource) in seen:
            continue
        if "delete" in r.verbs and "list" in r.verbs:
            seen.add((r.group, r.resource))
            out.append(r.gvr)
    return out


def discovery_failure_message(discovered: ServerResources) -> str:
    """``ProcessDiscoverResourcesErr`` of an ``ErrGroupDiscoveryFailed``."""
    return (f"Discovery failed for some groups, {len(discovered.failed)} failing: "
            f"{discovered.error()}")


def gvr_string(gvr: GroupVersionResource) -> str:
    """Go's ``GroupVersionResource.String()``: ``apps/v1, Resource=deployments``."""
    return f"{gvr.group}/{gvr.version}, Resource={gvr.resource}"


def reference_of(gvr: GroupVersionResource, kind: str, item: Obj, namespace: str
               ) -> ObjectReference:
    """``item``'s reference (a listed item may lack apiVersion and kind: ``gvr``'s and
    the discovered ``kind`` then)."""
    meta = item.get("metadata") or {}
    api_version = str(item.get("apiVersion") or (
        f"{gvr.group}/{gvr.version}" if gvr.group else gvr.version))
    return ObjectReference(api_version, str(item.get("kind") or kind),
                           str(meta.get("name") or ""), str(meta.get("uid") or ""), namespace)
