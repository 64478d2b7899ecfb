"""Adoption and release of controlled objects (cf. pkg/controller/controller_ref_manager.go).

``claim_object`` decides, for one candidate, as upstream's ``claimObject``:
  * controlled by someone else → ignored;
  * controlled by us and the selector (and filters) match → ours;
  * controlled by us but no longer matching → released (unless we are being deleted):
    a strategic merge patch ``{"metadata": {"ownerReferences": [{"$patch": "delete",
    "uid": <ours>}], "uid": <its uid>}}``; 404 and 422 are ignored;
  * an orphan that matches, while neither we nor it are being deleted → adopted with
    ``{"metadata": {"ownerReferences": [<controller ref, blockOwnerDeletion>], "uid": <its
    uid>}}``, after ``can_adopt`` (a live GET that re-checks our deletionTimestamp and
    UID) succeeded once.
The ``uid`` in each patch is a precondition: if the object was deleted and re-created
under the same name, the server refuses the patch (Conflict here, Invalid upstream).

Errors of one claim pass are collected and raised together after every candidate was
handled (``AggregateError``), so the caller requeues.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from kubegc.api.errors import StatusError, is_conflict, is_invalid, is_not_found
from kubegc.api.labels import LabelSelector
from kubegc.api.meta import controller_ref_of, is_being_deleted, name_of, namespace_of, uid_of
from kubegc.api.pod import PODS
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.interface import Client, PatchType
from kubegc.controllers.controller_utils import raise_aggregate

REPLICASETS = GroupVersionResource("apps", "v1", "replicasets")

CanAdopt = Callable[[], Awaitable[None]]
Filter = Callable[[Obj], bool]


def labels_of(obj: Obj) -> dict[str, str]:
    return dict((obj.get("metadata") or {}).get("labels") or {})


def recheck_deletion_timestamp(get_object: Callable[[], Awaitable[Obj]]) -> CanAdopt:
    """A ``can_adopt`` that fetches the controller live and refuses adoption if it is
    being deleted (cf. ``RecheckDeletionTimestamp``)."""

    async def can_adopt() -> None:
        try:
            obj = await get_object()
        except Exception as err:
            raise RuntimeError(f"can't recheck DeletionTimestamp: {err}") from err
        meta = obj.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            raise RuntimeError(f"{namespace_of(obj)}/{name_of(obj)} has just been deleted at "
                               f"{meta['deletionTimestamp']}")

    return can_adopt


def fresh_controller_getter(client: Client, gvr: GroupVersionResource, controller: Obj,
                            kind: str) -> Callable[[], Awaitable[Obj]]:
    """GET the controller live and check it is still the same object (same UID)."""

    async def get() -> Obj:
        fresh = await client.get(gvr, name_of(controller), namespace=namespace_of(controller))
        if uid_of(fresh) != uid_of(controller):
            raise RuntimeError(
                f"original {kind} {namespace_of(controller)}/{name_of(controller)} is gone: "
                f"got uid {uid_of(fresh)}, wanted {uid_of(controller)}")
        return fresh

    return get


class ControllerRefManager:
    """Claims objects of one resource for one controller (cf. ``PodControllerRefManager``
    and ``ReplicaSetControllerRefManager``, which differ only in the resource).

    A manager is meant for one sync pass: ``can_adopt`` runs at most once per instance.
    """

    def __init__(self, client: Client, gvr: GroupVersionResource, controller: Obj,
                 selector: LabelSelector, *, controller_api_version: str, controller_kind: str,
                 can_adopt: CanAdopt | None = None) -> None:
        self.client = client
        self.gvr = gvr
        self.controller = controller
        self.selector = selector
        self.controller_api_version = controller_api_version
        self.controller_kind = controller_kind
        self._can_adopt_fn = can_adopt
        self._can_adopt_done = False
        self._can_adopt_err: BaseException | None = None

    @property
    def resource_kind(self) -> str:
        return "Pod" if self.gvr == PODS else "ReplicaSet" if self.gvr == REPLICASETS else (
            self.gvr.resource)

    async def can_adopt(self) -> None:
        if not self._can_adopt_done:
            self._can_adopt_done = True
            if self._can_adopt_fn is not None:
                try:
                    await self._can_adopt_fn()
                except Exception as err:
                    self._can_adopt_err = err
        if self._can_adopt_err is not None:
            raise self._can_adopt_err

    async def claim(self, objs: Sequence[Obj], *filters: Filter) -> list[Obj]:
        """The objects we now control among ``objs``, adopting and releasing as needed."""
        claimed: list[Obj] = []
        errors: list[BaseException] = []

        def match(obj: Obj) -> bool:
            return self.selector.matches(labels_of(obj)) and all(f(obj) for f in filters)

        for obj in objs:
            try:
                if await self.claim_object(obj, match):
                    claimed.append(obj)
            except Exception as err:
                errors.append(err)
        raise_aggregate(errors)
        return claimed

    async def claim_object(self, obj: Obj, match: Filter) -> bool:
        ref = controller_ref_of(obj)
        controller_deleting = is_being_deleted(self.controller)
        if ref is not None:
            if ref.get("uid") != uid_of(self.controller):
                return False  # owned by someone else
            if match(obj):
                return True  # ours; no action needed even while we are being deleted
            if controller_deleting:
                return False
            await self.release(obj)
            return False
        if controller_deleting or not match(obj) or is_being_deleted(obj):
            return False
        try:
            await self.adopt(obj)
        except StatusError as err:
            if is_not_found(err):
                return False
            raise
        return True

    async def adopt(self, obj: Obj) -> None:
        try:
            await self.can_adopt()
        except Exception as err:
            raise RuntimeError(
                f"can't adopt {self.resource_kind} {namespace_of(obj)}/{name_of(obj)} "
                f"({uid_of(obj)}): {err}") from err
        ref: dict[str, Any] = {
            "apiVersion": self.controller_api_version, "kind": self.controller_kind,
            "name": name_of(self.controller), "uid": uid_of(self.controller),
            "controller": True, "blockOwnerDeletion": True,
        }
        patch = {"metadata": {"ownerReferences": [ref], "uid": uid_of(obj)}}
        await self.client.patch(self.gvr, name_of(obj), patch, namespace=namespace_of(obj),
                                patch_type=PatchType.STRATEGIC)

    async def release(self, obj: Obj) -> None:
        patch = {"metadata": {"ownerReferences": [
            {"$patch": "delete", "uid": uid_of(self.controller)}], "uid": uid_of(obj)}}
        try:
            await self.client.patch(self.gvr, name_of(obj), patch, namespace=namespace_of(obj),
                                    patch_type=PatchType.STRATEGIC)
        except StatusError as err:
            # Gone, or re-created under the same name (the uid precondition failed): either
            # way there is nothing of ours left to release.
            if is_not_found(err) or is_invalid(err) or (
                    is_conflict(err) and "Precondition failed" in err.message):
                return
            raise


class PodControllerRefManager(ControllerRefManager):
    """``ControllerRefManager`` for pods (cf. ``NewPodControllerRefManager``)."""

    def __init__(self, client: Client, controller: Obj, selector: LabelSelector, *,
                 controller_api_version: str, controller_kind: str,
                 can_adopt: CanAdopt | None = None) -> None:
        super().__init__(client, PODS, controller, selector,
                         controller_api_version=controller_api_version,
                         controller_kind=controller_kind, can_adopt=can_adopt)

    async def claim_pods(self, pods: Sequence[Obj], *filters: Filter) -> list[Obj]:
        return await self.claim(pods, *filters)


class ReplicaSetControllerRefManager(ControllerRefManager):
    """``ControllerRefManager`` for ReplicaSets (the Deployment controller's)."""

    def __init__(self, client: Client, controller: Obj, selector: LabelSelector, *,
                 controller_api_version: str, controller_kind: str,
                 can_adopt: CanAdopt | None = None) -> None:
        super().__init__(client, REPLICASETS, controller, selector,
                         controller_api_version=controller_api_version,
                         controller_kind=controller_kind, can_adopt=can_adopt)

    async def claim_replica_sets(self, sets: Sequence[Obj]) -> list[Obj]:
        return await self.claim(sets)
