"""The generic Store (cf. ``apiserver/pkg/registry/generic/registry/store.go``):
create / get / update with Kubernetes metadata semantics over a ``KV``, and
``guaranteed_update``, the optimistic read-modify-write every other verb builds on.
Deletion lives in ``deletion.py``, patch in ``patching.py``, list in ``listing.py``, watch
in ``watching.py``; the steps of a create before its write in ``creating.py``, metadata
checks in ``checks.py``, the rules of an update in ``update_rules.py``. The admission
plugins that run are handed in (``Admission``, upstream's admission chain); per-resource
rules come with the ``Target`` (its ``Strategy``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from kubegc.api import errors
from kubegc.api.clock import Clock, format_time
from kubegc.api.limits import MAX_STORED_BYTES, REQUEST_TOO_LARGE
from kubegc.api.meta import is_being_deleted
from kubegc.api.types import Obj, clone
from kubegc.registry.fieldmanager import record_update
from kubegc.registry.generic.attributes import (
    NoWebhooks,
    WebhookChain,
    admit_by_webhooks,
    create_attributes,
    update_attributes,
)
from kubegc.registry.generic.checks import (
    check_fields,
    validate_object_meta,
    validate_object_meta_update,
)
from kubegc.registry.generic.creating import (
    MAX_GENERATE_ATTEMPTS,
    check_kind,
    generate_name,
    prepare_meta_for_create,
    validate_create,
)
from kubegc.registry.generic.decoding import check_decodes
from kubegc.registry.generic.stale import read_revision
from kubegc.registry.generic.strategy import Strategy
from kubegc.registry.generic.target import (
    Created,
    DeleteAs,
    Target,
    decode,
    encode,
    resource_version_set,
    same_content,
    same_object,
    with_resource_version,
)
from kubegc.registry.generic.update_rules import (
    carry_over_meta,
    should_delete_during_update,
    status_update,
)
from kubegc.storage import (
    KV,
    CompactedError,
    ConflictError,
    KeyExistsError,
    KeyNotFoundError,
    KeyValue,
)

UpdateFn = Callable[[Obj], Awaitable[Any]]
#: A copy of the current object (decoded from its stored row) for an ``UpdateFn`` to edit.
EditableCopy = Callable[[Obj, KeyValue], Obj]


class AdmissionChain(WebhookChain, Protocol):
    """The admission plugins that run, as the store's write paths call them (upstream's
    ``admission.Interface``: mutating, then validating, admission)."""

    def admit(self, t: Target, obj: Obj, *, old: Obj | None = None) -> None:
        """Mutating admission of a create (``old`` None) or a main-resource update of
        ``old`` (in place)."""
        ...

    async def validate_create(self, t: Target, obj: Obj) -> None:
        """Validating admission of a create (raises the StatusError that refuses it)."""
        ...

    def validate_update(self, t: Target, obj: Obj, old: Obj, *, subresource: str) -> None:
        """Validating admission of an update (raises the StatusError that refuses it)."""
        ...


class NoAdmission(NoWebhooks):
    """No admission plugin runs."""

    def admit(self, t: Target, obj: Obj, *, old: Obj | None = None) -> None:
        return None

    async def validate_create(self, t: Target, obj: Obj) -> None:
        return None

    def validate_update(self, t: Target, obj: Obj, old: Obj, *, subresource: str) -> None:
        return None


class Store:
    """CRUD with Kubernetes metadata semantics over one ``KV``, for the resource each call's
    ``Target`` addresses (its ``Strategy`` says what is particular to it).

    Concurrency: any number of requests run concurrently on the loop; read-modify-write is
    optimistic (``guaranteed_update`` retries on storage conflicts), as upstream.
    """

    def __init__(self, kv: KV, *, clock: Clock, admission: AdmissionChain | None = None,
                 ) -> None:
        self.kv = kv
        self.clock = clock
        #: the admission plugins that run (``--enable-admission-plugins``)
        self.admission: AdmissionChain = admission or NoAdmission()

    # -- reads -----------------------------------------------------------------------------

    async def get(self, t: Target, name: str) -> Obj:
        kv = await self._read(t.key(name))
        if kv is None:
            raise errors.not_found(t.gr, name)
        return self.present(t, decode(kv))

    async def _read(self, key: str) -> KeyValue | None:
        """The key's current value, or its value at ``stale.read_revision`` when a fault
        holds the request (a compacted revision reads the current value)."""
        revision = read_revision.get()
        if not revision:
            return await self.kv.get(key)
        try:
            page = await self.kv.range(key, end=key + "\x00", revision=revision, limit=1)
        except CompactedError:
            return await self.kv.get(key)
        return page.kvs[0] if page.kvs else None

    async def get_encoded(self, t: Target, name: str) -> bytes:
        """The object as stored, encoded, for a ``t`` that is ``direct`` (no decoding)."""
        kv = await self._read(t.key(name))
        if kv is None:
            raise errors.not_found(t.gr, name)
        return with_resource_version(kv.value, kv.mod_revision)

    def present(self, t: Target, obj: Obj) -> Obj:
        """A stored object as served at ``t.version``."""
        return t.from_storage(obj)

    # -- create ----------------------------------------------------------------------------

    async def create(
        self, t: Target, obj: Obj, *, dry_run: bool = False, field_manager: str = "",
        field_validation: str = "", warnings: list[str] | None = None,
    ) -> Obj:
        """Create ``obj`` and return it as stored and served. ``obj`` is completed in place
        on the way (its managedFields may hold pre-encoded parts), so callers pass an object
        of their own (LocalClient copies the caller's; HTTP decodes a fresh one) and use the
        returned one, decoded afresh from what was written."""
        created = await self.create_stored(t, obj, dry_run=dry_run, field_manager=field_manager,
                                           field_validation=field_validation, warnings=warnings)
        return created.object()

    async def create_stored(
        self, t: Target, obj: Obj, *, dry_run: bool = False, field_manager: str = "",
        field_validation: str = "", warnings: list[str] | None = None,
    ) -> Created:
        """``create``, also returning what was written (HTTP answers with those bytes)."""
        strategy = t.strategy
        obj = check_kind(t, obj)
        if field_validation:
            check_decodes(t, obj)
        check_fields(t, obj, field_validation, warnings)
        meta = prepare_meta_for_create(t, obj, self.clock.now())
        rv_set = resource_version_set(t, meta.pop("resourceVersion", None))
        strategy.defaulter(obj)
        if field_manager:
            # As upstream's create handler: what the request set, defaults included, before
            # PrepareForCreate (a Pod's status, a Namespace's finalizer are nobody's).
            self._manage_fields(None, obj, field_manager, "", fragments=True)
        self.admission.admit(t, obj)  # mutating admission: after the field manager
        webhooks = self.admission.webhooks_active()
        if webhooks:
            obj = await admit_by_webhooks(self.admission, create_attributes(
                t, obj, dry_run=dry_run, field_manager=field_manager), strategy.defaulter) or obj
            meta = obj["metadata"]
        self._check_write(t, strategy, "", obj, None)
        # a name is made up only from a generateName (BeforeCreate); none at all is invalid
        generated = not meta.get("name") and bool(meta.get("generateName"))
        for _ in range(MAX_GENERATE_ATTEMPTS if generated else 1):
            if generated:
                meta["name"] = generate_name(str(meta.get("generateName") or ""))
            validate_create(t, strategy, obj)
            await self.admission.validate_create(t, obj)
            if webhooks:
                await self.admission.validate_webhooks(create_attributes(
                    t, obj, dry_run=dry_run, field_manager=field_manager))
            value = checked_size(t, encode(t.to_storage(obj)))
            if dry_run:
                return Created(t, value, 0)
            if rv_set:  # etcd3 store.Create: after validation and admission, not dry-run
                raise errors.resource_version_set_on_create()
            try:
                revision = await self.kv.create(t.key(meta["name"]), value)
            except KeyExistsError:
                if generated:
                    continue
                raise await self.already_exists(t, meta["name"]) from None
            return Created(t, value, revision)
        raise errors.server_timeout(
            f"The POST operation against {t.gr} could not be completed at this time, "
            "please try again.")

    async def already_exists(self, t: Target, name: str) -> errors.StatusError:
        """The AlreadyExists a create of ``name`` answers (its message says whether the
        existing object is being deleted)."""
        existing = await self.kv.get(t.key(name))
        being_deleted = existing is not None and is_being_deleted(decode(existing))
        return errors.already_exists(t.gr, name, being_deleted=being_deleted)

    # -- update ----------------------------------------------------------------------------

    async def guaranteed_update(
        self, t: Target, name: str, update: UpdateFn, *, dry_run: bool = False,
        create: Callable[[], Awaitable[Obj]] | None = None, copy: EditableCopy | None = None,
    ) -> tuple[Obj, bool]:
        """Read, apply ``update``, write with CAS, retry on conflict.

        ``update(current)`` returns the new stored object, the same object for a no-op, or
        ``DELETE``. When the key is absent, ``create`` (if given) runs instead. ``copy``
        makes the copy ``update`` edits from the current object and its stored row
        (default: decoded afresh, which any update may edit anywhere). Returns (object as
        served, whether the object was removed)."""
        key = t.key(name)
        while True:
            kv = await self.kv.get(key)
            if kv is None:
                if create is not None:
                    return await create(), False
                raise errors.not_found(t.gr, name)
            current = decode(kv, shared=False)  # both live as long as the request
            # a second copy to edit: decoding again is cheaper than clone()
            new = await update(decode(kv, shared=False) if copy is None else copy(current, kv))
            try:
                if isinstance(new, DeleteAs):
                    if not dry_run:
                        await self.kv.delete(key, expected_mod_revision=kv.mod_revision)
                    return self.present(t, new.obj if new.obj is not None else current), True
                if same_object(new, current):
                    return self.present(t, current), False
                stored = t.to_storage(new)
                if dry_run:
                    return self.present(t, stored), False
                revision = await self.kv.update(key, checked_size(t, encode(stored)),
                                                expected_mod_revision=kv.mod_revision)
            except (ConflictError, KeyNotFoundError):
                continue
            stored["metadata"]["resourceVersion"] = str(revision)
            return self.present(t, stored), False

    async def update(
        self, t: Target, name: str, obj: Obj, *, subresource: str = "", dry_run: bool = False,
        field_manager: str = "", field_validation: str = "", warnings: list[str] | None = None,
    ) -> tuple[Obj, bool]:
        """PUT. Returns (object, created)."""
        strategy = t.strategy
        obj = check_kind(t, obj)
        if field_validation:
            check_decodes(t, obj)
        check_fields(t, obj, field_validation, warnings)
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            raise errors.bad_request("metadata must be an object")
        if meta.get("name") not in (None, name):
            raise errors.bad_request(
                "the name of the object "
                f"({meta.get('name')}) does not match the name on the URL ({name})")
        meta["name"] = name
        if t.info.namespaced:
            if meta.get("namespace") not in (None, "", t.namespace):
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on "
                    "the request")
            meta["namespace"] = t.namespace
        created = False

        async def create() -> Obj:
            nonlocal created
            if not strategy.allow_create_on_update or subresource:
                raise errors.not_found(t.gr, name)
            created = True
            fresh = clone(obj)
            fresh["metadata"].pop("resourceVersion", None)
            return await self.create(t, fresh, dry_run=dry_run, field_manager=field_manager)

        async def apply(current: Obj) -> Any:
            return await self.prepare_update(t, strategy, current, clone(obj),
                                             subresource=subresource,
                                             field_manager=field_manager, dry_run=dry_run)

        result, _ = await self.guaranteed_update(t, name, apply, dry_run=dry_run,
                                                       create=create)
        return result, created

    def _manage_fields(self, old: Obj | None, new: Obj, manager: str, subresource: str, *,
                       fragments: bool = False) -> None:
        """Record ``manager``'s ownership of what it wrote (an "Update" operation);
        ``fragments``: ``new`` is only encoded afterwards (see ``record_update``)."""
        entries = record_update(old, new, manager=manager, now=format_time(self.clock.now()),
                                subresource=subresource, fragments=fragments)
        if entries:
            new["metadata"]["managedFields"] = entries
        else:
            new["metadata"].pop("managedFields", None)

    async def prepare_update(
        self, t: Target, strategy: Strategy, old: Obj, new: Obj, *, subresource: str = "",
        check_resource_version: bool = True, field_manager: str = "", dry_run: bool = False,
    ) -> Any:
        """BeforeUpdate + strategy + admission + validation; returns the object to store or
        ``DELETE``."""
        old_meta, new_meta = old["metadata"], new.setdefault("metadata", {})
        rv = new_meta.get("resourceVersion")
        if check_resource_version and rv and rv != old_meta.get("resourceVersion"):
            raise errors.conflict(t.gr, old_meta["name"], errors.OBJECT_MODIFIED)
        if new_meta.get("uid") and new_meta["uid"] != old_meta["uid"]:
            raise errors.conflict(
                t.gr, old_meta["name"],
                f"Precondition failed: UID in precondition: {new_meta['uid']}, UID in object "
                f"meta: {old_meta['uid']}")
        new = t.to_storage(new)
        new_meta = new["metadata"]
        if subresource in ("status", "approval"):  # approval: a CSR's conditions
            new = status_update(old, new)
            new_meta = new["metadata"]
        elif strategy.status_subresource and subresource == "":
            for key in strategy.status_fields:
                if key in old:
                    new[key] = clone(old[key])
                else:
                    new.pop(key, None)
        carry_over_meta(old_meta, new_meta)
        strategy.defaulter(new)
        if subresource == "":
            self.admission.admit(t, new, old=old)
        webhooks = self.admission.webhooks_active()
        if webhooks:
            new = await admit_by_webhooks(self.admission, update_attributes(
                t, new, old, subresource=subresource, dry_run=dry_run,
                field_manager=field_manager), strategy.defaulter) or new
            new_meta = new["metadata"]
        if subresource == "":
            self._check_write(t, strategy, old_meta["name"], new, old)
        if strategy.tracks_generation and old_meta.get("generation") and strategy.spec_changed(
                old, new):
            new_meta["generation"] = int(old_meta["generation"]) + 1
        if subresource == "status" and strategy.validate_status is not None:
            schema_causes = strategy.validate_status(new, old)
        elif strategy.validate_update is not None:
            # the stored object as kube-apiserver reads it: defaulted (an object restored or
            # written before a default existed compares as upstream's would)
            defaulted = clone(old)
            strategy.defaulter(defaulted)
            schema_causes = strategy.validate_update(new, defaulted)
        else:
            schema_causes = strategy.validate(new)
        causes = validate_object_meta(t, strategy, new) + schema_causes
        causes += validate_object_meta_update(old_meta, new_meta)
        if causes:
            raise errors.invalid(t.info.kind, t.info.group, old_meta["name"], causes)
        self.admission.validate_update(t, new, old, subresource=subresource)
        if webhooks:
            await self.admission.validate_webhooks(update_attributes(
                t, new, old, subresource=subresource, dry_run=dry_run,
                field_manager=field_manager))
        if should_delete_during_update(strategy, old, new):
            new["metadata"]["resourceVersion"] = old_meta["resourceVersion"]
            return DeleteAs(new)
        # As upstream's field manager: managedFields sent with the request replace the live
        # ones (``[{}]`` clears them); none sent keeps the live ones.
        sent = new_meta.get("managedFields")
        if field_manager and (not same_content(old, new) or (
                sent is not None and sent != old_meta.get("managedFields"))):
            self._manage_fields(old, new, field_manager, subresource)
        elif sent is None and "managedFields" in old_meta:
            new_meta["managedFields"] = old_meta["managedFields"]
        return new

    def _check_write(self, t: Target, strategy: Strategy, name: str, new: Obj,
                     old: Obj | None) -> None:
        if strategy.check_write is not None:
            strategy.check_write(t.namespace, name, new, old)


def checked_size(t: Target, value: bytes) -> bytes:
    """``value`` when etcd would store it: at most its default ``--max-request-bytes``
    (``api.limits.MAX_STORED_BYTES``) on every backend. etcd answers ``request is too large``,
    which kube-apiserver passes on as a 500 (kubernetes/kubernetes#112152); kubegc answers
    413 with etcd's text."""
    if len(value) + len(t.key("")) > MAX_STORED_BYTES:
        raise errors.request_entity_too_large(REQUEST_TOO_LARGE)
    return value
