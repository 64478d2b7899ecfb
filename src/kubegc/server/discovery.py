"""Discovery documents: what ``GET /api``, ``/apis``, ``/api/v1`` and ``/apis/<g>/<v>`` return.

Pure functions of the resource ``Catalog``; the HTTP layer picks the form with
``negotiate_discovery`` and serializes the returned dicts (caching them per
``catalog.generation``, since CRDs add and remove resources at run time).

Two forms, both required (KEP-3352 aggregated discovery; tests/server/test_discovery.py):
  * aggregated (``APIGroupDiscoveryList``, apidiscovery.k8s.io v2 or v2beta1): kubectl 1.27+
    reads every resource of every group from ``/api`` + ``/apis`` in two requests. It is only
    understood when sent with ``discovery_content_type(version)`` as Content-Type, and only in
    a version the client asked for: kubectl 1.27–1.29 accept v2beta1 only.
  * legacy (``APIVersions``, ``APIGroupList``, ``APIGroup``, ``APIResourceList``): the
    fallback of kubectl and the only form the Python client's DynamicClient reads.

The core group (``""``) is served under ``/api``; every other group under ``/apis``.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any, Literal

from kubegc.api.resources import Catalog, ResourceInfo, Subresource
from kubegc.registry.groups.apiregistration.aggregation import Aggregation, RemoteGroupVersion

DiscoveryVersion = Literal["v2", "v2beta1"]

_AGGREGATED_GROUP = "apidiscovery.k8s.io"
_AGGREGATED_KIND = "APIGroupDiscoveryList"
_SUPPORTED: tuple[DiscoveryVersion, ...] = ("v2", "v2beta1")


def negotiate_discovery(accept: str) -> DiscoveryVersion | None:
    """The aggregated discovery version to answer with, or None for the legacy form.

    Walks the Accept list in the client's order and stops at the first media range it can
    serve: an aggregated JSON ``APIGroupDiscoveryList`` in v2 or v2beta1, or anything else
    JSON-compatible (``application/json``, ``application/*``, ``*/*``), which means legacy.
    Ranges it cannot serve (protobuf, other versions, ``q=0``) are skipped. Answering v2 to a
    client that listed only v2beta1 (kubectl 1.27-1.29) would silently give it zero resources.
    """
    for media_range in accept.split(","):
        mime, params = _parse_media_range(media_range)
        if params.get("q", "1").strip() in ("0", "0.0", "0.00", "0.000"):
            continue
        if params.get("g") == _AGGREGATED_GROUP or params.get("as") == _AGGREGATED_KIND:
            version = params.get("v")
            if (mime == "application/json" and params.get("g") == _AGGREGATED_GROUP
                    and params.get("as") == _AGGREGATED_KIND and version in _SUPPORTED):
                return "v2" if version == "v2" else "v2beta1"
            continue
        if mime in ("application/json", "application/*", "*/*"):
            return None
    return None


def _parse_media_range(media_range: str) -> tuple[str, dict[str, str]]:
    mime, *raw_params = media_range.split(";")
    params: dict[str, str] = {}
    for param in raw_params:
        key, sep, value = param.partition("=")
        if sep:
            params[key.strip().lower()] = value.strip().strip('"')
    return mime.strip().lower(), params


def discovery_content_type(version: DiscoveryVersion) -> str:
    """The exact Content-Type of an aggregated answer; any other makes kubectl see nothing."""
    return f"application/json;g={_AGGREGATED_GROUP};v={version};as={_AGGREGATED_KIND}"


# -- aggregated ------------------------------------------------------------------------------


def aggregated_core(catalog: Catalog, version: DiscoveryVersion = "v2",
                    remote: Aggregation | None = None) -> dict[str, Any]:
    """``GET /api`` in the aggregated form: one item, the core group (name ``""``)."""
    items = [_group_discovery(catalog, g, vs) for g, vs in catalog.groups() if g == ""]
    return _discovery_list(items, version)


def aggregated_groups(catalog: Catalog, version: DiscoveryVersion = "v2",
                      remote: Aggregation | None = None) -> dict[str, Any]:
    """``GET /apis`` in the aggregated form: one item per named group, built-ins and CRDs,
    then the groups of remote APIServices: a version whose APIService is not available is
    ``Stale`` with no resources (kube-aggregator's discovery manager), which clients report
    as "stale GroupVersion discovery"."""
    items = [_group_discovery(catalog, g, vs) for g, vs in catalog.groups() if g != ""]
    local = {g for g, _ in catalog.groups()}
    for group, entries in remote.groups() if remote is not None else []:
        if group not in local:
            items.append(_remote_group_discovery(group, entries))
    return _discovery_list(items, version)


def _remote_group_discovery(group: str, entries: list[RemoteGroupVersion]) -> dict[str, Any]:
    return {
        "metadata": {"name": group, "creationTimestamp": None},
        "versions": [{
            "version": e.version,
            "resources": [_remote_resource_discovery(e, r) for r in e.resources
                          if "/" not in str(r.get("name") or "")] if e.available else [],
            "freshness": "Current" if e.available else "Stale",
        } for e in entries],
    }


def _remote_resource_discovery(entry: RemoteGroupVersion, r: dict[str, Any]) -> dict[str, Any]:
    """An ``APIResource`` of a backend's ``APIResourceList`` in the aggregated form."""
    out: dict[str, Any] = {
        "resource": r.get("name"),
        "responseKind": _kind(entry.group, entry.version, str(r.get("kind") or "")),
        "scope": "Namespaced" if r.get("namespaced") else "Cluster",
        "singularResource": r.get("singularName") or "",
        "verbs": list(r.get("verbs") or []),
    }
    for key in ("shortNames", "categories"):
        if r.get(key):
            out[key] = list(r[key])
    return out


def _discovery_list(items: list[dict[str, Any]], version: DiscoveryVersion) -> dict[str, Any]:
    return {
        "kind": _AGGREGATED_KIND,
        "apiVersion": f"{_AGGREGATED_GROUP}/{version}",
        "metadata": {},
        "items": items,
    }


def _group_discovery(catalog: Catalog, group: str, versions: list[str]) -> dict[str, Any]:
    return {
        "metadata": {"name": group, "creationTimestamp": None},
        "versions": [  # preferred (newest) first
            {
                "version": v,
                "resources": [
                    _resource_discovery(info, v) for info in catalog.in_group_version(group, v)
                ],
                "freshness": "Current",
            }
            for v in versions
        ],
    }


def _resource_discovery(info: ResourceInfo, version: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "resource": info.resource,
        "responseKind": _kind(info.group, version, info.kind),
        "scope": "Namespaced" if info.namespaced else "Cluster",
        "singularResource": info.singular_name,
        "verbs": list(info.verbs),
    }
    if info.short_names:
        out["shortNames"] = list(info.short_names)
    if info.categories:
        out["categories"] = list(info.categories)
    if info.subresources:
        out["subresources"] = [
            {
                "subresource": sub.name,
                "responseKind": _kind(*_subresource_gvk(info, version, sub)),
                "verbs": list(sub.verbs),
            }
            for sub in info.subresources
        ]
    return out


def _kind(group: str, version: str, kind: str) -> dict[str, str]:
    return {"group": group, "version": version, "kind": kind}


def _subresource_gvk(info: ResourceInfo, version: str, sub: Subresource) -> tuple[str, str, str]:
    """``scale`` answers ``autoscaling/v1 Scale``; ``status``, ``log``… the parent's kind."""
    group = info.group if sub.group is None else sub.group
    return group, sub.version or version, sub.kind or info.kind


# -- legacy ----------------------------------------------------------------------------------


def legacy_api_versions(server_address: str) -> dict[str, Any]:
    """``GET /api`` (legacy): ``APIVersions``; ``server_address`` is ``host:port``."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address},
        ],
    }


def legacy_group_list(catalog: Catalog, remote: Aggregation | None = None) -> dict[str, Any]:
    """``GET /apis`` (legacy): ``APIGroupList`` of the named groups, the remote
    APIServices' included whether available or not (upstream's ``apisHandler``)."""
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [_api_group(g, vs) for g, vs in _all_groups(catalog, remote) if g != ""],
    }


def _all_groups(catalog: Catalog, remote: Aggregation | None) -> list[tuple[str, list[str]]]:
    groups = catalog.groups()
    local = {g for g, _ in groups}
    return groups + [(g, [e.version for e in entries])
                     for g, entries in (remote.groups() if remote is not None else [])
                     if g not in local]


def legacy_group(catalog: Catalog, group: str, remote: Aggregation | None = None
                 ) -> dict[str, Any] | None:
    """``GET /apis/<group>``: ``APIGroup``, or None (404) for the core or an unknown group."""
    for name, versions in _all_groups(catalog, remote):
        if name == group and group != "":
            return {"kind": "APIGroup", "apiVersion": "v1", **_api_group(name, versions)}
    return None


def _api_group(group: str, versions: list[str]) -> dict[str, Any]:
    entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"name": group, "versions": entries, "preferredVersion": entries[0]}


def legacy_resource_list(catalog: Catalog, group: str, version: str) -> dict[str, Any] | None:
    """``GET /api/v1`` or ``/apis/<g>/<v>``: ``APIResourceList``, or None (404) when nothing
    is served in that group-version. Subresources are listed as ``<resource>/<sub>``."""
    infos = catalog.in_group_version(group, version)
    if not infos:
        return None
    resources: list[dict[str, Any]] = []
    for info in infos:
        resources.append(_api_resource(info, version))
        resources.extend(_api_subresource(info, version, sub) for sub in info.subresources)
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": resources,
    }


def _api_resource(info: ResourceInfo, version: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": info.resource,
        "singularName": info.singular_name,
        "namespaced": info.namespaced,
        "kind": info.kind,
        "verbs": list(info.verbs),
    }
    if info.short_names:
        out["shortNames"] = list(info.short_names)
    if info.categories:
        out["categories"] = list(info.categories)
    if info.group != "authorization.k8s.io":  # the reviews are stored nowhere: no hash
        out["storageVersionHash"] = storage_version_hash(info.group, info.storage_version,
                                                         info.kind)
    return out


def _api_subresource(info: ResourceInfo, version: str, sub: Subresource) -> dict[str, Any]:
    group, sub_version, kind = _subresource_gvk(info, version, sub)
    out: dict[str, Any] = {
        "name": f"{info.resource}/{sub.name}",
        "singularName": "",
        "namespaced": info.namespaced,
    }
    if (group, sub_version) != (info.group, version):
        out["group"], out["version"] = group, sub_version
    out["kind"] = kind
    out["verbs"] = list(sub.verbs)
    return out


def storage_version_hash(group: str, version: str, kind: str) -> str:
    """Upstream's ``StorageVersionHash``: base64 of the first 8 bytes of
    sha256("<group>/<version>/<kind>") of the storage version."""
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()
