"""Helpers shared by the workload controllers (cf. pkg/controller/controller_utils.go).

Contract (the same upstream file's expectations are ``kubegc.controllers.expectations``):
  * ``PodControl``: creates pods from a template (``generateName: "<owner>-"``, the
    template's labels/annotations/finalizers, the controller reference) and deletes or
    patches them, recording upstream's events (``SuccessfulCreate`` "Created pod: x",
    ``FailedCreate`` "Error creating: …", ``SuccessfulDelete`` "Deleted pod: x",
    ``FailedDelete`` "Error deleting: …").
  * ``slow_start_batch``: call a function ``count`` times in concurrent batches of 1, 2,
    4, … and stop at the first batch with an error (quota denials cost little).
  * ``compute_hash`` (the pod-template-hash), and status merge patches. Pod predicates
    and the deletion ranking live in ``pod_util``.
  * Informer indexes: ``CONTROLLER_UID_INDEX`` files an object under its controller's UID,
    or under ``"_ORPHAN_POD/<namespace>"`` when it has none, so a sync reads only the
    objects of its owner plus the orphans of its namespace (``filter_by_owner``).

Time comes from the injected ``Clock``; nothing here sleeps.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubegc.api.errors import StatusError, is_conflict, is_not_found
from kubegc.api.labels import LabelSelector, label_selector_from_dict
from kubegc.api.meta import controller_ref_of, name_of, namespace_of, uid_of
from kubegc.api.pod import PODS
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.cache import SharedInformer
from kubegc.client.events import EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING, EventRecorder
from kubegc.client.interface import Client, DeleteOptions, PatchType
from kubegc.component.fields import Fields, NotUnderstood, invalid

log = logging.getLogger(__name__)


#: First batch of ``slow_start_batch`` (upstream ``SlowStartInitialBatchSize``).
SLOW_START_INITIAL_BATCH_SIZE = 1

FAILED_CREATE_POD_REASON = "FailedCreate"
SUCCESSFUL_CREATE_POD_REASON = "SuccessfulCreate"
FAILED_DELETE_POD_REASON = "FailedDelete"
SUCCESSFUL_DELETE_POD_REASON = "SuccessfulDelete"

#: Status cause of a create refused because the namespace is terminating.
NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating"

CONTROLLER_UID_INDEX = "podControllerUID"
ORPHAN_INDEX_KEY = "_ORPHAN_POD"


class AggregateError(Exception):
    """Several errors of one pass (cf. ``utilerrors.NewAggregate``): the message is the
    single error's, or ``[e1, e2, …]``."""

    def __init__(self, errors: Sequence[BaseException]) -> None:
        self.errors = list(errors)
        text = str(self.errors[0]) if len(self.errors) == 1 else (
            "[" + ", ".join(str(e) for e in self.errors) + "]")
        super().__init__(text)


def raise_aggregate(errors: Sequence[BaseException]) -> None:
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise AggregateError(errors)


def has_status_cause(err: BaseException, cause: str) -> bool:
    return isinstance(err, StatusError) and any(c.reason == cause for c in err.details.causes)


# --- batches --------------------------------------------------------------------------


async def slow_start_batch(
    count: int, initial_batch_size: int, fn: Callable[[], Awaitable[object]],
) -> tuple[int, BaseException | None]:
    """Call ``fn`` ``count`` times in batches of doubling size, each batch concurrently.

    Returns ``(successes, first_error)``; stops after the first batch with an error, so
    the calls never attempted are neither successes nor errors (cf. ``slowStartBatch``).
    """
    remaining, successes = count, 0
    batch_size = min(remaining, initial_batch_size)
    while batch_size > 0:
        results = await asyncio.gather(*(fn() for _ in range(batch_size)),
                                       return_exceptions=True)
        failures = [r for r in results if isinstance(r, BaseException)]
        for failure in failures:
            if isinstance(failure, asyncio.CancelledError):
                raise failure
        successes += batch_size - len(failures)
        if failures:
            return successes, failures[0]
        remaining -= batch_size
        batch_size = min(2 * batch_size, remaining)
    return successes, None


# --- controller references and indexes --------------------------------------------------


def new_controller_ref(owner: Obj, api_version: str, kind: str) -> dict[str, Any]:
    """``metav1.NewControllerRef``: ``controller: true, blockOwnerDeletion: true``."""
    return {"apiVersion": api_version, "kind": kind, "name": name_of(owner),
            "uid": uid_of(owner), "controller": True, "blockOwnerDeletion": True}


def is_controlled_by(obj: Obj, owner: Obj) -> bool:
    ref = controller_ref_of(obj)
    return ref is not None and ref.get("uid") == uid_of(owner)


def orphan_index_key(namespace: str) -> str:
    return f"{ORPHAN_INDEX_KEY}/{namespace}"


