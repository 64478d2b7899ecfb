"""A custom resource's table (cf. apiextensions-apiserver's tableconvertor): its CRD
version's ``additionalPrinterColumns``, evaluated with the JSONPath subset of
``jsonpath``; a version without columns gets Name and Age, as apiextensions serves it.
The CRD is read when a table is asked for, so a change of its columns shows at once."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from kubegc.registry.printers import TableHandler
from kubegc.registry.printers.helpers import (
    AGE_DESCRIPTION,
    NAME,
    Conditions,
    Obj,
    object_meta,
    translate_timestamp_since,
)
from kubegc.registry.printers.jsonpath import evaluate_jsonpath, to_text


def _custom_cell(column: dict[str, Any], obj: Obj, now: datetime) -> Any:
    """``cellForJSONValue``: None when the path finds nothing or the type does not fit."""
    try:
        results = evaluate_jsonpath(str(column.get("jsonPath", "")), obj)
    except ValueError:
        return None
    if not results or results[0] is None:
        return None
    value, kind = results[0], column.get("type", "string")
    if kind == "string":
        return to_text(value)
    if kind == "integer" and isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    if kind == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "date" and isinstance(value, str):
        return translate_timestamp_since(value, now)
    return None


def _custom_columns(columns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    defs = [NAME]
    for c in columns:
        desc = c.get("description") or (
            f"Custom resource definition column (in JSONPath format): {c.get('jsonPath', '')}")
        defs.append({"name": c.get("name", ""), "type": c.get("type", "string"),
                     "format": c.get("format", ""), "description": desc,
                     "priority": int(c.get("priority") or 0)})
    return defs


_CR_AGE: dict[str, Any] = {"name": "Age", "type": "date",
                           "jsonPath": ".metadata.creationTimestamp",
                           "description": AGE_DESCRIPTION}


def custom_handler(printer_columns: list[dict[str, Any]]) -> TableHandler:
    """The table of a custom resource version whose CRD declares ``printer_columns``."""
    custom = printer_columns or [_CR_AGE]

    def custom_row(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
        name = object_meta(obj).get("name", "")
        return [name, *(_custom_cell(c, obj, now) for c in custom)], []

    return TableHandler(_custom_columns(custom), custom_row)


class CustomColumns:
    """The table convertor of a CRD's custom resources: ``crd`` reads the CRD as last
    written (None once it is gone)."""

    def __init__(self, crd: Callable[[], Obj | None]) -> None:
        self.crd = crd

    def for_version(self, version: str) -> TableHandler:
        crd = self.crd() or {}
        for v in (crd.get("spec") or {}).get("versions") or []:
            if v.get("name") == version:
                return custom_handler(list(v.get("additionalPrinterColumns") or []))
        return custom_handler([])
