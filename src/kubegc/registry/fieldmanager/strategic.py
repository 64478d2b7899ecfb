"""Strategic merge patch (``application/strategic-merge-patch+json``) for built-in kinds.

Mirrors ``StrategicMergeMapPatch`` of apimachinery's ``pkg/util/strategicpatch`` (server
side: parallel lists merged, unmatched nulls ignored), driven by the patch metadata in
``strategic_schema``:

* maps merge recursively; ``null`` deletes a key; fields tagged ``replace`` are replaced;
* lists tagged ``merge`` with a merge key merge item by item (items matched by the key);
  ``merge`` lists of scalars are merged as ordered sets; other lists are replaced;
* directives: ``$patch: replace | delete`` in a map (``delete`` leaves ``{}``), ``$patch:
  delete`` (all items with that key) and ``$patch: replace`` (the whole list) inside a
  merged list, ``$retainKeys``, ``$setElementOrder/<field>`` and
  ``$deleteFromPrimitiveList/<field>``; ``$patch: merge`` is rejected, as upstream does;
* item order follows upstream (see ``_ordering``): without ``$setElementOrder`` new items
  come first.

Errors carry the API server's status: malformed directives → 400 BadRequest with
mergepatch's message ("invalid patch format of retainKeys", ...); lists of lists → 422
Invalid (generic message); anything else upstream returns as a plain error (missing merge
key, mismatching ``$setElementOrder``, ...) → 500 with reason ``""`` and the Go message.

Deliberate differences: fields unknown to the table are merged as untagged fields instead of
failing; directive keys and ``null`` members left inside values stored as-is by upstream are
dropped (upstream's typed decoding drops them).
"""

from __future__ import annotations

from typing import Any

from kubegc.api.errors import StatusError, bad_request, unsupported_media_type
from kubegc.api.types import Obj, clone
from kubegc.registry.fieldmanager import _ordering as order
from kubegc.registry.fieldmanager._errors import (
    bad_arg_type,
    go_repr,
    go_s,
    unknown_error,
    unprocessable,
)
from kubegc.registry.fieldmanager._values import canonical
from kubegc.registry.fieldmanager.strategic_schema import (
    BUILTIN_SCHEMA,
    MERGE,
    REPLACE,
    RETAIN_KEYS,
    FieldMeta,
    PatchSchema,
)

DIRECTIVE = "$patch"
RETAIN_KEYS_DIRECTIVE = "$retainKeys"
SET_ELEMENT_ORDER = "$setElementOrder"
DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList"
_LIST_TYPE = "[]interface {}"

UNSUPPORTED_MESSAGE = (
    "the body of the request was in an unknown format - accepted media types include: "
    "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
)


def strategic_merge_patch(
    original: Obj, patch: Obj, *, group: str = "", kind: str = "",
    schema: PatchSchema = BUILTIN_SCHEMA, root: str | None = None,
) -> Obj:
    """``original`` with ``patch`` applied; neither argument is modified.

    The kind's patch metadata is ``schema.root(group, kind)`` unless ``root`` names a type
    of ``schema`` directly. A kind without metadata (a custom resource) gets 415.
    """
    root_type = root if root is not None else schema.root(group, kind)
    if root_type is None:
        raise unsupported_media_type(UNSUPPORTED_MESSAGE)
    return _Merger(schema).merge_map(clone(original), clone(patch), root_type)


