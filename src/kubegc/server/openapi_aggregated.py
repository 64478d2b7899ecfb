"""The remote groups' OpenAPI merged into kubegc's (cf. kube-aggregator's
pkg/controllers/openapi/aggregator ``MergeSpecsIgnorePathConflictRenamingDefinitionsAndParameters``
for v2, and pkg/controllers/openapiv3/aggregator for v3), from the documents the
aggregator's OpenAPI controller downloaded (``RemoteGroupVersion.openapi_v2``/``openapi_v3``).

v2: as kube-openapi's ``mergeSpecs`` with path conflicts ignored (what the aggregator
calls): a backend's paths kubegc does not serve are added with the definitions they use
(transitively); a definition named as one already there but different is renamed
``<name>_v2`` (``_v3``, ... if taken) and the backend's references follow it; an identical
one is shared. A backend whose every path is kubegc's adds nothing.
v3: each remote group-version is listed in the ``/openapi/v3`` index with its document's
hash, and ``/openapi/v3/apis/<group>/<version>`` serves the document downloaded.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kubegc.registry.groups.apiregistration.aggregation import Aggregation
from kubegc.server.openapi import document_hash, group_version_path

_DEFINITION = "#/definitions/"


def _refs(value: Any) -> Iterator[str]:
    """Every ``$ref`` in ``value``."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "$ref" and isinstance(item, str):
                yield item
            else:
                yield from _refs(item)
    elif isinstance(value, list):
        for item in value:
            yield from _refs(item)


def _renamed(value: Any, renames: dict[str, str]) -> Any:
    """``value`` with its references to renamed definitions following them."""
    if isinstance(value, dict):
        return {k: (_DEFINITION + renames[v[len(_DEFINITION):]]
                    if k == "$ref" and isinstance(v, str) and v.startswith(_DEFINITION)
                    and v[len(_DEFINITION):] in renames else _renamed(v, renames))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(item, renames) for item in value]
    return value


def _used(definitions: dict[str, Any], roots: list[Any]) -> dict[str, Any]:
    """``FilterSpecByPaths``: the definitions ``roots`` reference, transitively."""
    used: dict[str, Any] = {}
    pending = [ref for root in roots for ref in _refs(root)]
    while pending:
        ref = pending.pop()
        name = ref[len(_DEFINITION):] if ref.startswith(_DEFINITION) else ""
        if name in definitions and name not in used:
            used[name] = definitions[name]
            pending.extend(_refs(definitions[name]))
    return used


def _merge_spec(paths: dict[str, Any], definitions: dict[str, Any],
                source: dict[str, Any]) -> None:
    """``mergeSpecs(dest, source, renameModelConflicts=true, ignorePathConflicts=true)``."""
    source_paths = source.get("paths") or {}
    keep = {p: item for p, item in source_paths.items() if p not in paths}
    if not keep:
        return
    added = _used(source.get("definitions") or {}, list(keep.values()))
    taken = set(definitions) | set(added)
    renames: dict[str, str] = {}
    for name, definition in added.items():
        if name in definitions and definitions[name] != definition:
            i = 2
            while f"{name}_v{i}" in taken:
                i += 1
            renames[name] = f"{name}_v{i}"
            taken.add(renames[name])
    for name, definition in added.items():
        definitions.setdefault(renames.get(name, name), _renamed(definition, renames))
    paths.update((p, _renamed(item, renames)) for p, item in keep.items())


def merge_v2(spec: dict[str, Any], aggregation: Aggregation) -> dict[str, Any]:
    """``spec`` with every remote backend's spec merged in (kubegc's first)."""
    paths, definitions = dict(spec["paths"]), dict(spec["definitions"])
    seen: list[int] = []
    for entry in aggregation.remote.values():
        remote = entry.openapi_v2
        if remote is None or id(remote) in seen:
            continue
        seen.append(id(remote))
        _merge_spec(paths, definitions, remote)
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
