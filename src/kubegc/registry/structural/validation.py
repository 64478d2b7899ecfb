"""Schema validation of custom resources, as kube-apiserver does it (cf.
``apiserver/validation`` ``ValidateCustomResource`` over kube-openapi's
``validate.SchemaValidator``, then ``objectmeta.Validate`` and
``listtype.ValidateListSetsAndMaps``), in one walk of the object.

Per schema node the checks run in kube-openapi's order — type, ``allOf``/``anyOf``/
``oneOf``/``not``, string (``maxLength``, ``minLength``, ``pattern``: first failure only),
``format``, number (``multipleOf``, ``minimum``, ``maximum``), array (items, then
``minItems``, ``maxItems``, ``uniqueItems``), ``enum``, object (``minProperties`` /
``maxProperties`` stop there; properties, then ``required``) — and each check applies to
the kind of value found, whatever the declared type (a string is not range-checked).
Errors keep upstream's wording: the kube-openapi message (``spec.replicas in body must be
of type integer: "string"``) inside the ``field.Error`` it is converted to. Where Go
iterates a map (properties), errors follow the object's key order instead of a random one.

On update, values equal to their old counterpart are not validated again
(``CRDValidationRatcheting``, see ``ratcheting.py``). Not done: ``x-kubernetes-validations``
(CEL) rules.
"""

from __future__ import annotations

import math
from typing import Any

from kubegc.api.errors import StatusCause
from kubegc.api.goformat import go_quote, go_v, json_marshal
from kubegc.registry.structural import field
from kubegc.registry.structural.formats import format_valid
from kubegc.registry.structural.listtype import identity, validate_list
from kubegc.registry.structural.objectmeta import validate_embedded_resource
from kubegc.registry.structural.ratcheting import ABSENT, correlate
from kubegc.registry.structural.schema import Structural

_MAX_JSON_INTEGER = float(1 << 53)


def validate(obj: dict[str, Any], schema: Structural | None, old: Any = ABSENT) -> list[
        StatusCause]:
    """The errors of a whole custom resource against its version's schema (``Validate``
    of the custom resource strategy, without the ObjectMeta rules). With ``old`` (an
    update), a value equal to its old counterpart is not validated again
    (``CRDValidationRatcheting``, on by default since Kubernetes 1.30): an object made
    invalid by a tightened schema can still be patched elsewhere, its finalizers removed."""
    if schema is None:
        return []
    walk = _Walk(None)
    out: list[StatusCause] = []
    walk.value(obj, schema, "", "", out, structural=True, old=old)
    return _unique(out + walk.embedded + _ratchet_lists(walk.lists, schema, old))


def validate_status(obj: dict[str, Any], schema: Structural | None, old: Any = ABSENT) -> list[
        StatusCause]:
    """The errors of a status update: ``status`` against the status schema (field paths
    under ``status``, messages relative to it, as upstream; ratcheted against ``old``'s
    status), then the embedded resources and list invariants of the whole object."""
    if schema is None:
        return []
    status_schema = schema.properties.get("status")
    out: list[StatusCause] = []
    if status_schema is not None and "status" in obj:
        old_status = old.get("status", ABSENT) if type(old) is dict else ABSENT
        _Walk("status").value(obj["status"], status_schema, "", "", out, structural=False,
                              old=old_status)
    walk = _Walk(None)
    walk.structure(obj, schema, "")
    return _unique(out + walk.embedded + _ratchet_lists(walk.lists, schema, old))


def _ratchet_lists(errors: list[StatusCause], schema: Structural, old: Any) -> list[
        StatusCause]:
    """List-type invariants are checked on update only if the old object kept them."""
    if not errors or type(old) is not dict:
        return errors
    before = _Walk(None)
    before.structure(old, schema, "")
    return [] if before.lists else errors


def _unique(causes: list[StatusCause]) -> list[StatusCause]:
    """``ErrorList.ToAggregate`` drops repeated messages."""
    return list(dict.fromkeys(causes))


#: kube-openapi's JSON type and Go format of a decoded value, by Python type (anything else,
#: such as a timestamp YAML decoded, stands for the string it was)
_STRING = ("string", "")
_TYPES: dict[type, tuple[str, str]] = {
    bool: ("boolean", ""), int: ("integer", "int64"), float: ("number", "float64"),
    str: ("string", ""), list: ("array", ""), dict: ("object", ""),
}


