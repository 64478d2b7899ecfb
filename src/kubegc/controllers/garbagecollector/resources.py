"""Discovery for the GC: the RESTMapper and the set of resources to monitor.

``RESTMapper`` maps an ownerReference's ``apiVersion``/``kind`` to the served resource and
its scope, from the list that ``Client.discover()`` returned; only exact group/version/kind
matches resolve (an ``extensions/v1beta1`` Deployment does not map to ``apps/v1``), as
upstream's discovery-backed mapper. It is rebuilt by ``reset`` on every GC sync that sees
a change, never in between (a miss raises ``RESTMappingError`` and the item is retried).

``get_deletable_resources`` mirrors upstream ``GetDeletableResources``: the preferred
version of every resource that supports ``delete``, ``list`` and ``watch``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from kubegc.api.resources import GroupVersionKind, GroupVersionResource, split_api_version
from kubegc.client.interface import APIResource
from kubegc.controllers.garbagecollector.errors import RESTMappingError

#: Resources the GC never monitors (upstream ``DefaultIgnoredResources``), as
#: (group, resource): core and events.k8s.io Events.
DEFAULT_IGNORED_RESOURCES: frozenset[tuple[str, str]] = frozenset(
    {("", "events"), ("events.k8s.io", "events")}
)

_REQUIRED_VERBS = ("delete", "list", "watch")


@dataclass(frozen=True, slots=True)
class RESTMapping:
    resource: GroupVersionResource
    kind: GroupVersionKind
    namespaced: bool


class RESTMapper:
    """Kind <-> resource lookups over one discovery snapshot (cf. ``meta.RESTMapper``).

    Ownership: the GarbageCollector's sync replaces the snapshot (``reset``); workers and
    the GraphBuilder read. Both happen synchronously on the loop.
    """

    def __init__(self, resources: Iterable[APIResource] = ()) -> None:
        self._by_kind: dict[tuple[str, str, str], RESTMapping] = {}
        self._by_resource: dict[GroupVersionResource, RESTMapping] = {}
        self.reset(resources)

    def reset(self, resources: Iterable[APIResource]) -> None:
        by_kind: dict[tuple[str, str, str], RESTMapping] = {}
        by_resource: dict[GroupVersionResource, RESTMapping] = {}
        for r in resources:
            if "/" in r.resource:  # subresource, e.g. pods/status
                continue
            mapping = RESTMapping(
                r.gvr, GroupVersionKind(r.group, r.version, r.kind), r.namespaced,
            )
            by_kind.setdefault((r.group, r.version, r.kind), mapping)
            by_resource.setdefault(r.gvr, mapping)
        self._by_kind = by_kind
        self._by_resource = by_resource

    def add(self, resource: APIResource) -> None:
        """Register one more resource (tests and static set-ups)."""
        mapping = RESTMapping(
            resource.gvr, GroupVersionKind(resource.group, resource.version, resource.kind),
            resource.namespaced,
        )
        self._by_kind.setdefault((resource.group, resource.version, resource.kind), mapping)
        self._by_resource.setdefault(resource.gvr, mapping)

    def rest_mapping(self, api_version: str, kind: str) -> RESTMapping:
        """The mapping for ``apiVersion``/``kind``; raises ``RESTMappingError``."""
        group, version = split_api_version(api_version)
        mapping = self._by_kind.get((group, version, kind))
        if mapping is None or not version:
            raise RESTMappingError(kind, api_version)
        return mapping

    def kind_for(self, resource: GroupVersionResource) -> GroupVersionKind:
        """The kind served at ``resource``; raises ``RESTMappingError``."""
        mapping = self._by_resource.get(resource)
        if mapping is None:
            raise RESTMappingError(resource.resource, resource.group_version)
        return mapping.kind


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Kubernetes version ordering key: GA > beta > alpha, higher numbers first, then
    non-conforming versions alphabetically."""
    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if not m:
        return (3, 0, 0, version)
    stage = {"alpha": 2, "beta": 1, None: 0}[m.group(2)]
    return (stage, -int(m.group(1)), -int(m.group(3) or 0), "")


def get_deletable_resources(resources: Iterable[APIResource]) -> set[GroupVersionResource]:
    """Every resource supporting delete+list+watch, in its preferred version.

    Per (group, resource) the highest-priority version serving it wins (upstream:
    the group's preferred version if it serves the resource, else the first version).
    Subresources and resources with an empty version are skipped.
    """
    best: dict[tuple[str, str], APIResource] = {}
    for r in resources:
        if "/" in r.resource or not r.version:
            continue
        if not all(verb in r.verbs for verb in _REQUIRED_VERBS):
            continue
        key = (r.group, r.resource)
        current = best.get(key)
        if current is None or version_priority(r.version) < version_priority(current.version):
            best[key] = r
    return {r.gvr for r in best.values()}
