"""What admission webhooks are told of a write (cf. k8s.io/apiserver/pkg/admission
``Attributes``): the operation, what it addresses, the object and the old one (at
``obj_version``), dry-run, the request's options and user. The Store's write paths build
them (``create_attributes`` and friends); ``Admission`` hands them to the webhooks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from kubegc.api.auth import UserInfo, request_user
from kubegc.api.meta import DeleteOptions
from kubegc.api.types import Obj
from kubegc.registry.generic.target import Target

_META = "meta.k8s.io/v1"


@dataclass
class Attributes:
    """``admission.Attributes``; a mutating webhook's patch replaces ``obj`` and sets
    ``mutated``."""

    operation: str  # CREATE, UPDATE, DELETE
    t: Target
    name: str
    obj: Obj | None
    old: Obj | None
    obj_version: str
    subresource: str = ""
    dry_run: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    user: UserInfo | None = None
    mutated: bool = False


def _write_options(kind: str, dry_run: bool, field_manager: str) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": kind, "apiVersion": _META}
    if dry_run:
        out["dryRun"] = ["All"]
    if field_manager:
        out["fieldManager"] = field_manager
    return out


def create_attributes(t: Target, obj: Obj, *, dry_run: bool, field_manager: str) -> Attributes:
    """A create: ``obj`` as sent (at the request's version)."""
    name = str((obj.get("metadata") or {}).get("name") or "")
    return Attributes("CREATE", t, name, obj, None, t.version, dry_run=dry_run,
                      options=_write_options("CreateOptions", dry_run, field_manager),
                      user=request_user())


def update_attributes(t: Target, new: Obj, old: Obj, *, subresource: str, dry_run: bool,
                      field_manager: str) -> Attributes:
    """An update (patch and apply too): both objects in their stored form."""
    return Attributes("UPDATE", t, str(old["metadata"].get("name") or ""), new, old,
                      t.info.storage_version, subresource=subresource, dry_run=dry_run,
                      options=_write_options("UpdateOptions", dry_run, field_manager),
                      user=request_user())


def delete_attributes(t: Target, current: Obj, options: DeleteOptions) -> Attributes:
    """A delete: the stored object as ``oldObject``, no object."""
    body = options.to_body()
    body["apiVersion"] = _META
    return Attributes("DELETE", t, str(current["metadata"].get("name") or ""), None, current,
                      t.info.storage_version, dry_run=options.dry_run, options=body,
                      user=request_user())


class WebhookChain(Protocol):
    """The admission webhooks as the Store's write paths call them (part of its
    ``AdmissionChain``)."""

    def webhooks_active(self) -> bool:
        """Whether admission webhooks may be called (else no ``Attributes`` are built)."""
        ...

    async def admit_webhooks(self, a: Attributes) -> None:
        """Mutating webhooks (a patch replaces ``a.obj``)."""
        ...

    async def validate_webhooks(self, a: Attributes) -> None:
        """Validating webhooks (raises the StatusError that refuses the write)."""
        ...


class NoWebhooks:
    """No webhook is ever called."""

    def webhooks_active(self) -> bool:
        return False

    async def admit_webhooks(self, a: Attributes) -> None:
        return None

    async def validate_webhooks(self, a: Attributes) -> None:
        return None


async def admit_by_webhooks(chain: WebhookChain, a: Attributes,
                            defaulter: Callable[[Obj], None]) -> Obj | None:
    """Mutating webhooks on ``a``: the patched object, defaulted (as upstream defaults a
    patched object), or None when no webhook changed it."""
    await chain.admit_webhooks(a)
    if not a.mutated or a.obj is None:
        return None
    defaulter(a.obj)
    return a.obj


__all__ = ["Attributes", "NoWebhooks", "WebhookChain", "admit_by_webhooks",
           "create_attributes", "delete_attributes", "update_attributes"]
