"""Equality of JSON values as Go sees them after decoding into ``interface{}``.

Go compares decoded values by dynamic type and value: ``true`` is not ``1``, and ``1`` (an
``int64`` when the API server preserves integers) is not ``1.0`` (a ``float64``). Python's
``==`` says both pairs are equal, so the patch code compares ``canonical`` texts instead,
which also makes any JSON value usable as a dict key.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def canonical(value: Any) -> str:
    """A text that is equal for two values iff Go would find them equal."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:  # not JSON-shaped (e.g. non-string keys): the slow, general way
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                          default=str)


def json_equal(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if isinstance(a, dict | list) or isinstance(b, dict | list) or type(a) is not type(b):
        return canonical(a) == canonical(b)
    return bool(a == b)
