"""The patch metadata table against the generated OpenAPI schemas of the built-in kinds.

Walks each kind's OpenAPI definition the way a merge walks an object (into nested objects,
and into items of lists merged by key) and checks that every field met carries the same
``x-kubernetes-patch-strategy`` / ``x-kubernetes-patch-merge-key`` as the table says.
Fields inside replaced lists are never merged, so the walk does not enter them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from kubegc.api.resources import BUILTIN_RESOURCES
from kubegc.registry import definitions as openapi
from kubegc.registry.fieldmanager.strategic_schema import BUILTIN_SCHEMA, has_strategic_schema

KINDS = [(info.group, info.versions[0], info.kind) for info in BUILTIN_RESOURCES
         if openapi.definition_name(info.group, info.versions[0], info.kind)]


def _target(prop: Mapping[str, Any]) -> str | None:
    """The definition a property leads to (through ``items`` for a list)."""
    for part in (prop, prop.get("items") or {}, *(prop.get("allOf") or ())):
        ref = part.get("$ref") if isinstance(part, Mapping) else None
        if isinstance(ref, str):
            return ref.rsplit("/", 1)[-1]
    return None


def _walk(definition: str, type_name: str, path: str,
          seen: tuple[str, ...]) -> Iterator[tuple[str, tuple[str, str], tuple[str, str]]]:
    properties = openapi.definitions()[definition].get("properties") or {}
    for name, prop in properties.items():
        meta = BUILTIN_SCHEMA.field(type_name, name)
        upstream = (prop.get("x-kubernetes-patch-strategy", ""),
                    prop.get("x-kubernetes-patch-merge-key", ""))
        yield f"{path}.{name}", upstream, (meta.strategy, meta.merge_key)
        target = _target(prop)
        merged_list = prop.get("type") != "array" or (
            "merge" in upstream[0].split(",") and upstream[1])
        if target and merged_list and target not in seen and len(seen) < 8:
            yield from _walk(target, meta.type, f"{path}.{name}", (*seen, target))


@pytest.mark.parametrize(("group", "version", "kind"), KINDS,
                         ids=[f"{g or 'core'}.{k}" for g, _, k in KINDS])
def test_table_matches_openapi_extensions(group: str, version: str, kind: str) -> None:
    definition = openapi.definition_name(group, version, kind)
    root = BUILTIN_SCHEMA.root(group, kind)
    assert definition and root is not None
    mismatches = [(path, upstream, ours)
                  for path, upstream, ours in _walk(definition, root, kind, (definition,))
                  if upstream != ours]
    assert mismatches == []


def test_walk_reaches_the_container_ports() -> None:
    definition = openapi.definition_name("apps", "v1", "Deployment")
    assert definition is not None
    paths = {path: upstream for path, upstream, _ in
             _walk(definition, "Deployment", "Deployment", (definition,))}
    assert paths["Deployment.spec.template.spec.containers.ports"] == ("merge", "containerPort")


@pytest.mark.parametrize(("group", "kind", "expected"), [
    pytest.param("", "Pod", True, id="core"),
    pytest.param("batch", "CronJob", True, id="batch"),
    pytest.param("kubegc.io", "DeletionRecord", True, id="kubegc-builtin"),
    pytest.param("example.com", "Widget", False, id="custom-resource"),
    pytest.param("", "Widget", False, id="unknown-core-kind"),
])
def test_has_strategic_schema(group: str, kind: str, expected: bool) -> None:
    assert has_strategic_schema(group, kind) is expected
