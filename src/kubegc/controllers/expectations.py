"""Controller expectations (cf. ``ControllerExpectations`` and
``UIDTrackingControllerExpectations`` in pkg/controller/controller_utils.go).

What a controller expects its informer to observe (creations, deletions) before it may act
again for an owner, so a lagging informer never causes double creates or deletes.
Expectations expire after ``EXPECTATIONS_TIMEOUT`` seconds of the injected clock.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kubegc.api.clock import Clock

#: Seconds after which unmet expectations are ignored (upstream ``ExpectationsTimeout``).
EXPECTATIONS_TIMEOUT = 300.0


@dataclass
class ControlleeExpectations:
    """Creations/deletions a controller still waits to observe (cf. ``ControlleeExpectations``)."""

    add: int
    delete: int
    key: str
    timestamp: float  # clock.monotonic() when set

    def fulfilled(self) -> bool:
        return self.add <= 0 and self.delete <= 0


class ControllerExpectations:
    """Expectations by controller key (cf. ``ControllerExpectations``).

    Ownership: the controller's workers set them in a sync; its informer handlers lower
    them as objects are observed. One event loop, so no locking.
    """

    def __init__(self, clock: Clock, *, timeout: float = EXPECTATIONS_TIMEOUT) -> None:
        self.clock = clock
        self.timeout = timeout
        self._store: dict[str, ControlleeExpectations] = {}

    def get_expectations(self, key: str) -> ControlleeExpectations | None:
        return self._store.get(key)

    def satisfied_expectations(self, key: str) -> bool:
        """True if nothing is expected for ``key``, or it was all observed, or it expired."""
        exp = self._store.get(key)
        if exp is None:
            return True
        return exp.fulfilled() or self.clock.monotonic() - exp.timestamp > self.timeout

    def delete_expectations(self, key: str) -> None:
        self._store.pop(key, None)

    def set_expectations(self, key: str, *, add: int, delete: int) -> None:
        self._store[key] = ControlleeExpectations(add, delete, key, self.clock.monotonic())

    def expect_creations(self, key: str, adds: int) -> None:
        self.set_expectations(key, add=adds, delete=0)

    def expect_deletions(self, key: str, dels: int) -> None:
        self.set_expectations(key, add=0, delete=dels)

    def lower_expectations(self, key: str, *, add: int = 0, delete: int = 0) -> None:
        exp = self._store.get(key)
        if exp is not None:
            exp.add -= add
            exp.delete -= delete

    def raise_expectations(self, key: str, *, add: int = 0, delete: int = 0) -> None:
        exp = self._store.get(key)
        if exp is not None:
            exp.add += add
            exp.delete += delete

    def creation_observed(self, key: str) -> None:
        self.lower_expectations(key, add=1)

    def deletion_observed(self, key: str) -> None:
        self.lower_expectations(key, delete=1)


class UIDTrackingControllerExpectations:
    """Expectations that remember which pods they expect to see deleted, so a pod seen
    first terminating and then gone counts once (cf. ``UIDTrackingControllerExpectations``)."""

    def __init__(self, clock: Clock) -> None:
        self.expectations = ControllerExpectations(clock)
        self._uids: dict[str, set[str]] = {}

    def satisfied_expectations(self, key: str) -> bool:
        return self.expectations.satisfied_expectations(key)

    def expect_creations(self, key: str, adds: int) -> None:
        self.expectations.expect_creations(key, adds)

    def creation_observed(self, key: str) -> None:
        self.expectations.creation_observed(key)

    def lower_expectations(self, key: str, *, add: int = 0, delete: int = 0) -> None:
        self.expectations.lower_expectations(key, add=add, delete=delete)

    def expect_deletions(self, key: str, deleted_keys: Iterable[str]) -> None:
        """Expect the deletion of the pods ``deleted_keys`` ("ns/name") and nothing else."""
        self.set_expectations(key, add=0, deleted_keys=deleted_keys)

    def set_expectations(self, key: str, *, add: int, deleted_keys: Iterable[str]) -> None:
        """Expect ``add`` creations and the deletion of ``deleted_keys`` at once (setting
        them one after the other would forget the first)."""
        expected = set(deleted_keys)
        self._uids[key] = expected
        self.expectations.set_expectations(key, add=add, delete=len(expected))

    def deletion_observed(self, key: str, deleted_key: str) -> None:
        uids = self._uids.get(key)
        if uids is not None and deleted_key in uids:
            self.expectations.deletion_observed(key)
            uids.discard(deleted_key)

    def delete_expectations(self, key: str) -> None:
        self.expectations.delete_expectations(key)
        self._uids.pop(key, None)