class _Merger:
    def __init__(self, schema: PatchSchema) -> None:
        self.schema = schema

    def merge_map(self, original: dict[str, Any], patch: dict[str, Any],
                  type_name: str) -> dict[str, Any]:
        if DIRECTIVE in patch:
            return _directive_in_map(patch[DIRECTIVE], patch)
        _apply_retain_keys(original, patch)
        self._set_element_order(original, patch, type_name)
        for key, value in list(patch.items()):
            self._merge_entry(original, key, value, type_name)
        return original

    def _merge_entry(self, original: dict[str, Any], key: str, value: Any,
                     type_name: str) -> None:
        is_delete_list = key.startswith(DELETE_FROM_PRIMITIVE_LIST)
        if is_delete_list:
            key = _extract_key(key, DELETE_FROM_PRIMITIVE_LIST)
        if value is None:
            original.pop(key, None)
            return
        current = original.get(key)
        if isinstance(current, dict) and isinstance(value, dict):
            meta = self.schema.field(type_name, key)
            if _strategy(meta) == REPLACE:
                original[key] = _plain(value)
            else:
                original[key] = self.merge_map(current, value, meta.type)
        elif isinstance(current, list) and isinstance(value, list):
            meta = self.schema.field(type_name, key)
            original[key] = self._merge_list(current, value, meta, is_delete_list, None)
        elif not is_delete_list:
            _store_new(original, key, value)

    def _merge_list(self, current: list[Any], patch: list[Any], meta: FieldMeta,
                    is_delete_list: bool, alias: order.AliasedOriginal | None) -> list[Any]:
        if _strategy(meta) == MERGE or is_delete_list:
            return self._merge_slice(current, patch, meta, is_delete_list, alias)
        return [_plain(item) for item in patch]

    def _merge_slice(self, original: list[Any], patch: list[Any], meta: FieldMeta,
                     is_delete_list: bool, alias: order.AliasedOriginal | None) -> list[Any]:
        if not original and not patch:
            return original
        kind = _element_kind(original, patch)
        if kind != order.MAP:
            if is_delete_list:
                return order.delete_from_slice(original, patch)
            merged = order.dedupe_scalars(original + patch)
            inside, outside = order.partition_primitives(merged, patch)
            return order.normalize_element_order(inside, outside, patch, original, "", kind)
        if not meta.merge_key:
            raise unknown_error(f"cannot merge lists without merge key for {meta.type}")
        alias = alias or order.AliasedOriginal(original)
        survivors, items = _special_elements(original, patch, meta.merge_key, alias)
        merged = self._merge_items(survivors, items, meta, alias)
        inside, outside = order.partition_maps(merged, items, meta.merge_key)
        return order.normalize_element_order(
            inside, outside, items, survivors, meta.merge_key, kind)

    def _merge_items(self, base: list[Any], items: list[Any], meta: FieldMeta,
                     alias: order.AliasedOriginal) -> list[Any]:
        merged = list(base)
        for item in items:
            at = order.find_by_key(merged, meta.merge_key, order.key_value(item, meta.merge_key))
            if at >= 0:
                merged[at] = self.merge_map(merged[at], item, meta.type)
            else:
                new, _ = _new_value(item)
                merged.append(new)
                alias.append(new)
        return merged

    def _set_element_order(self, original: dict[str, Any], patch: dict[str, Any],
                           type_name: str) -> None:
        """``mergePatchIntoOriginal``: merge and order every list named by the directive."""
        for directive in [k for k in patch if k.startswith(SET_ELEMENT_ORDER)]:
            wanted = patch.pop(directive)
            if not isinstance(wanted, list):
                raise bad_arg_type(_LIST_TYPE, wanted)
            key = _extract_key(directive, SET_ELEMENT_ORDER)
            in_original, in_patch = key in original, key in patch
            live, patch_list = original.get(key), patch.get(key)
            if in_original and not isinstance(live, list):
                raise bad_arg_type(_LIST_TYPE, live)
            if in_patch and not isinstance(patch_list, list):
                raise bad_arg_type(_LIST_TYPE, patch_list)
            live_items: list[Any] = live if isinstance(live, list) else []
            patch_items: list[Any] = patch_list if isinstance(patch_list, list) else []
            meta = self.schema.field(type_name, key)
            _validate_set_order(patch_items, wanted, meta.merge_key)
            alias = order.AliasedOriginal(live_items)
            if in_original and in_patch:
                merged = self._merge_list(live_items, patch_items, meta, False, alias)
            elif in_original:
                merged = live_items
            elif in_patch:
                merged = [v for v, keep in map(_new_value, patch_items) if keep]
            else:
                continue
            if meta.merge_key:
                inside, outside = order.partition_maps(merged, wanted, meta.merge_key)
            else:
                inside, outside = order.partition_primitives(merged, wanted)
            kind = _element_kind(live_items, patch_items)
            original[key] = order.normalize_element_order(
                inside, outside, wanted, alias.view(), meta.merge_key, kind)
            patch.pop(key, None)


def _strategy(meta: FieldMeta) -> str:
    """``extractRetainKeysPatchStrategy``: the strategy besides ``retainKeys``."""
    strategies = [s for s in meta.strategies if s != RETAIN_KEYS]
    if len(strategies) > 1 or len(meta.strategies) > 2:
        raise unknown_error(f"unexpected patch strategy: {go_repr(list(meta.strategies))}")
    return strategies[0] if strategies else ""


def bad_patch_type(directive: Any, patch: Any) -> StatusError:
    """``mergepatch.ErrBadPatchType``: ``unknown patch type: %s in map: %v``."""
    return unknown_error(f"unknown patch type: {go_s(directive)} in map: {go_repr(patch)}")


def _directive_in_map(directive: Any, patch: dict[str, Any]) -> dict[str, Any]:
    if directive == "replace":
        del patch[DIRECTIVE]
        plain: dict[str, Any] = _plain(patch)
        return plain
    if directive == "delete":
        return {}
    raise bad_patch_type(directive, patch)


