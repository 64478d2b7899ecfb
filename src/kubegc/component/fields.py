"""What a component can understand of the objects it acts on: the fields it reads, with
the types (and ranges) upstream's typed objects give them.

The API validates what it stores, but a store can hold objects it never validated: written
before a validation existed, loaded from a dump (``registry.restore``), written to etcd by
something else. Upstream's controllers could not even decode such an object; kubegc's read
JSON, and would fail somewhere in the middle of a sync with a Python error. A controller
checks its object's ``Fields`` first: an object that fails is reported (``NotUnderstood``,
with messages as apimachinery's field errors) and backed off by ``BaseController.handle_err``
instead of half-synced.

A field absent or null is fine (its default applies); only a value of the wrong type or out
of range is an error. Paths are dotted; ``[]`` stands for every element of a list
(``spec.ports[].port``).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from kubegc.api.clock import parse_time_or_none
from kubegc.api.types import Obj


class Type(enum.Enum):
    INT = "an integer"
    BOOL = "a boolean"
    STRING = "a string"
    MAP = "an object"
    LIST = "a list"
    STRING_MAP = "a map of strings"
    INT_OR_STRING = "an integer or a string"
    INT_OR_PERCENT = 'an integer or a percentage ("25%")'
    TIME = "a time (RFC 3339)"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_string_map(value: Any) -> bool:
    return isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items())


def _is_time(value: Any) -> bool:
    return isinstance(value, str) and parse_time_or_none(value) is not None


_CHECKS: dict[Type, Callable[[Any], bool]] = {
    Type.INT: _is_int,
    Type.BOOL: lambda v: isinstance(v, bool),
    Type.STRING: lambda v: isinstance(v, str),
    Type.MAP: lambda v: isinstance(v, dict),
    Type.LIST: lambda v: isinstance(v, list),
    Type.STRING_MAP: _is_string_map,
    Type.INT_OR_STRING: lambda v: _is_int(v) or isinstance(v, str),
    Type.INT_OR_PERCENT: lambda v: _is_int(v) or (
        isinstance(v, str) and re.fullmatch(r"[0-9]+%", v) is not None),
    Type.TIME: _is_time,
}


def _show(value: Any) -> str:
    text = orjson.dumps(value, default=str).decode()
    return text if len(text) <= 64 else text[:61] + "..."


def invalid(path: str, value: Any, detail: str) -> str:
    """apimachinery's ``field.Invalid`` message."""
    return f"{path}: Invalid value: {_show(value)}: {detail}"


@dataclass(frozen=True)
class Field:
    path: str
    type: Type
    #: the least value of an INT field (upstream's validation: e.g. replicas >= 0)
    minimum: int | None = None

    def errors(self, obj: Obj) -> Iterator[str]:
        for path, value in _values(obj, self.path.split(".")):
            if isinstance(value, _NotAMap):
                yield invalid(path, value.value, "must be an object")
            elif isinstance(value, _NotAList):
                yield invalid(path, value.value, "must be a list")
            elif value is None:
                continue
            elif not _CHECKS[self.type](value):
                yield invalid(path, value, f"must be {self.type.value}")
            elif self.minimum is not None and _is_int(value) and value < self.minimum:
                yield invalid(path, value, f"must be greater than or equal to {self.minimum}")


@dataclass(frozen=True)
class _NotAMap:
    value: Any


@dataclass(frozen=True)
class _NotAList:
    value: Any


def _values(node: Any, parts: list[str], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(path, value) of every value the path names; a parent of the wrong type is yielded
    as such (and ends that branch)."""
    if not parts:
        yield prefix, node
        return
    if not isinstance(node, dict):
        yield prefix, _NotAMap(node)
        return
    part, rest = parts[0], parts[1:]
    key = part.removesuffix("[]")
    path = f"{prefix}.{key}" if prefix else key
    value = node.get(key)
    if value is None:
        return
    if not part.endswith("[]"):
        yield from _values(value, rest, path)
    elif not isinstance(value, list):
        yield path, _NotAList(value)
    else:
        for i, item in enumerate(value):
            yield from _values(item, rest, f"{path}[{i}]")


class NotUnderstood(ValueError):
    """The object has fields a component cannot understand; ``errors`` lists them."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


class Fields:
    """The fields a component reads of one kind of object."""

    def __init__(self, *fields: Field) -> None:
        self.fields = fields

    def errors(self, obj: Obj) -> list[str]:
        """Each error once (a parent of the wrong type is named once, not per field)."""
        return list(dict.fromkeys(e for f in self.fields for e in f.errors(obj)))

    def understood(self, obj: Obj) -> bool:
        return not self.errors(obj)

    def check(self, obj: Obj) -> None:
        """Raise ``NotUnderstood`` if any field is of the wrong type or out of range."""
        errors = self.errors(obj)
        if errors:
            raise NotUnderstood(errors)


#: what every component reads of any object's metadata
METADATA = (
    Field("metadata", Type.MAP),
    Field("metadata.labels", Type.STRING_MAP),
    Field("metadata.annotations", Type.STRING_MAP),
    Field("metadata.ownerReferences", Type.LIST),
    Field("metadata.ownerReferences[].uid", Type.STRING),
    Field("metadata.ownerReferences[].name", Type.STRING),
    Field("metadata.ownerReferences[].kind", Type.STRING),
    Field("metadata.ownerReferences[].apiVersion", Type.STRING),
    Field("metadata.ownerReferences[].controller", Type.BOOL),
    Field("metadata.ownerReferences[].blockOwnerDeletion", Type.BOOL),
    Field("metadata.finalizers", Type.LIST),
    Field("metadata.deletionTimestamp", Type.TIME),
    Field("metadata.creationTimestamp", Type.TIME),
    Field("metadata.generation", Type.INT),
)


def label_selector(path: str) -> tuple[Field, ...]:
    """A ``metav1.LabelSelector`` at ``path``."""
    return (Field(path, Type.MAP), Field(f"{path}.matchLabels", Type.STRING_MAP),
            Field(f"{path}.matchExpressions", Type.LIST),
            Field(f"{path}.matchExpressions[]", Type.MAP),
            Field(f"{path}.matchExpressions[].key", Type.STRING),
            Field(f"{path}.matchExpressions[].operator", Type.STRING),
            Field(f"{path}.matchExpressions[].values", Type.LIST),
            Field(f"{path}.matchExpressions[].values[]", Type.STRING))


def pod_template(path: str) -> tuple[Field, ...]:
    """A ``PodTemplateSpec`` at ``path``: what the controllers copy into their pods."""
    return (Field(path, Type.MAP), Field(f"{path}.metadata", Type.MAP),
            Field(f"{path}.metadata.labels", Type.STRING_MAP),
            Field(f"{path}.metadata.annotations", Type.STRING_MAP),
            Field(f"{path}.metadata.finalizers", Type.LIST),
            Field(f"{path}.spec", Type.MAP),
            Field(f"{path}.spec.nodeSelector", Type.STRING_MAP),
            Field(f"{path}.spec.containers", Type.LIST),
            Field(f"{path}.spec.containers[]", Type.MAP),
            Field(f"{path}.spec.terminationGracePeriodSeconds", Type.INT, minimum=0))

