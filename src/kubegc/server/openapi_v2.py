"""The OpenAPI v2 (Swagger 2.0) document: ``GET /openapi/v2``.

Built from the same data as the v3 documents (``server.openapi``): the paths and schemas
of every served group-version, converted to Swagger 2.0 — ``#/components/schemas/`` refs
become ``#/definitions/``, a ``$ref`` wrapped in ``allOf`` (v3's way to give it a
description) becomes a plain ``$ref`` with siblings, request bodies become ``body``
parameters, parameter schemas are inlined, and defaults are pruned (kube-apiserver's
``handler.PruneDefaults``). Custom resources are published by upstream's v2 rules
(apiextensions-apiserver ``builder.buildKubeNative`` with ``V2``, ``ToStructuralOpenAPIV2``):
a schema that preserves unknown fields at its root becomes ``{"type": "object"}``, and
inside, junctors (``allOf``/``anyOf``/``oneOf``/``not``) are dropped, nullable and
unknown-preserving schemas lose their type, items and properties, and so on — what
kubectl's v2 model parser (kube-openapi ``util/proto``) accepts.

Who reads it: kubectl's client-side validation (every ``kind: List`` file in every version,
every file in 1.27/1.28), its fieldValidation check in 1.27/1.28 (the ``patch`` operation
with the kind's ``x-kubernetes-group-version-kind`` and a ``fieldValidation`` parameter),
client-side ``apply``'s strategic-merge-patch metadata, ``explain
--output=plaintext-openapiv2``. Pure functions; the HTTP layer serializes and caches.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kubegc.api.resources import Catalog, ResourceInfo
from kubegc.registry import definitions as schema
from kubegc.server.openapi import (
    KUBERNETES_VERSION,
    CrdSchemas,
    custom_schema_name,
    openapi_v3_group_version,
)

V3_PREFIX, V2_PREFIX = schema.SCHEMA_REF_PREFIX, "#/definitions/"
_META = "io.k8s.apimachinery.pkg.apis.meta.v1"
_METADATA_DESCRIPTION = (
    "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#metadata")
#: kube-apiserver's only security definition (``BearerToken``, the Authorization header).
_SECURITY_DEFINITIONS = {"BearerToken": {
    "type": "apiKey", "name": "authorization", "in": "header",
    "description": "Bearer Token authentication"}}
_METHODS = ("get", "put", "post", "delete", "options", "head", "patch")


def openapi_v2(catalog: Catalog, crd_schemas: CrdSchemas | None = None, *,
               kubernetes_version: str = KUBERNETES_VERSION) -> dict[str, Any]:
    """The whole Swagger 2.0 document: every served group-version's paths and the
    definitions they use, custom resources included."""
    paths: dict[str, Any] = {}
    definitions: dict[str, Any] = {}
    for group, versions in catalog.groups():
        for version in versions:
            doc = openapi_v3_group_version(catalog, group, version, crd_schemas,
                                           kubernetes_version=kubernetes_version)
            if doc is None:
                continue
            paths.update((p, _path_item(item)) for p, item in doc["paths"].items())
            for name, value in doc["components"]["schemas"].items():
                if name not in definitions:
                    definitions[name] = to_v2_schema(value)
    for info in catalog:
        if info.custom:
            for version in info.versions:
                raw = (crd_schemas or {}).get((info.group, version, info.kind))
                definitions[custom_schema_name(info.group, version, info.kind)] = (
                    custom_resource_schema_v2(info, version, raw))
    return {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": kubernetes_version},
        "paths": dict(sorted(paths.items())),
        "definitions": dict(sorted(definitions.items())),
        "securityDefinitions": _SECURITY_DEFINITIONS,
        "security": [{"BearerToken": []}],
    }


# -- schemas ---------------------------------------------------------------------------------

_DROPPED = frozenset({"default", "nullable", "anyOf", "oneOf", "not"})


def to_v2_schema(value: Any) -> Any:
    """A v3 component schema (built-in or kubegc's own) as a v2 definition."""
    if isinstance(value, list):
        return [to_v2_schema(v) for v in value]
    if not isinstance(value, Mapping):
        return value
    out: dict[str, Any] = {}
    members = value.get("allOf")
    if isinstance(members, list) and len(members) == 1 and "$ref" in members[0]:
        out["$ref"] = _v2_ref(members[0]["$ref"])  # allOf: [$ref] + description
    elif members is not None:
        out["allOf"] = to_v2_schema(members)
    for key, item in value.items():
        if key == "$ref":
            out[key] = _v2_ref(item)
        elif key in ("properties", "patternProperties") and isinstance(item, Mapping):
            out[key] = {k: to_v2_schema(v) for k, v in item.items()}
        elif key in ("items", "additionalProperties"):
            out[key] = to_v2_schema(item)
        elif key not in _DROPPED and key != "allOf":
            out[key] = item
    return out


def _v2_ref(ref: Any) -> Any:
    if isinstance(ref, str) and ref.startswith(V3_PREFIX):
        return V2_PREFIX + ref[len(V3_PREFIX):]
    return ref


#: What a structural schema keeps (apiextensions-apiserver ``Structural.ToKubeOpenAPI``).
_STRUCTURAL = frozenset({
    "type", "format", "title", "description", "items", "properties", "additionalProperties",
    "enum", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength",
    "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "multipleOf",
    "maxProperties", "minProperties", "required", "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource", "x-kubernetes-int-or-string",
    "x-kubernetes-list-map-keys", "x-kubernetes-list-type", "x-kubernetes-map-type",
    "x-kubernetes-validations",
})


def custom_resource_schema_v2(info: ResourceInfo, version: str,
                              openapi_v3_schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """A CRD version's schema as kube-apiserver publishes it in v2 (``buildKubeNative``)."""
    raw = openapi_v3_schema
    if raw is None or raw.get("x-kubernetes-preserve-unknown-fields") is True:
        # apiVersion, kind and metadata are left out too: kubectl would refuse anything else
        out: dict[str, Any] = {"type": "object"}
    else:
        out = _structural_v2(raw)
        type_meta = to_v2_schema(schema.definitions()[f"{_META}.Status"])["properties"]
        properties = out.setdefault("properties", {})
        properties["metadata"] = {"$ref": f"{V2_PREFIX}{_META}.ObjectMeta",
                                  "description": _METADATA_DESCRIPTION}
        properties["apiVersion"], properties["kind"] = type_meta["apiVersion"], type_meta["kind"]
        _add_embedded_properties(out, type_meta)
    out["x-kubernetes-group-version-kind"] = [
        {"group": info.group, "kind": info.kind, "version": version}]
    return out


def _structural_v2(raw: Mapping[str, Any]) -> dict[str, Any]:
    """``ToStructuralOpenAPIV2`` of a structural schema (a copy; defaults pruned)."""
    out = {k: copy.deepcopy(v) for k, v in raw.items()
           if k in _STRUCTURAL and k not in ("items", "properties", "additionalProperties")}
    nullable = raw.get("nullable") is True
    preserve = raw.get("x-kubernetes-preserve-unknown-fields") is True
    if not (nullable or preserve):
        items = raw.get("items")
        if isinstance(items, Mapping):
            out["items"] = _structural_v2(items)
        properties = raw.get("properties")
        if isinstance(properties, Mapping):
            out["properties"] = {k: _structural_v2(v) for k, v in properties.items()
                                 if isinstance(v, Mapping)}
            nullable_fields = {k for k, v in properties.items()
                               if isinstance(v, Mapping) and v.get("nullable") is True}
            _filter_required(out, nullable_fields)
    extra = raw.get("additionalProperties")
    if isinstance(extra, bool):
        out["additionalProperties"] = extra
    elif isinstance(extra, Mapping):
        out["additionalProperties"] = _structural_v2(extra)
        if extra.get("nullable") is True:
            out.pop("required", None)
    if nullable or (out.get("type") == "array" and "items" not in out) or (
            preserve and out.get("type") == "object"):
        out.pop("type", None)
    return out


def _filter_required(out: dict[str, Any], fields: set[str]) -> None:
    required = [r for r in out.get("required") or () if r not in fields]
    if required:
        out["required"] = required
    else:
        out.pop("required", None)


def _add_embedded_properties(value: dict[str, Any], type_meta: Mapping[str, Any]) -> None:
    """apiVersion, kind and metadata of every ``x-kubernetes-embedded-resource`` object
    (``addEmbeddedProperties``; not where unknown fields are preserved)."""
    for sub in (value.get("properties") or {}).values():
        _add_embedded_properties(sub, type_meta)
    for key in ("items", "additionalProperties"):
        if isinstance(value.get(key), dict):
            _add_embedded_properties(value[key], type_meta)
    if value.get("x-kubernetes-preserve-unknown-fields") is True:
        return
    if value.get("x-kubernetes-embedded-resource") is True:
        properties = value.setdefault("properties", {})
        properties["apiVersion"], properties["kind"] = type_meta["apiVersion"], type_meta["kind"]
        properties["metadata"] = {"$ref": f"{V2_PREFIX}{_META}.ObjectMeta",
                                  "description": _METADATA_DESCRIPTION}
        required = value.setdefault("required", [])
        required += [k for k in ("kind", "apiVersion") if k not in required]


# -- paths -----------------------------------------------------------------------------------


def _path_item(item: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {m: _operation(item[m]) for m in _METHODS if m in item}
    if "parameters" in item:
        out["parameters"] = [_parameter(p) for p in item["parameters"]]
    return out


def _operation(op: Mapping[str, Any]) -> dict[str, Any]:
    body = op.get("requestBody")
    parameters = [_parameter(p) for p in op.get("parameters") or ()]
    out: dict[str, Any] = {"description": op.get("description", "")}
    if body is not None:
        content = body.get("content") or {}
        out["consumes"] = list(content)
        media: Mapping[str, Any] = next(iter(content.values()), {})
        parameters.insert(0, {"name": "body", "in": "body",
                              "required": bool(body.get("required")),
                              "schema": to_v2_schema(media.get("schema") or {})})
    ok = (op.get("responses") or {}).get("200") or {}
    out["produces"] = list(ok.get("content") or {})
    out["schemes"] = ["https"]
    out["tags"] = list(op.get("tags") or ())
    out["operationId"] = op.get("operationId", "")
    out["parameters"] = parameters
    out["responses"] = {code: _response(r) for code, r in (op.get("responses") or {}).items()}
    out.update((k, v) for k, v in op.items() if k.startswith("x-"))
    return out


def _parameter(param: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in (param.get("schema") or {}).items()}
    out.update((k, v) for k, v in param.items() if k != "schema")
    return out


def _response(response: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"description": response.get("description", "")}
    content = response.get("content") or {}
    media = next(iter(content.values()), None)
    if media is not None and "schema" in media:
        out["schema"] = to_v2_schema(media["schema"])
    return out
