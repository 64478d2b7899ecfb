"""LIST with selectors and paging (cf. the generic Store's ``List`` and etcd3 store's
``GetList``): ``limit`` counts matching objects, ``continue`` resumes at the same revision,
``resourceVersion`` picks the revision read.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import orjson

from kubegc.api import errors
from kubegc.api.fields import (
    FieldSelector,
    object_fields,
    parse_field_selector,
    validate_field_selector,
)
from kubegc.api.goformat import go_quote
from kubegc.api.labels import LabelSelector, parse_label_selector
from kubegc.api.types import Obj
from kubegc.registry.generic.stale import read_revision
from kubegc.registry.generic.store import Store
from kubegc.registry.generic.target import Target, decode, with_resource_version
from kubegc.storage import CompactedError, FutureRevisionError, KeyValue, prefix_end

_CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted between "
    "the time the first chunk was returned and now may show up in the list."
)


class Filter:
    """Label + field selector predicate over stored objects of one resource."""

    def __init__(self, t: Target, label_selector: str = "", field_selector: str = "") -> None:
        self.t = t
        self.labels: LabelSelector | None = (
            parse_label_selector(label_selector) if label_selector else None)
        self.fields: FieldSelector | None = None
        if field_selector:
            self.fields = parse_field_selector(field_selector)
            validate_field_selector(t.info.group, t.info.resource, self.fields)

    @property
    def empty(self) -> bool:
        return self.labels is None and self.fields is None

    def __call__(self, obj: Obj) -> bool:
        if self.labels is not None and not self.labels.matches(
                (obj.get("metadata") or {}).get("labels") or {}):
            return False
        if self.fields is not None:
            fields = object_fields(self.t.info.group, self.t.info.resource, obj)
            if not self.fields.matches(fields):
                return False
        return True

    def exact_name(self) -> str | None:
        return self.fields.exact_value("metadata.name") if self.fields is not None else None


def encode_continue(revision: int, start: str) -> str:
    raw = orjson.dumps({"v": "meta.k8s.io/v1", "rv": revision, "start": start})
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, str]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data = orjson.loads(raw)
        return int(data["rv"]), str(data["start"])
    except (ValueError, KeyError, TypeError, orjson.JSONDecodeError):
        raise errors.bad_request(f"invalid continue token: {token}") from None


@dataclass(slots=True)
class Page:
    """The stored key-values a LIST selected, the revision it read, its continue token."""

    kvs: list[KeyValue]
    revision: int
    continue_: str


async def _select(
    store: Store, t: Target, predicate: Filter | None, *, limit: int, continue_: str,
    resource_version: str, resource_version_match: str,
) -> Page:
    """The stored key-values a LIST returns (``predicate`` None: every object)."""
    prefix = t.key_root()
    start, revision = prefix, 0
    if continue_:
        revision, suffix = decode_continue(continue_)
        start = prefix + suffix
    elif resource_version and resource_version != "0" and resource_version_match == "Exact":
        revision = parse_resource_version(resource_version)
    if not revision:
        revision = read_revision.get()  # a lagging view (stale.py), else 0: the current
    selected: list[KeyValue] = []
    next_start = ""
    # A name the field selector pins (``RequiresExactMatch("metadata.name")``, as the
    # generic Store's ``ListPredicate`` uses it, and the cacher's ``metadata.name`` index
    # answers) is the key's last segment: the storage selects those keys, and the other
    # objects are neither read nor decoded (the root CA publisher's LIST of
    # ``kube-root-ca.crt`` in every namespace, at every start).
    suffix = "/" + name if predicate is not None and (name := predicate.exact_name()) else ""
    try:
        while True:
            want = (limit - len(selected)) if limit else 0
            page = await store.kv.range(start, end=prefix_end(prefix), revision=revision,
                                        limit=want, key_suffix=suffix)
            revision = revision or page.revision
            if predicate is None:
                selected.extend(page.kvs)
            else:
                selected.extend(kv for kv in page.kvs if predicate(decode(kv, shared=False)))
            if not page.more:
                break
            start = page.kvs[-1].key + "\x00"
            if limit and len(selected) >= limit:
                next_start = start[len(prefix):]
                break
    except CompactedError:
        if continue_:
            raise errors.resource_expired(_CONTINUE_EXPIRED) from None
        raise errors.resource_expired(
            f"too old resource version: {resource_version} ({store.kv.compact_revision})"
        ) from None
    except FutureRevisionError:
        raise errors.too_large_resource_version(
            revision, store.kv.current_revision) from None
    token = encode_continue(revision, next_start) if next_start else ""
    return Page(selected, revision, token)


def _list_metadata(page: Page) -> dict[str, Any]:
    metadata: dict[str, Any] = {"resourceVersion": str(page.revision)}
    if page.continue_:
        metadata["continue"] = page.continue_
    return metadata


async def list_objects(
    store: Store, t: Target, *, label_selector: str = "", field_selector: str = "",
    limit: int = 0, continue_: str = "", resource_version: str = "",
    resource_version_match: str = "",
) -> Obj:
    page = await select(store, t, label_selector=label_selector, field_selector=field_selector,
                        limit=limit, continue_=continue_, resource_version=resource_version,
                        resource_version_match=resource_version_match)
    return list_answer(t, page, [store.present(t, decode(kv)) for kv in page.kvs])


async def select(
    store: Store, t: Target, *, label_selector: str = "", field_selector: str = "",
    limit: int = 0, continue_: str = "", resource_version: str = "",
    resource_version_match: str = "",
) -> Page:
    """The stored key-values a LIST with these options returns (``list_objects`` decodes
    them; DeleteCollection also writes against their mod revisions)."""
    predicate = Filter(t, label_selector, field_selector)
    return await _select(store, t, None if predicate.empty else predicate, limit=limit,
                         continue_=continue_, resource_version=resource_version,
                         resource_version_match=resource_version_match)


def list_answer(t: Target, page: Page, items: list[Obj]) -> Obj:
    """The List object of ``items``, the objects of ``page`` as served."""
    for item in items:
        item.setdefault("apiVersion", t.info.api_version(t.version))
        item.setdefault("kind", t.info.kind)
    return {
        "kind": t.info.list_kind_name,
        "apiVersion": t.info.api_version(t.version),
        "metadata": _list_metadata(page),
        "items": items,
    }


def _encoded_head(t: Target, page: Page) -> bytes:
    """The list's JSON up to its first item: ``{"kind":..,"metadata":{..},"items":[``."""
    head = orjson.dumps({"kind": t.info.list_kind_name,
                         "apiVersion": t.info.api_version(t.version),
                         "metadata": _list_metadata(page)})
    return head[:-1] + b',"items":['


