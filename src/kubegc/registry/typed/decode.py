"""Decoding a JSON-shaped object into a built-in kind's Go struct, as kube-apiserver does
before anything else looks at a request: ``encoding/json`` (sigs.k8s.io/json) for request
bodies and JSON/merge patches, ``runtime.DefaultUnstructuredConverter`` for strategic merge
patches.

``decode_typed`` walks the object along the kind's Go types and

* reports the error Go would report: ``encoding/json`` keeps the first type mismatch
  (``json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type
  string``: the innermost struct, then the JSON path of struct fields) and goes on, but a
  type that decodes itself (``resource.Quantity``, ``metav1.Time``, ``IntOrString``) stops
  the decoding with its own error; the converter's wording is kept beside it;
* replaces ``null`` as decoding leaves it: a struct field that is null is absent (its zero
  value), a null element of a list or map is its element type's zero value.

Unknown fields are left alone (``kubegc.registry.definitions.unknown_fields`` reports them).
May import: stdlib, ``kubegc.api.goformat``, ``kubegc.registry.typed``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubegc.api.goformat import dynamic_type, go_sharp_v, go_v_any, json_type_name
from kubegc.registry.typed.fast import clean
from kubegc.registry.typed.gotypes import INT_RANGES, GoType
from kubegc.registry.typed.special import (
    ERR_FORMAT_WRONG,
    RFC3339,
    RFC3339_MICRO,
    check_base64,
    check_quantity,
    check_time,
)


@dataclass(frozen=True, slots=True)
class DecodeFailure:
    """Why an object cannot be decoded: ``message`` as ``encoding/json`` words it,
    ``converter`` as the unstructured converter (strategic merge patch) does."""

    message: str
    converter: str
    #: as structured-merge-diff words it (server-side apply): ``.spec.replicas: expected
    #: numeric (int or float), got string``
    smd: str = ""


class _Abort(Exception):
    """A self-decoding type failed: encoding/json stops there (not a saved error)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


_ZERO: dict[str, Any] = {"string": "", "bool": False, "int32": 0, "int64": 0, "float64": 0}


def decode_typed(obj: dict[str, Any], typ: GoType) -> DecodeFailure | None:
    """Check ``obj`` against ``typ`` (a struct), normalizing nulls in place."""
    if clean(obj, typ):  # the common case, without the error bookkeeping (typed.fast)
        return None
    walk = _Walk(typ.short_name)
    try:
        walk.struct(obj, typ)
    except _Abort as e:
        return DecodeFailure(e.message, walk.converter or e.message, walk.smd or e.message)
    if walk.saved is None:
        return None
    return DecodeFailure(walk.saved, walk.converter or walk.saved, walk.smd or walk.saved)


def _reflect_kind(value: Any) -> str:
    """The reflect kind of a value of an unstructured map (its Go type's kind)."""
    typ = dynamic_type(value)
    return {"[]interface {}": "slice", "map[string]interface {}": "map"}.get(typ, typ)


def _smd_mismatch(value: Any, typ: GoType) -> str:
    """structured-merge-diff's ``validateScalar`` / ``mapValue`` / ``listValue`` texts."""
    if typ.kind in ("struct", "map"):
        return f"expected map, got &{{{go_v_any(value)}}}"
    if typ.kind == "slice":
        return f"expected list, got &{{{go_v_any(value)}}}"
    if typ.kind == "bool":
        return f"expected boolean, got &{{{go_v_any(value)}}}"
    if typ.kind in ("int32", "int64", "float64"):
        return f"expected numeric (int or float), got {dynamic_type(value)}"
    return ("expected string, got "
            f"&value.valueUnstructured{{Value:{go_sharp_v(value, dynamic_type(value))}}}")


def _zero(typ: GoType) -> Any:
    if typ.kind in _ZERO:
        return _ZERO[typ.kind]
    return {} if typ.kind == "struct" else None


