"""The steps of a CREATE before its write, which ``Store.create_stored`` runs in upstream's
order (cf. the generic Store's ``Create`` and ``rest.BeforeCreate``): the kind checked
against the request's, the metadata prepared (``PrepareForCreate`` of ObjectMeta: namespace,
uid, creationTimestamp, generation; deletion fields dropped), a name made up from a
``generateName`` (``names.SimpleNameGenerator``), and validation (the strategy's
``PrepareForCreate``, ObjectMeta, the strategy's ``Validate``).
"""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any

from kubegc.api import errors
from kubegc.api.clock import format_time
from kubegc.api.meta import new_uid
from kubegc.api.types import Obj
from kubegc.registry.generic.checks import validate_object_meta
from kubegc.registry.generic.decoding import check_type_meta
from kubegc.registry.generic.strategy import Strategy
from kubegc.registry.generic.target import Target

#: The characters of a made-up name's suffix (``utilrand.String``'s alphabet).
_GENERATE_CHARS = "bcdfghjklmnpqrstvwxz2456789"
#: Names made up for one create before it gives up (upstream retries on AlreadyExists).
MAX_GENERATE_ATTEMPTS = 8


def check_kind(t: Target, obj: Obj) -> Obj:
    """``obj`` with the apiVersion and kind ``t`` serves (a wrong one refused)."""
    if not isinstance(obj, dict):
        raise errors.bad_request("the object provided is unrecognized (must be of type object)")
    check_type_meta(t, obj)
    obj["apiVersion"], obj["kind"] = errors.checked_kind(
        obj, t.info.api_version(t.version), t.info.kind)
    return obj


def prepare_meta_for_create(t: Target, obj: Obj, now: datetime) -> dict[str, Any]:
    """``obj``'s metadata made ready for a create at ``now`` (edited in place)."""
    meta = obj.get("metadata")
    if meta is None:
        meta = obj["metadata"] = {}
    if not isinstance(meta, dict):
        raise errors.bad_request("metadata must be an object")
    ns = meta.get("namespace") or ""
    if t.info.namespaced:
        if ns and t.namespace and ns != t.namespace:
            raise errors.bad_request(
                "the namespace of the provided object does not match the namespace sent on "
                "the request")
        meta["namespace"] = t.namespace or ns
    else:
        meta.pop("namespace", None)
    for key in ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
        meta.pop(key, None)
    meta.setdefault("name", "")  # absent: refused by validation, after PrepareForCreate
    meta["uid"] = new_uid()
    meta["creationTimestamp"] = format_time(now)
    if t.strategy.tracks_generation:
        meta["generation"] = 1
    else:
        meta.pop("generation", None)
    return meta


def generate_name(prefix: str) -> str:
    """A name made up from a ``generateName`` prefix."""
    return prefix + "".join(secrets.choice(_GENERATE_CHARS) for _ in range(5))


def validate_create(t: Target, strategy: Strategy, obj: Obj) -> None:
    """The strategy's ``PrepareForCreate``, then validation: Invalid with every cause."""
    strategy.prepare_for_create(obj)
    causes = validate_object_meta(t, strategy, obj)
    causes += strategy.validate(obj)
    if causes:
        meta = obj["metadata"]
        raise errors.invalid(t.info.kind, t.info.group, str(meta.get("name") or ""), causes)


__all__ = [
    "MAX_GENERATE_ATTEMPTS",
    "check_kind",
    "generate_name",
    "prepare_meta_for_create",
    "validate_create",
]