def controller_uid_index_func(obj: Obj) -> list[str]:
    """The controller's UID, or the orphan key of the object's namespace."""
    ref = controller_ref_of(obj)
    if ref is not None:
        return [str(ref.get("uid") or "")]
    return [orphan_index_key(namespace_of(obj))]


#: pods by ``spec.nodeName`` (upstream's ``"spec.nodeName"`` index of the pod informer, which
#: the node lifecycle and taint-eviction controllers share)
POD_NODE_NAME_INDEX = "spec.nodeName"


def pod_node_name_index_func(pod: Obj) -> list[str]:
    node = (pod.get("spec") or {}).get("nodeName")
    return [str(node)] if node else []


def ensure_indexers(informer: SharedInformer, indexers: dict[str, Callable[[Obj], list[str]]],
                    ) -> None:
    """Add the indexes other controllers sharing ``informer`` did not add yet."""
    for name, fn in indexers.items():
        # A ValueError means another controller added it already (same name, same meaning).
        with contextlib.suppress(ValueError):
            informer.indexer.add_indexers({name: fn})


def filter_by_owner(informer: SharedInformer, owner: Obj, *, include_orphans: bool,
                    fields: Fields) -> list[Obj]:
    """Objects controlled by ``owner`` plus (optionally) the orphans of its namespace
    (cf. ``FilterPodsByOwner``), leaving out those whose ``fields`` the controller cannot
    understand: upstream's informers could not decode them, so they are nobody's."""
    out = informer.indexer.by_index(CONTROLLER_UID_INDEX, uid_of(owner))
    if include_orphans:
        orphans = informer.indexer.by_index(CONTROLLER_UID_INDEX,
                                            orphan_index_key(namespace_of(owner)))
        out.extend(orphans)
    return [o for o in out if fields.understood(o)]


def selector_of(obj: Obj) -> LabelSelector:
    """``spec.selector`` (a ``metav1.LabelSelector``); ``NotUnderstood`` if the API would
    not take it (an object stored without that validation)."""
    raw = (obj.get("spec") or {}).get("selector")
    try:
        return label_selector_from_dict(raw)
    except StatusError as err:
        raise NotUnderstood([invalid("spec.selector", raw, err.message)]) from None


def matching(owners: Iterable[Obj], dependent: Obj, *, fields: Fields,
             selector: Callable[[Obj], LabelSelector] = selector_of) -> list[Obj]:
    """The ``owners`` whose non-empty selector matches ``dependent``'s labels (cf.
    ``getPodReplicaSets``, ``getPodDaemonSets``...), leaving out the owners the controller
    cannot understand: one of them must not stop the others from hearing of the pod."""
    out = []
    for owner in owners:
        if not fields.understood(owner):
            continue
        try:
            chosen = selector(owner)
        except (NotUnderstood, StatusError):
            continue
        labels = (dependent.get("metadata") or {}).get("labels") or {}
        if not chosen.empty and chosen.matches(labels):
            out.append(owner)
    return out


# --- pod creation and deletion ----------------------------------------------------------


def pods_prefix(controller_name: str) -> str:
    """``"<name>-"`` (upstream drops the dash only when it would make the name invalid)."""
    return f"{controller_name}-"


