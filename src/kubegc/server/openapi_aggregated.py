"""The remote groups' OpenAPI merged into kubegc's (cf. kube-aggregator's
pkg/controllers/openapi/aggregator ``MergeSpecsIgnorePathConflictRenamingDefinitionsAndParameters``
for v2, and pkg/controllers/openapiv3/aggregator for v3), from the documents the
aggregator's OpenAPI controller downloaded (``RemoteGroupVersion.openapi_v2``/``openapi_v3``).

v2: a backend's paths are added unless kubegc serves the path already (the first spec
wins, as upstream ignores a conflicting path), its definitions unless one of that name is
there. Upstream renames a conflicting definition that differs (``..._v2``); here the local
one is kept and the backend's references resolve to it (a backend serving the standard
``io.k8s.apimachinery`` definitions, as every k8s.io/apiserver does, sees no difference).
v3: each remote group-version is listed in the ``/openapi/v3`` index with its document's
hash, and ``/openapi/v3/apis/<group>/<version>`` serves the document downloaded.
"""

from __future__ import annotations

from typing import Any

from kubegc.registry.groups.apiregistration.aggregation import Aggregation
from kubegc.server.openapi import document_hash, group_version_path


def merge_v2(spec: dict[str, Any], aggregation: Aggregation) -> dict[str, Any]:
    """``spec`` with every remote backend's paths and definitions added."""
    paths, definitions = dict(spec["paths"]), dict(spec["definitions"])
    seen: list[int] = []
    for entry in aggregation.remote.values():
        remote = entry.openapi_v2
        if remote is None or id(remote) in seen:
            continue
        seen.append(id(remote))
        for path, item in (remote.get("paths") or {}).items():
            paths.setdefault(path, item)
        for name, definition in (remote.get("definitions") or {}).items():
            definitions.setdefault(name, definition)
    return {**spec, "paths": dict(sorted(paths.items())),
            "definitions": dict(sorted(definitions.items()))}


def merge_v3_index(index: dict[str, Any], aggregation: Aggregation) -> dict[str, Any]:
    """``index`` with each remote group-version whose document was downloaded."""
    paths = dict(index["paths"])
    for entry in aggregation.remote.values():
        key = group_version_path(entry.group, entry.version)
        if entry.openapi_v3 is not None and key not in paths:
            paths[key] = {"serverRelativeURL":
                          f"/openapi/v3/{key}?hash={document_hash(entry.openapi_v3)}"}
    return {**index, "paths": dict(sorted(paths.items()))}


def remote_v3(aggregation: Aggregation, group: str, version: str) -> dict[str, Any] | None:
    """The downloaded v3 document of a remote group-version, if any."""
    entry = aggregation.lookup(group, version)
    return entry.openapi_v3 if entry is not None else None
