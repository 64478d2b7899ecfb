"""Field-error helpers of the built-in validators (cf. apimachinery ``util/validation/field``
and the ``ValidateImmutableField`` / ``ValidateNonnegativeField`` helpers of
``pkg/apis/core/validation``), shared by this package's modules and the groups' validators
(``registry.groups``).

Every helper returns a list of ``StatusCause`` (empty: valid) so validators concatenate them.
A path is dotted field names (``spec.scaleTargetRef.name``); missing, null or mistyped steps
read as None.
May import: ``kubegc.api``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from kubegc.api.errors import StatusCause, field_error
from kubegc.api.types import Obj

EMPTY: tuple[Any, ...] = (None, "", [], {})


def value_at(obj: Any, path: str) -> Any:
    """``obj`` followed along the dotted ``path``; None where a step is missing."""
    cur = obj
    for part in path.split("."):
        cur = cur.get(part) if isinstance(cur, dict) else None
    return cur


def map_at(obj: Any, path: str) -> dict[str, Any]:
    """The map at ``path``; an empty one when missing or not a map."""
    value = value_at(obj, path)
    return value if isinstance(value, dict) else {}


def required(obj: Any, *paths: str, detail: str = "", at: str = "") -> list[StatusCause]:
    """``field.Required`` for each path whose value is missing or empty; ``at`` is the path
    of ``obj`` itself (a list item: ``spec.limits[0]``)."""
    return [field_error("FieldValueRequired", join(at, path), detail) for path in paths
            if value_at(obj, path) in EMPTY]


def join(at: str, path: str) -> str:
    return f"{at}.{path}" if at else path


def not_supported(path: str, value: Any, supported: Sequence[str]) -> StatusCause:
    """``field.NotSupported``: ``Unsupported value: "x": supported values: "a", "b"``."""
    quoted = ", ".join(f'"{v}"' for v in supported)
    return field_error("FieldValueNotSupported", path, f"supported values: {quoted}", value)


def one_of(obj: Any, path: str, supported: Sequence[str], *, optional: bool = True,
           at: str = "") -> list[StatusCause]:
    """The value at ``path`` is one of ``supported`` (absent is fine when ``optional``)."""
    value = value_at(obj, path)
    if value is None and optional:
        return []
    return [] if value in supported else [not_supported(join(at, path), value, supported)]


def immutable(new: Obj, old: Obj, *paths: str, go_type: str | None = None) -> list[
        StatusCause]:
    """``ValidateImmutableField``: ``Invalid value: <new>: field is immutable``."""
    return [field_error("FieldValueInvalid", path, "field is immutable",
                        value_at(new, path), go_type=go_type)
            for path in paths if value_at(new, path) != value_at(old, path)]


def forbidden_change(new: Obj, old: Obj, path: str, detail: str) -> list[StatusCause]:
    """``field.Forbidden`` when the value at ``path`` changed."""
    if value_at(new, path) == value_at(old, path):
        return []
    return [field_error("FieldValueForbidden", path, detail)]


def non_negative(obj: Any, *paths: str) -> list[StatusCause]:
    """``ValidateNonnegativeField``: ``must be greater than or equal to 0``."""
    out: list[StatusCause] = []
    for path in paths:
        value = value_at(obj, path)
        if isinstance(value, int | float) and not isinstance(value, bool) and value < 0:
            out.append(field_error("FieldValueInvalid", path,
                                   "must be greater than or equal to 0", value, go_type="int64"))
    return out


def items(obj: Any, path: str) -> Iterable[tuple[str, Any]]:
    """``(path[i], item)`` for the items of the list at ``path`` (none if not a list)."""
    value = value_at(obj, path)
    for i, item in enumerate(value if isinstance(value, list) else []):
        yield f"{path}[{i}]", item


def duplicates(obj: Any, path: str, key: str) -> list[StatusCause]:
    """``field.Duplicate`` for items of the list at ``path`` repeating ``key``."""
    seen: set[Any] = set()
    out: list[StatusCause] = []
    for item_path, item in items(obj, path):
        value = item.get(key) if isinstance(item, dict) else None
        if value is None:
            continue
        if value in seen:
            out.append(field_error("FieldValueDuplicate", f"{item_path}.{key}", "", value))
        seen.add(value)
    return out


def set_default(obj: Obj, path: str, value: Any) -> None:
    """Set ``path`` (creating maps on the way) unless a value is there."""
    *parents, last = path.split(".")
    cur = obj
    for part in parents:
        nxt = cur.get(part)
        if not isinstance(nxt, dict):
            nxt = cur[part] = {}
        cur = nxt
    if cur.get(last) is None:
        cur[last] = value


def empty_status(obj: Obj) -> None:
    """``PrepareForCreate`` of a kind whose status struct has only omitempty fields: a
    create sets no status, and the empty struct reads ``{}``."""
    obj["status"] = {}


def spec_of(obj: Obj) -> dict[str, Any]:
    """``obj["spec"]``, made a map first when missing or not one."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    return spec
