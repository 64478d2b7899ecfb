"""Writing the bootstrap policy at start, as kube-apiserver's ``rbac/bootstrap-roles``
post-start hook does (cf. pkg/registry/rbac/rest/storage_rbac.go ``EnsureRBACPolicy`` and
pkg/registry/rbac/reconciliation: ``computeReconciledRole``,
``computeReconciledRoleBinding``).

Each bootstrap object that is missing is created. One that exists is reconciled unless its
``rbac.authorization.kubernetes.io/autoupdate`` annotation is ``"false"``: the labels and
annotations it lacks are added (its own values win), the rules it does not cover are
appended (broken down, as upstream's ``Covers`` reports them), missing aggregation
selectors and binding subjects are added, and a binding whose roleRef changed is
recreated. Nothing a user added is removed (upstream's ``RemoveExtraPermissions`` is off
for the hook). Several servers starting on one storage reconcile concurrently: a conflict
or a create that lost the race is read again and retried.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterable
from typing import Any, Protocol

from kubegc.api import errors
from kubegc.api.types import Obj
from kubegc.authz.rules import covers, rules_of
from kubegc.registry.groups.rbac.bootstrappolicy import (
    AUTOUPDATE_ANNOTATION,
    CLUSTER_ROLE_BINDINGS,
    CLUSTER_ROLES,
    ROLE_BINDINGS,
    ROLES,
)

log = logging.getLogger(__name__)

#: tries of one object before the reconciler gives up on it (logged)
MAX_ATTEMPTS = 5


class PolicyWriter(Protocol):
    """The storage the reconciler writes through (the registry's, unchecked: the
    apiserver's own writes). ``kind`` is the resource: roles, clusterroles, rolebindings,
    clusterrolebindings. ``update`` and ``delete`` are preconditioned on the object's
    resourceVersion (409 when it moved)."""

    async def get(self, kind: str, namespace: str, name: str) -> Obj | None: ...

    async def create(self, kind: str, obj: Obj) -> None: ...

    async def update(self, kind: str, obj: Obj) -> None: ...

    async def delete(self, kind: str, obj: Obj) -> None: ...


def _merged(expected: dict[str, Any] | None, existing: dict[str, Any] | None
            ) -> dict[str, Any]:
    """``merge(expected, existing)``: the existing values win."""
    return {**(expected or {}), **(existing or {})}


def _merge_metadata(result: Obj, expected: Obj) -> bool:
    meta, want = result["metadata"], expected["metadata"]
    changed = False
    for key in ("annotations", "labels"):
        merged = _merged(want.get(key), meta.get(key))
        if merged != (meta.get(key) or {}):
            meta[key] = merged
            changed = True
    return changed


def reconciled_role(existing: Obj, expected: Obj) -> Obj | None:
    """``computeReconciledRole`` (union): the object to write, or None for no change."""
    result = copy.deepcopy(existing)
    changed = _merge_metadata(result, expected)
    _, missing = covers(rules_of(existing), rules_of(expected))
    if missing:
        result["rules"] = list(result.get("rules") or []) + [r.to_obj() for r in missing]
        changed = True
    want_selectors = (expected.get("aggregationRule") or {}).get("clusterRoleSelectors")
    have = existing.get("aggregationRule")
    if expected.get("aggregationRule") is None and have is not None:
        result.pop("aggregationRule", None)
        changed = True
    elif want_selectors:
        have_selectors = list((have or {}).get("clusterRoleSelectors") or [])
        lacking = [s for s in want_selectors if s not in have_selectors]
        if lacking:
            result["aggregationRule"] = {"clusterRoleSelectors": have_selectors + lacking}
            changed = True
    return result if changed else None


def reconciled_binding(existing: Obj, expected: Obj) -> tuple[Obj | None, bool]:
    """``computeReconciledRoleBinding`` (union): the object to write (None: no change),
    and whether it must be recreated (its roleRef changed, which an update cannot do)."""
    result = copy.deepcopy(existing)
    changed = _merge_metadata(result, expected)
    recreate = expected.get("roleRef") != existing.get("roleRef")
    if recreate:
        result["roleRef"] = copy.deepcopy(expected["roleRef"])
    have = list(existing.get("subjects") or [])
    lacking = [s for s in expected.get("subjects") or [] if s not in have]
    if lacking:
        result["subjects"] = have + lacking
        changed = True
    return (result if changed or recreate else None), recreate


def _protected(obj: Obj) -> bool:
    return bool((obj["metadata"].get("annotations") or {}).get(AUTOUPDATE_ANNOTATION)
                == "false")


async def _reconcile_one(writer: PolicyWriter, kind: str, expected: Obj) -> None:
    meta = expected["metadata"]
    for _ in range(MAX_ATTEMPTS):
        existing = await writer.get(kind, str(meta.get("namespace") or ""), meta["name"])
        try:
            if existing is None:
                await writer.create(kind, copy.deepcopy(expected))
                return
            if _protected(existing):
                return
            if kind in ("roles", "clusterroles"):
                role = reconciled_role(existing, expected)
                if role is not None:
                    await writer.update(kind, role)
                return
            binding, recreate = reconciled_binding(existing, expected)
            if binding is not None and recreate:
                await writer.delete(kind, existing)
                binding["metadata"].pop("resourceVersion", None)
                await writer.create(kind, binding)
            elif binding is not None:
                await writer.update(kind, binding)
            return
        except errors.StatusError as e:
            if not (errors.is_conflict(e) or errors.is_already_exists(e)
                    or errors.is_not_found(e)):
                raise
    log.warning("could not reconcile %s %s: it kept changing", kind, meta["name"])


def bootstrap_objects() -> Iterable[tuple[str, Obj]]:
    """Every bootstrap object with its resource, roles before their bindings."""
    yield from (("clusterroles", o) for o in CLUSTER_ROLES)
    yield from (("clusterrolebindings", o) for o in CLUSTER_ROLE_BINDINGS)
    yield from (("roles", o) for o in ROLES)
    yield from (("rolebindings", o) for o in ROLE_BINDINGS)


async def ensure_policy(writer: PolicyWriter) -> None:
    """Create or reconcile every bootstrap object (``EnsureRBACPolicy``)."""
    for kind, expected in bootstrap_objects():
        await _reconcile_one(writer, kind, expected)
