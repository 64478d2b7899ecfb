"""OpenAPI v3 schemas of the built-in kinds, and the required-field check built on them.

The schemas live in ``openapi_data/schemas.json.gz`` beside this module, generated once by
``scripts/gen_openapi.py`` from the official Python client's models. They are keyed by
upstream definition names (``io.k8s.api.core.v1.Pod``,
``io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta``) and reference each other with
``$ref: "#/components/schemas/<name>"``. Top-level kinds carry
``x-kubernetes-group-version-kind``; list fields carry upstream's strategic-merge-patch
metadata (``x-kubernetes-patch-strategy`` / ``x-kubernetes-patch-merge-key``).

The file is read lazily, once per process. Everything returned is shared: callers must treat
schema dicts as read-only.

``missing_required`` (and ``missing_required_in``, for a CRD's schema) lists the fields a
schema marks required that an object lacks. Nothing in the server calls it: kube-apiserver
does not check built-in objects against their OpenAPI schema; each kind's hand-written
validation rejects missing fields (``field.Required``: ``spec.containers: Required value``),
and kubegc does the same in its groups' validation for the kinds it validates (pods and
the workloads' pod templates: ``registry/groups/core/validation_pods.py``). Clients rely
on that: the official Python client cannot even read a Pod without ``spec.containers``
(tests/e2e/test_python_client.py).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

import orjson

from kubegc.api.memo import Memo

SCHEMA_REF_PREFIX = "#/components/schemas/"
DATA_FILE = "openapi_data/schemas.json.gz"

Schema = Mapping[str, Any]


@cache
def definitions() -> Mapping[str, Schema]:
    """All generated definitions, by upstream name (loaded on first use)."""
    raw = resources.files("kubegc.registry").joinpath(DATA_FILE).read_bytes()
    data: dict[str, Any] = json.loads(gzip.decompress(raw))
    defs: dict[str, Schema] = data["definitions"]
    return defs


@cache
def _kind_index() -> Mapping[tuple[str, str, str], str]:
    index: dict[tuple[str, str, str], str] = {}
    for name, schema in definitions().items():
        for gvk in schema.get("x-kubernetes-group-version-kind", ()):
            index[(gvk["group"], gvk["version"], gvk["kind"])] = name
    return index


def definition_name(group: str, version: str, kind: str) -> str | None:
    """Upstream definition name of a built-in kind: ``("apps", "v1", "Deployment")`` →
    ``io.k8s.api.apps.v1.Deployment``; None when the kind has no generated schema."""
    return _kind_index().get((group, version, kind))


def ref(name: str) -> dict[str, str]:
    return {"$ref": SCHEMA_REF_PREFIX + name}


def _ref_name(schema: Schema) -> str | None:
    target = schema.get("$ref")
    if isinstance(target, str) and target.startswith(SCHEMA_REF_PREFIX):
        return target[len(SCHEMA_REF_PREFIX):]
    return None


def referenced(schema: Any) -> Iterable[str]:
    """Definition names a schema refers to directly (anywhere inside it)."""
    if isinstance(schema, Mapping):
        name = _ref_name(schema)
        if name is not None:
            yield name
        for value in schema.values():
            yield from referenced(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from referenced(item)


def closure(names: Iterable[str]) -> set[str]:
    """The named definitions plus everything they reference, transitively."""
    defs = definitions()
    seen: set[str] = set()
    stack = [n for n in names if n in defs]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        stack.extend(n for n in referenced(defs[name]) if n in defs and n not in seen)
    return seen


def field_schema(
    group: str, version: str, kind: str, path: Sequence[str],
) -> dict[str, Any] | None:
    """The schema of a field of a built-in kind, ``$ref``/``allOf`` merged into one dict.

    ``path`` holds field names; arrays are stepped through implicitly (``("spec",
    "containers", "ports")`` is the ports of every container) and a name that is not a
    property of a map-typed schema selects its values. The result keeps the property's own
    keys (``x-kubernetes-patch-strategy``, ``x-kubernetes-patch-merge-key``, ``description``)
    next to the referenced type's. None when the kind or a field is unknown.
    """
    name = definition_name(group, version, kind)
    if name is None:
        return None
    current = _merged(ref(name))
    for step in path:
        while current.get("type") == "array" and isinstance(current.get("items"), Mapping):
            current = _merged(current["items"])
        properties = current.get("properties") or {}
        extra = current.get("additionalProperties")
        if step in properties:
            current = _merged(properties[step])
        elif not properties and isinstance(extra, Mapping):
            current = _merged(extra)
        else:
            return None
    return current


def _merged(schema: Schema) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in reversed(_resolve(schema)):  # the property's own keys win over its type's
        out.update(part)
    out.pop("allOf", None)
    return out


def required_fields(group: str, version: str, kind: str) -> tuple[str, ...]:
    """Top-level fields the kind's schema marks required (most kinds have none)."""
    name = definition_name(group, version, kind)
    return tuple(definitions()[name].get("required", ())) if name else ()


def missing_required(obj: Mapping[str, Any], group: str, version: str, kind: str) -> list[str]:
    """Paths of required fields absent (or null) in ``obj``, e.g. ``["spec.containers"]``.

    Walks every nested object that ``obj`` contains (spec, status, list items as
    ``spec.containers[0].name``, map values as ``data[key]``), and checks only required-ness:
    types, formats and unknown fields are not validated. Kinds without a generated schema
    (custom resources, unknown kinds) have no required fields here; use
    ``missing_required_in`` with the CRD's schema for those.
    """
    name = definition_name(group, version, kind)
    if name is None:
        return []
    return missing_required_in(obj, ref(name))


