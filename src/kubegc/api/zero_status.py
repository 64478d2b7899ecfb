"""The status fields of the workload kinds that upstream's API types encode even at zero
(no ``omitempty``; k8s.io/api ``apps/v1`` and ``core/v1`` types.go). A typed
kube-apiserver writes them in every answer — a new StatefulSet reads
``{replicas: 0, availableReplicas: 0}`` before any controller ran — so clients read them
unconditionally (kr8s waits on ``{.status.availableReplicas}``).

One table for both sides: the registry starts a created object's status with these zeros
and keeps them on every write; the controllers keep them in the status they write.
"""

from __future__ import annotations

from kubegc.api.types import Obj

#: (group, resource) → the non-omitempty status fields, in the Go struct's order; none: a
#: status struct whose fields are all omitempty, which still reads ``{}``
ZERO_STATUS_FIELDS: dict[tuple[str, str], tuple[str, ...]] = {
    ("apps", "deployments"): (),
    ("batch", "jobs"): (),
    ("batch", "cronjobs"): (),
    ("apps", "statefulsets"): ("replicas", "availableReplicas"),
    ("apps", "replicasets"): ("replicas",),
    ("", "replicationcontrollers"): ("replicas",),
    ("apps", "daemonsets"): ("currentNumberScheduled", "numberMisscheduled",
                             "desiredNumberScheduled", "numberReady"),
}


def zero_status_fields(group: str, resource: str) -> tuple[str, ...]:
    return ZERO_STATUS_FIELDS.get((group, resource), ())


def has_zero_status(group: str, resource: str) -> bool:
    return (group, resource) in ZERO_STATUS_FIELDS


def zero_status(fields: tuple[str, ...]) -> dict[str, int]:
    """The status struct at its zero value, as Go encodes it (``{}`` without fields)."""
    return dict.fromkeys(fields, 0)


def fill_zero_status(obj: Obj, fields: tuple[str, ...]) -> None:
    """Give ``obj`` the zero fields its status lacks (as decoding into the typed struct
    and encoding it again would)."""
    status = obj.get("status")
    if status is None:
        status = obj["status"] = {}
    if isinstance(status, dict):
        for name in fields:
            if status.get(name) is None:
                status[name] = 0
