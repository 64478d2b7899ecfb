"""The kopf operator (``kopf_copier.py``) converges under the faults of docs/faults.md, run
by ``kopf.testing.KopfRunner`` against a real kubegc."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import copy_data, eventually, owner

from kubegc.testing import Cluster

OPERATOR = str(Path(__file__).with_name("kopf_copier.py"))


@pytest.fixture
def kopf_running(cluster: Cluster, ns: str) -> Iterator[Any]:
    from kopf.testing import KopfRunner

    with cluster.default_kubeconfig(), KopfRunner(
            ["run", "--standalone", "--namespace", ns, OPERATOR], timeout=60) as runner:
        yield runner


def of_kopf(ns: str, **match: str) -> dict[str, str]:
    return {"namespace": ns, "userAgent": "^kopf", **match}


def converged(core: Any, ns: str, name: str, data: dict[str, str]) -> None:
    eventually(lambda: copy_data(core, ns, name) == data, timeout=30, what=f"{name}-copy")


def test_kopf_survives_errors_and_hangs(cluster: Cluster, core: Any, ns: str,
                                        kopf_running: Any) -> None:
    owner(core, ns, "a", {"k": "1"})
    converged(core, ns, "a", {"k": "1"})
    with cluster.faults.conflicts(on=of_kopf(ns), times=3), \
            cluster.faults.errors(500, on=of_kopf(ns, verb="get"), times=2):
        core.patch_namespaced_config_map("a", ns, {"data": {"k": "2"}})
        converged(core, ns, "a", {"k": "2"})
    with cluster.faults.hang(on=of_kopf(ns, verb="watch")) as hang:
        owner(core, ns, "b", {"k": "1"})
        # kopf's watch requests time out (client_timeout) and are retried, not stuck
        eventually(lambda: cluster.faults.fired(hang["id"]) >= 2, timeout=30,
                   what="a second watch attempt")
    converged(core, ns, "b", {"k": "1"})  # the next watch attempt goes through
    with cluster.faults.expire_watches(on=of_kopf(ns)):
        owner(core, ns, "c", {"k": "1"})
        converged(core, ns, "c", {"k": "1"})


def test_kopf_rewrites_a_copy_of_a_recreated_owner(cluster: Cluster, core: Any, ns: str,
                                                   kopf_running: Any) -> None:
    owner(core, ns, "a", {"k": "1"})
    converged(core, ns, "a", {"k": "1"})
    fresh = cluster.delete_and_recreate("v1/configmaps", "a", ns)
    eventually(lambda: (c := core.read_namespaced_config_map("a-copy", ns)
                        if copy_data(core, ns, "a") is not None else None) is not None
               and c.metadata.owner_references[0].uid == fresh["metadata"]["uid"],
               timeout=30, what="the copy of the new owner")
