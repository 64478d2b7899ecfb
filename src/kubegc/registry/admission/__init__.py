"""The admission chain (cf. k8s.io/apiserver/pkg/admission): the plugins kubegc has, by
upstream's names, and the ones that run (``--enable-admission-plugins`` /
``--disable-admission-plugins``, ``plugins.py``).

``Admission`` is what the generic Store's write paths call (its ``AdmissionChain``):
mutating admission (``DefaultTolerationSeconds``, ``StorageObjectInUseProtection``, then
``MutatingAdmissionWebhook``), then validating admission (``NamespaceLifecycle``,
``OwnerReferencesPermissionEnforcement``, then ``ValidatingAdmissionWebhook``: ``webhook/``),
each plugin only when it runs, handed the authorizer and the resource catalog it needs (upstream's
``SetAuthorizer`` / ``SetRESTMapper`` plugin initializers). One module per plugin.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kubegc.api.auth import AlwaysAllow, Authorizer
from kubegc.api.resources import Catalog
from kubegc.api.types import Obj
from kubegc.registry.admission.defaulttolerationseconds import admit_default_toleration_seconds
from kubegc.registry.admission.gc import admit_owner_references
from kubegc.registry.admission.lifecycle import IMMORTAL_NAMESPACES, NamespaceLifecycle
from kubegc.registry.admission.plugins import (
    DEFAULT_TOLERATION_SECONDS,
    MUTATING_ADMISSION_WEBHOOK,
    NAMESPACE_LIFECYCLE,
    OWNER_REFERENCES_PERMISSION_ENFORCEMENT,
    PLUGINS,
    STORAGE_OBJECT_IN_USE_PROTECTION,
    UPSTREAM_ONLY,
    VALIDATING_ADMISSION_WEBHOOK,
    enabled_plugins,
    overlapping,
)
from kubegc.registry.admission.storageobjectinuseprotection import (
    admit_storage_object_in_use_protection,
)
from kubegc.registry.admission.webhook import Webhooks
from kubegc.registry.generic.attributes import Attributes
from kubegc.registry.generic.target import Target


def _allow_all() -> Authorizer:
    return AlwaysAllow()


@dataclass
class Admission:
    """The plugins that run and what they are handed. ``authorizer`` is called at each
    admission (the composition root sets the registry's authorizer after building it).

    Ownership: the composition root sets ``enabled`` before serving; the namespace storage
    tells ``lifecycle`` of its writes."""

    catalog: Catalog
    enabled: frozenset[str] = frozenset(enabled_plugins())
    authorizer: Callable[[], Authorizer] = _allow_all
    lifecycle: NamespaceLifecycle = field(default_factory=NamespaceLifecycle)
    webhooks: Webhooks = field(default_factory=Webhooks)

    def runs(self, name: str) -> bool:
        return name in self.enabled

    def admit(self, t: Target, obj: Obj, *, old: Obj | None = None) -> None:
        """In upstream's plugin order; ``old`` is None on a create."""
        if self.runs(DEFAULT_TOLERATION_SECONDS):
            admit_default_toleration_seconds(t, obj)
        if old is None and self.runs(STORAGE_OBJECT_IN_USE_PROTECTION):
            admit_storage_object_in_use_protection(t, obj)

    async def validate_create(self, t: Target, obj: Obj) -> None:
        """In upstream's plugin order."""
        if self.runs(NAMESPACE_LIFECYCLE):
            await self.lifecycle.validate_create(t, obj)
        if self.runs(OWNER_REFERENCES_PERMISSION_ENFORCEMENT):
            admit_owner_references(self.authorizer(), self.catalog, t, obj, None)

    def validate_update(self, t: Target, obj: Obj, old: Obj, *, subresource: str) -> None:
        if self.runs(OWNER_REFERENCES_PERMISSION_ENFORCEMENT):
            admit_owner_references(self.authorizer(), self.catalog, t, obj, old,
                                   subresource=subresource)

    def webhooks_active(self) -> bool:
        """Whether any webhook is configured (the write paths build ``Attributes`` only
        then)."""
        configs = self.webhooks.configurations
        return bool(configs.mutating or configs.validating)

    async def admit_webhooks(self, a: Attributes) -> None:
        """``MutatingAdmissionWebhook``: after the built-in mutating plugins."""
        if self.runs(MUTATING_ADMISSION_WEBHOOK):
            await self.webhooks.admit(a)

    async def validate_webhooks(self, a: Attributes) -> None:
        """``ValidatingAdmissionWebhook``: after the built-in validating plugins."""
        if self.runs(VALIDATING_ADMISSION_WEBHOOK):
            await self.webhooks.validate(a)

    def validate_namespace_delete(self, t: Target, name: str) -> None:
        if self.runs(NAMESPACE_LIFECYCLE):
            self.lifecycle.validate_delete(t, name)


__all__ = [
    "DEFAULT_TOLERATION_SECONDS",
    "IMMORTAL_NAMESPACES",
    "MUTATING_ADMISSION_WEBHOOK",
    "NAMESPACE_LIFECYCLE",
    "OWNER_REFERENCES_PERMISSION_ENFORCEMENT",
    "PLUGINS",
    "STORAGE_OBJECT_IN_USE_PROTECTION",
    "UPSTREAM_ONLY",
    "VALIDATING_ADMISSION_WEBHOOK",
    "Admission",
    "NamespaceLifecycle",
    "enabled_plugins",
    "overlapping",
]
