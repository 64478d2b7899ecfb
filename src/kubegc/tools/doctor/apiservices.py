"""Unavailable aggregated APIs: the most common reason a namespace stays Terminating
(kubernetes #60807, #83332).

An APIService with a ``spec.service`` whose ``Available`` condition is not True makes
discovery fail for its group; the namespace controller then cannot tell what is left in
a namespace, sets ``NamespaceDeletionDiscoveryFailure`` (``DiscoveryFailed``: "Discovery
failed for some groups, N failing: ...") and keeps the ``kubernetes`` finalizer of every
namespace being deleted until discovery succeeds (cf. pkg/controller/namespace/deletion
``deleteAllContent``). The fix is on the APIService: bring its backend back, or delete it
if the API is gone.
"""

from __future__ import annotations

from typing import Any

from kubegc.api.types import Obj
from kubegc.tools.doctor.findings import Cause, CauseDetail
from kubegc.tools.inventory import Inventory
from kubegc.tools.model import ObjRef

DISCOVERY_FAILURE = "NamespaceDeletionDiscoveryFailure"


def _map(value: object) -> dict[str, Any]:
    """A field as a mapping; anything else (a malformed dump) as empty."""
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def available_condition(api_service: Obj) -> dict[str, Any] | None:
    for condition in _list(_map(api_service.get("status")).get("conditions")):
        if isinstance(condition, dict) and condition.get("type") == "Available":
            return condition
    return None


def unavailable_api_services(inv: Inventory) -> list[Obj]:
    """Remote APIServices whose ``Available`` condition is not True (none yet: Unknown)."""
    out = []
    for api_service in inv.of_kind("apiregistration.k8s.io", "APIService"):
        if not isinstance(_map(api_service.get("spec")).get("service"), dict):
            continue
        condition = available_condition(api_service)
        if condition is None or condition.get("status") != "True":
            out.append(api_service)
    return out


def group_version(api_service: Obj) -> str:
    spec = _map(api_service.get("spec"))
    return f"{spec.get('group') or ''}/{spec.get('version') or ''}"


def _state(api_service: Obj) -> str:
    condition = available_condition(api_service)
    if condition is None:
        return "Available Unknown (not checked yet)"
    return (f"Available {condition.get('status')} ({condition.get('reason') or ''}): "
            f"{condition.get('message') or ''}")


def _backend_fix(api_service: Obj) -> str:
    service = _map(_map(api_service.get("spec")).get("service"))
    where = f"service/{service.get('name')} in namespace {service.get('namespace')}"
    reason = (available_condition(api_service) or {}).get("reason")
    if reason == "ServiceNotFound":
        return f"create {where} (or correct spec.service of the APIService)"
    if reason in ("EndpointsNotFound", "MissingEndpoints"):
        return (f"bring back the backend of {where}: its Endpoints need a ready address "
                "with the Service port's name (are its pods running?)")
    gv = group_version(api_service)
    return f"bring back the backend of {where} so that it answers /apis/{gv}"


def api_service_causes(inv: Inventory, ns: Obj) -> dict[Cause, CauseDetail]:
    """The unavailable APIServices, as causes of namespace ``ns``'s deletion."""
    out: dict[Cause, CauseDetail] = {}
    for api_service in unavailable_api_services(inv):
        name = str(_map(api_service.get("metadata")).get("name") or "")
        gv = group_version(api_service)
        cause = Cause(f"APIService {name} is unavailable: {_state(api_service)}",
                      ObjRef.of(api_service))
        out[cause] = CauseDetail(
            [f"discovery of {gv} fails, so the namespace controller cannot tell what is "
             f"left of that group and keeps the 'kubernetes' finalizer; it retries, and "
             f"finishes once {name} is available again"],
            [_backend_fix(api_service),
             f"or, if that API is gone for good: kubectl delete apiservice {name}"],
            dead=True, at=[ObjRef.of(ns)])
    return out


def discovery_failure(ns: Obj) -> dict[str, Any] | None:
    """The namespace's ``NamespaceDeletionDiscoveryFailure`` condition when True."""
    for condition in _list(_map(ns.get("status")).get("conditions")):
        if (isinstance(condition, dict) and condition.get("type") == DISCOVERY_FAILURE
                and condition.get("status") == "True"):
            return condition
    return None
