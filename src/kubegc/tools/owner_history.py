"""Evidence that objects existed which are not there now: kubegc's DeletionRecords about
them, and about owners the garbage collector saw (``SEEN_OWNER_DETAILS``). An owner
reference whose uid names nothing is "absent" (the owner is gone) only if that uid ever
existed; a recreated owner (its name now held by another uid) is told from a made-up uid the
same way. Read into ``Inventory.history`` by ``read_inventory``.
"""

from __future__ import annotations

from typing import Protocol

from kubegc.api.content import is_valid_label_value
from kubegc.api.errors import StatusError
from kubegc.api.resources import split_api_version
from kubegc.api.types import Obj
from kubegc.client.interface import Client, ListOptions
from kubegc.controllers.deletionrecords import DELETION_RECORDS, LABEL_NAMESPACE, LABEL_UID

#: uids per label selector when reading records of absent owners
RECORD_QUERY_BATCH = 50


class Inventoried(Protocol):
    """What the readers use of an ``Inventory``."""

    objects: list[Obj]
    errors: dict[str, str]
    history: dict[str, str]

    def by_uid(self, uid: str) -> Obj | None: ...

    def find(self, group: str, kind: str, namespace: str, name: str) -> Obj | None: ...


def _mapping(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


#: A DeletionRecord's owner details that say the garbage collector saw that owner (its
#: informer watched it go, or it knew the uid before a namesake took the name): evidence
#: that an object with that uid existed (cf. controllers/garbagecollector/records.py).
SEEN_OWNER_DETAILS = ("ObservedDeleted", "Recreated")


def remember_record(history: dict[str, str], record: Obj) -> None:
    """A DeletionRecord is evidence that its object existed, and that the owners the
    garbage collector saw (``SEEN_OWNER_DETAILS``) did."""
    about, meta = _mapping(record.get("object")), _mapping(record.get("metadata"))
    history.setdefault(str(about.get("uid") or ""), (
        f"DeletionRecord {meta.get('name')}: the garbage collector's "
        f"{record.get('action')} of {about.get('kind')}/{about.get('name')} at "
        f"{record.get('time')}"))
    owners = record.get("owners")
    for owner in owners if isinstance(owners, list) else ():
        owner = _mapping(owner)
        if owner.get("detail") in SEEN_OWNER_DETAILS and owner.get("uid"):
            history.setdefault(str(owner["uid"]), (
                f"DeletionRecord {meta.get('name')}: the garbage collector had seen "
                f"{owner.get('kind')}/{owner.get('name')} of that uid ({owner.get('detail')}) "
                f"when it did {record.get('action')} on {about.get('kind')}/"
                f"{about.get('name')} at {record.get('time')}"))


def _absent_owner_uids(inv: Inventoried) -> list[str]:
    """The uids of owner references that name no object of the inventory."""
    uids = {str(ref.get("uid") or "") for obj in inv.objects
            for ref in (obj.get("metadata") or {}).get("ownerReferences") or ()
            if isinstance(ref, dict)}
    return sorted(u for u in uids if u and inv.by_uid(u) is None and u not in inv.history
                  and not is_valid_label_value(u))


async def read_records_of_absent_owners(client: Client, inv: Inventoried) -> None:
    """kubegc's DeletionRecords about objects that owner references name but that are
    not there (evidence that they existed), a set-based label selector at a time."""
    uids = _absent_owner_uids(inv)
    for start in range(0, len(uids), RECORD_QUERY_BATCH):
        batch = uids[start:start + RECORD_QUERY_BATCH]
        selector = f"{LABEL_UID} in ({','.join(batch)})"
        try:
            listed = await client.list(DELETION_RECORDS,
                                       options=ListOptions(label_selector=selector))
        except StatusError as e:
            inv.errors["deletionrecords.kubegc.io"] = e.message
            return
        for record in listed.get("items") or []:
            remember_record(inv.history, record)
    await _read_records_naming_recreated_owners(client, inv)


#: At most this many records of one namespace are read to find a recreated owner's uid.
RECORDS_PER_NAMESPACE = 5000


async def _read_records_naming_recreated_owners(client: Client, inv: Inventoried) -> None:
    """An owner reference whose uid names nothing while its name is held by another object
    (a recreation, or a made-up uid): the records that name that uid as an owner the
    garbage collector saw — of the dependent itself, or of the owner's other, collected,
    dependents in its namespace — tell the two apart (``SEEN_OWNER_DETAILS``)."""
    wanted: dict[str, set[str]] = {}  # namespace -> uids
    for obj in inv.objects:
        meta = _mapping(obj.get("metadata"))
        refs = meta.get("ownerReferences")
        for ref in refs if isinstance(refs, list) else ():
            ref = _mapping(ref)
            uid = str(ref.get("uid") or "")
            if not uid or inv.by_uid(uid) is not None or uid in inv.history:
                continue
            group = split_api_version(str(ref.get("apiVersion") or ""))[0]
            ns = str(meta.get("namespace") or "")
            if inv.find(group, str(ref.get("kind") or ""), ns, str(ref.get("name") or "")):
                wanted.setdefault(ns, set()).add(uid)
    for ns, uids in sorted(wanted.items()):
        selector = f"{LABEL_NAMESPACE}={ns}" if ns else f"!{LABEL_NAMESPACE}"
        token, read = "", 0
        while read < RECORDS_PER_NAMESPACE and not uids <= inv.history.keys():
            try:
                listed = await client.list(DELETION_RECORDS, options=ListOptions(
                    label_selector=selector, limit=500, continue_=token))
            except StatusError as e:
                inv.errors["deletionrecords.kubegc.io"] = e.message
                return
            items = listed.get("items") or []
            read += len(items)
            for record in items:
                remember_record(inv.history, record)
            token = str(_mapping(listed.get("metadata")).get("continue") or "")
            if not token:
                break
