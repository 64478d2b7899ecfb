"""Evicting a pod: ``POST .../pods/<name>/eviction`` with a ``policy/v1`` (or
``policy/v1beta1``) Eviction (cf. pkg/registry/core/pod/storage/eviction.go,
``EvictionREST.Create``).

An eviction is a deletion that respects the pod's PodDisruptionBudget:
* a terminal, Pending or already deleting pod is deleted without looking at budgets
  (``canIgnorePDB``), with a resourceVersion precondition for a non-terminal one;
* more than one budget selecting the pod: 500, which upstream does not support;
* one budget: ``checkAndDecrement`` — 429 while the disruption controller has not observed
  its generation, 403 for a negative ``disruptionsAllowed`` or more than
  ``MAX_DISRUPTED_POD_SIZE`` unconfirmed evictions, 429 with the budget's healthy counts
  when ``disruptionsAllowed`` is 0; else one fewer disruption allowed and the pod in
  ``status.disruptedPods`` (one compare-and-swap of the budget's status, retried on
  conflicts as upstream's ``RetryOnConflict``);
* an unready pod under a budget is deleted without decrementing when the budget is healthy
  (``IfHealthyBudget``, the default) or always (``AlwaysAllow``), guarded by its
  resourceVersion (a conflict then is 429: it may have become ready meanwhile);
* before the delete, the pod's ``DisruptionTarget`` condition (``EvictionByEvictionAPI``)
  is written (``addConditionAndDeletePod``); the DELETE carries the Eviction's
  DeleteOptions (preconditions, grace period). A dry run changes nothing.
Every eviction that deleted a pod leaves a ``kubegc.io/v1 DeletionRecord`` (action
``evict``) naming the caller and the budget, which ``kubegc why`` reads.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any, ClassVar

from kubegc.api import errors
from kubegc.api.auth import request_user
from kubegc.api.clock import format_time
from kubegc.api.deletionrecord import ACTION_EVICT, record_object
from kubegc.api.disruption import (
    DISRUPTION_TARGET,
    EVICTION_BY_EVICTION_API,
    MORE_THAN_ONE_PDB,
    can_ignore_pdb,
    check_and_decrement,
    selects,
    should_enforce_resource_version,
    too_many_requests_processing,
    unhealthy_evictable,
    update_pod_condition,
)
from kubegc.api.errors import StatusError
from kubegc.api.meta import DeleteOptions
from kubegc.api.pod import is_pod_ready, pod_phase
from kubegc.api.resources import GroupVersionKind
from kubegc.api.types import Obj
from kubegc.registry.generic.decoding import check_delete_options
from kubegc.registry.generic.deletion import check_preconditions, delete
from kubegc.registry.generic.listing import list_objects
from kubegc.registry.generic.rest import NamedCreater, WriteOptions
from kubegc.registry.generic.standard import StorageContext
from kubegc.registry.generic.target import Target
from kubegc.registry.groups import kubegc as kubegc_group
from kubegc.registry.groups import policy
from kubegc.registry.validation.objectmeta import parse_delete_options

log = logging.getLogger(__name__)

#: ``EvictionsRetry``: 20 steps of 500 ms for conflicting pod writes
EVICTIONS_RETRY_STEPS = 20
EVICTIONS_RETRY_SECONDS = 0.5
#: what a successful eviction answers: ``&metav1.Status{Status: StatusSuccess}``, sent 201
SUCCESS: Obj = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                "code": 201}


def parse_eviction(obj: Obj, namespace: str, name: str) -> Obj:
    """The request's Eviction, checked: its type (policy/v1 or policy/v1beta1: upstream's
    ``AcceptsGroupVersion``), its name against the URL's pod, its namespace."""
    version = "policy/v1beta1" if obj.get("apiVersion") == "policy/v1beta1" else "policy/v1"
    errors.checked_kind(obj, version, "Eviction")
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = obj["metadata"] = {}
    if meta.get("namespace") not in (None, "", namespace):
        raise errors.bad_request("the namespace of the provided object does not match the "
                                 "namespace sent on the request")
    if meta.get("name") != name:
        raise errors.bad_request("name in URL does not match name in Eviction object")
    return obj


