"""The informer's local cache: objects by key, with named secondary indexes
(cf. client-go tools/cache store.go, thread_safe_store.go, index.go).

Keys are ``"<namespace>/<name>"`` for namespaced objects and ``"<name>"`` otherwise
(``meta_namespace_key``). Index functions map an object to the index values it is filed
under (for example its namespace, or the UIDs of its owners); ``by_index`` returns every
object filed under one value.

Objects are stored as given, not copied: they are shared with the informer's handlers
and must be treated as read-only (copy before mutating).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from kubegc.api.sparse import compacted
from kubegc.api.types import Obj

IndexFunc = Callable[[Obj], list[str]]
KeyFunc = Callable[[Obj], str]

#: The name of the namespace index created by ``meta_namespace_index_func``.
NAMESPACE_INDEX = "namespace"


@dataclass(frozen=True, slots=True)
class DeletedFinalStateUnknown:
    """Passed to ``on_delete`` when an object vanished while the watch was down: the
    informer saw it missing from a relist, so ``obj`` is the last state it knew, which
    may be stale (cf. client-go ``cache.DeletedFinalStateUnknown``)."""

    key: str
    obj: Obj


def meta_namespace_key(obj: Obj) -> str:
    """``"<namespace>/<name>"``, or ``"<name>"`` for cluster-scoped objects."""
    meta = obj.get("metadata") or {}
    name = str(meta.get("name") or "")
    namespace = str(meta.get("namespace") or "")
    return f"{namespace}/{name}" if namespace else name


def deletion_handling_meta_namespace_key(obj: Obj | DeletedFinalStateUnknown) -> str:
    """``meta_namespace_key`` that also accepts a ``DeletedFinalStateUnknown``."""
    if isinstance(obj, DeletedFinalStateUnknown):
        return obj.key
    return meta_namespace_key(obj)


def split_meta_namespace_key(key: str) -> tuple[str, str]:
    """``"ns/name"`` → ``("ns", "name")``; ``"name"`` → ``("", "name")``."""
    namespace, sep, name = key.partition("/")
    if not sep:
        return "", key
    if "/" in name:
        raise ValueError(f"unexpected key format: {key!r}")
    return namespace, name


def meta_namespace_index_func(obj: Obj) -> list[str]:
    """Index by namespace (cf. ``cache.MetaNamespaceIndexFunc``)."""
    return [str((obj.get("metadata") or {}).get("namespace") or "")]


class Indexer:
    """A key → object map with named indexes, for one event loop (no locking).

    Ownership: the informer that owns it is the only writer; controllers read through
    ``get_by_key``/``list``/``by_index``.

    Invariants: for every index name ``n`` and object ``o`` stored under key ``k``,
    ``k in _indices[n][v]`` for exactly the values ``v`` in ``_indexers[n](o)``; empty
    value sets are removed.
    """

    def __init__(
        self, *, key_func: KeyFunc = meta_namespace_key,
        indexers: dict[str, IndexFunc] | None = None,
    ) -> None:
        self._key_func = key_func
        self._items: dict[str, Obj] = {}
        self._indexers: dict[str, IndexFunc] = {}
        self._indices: dict[str, dict[str, set[str]]] = {}
        self.resource_version = ""  # of the last replace()
        if indexers:
            self.add_indexers(indexers)

    def key_of(self, obj: Obj) -> str:
        return self._key_func(obj)

    def add(self, obj: Obj, *, key: str | None = None) -> None:
        """Insert or replace ``obj`` under its key (``key``: the caller computed it)."""
        if key is None:
            key = self._key_func(obj)
        old = self._items.get(key)
        self._items[key] = obj
        self._update_indices(key, old, obj)

    def update(self, obj: Obj) -> None:
        """Same as ``add``: the store keeps whatever it is given last."""
        self.add(obj)

    def delete(self, obj: Obj) -> None:
        """Remove the object stored under ``obj``'s key, if any."""
        self.delete_key(self._key_func(obj))

    def delete_key(self, key: str) -> None:
        old = self._items.pop(key, None)
        if old is not None:
            self._items = compacted(self._items)
            self._update_indices(key, old, None)

    def replace(self, objs: Iterable[Obj], resource_version: str) -> None:
        """Replace the whole content with ``objs`` (indexes are rebuilt)."""
        self._items = {self._key_func(obj): obj for obj in objs}
        self.resource_version = resource_version
        self._rebuild_indices()

    def get_by_key(self, key: str) -> Obj | None:
        return self._items.get(key)

    def get(self, obj: Obj) -> Obj | None:
        """The stored object with the same key as ``obj``."""
        return self._items.get(self._key_func(obj))

    def list(self) -> builtins.list[Obj]:
        return list(self._items.values())

    def list_keys(self) -> builtins.list[str]:
        return list(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def add_indexers(self, indexers: dict[str, IndexFunc]) -> None:
        """Add named index functions; existing objects are indexed at once.

        Raises ValueError if a name is already taken (as client-go's ``AddIndexers``).
        """
        taken = sorted(set(indexers) & set(self._indexers))
        if taken:
            raise ValueError(f"indexer conflict: {taken}")
        self._indexers.update(indexers)
        for name, fn in indexers.items():
            index: dict[str, set[str]] = {}
            for key, obj in self._items.items():
                for value in fn(obj):
                    index.setdefault(value, set()).add(key)
            self._indices[name] = index

    def by_index(self, name: str, value: str) -> builtins.list[Obj]:
        """Every object filed under ``value`` in index ``name`` (KeyError if no such index)."""
        return [self._items[k] for k in sorted(self._index(name).get(value, ()))]

    def index_keys(self, name: str, value: str) -> builtins.list[str]:
        return sorted(self._index(name).get(value, ()))

    def list_index_values(self, name: str) -> builtins.list[str]:
        """Every value index ``name`` currently has objects for."""
        return sorted(self._index(name))

    def _index(self, name: str) -> dict[str, set[str]]:
        if name not in self._indices:
            raise KeyError(f"index with name {name} does not exist")
        return self._indices[name]

    def _update_indices(self, key: str, old: Obj | None, new: Obj | None) -> None:
        for name, fn in self._indexers.items():
            index = self._indices[name]
            old_values = set(fn(old)) if old is not None else set()
            new_values = set(fn(new)) if new is not None else set()
            for value in old_values - new_values:
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if keys:
                        index[value] = compacted(keys)
                    else:
                        del index[value]
                        self._indices[name] = index = compacted(index)
            for value in new_values - old_values:
                index.setdefault(value, set()).add(key)

    def _rebuild_indices(self) -> None:
        indexers = self._indexers
        self._indexers, self._indices = {}, {}
        self.add_indexers(indexers)
