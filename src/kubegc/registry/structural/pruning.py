"""Pruning (cf. ``apiserver/schema/pruning``, ``defaulting/prunenulls.go`` and
``schema/objectmeta/coerce.go``): what decoding a custom resource drops.

* Fields the schema does not specify are removed, except under
  ``x-kubernetes-preserve-unknown-fields: true``; ``apiVersion``, ``kind`` and ``metadata``
  of the root and of every ``x-kubernetes-embedded-resource`` object are kept.
* ``null`` values of fields that are neither ``nullable`` nor defaulted are removed.
* ``metadata`` of the root and of embedded resources loses the fields ObjectMeta does not
  have, as decoding into ``metav1.ObjectMeta`` drops them.

The paths of the removed unknown fields are returned for ``fieldValidation`` (Strict/Warn),
spelled as upstream's ``UnknownFieldPathOptions`` does (``spec.foo``, ``spec.list[0].x``).
"""

from __future__ import annotations

from typing import Any

from kubegc.registry.definitions import _walk_unknown, definitions
from kubegc.registry.structural.schema import Structural

_META_FIELDS = frozenset(("apiVersion", "kind", "metadata"))
_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def prune(obj: dict[str, Any], schema: Structural | None) -> list[str]:
    """Prune a whole custom resource in place (``isResourceRoot``); returns the unknown
    field paths: the pruned ones sorted, then the unknown metadata fields."""
    pruned: list[str] = []
    metadata: list[str] = []
    root = schema or Structural()
    _prune_object(obj, root, "", pruned, metadata, embedded=True,
                  preserve=root.preserve_unknown_fields)
    pruned.sort()
    return pruned + metadata


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _prune(value: Any, schema: Structural | None, path: str, pruned: list[str],
           metadata: list[str]) -> None:
    """Upstream's ``prune``."""
    if schema is not None and schema.preserve_unknown_fields:
        _skip_prune(value, schema, path, pruned, metadata)
    elif type(value) is dict:
        if schema is None:
            pruned.extend(_join(path, k) for k in value)
            value.clear()
        else:
            _prune_object(value, schema, path, pruned, metadata,
                          embedded=schema.embedded_resource, preserve=False)
    elif type(value) is list:
        items = schema.items if schema is not None else None
        for i, item in enumerate(value):
            if type(item) is dict or type(item) is list:
                _prune(item, items, f"{path}[{i}]", pruned, metadata)


def _skip_prune(value: Any, schema: Structural | None, path: str, pruned: list[str],
                metadata: list[str]) -> None:
    """Upstream's ``skipPrune``: under ``x-kubernetes-preserve-unknown-fields`` unknown
    fields stay; the specified ones are still pruned below."""
    if schema is None:
        return
    if type(value) is dict:
        _prune_object(value, schema, path, pruned, metadata,
                      embedded=schema.embedded_resource, preserve=True)
    elif type(value) is list:
        for i, item in enumerate(value):
            if type(item) is dict or type(item) is list:
                _skip_prune(item, schema.items, f"{path}[{i}]", pruned, metadata)


def _prune_object(value: dict[str, Any], schema: Structural, path: str, pruned: list[str],
                  metadata: list[str], *, embedded: bool, preserve: bool) -> None:
    """One object: unknown fields removed (kept with ``preserve``), nulls of fields that are
    neither nullable nor defaulted removed (``PruneNonNullableNullsWithoutDefaults``)."""
    properties, additional = schema.properties, schema.additional_properties
    if embedded and type(value.get("metadata")) is dict:
        _walk_unknown(value["metadata"], definitions()[_OBJECT_META], _join(path, "metadata"),
                      metadata, True)
    removed: list[str] = []
    for key, item in value.items():
        if embedded and key in _META_FIELDS:
            continue
        sub = properties.get(key)
        if sub is None:
            if additional is None:
                if not preserve:
                    removed.append(key)
                    pruned.append(_join(path, key))
                continue
            sub = schema.additional_schema
        if item is None:
            if sub is not None and not sub.nullable and not sub.has_default:
                removed.append(key)
        elif type(item) is dict or type(item) is list:
            _prune(item, sub, _join(path, key), pruned, metadata)
    for key in removed:
        del value[key]
