"""The ``OwnerReferencesPermissionEnforcement`` admission plugin (plugin/pkg/admission/gc):
validating admission of every create and update (patch and apply are updates), of every
resource, custom ones included, once the object is fully formed (after the strategy and
validation, as upstream's ``createValidation`` / ``updateValidation``).

The rule is ``kubegc.authz.ownerreferences.validate`` (which ``kubegc doctor`` runs too); this
module hands it the request's user (``request_user()``; none: the registry's own writes,
not checked), the registry's authorizer, and the catalog as its RESTMapper, and turns its
verdict into ``admission.NewForbidden``'s 403.
"""

from __future__ import annotations

from typing import Any

from kubegc.api import errors
from kubegc.api.auth import Authorizer, request_user
from kubegc.api.errors import GroupResource
from kubegc.api.resources import Catalog, GroupVersionKind
from kubegc.api.types import Obj
from kubegc.authz.ownerreferences import (
    Operation,
    OwnerMapping,
    Resolver,
    WriteAttributes,
    from_authorizer,
    no_kind_match,
    validate,
)
from kubegc.registry.generic.target import Target


def catalog_resolver(catalog: Catalog) -> Resolver:
    """The RESTMapper over the served resources (CRDs included): a kind at a served
    version maps to its resource, anything else is ``NoKindMatchError``."""

    def resolve(group: str, version: str, kind: str) -> list[OwnerMapping]:
        info = catalog.for_gvk(GroupVersionKind(group, version, kind))
        if info is None:
            raise no_kind_match(group, version, kind)
        return [OwnerMapping(info.group, version, info.resource, info.namespaced)]

    return resolve


def _refs(obj: Obj | None) -> list[dict[str, Any]]:
    refs = ((obj or {}).get("metadata") or {}).get("ownerReferences") or []
    return [ref for ref in refs if isinstance(ref, dict)] if isinstance(refs, list) else []


def admit_owner_references(authorizer: Authorizer, catalog: Catalog, t: Target, obj: Obj,
                           old: Obj | None, *, subresource: str = "") -> None:
    """Refuse (403) a write of ``obj`` (``old``: the stored object; None for a create)
    that sets ownerReferences its user may not set."""
    user = request_user()
    if user is None:
        return
    meta = obj.get("metadata") or {}
    name = str(meta.get("name") or "")
    namespace = str(meta.get("namespace") or t.namespace) if t.info.namespaced else ""
    attrs = WriteAttributes(
        user=user, operation=Operation.CREATE if old is None else Operation.UPDATE,
        namespace=namespace, group=t.info.group, version=t.version, resource=t.info.resource,
        subresource=subresource, name=name, new_refs=_refs(obj),
        old_refs=None if old is None else _refs(old))
    refused = validate(attrs, from_authorizer(authorizer), catalog_resolver(catalog))
    if refused is not None:
        # admission.NewForbidden names the object by its name, else its generateName
        shown = name or str(meta.get("generateName") or "") or "Unknown"
        raise errors.forbidden(GroupResource(t.info.group, t.info.resource), shown,
                               refused.message)
