"""Maps and sets that give back their room once most of their entries are gone (issue 27:
nothing kept for what is gone).

CPython's ``dict`` and ``set`` never shrink when keys are deleted: a map that once held
the uids of 100,000 objects keeps its ~4 MB table after they are all deleted, until a
later insertion happens to resize it. The long-lived maps whose keys come and go with the
objects (an informer's store, the GC's graph, the work queues) call ``compacted`` after a
deletion: it returns the table itself, or, once the table holds a small share of the
entries its room allows, a copy (``.copy()`` of a ``dict``, ``set`` or ``OrderedDict``
sizes the new table for what is left), which the caller keeps instead. The check is
``sys.getsizeof`` (constant time), so a call costs ~0.1 µs; a table is copied at most
once for each eightfold fall of its size, so copies cost O(1) per deletion amortised.

It lives in ``kubegc.api`` so that the client and the controllers may both use it.
"""

from __future__ import annotations

import sys
from typing import Protocol, Self, TypeVar

#: bytes per entry a freshly copied table takes (dict ~26-52, set ~33-66, OrderedDict
#: ~75-110 at 3.11)
FRESH_BYTES_PER_ENTRY = 80
#: a table is copied once its room is this many times what a fresh copy would take ...
SPARSE_FACTOR = 8
#: ... and above these bytes (a small table costs nothing worth a copy)
MIN_ROOM = 64 << 10


class Table(Protocol):
    """A ``dict``, ``set`` or ``OrderedDict`` (what ``copy`` sizes for its entries)."""

    def copy(self) -> Self: ...

    def __len__(self) -> int: ...


T = TypeVar("T", bound=Table)


def is_sparse(table: Table) -> bool:
    """``table`` holds fewer than ``1 / SPARSE_FACTOR`` of the entries its room allows."""
    room = sys.getsizeof(table)
    return room > MIN_ROOM and room > SPARSE_FACTOR * FRESH_BYTES_PER_ENTRY * len(table)


def compacted(table: T) -> T:
    """``table``, or a copy sized for its entries when ``is_sparse(table)``: the caller
    replaces its table with the result (nobody else may hold the old one)."""
    return table.copy() if is_sparse(table) else table
