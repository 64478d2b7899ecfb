"""The metadata informers' caches, written when the server stops and read back when it
starts again on the same store, instead of listing every object (issue 27: restart).

A restart otherwise reads every stored object from SQLite, decodes its whole JSON and
throws away all but its metadata: ~20 of the ~25 µs each object costs before ``/readyz``.
Reading the metadata back from a file of its own costs a few µs.

What a ``CachedList`` stands for is what a LIST at its ``resource_version`` would have
answered (the informer's cache as of the last event it applied), so an informer started
from one behaves as after that LIST: its handlers get ``on_add(obj, True)`` for each
object, ``has_synced`` turns True, and it watches from that resourceVersion — the watch
cache replays what changed since, or answers 410 (older than its window) and the informer
lists, as after any expired resourceVersion.

The file is trusted only when nothing can have changed in between: it records the store's
revision when it was written (after every writer stopped), and it is read only if the
store's revision at the next start is that one; it is removed once read (a later crash
leaves none behind). Anything else — a missing, partial, corrupt or stale file, another
format — and it is ignored: the informers list, as they always did.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import orjson

from kubegc.api.interning import intern_common
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.cache.reflector import CachedList
from kubegc.client.cache.shared_informer import share_metadata

log = logging.getLogger(__name__)

#: the format written; a file of another is ignored
FORMAT = "kubegc.informer-caches/v1"


class _Invalid(Exception):
    pass


def write_caches(path: Path, revision: int,
                 caches: Mapping[GroupVersionResource, CachedList]) -> None:
    """Write ``caches`` for a start on the store at ``revision`` (one JSON document per
    line: the header, then per resource its header and its objects), atomically."""
    tmp = path.with_name(path.name + ".tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    # owner-only, as the store: annotations can hold what a Secret holds
    with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
        f.write(orjson.dumps({"format": FORMAT, "revision": revision,
                              "resources": len(caches)}) + b"\n")
        for gvr, cached in caches.items():
            f.write(orjson.dumps({"group": gvr.group, "version": gvr.version,
                                  "resource": gvr.resource,
                                  "resourceVersion": cached.resource_version,
                                  "items": len(cached.items)}) + b"\n")
            f.writelines(orjson.dumps(obj) + b"\n" for obj in cached.items)
    os.replace(tmp, path)


def read_caches(path: Path, revision: int) -> dict[GroupVersionResource, CachedList]:
    """The caches ``path`` holds if it was written for the store at ``revision``, else
    none; the file is removed either way."""
    if not path.exists():
        return {}
    try:
        with path.open("rb") as f:
            return _read(f, revision)
    except (OSError, ValueError, KeyError, TypeError, _Invalid) as e:
        log.warning("informer caches %s not used (%s): the informers list", path, e)
        return {}
    finally:
        with contextlib.suppress(OSError):
            path.unlink()


def _read(f: IO[bytes], revision: int) -> dict[GroupVersionResource, CachedList]:
    lines = iter(f)
    header = _document(lines)
    if header.get("format") != FORMAT:
        raise _Invalid(f"format {header.get('format')!r}")
    if header.get("revision") != revision:
        raise _Invalid(f"written at revision {header.get('revision')}, the store is at "
                       f"{revision}")
    caches: dict[GroupVersionResource, CachedList] = {}
    for _ in range(int(header["resources"])):
        head = _document(lines)
        gvr = GroupVersionResource(str(head["group"]), str(head["version"]),
                                   str(head["resource"]))
        items = [_item(_document(lines)) for _ in range(int(head["items"]))]
        caches[gvr] = CachedList(items, str(head["resourceVersion"]))
    if next(lines, None) is not None:
        raise _Invalid("more than its headers announce")
    return caches


def _document(lines: Iterator[bytes]) -> dict[str, Any]:
    line = next(lines, None)
    if line is None:
        raise _Invalid("cut short")
    doc = orjson.loads(line)
    if type(doc) is not dict:
        raise _Invalid("not an object")
    return doc


def _item(obj: dict[str, Any]) -> Obj:
    """An object as the live informer keeps it: its repeated strings and values shared."""
    meta = obj.get("metadata")
    if type(meta) is not dict or "managedFields" in meta:
        raise _Invalid("not a metadata-only object")
    intern_common(obj)
    share_metadata(meta)
    return obj
