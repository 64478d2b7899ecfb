"""Server-side apply (``application/apply-patch+yaml``) and ``metadata.managedFields``.

Follows structured-merge-diff's ``Updater`` as kube-apiserver's field manager runs it:

``apply(live, config, manager=, force=, now=)``
  creates from ``config`` when ``live`` is None; otherwise merges ``config`` into ``live``
  (maps by key, associative lists by their keys, sets by value, everything else replaced),
  then removes the fields ``manager`` applied last time, left out now, and nobody else
  manages. A field another manager owns whose value the apply changes is a conflict: 409
  ``Apply failed with N conflict(s): ...`` with one ``FieldManagerConflict`` cause per field,
  unless ``force``, which moves those fields to ``manager``. Fields removed from the object
  leave every manager's set. The applier's entry (operation ``Apply``) then owns exactly the
  configuration's fields.

``record_update(old, new, manager=, now=)``
  the managedFields after a create/update/patch by a non-apply manager (``kubectl-create``,
  ``kubectl-client-side-apply``, controllers...): it owns what it added or changed, takes
  those fields from any other manager, and fields it removed leave every manager.

Entries are ``{manager, operation, apiVersion, time, fieldsType: FieldsV1, fieldsV1}`` (plus
``subresource``), one per manager/operation (and apiVersion for Update), ordered as upstream
sorts them; an entry whose set becomes empty is dropped.

Known simplifications (documented limitations):
  * no version conversion: every entry is read as if it used the object's apiVersion;
  * no ``before-first-apply`` entry for objects that predate managed fields;
  * new list items of a merge are appended (upstream interleaves by the config's order);
  * pruning removes a list item whole unless another manager owns something in it, and drops
    maps/lists it leaves empty;
  * map-typed vs struct-typed fields are told apart only through the patch metadata table,
    so Update sets carry a ``.`` for every newly added map of unknown type, and apply sets
    never own an entry of a map-of-maps as such;
  * a ``null`` in an apply configuration deletes the field (upstream's typed decoding has the
    same effect) and the applier owns it;
  * kinds without metadata (custom resources) get maps merged by key and every list atomic;
    a CRD's ``x-kubernetes-list-type`` markers are not read;
  * a client-supplied ``metadata.managedFields`` on update replaces the stored one; an empty
    list resets it (no entry is recorded for that write).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import orjson

from kubegc.api.clock import parse_time
from kubegc.api.errors import StatusCause, StatusError, bad_request
from kubegc.api.resources import split_api_version
from kubegc.api.types import Obj, clone
from kubegc.registry.fieldmanager import fieldpath as fp
from kubegc.registry.fieldmanager._errors import unknown_error
from kubegc.registry.fieldmanager._values import canonical
from kubegc.registry.fieldmanager.created_fields import created_fields
from kubegc.registry.fieldmanager.strategic_schema import BUILTIN_SCHEMA, FieldMeta, PatchSchema

APPLY = "Apply"
UPDATE = "Update"


@dataclass
class ManagedFieldsEntry:
    manager: str
    operation: str
    api_version: str
    time: str
    fields: set[fp.Path] = field(default_factory=set)
    subresource: str = ""
    #: the FieldsV1 document this entry was decoded from, and the set it stood for: an
    #: entry whose set did not change is written back as it was, not re-encoded
    decoded_from: tuple[dict[str, Any], frozenset[fp.Path]] | None = field(
        default=None, compare=False, repr=False)

    @property
    def identity(self) -> tuple[str, str, str, str]:
        """Upstream's manager identifier: appliers are one entry whatever their version."""
        version = self.api_version if self.operation != APPLY else ""
        return self.manager, self.operation, version, self.subresource

    def printable(self) -> str:
        """``printManager`` of the conflict message."""
        text = canonical(self.manager)
        if self.subresource:
            text += f" with subresource {canonical(self.subresource)}"
        if self.operation == UPDATE:
            text += f" using {self.api_version}"
        return text

    @classmethod
    def decode(cls, raw: dict[str, Any]) -> ManagedFieldsEntry:
        fields = raw.get("fieldsV1") if raw.get("fieldsType", "FieldsV1") == "FieldsV1" else None
        decoded = fp.decode_fields(fields)
        return cls(
            manager=str(raw.get("manager") or ""), operation=str(raw.get("operation") or ""),
            api_version=str(raw.get("apiVersion") or ""), time=str(raw.get("time") or ""),
            fields=decoded, subresource=str(raw.get("subresource") or ""),
            decoded_from=(fields, frozenset(decoded)) if isinstance(fields, dict) else None,
        )

    def encode(self) -> dict[str, Any]:
        out: dict[str, Any] = {"manager": self.manager, "operation": self.operation,
                               "apiVersion": self.api_version}
        if self.time:
            out["time"] = self.time
        out["fieldsType"] = "FieldsV1"
        if self.decoded_from is not None and self.decoded_from[1] == self.fields:
            out["fieldsV1"] = self.decoded_from[0]
        else:
            out["fieldsV1"] = fp.encode_fields(self.fields)
        if self.subresource:
            out["subresource"] = self.subresource
        return out


