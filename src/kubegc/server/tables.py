"""``metav1.Table`` responses for ``kubectl get``: the Table assembly and content negotiation.

Contract:
  * ``table_accepted(accept)`` is true when the first Accept clause the server can serve asks
    for ``as=Table;g=meta.k8s.io`` (``v=v1`` or ``v=v1beta1``; ``table_version`` says which).
  * ``to_table(group, resource, objects, now=...)`` renders the cells the real API server
    renders, with the built-in printers of ``server.printers`` (which always fill the wide
    ``priority: 1`` columns; kubectl hides them unless ``-o wide``). Row objects follow
    ``include_object``: ``"None"`` → null, ``"Metadata"`` (default) →
    ``PartialObjectMetadata`` with the full metadata, ``"Object"`` → the object as given.
  * Custom resources render their ``printer_columns`` (CRD ``additionalPrinterColumns``, the
    JSONPath subset of ``server.jsonpath``), as apiextensions' tableconvertor; with none
    given they get Name and Age, as apiextensions serves them.
Resources without a printer get Name and Age (``printers.DEFAULT_COLUMNS``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from kubegc.api.errors import StatusError
from kubegc.server.jsonpath import evaluate_jsonpath, to_text
from kubegc.server.printers import COLUMNS, DEFAULT_COLUMNS, PRINTERS, RowFn, print_default
from kubegc.server.printers.helpers import (
    AGE_DESCRIPTION,
    NAME,
    Conditions,
    Obj,
    object_meta,
    translate_timestamp_since,
)

# --- custom resource columns (apiextensions tableconvertor) ---------------------------


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

# --- the Table ------------------------------------------------------------------------


def _row_object(obj: Obj, include_object: str, version: str) -> Any:
    if include_object == "None":
        return None
    if include_object == "Object":
        return obj
    return {"kind": "PartialObjectMetadata", "apiVersion": f"meta.k8s.io/{version}",
            "metadata": dict(object_meta(obj))}


def to_table(
    group: str, resource: str, objects: list[dict[str, Any]], *, now: datetime,
    include_object: str = "Metadata", list_metadata: Mapping[str, Any] | None = None,
    printer_columns: list[dict[str, Any]] | None = None, with_column_definitions: bool = True,
    version: str = "v1",
) -> dict[str, Any]:
    """Render ``objects`` as a ``meta.k8s.io/<version>`` Table.

    ``printer_columns`` not None marks a custom resource (an empty list gets the default Age
    column). ``list_metadata`` supplies ``resourceVersion``/``continue``/
    ``remainingItemCount``; pass the object's resourceVersion for a single-object GET.
    """
    if include_object not in ("None", "Metadata", "Object"):
        raise StatusError(400, "BadRequest",
                          f'unrecognized includeObject value: "{include_object}"')
    now = now if now.tzinfo else now.replace(tzinfo=UTC)
    row_fn, columns = _printer_for(group, resource, printer_columns)
    rows = []
    for obj in objects:
        cells, conditions = row_fn(obj, now)
        row: dict[str, Any] = {"cells": cells}
        if conditions:
            row["conditions"] = conditions
        row["object"] = _row_object(obj, include_object, version)
        rows.append(row)
    metadata = {k: v for k, v in (list_metadata or {}).items()
                if k in ("resourceVersion", "continue", "remainingItemCount") and v not in (
                    "", None)}
    return {"kind": "Table", "apiVersion": f"meta.k8s.io/{version}", "metadata": metadata,
            "columnDefinitions": columns if with_column_definitions else [], "rows": rows}


def _printer_for(group: str, resource: str, printer_columns: list[dict[str, Any]] | None,
                 ) -> tuple[RowFn, list[dict[str, Any]]]:
    if printer_columns is not None:
        custom = printer_columns or [_CR_AGE]

        def custom_row(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
            name = object_meta(obj).get("name", "")
            return [name, *(_custom_cell(c, obj, now) for c in custom)], []

        return custom_row, _custom_columns(custom)
    if (group, resource) in PRINTERS:
        return PRINTERS[(group, resource)], COLUMNS[(group, resource)]
    return print_default, DEFAULT_COLUMNS


# --- content negotiation --------------------------------------------------------------

_SERVABLE = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf",
             "application/*", "*/*")


def table_version(accept_header: str) -> str | None:
    """The Table version (``v1``/``v1beta1``) the Accept header asks for, or None when the
    first clause the server can serve is a plain object/list representation."""
    clauses: list[tuple[float, int, str, dict[str, str]]] = []
    for position, clause in enumerate(accept_header.split(",")):
        media, *raw_params = (part.strip() for part in clause.split(";"))
        pairs = (p.partition("=") for p in raw_params)
        params = {k.strip().lower(): v.strip() for k, _, v in pairs}
        try:
            q = float(params.pop("q", "1"))
        except ValueError:
            q = 1.0
        if media and q > 0:
            clauses.append((-q, position, media.lower(), params))
    for _, _, media, params in sorted(clauses):
        if media not in _SERVABLE:
            continue
        if "as" not in params:
            return None
        json_ok = media in ("application/json", "application/*", "*/*")
        if (json_ok and params["as"] == "Table" and params.get("g") == "meta.k8s.io"
                and params.get("v") in ("v1", "v1beta1")):
            return params["v"]
    return None


def table_accepted(accept_header: str) -> bool:
    """True when the response to this Accept header should be a ``metav1.Table``."""
    return table_version(accept_header) is not None
