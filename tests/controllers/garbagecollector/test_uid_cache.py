"""The absent-owner LRU cache (upstream's ``absentOwnerCache``, uid_cache.go)."""

from __future__ import annotations

import pytest

from kubegc.api.meta import ObjectReference
from kubegc.controllers.garbagecollector import AbsentReason, ReferenceCache


def ref(uid: str, namespace: str = "ns1") -> ObjectReference:
    return ObjectReference("v1", "ReplicationController", f"rc{uid}", uid, namespace)


def test_lru_evicts_least_recently_used_and_has_promotes() -> None:
    cache = ReferenceCache(2)
    cache.add(ref("1"))
    cache.add(ref("2"))
    assert cache.has(ref("1"))  # promotes 1
    cache.add(ref("3"))  # evicts 2
    assert cache.keys() == [ref("1"), ref("3")]
    assert not cache.has(ref("2"))


def test_key_includes_namespace_and_remembers_reason() -> None:
    cache = ReferenceCache()
    cache.add(ref("1", "ns1"), AbsentReason.UID_MISMATCH)
    assert cache.get(ref("1", "ns1")) is AbsentReason.UID_MISMATCH
    assert not cache.has(ref("1", "ns2"))
    assert not cache.has(ref("1", ""))
    assert cache.max_entries == 500


def test_size_must_be_positive() -> None:
    with pytest.raises(ValueError):
        ReferenceCache(0)