def missing_required_in(obj: Any, schema: Schema, path: str = "") -> list[str]:
    """``missing_required`` against any schema: a CRD's ``openAPIV3Schema`` or a ``$ref``
    to a built-in definition (``$ref``/``allOf`` are followed; ``anyOf``/``oneOf`` are not)."""
    out: list[str] = []
    _walk(obj, schema, path, out)
    return out


def _walk(value: Any, schema: Schema, path: str, out: list[str]) -> None:
    for part in _resolve(schema):
        if isinstance(value, Mapping):
            _walk_object(value, part, path, out)
        elif isinstance(value, list) and isinstance(part.get("items"), Mapping):
            for i, item in enumerate(value):
                _walk(item, part["items"], f"{path}[{i}]", out)


def _walk_object(value: Mapping[str, Any], schema: Schema, path: str, out: list[str]) -> None:
    for name in schema.get("required", ()):
        if value.get(name) is None:
            out.append(_join(path, name))
    properties = schema.get("properties")
    extra = schema.get("additionalProperties")
    for key, item in value.items():
        if item is None:
            continue
        if isinstance(properties, Mapping) and key in properties:
            _walk(item, properties[key], _join(path, key), out)
        elif isinstance(extra, Mapping) and not properties:
            _walk(item, extra, f"{path}[{key}]", out)


def _resolve(schema: Schema) -> list[Schema]:
    """The concrete schemas ``schema`` stands for: itself (minus ``$ref``), its ``$ref``
    target, its ``allOf`` members."""
    name = _ref_name(schema)
    if name is not None:
        target = definitions().get(name)
        siblings = {k: v for k, v in schema.items() if k != "$ref"}
        return [siblings, *(_resolve(target) if target is not None else ())]
    parts: list[Schema] = [schema]
    for member in schema.get("allOf", ()):
        if isinstance(member, Mapping):
            parts.extend(_resolve(member))
    return parts


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def unknown_fields(obj: Any, group: str, version: str, kind: str, *,
                   prune: bool = False) -> list[str]:
    """Paths of fields in ``obj`` that the kind's schema does not declare, as
    kube-apiserver's strict decoding reports them (``spec.replicas2``,
    ``spec.template.spec.containers[0].imagee``); with ``prune`` they are also removed
    from ``obj``, as decoding into the typed object drops them upstream. Kinds without a
    generated schema, and CustomResourceDefinitions (whose nested JSON schemas are
    free-form), report none."""
    name = definition_name(group, version, kind)
    if name is None or group == "apiextensions.k8s.io":
        return []
    out: list[str] = []
    schema = definitions()[name]
    properties, _, _, free = _shape(schema)
    if free or type(obj) is not dict or not properties:
        _walk_unknown(obj, schema, "", out, prune)
        return out
    # The root level, with the subtrees of ``spec``, ``data``... memoized when clean.
    unknown: list[str] = []
    for key, item in obj.items():
        sub = properties.get(key)
        if sub is None:
            unknown.append(key)
        elif type(item) is dict and item and key != "metadata":
            _walk_memoized(item, sub, key, out, prune)
        elif type(item) is dict or type(item) is list:
            _walk_unknown(item, sub, key, out, prune)
    for key in unknown:
        out.append(key)
        if prune:
            del obj[key]
    return out


#: JSON of subtrees found free of unknown fields, with the id of their schema node (the
#: module's definitions are never freed, so ids are stable).
_clean = Memo()


def _walk_memoized(value: dict[str, Any], schema: Schema, path: str, out: list[str],
                   prune: bool) -> None:
    try:
        key = (id(schema), orjson.dumps(value))
    except TypeError:
        _walk_unknown(value, schema, path, out, prune)
        return
    if _clean.get(key) is not None:
        return
    found = len(out)
    _walk_unknown(value, schema, path, out, prune)
    if len(out) == found:
        _clean.put(key, b"")


_Shape = tuple[dict[str, Any], Any, Any, bool]  # properties, additionalProperties, items, free
_shapes: dict[int, _Shape] = {}


def _shape(schema: Schema) -> _Shape:
    """``schema`` with ``$ref``/``allOf`` resolved, memoized by identity: only ever called
    with nodes of the module's definitions (loaded once, never freed, never mutated), so
    an id is never reused by another schema and resolution happens once per node."""
    cached = _shapes.get(id(schema))
    if cached is None:
        properties: dict[str, Any] = {}
        extra: Any = None
        items: Any = None
        free = False
        for part in _resolve(schema):
            properties.update(part.get("properties") or {})
            extra = extra or part.get("additionalProperties")
            items = items or part.get("items")
            free = free or bool(part.get("x-kubernetes-preserve-unknown-fields"))
        cached = _shapes[id(schema)] = (properties, extra, items, free)
    return cached


def _walk_unknown(value: Any, schema: Schema, path: str, out: list[str], prune: bool) -> None:
    properties, extra, items, free = _shape(schema)
    if free:
        return
    if type(value) is dict:
        if not properties:
            if isinstance(extra, Mapping):
                for key, item in value.items():
                    if type(item) is dict or type(item) is list:
                        _walk_unknown(item, extra, f"{path}[{key}]", out, prune)
            return
        unknown: list[str] = []
        for key, item in value.items():
            sub = properties.get(key)
            if sub is None:
                unknown.append(key)
            elif type(item) is dict or type(item) is list:
                _walk_unknown(item, sub, f"{path}.{key}" if path else key, out, prune)
        for key in unknown:
            out.append(f"{path}.{key}" if path else key)
            if prune:
                del value[key]
    elif type(value) is list and isinstance(items, Mapping):
        for i, item in enumerate(value):
            if type(item) is dict or type(item) is list:
                _walk_unknown(item, items, f"{path}[{i}]", out, prune)