def eviction_delete_options(eviction: Obj, dry_run: bool) -> DeleteOptions:
    """``propagateDryRun``: the Eviction's DeleteOptions, dry-run if the request or the
    options ask for it (both only ever say ``All``)."""
    body = eviction.get("deleteOptions")
    if body is None:
        return DeleteOptions(dry_run=dry_run)
    if not isinstance(body, dict):
        raise errors.bad_request("deleteOptions must be an object")
    check_delete_options(body)
    options = parse_delete_options(body)
    return replace(options, dry_run=options.dry_run or dry_run)


class EvictionREST(NamedCreater):
    """``pods/<name>/eviction`` (upstream's ``EvictionREST``): the pod's storage writes
    (the status and the delete) and its budgets', over one Store."""

    kind: ClassVar[GroupVersionKind | None] = GroupVersionKind("policy", "v1", "Eviction")

    def __init__(self, ctx: StorageContext) -> None:
        self.store = ctx.store

    async def create_named(self, t: Target, name: str, obj: Obj, options: WriteOptions) -> Obj:
        eviction = parse_eviction(obj, t.namespace, name)
        delete_options = eviction_delete_options(eviction, options.dry_run)
        pod = await self._delete_if_pdb_ignorable(t, name, delete_options)
        if pod is None:
            return dict(SUCCESS)
        pdbs = [p for p in await self._budgets(t.namespace) if selects(p, pod)]
        if len(pdbs) > 1:
            raise StatusError(500, "", MORE_THAN_ONE_PDB)
        pdb_name, unready_allowed = "", False
        if pdbs:
            pdb_name = pdbs[0]["metadata"]["name"]
            unready_allowed = not is_pod_ready(pod) and unhealthy_evictable(pdbs[0])
            if not unready_allowed:
                budget = await self._take_disruption(t.namespace, pdb_name, name,
                                                     dry_run=delete_options.dry_run)
                pdbs = [budget]
        guarded = delete_options
        if unready_allowed:
            guarded = replace(guarded, preconditions_resource_version=_rv(pod))
        try:
            await self._add_condition_and_delete(t, name, guarded)
        except StatusError as e:
            if (errors.is_conflict(e) and unready_allowed
                    and delete_options.preconditions_resource_version is None):
                raise too_many_requests_processing(pdb_name) from None
            raise
        await self._record(pod, delete_options, pdbs[0] if pdbs else None)
        return dict(SUCCESS)

    async def _delete_if_pdb_ignorable(self, t: Target, name: str,
                                       options: DeleteOptions) -> Obj | None:
        """The first loop of ``Create``: a pod that can ignore budgets is deleted (None
        returned); else the pod, to check against its budgets. Conflicts are retried
        unless the caller gave a resourceVersion precondition."""
        retry = options.preconditions_resource_version is None
        for attempt in range(EVICTIONS_RETRY_STEPS):
            pod = await self.store.get(t, name)
            if not can_ignore_pdb(pod):
                return pod
            guarded = options
            if should_enforce_resource_version(pod) and retry:
                guarded = replace(options, preconditions_resource_version=_rv(pod))
            try:
                await self._add_condition_and_delete(t, name, guarded)
            except StatusError as e:
                if retry and errors.is_conflict(e) and attempt + 1 < EVICTIONS_RETRY_STEPS:
                    await self.store.clock.sleep(EVICTIONS_RETRY_SECONDS)
                    continue
                raise
            await self._record(pod, options, None)
            return None
        raise errors.server_timeout(f"couldn't evict pod {name!r} due to conflicts")

    async def _budgets(self, namespace: str) -> list[Obj]:
        listed = await list_objects(self.store, _pdbs(namespace))
        items: list[Obj] = listed.get("items") or []
        return items

    async def _take_disruption(self, namespace: str, pdb_name: str, pod_name: str, *,
                               dry_run: bool) -> Obj:
        """``checkAndDecrement`` on the budget as stored, written with compare-and-swap
        (a conflict re-reads the budget, as upstream's ``RetryOnConflict`` refreshes it);
        returns the budget as decremented."""
        now = format_time(self.store.clock.now())

        async def decrement(pdb: Obj) -> Any:
            check_and_decrement(pdb, pod_name, now, dry_run=dry_run)
            return pdb

        budget, _ = await self.store.guaranteed_update(_pdbs(namespace), pdb_name, decrement,
                                                       dry_run=dry_run)
        return budget

    async def _add_condition_and_delete(self, t: Target, name: str,
                                        options: DeleteOptions) -> None:
        """``addConditionAndDeletePod``: the ``DisruptionTarget`` condition on the latest
        pod (checked against the preconditions), then the DELETE with the options (its
        resourceVersion precondition moved to the condition's write)."""
        if not options.dry_run:
            now = format_time(self.store.clock.now())

            async def add_condition(pod: Obj) -> Any:
                check_preconditions(t, pod, options)  # getLatestPod's checks
                update_pod_condition(pod, {
                    "type": DISRUPTION_TARGET, "status": "True",
                    "reason": EVICTION_BY_EVICTION_API, "message": "Eviction API: evicting"},
                    now)
                return pod

            updated, _ = await self.store.guaranteed_update(t, name, add_condition)
            if options.preconditions_resource_version is not None:
                options = replace(options, preconditions_resource_version=_rv(updated))
        await delete(self.store, t, name, options)

    async def _record(self, pod: Obj, options: DeleteOptions, pdb: Obj | None) -> None:
        """The DeletionRecord of this eviction (never fails the eviction)."""
        if options.dry_run:
            return
        now = self.store.clock.now()
        meta = pod["metadata"]
        user = request_user()
        budget: dict[str, Any] = {}
        if pdb is not None:
            status = pdb.get("status") or {}
            budget = {"name": pdb["metadata"]["name"],
                      **{k: int(status.get(k) or 0) for k in (
                          "disruptionsAllowed", "currentHealthy", "desiredHealthy",
                          "expectedPods")}}
        record = record_object(
            name=f"{meta.get('uid') or 'unknown'}.{ACTION_EVICT}.{int(now.timestamp() * 1e6):x}",
            time=format_time(now), action=ACTION_EVICT, reason=EVICTION_BY_EVICTION_API,
            message=_record_message(pod, budget),
            about={"apiVersion": "v1", "kind": "Pod", "namespace": meta.get("namespace", ""),
                   "name": meta.get("name", ""), "uid": meta.get("uid", "")},
            user=user.name if user is not None else "", budget=budget)
        try:
            await self.store.create(_records(), record)
        except StatusError as e:
            log.warning("writing the deletion record of eviction %s failed: %s",
                        record["metadata"]["name"], e)


def _record_message(pod: Obj, budget: dict[str, Any]) -> str:
    name = pod["metadata"].get("name", "")
    if can_ignore_pdb(pod):
        state = ("already being deleted" if pod["metadata"].get("deletionTimestamp")
                 else pod_phase(pod))
        return f"pod {name} evicted without checking disruption budgets: it is {state}"
    if not budget:
        return f"pod {name} evicted: no PodDisruptionBudget selects it"
    return (f"pod {name} evicted: the disruption budget {budget['name']} allowed it "
            f"({budget['disruptionsAllowed']} more disruptions allowed, "
            f"{budget['currentHealthy']} healthy of {budget['desiredHealthy']} desired)")


def _rv(obj: Obj) -> str:
    return str(obj["metadata"].get("resourceVersion") or "")


def _pdbs(namespace: str) -> Target:
    return Target(policy.PDBS, policy.STRATEGY, "v1", namespace)


def _records() -> Target:
    return Target(kubegc_group.DELETION_RECORDS, kubegc_group.STRATEGY, "v1")


__all__ = ["EvictionREST"]