def get_pod_from_template(template: Obj, owner: Obj, controller_ref: dict[str, Any] | None,
                          ) -> Obj:
    """A Pod object from a pod template (cf. ``GetPodFromTemplate``)."""
    tmeta = template.get("metadata") or {}
    meta: dict[str, Any] = {"generateName": pods_prefix(name_of(owner))}
    if tmeta.get("labels"):
        meta["labels"] = dict(tmeta["labels"])
    if tmeta.get("annotations"):
        meta["annotations"] = dict(tmeta["annotations"])
    if tmeta.get("finalizers"):
        meta["finalizers"] = list(tmeta["finalizers"])
    if controller_ref is not None:
        meta["ownerReferences"] = [dict(controller_ref)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": copy.deepcopy(template.get("spec") or {})}


@dataclass
class PodControl:
    """Creates, deletes and patches pods for a controller, recording events on the owner
    (cf. ``RealPodControl``)."""

    client: Client
    recorder: EventRecorder
    created: list[str] = field(default_factory=list)  # names, for tests and debugging

    async def create_pods(self, namespace: str, template: Obj, owner: Obj,
                          controller_ref: dict[str, Any], *, generate_name: str = "",
                          name: str = "") -> Obj:
        pod = get_pod_from_template(template, owner, controller_ref)
        if generate_name:
            pod["metadata"]["generateName"] = generate_name
        if name:
            pod["metadata"].pop("generateName", None)
            pod["metadata"]["name"] = name
        if not pod["metadata"].get("labels"):
            raise ValueError("unable to create pods, no labels")
        try:
            created = await self.client.create(PODS, pod, namespace=namespace)
        except StatusError as err:
            if not has_status_cause(err, NAMESPACE_TERMINATING_CAUSE):
                self.recorder.event(owner, EVENT_TYPE_WARNING, FAILED_CREATE_POD_REASON,
                                    f"Error creating: {err}")
            raise
        self.created.append(name_of(created))
        self.recorder.event(owner, EVENT_TYPE_NORMAL, SUCCESSFUL_CREATE_POD_REASON,
                            f"Created pod: {name_of(created)}")
        return created

    async def delete_pod(self, pod: Obj, owner: Obj, *, unchanged: bool = False) -> None:
        """Delete ``pod`` as the controller saw it: with its uid as a precondition (a pod
        made again under that name is another pod), and with ``unchanged`` its
        resourceVersion too (for a decision taken on the pod's state). A 404 or a failed
        precondition (409) is raised again without an event: the informer will bring the
        pod as it is now, and the controller decides again."""
        name = name_of(pod)
        meta = pod.get("metadata") or {}
        options = DeleteOptions(
            preconditions_uid=meta.get("uid") or None,
            preconditions_resource_version=(meta.get("resourceVersion") or None) if unchanged
            else None)
        try:
            await self.client.delete(PODS, name, namespace=namespace_of(pod), options=options)
        except StatusError as err:
            if is_not_found(err) or is_conflict(err):
                raise
            self.recorder.event(owner, EVENT_TYPE_WARNING, FAILED_DELETE_POD_REASON,
                                f"Error deleting: {err}")
            raise
        self.recorder.event(owner, EVENT_TYPE_NORMAL, SUCCESSFUL_DELETE_POD_REASON,
                            f"Deleted pod: {name}")

    async def patch_pod(self, namespace: str, name: str, patch: Obj) -> Obj:
        return await self.client.patch(PODS, name, patch, namespace=namespace,
                                       patch_type=PatchType.STRATEGIC)


# --- hashing ----------------------------------------------------------------------------

_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


def safe_encode_string(text: str) -> str:
    """``rand.SafeEncodeString``: map every character into an alphabet without vowels."""
    return "".join(_ALPHANUMS[ord(c) % len(_ALPHANUMS)] for c in text)


def fnv32a(data: bytes, value: int = 0x811C9DC5) -> int:
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def compute_hash(template: Obj, collision_count: int | None) -> str:
    """The pod-template-hash (cf. ``controller.ComputeHash``): FNV-32a of the template,
    then of ``collision_count`` as 8 little-endian bytes (uint32 + zero padding), printed
    in decimal and safe-encoded. Upstream hashes Go's spew dump of the typed struct; we
    hash the canonical JSON of the template, so values differ from a real cluster's but
    are stable and change exactly when the template does."""
    canonical = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    value = fnv32a(canonical)
    if collision_count is not None:
        value = fnv32a((collision_count & 0xFFFFFFFF).to_bytes(4, "little") + bytes(4), value)
    return safe_encode_string(str(value))


# --- status patches ---------------------------------------------------------------------


def status_merge_patch(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """A JSON merge patch (RFC 7386) turning ``old`` into ``new``: removed keys become
    null, nested maps are diffed recursively, lists and scalars are replaced."""
    patch: dict[str, Any] = {k: None for k in old if k not in new}
    for key, value in new.items():
        before = old.get(key)
        if before == value and key in old:
            continue
        if isinstance(value, dict) and isinstance(before, dict):
            patch[key] = status_merge_patch(before, value)
        else:
            patch[key] = value
    return patch


def status_patch(obj: Obj, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The merge patch writing status ``new`` over ``old`` on ``obj`` as the controller
    saw it, guarded by its resourceVersion (a compare-and-swap, as upstream's
    ``UpdateStatus`` of the object read): a status computed from a stale view fails with a
    Conflict, and the sync runs again, instead of overwriting what a newer view wrote."""
    patch: dict[str, Any] = {"status": status_merge_patch(old, new)}
    resource_version = (obj.get("metadata") or {}).get("resourceVersion")
    if resource_version:
        patch["metadata"] = {"resourceVersion": resource_version}
    return patch


def omit_empty(status: dict[str, Any], *, keep: Iterable[str] = ()) -> dict[str, Any]:
    """Drop zero/empty values, as Go's ``omitempty`` would (except keys in ``keep``)."""
    kept = set(keep)
    return {k: v for k, v in status.items() if k in kept or v not in (None, 0, "", [], {})}


async def update_status_of(client: Client, gvr: GroupVersionResource, obj: Obj,
                           status: dict[str, Any], *, keep: Iterable[str] = ()) -> Obj:
    """Write ``status`` (zero values omitted except ``keep``) to the status subresource
    with a merge patch guarded by ``obj``'s resourceVersion (``status_patch``) if it
    differs from ``obj``'s; the object as now stored."""
    new = omit_empty(status, keep=keep)
    old = dict(obj.get("status") or {})
    if old == new:
        return obj
    return await client.patch(gvr, name_of(obj), status_patch(obj, old, new),
                              namespace=namespace_of(obj), patch_type=PatchType.MERGE,
                              subresource="status")
