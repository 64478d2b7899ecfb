"""``field.Error`` constructors as kube-apiserver uses them for custom resources
(``field.Required``, ``Invalid``, ``TypeInvalid``, ``NotSupported``, ``TooLong``,
``TooMany``, ``Duplicate``), so that messages match upstream's byte for byte.

A custom resource is unstructured: every bad value reaches ``field.Error`` as an
``interface {}``, and ``ErrorBody`` prints it by its dynamic type (``%q`` for a string,
``%v`` for a number or boolean, ``%#v`` otherwise: ``map[string]interface {}{...}``, never
``map[string]string``). The rendering itself is ``kubegc.api.goformat``'s, through
``errors.field_error``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubegc.api.errors import StatusCause, field_error
from kubegc.api.goformat import go_quote

#: field path of an error with no path upstream (``(*field.Path)(nil).String()``)
NIL_PATH = "<nil>"
#: the Go type of every value of an unstructured object
_UNSTRUCTURED = "interface {}"


def required(path: str, detail: str = "") -> StatusCause:
    return field_error("FieldValueRequired", path, detail)


def invalid(path: str, value: Any, detail: str) -> StatusCause:
    return field_error("FieldValueInvalid", path, detail, value, go_type=_UNSTRUCTURED)


def type_invalid(path: str, value: Any, detail: str) -> StatusCause:
    return field_error("FieldValueTypeInvalid", path, detail, value, go_type=_UNSTRUCTURED)


def not_supported(path: str, value: Any, valid: Sequence[str]) -> StatusCause:
    detail = "supported values: " + ", ".join(go_quote(v) for v in valid) if valid else ""
    return field_error("FieldValueNotSupported", path, detail, value, go_type=_UNSTRUCTURED)


def too_long(path: str, max_length: int) -> StatusCause:
    detail = f"may not be more than {max_length} bytes" if max_length >= 0 else (
        "value is too long")
    return field_error("FieldValueTooLong", path, detail)


def too_many(path: str, actual: int, max_quantity: int) -> StatusCause:
    detail = f"must have at most {max_quantity} items" if max_quantity >= 0 else (
        "has too many items")
    return field_error("FieldValueTooMany", path, detail, actual, go_type="int")


def duplicate(path: str, value: Any) -> StatusCause:
    return field_error("FieldValueDuplicate", path, "", value, go_type=_UNSTRUCTURED)