def _encoded_items(kvs: list[KeyValue]) -> bytes:
    return b",".join(with_resource_version(kv.value, kv.mod_revision) for kv in kvs)


async def list_encoded(
    store: Store, t: Target, *, limit: int = 0, continue_: str = "",
    resource_version: str = "", resource_version_match: str = "",
) -> bytes:
    """A plain LIST without selectors of a resource served as stored, encoded straight
    from the stored bytes (no decoding): the fast path of ``GET <collection>``."""
    page = await _select(store, t, None, limit=limit, continue_=continue_,
                         resource_version=resource_version,
                         resource_version_match=resource_version_match)
    return _encoded_head(t, page) + _encoded_items(page.kvs) + b"]}"


#: Objects a streamed LIST (or a watch's initial events) reads from storage at a time.
STREAM_PAGE = 1000


async def list_encoded_stream(
    store: Store, t: Target, *, resource_version: str = "", resource_version_match: str = "",
) -> AsyncIterator[bytes]:
    """``list_encoded`` without a limit, in pieces whose concatenation is its bytes: the
    storage is read ``STREAM_PAGE`` keys at a time at the revision of the first read (the
    continue token's paging), each page encoded as it is read, so that no more than a page
    is held — upstream's streaming list encoder (KEP-5116,
    ``responsewriters.StreamingEncoder`` in k8s.io/apiserver/pkg/endpoints/handlers).

    The first page is read before this returns, so that a bad ``resourceVersion`` fails
    before a byte is sent; a later page can still fail (compaction overtook the list):
    then the iterator raises and the answer is cut short, which a client sees as a broken
    response and lists again."""
    page = await _select(store, t, None, limit=STREAM_PAGE, continue_="",
                         resource_version=resource_version,
                         resource_version_match=resource_version_match)
    first = _encoded_head(t, Page([], page.revision, "")) + _encoded_items(page.kvs)
    return _encoded_pages(store, t, first, page)


async def _encoded_pages(store: Store, t: Target, first: bytes, page: Page
                         ) -> AsyncIterator[bytes]:
    yield first
    sent = bool(page.kvs)
    while page.continue_:
        page = await _select(store, t, None, limit=STREAM_PAGE, continue_=page.continue_,
                             resource_version="", resource_version_match="")
        if page.kvs:
            yield (b"," if sent else b"") + _encoded_items(page.kvs)
            sent = True
    yield b"]}"


def parse_resource_version(resource_version: str) -> int:
    """A request's resourceVersion as a revision, as ``APIObjectVersioner.
    ParseResourceVersion`` reads it: "" and "0" are 0, anything else a base-10 uint64
    (``strconv.ParseUint``). Upstream's ``InvalidError`` reaches the client as a 500 today
    (kubernetes/kubernetes#139485); kubegc answers 400 with its text, as
    kubernetes/kubernetes#139525 does."""
    if resource_version in ("", "0"):
        return 0
    problem = ""
    if not (resource_version.isascii() and resource_version.isdigit()):
        problem = "invalid syntax"
    elif int(resource_version) >= 2 ** 64:
        problem = "value out of range"
    if problem:
        quoted = go_quote(resource_version)
        raise errors.bad_request(f"resourceVersion: Invalid value: {quoted}: "
                                 f"strconv.ParseUint: parsing {quoted}: {problem}")
    return int(resource_version)
