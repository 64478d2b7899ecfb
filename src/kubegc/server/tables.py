"""``metav1.Table`` responses for ``kubectl get``: the Table assembly and content negotiation.

Contract:
  * ``table_accepted(accept)`` is true when the first Accept clause the server can serve asks
    for ``as=Table;g=meta.k8s.io`` (``v=v1`` or ``v=v1beta1``; ``table_version`` says which).
  * ``to_table(handler, objects, now=...)`` renders the cells the real API server renders,
    with the resource's table handler (its storage's, ``Registry.table``: a built-in
    printer of ``registry.printers``, which always fills the wide ``priority: 1`` columns
    kubectl hides unless ``-o wide``; a custom resource's CRD columns). Row objects follow
    ``include_object``: ``"None"`` → null, ``"Metadata"`` (default) →
    ``PartialObjectMetadata`` with the full metadata, ``"Object"`` → the object as given
    (upstream's ``asTable``, after the storage's ``ConvertToTable``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from kubegc.api.errors import StatusError
from kubegc.registry.printers import TableHandler
from kubegc.registry.printers.helpers import Obj, object_meta

# --- the Table ------------------------------------------------------------------------


def _row_object(obj: Obj, include_object: str, version: str) -> Any:
    if include_object == "None":
        return None
    if include_object == "Object":
        return obj
    return {"kind": "PartialObjectMetadata", "apiVersion": f"meta.k8s.io/{version}",
            "metadata": dict(object_meta(obj))}


def to_table(
    handler: TableHandler, objects: list[dict[str, Any]], *, now: datetime,
    include_object: str = "Metadata", list_metadata: Mapping[str, Any] | None = None,
    with_column_definitions: bool = True, version: str = "v1",
) -> dict[str, Any]:
    """Render ``objects`` as a ``meta.k8s.io/<version>`` Table with ``handler``'s columns.

    ``list_metadata`` supplies ``resourceVersion``/``continue``/``remainingItemCount``; pass
    the object's resourceVersion for a single-object GET.
    """
    if include_object not in ("None", "Metadata", "Object"):
        raise StatusError(400, "BadRequest",
                          f'unrecognized includeObject value: "{include_object}"')
    now = now if now.tzinfo else now.replace(tzinfo=UTC)
    columns, row_fn = handler
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
