"""Decode a pretty-printed ``List`` dump an item at a time (issue 27: the doctor's peak).

``orjson.loads`` of a whole dump holds, at once, the file's bytes, its document tree of the
whole file (~1.4 KB per object) and every decoded object with its own copy of each string
objects repeat. ``kubectl get -o json`` prints a List indented (``{``, newline, the
top-level keys one indent in, each item two indents in), and in JSON a raw newline only
ever occurs between tokens (one in a string is escaped): so the line ``<2 indents>}``
between the items' ``[`` and the line ``<1 indent>]`` can only close an item. Each item is
then decoded on its own and its repeated strings interned (``api.interning``) before the
next is read. Anything else (compact JSON, several documents, a shape not recognised, an
item that does not decode alone) returns None: the caller decodes the whole file as before.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from kubegc.api.interning import intern_common

_HEAD = re.compile(rb"\{\r?\n( +)\"")


def list_items(data: bytes) -> dict[str, Any] | None:
    """The List document of ``data`` with its items decoded one at a time; None when
    ``data`` is not a List printed as described in the module docstring."""
    head = _HEAD.match(data)
    if head is None:
        return None
    indent = head.group(1)
    opening = b"\n" + indent + b'"items": [\n'
    start = data.find(opening)
    closing = b"\n" + indent + b"]"
    end = data.find(closing, start)
    if start < 0 or end < 0:
        return None
    items = _items(data, start + len(opening), end, b"\n" + indent + indent + b"}")
    if items is None:
        return None
    try:
        doc = orjson.loads(data[:start + len(opening)] + data[end:])
    except orjson.JSONDecodeError:
        return None
    if not isinstance(doc, dict) or doc.get("items") != []:
        return None
    doc["items"] = items
    return doc


def _items(data: bytes, pos: int, end: int, close: bytes) -> list[Any] | None:
    items: list[Any] = []
    while pos < end:
        stop = data.find(close, pos, end)
        if stop < 0:
            return None
        stop += len(close)
        try:
            item = orjson.loads(data[pos:stop])
        except orjson.JSONDecodeError:
            return None
        items.append(intern_common(item) if isinstance(item, dict) else item)
        pos = stop + 1 if data[stop:stop + 1] == b"," else stop
    return items
