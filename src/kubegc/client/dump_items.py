"""Decode a ``List`` dump an item at a time (issue 27: the doctor's peak memory).

``orjson.loads`` of a whole dump holds, at once, the file's bytes, its document tree of the
whole file (~1.4 KB per object) and every decoded object with its own copy of each string
objects repeat. A List's items are decoded here a chunk of ~1 MB at a time instead, each
object (an item that is a map) handed to ``each`` (interning its repeated strings,
dropping what no reader needs)
before the next chunk is decoded; ``stream_list`` reads the file a block at a time, so
neither the file nor its tree is ever held whole.

Where one chunk ends: a List's items are separated by ``}``, ``,``, ``{``. In a List
printed indented (``kubectl get -o json``: ``{``, newline, the top-level keys one indent
in, each item two indents in) the line ``<2 indents>}`` can only close an item, since in
JSON a raw newline only ever occurs between tokens. In compact JSON a ``},{`` may also
separate the objects of a list inside an item (two ownerReferences), so a candidate there
(``},{"apiVersion":`` or ``"kind":``, as items begin) is checked: ``[`` + the chunk + ``]``
decodes only when the chunk ends after a whole item (an inner list left open makes it
invalid). A chunk that does not decode is decoded an item at a time: ``orjson`` decodes
the first value of a window and reports where it ended ("unexpected content after
document"), and the item is decoded again from exactly those bytes.

Anything else (several documents, YAML, a shape not recognised, invalid JSON) returns None
and the caller decodes the whole file as before, which also phrases any error.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from typing import Any, BinaryIO

import orjson

from kubegc.api.interning import intern_common
from kubegc.api.types import Obj

#: bytes of items decoded at once, and read from the file at once
CHUNK = 1 << 20
#: a window for one item (grown 4x until the item fits)
_WINDOW = 1 << 14
_HEAD = re.compile(rb"\s*\{(?:\r?\n( +)\")?")
_ITEMS = re.compile(rb'"items"\s*:\s*\[')
_SPACE = b" \t\r\n"
#: after an item of a compact List: the next item's first key
_COMPACT = re.compile(rb'\}(?=\s*,\s*\{\s*"(?:apiVersion|kind)"\s*:)')
_AFTER_DOCUMENT = "unexpected content after document"
_CLOSE, _COMMA = ord("]"), ord(",")


class _Reader:
    """The file's bytes from ``pos`` on, read a block at a time (``buf[pos:]`` is what
    has not been consumed; at most a few ``CHUNK``s are held). ``offset`` is where
    ``buf`` starts in the file: ``at()`` is a position that outlives refills."""

    def __init__(self, file: BinaryIO, first: bytes) -> None:
        self.file = file
        self.buf = first
        self.pos = 0
        self.offset = 0
        self.eof = False

    def at(self) -> int:
        return self.offset + self.pos

    def fill(self, need: int) -> None:
        """At least ``need`` bytes after ``pos``, unless the file ends first."""
        if len(self.buf) - self.pos >= need or self.eof:
            return
        parts = [self.buf[self.pos:]]
        have = len(parts[0])
        while have < need:
            block = self.file.read(max(CHUNK, need - have))
            if not block:
                self.eof = True
                break
            parts.append(block)
            have += len(block)
        self.offset += self.pos
        self.buf, self.pos = b"".join(parts), 0

    def skip_space(self) -> int:
        """The next byte that is not white space (-1 at the end of the file)."""
        while True:
            self.fill(1)
            buf, pos = self.buf, self.pos
            while pos < len(buf) and buf[pos] in _SPACE:
                pos += 1
            self.pos = pos
            if pos < len(buf):
                return buf[pos]
            if self.eof:
                return -1
            self.fill(CHUNK)

    def rest(self) -> bytes:
        self.fill(CHUNK)
        out = self.buf[self.pos:] + (b"" if self.eof else self.file.read())
        self.buf, self.pos, self.eof = b"", 0, True
        return out


def stream_list(file: BinaryIO, each: Callable[[Obj], Obj] = intern_common
                ) -> dict[str, Any] | None:
    """The List document of ``file`` with each item decoded one chunk at a time, and each
    that is an object passed through ``each`` (in a list comprehension: no call of a
    wrapper per object); None when ``file`` is not one List (see the module docstring). The
    file is read from its current position; on None it may have been read to any point."""
    reader = _Reader(file, file.read(CHUNK))
    head = _HEAD.match(reader.buf)
    opening = _ITEMS.search(reader.buf)
    if head is None or opening is None:
        return None
    prefix = reader.buf[:opening.end()]
    try:  # "items" is a key of the List itself, not of something in it
        orjson.loads(prefix + b"]}")
    except orjson.JSONDecodeError:
        return None
    indent = head.group(1)
    boundary = (re.compile(rb"\n" + re.escape(indent * 2) + rb"\}") if indent else _COMPACT)
    reader.pos = opening.end()
    items = _items(reader, boundary, each)
    if items is None:
        return None
    try:  # the List without its items: the closing "]" and what follows it
        doc = orjson.loads(prefix + reader.rest())
    except orjson.JSONDecodeError:
        return None
    if not isinstance(doc, dict) or doc.get("items") != []:
        return None
    doc["items"] = items
    return doc


def list_items(data: bytes, each: Callable[[Obj], Obj] = intern_common) -> dict[str, Any] | None:
    """``stream_list`` over bytes already read."""
    return stream_list(io.BytesIO(data), each)


def _items(reader: _Reader, boundary: re.Pattern[bytes], each: Callable[[Obj], Obj]
           ) -> list[Any] | None:
    """The items up to the List's closing ``]`` (left unread); None if they do not decode."""
    items: list[Any] = []
    first = True
    while True:
        nxt = reader.skip_space()
        if nxt == _CLOSE:
            return items
        if not first:
            if nxt != _COMMA:
                return None
            reader.pos += 1
            reader.skip_space()
        first = False
        if not _chunk(reader, boundary, each, items):
            return None


