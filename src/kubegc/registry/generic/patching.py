"""PATCH (cf. ``handlers/patch.go``): the four patch types applied to the current object,
then the update path (``Store.prepare_update``) with its optimistic retry. Server-side
apply creates the object when it does not exist.
"""

from __future__ import annotations

from typing import Any

from kubegc.api import errors
from kubegc.api.clock import format_time
from kubegc.api.types import Obj, clone
from kubegc.registry.fieldmanager import (
    apply_patch,
    decode_apply_configuration,
    has_strategic_schema,
    server_side_apply,
)
from kubegc.registry.generic.checks import check_fields
from kubegc.registry.generic.decoding import check_apply_config, check_patched
from kubegc.registry.generic.store import Store
from kubegc.registry.generic.target import Target

APPLY = "application/apply-patch+yaml"
STRATEGIC = "application/strategic-merge-patch+json"
PATCH_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    STRATEGIC,
    APPLY,
)


def check_patch_type(t: Target, patch_type: str) -> None:
    if patch_type not in PATCH_TYPES or (
        patch_type == STRATEGIC and not has_strategic_schema(t.info.group, t.info.kind)
    ):
        accepted = [p for p in PATCH_TYPES if p != STRATEGIC or has_strategic_schema(
            t.info.group, t.info.kind)]
        raise errors.unsupported_media_type(
            "the body of the request was in an unknown format - accepted media types include: "
            + ", ".join(accepted))


async def patch(
    store: Store, t: Target, name: str, patch_type: str, body: bytes, *,
    subresource: str = "", dry_run: bool = False, field_manager: str = "", force: bool = False,
    field_validation: str = "", warnings: list[str] | None = None,
) -> tuple[Obj, bool]:
    """Returns (object, created)."""
    check_patch_type(t, patch_type)
    strategy = t.strategy
    now = format_time(store.clock.now())
    created = False
    if patch_type == APPLY and not field_manager:
        raise errors.invalid("PatchOptions", "meta.k8s.io", "", [errors.field_error(
            "FieldValueRequired", "fieldManager", "is required for apply patch")])
    reset = strategy.status_fields if strategy.status_subresource and not subresource else ()

    async def create() -> Obj:
        nonlocal created
        if patch_type != APPLY or subresource:
            raise errors.not_found(t.gr, name)
        config = decode_apply_configuration(body)
        check_apply_config(t, config)
        obj = server_side_apply(None, config, manager=field_manager, force=force, now=now,
                                reset_fields=reset)
        obj.setdefault("metadata", {})["name"] = name
        if t.info.namespaced:
            obj["metadata"].setdefault("namespace", t.namespace)
        created = True
        # server_side_apply recorded the applier's fields as an "Apply" operation; an
        # "Update" record on top would make the next apply unable to prune what it dropped
        return await store.create(t, obj, dry_run=dry_run, field_manager="",
                                  field_validation=field_validation, warnings=warnings)

    async def update(current: Obj) -> Any:
        served = t.from_storage(current)
        if patch_type == APPLY:
            config = decode_apply_configuration(body)
            check_apply_config(t, config)
            new = server_side_apply(clone(served), config,
                                    manager=field_manager, force=force, now=now,
                                    subresource=subresource, reset_fields=reset)
        else:
            new = apply_patch(patch_type, clone(served), body,
                              group=t.info.group, kind=t.info.kind)
            if not isinstance(new, dict):
                raise errors.bad_request("the patched object is not an object")
            if field_validation:
                check_patched(t, new, patch_type, body)
        check_fields(t, new, field_validation, warnings)
        return await store.prepare_update(
            t, strategy, current, new, subresource=subresource,
            field_manager="" if patch_type == APPLY else field_manager, dry_run=dry_run)

    result, _ = await store.guaranteed_update(t, name, update, dry_run=dry_run, create=create)
    return result, created