def _special_elements(original: list[Any], patch: list[Any], merge_key: str,
                      alias: order.AliasedOriginal) -> tuple[list[Any], list[Any]]:
    """Apply ``$patch`` items of a merged list: (surviving live items, plain patch items)."""
    survivors = list(original)
    items: list[Any] = []
    replace = False
    for item in patch:
        if DIRECTIVE not in item:
            items.append(item)
            continue
        directive = item[DIRECTIVE]
        if directive == "delete":
            if merge_key not in item:
                raise order.no_merge_key(item, merge_key)
            doomed = canonical(item[merge_key])
            while (at := order.find_by_key(survivors, merge_key, doomed)) >= 0:
                del survivors[at]
                alias.delete_at(at)
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise unknown_error("merging lists cannot yet be specified in the patch")
        else:
            raise bad_patch_type(directive, item)
    if replace:
        alias.detach()
        return [v for v, keep in map(_new_value, items) if keep], []
    return survivors, items


def _validate_set_order(patch_list: list[Any], wanted: list[Any], merge_key: str) -> None:
    """The patch list must be a subsequence of ``$setElementOrder`` (deletions aside)."""
    if not wanted or not patch_list:
        return
    items = patch_list
    if merge_key:
        for item in patch_list:
            if not isinstance(item, dict):
                raise bad_arg_type("map[string]interface {}", item)
        items = [item for item in patch_list if item.get(DIRECTIVE) != "delete"]
    at = seen = 0
    while at < len(items) and seen < len(wanted):
        if isinstance(items[at], dict) and DIRECTIVE in items[at]:
            at += 1
            continue
        if _merge_key_equal(items[at], wanted[seen], merge_key):
            at += 1
        seen += 1
    if at < len(items) and seen >= len(wanted):
        raise unknown_error(f"The order in patch list:\n{go_repr(patch_list)}\n doesn't match "
                            f"{SET_ELEMENT_ORDER} list:\n{go_repr(wanted)}\n")


def _merge_key_equal(left: Any, right: Any, merge_key: str) -> bool:
    if not merge_key:
        return canonical(left) == canonical(right)
    for item in (left, right):
        if not isinstance(item, dict):
            raise bad_arg_type("map[string]interface {}", item)
    return order.key_value(left, merge_key) == order.key_value(right, merge_key)


def _apply_retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    if RETAIN_KEYS_DIRECTIVE not in patch:
        return
    retained = patch.pop(RETAIN_KEYS_DIRECTIVE)
    if not isinstance(retained, list):
        raise bad_request("invalid patch format of retainKeys")
    keep = {k for k in retained if isinstance(k, str)}
    for key, value in patch.items():
        if value is None or key.startswith((DELETE_FROM_PRIMITIVE_LIST, SET_ELEMENT_ORDER)):
            continue
        if key not in keep:
            raise bad_request("invalid patch format of retainKeys")
    for key in [k for k in original if k not in keep]:
        del original[key]


def _extract_key(directive: str, prefix: str) -> str:
    head, sep, key = directive.partition("/")
    if not sep or head != prefix:
        if prefix == SET_ELEMENT_ORDER:
            raise bad_request("invalid patch type of setElementOrder list")
        raise bad_request("invalid patch format of primitive list")
    return key


def _element_kind(*lists: list[Any]) -> str:
    """``sliceElementType``: the one kind of all items (maps, strings, numbers, ...)."""
    kind = ""
    for items in lists:
        for item in items:
            this = _kind_of(item)
            if not kind:
                kind = this
                if this == "list":
                    raise unprocessable() from ValueError("lists of lists are not supported")
            elif this != kind:
                raise unknown_error(f"list element types are not identical: {go_repr(lists)}")
    if not kind:
        raise unknown_error("no elements in any of the given slices")
    return kind


def _kind_of(item: Any) -> str:
    if isinstance(item, dict):
        return order.MAP
    if isinstance(item, list):
        return "list"
    if isinstance(item, bool):
        return "bool"
    if isinstance(item, int | float):
        return "number"
    return "null" if item is None else "string"


def _is_directive_key(key: str) -> bool:
    return key in (DIRECTIVE, RETAIN_KEYS_DIRECTIVE) or key.startswith(
        (SET_ELEMENT_ORDER, DELETE_FROM_PRIMITIVE_LIST))


def _plain(value: Any) -> Any:
    """A patch value stored as is: directive keys and null members dropped."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()
                if v is not None and not _is_directive_key(k)}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _new_value(value: Any) -> tuple[Any, bool]:
    """``discardNullValuesFromPatch`` + ``removeDirectives``: (value, keep it?)."""
    if isinstance(value, dict):
        if value.get(DIRECTIVE) is not None:
            return None, False
        out: dict[str, Any] = {}
        for key, item in value.items():
            if item is None or _is_directive_key(key):
                continue
            new, keep = _new_value(item)
            if keep:
                out[key] = new
        return out, True
    if isinstance(value, list):
        return [v for v, keep in map(_new_value, value) if keep], True
    return value, True


def _store_new(original: dict[str, Any], key: str, value: Any) -> None:
    new, keep = _new_value(value)
    if keep:
        original[key] = new
    else:
        original.pop(key, None)

