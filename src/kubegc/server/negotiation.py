"""Request-body decoding and response negotiation (JSON, Table, PartialObjectMetadata).

Bodies: JSON (also when Content-Type is missing, as kube-apiserver treats it), YAML, and
the protobuf bodies of kubectl's typed create generators. Responses are always JSON; a
client asking for protobuf gets JSON, which kubectl and client-go accept.
"""

from __future__ import annotations

import enum
import json
from typing import Any

import orjson
import yaml

from kubegc.api import errors
from kubegc.api.limits import (
    NumberOutOfRange,
    go_int,
    may_nest_deeper,
    nesting_exceeds,
    with_go_numbers,
    without_surrogates,
)
from kubegc.api.types import Obj
from kubegc.registry.typed import yamlload
from kubegc.registry.typed.messages import too_deep
from kubegc.server.protobuf import decode_protobuf_body


class Shape(enum.Enum):
    OBJECT = "object"
    TABLE = "table"
    METADATA = "metadata"  # PartialObjectMetadata(List)


def response_shape(accept: str) -> Shape:
    """The first Accept entry we can serve decides (kubectl lists Table first)."""
    for entry in accept.split(","):
        params = {}
        parts = [p.strip() for p in entry.split(";")]
        for p in parts[1:]:
            k, _, v = p.partition("=")
            params[k.strip()] = v.strip()
        as_ = params.get("as", "")
        if as_ == "Table" and params.get("g") == "meta.k8s.io":
            return Shape.TABLE
        if as_ in ("PartialObjectMetadata", "PartialObjectMetadataList") and params.get(
                "g") == "meta.k8s.io":
            return Shape.METADATA
        if not as_ and parts[0] in ("application/json", "*/*", "application/*", "",
                                    "application/vnd.kubernetes.protobuf", "application/yaml"):
            return Shape.OBJECT
    return Shape.OBJECT


def decode_body(body: bytes, content_type: str, kind: str = "") -> Any:
    """A request body as JSON values. Nesting is bounded (``api.limits.MAX_NESTING``, with
    Go's "exceeded max depth"); JSON that orjson refuses but Go reads (a lone surrogate,
    which Go makes U+FFFD) is read by the standard library; YAML is refused where Go's
    YAML is (a surrogate escape)."""
    media = content_type.split(";")[0].strip().lower()
    if media == "application/vnd.kubernetes.protobuf":
        return decode_protobuf_body(body)
    if not body.strip():
        raise errors.bad_request("the request body is empty")
    if media in ("application/yaml", "application/x-yaml", "text/yaml"):
        return _decode_yaml(body, kind)
    if media not in ("", "application/json", "*/*", "text/plain"):
        raise errors.unsupported_media_type(
            "the body of the request was in an unknown format - accepted media types include: "
            "application/json, application/yaml, application/vnd.kubernetes.protobuf")
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        value = _decode_json_slowly(body, kind)
    if may_nest_deeper(body, yaml=False) and nesting_exceeds(value):
        raise too_deep(kind or "object", body)
    return value


def _decode_json_slowly(body: bytes, kind: str) -> Any:
    try:
        return without_surrogates(json.loads(body, parse_int=go_int))
    except RecursionError:
        raise too_deep(kind or "object", body) from None
    except NumberOutOfRange as e:
        raise errors.bad_request(
            f"json: cannot unmarshal number {e} into Go value of type float64") from None
    except ValueError as e:
        raise errors.bad_request(
            f"Object 'Kind' is missing in '{body[:200].decode(errors='replace')}'"
            if body.strip().startswith(b"{") else f"couldn't decode request body: {e}"
        ) from None


def _decode_yaml(body: bytes, kind: str) -> Any:
    try:
        value = yamlload.safe_load(body)
    except RecursionError:
        raise too_deep(kind or "object", body, "[") from None
    except yaml.YAMLError as e:
        raise errors.bad_request(f"error decoding YAML: {e}") from None
    if may_nest_deeper(body, yaml=True) and nesting_exceeds(value):
        raise too_deep(kind or "object", body, "[")
    value = with_go_numbers(value)
    try:
        orjson.dumps(value)
    except TypeError:  # a surrogate escape, or a value JSON has no form for
        raise errors.bad_request(
            "error converting YAML to JSON: yaml: found invalid Unicode character escape "
            "code") from None
    return value


def partial_metadata(obj: Obj) -> Obj:
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
            "metadata": obj.get("metadata") or {}}


def partial_metadata_list(listed: Obj) -> Obj:
    return {"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
            "metadata": listed.get("metadata") or {},
            "items": [partial_metadata(i) for i in listed.get("items") or []]}
