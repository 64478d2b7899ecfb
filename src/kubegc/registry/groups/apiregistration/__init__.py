"""The apiregistration.k8s.io group's storage: APIServices (cf. kube-aggregator's
apiservice registry).

What acts on them is the server's aggregator (``kubegc.server.aggregator``): it creates the
Local APIServices of the groups served here, keeps every APIService's ``Available``
condition, and proxies the groups of those naming a ``spec.service``
(``aggregation.Aggregation``: what it knows of them, for discovery and the proxy).
"""

from __future__ import annotations

from kubegc.api.content import is_dns1123_subdomain, is_path_segment_name
from kubegc.api.errors import StatusCause, field_error
from kubegc.api.resources import builtin
from kubegc.api.types import Obj
from kubegc.registry import printers
from kubegc.registry.generic.rest import Resource
from kubegc.registry.generic.standard import StorageContext, stored
from kubegc.registry.generic.strategy import Strategy
from kubegc.registry.validation.paths import (
    empty_status,
    map_at,
    required,
    set_default,
    value_at,
)


def validate_apiservice(obj: Obj) -> list[StatusCause]:
    """``ValidateAPIService``: named ``<version>.<group>``, valid priorities, and a
    service reference with a namespace and a name unless local."""
    spec = map_at(obj, "spec")
    group, version = str(spec.get("group") or ""), str(spec.get("version") or "")
    name = str((obj.get("metadata") or {}).get("name") or "")
    causes: list[StatusCause] = []
    expected = f"{version}.{group}"
    if name != expected and not is_path_segment_name(name):
        causes.append(field_error("FieldValueInvalid", "metadata.name",
                                  f'must be `spec.version+"."+spec.group`: "{expected}"', name))
    if not group and version != "v1":
        causes.append(field_error("FieldValueRequired", "spec.group",
                                  "only v1 may have an empty group and it better be legacy kube"))
    causes += [field_error("FieldValueInvalid", "spec.group", m, group)
               for m in (is_dns1123_subdomain(group) if group else [])]
    for key, limit in (("groupPriorityMinimum", 20000), ("versionPriority", 1000)):
        value = spec.get(key) or 0
        if not isinstance(value, int) or not 0 < value <= limit:
            causes.append(field_error("FieldValueInvalid", f"spec.{key}",
                                      f"must be positive and less than {limit}", value,
                                      go_type="int32"))
    if spec.get("service") is not None:
        causes += required(spec, "service.namespace", "service.name", at="spec")
    return causes


def default_apiservice(obj: Obj) -> None:
    """``SetDefaults_ServiceReference``: port 443."""
    if isinstance(value_at(obj, "spec.service"), dict):
        set_default(obj, "spec.service.port", 443)


def resources(ctx: StorageContext) -> list[Resource]:
    return [stored(ctx, builtin("apiregistration.k8s.io", "apiservices"), Strategy(
        tracks_generation=False, prepare_for_create=empty_status,
        name_validator=is_path_segment_name, validate=validate_apiservice,
        defaulter=default_apiservice, core_object_meta=False), status=True,
            table=printers.API_SERVICE)]
