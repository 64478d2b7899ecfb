"""What each fault finds in the naive controller (``copier.NaiveCopier``): every test
passes because the bug shows — read them as the list of what ``Copier`` does better."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from conftest import copy_data, eventually, of_controller, owner
from copier import WATCH_SECONDS, NaiveCopier
from kubernetes.client.rest import ApiException

from kubegc.testing import Cluster


def test_a_conflict_is_not_retried(cluster: Cluster, api: Any, core: Any, ns: str) -> None:
    a = owner(core, ns, "a", {"k": "1"})
    with cluster.faults.conflicts(on=of_controller(ns), times=1), \
            pytest.raises(ApiException) as raised:
        NaiveCopier(api, ns).reconcile(a)
    assert raised.value.status == 409  # and the copy is never written
    assert copy_data(core, ns, "a") is None


def test_a_stale_read_makes_it_create_twice(cluster: Cluster, api: Any, core: Any,
                                            ns: str) -> None:
    a = owner(core, ns, "a", {"k": "1"})
    naive = NaiveCopier(api, ns)
    with cluster.faults.stale_reads(on=of_controller(ns, verb="get"), seconds=60):
        naive.reconcile(a)  # creates the copy
        with pytest.raises(ApiException) as raised:
            naive.reconcile(a)  # reads "404" from the lagging view, creates again
    assert raised.value.status == 409 and raised.value.reason == "Conflict"


def _run(naive: NaiveCopier) -> tuple[threading.Thread, list[BaseException], threading.Event]:
    failures: list[BaseException] = []
    stop = threading.Event()

    def run() -> None:
        try:
            naive.run(stop)
        except BaseException as e:
            failures.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, failures, stop


def test_an_expired_watch_kills_it(cluster: Cluster, api: Any, core: Any, ns: str) -> None:
    owner(core, ns, "a", {"k": "1"})
    thread, failures, stop = _run(NaiveCopier(api, ns))
    eventually(lambda: copy_data(core, ns, "a") is not None)
    cluster.faults.add({"match": of_controller(ns), "action": {"type": "expireWatch"}})
    thread.join(10)
    stop.set()
    assert not thread.is_alive()
    assert isinstance(failures[0], ApiException) and failures[0].status == 410


def test_a_hung_watch_stops_it_silently(cluster: Cluster, api: Any, core: Any,
                                        ns: str) -> None:
    with cluster.faults.hang(on=of_controller(ns, verb="watch")) as hang:
        thread, failures, stop = _run(NaiveCopier(api, ns))
        eventually(lambda: cluster.faults.fired(hang["id"]) == 1, what="the watch hung")
        owner(core, ns, "a", {"k": "1"})
        thread.join(WATCH_SECONDS + 1)  # the robust one has relisted by now
        assert thread.is_alive() and not failures  # no error, no log: it just waits
        assert copy_data(core, ns, "a") is None
        stop.set()


def test_a_copy_written_with_a_stale_uid_is_collected(cluster: Cluster, api: Any, core: Any,
                                                       ns: str) -> None:
    old = owner(core, ns, "a", {"k": "1"})  # what the naive controller has cached
    cluster.delete_and_recreate("v1/configmaps", "a", ns)
    NaiveCopier(api, ns).reconcile(old)  # writes the copy with the old owner's uid ...
    eventually(lambda: copy_data(core, ns, "a") is None)  # ... which the GC collects
    # the naive controller is event-driven only: nothing tells it the copy is gone
