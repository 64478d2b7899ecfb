"""Defaulting (cf. ``apiserver/schema/defaulting/algorithm.go``): a field with a schema
``default`` that is absent, or ``null`` without being ``nullable``, gets a copy of the
default; defaulting then descends into every field, so defaults inside defaults apply.
Subtrees of the schema without any default are not walked."""

from __future__ import annotations

from typing import Any

from kubegc.api.types import clone
from kubegc.registry.structural.schema import Structural


def default(value: Any, schema: Structural | None) -> None:
    """Apply the defaults of ``schema`` to ``value`` in place."""
    if schema is None or not schema.defaults_below:
        return
    if type(value) is dict:
        _default_object(value, schema)
    elif type(value) is list:
        items = schema.items
        if items is None:
            return
        for i, item in enumerate(value):
            if item is None and not items.nullable:
                value[i] = item = clone(items.default)
            default(item, items)


def _default_object(value: dict[str, Any], schema: Structural) -> None:
    for key, prop in schema.properties.items():
        if prop.has_default and (key not in value or (value[key] is None and not
                                                      prop.nullable)):
            value[key] = clone(prop.default)
    additional = schema.additional_schema
    for key, item in value.items():
        sub = schema.properties.get(key)
        if sub is not None:
            default(item, sub)
        elif additional is not None:
            if item is None and not additional.nullable:
                value[key] = item = clone(additional.default)
            default(item, additional)
