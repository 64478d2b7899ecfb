"""Decoding what a request writes into its kind's Go type, before anything else reads it
(kube-apiserver's handlers decode into the typed object first; see ``kubegc.registry.typed``).

* ``check_type_meta``: ``apiVersion`` and ``kind`` must be strings (``Interpret``).
* ``check_decodes``: a create or update body (400 ``... cannot be handled as a ...``).
* ``check_patched``: the result of a JSON, merge or strategic merge patch (422 ``patch``).
* ``check_apply_config``: a server-side apply configuration (400 ``failed to create typed
  patch object ...``).

Built-in kinds only: custom resources are decoded against their CRD's schema
(``registry.groups.apiextensions.crd.decode_custom_resource``), kubegc's own kinds have no
Go type. Requests of in-process clients skip this, as they skip unknown-field checks
(``checks.check_fields``).
"""

from __future__ import annotations

from typing import Any

import orjson

from kubegc.api import errors
from kubegc.api.goformat import go_v_any, json_marshal
from kubegc.api.limits import nesting_exceeds
from kubegc.api.types import Obj
from kubegc.registry.fieldmanager import decode_strategic_patch
from kubegc.registry.generic.target import Target
from kubegc.registry.typed import DecodeFailure, decode_typed, definition_type, kind_type
from kubegc.registry.typed.messages import (
    cannot_be_handled,
    patch_invalid,
    too_deep,
    typed_patch_object,
    unrecognized,
)

STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"


def check_type_meta(t: Target, obj: Any) -> None:
    """``apiVersion`` and ``kind`` are read first, into strings (``SimpleMetaFactory``)."""
    if not isinstance(obj, dict):
        return
    for key in ("apiVersion", "kind"):
        value = obj.get(key)
        if value is not None and not isinstance(value, str):
            kind = type(value).__name__
            what = {"int": "number", "float": "number", "dict": "object", "list": "array"}
            raise unrecognized(
                t.info.kind, "couldn't get version/kind; json parse error: json: cannot "
                f"unmarshal {what.get(kind, kind)} into Go struct field .{key} of type string",
                _summary_source(obj))


def _summary_source(obj: Obj) -> bytes:
    try:
        return orjson.dumps(obj)
    except TypeError:
        return b"{"


def check_decodes(t: Target, obj: Obj) -> None:
    """A create or update body decodes into its kind (nulls normalized in place). Its
    nesting was bounded as it was decoded (``server.negotiation.decode_body``)."""
    typ = kind_type(t.info.group, t.version, t.info.kind)
    if typ is None:
        return
    failure = decode_typed(obj, typ)
    if failure is not None:
        raise cannot_be_handled(t.info.kind, t.version, failure.message)


def check_patched(t: Target, patched: Obj, patch_type: str, body: bytes) -> None:
    """The patched object decodes into its kind: 422 on ``patch``, its value the patched
    JSON (JSON and merge patches) or the patch map (``%+v``, strategic merge patches). A
    JSON patch can nest a value below a deep path: its result's nesting is checked."""
    failure = _decode_bounded(t, patched, check_nesting=patch_type == JSON_PATCH)
    if failure is None:
        return
    if patch_type == STRATEGIC:
        raise patch_invalid(go_v_any(decode_strategic_patch(body)), failure.converter)
    raise patch_invalid(json_marshal(patched), failure.message)


def _decode_bounded(t: Target, obj: Obj, *, check_nesting: bool) -> DecodeFailure | None:
    """``obj`` decoded into its kind (nested no deeper than allowed, when asked)."""
    if check_nesting and nesting_exceeds(obj):
        raise too_deep(t.info.kind, _summary_source(obj))
    typ = kind_type(t.info.group, t.version, t.info.kind)
    return None if typ is None else decode_typed(obj, typ)


def check_apply_config(t: Target, config: Obj) -> None:
    """An apply configuration converts to its kind's type (structured-merge-diff)."""
    failure = _decode_bounded(t, config, check_nesting=True)
    if failure is None:
        return
    meta = config.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    name, namespace = meta.get("name"), meta.get("namespace")
    raise typed_patch_object(
        namespace if isinstance(namespace, str) else "", name if isinstance(name, str) else "",
        t.info.group, t.version, t.info.kind, failure.smd)


def check_delete_options(options: Obj) -> None:
    """A DeleteOptions body decodes into ``metav1.DeleteOptions`` (400 with the decoder's
    text; upstream passes that error on unwrapped, as a 500)."""
    failure = decode_typed(options, definition_type(
        "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"))
    if failure is not None:
        raise errors.bad_request(failure.message)


SCALE = "io.k8s.api.autoscaling.v1.Scale"


def check_scale(scale: Obj, patch_type: str = "") -> None:
    """A Scale body (``patch_type`` empty) or patched Scale decodes into
    ``autoscaling/v1.Scale``."""
    failure = decode_typed(scale, definition_type(SCALE))
    if failure is None:
        return
    if not patch_type:
        raise cannot_be_handled("Scale", "v1", failure.message)
    raise patch_invalid(json_marshal(scale), failure.message)
