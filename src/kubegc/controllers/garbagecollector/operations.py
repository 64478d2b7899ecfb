"""API calls of the GC, one per verb, through the ``Client`` protocol (cf. operations.go,
patch.go ``patch``/``getMetadata``).

Every call resolves ``apiVersion``/``kind`` with the RESTMapper first (``RESTMappingError``
if it cannot) and addresses namespaced kinds in the identity's namespace, cluster-scoped
kinds without one (cf. ``resourceDefaultNamespace``). Deletes always carry a uid
precondition and an explicit
propagation policy (cf. ``deleteObject``); a delete decided on the monitor cache's copy
also carries
that copy's resourceVersion. API failures surface as ``StatusError``.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubegc.api.clock import Clock
from kubegc.api.errors import StatusError, is_conflict, is_not_found, is_unsupported_media_type
from kubegc.api.meta import DeletionPropagation, ObjectReference
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.interface import Client, DeleteOptions, PatchType
from kubegc.controllers.garbagecollector import metaonly
from kubegc.controllers.garbagecollector import patch as patches
from kubegc.controllers.garbagecollector.errors import NamespacedOwnerOfClusterScopedObjectError
from kubegc.controllers.garbagecollector.graph_builder import GraphBuilder
from kubegc.controllers.garbagecollector.resources import RESTMapper

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Backoff:
    """``retry.DefaultBackoff`` of client-go: 5 tries, 10 ms apart, 10 % jitter."""

    steps: int = 5
    duration: float = 0.010
    jitter: float = 0.1


DEFAULT_BACKOFF = Backoff()

JSONMergePatchFunc = Callable[[Obj], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Target:
    """Where an identity lives: its resource and the namespace to address it in."""

    resource: GroupVersionResource
    namespace: str
    namespaced: bool


class Operations:
    """The GC's verbs against the API server (get, delete, patch, remove finalizer)."""

    def __init__(
        self, client: Client, *, rest_mapper: RESTMapper, graph_builder: GraphBuilder,
        clock: Clock, backoff: Backoff = DEFAULT_BACKOFF,
    ) -> None:
        self._client = client
        self._rest_mapper = rest_mapper
        self._graph_builder = graph_builder
        self._clock = clock
        self._backoff = backoff

    def target(self, identity: ObjectReference, *, namespace: str | None = None) -> Target:
        """Resolve ``identity`` (its namespace, or ``namespace``) to resource + namespace."""
        mapping = self._rest_mapper.rest_mapping(identity.api_version, identity.kind)
        ns = identity.namespace if namespace is None else namespace
        return Target(mapping.resource, ns if mapping.namespaced else "", mapping.namespaced)

    async def get_object(self, identity: ObjectReference) -> Obj:
        target = self.target(identity)
        if target.namespaced and not target.namespace:
            # only a cluster-scoped object can have made us look for a namespaced kind
            # without a namespace: that reference is invalid and stays invalid
            raise NamespacedOwnerOfClusterScopedObjectError()
        return await self._client.get(target.resource, identity.name, namespace=target.namespace)

    def cached_object(self, identity: ObjectReference) -> Obj | None:
        """The monitor cache's copy of ``identity`` (same uid), or None: not cached, or
        an identity ``get_object`` would refuse (it then raises as before)."""
        target = self.target(identity)
        if target.namespaced and not target.namespace:
            return None
        return self._cached(identity, target)

    def _cached(self, identity: ObjectReference, target: Target) -> Obj | None:
        obj = self._graph_builder.monitors.cached(target.resource, target.namespace,
                                                  identity.name)
        if obj is None or metaonly.uid(obj) != identity.uid:
            return None
        return obj

    async def delete_object(
        self, identity: ObjectReference, policy: DeletionPropagation, *,
        resource_version: str | None = None,
    ) -> Obj:
        """DELETE with a uid precondition, plus a resourceVersion one if given (the
        delete then lands only on exactly that state of the object)."""
        target = self.target(identity)
        options = DeleteOptions(propagation_policy=policy, preconditions_uid=identity.uid,
                                preconditions_resource_version=resource_version)
        return await self._client.delete(
            target.resource, identity.name, namespace=target.namespace, options=options,
        )

    async def patch_object(
        self, identity: ObjectReference, body: dict[str, Any], patch_type: PatchType,
    ) -> Obj:
        target = self.target(identity)
        return await self._client.patch(
            target.resource, identity.name, body, namespace=target.namespace,
            patch_type=patch_type,
        )

    async def patch(
        self, identity: ObjectReference, smp: dict[str, Any], jmp: JSONMergePatchFunc,
    ) -> Obj:
        """Strategic merge patch; JSON merge patch built by ``jmp`` from the current
        metadata if the resource does not support SMP (custom resources)."""
        try:
            return await self.patch_object(identity, smp, PatchType.STRATEGIC)
        except StatusError as exc:
            if not is_unsupported_media_type(exc):
                raise
        latest = await self.get_metadata(identity)
        return await self.patch_object(identity, jmp(latest), PatchType.MERGE)

    async def get_metadata(self, identity: ObjectReference) -> Obj:
        """The object from the monitor's cache if present, else from the API."""
        target = self.target(identity)
        cached = self._cached(identity, target)
        if cached is not None:
            return cached
        return await self._client.get(target.resource, identity.name, namespace=target.namespace)

    async def remove_finalizer(self, identity: ObjectReference, finalizer: str) -> bool:
        """Remove ``finalizer`` with a resourceVersion-guarded merge patch, retrying
        conflicts (cf. ``removeFinalizer``). True if this call removed it; False if the
        object is gone or no longer has it."""
        for attempt in range(self._backoff.steps):
            try:
                return await self._remove_finalizer_once(identity, finalizer)
            except StatusError as exc:
                if not is_conflict(exc):
                    raise
                if attempt + 1 == self._backoff.steps:
                    raise RuntimeError(
                        f"updateMaxRetries({self._backoff.steps}) has reached. The garbage "
                        f"collector will retry later for owner {identity}"
                    ) from exc
            jitter = 1.0 + random.random() * self._backoff.jitter
            await self._clock.sleep(self._backoff.duration * jitter)
        return False

    async def _remove_finalizer_once(self, identity: ObjectReference, finalizer: str) -> bool:
        try:
            latest = await self.get_object(identity)
        except StatusError as exc:
            if is_not_found(exc):
                return False
            raise
        if (latest.get("metadata") or {}).get("uid") != identity.uid:
            return False  # recreated under the same name: not the object we finalize
        body = patches.remove_finalizer_merge_patch(latest, finalizer)
        if body is None:
            log.debug("finalizer %s already removed from object %s", finalizer, identity)
            return False
        await self.patch_object(identity, body, PatchType.MERGE)
        return True