def decode_managed_fields(obj: Obj | None) -> list[ManagedFieldsEntry]:
    raw = ((obj or {}).get("metadata") or {}).get("managedFields") or []
    return [ManagedFieldsEntry.decode(e) for e in raw if isinstance(e, dict)]


def encode_managed_fields(entries: list[ManagedFieldsEntry]) -> list[dict[str, Any]]:
    """Non-empty entries, sorted as upstream: operation, time, manager, apiVersion, sub."""
    kept = [e for e in entries if e.fields]
    kept.sort(key=lambda e: (e.operation, _seconds(e.time), e.manager, e.api_version,
                             e.subresource))
    return [e.encode() for e in kept]


def _seconds(time: str) -> float:
    try:
        return parse_time(time).timestamp() if time else 0.0
    except ValueError:
        return 0.0


def apply(
    live: Obj | None, config: Obj, *, manager: str, force: bool, now: str,
    subresource: str = "", reset_fields: Collection[str] = (),
    schema: PatchSchema = BUILTIN_SCHEMA,
) -> Obj:
    """The object after ``manager`` applies ``config`` to ``live`` (None: create it).

    ``reset_fields`` are top-level fields (e.g. ``status``) the apply must not own.
    Neither argument is modified.
    """
    metadata = config.get("metadata")
    if isinstance(metadata, dict) and metadata.get("managedFields") is not None:
        raise bad_request("metadata.managedFields must be nil")
    root = _root(config, live, schema)
    base = _without_managed_fields(live or {})
    cfg = _without_managed_fields(config)
    try:
        applied = fp.applied_set(cfg, schema, root)
    except fp.FieldPathError as e:
        raise unknown_error(f"failed to create typed patch object ({_gvk(config)}): {e}") from None
    applied = {p for p in applied if p[0][2:] not in reset_fields}

    entries = decode_managed_fields(live)
    mine = ManagedFieldsEntry(manager, APPLY, str(config.get("apiVersion") or ""), now,
                              subresource=subresource)
    previous = next((e for e in entries if e.identity == mine.identity), None)
    others = [e for e in entries if e is not previous]
    others_fields: set[fp.Path] = set().union(*(e.fields for e in others))

    merged = _Merger(schema).merge(clone(base), cfg, FieldMeta(type=root))
    if previous is not None:
        _prune(merged, previous.fields - applied - others_fields, others_fields | applied,
               schema, root)
    changes = fp.compare(base, merged, schema, root)
    _take_ownership(others, changes, force=force)

    mine.fields = applied
    if previous is not None and canonical(base) == canonical(merged):
        mine.time = previous.time
    managed = encode_managed_fields([*others, mine])
    merged.setdefault("metadata", {})["managedFields"] = managed
    if not managed:
        del merged["metadata"]["managedFields"]
    return merged


def _take_ownership(others: list[ManagedFieldsEntry], changes: fp.Changes, *,
                    force: bool) -> None:
    changed = changes.added | changes.modified
    conflicts = [(e, p) for e in sorted(others, key=lambda e: e.identity)
                 for p in sorted(e.fields & changed, key=_path_order)]
    if conflicts and not force:
        raise conflict_error(conflicts)
    for entry in others:
        entry.fields -= changed
        entry.fields -= changes.removed


def _path_order(path: fp.Path) -> tuple[tuple[int, str], ...]:
    return tuple(fp.element_order(e) for e in path)