def _chunk(reader: _Reader, boundary: re.Pattern[bytes], each: Callable[[Obj], Obj],
           items: list[Any]) -> bool:
    """Decode the items of about one ``CHUNK`` from ``reader.pos`` into ``items``, leaving
    ``pos`` after the last one; False if they do not decode."""
    reader.fill(2 * CHUNK)
    buf, start = reader.buf, reader.pos
    found = boundary.search(buf, start + CHUNK) if len(buf) - start > CHUNK else None
    if found is None and reader.eof and _last(reader, each, items):
        return True
    if found is None:  # one item is huge: one item
        return _one_by_one(reader, reader.at() + 1, each, items)
    try:
        decoded = orjson.loads(b"[" + buf[start:found.end()] + b"]")
    except orjson.JSONDecodeError:  # an inner list's separator: an item at a time
        return _one_by_one(reader, reader.offset + found.end(), each, items)
    items.extend([each(i) if type(i) is dict else i for i in decoded])
    reader.pos = found.end()
    return True


def _last(reader: _Reader, each: Callable[[Obj], Obj], items: list[Any]) -> bool:
    """The items up to the List's closing ``]``, in the last bytes of the file (a ``]``
    among the last few is the List's if what precedes it decodes as its items)."""
    buf, start = reader.buf, reader.pos
    end = len(buf)
    for _ in range(4):
        end = buf.rfind(b"]", start, end)
        if end < 0:
            return False
        try:
            decoded = orjson.loads(b"[" + buf[start:end] + b"]")
        except orjson.JSONDecodeError:
            continue
        items.extend([each(i) if type(i) is dict else i for i in decoded])
        reader.pos = end
        return True
    return False


def _one_by_one(reader: _Reader, stop: int, each: Callable[[Obj], Obj], items: list[Any]
                ) -> bool:
    """Items one at a time until one ends at or after the file position ``stop``."""
    while True:
        item = _one(reader)
        if item is None:
            return False
        items.append(each(item[0]) if type(item[0]) is dict else item[0])
        if reader.at() >= stop:
            return True
        if reader.skip_space() != _COMMA:
            return False
        reader.pos += 1
        reader.skip_space()


def _one(reader: _Reader) -> tuple[Any] | None:
    """The value at ``reader.pos`` (in a 1-tuple), ``pos`` left after it; None when it
    does not decode."""
    window = _WINDOW
    while True:
        reader.fill(window)
        buf, start = reader.buf, reader.pos
        view = memoryview(buf)[start:start + window]
        try:
            value = orjson.loads(view)
        except orjson.JSONDecodeError as e:
            if e.msg.startswith(_AFTER_DOCUMENT):
                end = _byte_offset(view, e.pos)
                try:
                    value = orjson.loads(view[:end])
                except orjson.JSONDecodeError:
                    return None
                reader.pos = start + end
                return (value,)
            if reader.eof and start + window >= len(buf):
                return None
            window *= 4
            continue
        reader.pos = start + len(view)
        return (value,)


def _byte_offset(view: memoryview, chars: int) -> int:
    """The byte offset in UTF-8 ``view`` of its character offset ``chars`` (orjson's
    error positions count characters)."""
    data = bytes(view)
    if data.isascii():
        return chars
    return len(data.decode(errors="ignore")[:chars].encode())
