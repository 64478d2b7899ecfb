"""Errors of the garbage collector (cf. errors.go and the marker errors of garbagecollector.go).

Exception tree:
  GCError
    RESTMappingError                          -- apiVersion/kind not served (yet); retried
    NamespacedOwnerOfClusterScopedObjectError -- invalid reference; never retried
    OrphanDependentsError                     -- some dependents could not be orphaned

API failures arrive as ``kubegc.api.errors.StatusError`` from the client and are not
wrapped. Upstream's ``enqueuedVirtualDeleteEventErr`` is not an exception here: it is the
``DeleteItemOutcome.ENQUEUED_VIRTUAL_DELETE`` return value.
"""

from __future__ import annotations


class GCError(Exception):
    """Base class of garbage collector errors."""


class RESTMappingError(GCError):
    """The RESTMapper cannot map ``apiVersion``/``kind`` to a served resource.

    Either a custom type not discovered yet (transient: the next sync fixes it) or an
    invalid or no-longer-served version; the two cannot be told apart, so the item is
    retried with backoff and never treated as absent (cf. ``restMappingError``).
    """

    def __init__(self, kind: str, api_version: str) -> None:
        self.kind = kind
        self.api_version = api_version
        super().__init__(f"unable to get REST mapping for {api_version}/{kind}.")

    def message(self) -> str:
        """The longer, actionable text of upstream's ``restMappingError.Message``."""
        version_kind = f"{self.api_version}/{self.kind}"
        return (
            f"unable to get REST mapping for {version_kind}.  If {version_kind} is an invalid "
            "resource, then you should manually remove the field from the object's "
            "ownerReferences."
        )


class NamespacedOwnerOfClusterScopedObjectError(GCError):
    """A cluster-scoped object refers to a namespaced owner kind (cf.
    ``namespacedOwnerOfClusterScopedObjectErr``): never retried."""

    def __init__(self) -> None:
        super().__init__("cluster-scoped objects cannot refer to namespaced owners")


class OrphanDependentsError(GCError):
    """Patching some dependents of an orphaning owner failed (the owner is retried)."""

    def __init__(self, owner: object, errors: list[str]) -> None:
        self.errors = errors
        super().__init__(
            f"failed to orphan dependents of owner {owner}, got errors: [{', '.join(errors)}]"
        )
