"""CustomResourceDefinitions (cf. apiextensions-apiserver): an established CRD adds its
resource to the catalog; a deleted CRD first deletes every instance (the
``customresourcecleanup.apiextensions.k8s.io`` finalizer), then leaves the catalog.
"""

from __future__ import annotations

from typing import Any

from kubegc.api.resources import ResourceInfo, Subresource
from kubegc.api.types import Obj

CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"


def resource_info_for(crd: Obj) -> ResourceInfo | None:
    """The ``ResourceInfo`` a CRD serves (None if it serves no version)."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    versions = [v for v in spec.get("versions") or [] if isinstance(v, dict) and v.get("served",
                                                                                         True)]
    if not versions or not names.get("plural") or not names.get("kind"):
        return None
    storage = [v["name"] for v in versions if v.get("storage")]
    ordered = storage + [v["name"] for v in versions if v["name"] not in storage]
    subresources: list[Subresource] = []
    first = versions[0].get("subresources") or {}
    if "status" in first:
        subresources.append(Subresource("status"))
    if "scale" in first:
        subresources.append(Subresource("scale", kind="Scale", group="autoscaling", version="v1"))
    return ResourceInfo(
        group=str(spec.get("group") or ""),
        versions=tuple(ordered),
        resource=str(names["plural"]),
        kind=str(names["kind"]),
        namespaced=spec.get("scope") == "Namespaced",
        singular=str(names.get("singular") or str(names["kind"]).lower()),
        short_names=tuple(names.get("shortNames") or ()),
        categories=tuple(names.get("categories") or ()),
        subresources=tuple(subresources),
        custom=True,
        list_kind=str(names.get("listKind") or f"{names['kind']}List"),
    )


def established_status(crd: Obj, now: str) -> dict[str, Any]:
    status = dict(crd.get("status") or {})
    spec = crd.get("spec") or {}
    status["acceptedNames"] = spec.get("names") or {}
    stored = [v.get("name") for v in spec.get("versions") or [] if v.get("storage")]
    status["storedVersions"] = sorted(set(status.get("storedVersions") or []) | set(stored))
    status["conditions"] = [
        {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
         "message": "no conflicts found", "lastTransitionTime": now},
        {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
         "message": "the initial names have been accepted", "lastTransitionTime": now},
    ]
    return status


def printer_columns(crd: Obj, version: str) -> list[dict[str, Any]]:
    for v in (crd.get("spec") or {}).get("versions") or []:
        if v.get("name") == version:
            return list(v.get("additionalPrinterColumns") or [])
    return []


def schema_for(crd: Obj, version: str) -> dict[str, Any] | None:
    for v in (crd.get("spec") or {}).get("versions") or []:
        if v.get("name") == version:
            schema = (v.get("schema") or {}).get("openAPIV3Schema")
            return dict(schema) if isinstance(schema, dict) else None
    return None