def conflict_error(conflicts: list[tuple[ManagedFieldsEntry, fp.Path]]) -> StatusError:
    """409 Conflict as ``internal.NewConflictError`` renders apply conflicts."""
    causes = [StatusCause("FieldManagerConflict", f"conflict with {e.printable()}",
                          fp.path_string(p)) for e, p in conflicts]
    if len(conflicts) == 1:
        entry, path = conflicts[0]
        message = (f"Apply failed with 1 conflict: conflict with {entry.printable()}: "
                   f"{fp.path_string(path)}")
    else:
        lines: list[str] = []
        last: tuple[str, str, str, str] | None = None
        for entry, path in conflicts:
            if entry.identity != last:
                lines.append(f"conflicts with {entry.printable()}:")
                last = entry.identity
            lines.append(f"- {fp.path_string(path)}")
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return StatusError(409, "Conflict", message, causes=causes)


def record_update(
    old: Obj | None, new: Obj, *, manager: str, operation: str = UPDATE, now: str,
    subresource: str = "", schema: PatchSchema = BUILTIN_SCHEMA, fragments: bool = False,
) -> list[dict[str, Any]]:
    """``new``'s managedFields after ``manager`` wrote it over ``old`` (None: a create).
    ``fragments``: a create's FieldsV1 may hold ``orjson.Fragment`` parts (for a caller
    that only encodes the result)."""
    if old is None and (new.get("metadata") or {}).get("managedFields") is None:
        # A plain create, the most frequent write: one walk straight to FieldsV1.
        fields = created_fields(new, schema, _root(new, None, schema), fragments=fragments)
        if not fields:
            return []
        entry: dict[str, Any] = {"manager": manager, "operation": operation,
                                 "apiVersion": str(new.get("apiVersion") or ""),
                                 "time": now, "fieldsType": "FieldsV1", "fieldsV1": fields}
        if not now:
            del entry["time"]
        if subresource:
            entry["subresource"] = subresource
        return [entry]
    raw = ((old or {}).get("metadata") or {}).get("managedFields")
    sent = (new.get("metadata") or {}).get("managedFields")
    if sent is not None and not _same_json(sent, raw):
        if not sent:
            return []
        raw = sent
    root = _root(new, old, schema)
    changes = fp.compare(_without_managed_fields(old or {}), _without_managed_fields(new),
                         schema, root)
    mine = ManagedFieldsEntry(manager, operation, str(new.get("apiVersion") or ""), now,
                              subresource=subresource)
    return _recorded([e for e in raw or [] if isinstance(e, dict)], changes, mine)


def _recorded(raw: list[dict[str, Any]], changes: fp.Changes,
              mine: ManagedFieldsEntry) -> list[dict[str, Any]]:
    """``encode_managed_fields`` of the entries after ``changes`` by ``mine``'s manager: it
    takes what it added or changed from the others, removed fields leave everyone.

    Works on the stored ``FieldsV1`` documents (``fp.edited_fields``) rather than decoded
    sets: an update touches a few paths of a few entries, and decoding and re-rendering
    every entry was most of its cost. The ``ManagedFieldsEntry`` values here only carry an
    entry's manager, operation, version, time and subresource; its set is the document.
    """
    taken = changes.added | changes.modified
    dropped = taken | changes.removed
    entries: list[tuple[ManagedFieldsEntry, Any]] = []
    own: tuple[ManagedFieldsEntry, Any] | None = None
    for e in raw:
        entry = ManagedFieldsEntry(
            manager=str(e.get("manager") or ""), operation=str(e.get("operation") or ""),
            api_version=str(e.get("apiVersion") or ""), time=str(e.get("time") or ""),
            subresource=str(e.get("subresource") or ""))
        fields = e.get("fieldsV1") if e.get("fieldsType", "FieldsV1") == "FieldsV1" else None
        if own is None and entry.identity == mine.identity:
            own = (entry, fields)
            continue
        entries.append((entry, fp.edited_fields(fields, dropped, frozenset())))
    if own is not None:
        entry, fields = own
        if taken:
            entry.time = mine.time
        entries.append((entry, fp.edited_fields(fields, changes.removed, taken)))
    elif taken:
        entries.append((mine, fp.encode_fields(taken)))
    kept = [(e, f) for e, f in entries if fp.has_members(f)]
    kept.sort(key=lambda pair: _sort_key(pair[0]))
    return [_encoded(e, f) for e, f in kept]