class _Walk:
    """One decoding: the error context (innermost struct, field path) and what was found."""

    def __init__(self, root: str) -> None:
        self.struct_name = root
        self.stack: list[str] = []
        self.saved: str | None = None  # the first saved error (encoding/json)
        self.converter: str | None = None  # the first error, in the converter's words
        self.smd = ""  # the first type mismatch, in structured-merge-diff's words

    # -- errors --------------------------------------------------------------------------

    def _type_error(self, value: Any, typ: GoType, shown: str = "") -> None:
        if self.saved is None:
            what = shown or json_type_name(value)
            if self.stack:
                self.saved = (f"json: cannot unmarshal {what} into Go struct field "
                              f"{self.struct_name}.{'.'.join(self.stack)} of type {typ.name}")
            else:
                self.saved = f"json: cannot unmarshal {what} into Go value of type {typ.name}"
        self._convert_error(value, typ)

    def _convert_error(self, value: Any, typ: GoType) -> None:
        if not self.smd:
            self.smd = f".{'.'.join(self.stack)}: {_smd_mismatch(value, typ)}"
        if self.converter is not None:
            return
        source = _reflect_kind(value)
        if typ.kind == "struct":
            self.converter = f"cannot restore struct from: {source}"
        elif typ.kind in ("slice", "bytes"):
            self.converter = f"cannot restore slice from {source}"
        elif typ.kind == "map":
            self.converter = f"cannot restore map from {source}"
        elif source in ("int64", "float64") and typ.kind != "bool":
            self.converter = f"cannot convert {source} to {typ.name}"
        else:
            go_kind = "string" if typ.kind == "string" else typ.kind
            self.converter = f"unrecognized type: {go_kind}"

    def _abort(self, message: str) -> None:
        if self.converter is None:
            self.converter = message
        raise _Abort(message)

    # -- the walk ------------------------------------------------------------------------

    def value(self, value: Any, typ: GoType) -> Any:
        """``value`` decoded as ``typ`` (never None: the caller handles null)."""
        kind = typ.kind
        if kind == "struct":
            if type(value) is dict:
                self.struct(value, typ)
            else:
                self._type_error(value, typ)
        elif kind in ("slice", "map"):
            container = list if kind == "slice" else dict
            if type(value) is container and typ.elem is not None:
                elem = typ.elem
                keys = range(len(value)) if kind == "slice" else list(value)
                for key in keys:
                    item = value[key]
                    value[key] = _zero(elem) if item is None else self.value(item, elem)
            else:
                self._type_error(value, typ)
        elif kind in _SCALAR_CHECKS:
            _SCALAR_CHECKS[kind](self, value, typ)
        elif kind != "raw":
            self._special(value, typ)
        return value

    def struct(self, value: dict[str, Any], typ: GoType) -> None:
        fields = typ.fields()
        outer, depth = self.struct_name, len(self.stack)
        nulls: list[str] = []
        for key, item in value.items():
            sub = fields.get(key)
            if sub is None:
                continue
            if item is None:
                nulls.append(key)
                continue
            self.struct_name = typ.short_name
            self.stack.append(key)
            value[key] = self.value(item, sub)
            del self.stack[depth:]
            self.struct_name = outer
        for key in nulls:
            del value[key]

    def _string(self, value: Any, typ: GoType) -> None:
        if type(value) is not str:
            self._type_error(value, typ)

    def _bool(self, value: Any, typ: GoType) -> None:
        if type(value) is not bool:
            self._type_error(value, typ)

    def _int(self, value: Any, typ: GoType) -> None:
        if type(value) is int:
            low, high = INT_RANGES[typ.kind]
            if not low <= value <= high:
                self._type_error(value, typ, f"number {value}")
        elif type(value) is float:
            self._type_error(value, typ, f"number {value!r}")
        else:
            self._type_error(value, typ)

    def _float(self, value: Any, typ: GoType) -> None:
        if type(value) is not float and type(value) is not int:
            self._type_error(value, typ)

    def _bytes(self, value: Any, typ: GoType) -> None:
        if type(value) is not str:
            self._type_error(value, typ)
            return
        bad = check_base64(value)
        if bad is not None:
            if self.saved is None:
                self.saved = bad
            if self.converter is None:
                self.converter = f"error decoding from json: {bad}"

    def _special(self, value: Any, typ: GoType) -> None:
        kind = typ.kind
        if kind == "quantity":
            text = value if type(value) is str else (
                repr(value) if type(value) in (int, float) else None)
            error = ERR_FORMAT_WRONG if text is None else check_quantity(text)
            if error is not None:
                self._abort(error)
        elif kind == "intorstring":
            if type(value) is str:
                return
            if type(value) is int and INT_RANGES["int32"][0] <= value <= INT_RANGES["int32"][1]:
                return
            shown = f"number {value!r}" if type(value) in (int, float) else json_type_name(value)
            self._abort(f"json: cannot unmarshal {shown} into Go value of type int32")
        else:  # time, microtime, duration: a JSON string first
            if type(value) is not str:
                self._abort(f"json: cannot unmarshal {json_type_name(value)} into Go value of "
                            "type string")
            if kind in ("time", "microtime"):
                error = check_time(value, RFC3339_MICRO if kind == "microtime" else RFC3339)
                if error is not None:
                    self._abort(error)


_SCALAR_CHECKS = {
    "string": _Walk._string, "bool": _Walk._bool, "int32": _Walk._int, "int64": _Walk._int,
    "float64": _Walk._float, "bytes": _Walk._bytes,
}