def _is_json_integer(value: float) -> bool:
    return math.isfinite(value) and abs(value) <= _MAX_JSON_INTEGER and value.is_integer()


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


class _Walk:
    """One validation: kube-openapi errors go to the ``out`` lists handed down; the
    structural checks (embedded resources, list types) of the same walk collect in
    ``embedded`` and ``lists``. ``prefix`` is the field path the kube-openapi errors hang
    under (None: upstream's nil path, ``status`` for the status subresource)."""

    __slots__ = ("embedded", "lists", "prefix")

    def __init__(self, prefix: str | None) -> None:
        self.prefix = prefix
        self.embedded: list[StatusCause] = []
        self.lists: list[StatusCause] = []

    # -- paths -----------------------------------------------------------------------------

    def field_path(self, name: str) -> str:
        """``errPath`` of kubeOpenAPIResultToFieldErrors for an error named ``name``."""
        if name and name != ".":
            name = name.removeprefix(".")
            return f"{self.prefix}.{name}" if self.prefix else name
        return self.prefix or field.NIL_PATH

    def composite(self, message: str) -> StatusCause:
        """A composite (allOf/anyOf/oneOf/not) failure: not a ``Validation`` error upstream,
        so it hangs at the prefix itself with an empty value."""
        return field.invalid(self.prefix or field.NIL_PATH, "", message)

    # -- the walk --------------------------------------------------------------------------

    def value(self, value: Any, s: Structural, path: str, fpath: str, out: list[StatusCause],
              *, structural: bool, old: Any = ABSENT) -> None:
        """``SchemaValidator.Validate`` of ``value`` at kube-openapi path ``path`` (field
        path ``fpath`` for the structural checks); nothing when it equals ``old``."""
        if old is not ABSENT and type(old) is type(value) and old == value:
            return
        if value is None:
            if s.types and "null" not in s.types and not s.nullable:
                out.append(self.type_error(path, ",".join(s.types), "null"))
            self.enum(value, s, path, out)
            return
        kind = type(value)
        if s.format or (s.types and _TYPES.get(kind, _STRING)[0] not in s.types):
            self.type(value, s, path, out)
        if s.composed:
            self.compositions(value, s, path, fpath, out)
        if kind is str:
            if s.checks_strings:
                self.string(value, s, path, out)
        elif kind is int or kind is float:
            if s.checks_numbers:
                self.number(value, s, path, out)
        elif kind is list:
            self.array(value, s, path, fpath, out, structural=structural, old=old)
        if s.enum:
            self.enum(value, s, path, out)
        if kind is dict:
            self.object(value, s, path, fpath, out, structural=structural, old=old)

    def structure(self, value: Any, s: Structural, fpath: str) -> None:
        """Only the structural checks below ``value`` (no kube-openapi errors)."""
        if type(value) is dict:
            if s.embedded_resource:
                self.embedded += validate_embedded_resource(fpath, value)
            for key, item in value.items():
                sub = s.properties.get(key)
                if sub is not None:
                    self.structure(item, sub, _child(fpath, key))
                elif s.additional_schema is not None:
                    self.structure(item, s.additional_schema, f"{fpath}[{key}]")
        elif type(value) is list:
            if s.list_type:
                self.lists += validate_list(fpath, s, value)
            if s.items is not None:
                for i, item in enumerate(value):
                    self.structure(item, s.items, f"{fpath}[{i}]")

    # -- validators, in kube-openapi's order ---------------------------------------------------

    def type_error(self, path: str, expected: str, actual: str) -> StatusCause:
        return field.type_invalid(self.field_path(path), actual,
                                  f"{path} in body must be of type {expected}: "
                                  f"{go_quote(actual)}")

    def type(self, value: Any, s: Structural, path: str, out: list[StatusCause]) -> None:
        actual, go_format = _TYPES.get(type(value), _STRING)
        types = s.types
        float_int = actual == "number" and "integer" in types and _is_json_integer(value)
        int_float = actual == "integer" and "number" in types
        text_or_list = actual in ("string", "array")
        if s.format and not text_or_list and not (
                actual in types or go_format == s.format or float_int or int_float):
            out.append(self.type_error(path, s.format, go_format))
            return
        if s.format and text_or_list and "number" not in types and "integer" not in types:
            return
        if not (actual in types or float_int or int_float):
            out.append(self.type_error(path, ",".join(types), actual))

    def compositions(self, value: Any, s: Structural, path: str, fpath: str,
                     out: list[StatusCause]) -> None:
        """``schemaPropsValidator``: anyOf, oneOf, allOf, not (same path as the node)."""
        quoted = go_quote(path)
        if s.any_of:
            results = [self.branch(value, b, path, fpath) for b in s.any_of]
            if all(results):
                out.append(self.composite(f"{quoted} must validate at least one schema "
                                          "(anyOf)"))
                out.extend(_best_failure(results))
        if s.one_of:
            results = [self.branch(value, b, path, fpath) for b in s.one_of]
            valid = sum(1 for r in results if not r)
            if valid != 1:
                found = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
                out.append(self.composite(f"{quoted} must validate one and only one schema "
                                          f"(oneOf). {found}"))
                if valid == 0:
                    out.extend(_best_failure(results))
        if s.all_of:
            results = [self.branch(value, b, path, fpath) for b in s.all_of]
            for result in results:
                out.extend(result)
            valid = sum(1 for r in results if not r)
            if valid != len(results):
                none = ". None validated" if valid == 0 else ""
                out.append(self.composite(f"{quoted} must validate all the schemas (allOf)"
                                          f"{none}"))
        if s.not_ is not None and not self.branch(value, s.not_, path, fpath):
            out.append(self.composite(f"{quoted} must not validate the schema (not)"))

    def branch(self, value: Any, s: Structural, path: str, fpath: str) -> list[StatusCause]:
        result: list[StatusCause] = []
        self.value(value, s, path, fpath, result, structural=False)
        return result

    def string(self, value: str, s: Structural, path: str, out: list[StatusCause]) -> None:
        if s.max_length is not None and len(value) > s.max_length:
            out.append(field.too_long(self.field_path(path), s.max_length))
        elif s.min_length is not None and len(value) < s.min_length:
            out.append(field.invalid(self.field_path(path), value,
                                     f"{path} in body should be at least {s.min_length} chars "
                                     "long"))
        elif s.pattern_error:
            out.append(field.invalid(self.field_path(path), value,
                                     f"{path} in body should match '{s.pattern}, but pattern "
                                     f"is invalid: {s.pattern_error}'"))
        elif s.pattern_re is not None and s.pattern_re.search(value) is None:
            out.append(field.invalid(self.field_path(path), value,
                                     f"{path} in body should match '{s.pattern}'"))
        if s.format and not format_valid(s.format, value):
            out.append(field.type_invalid(self.field_path(path), value,
                                          f"{path} in body must be of type {s.format}: "
                                          f"{go_quote(value)}"))

    def number(self, value: float, s: Structural, path: str, out: list[StatusCause]) -> None:
        integer = type(value) is int
        if s.multiple_of is not None:
            message = _not_multiple(value, s.multiple_of, integer, path)
            if message:
                out.append(field.invalid(self.field_path(path), value, message))
        for bound, exclusive, below in ((s.minimum, s.exclusive_minimum, True),
                                        (s.maximum, s.exclusive_maximum, False)):
            if bound is None:
                continue
            limit: float = int(bound) if integer else bound
            if below:
                failed = value < limit or (exclusive and value <= limit)
                relation = "greater than" if exclusive else "greater than or equal to"
            else:
                failed = value > limit or (exclusive and value >= limit)
                relation = "less than" if exclusive else "less than or equal to"
            if failed:
                out.append(field.invalid(self.field_path(path), value,
                                         f"{path} in body should be {relation} "
                                         f"{go_v(limit)}"))

    def array(self, value: list[Any], s: Structural, path: str, fpath: str,
              out: list[StatusCause], *, structural: bool, old: Any) -> None:
        if structural and s.list_type:
            self.lists += validate_list(fpath, s, value)
        items = s.items
        if items is not None:
            trivial = items.trivial_types
            olds = correlate(value, s, old)
            for i, item in enumerate(value):
                if type(item) not in trivial:
                    self.value(item, items, f"{path}[{i}]", f"{fpath}[{i}]", out,
                               structural=structural, old=olds[i] if olds else ABSENT)
        size = len(value)
        if s.min_items is not None and size < s.min_items:
            out.append(field.invalid(self.field_path(path), size,
                                     f"{path} in body should have at least {s.min_items} "
                                     "items"))
        if s.max_items is not None and size > s.max_items:
            out.append(field.too_many(self.field_path(path), size, s.max_items))
        if s.unique_items and _has_duplicates(value):
            out.append(field.invalid(self.field_path(path), "",
                                     f"{path} in body shouldn't contain duplicates"))

    def enum(self, value: Any, s: Structural, path: str, out: list[StatusCause]) -> None:
        if not s.enum or any(value is not None and _json_equal(value, e) for e in s.enum):
            return
        allowed = [e if isinstance(e, str) else json_marshal(e) for e in s.enum]
        out.append(field.not_supported(self.field_path(path), value, allowed))

    def object(self, value: dict[str, Any], s: Structural, path: str, fpath: str,
               out: list[StatusCause], *, structural: bool, old: Any) -> None:
        count = len(value)
        if s.min_properties is not None and count < s.min_properties:
            out.append(field.invalid(self.field_path(path), count,
                                     f"{path} in body should have at least "
                                     f"{s.min_properties} properties"))
        elif s.max_properties is not None and count > s.max_properties:
            out.append(field.too_many(self.field_path(path), count, s.max_properties))
        else:
            self.properties(value, s, path, fpath, out, structural=structural,
                            old=old if type(old) is dict else None)
            for name in s.required:
                if name not in value:
                    out.append(field.required(self.field_path(f"{path}.{name}")))
            return
        if structural:  # kube-openapi stops here; the structural checks go on
            self.structure(value, s, fpath)

    def properties(self, value: dict[str, Any], s: Structural, path: str, fpath: str,
                   out: list[StatusCause], *, structural: bool,
                   old: dict[str, Any] | None) -> None:
        if structural and s.embedded_resource:
            self.embedded += validate_embedded_resource(fpath, value)
        additional = s.additional_properties
        properties = s.properties
        for key, item in value.items():
            sub = properties.get(key)
            if sub is not None:
                if type(item) not in sub.trivial_types:
                    self.value(item, sub, _child(path, key), _child(fpath, key), out,
                               structural=structural,
                               old=old.get(key, ABSENT) if old is not None else ABSENT)
            elif isinstance(additional, Structural):
                if type(item) not in additional.trivial_types:
                    self.value(item, additional, f"{path}.{key}", f"{fpath}[{key}]", out,
                               structural=structural,
                               old=old.get(key, ABSENT) if old is not None else ABSENT)
            elif additional is False:
                out.append(field.invalid(self.field_path(path), key,
                                         f"{path}.{key} in body is a forbidden property"))