def _same_json(a: Any, b: Any) -> bool:
    """``canonical(a) == canonical(b)``, without sorting when the two are the same text."""
    try:
        if orjson.dumps(a) == orjson.dumps(b):
            return True
    except TypeError:
        pass
    return canonical(a) == canonical(b)


def _sort_key(e: ManagedFieldsEntry) -> tuple[str, float, str, str, str]:
    return e.operation, _seconds(e.time), e.manager, e.api_version, e.subresource


def _encoded(entry: ManagedFieldsEntry, fields_v1: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"manager": entry.manager, "operation": entry.operation,
                           "apiVersion": entry.api_version}
    if entry.time:
        out["time"] = entry.time
    out["fieldsType"] = "FieldsV1"
    out["fieldsV1"] = fields_v1
    if entry.subresource:
        out["subresource"] = entry.subresource
    return out


def _root(obj: Obj, fallback: Obj | None, schema: PatchSchema) -> str:
    source = obj if obj.get("kind") else (fallback or {})
    group, _ = split_api_version(str(source.get("apiVersion") or ""))
    return schema.root(group, str(source.get("kind") or "")) or ""


def _gvk(obj: Obj) -> str:
    group, version = split_api_version(str(obj.get("apiVersion") or ""))
    return f"{group}/{version}, Kind={obj.get('kind') or ''}"


def _without_managed_fields(obj: Obj) -> Obj:
    """``obj`` minus ``metadata.managedFields``; a shallow copy (callers only read it, or
    merge into it through ``_Merger`` which copies what it keeps)."""
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict) or "managedFields" not in metadata:
        return obj
    return {**obj, "metadata": {k: v for k, v in metadata.items() if k != "managedFields"}}


@dataclass
class _Merger:
    """structured-merge-diff ``Merge``: the configuration wins wherever it sets a value."""

    schema: PatchSchema

    def merge(self, live: dict[str, Any], config: dict[str, Any],
              meta: FieldMeta) -> dict[str, Any]:
        for key, value in config.items():
            child = self.schema.field(meta.type, key)
            current = live.get(key)
            if value is None:
                live.pop(key, None)
            elif isinstance(current, dict) and isinstance(value, dict) and not child.atomic:
                live[key] = self.merge(current, value, child)
            elif (isinstance(current, list) and isinstance(value, list)
                  and fp.list_mode(child) != "atomic"):
                live[key] = self.merge_list(current, value, child)
            else:
                live[key] = clone(value)
        return live

    def merge_list(self, live: list[Any], config: list[Any], meta: FieldMeta) -> list[Any]:
        mode = fp.list_mode(meta)
        index: dict[str, int] = {}
        for position, item in enumerate(live):
            try:
                index.setdefault(fp.item_element(item, meta, mode), position)
            except fp.FieldPathError:
                continue
        for item in config:
            at = index.get(fp.item_element(item, meta, mode))
            if at is None:
                live.append(clone(item))
            elif mode == "map":
                live[at] = self.merge(live[at], item, FieldMeta(type=meta.type))
        return live


def _prune(obj: Obj, doomed: set[fp.Path], owned: set[fp.Path], schema: PatchSchema,
           root: str) -> None:
    """Remove ``doomed`` fields unless a field below them is ``owned``; drop emptied parents.

    Shallow paths go first: a list item must be found by its key fields before they go.
    """
    has_owned_child = {p[:i] for p in owned for i in range(1, len(p))}
    for path in sorted(doomed, key=len):
        if path in has_owned_child:
            continue
        if _remove(obj, path, schema, root):
            _drop_empty_parents(obj, path, owned | has_owned_child, schema, root)


def _remove(obj: Obj, path: fp.Path, schema: PatchSchema, root: str) -> bool:
    slot = fp.locate(obj, path, schema, root)
    if slot is None:
        return False
    slot.delete()
    return True


def _drop_empty_parents(obj: Obj, path: fp.Path, keep: set[fp.Path], schema: PatchSchema,
                        root: str) -> None:
    for depth in range(len(path) - 1, 0, -1):
        parent = path[:depth]
        slot = fp.locate(obj, parent, schema, root)
        if slot is None or parent in keep or slot.get() not in ({}, []):
            return
        slot.delete()
