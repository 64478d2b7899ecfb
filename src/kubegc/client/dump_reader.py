"""Reading a dump: the objects of what ``kubectl get -A -o json <resources>`` (or ``-o
yaml``) prints, lists flattened, in file order (``DumpClient`` in ``client/dump.py`` serves
them; ``client/dump_items.py`` decodes a big JSON List a chunk at a time).
May import: ``kubegc.api``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import yaml

from kubegc.api.interning import intern_common
from kubegc.api.types import Obj
from kubegc.client.dump_items import list_items, stream_list

#: libyaml's safe loader where PyYAML was built with it: the same objects as
#: ``yaml.safe_load_all``, ~2.5x faster (10,000 ConfigMaps: 7.8 s against 19.9 s)
_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: What is done to each dumped object as it is decoded, before the next one is (issue 27):
#: by default ``intern_common``; a reader that needs less of each object may keep less.
Prepare = Callable[[Obj], Obj]


def parse_dump(text: str | bytes, *, prepare: Prepare = intern_common) -> list[Obj]:
    """The objects of a dump (see the module docstring), lists flattened, in file order,
    each passed through ``prepare`` (``Prepare``).

    ``text`` may be the file's bytes (UTF-8): a JSON dump is then decoded without a ``str``
    copy of the whole file (issue 27: the peak memory of the doctor on a big dump).
    Raises ``ValueError`` when the text is neither JSON documents nor YAML (or not UTF-8),
    or holds no Kubernetes object and no List (an empty file, ``{}``, a shell error
    message: what a failed ``kubectl get ... > dump.json`` leaves behind)."""
    stripped = text.lstrip()
    docs: list[Any]
    if isinstance(stripped, bytes) and stripped[:1] == b"{":
        # a file: a List (kubectl's indented one or compact), its items a chunk at a time
        streamed = list_items(stripped, each=prepare)
        if streamed is not None:
            return _objects([streamed], None)
    if stripped[:1] in ("{", "[", b"{", b"["):
        docs = _json_documents(stripped)
    else:
        try:
            docs = list(yaml.load_all(_text(text), Loader=_YAML_LOADER))
        except yaml.YAMLError as e:
            raise ValueError(f"not a JSON or YAML dump: {e}") from e
    return _objects(docs, prepare)


def read_dump(path: Path, *, prepare: Prepare = intern_common) -> list[Obj]:
    """``parse_dump`` of the file at ``path``: a JSON List is read from the file a block
    at a time (``dump_items.stream_list``), so the whole file is never held."""
    with path.open("rb") as file:
        streamed = stream_list(file, each=prepare)
    if streamed is not None:
        return _objects([streamed], None)
    return parse_dump(path.read_bytes(), prepare=prepare)


def _objects(docs: list[Any], prepare: Prepare | None) -> list[Obj]:
    """The objects of ``docs`` (``prepare`` None: their items were prepared as decoded)."""
    out: list[Obj] = []
    for doc in docs:
        if prepare is None and isinstance(doc, dict) and doc.get("kind") == "List":
            _plain_items(doc, out)  # kubectl's List of a million: its items at once
        else:
            _flatten(doc, out, api_version="", kind="", prepare=prepare)
    if not out and not any(_is_list(doc) for doc in docs):
        raise ValueError(
            "not a Kubernetes dump: it holds no object (with apiVersion, kind and metadata) "
            "and no List; make one with `kubectl get -A -o json <resources> > dump.json`")
    return out


def _plain_items(doc: dict[str, Any], out: list[Obj]) -> None:
    """``_flatten`` of a ``List`` (untyped: its items keep their own kind) whose items were
    prepared: an object is taken as it is, anything else flattened."""
    api_version = str(doc.get("apiVersion") or "")
    items = doc.get("items")
    for item in items if isinstance(items, list) else ():
        if (type(item) is dict and item.get("kind") and item.get("apiVersion")
                and "metadata" in item and type(item.get("items")) is not list):
            out.append(item)
        else:
            _flatten(item, out, api_version=api_version, kind="", prepare=None)


def _is_list(doc: Any) -> bool:
    """A (possibly empty) ``List`` or ``<Kind>List``, as ``kubectl get`` prints one."""
    return (isinstance(doc, dict) and isinstance(doc.get("items"), list)
            and str(doc.get("kind") or "").endswith("List") and bool(doc.get("apiVersion")))


def _text(data: str | bytes) -> str:
    """``data`` as text (a ``UnicodeDecodeError``, a ``ValueError``, if it is not UTF-8)."""
    return data.decode() if isinstance(data, bytes) else data


def _json_documents(data: str | bytes) -> list[Any]:
    try:
        return [orjson.loads(data)]  # one document: the common case, and ~5x faster
    except orjson.JSONDecodeError:
        pass  # several documents one after the other, or not JSON at all
    text = _text(data)
    decoder = json.JSONDecoder()
    docs: list[Any] = []
    pos = 0
    while pos < len(text):
        try:
            doc, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            raise ValueError(f"not a JSON dump: {e}") from e
        docs.append(doc)
        pos = end
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
    return docs


def _flatten(doc: Any, out: list[Obj], *, api_version: str, kind: str,
             prepare: Prepare | None) -> None:
    if isinstance(doc, list):
        for item in doc:
            _flatten(item, out, api_version=api_version, kind=kind, prepare=prepare)
        return
    if not isinstance(doc, dict):
        return
    doc_kind = str(doc.get("kind") or "")
    if isinstance(doc.get("items"), list) and (doc_kind.endswith("List") or not doc_kind):
        item_kind = doc_kind[:-4] if doc_kind not in ("List", "") else ""
        for item in doc["items"]:
            _flatten(item, out, api_version=str(doc.get("apiVersion") or ""), kind=item_kind,
                     prepare=prepare)
        return
    if kind:  # an item of a typed list (``PodList``) may omit its kind and apiVersion
        if not doc_kind:
            doc = {**doc, "kind": kind}
        if not doc.get("apiVersion") and api_version:
            doc = {**doc, "apiVersion": api_version}
    if doc.get("kind") and doc.get("apiVersion") and "metadata" in doc:
        # one whose metadata is no object is kept aside (``malformed``); by default the
        # strings objects repeat are held once (``intern_common``: a tenth of decoding them)
        out.append(prepare(doc) if prepare is not None else doc)


__all__ = ["Prepare", "parse_dump", "read_dump"]