def _best_failure(results: list[list[StatusCause]]) -> list[StatusCause]:
    """The errors of the failed alternative kube-openapi reports (the one with the most
    passing checks; here: the fewest errors, the first one on a tie)."""
    return min(results, key=lambda errs: len(errs))


def _not_multiple(value: float, factor: float, integer: bool, path: str) -> str:
    """The kube-openapi message when ``value`` is not a multiple of ``factor``, else ""."""
    if integer and int(factor) != 0:
        whole = int(factor)
        if whole < 0:
            return f"factor MultipleOf declared for {path} must be positive: {whole}"
        return "" if value % whole == 0 else (
            f"{path} in body should be a multiple of {whole}")
    if factor < 0:
        return f"factor MultipleOf declared for {path} must be positive: {go_v(factor)}"
    mult = (1 / factor * value) if factor < 1 else value / factor
    return "" if _is_json_integer(mult) else (
        f"{path} in body should be a multiple of {go_v(factor)}")


def _json_equal(a: Any, b: Any) -> bool:
    """JSON equality as kube-openapi's enum check sees it: numbers compare by value, booleans
    are not numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if type(a) is dict and type(b) is dict:
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if type(a) is list and type(b) is list:
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and bool(a == b)


def _has_duplicates(items: list[Any]) -> bool:
    """``UniqueItems`` (reflect.DeepEqual: int64 1 and float64 1 differ)."""
    seen = {identity(item) for item in items}
    return len(seen) != len(items)
