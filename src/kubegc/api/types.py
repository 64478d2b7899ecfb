"""Domain scalars and the JSON shape of objects.

Objects at the server and registry boundary are JSON-shaped dicts with Kubernetes'
camelCase keys. ``resourceVersion`` is an opaque string at the API and an integer
revision inside storage; only the registry converts between the two.
"""

from __future__ import annotations

import copy
from typing import Any, TypeVar

import orjson

#: A Kubernetes object as decoded from JSON (``{"apiVersion", "kind", "metadata", ...}``).
Obj = dict[str, Any]

_T = TypeVar("_T")


def clone(value: _T) -> _T:
    """A deep copy of a JSON-shaped value, ~30x faster than ``copy.deepcopy`` (one orjson
    round trip). Falls back to ``deepcopy`` for values JSON cannot hold."""
    try:
        copied: _T = orjson.loads(orjson.dumps(value))
    except TypeError:
        return copy.deepcopy(value)
    return copied
