"""Durable "why was this deleted" (kubegc's own; no upstream counterpart): the garbage
collector's decisions and the other deleting controllers' DELETEs (pod GC, taint eviction)
written as ``kubegc.io/v1 DeletionRecord`` objects and pruned after their TTL (``sink``).

May import: ``kubegc.api``, ``kubegc.client``, ``kubegc.component`` and the records of
``kubegc.controllers.garbagecollector`` (whose decisions it stores).
"""

from kubegc.controllers.deletionrecords.sink import (
    DELETION_RECORDS,
    GC_DELETER,
    LABEL_ACTION,
    LABEL_DELETER,
    LABEL_KIND,
    LABEL_NAME,
    LABEL_NAMESPACE,
    LABEL_REASON,
    LABEL_UID,
    DeletionRecordSink,
    deletion_to_object,
    label_value,
    to_object,
)

__all__ = [
    "DELETION_RECORDS",
    "GC_DELETER",
    "LABEL_ACTION",
    "LABEL_DELETER",
    "LABEL_KIND",
    "LABEL_NAME",
    "LABEL_NAMESPACE",
    "LABEL_REASON",
    "LABEL_UID",
    "DeletionRecordSink",
    "deletion_to_object",
    "label_value",
    "to_object",
]
