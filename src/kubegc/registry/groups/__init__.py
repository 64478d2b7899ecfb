"""The storages of the built-in API groups, one package per group (cf. upstream's
``pkg/registry/<group>/<resource>/``, and each group's ``RESTStorageProvider``).

Each package's ``resources(...)`` returns its resources (``generic.rest.Resource``: the
resource's names, its strategy, its storage and its subresources' storages), one entry per
resource: adding a resource or a subresource to a group is one entry there, and the
storage module it names. ``builtin_resources`` is the list of the groups; what a group's
storages need beyond the generic Store (the authorizer, the token issuer, the admission
chain...) they get from ``Services``, as upstream's providers get it in their fields.
May import: ``kubegc.api``, ``kubegc.authz``, ``kubegc.tokens``, ``kubegc.storage``, the
registry's machinery (``generic``, ``admission``, ``validation``, ``typed``,
``fieldmanager``, ``structural``, ``definitions``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kubegc.api.auth import Authorizer
from kubegc.api.authenticator import TokenAuthenticator
from kubegc.api.clock import Clock
from kubegc.authz.rules import RuleResolver
from kubegc.registry.admission import Admission
from kubegc.registry.generic.rest import Resource
from kubegc.registry.generic.standard import StorageContext
from kubegc.registry.groups import (
    admissionregistration,
    apiextensions,
    apiregistration,
    apps,
    authentication,
    authorization,
    autoscaling,
    batch,
    certificates,
    coordination,
    core,
    discovery,
    events,
    flowcontrol,
    kubegc,
    networking,
    node,
    policy,
    rbac,
    scheduling,
    storage_k8s_io,
)
from kubegc.registry.groups.apiextensions import OnWrite
from kubegc.registry.groups.core.token import CoreGetter, TokenIssuer
from kubegc.registry.groups.rbac import PolicyIndex, RBACPolicy


@dataclass(frozen=True)
class Services:
    """What the registry hands the groups' storages besides the generic Store; the
    callables read what the composition root sets after the registry is built."""

    admission: Admission
    clock: Clock
    healthy: Callable[[], bool]
    token_issuer: Callable[[], TokenIssuer | None]
    get_core: CoreGetter
    token_authenticator: Callable[[], TokenAuthenticator | None]
    authorizer: Callable[[], Authorizer]
    rule_resolver: Callable[[], RuleResolver]
    rbac_index: PolicyIndex
    rbac_policy: RBACPolicy
    on_crd_write: OnWrite


def builtin_resources(ctx: StorageContext, services: Services) -> list[Resource]:
    """Every built-in resource kubegc serves."""
    s = services
    return [
        *core.resources(ctx, admission=s.admission, healthy=s.healthy,
                        token_issuer=s.token_issuer, get=s.get_core),
        *apps.resources(ctx),
        *batch.resources(ctx),
        *coordination.resources(ctx),
        *events.resources(ctx),
        *apiextensions.resources(ctx, on_write=s.on_crd_write),
        *authentication.resources(s.clock, authenticator=s.token_authenticator),
        *authorization.resources(s.clock, authorizer=s.authorizer,
                                 rule_resolver=s.rule_resolver),
        *autoscaling.resources(ctx),
        *policy.resources(ctx),
        *networking.resources(ctx),
        *discovery.resources(ctx),
        *storage_k8s_io.resources(ctx),
        *scheduling.resources(ctx),
        *node.resources(ctx),
        *certificates.resources(ctx),
        *rbac.resources(ctx, index=s.rbac_index, policy=s.rbac_policy),
        *admissionregistration.resources(ctx),
        *apiregistration.resources(ctx),
        *flowcontrol.resources(ctx),
        *kubegc.resources(ctx),
    ]


__all__ = ["Services", "builtin_resources"]
