"""The election record and the Lease it is kept in (cf. client-go
tools/leaderelection/resourcelock: ``LeaderElectionRecord``, ``LeaseLock``,
``LeaseSpecToLeaderElectionRecord``, ``LeaderElectionRecordToLeaseSpec``).

``LeaseLock`` remembers the Lease it last read or wrote, and ``update`` writes over exactly
that one: the update carries its ``resourceVersion``, so it fails with a 409 Conflict when
anyone wrote the Lease in between (compare-and-swap). That precondition is what makes two
candidates unable to both take the lock.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.interface import Client

LEASES = GroupVersionResource("coordination.k8s.io", "v1", "leases")


@dataclass(frozen=True)
class LeaderElectionRecord:
    """What the lock holds (upstream's JSON field names in ``to_lease_spec``); times are
    the MicroTime strings written, never compared across hosts."""

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: str | None = None
    renew_time: str | None = None
    leader_transitions: int = 0


def _int(value: object) -> int:
    """An integer field of a stored Lease; anything else (a Lease written below the API's
    validation) reads as unset."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def lease_spec_to_leader_election_record(spec: object) -> LeaderElectionRecord:
    if not isinstance(spec, dict):
        return LeaderElectionRecord()
    return LeaderElectionRecord(
        holder_identity=_str(spec.get("holderIdentity")) or "",
        lease_duration_seconds=_int(spec.get("leaseDurationSeconds")),
        acquire_time=_str(spec.get("acquireTime")),
        renew_time=_str(spec.get("renewTime")),
        leader_transitions=_int(spec.get("leaseTransitions")))


def leader_election_record_to_lease_spec(record: LeaderElectionRecord) -> Obj:
    spec: Obj = {"holderIdentity": record.holder_identity,
                 "leaseDurationSeconds": record.lease_duration_seconds,
                 "leaseTransitions": record.leader_transitions}
    if record.acquire_time is not None:
        spec["acquireTime"] = record.acquire_time
    if record.renew_time is not None:
        spec["renewTime"] = record.renew_time
    return spec


class LeaseLock:
    """A ``coordination.k8s.io/v1`` Lease as the lock.

    Ownership: one ``LeaderElector`` drives it; ``lease`` is the Lease as last read or
    written (None before the first ``get``/``create``).
    """

    def __init__(self, client: Client, *, namespace: str, name: str, identity: str) -> None:
        if not identity:
            raise ValueError("Lock identity is empty")
        self.client = client
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.lease: Obj | None = None

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    async def get(self) -> tuple[LeaderElectionRecord, bytes]:
        """The record and its raw form (what tells one observation from the next).
        Raises ``StatusError`` (NotFound when there is no Lease yet)."""
        self.lease = await self.client.get(LEASES, self.name, namespace=self.namespace)
        spec = self.lease.get("spec")
        raw = orjson.dumps(spec if isinstance(spec, dict) else None,
                           option=orjson.OPT_SORT_KEYS)
        return lease_spec_to_leader_election_record(spec), raw

    async def create(self, record: LeaderElectionRecord) -> None:
        """Create the Lease (fails with AlreadyExists when someone was quicker)."""
        self.lease = await self.client.create(LEASES, {
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": leader_election_record_to_lease_spec(record)}, namespace=self.namespace)

    async def update(self, record: LeaderElectionRecord) -> None:
        """Write ``record`` over the Lease last seen, with its resourceVersion as the
        precondition (409 Conflict if it changed since)."""
        if self.lease is None:
            raise RuntimeError("lease not initialized, call get or create first")
        updated = dict(self.lease, spec=leader_election_record_to_lease_spec(record))
        self.lease = await self.client.update(LEASES, updated, namespace=self.namespace)
