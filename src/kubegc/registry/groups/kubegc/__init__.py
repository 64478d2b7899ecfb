"""kubegc's own group, ``kubegc.io``: DeletionRecords, what the garbage collector did and
why, kept longer than Events live (written by the deletionrecords controller and by the
eviction subresource, ``groups.core.eviction``). The group's
metadata is validated as apimachinery's ValidateObjectMeta alone, like CRDs'."""

from __future__ import annotations

from kubegc.api.resources import builtin
from kubegc.registry import printers
from kubegc.registry.generic.rest import Resource
from kubegc.registry.generic.standard import StorageContext, stored
from kubegc.registry.generic.strategy import Strategy

DELETION_RECORDS = builtin("kubegc.io", "deletionrecords")
STRATEGY = Strategy(tracks_generation=False, core_object_meta=False)


def resources(ctx: StorageContext) -> list[Resource]:
    return [stored(ctx, DELETION_RECORDS, STRATEGY, table=printers.DELETION_RECORD)]
