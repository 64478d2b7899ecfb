"""Creates of many objects of one resource at once, for in-process writers that make many
small objects and read none of the answers (the DeletionRecord sink: issue 27, where a
record's create cost more than the deletion it records).

Each object goes through the generic Store's create exactly as a POST would (kind,
defaults, field manager, admission, validation, encoding: ``Store.create_stored`` as a dry
run), then all of them are written in ONE ``KV.write_batch`` (SQLite: one transaction),
each with its own revision and watch event. What this saves per object is the per-call
work around the create: the client's copy of the object (the caller hands its objects
over), the decoded answer, a task and a commit's share. An object the batch cannot serve
the same way (no name: a generateName retries; a resourceVersion set: refused after the
dry run; a storage that observes its writes; admission webhooks, which see dry-run
requests differently; a dry run) is created by the storage's own ``create``.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from kubegc.api import errors
from kubegc.api.types import Obj
from kubegc.registry.generic.rest import WriteOptions
from kubegc.registry.generic.store import Store
from kubegc.registry.generic.target import Created, Target
from kubegc.storage import BatchWrite, KeyExistsError, WriteKind


class ObjectCreater(Protocol):
    """A storage's own create of one object (``StoredResource.create``)."""

    async def create(self, t: Target, obj: Obj, options: WriteOptions) -> Created | Obj:
        ...


#: The outcome of one object of a batch: None when created, else the error its own
#: create would have answered.
CreateOutcome = errors.StatusError | None


async def create_batch(store: Store, creater: ObjectCreater, t: Target, objs: list[Obj],
                       options: WriteOptions, *, batched: bool = True
                       ) -> list[CreateOutcome]:
    """Create ``objs`` (edited in place) under ``t``; one outcome per object, in order.
    ``batched`` False: each by ``creater.create``."""
    outcomes: list[CreateOutcome] = [None] * len(objs)
    batched = batched and not options.dry_run and not store.admission.webhooks_active()
    each: list[int] = []
    writes: list[BatchWrite] = []
    written: list[tuple[int, str]] = []
    for i, obj in enumerate(objs):
        meta = obj.get("metadata")
        if not batched or not isinstance(meta, dict) or not meta.get("name") or (
                meta.get("resourceVersion")):
            each.append(i)
            continue
        try:
            checked = await store.create_stored(
                t, obj, dry_run=True, field_manager=options.field_manager,
                field_validation=options.field_validation, warnings=options.warnings)
        except errors.StatusError as exc:
            outcomes[i] = exc
            continue
        name = obj["metadata"]["name"]
        writes.append(BatchWrite(WriteKind.CREATE, t.key(name), checked.value))
        written.append((i, name))
    for (i, name), outcome in zip(written, await store.kv.write_batch(writes), strict=True):
        if isinstance(outcome, KeyExistsError):
            outcomes[i] = await store.already_exists(t, name)
        elif not isinstance(outcome, int):
            raise outcome
    results = await asyncio.gather(*(creater.create(t, objs[i], options) for i in each),
                                   return_exceptions=True)
    for i, result in zip(each, results, strict=True):
        if isinstance(result, errors.StatusError):
            outcomes[i] = result
        elif isinstance(result, BaseException):
            raise result
    return outcomes


__all__ = ["CreateOutcome", "ObjectCreater", "create_batch"]
