"""The metadata informers' caches kept between a clean stop and the next start
(``client.cache.snapshot``): read back only for the store's revision they were written at,
never trusted when damaged, and consumed once."""

from __future__ import annotations

from pathlib import Path

from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.cache import CachedList
from kubegc.client.cache.snapshot import read_caches, write_caches

CONFIGMAPS = GroupVersionResource("", "v1", "configmaps")
SECRETS = GroupVersionResource("", "v1", "secrets")


def _partial(name: str, rv: int) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": name, "namespace": "default", "uid": f"uid-{name}",
        "resourceVersion": str(rv), "labels": {"app": "web"},
        "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o",
                             "uid": "uid-o", "blockOwnerDeletion": True}]}}


def _caches() -> dict[GroupVersionResource, CachedList]:
    return {CONFIGMAPS: CachedList([_partial("a", 5), _partial("b", 6)], "9"),
            SECRETS: CachedList([], "7")}


def test_caches_come_back_as_written_and_once(tmp_path: Path) -> None:
    path = tmp_path / "caches.jsonl"
    write_caches(path, 12, _caches())
    read = read_caches(path, 12)
    assert read == _caches()
    assert not path.exists()  # consumed: a later crash finds none
    assert read_caches(path, 12) == {}
    a, b = read[CONFIGMAPS].items
    assert a["metadata"]["labels"] is b["metadata"]["labels"]  # shared, as the live ones
    assert a["metadata"]["ownerReferences"] is b["metadata"]["ownerReferences"]


def test_caches_written_at_another_revision_are_not_used(tmp_path: Path) -> None:
    path = tmp_path / "caches.jsonl"
    write_caches(path, 12, _caches())
    assert read_caches(path, 13) == {}
    assert not path.exists()


def test_damaged_caches_are_not_used(tmp_path: Path) -> None:
    path = tmp_path / "caches.jsonl"
    write_caches(path, 12, _caches())
    whole = path.read_bytes()
    damaged = [
        whole[: len(whole) // 2],  # cut short
        whole.replace(b'"items":2', b'"items":3'),  # announces more than it holds
        whole.replace(b'"items":2', b'"items":1'),  # holds more than it announces
        whole.replace(b'{"apiVersion":"v1","kind":"ConfigMap"', b'[', 1),  # not JSON
        whole.replace(b'"name":"a"', b'"name":"a","managedFields":[]'),  # a whole object
        whole.replace(b"kubegc.informer-caches/v1", b"kubegc.informer-caches/v0"),
    ]
    for content in damaged:
        path.write_bytes(content)
        assert read_caches(path, 12) == {}, content[:80]
        assert not path.exists()


def test_caches_are_owner_only(tmp_path: Path) -> None:
    """Annotations can hold what a Secret holds (kubectl's last-applied-configuration):
    the file is 0600, as the store."""
    path = tmp_path / "caches.jsonl"
    write_caches(path, 12, _caches())
    assert path.stat().st_mode & 0o777 == 0o600
