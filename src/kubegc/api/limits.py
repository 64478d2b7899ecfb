"""The size and nesting limits of what kube-apiserver accepts, in one place.

* ``MAX_REQUEST_BODY_BYTES``: 3 MiB, ``genericapiserver.Config.MaxRequestBodyBytes``
  (413 ``Request entity too large: limit is 3145728``).
* ``MAX_STORED_BYTES``: 1.5 MiB, etcd's default ``--max-request-bytes``: a write whose
  object is larger fails there (``etcdserver: request is too large``). kubegc refuses it
  on every backend, so that what works against kubegc works against a real cluster;
  kubegc stores JSON where kube-apiserver stores protobuf, so the measure is a little
  stricter than upstream's (a JSON object is ~10-40% larger).
* ``MAX_NESTING``: how deeply a request body may nest. Go's decoders stop at 10000 levels
  (``encoding/json``'s scanner: ``exceeded max depth``); kubegc's JSON codec stops at a
  few hundred, and every layer walks objects recursively, so kubegc refuses bodies nested
  more than ``MAX_NESTING`` levels, with upstream's message. No built-in object comes
  near (a Pod nests ~12 levels; a CRD's schema one level per two of its resources').
  The walkers need Python frames for it: ``RECURSION_LIMIT`` (``ensure_recursion_headroom``,
  called as the server is built) leaves room for the deepest (Go-syntax rendering of an
  invalid value in an error message: ~5 frames a level) at ``MAX_NESTING``.
* 64-bit numbers: Go's JSON decoders (``sigs.k8s.io/json``, which keeps integers) read an
  integer that does not fit an int64 as a float64, as YAML's resolver does; kubegc reads
  them the same way (``go_int``, ``with_go_numbers``), so that no number past 64 bits
  reaches a layer that cannot encode it.
* ``TOTAL_ANNOTATION_SIZE_LIMIT_B`` (256 KiB, ``ValidateAnnotationsSize``) and
  ``MAX_CONFIG_MAP_SIZE`` / ``MAX_SECRET_SIZE`` (1 MiB, ``core.MaxSecretSize``).
May import: stdlib only.
"""

from __future__ import annotations

import re
import sys
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")

MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1
MAX_STORED_BYTES = 3 * 512 * 1024
MAX_NESTING = 200
#: frames for ``MAX_NESTING`` levels at up to 20 frames a level, above the server's own
RECURSION_LIMIT = 20 * MAX_NESTING + 1000
TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * 1024
MAX_CONFIG_MAP_SIZE = 1024 * 1024
MAX_SECRET_SIZE = 1024 * 1024
#: ``etcdserver: request is too large`` (rpctypes.ErrRequestTooLarge)
REQUEST_TOO_LARGE = "etcdserver: request is too large"


def ensure_recursion_headroom() -> None:
    """Raise the interpreter's recursion limit (1000 by default) to ``RECURSION_LIMIT``, so
    that no walk of an accepted body can exhaust it (never lowers it)."""
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)


def may_nest_deeper(raw: bytes, *, yaml: bool, limit: int = MAX_NESTING) -> bool:
    """Whether a JSON (or YAML) body could nest more than ``limit`` levels: a cheap bound
    (its opening brackets; for YAML its ``:`` and ``-`` too) before the exact walk of
    ``nesting_exceeds``, so that most bodies are not walked."""
    count = raw.count(b"{") + raw.count(b"[")
    if yaml:
        count += raw.count(b":") + raw.count(b"-")
    return count > limit


def nesting_exceeds(value: Any, limit: int = MAX_NESTING) -> bool:
    """Whether ``value`` has more than ``limit`` levels of maps and lists (no recursion:
    it is what guards the recursive walkers)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if type(item) is dict:
            stack.extend((v, depth + 1) for v in item.values()
                         if type(v) is dict or type(v) is list)
        elif type(item) is list:
            stack.extend((v, depth + 1) for v in item if type(v) is dict or type(v) is list)
    return False


def without_surrogates(value: Any) -> Any:
    """``value`` (decoded by the standard library) with each lone surrogate replaced by
    U+FFFD, as Go's JSON decoder replaces it (nesting already bounded by the decoder)."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {without_surrogates(k): without_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_surrogates(v) for v in value]
    return value


class NumberOutOfRange(ValueError):
    """A JSON number no Go type holds (beyond float64); ``str(err)`` is the number."""


def go_int(text: str) -> int | float:
    """A JSON integer literal as Go reads it: an int64, or else a float64
    (``sigs.k8s.io/json``'s ``convertNumber``). Raises ``NumberOutOfRange`` past float64."""
    value = int(text)
    if INT64_MIN <= value <= INT64_MAX:
        return value
    try:
        return float(value)
    except OverflowError:
        raise NumberOutOfRange(text) from None


def with_go_numbers(value: Any) -> Any:
    """``value`` (decoded YAML) with each integer past int64 a float64, as Go's JSON
    decoder reads it, or a string past float64, as YAML's resolver reads it (nesting
    already bounded by the caller)."""
    if type(value) is int and not INT64_MIN <= value <= INT64_MAX:
        try:
            return float(value)
        except OverflowError:
            return str(value)
    if isinstance(value, dict):
        return {k: with_go_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [with_go_numbers(v) for v in value]
    return value
