"""Read a cluster into an ``Inventory``: every object the tools need, read once.

``read_inventory(client, ...)`` discovers the served resources, picks the preferred
version of each, and lists every listable one (paged), concurrently, reporting progress.
With a namespace it reads only that namespace of namespaced resources, but still every
cluster-scoped resource and, everywhere, the evidence of controllers being alive
(Leases, Deployments). A resource that cannot be listed (403, 503, ...) is recorded in
``errors`` and skipped: absence of an object of that resource is then inconclusive,
which ``was_read`` tells.

Items of typed lists lack ``apiVersion``/``kind`` on real servers; they are filled in, and
their ``managedFields`` are left out (nothing in the tools reads them, and on real clusters
they are often the larger part of an object; their times count for ``cluster_time``).
Objects are shared with the caller; nothing in the tools mutates them.

Every object read passes ``wellformed`` (``Reading``): a field of the wrong type for the
API's schema (a dump edited by hand) is left out of a copy and recorded in ``problems``,
which each tool reports; an object that cannot be named is left out. That check, the
indexes and the owner graph's (``dependents``) are made in one walk per object (issue 27:
a 1M-object dump is walked once, not once per index). A note says when deletions begin
after ``now`` (``state.future_deletions_note``).

Every age the tools judge (deleting for, a Lease's expiry) counts to ``Inventory.now``. A
cluster stamps objects with its own clock, which may be ahead of this machine's (``kubegc
serve --time-scale``, or plain skew): then deletionTimestamps lie in our future and nothing
looks stuck. With ``follow_cluster_clock`` the inventory's time is the cluster's as its
objects show it (``cluster_time``: the latest time it wrote) whenever that is ahead of
``clock`` by more than ``CLOCK_SKEW_TOLERANCE``, and a note says so (``cluster_clock``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import InitVar, dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from kubegc.api.clock import Clock, format_time
from kubegc.api.errors import StatusError
from kubegc.api.resources import split_api_version
from kubegc.api.types import Obj
from kubegc.api.version import MajorMinor, emulated_version_of
from kubegc.client.dump import DumpClient
from kubegc.client.interface import APIResource, Client, VersionReader
from kubegc.client.paging import list_pages
from kubegc.controllers.deletionrecords import DELETION_RECORDS
from kubegc.tools.cluster_clock import Stamps, cluster_time, judging_time
from kubegc.tools.dependents import Dependents
from kubegc.tools.model import group_of
from kubegc.tools.owner_history import read_records_of_absent_owners, remember_record
from kubegc.tools.state import future_deletions_note
from kubegc.tools.wellformed import InputProblem, Reading

log = logging.getLogger(__name__)

#: (done, total, what) — called after each resource is read.
ProgressFn = Callable[[int, int, str], None]

PAGE_SIZE = 500
#: Lists in flight at once (a real API server throttles clients beyond a few).
CONCURRENT_LISTS = 8
#: Never read: duplicates of core events, and kubegc's own records (``why`` reads those).
SKIPPED = frozenset({("events.k8s.io", "events"),
                     (DELETION_RECORDS.group, DELETION_RECORDS.resource)})
#: Read in every namespace even when a namespace is given: evidence of controllers.
EVIDENCE = frozenset({("coordination.k8s.io", "leases"), ("apps", "deployments")})
#: kubegc's DeletionRecords are read only for owners that are not there, this many uids
#: per label selector.
RECORDS = (DELETION_RECORDS.group, DELETION_RECORDS.resource)


class _Slot(NamedTuple):
    """Where ``Inventory`` indexes the objects of one apiVersion, kind and namespace."""

    named: dict[str, Obj]
    of_kind: list[Obj]
    in_namespace: list[Obj] | None
    remember: bool  # evidence of other objects (``history``)


@dataclass
class Inventory:
    """A read-only picture of one cluster at ``now``.

    Ownership: built once by ``read_inventory`` (or ``Inventory.of``); immutable after."""

    objects: list[Obj]
    resources: list[APIResource]  # every served version, as discovery listed them
    now: datetime
    namespace: str = ""  # "" = every namespace was read
    source: str = ""
    #: a dump: it may leave out whole resources, so only the absence of an object of a
    #: kind that appears in it is conclusive
    dump: bool = False
    errors: dict[str, str] = field(default_factory=dict)  # "resource.group" -> message
    read: set[tuple[str, str]] = field(default_factory=set)  # (group, resource) listed
    notes: list[str] = field(default_factory=list)  # about the reading, for the reports
    #: uid -> evidence that an object with that uid existed though it is not read now:
    #: kubegc's DeletionRecords about it, Events about it (``existed``)
    history: dict[str, str] = field(default_factory=dict)
    #: the Kubernetes version the cluster behaves as (its ``/version``: the emulated
    #: version from 1.33, else ``major.minor``); None: unknown (a dump)
    emulated_version: MajorMinor | None = None
    #: fields of the objects read that break the API's schema, left out of ``objects``
    #: (``wellformed``)
    problems: list[InputProblem] = field(default_factory=list)
    #: read each object through ``wellformed`` in the inventory's own walk
    #: (``read_inventory``): ``objects`` become the objects as read, their problems are
    #: added to ``problems``
    check_well_formed: InitVar[bool] = False
    #: judge at the cluster's time when the objects show its clock ahead of ``now``
    #: (``cluster_clock``), found in the same walk (a dump: ``read_inventory``)
    follow_cluster_clock: InitVar[bool] = False

    def __repr__(self) -> str:
        # short: asyncio formats a finished task's result in some paths (Python 3.11's
        # asyncio.run), and a dataclass repr of 100,000 objects takes seconds
        return (f"<Inventory {len(self.objects)} objects from {self.source or '?'} at "
                f"{format_time(self.now)}>")

    def __post_init__(self, check_well_formed: bool, follow_cluster_clock: bool) -> None:
        self._by_uid: dict[str, Obj] = {}
        #: (group, kind, namespace) -> name -> object: no tuple per object (~120 B each)
        self._by_key: dict[tuple[str, str, str], dict[str, Obj]] = {}
        self._by_kind: dict[tuple[str, str], APIResource] = {}
        self._of_kind: dict[tuple[str, str], list[Obj]] = {}
        self._in_namespace: dict[str, list[Obj]] = {}
        #: the objects being deleted (a deletionTimestamp), in order: the doctor's stuck
        #: deletions and ``future_deletions_note`` read only these, not every object
        self.deleting: list[Obj] = []
        for res in preferred_resources(self.resources):
            self._by_kind.setdefault((res.group, res.kind), res)
        self._served = {(r.group, r.version, r.kind) for r in self.resources}
        self._served_kinds: dict[tuple[str, str], tuple[str, APIResource | None]] = {}
        self.dependents = Dependents()  # the owner graph's index (``ownership.OwnerGraph``)
        reading = Reading(self.now) if check_well_formed else None
        stamps = Stamps() if follow_cluster_clock else None
        self.objects = self._index(self.objects, reading, stamps)
        self.dependents.done()
        if stamps is not None:
            self.now, notes = judging_time(stamps.latest(), self.now)
            self.notes[:0] = notes
        if reading is not None:
            reading.judge_at(self.now)
            self.problems.extend(reading.problems)

    def _index(self, objects: list[Obj], reading: Reading | None, stamps: Stamps | None
               ) -> list[Obj]:
        """Index each object, in one walk (and read it through ``reading``, and note the
        times it says the cluster wrote in ``stamps``, if given): the objects as read."""
        by_uid, deleting, add_edges = self._by_uid, self.deleting, self.dependents.add
        read = reading.read if reading is not None else None
        kept: list[Obj] = [] if read is not None else objects
        #: (apiVersion, kind, namespace) as the object holds them -> where it goes
        slots: dict[tuple[Any, Any, Any], _Slot] = {}
        for obj in objects:  # the hot loop of a 1M-object inventory: kept lean
            if read is not None:
                read_as = read(obj)
                if read_as is None:  # left out; if served, the cluster wrote it all the same
                    if stamps is not None and type(obj) is dict and type(
                            obj.get("apiVersion")) is type(obj.get("kind")) is str:
                        stamps.add_object(obj)
                    continue
                obj = read_as
                kept.append(obj)
            meta = obj.get("metadata") or {}
            uid = meta.get("uid")
            if uid:
                by_uid[str(uid)] = obj
            if meta.get("deletionTimestamp"):
                deleting.append(obj)
            key = (obj.get("apiVersion"), obj.get("kind"), meta.get("namespace"))
            if stamps is not None and meta:  # ``stamps.add``, its common case inline
                stamp = meta.get("creationTimestamp")
                if type(stamp) is str and key[1] != "Lease" and "managedFields" not in meta:
                    stamps.distinct.add(stamp)
                else:
                    stamps.add(obj, meta)
            try:
                slot = slots.get(key) or slots.setdefault(key, self._slot(*key))
            except TypeError:  # a value no key can hold (an inventory not well-formed)
                slot = self._slot(*key)
            slot.of_kind.append(obj)
            if slot.in_namespace is not None:
                slot.in_namespace.append(obj)
            slot.named[str(meta.get("name") or "")] = obj
            if slot.remember:
                self._remember(obj)
            refs = meta.get("ownerReferences")
            if refs and type(refs) is list:
                add_edges(obj, refs)
        return kept

    def _slot(self, api_version: Any, kind: Any, namespace: Any) -> _Slot:
        group = str(api_version or "").rpartition("/")[0]
        kind, namespace = str(kind), str(namespace or "")
        return _Slot(self._by_key.setdefault((group, kind, namespace), {}),
                     self._of_kind.setdefault((group, kind), []),
                     self._in_namespace.setdefault(namespace, []) if namespace else None,
                     kind in ("Event", "DeletionRecord"))

    def _remember(self, obj: Obj) -> None:
        """Evidence in ``obj`` that another object existed (``history``)."""
        kind = obj.get("kind")
        if kind == "Event" and group_of(obj) == "":
            about = obj.get("involvedObject") or {}
            meta = obj.get("metadata") or {}
            self.history.setdefault(str(about.get("uid") or ""), (
                f"Event {meta.get('namespace')}/{meta.get('name')} about "
                f"{about.get('kind')}/{about.get('name')} ({obj.get('reason')})"))
        elif kind == "DeletionRecord" and group_of(obj) == "kubegc.io":
            remember_record(self.history, obj)
        self.history.pop("", None)

    def existed(self, uid: str) -> bool:
        """Whether an object with ``uid`` is known to exist or to have existed."""
        return bool(uid) and (uid in self._by_uid or uid in self.history)

    def uids(self) -> Iterable[tuple[str, Obj]]:
        """(uid, the object with it), in the order of ``objects`` (read-only)."""
        return self._by_uid.items()

    def by_uid(self, uid: str) -> Obj | None:
        return self._by_uid.get(uid)

    def find(self, group: str, kind: str, namespace: str, name: str) -> Obj | None:
        named = self._by_key.get((group, kind, namespace))
        return named.get(name) if named is not None else None

    def resource_for_kind(self, group: str, kind: str) -> APIResource | None:
        return self._by_kind.get((group, kind))

    def served(self, group: str, version: str, kind: str) -> bool:
        return (group, version, kind) in self._served

    def served_kind(self, api_version: str, kind: str) -> tuple[str, APIResource | None]:
        """The group of ``api_version`` and the resource serving ``kind`` at that version
        (None if the cluster does not serve it), remembered: 100,000s of owner
        references name a handful of kinds."""
        key = (api_version, kind)
        found = self._served_kinds.get(key)
        if found is None:
            group, version = split_api_version(api_version)
            res = self._by_kind.get((group, kind))
            found = (group, res if res is not None and self.served(group, version, kind)
                     else None)
            self._served_kinds[key] = found
        return found

    def was_read(self, group: str, kind: str, namespace: str) -> bool:
        """Whether the absence of a ``group``/``kind`` object in ``namespace`` is conclusive."""
        res = self._by_kind.get((group, kind))
        if res is None or (res.group, res.resource) not in self.read:
            return False
        if self.dump and (group, kind) not in self._of_kind:
            return False  # the dump may simply not include this resource
        if not res.namespaced or not self.namespace:
            return True
        return namespace == self.namespace or (res.group, res.resource) in EVIDENCE

    def may_hold(self, group: str, kind: str) -> bool:
        """Whether every object of that kind (in the namespace read) is in the inventory:
        its resource was listed, and, for a dump, the dump holds objects of it (a dump may
        leave whole kinds out). A kind the cluster does not serve has no objects to miss."""
        res = self._by_kind.get((group, kind))
        if res is None:
            return not self.dump or self.holds_kind(group, kind)
        if (res.group, res.resource) not in self.read:
            return False
        return not self.dump or self.holds_kind(group, kind)

    def holds_kind(self, group: str, kind: str) -> bool:
        """Whether any object of that kind was read."""
        return (group, kind) in self._of_kind

    def of_kind(self, group: str, kind: str) -> list[Obj]:
        return list(self._of_kind.get((group, kind), ()))

    def in_namespace(self, namespace: str) -> list[Obj]:
        return list(self._in_namespace.get(namespace, ()))


def preferred_resources(resources: Iterable[APIResource]) -> list[APIResource]:
    """One entry per (group, resource): the first (preferred) version discovery listed."""
    seen: dict[tuple[str, str], APIResource] = {}
    for res in resources:
        if "/" in res.resource:
            continue
        seen.setdefault((res.group, res.resource), res)
    return list(seen.values())


async def read_inventory(
    client: Client, *, clock: Clock, namespace: str = "", source: str = "",
    progress: ProgressFn | None = None, include: Callable[[APIResource], bool] | None = None,
    follow_cluster_clock: bool = False,
) -> Inventory:
    """Read the cluster behind ``client`` (see the module docstring)."""
    discovered = await client.discover()
    resources = preferred_resources(discovered)
    listable = [r for r in resources if "list" in r.verbs
                and (r.group, r.resource) not in SKIPPED and (include is None or include(r))]
    objects: list[Obj] = []
    errors: dict[str, str] = {}
    read: set[tuple[str, str]] = set()
    dump = isinstance(client, DumpClient)
    done = 0
    gate = asyncio.Semaphore(CONCURRENT_LISTS)
    latest: list[datetime] = []  # the latest time the cluster wrote, per resource

    async def one(res: APIResource) -> None:
        nonlocal done
        ns = namespace if res.namespaced and (res.group, res.resource) not in EVIDENCE else ""
        async with gate:
            try:
                objects.extend(await _list_all(client, res, ns, latest if (
                    follow_cluster_clock and not dump) else None))
                read.add((res.group, res.resource))
            except StatusError as e:
                errors[_name(res)] = e.message
        done += 1
        if progress is not None:
            progress(done, len(listable), _name(res))

    await asyncio.gather(*(one(r) for r in listable))
    now, notes = clock.now(), list[str]()
    if follow_cluster_clock and not dump:  # a dump's: found in the inventory's walk
        now, notes = judging_time(max(latest, default=None), now)
    if isinstance(client, DumpClient):  # what it could not serve, to be reported
        objects.extend(client.malformed)
    inv = Inventory(objects, discovered, now, namespace=namespace, source=source,
                    errors=errors, read=read, dump=dump, notes=notes,
                    emulated_version=await _emulated_version(client), check_well_formed=True,
                    follow_cluster_clock=follow_cluster_clock and dump)
    future = future_deletions_note(inv.deleting, inv.now)
    if future:
        inv.notes.append(future)
    if isinstance(client, DumpClient):  # the records a dump holds are all there is
        if any((r.group, r.resource) == RECORDS for r in resources):
            for record in client.shared_items(DELETION_RECORDS):
                remember_record(inv.history, record)
    elif any((r.group, r.resource) == RECORDS for r in resources):
        await read_records_of_absent_owners(client, inv)
    return inv


async def _emulated_version(client: Client) -> MajorMinor | None:
    """The version the cluster says it behaves as; None when it cannot say."""
    if not isinstance(client, VersionReader):
        return None
    try:
        return emulated_version_of(await client.version())
    except Exception:  # an old or odd /version: the ordering then defaults
        log.debug("could not read /version", exc_info=True)
        return None


def _without_managed_fields(items: list[Obj]) -> list[Obj]:
    """The items without ``metadata.managedFields``: no tool reads them but for the times
    in them (``cluster_time``, taken before), and they are often most of an object."""
    for item in items:
        meta = item.get("metadata")
        if isinstance(meta, dict) and "managedFields" in meta:
            item["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
    return items


async def _list_all(client: Client, res: APIResource, namespace: str,
                    latest: list[datetime] | None) -> list[Obj]:
    """Every object of ``res``, a page at a time; the latest time each page shows the
    cluster wrote goes to ``latest`` before its managedFields are left out."""
    if isinstance(client, DumpClient):  # read-only and complete: no pages, no copies
        shared = client.shared_items(res.gvr, namespace=namespace)
        wrote_at = cluster_time(shared) if latest is not None else None
        if latest is not None and wrote_at is not None:
            latest.append(wrote_at)
        return shared  # shared with the dump: its managedFields stay
    out: list[Obj] = []
    async for page in list_pages(client, res.gvr, limit=PAGE_SIZE, namespace=namespace):
        items = [i for i in page.get("items") or [] if isinstance(i, dict)]
        for item in items:
            if not item.get("kind"):
                item["kind"] = res.kind
            if not item.get("apiVersion"):
                item["apiVersion"] = res.api_version
        wrote = cluster_time(items) if latest is not None else None
        if latest is not None and wrote is not None:
            latest.append(wrote)
        out.extend(_without_managed_fields(items))
    return out


def _name(res: APIResource) -> str:
    return f"{res.resource}.{res.group}" if res.group else res.resource
