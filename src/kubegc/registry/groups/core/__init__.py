"""The core API group's storages (cf. pkg/registry/core, ``NewLegacyRESTStorage``): one
entry per resource, its strategy (``pkg/registry/core/<resource>/strategy.go``), its
validation (``validation*.py``, pkg/apis/core/validation) and defaulting (``defaults.py``),
and its subresources' storages. Resources with behaviour of their own have a module:
``namespace``, ``pod``, ``binding``, ``eviction``, ``token`` (TokenRequest), ``componentstatus``,
``quota`` (LimitRanges and ResourceQuotas).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from kubegc.api.content import is_dns1035_label, is_path_segment_name
from kubegc.api.resources import builtin
from kubegc.api.types import Obj
from kubegc.api.zero_status import zero_status_fields
from kubegc.registry import printers
from kubegc.registry.admission import Admission
from kubegc.registry.generic.rest import Resource
from kubegc.registry.generic.standard import StorageContext, stored
from kubegc.registry.generic.strategy import (
    GCPolicy,
    Strategy,
    keeping_zero_status,
    zero_status_create,
)
from kubegc.registry.groups.core import defaults, namespace, pod, quota
from kubegc.registry.groups.core import validation as v
from kubegc.registry.groups.core import validation_node as nv
from kubegc.registry.groups.core import validation_pods as pv
from kubegc.registry.groups.core import validation_resources as rv
from kubegc.registry.groups.core import validation_volumes as vv
from kubegc.registry.groups.core.binding import BindingREST, LegacyBindingREST
from kubegc.registry.groups.core.componentstatus import ComponentStatusREST
from kubegc.registry.groups.core.eviction import EvictionREST
from kubegc.registry.groups.core.token import CoreGetter, TokenIssuer, TokenREST
from kubegc.registry.validation.paths import empty_status

_RC_STATUS = zero_status_fields("", "replicationcontrollers")


#: the Service IP range ClusterIPs are allocated from (kube-apiserver's
#: ``--service-cluster-ip-range``; the default ServiceCIDR's, 1.33+) and the ``kubernetes``
#: Service's IP, its first address
SERVICE_CLUSTER_IP_RANGE = "10.96.0.0/16"
KUBERNETES_SERVICE_IP = "10.96.0.1"


def _service_create(obj: Obj) -> None:
    """``PrepareForCreate`` and the IP allocator: a ClusterIP from
    ``SERVICE_CLUSTER_IP_RANGE`` (derived from the uid, so stable; no IPAddress object is
    written), an empty load-balancer status."""
    spec = obj.setdefault("spec", {})
    if spec.get("type") != "ExternalName" and not spec.get("clusterIP"):
        digest = hashlib.sha256(obj["metadata"]["uid"].encode()).digest()
        spec["clusterIP"] = f"10.96.{digest[0]}.{max(2, digest[1])}"
    if spec.get("clusterIP") and not spec.get("clusterIPs"):
        spec["clusterIPs"] = [spec["clusterIP"]]
    obj["status"] = {"loadBalancer": {}}


_EVENTS = Strategy(default_gc_policy=GCPolicy.UNSUPPORTED, allow_create_on_update=True,
                   tracks_generation=False, name_validator=is_path_segment_name,
                   validate=v.validate_event)


def resources(ctx: StorageContext, *, admission: Admission, healthy: Callable[[], bool],
              token_issuer: Callable[[], TokenIssuer | None],
              get: CoreGetter) -> list[Resource]:
    """``healthy``: whether the controllers have synced (componentstatuses);
    ``token_issuer``: the TokenRequest issuer, if any; ``get``: a core object by resource
    name (the TokenRequest's lookups)."""
    pods = stored(ctx, builtin("", "pods"), pod.strategy(
        validate=pv.validate_pod, defaulter=defaults.default_pod), status=True,
        subresources={"binding": BindingREST(ctx), "eviction": EvictionREST(ctx),
                      "log": pod.LogREST(ctx)}, table=printers.POD)
    return [
        stored(ctx, builtin("", "namespaces"), namespace.strategy(
            validate=v.validate_namespace, defaulter=defaults.default_namespace), status=True,
            storage=namespace.NamespaceREST(ctx, admission),
            subresources={"finalize": namespace.FinalizeREST(ctx, admission)},
                table=printers.NAMESPACE),
        pods,
        stored(ctx, builtin("", "services"), Strategy(
            name_validator=is_dns1035_label, prepare_for_create=_service_create,
            tracks_generation=False, return_deleted_object=True,
            validate=v.validate_service, defaulter=defaults.default_service), status=True,
                table=printers.SERVICE),
        stored(ctx, builtin("", "endpoints"), Strategy(
            allow_create_on_update=True, tracks_generation=False,
            validate=nv.validate_endpoints, defaulter=defaults.default_endpoints),
                                                           table=printers.ENDPOINTS),
        stored(ctx, builtin("", "configmaps"), Strategy(
            tracks_generation=False, validate=v.validate_config_map,
            validate_update=v.validate_config_map_update), table=printers.CONFIG_MAP),
        stored(ctx, builtin("", "secrets"), Strategy(
            tracks_generation=False, validate=v.validate_secret,
            validate_update=v.validate_secret_update, defaulter=defaults.default_secret),
                table=printers.SECRET),
        stored(ctx, builtin("", "serviceaccounts"), Strategy(
            tracks_generation=False, return_deleted_object=True),
            subresources={"token": TokenREST(token_issuer, get)}, table=printers.SERVICE_ACCOUNT),
        stored(ctx, builtin("", "events"), _EVENTS, table=printers.EVENT),
        stored(ctx, builtin("", "replicationcontrollers"), Strategy(
            default_gc_policy=GCPolicy.ORPHAN_DEPENDENTS,
            prepare_for_create=zero_status_create(_RC_STATUS),
            validate=v.validate_replication_controller,
            defaulter=keeping_zero_status(defaults.default_replicationcontroller, _RC_STATUS)),
            status=True, scale=True, table=printers.REPLICATION_CONTROLLER),
        stored(ctx, builtin("", "nodes"), Strategy(
            tracks_generation=False, validate=nv.validate_node,
            validate_update=nv.validate_node_update), status=True,
            table=printers.NODE),
        stored(ctx, builtin("", "persistentvolumes"), Strategy(
            tracks_generation=False, return_deleted_object=True,
            validate=vv.validate_persistent_volume,
            defaulter=defaults.default_persistentvolume), status=True,
                table=printers.PERSISTENT_VOLUME),
        stored(ctx, builtin("", "persistentvolumeclaims"), Strategy(
            tracks_generation=False, return_deleted_object=True,
            validate=vv.validate_persistent_volume_claim,
            validate_update=vv.validate_persistent_volume_claim_update,
            defaulter=defaults.default_persistentvolumeclaim), status=True,
                table=printers.PERSISTENT_VOLUME_CLAIM),
        Resource(builtin("", "bindings"), LegacyBindingREST(ctx, pods)),
        stored(ctx, builtin("", "podtemplates"), Strategy(
            generation_fields=("template",), return_deleted_object=True,
            validate=pv.validate_pod_template_object,
            defaulter=defaults.default_pod_template), table=printers.POD_TEMPLATE),
        stored(ctx, builtin("", "limitranges"), Strategy(
            tracks_generation=False, validate=quota.validate_limit_range,
            defaulter=quota.default_limit_range), table=printers.NAME_AND_CREATED_AT),
        stored(ctx, builtin("", "resourcequotas"), Strategy(
            tracks_generation=False, prepare_for_create=empty_status,
            validate=rv.validate_resource_quota,
            return_deleted_object=True), status=True, table=printers.RESOURCE_QUOTA),
        Resource(builtin("", "componentstatuses"), ComponentStatusREST(healthy),
            table=printers.COMPONENT_STATUS),
    ]


__all__ = ["resources"]
