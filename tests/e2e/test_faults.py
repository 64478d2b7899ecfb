"""Fault injection against a real ``kubegc serve`` (issue 25, docs/faults.md): what kubectl
prints for each injected code, the official Python client's exceptions, delays, a hang seen
by a client with and without a timeout, watches closed and expired, and the request log.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import eventually
from tests.e2e.rbac_helpers import RBACServer, binding, rbac_server_fixture, user

faults_server = pytest.fixture(scope="module", name="rs")(rbac_server_fixture)


@pytest.fixture
def ns(rs: RBACServer) -> Iterator[str]:
    name = rs.namespace()
    yield name
    rs.http("", "DELETE", "/debug/kubegc/faults")
    rs.kubectl("", "delete", "namespace", name, "--wait=false", check=False)


def fault(rs: RBACServer, doc: dict[str, Any]) -> dict[str, Any]:
    status, body = rs.http("", "POST", "/debug/kubegc/faults", doc)
    assert status == 201, body
    assert isinstance(body, dict)
    return body


def listed(rs: RBACServer) -> list[dict[str, Any]]:
    status, body = rs.http("", "GET", "/debug/kubegc/faults")
    assert status == 200, body
    items: list[dict[str, Any]] = body["items"]
    return items


def cm(rs: RBACServer, ns: str, name: str) -> None:
    rs.kubectl("", "create", "configmap", name, "-n", ns, "--from-literal=a=1")


def test_only_system_masters_reach_the_debug_paths(rs: RBACServer) -> None:
    # alice is bound to cluster-admin (RBAC allows every non-resource URL) but is no
    # system:master: the fault API still says no
    rs.apply(binding("", "alice-admin", "ClusterRole", "cluster-admin", user("alice")))
    for method, path in [("GET", "/debug/kubegc/faults"), ("POST", "/debug/kubegc/faults"),
                         ("DELETE", "/debug/kubegc/faults/1"),
                         ("GET", "/debug/kubegc/requests")]:
        status, body = rs.http("alice", method, path, {"action": {"type": "hang"}}
                               if method == "POST" else None)
        assert status == 403, (method, path, body)
        assert body["reason"] == "Forbidden"
    for path in ["/debug/kubegc/faults", "/debug/kubegc/requests", "/debug/kubegc/controllers",
                 "/debug/kubegc/settle", "/debug/kubegc/watchers", "/debug/kubegc/access"]:
        assert rs.http("bob", "GET", path)[0] == 403, path  # a user RBAC grants nothing
    assert listed(rs) == []


def test_the_fault_api_answers_ids_and_fired_counts(rs: RBACServer, ns: str) -> None:
    body = fault(rs, {"match": {"verb": "create", "resource": "configmaps", "namespace": ns},
                      "action": {"type": "error", "code": 500}, "count": 1})
    assert body["fired"] == 0 and isinstance(body["id"], str)
    assert body["match"] == {"verb": "create", "resource": "configmaps", "namespace": ns}
    assert [f["id"] for f in listed(rs)] == [body["id"]]
    done = rs.kubectl("", "create", "configmap", "x", "-n", ns, check=False)
    assert done.returncode == 1
    assert listed(rs) == []  # count 1: gone after firing once
    cm(rs, ns, "x")  # the next one goes through
    other = fault(rs, {"action": {"type": "delay", "seconds": 0}})
    assert rs.http("", "DELETE", f"/debug/kubegc/faults/{other['id']}")[0] == 200
    assert rs.http("", "DELETE", f"/debug/kubegc/faults/{other['id']}")[0] == 404
    for bad in [{"action": {"type": "error", "code": 418}}, {"action": {"type": "nope"}},
                {"match": {"userAgent": "("}, "action": {"type": "hang"}},
                {"action": {"type": "hang"}, "probability": 2},
                {"action": {"type": "staleReads"}}, [1, 2]]:
        status, answer = rs.http("", "POST", "/debug/kubegc/faults", bad)
        assert status == 400, (bad, answer)
    assert rs.http("", "GET", "/debug/kubegc/requests?since=yesterday")[0] == 400
    # the same with kubectl's raw requests (docs/faults.md)
    made = json.loads(rs.kubectl("", "create", "--raw", "/debug/kubegc/faults", "-f", "-",
                                 input=json.dumps({"action": {"type": "delay", "seconds": 0},
                                                   "match": {"namespace": ns}})).stdout)
    got = json.loads(rs.kubectl("", "get", "--raw", "/debug/kubegc/faults").stdout)
    assert [f["id"] for f in got["items"]] == [made["id"]]
    rs.kubectl("", "delete", "--raw", "/debug/kubegc/faults")
    assert listed(rs) == []


@pytest.mark.parametrize(("code", "printed"), [
    (409, 'Error from server (Conflict): Operation cannot be fulfilled on configmaps "c": '
          "the object has been modified; please apply your changes to the latest version "
          "and try again"),
    (500, "Error from server (InternalError): Internal error occurred: etcdserver: request "
          "timed out"),
    (503, "Error from server (ServiceUnavailable): the server is currently unable to "
          "handle the request"),
    (504, "Error from server (Timeout): Timeout: request did not complete within requested "
          "timeout - context deadline exceeded"),
])
def test_kubectl_prints_each_injected_error_and_nothing_is_written(
        rs: RBACServer, ns: str, code: int, printed: str) -> None:
    cm(rs, ns, "c")
    f = fault(rs, {"match": {"verb": "patch", "resource": "configmaps", "namespace": ns,
                             "name": "c"}, "action": {"type": "error", "code": code}})
    done = rs.kubectl("", "label", "configmap", "c", "-n", ns, "injected=yes", check=False)
    assert done.returncode == 1
    assert printed in done.stderr
    labels = json.loads(rs.kubectl("", "get", "configmap", "c", "-n", ns, "-o", "json"
                                   ).stdout)["metadata"].get("labels")
    assert not labels  # nothing written
    assert [x["fired"] for x in listed(rs) if x["id"] == f["id"]] == [1]


def test_client_go_retries_429_after_retry_after(rs: RBACServer, ns: str) -> None:
    f = fault(rs, {"match": {"verb": "create", "resource": "configmaps", "namespace": ns},
                   "action": {"type": "error", "code": 429, "retryAfterSeconds": 1},
                   "count": 2})
    started = time.monotonic()
    cm(rs, ns, "throttled")  # kubectl retries (client-go honours Retry-After) and succeeds
    assert time.monotonic() - started >= 2
    assert f["id"] not in [x["id"] for x in listed(rs)]
    _, raw = rs.http("", "GET", "/debug/kubegc/requests?user=kubernetes-admin")
    entries = [e for e in raw["items"] if e["namespace"] == ns and e["name"] == "throttled"]
    assert [(e["code"], e["fault"]) for e in entries] == [
        (429, f["id"]), (429, f["id"]), (201, None)]
    assert entries[0]["verb"] == "create" and entries[0]["fieldManager"] == "kubectl-create"
    assert entries[0]["userAgent"].startswith("kubectl")


def test_the_python_client_raises_api_exceptions(rs: RBACServer, ns: str) -> None:
    from kubernetes import client, config
    from kubernetes.client.rest import ApiException

    configuration = client.Configuration()
    config.load_kube_config(config_file=str(rs.server.kubeconfig),
                            client_configuration=configuration)
    configuration.retries = 0
    with client.ApiClient(configuration) as api:
        core = client.CoreV1Api(api)
        cm(rs, ns, "py")
        fault(rs, {"match": {"userAgent": "^OpenAPI-Generator", "namespace": ns},
                   "action": {"type": "error", "code": 409}, "count": 1})
        with pytest.raises(ApiException) as raised:
            core.patch_namespaced_config_map("py", ns, {"metadata": {"labels": {"a": "b"}}})
        assert raised.value.status == 409 and raised.value.reason == "Conflict"
        assert json.loads(raised.value.body)["reason"] == "Conflict"
        fault(rs, {"match": {"userAgent": "^OpenAPI-Generator", "namespace": ns},
                   "action": {"type": "error", "code": 429, "retryAfterSeconds": 3},
                   "count": 1})
        with pytest.raises(ApiException) as raised:
            core.read_namespaced_config_map("py", ns)
        assert raised.value.status == 429
        assert raised.value.headers["Retry-After"] == "3"
        assert json.loads(raised.value.body)["details"] == {"retryAfterSeconds": 3}
        # afterRequests lets the first through; delay holds the answer back
        fault(rs, {"match": {"verb": "get", "namespace": ns},
                   "action": {"type": "delay", "seconds": 1}, "afterRequests": 1, "count": 1})
        started = time.monotonic()
        core.read_namespaced_config_map("py", ns)
        assert time.monotonic() - started < 1
        core.read_namespaced_config_map("py", ns)
        assert time.monotonic() - started >= 1


def test_a_hung_request_hangs_until_cleared(rs: RBACServer, ns: str) -> None:
    from kubernetes import client, config
    from urllib3.exceptions import MaxRetryError, ReadTimeoutError

    cm(rs, ns, "h")
    f = fault(rs, {"match": {"verb": "get", "namespace": ns, "name": "h"},
                   "action": {"type": "hang"}})
    done = rs.kubectl("", "get", "configmap", "h", "-n", ns, "--request-timeout=1s",
                      check=False)
    assert done.returncode == 1
    assert "context deadline exceeded" in done.stderr or "Client.Timeout" in done.stderr
    configuration = client.Configuration()
    config.load_kube_config(config_file=str(rs.server.kubeconfig),
                            client_configuration=configuration)
    with client.ApiClient(configuration) as api:
        core = client.CoreV1Api(api)
        with pytest.raises((ReadTimeoutError, MaxRetryError)):  # one with a timeout recovers
            core.read_namespaced_config_map("h", ns, _request_timeout=1)
        answer: list[Any] = []
        waiting = threading.Thread(  # one with no timeout waits ...
            target=lambda: answer.append(core.read_namespaced_config_map("h", ns)))
        waiting.start()
        waiting.join(1.5)
        assert waiting.is_alive() and not answer
        rs.http("", "DELETE", f"/debug/kubegc/faults/{f['id']}")  # ... until cleared
        waiting.join(10)
        assert answer and answer[0].metadata.name == "h"


def _watch(rs: RBACServer, path: str, timeout: float | None = 30) -> Any:
    req = urllib.request.Request(rs.server.url + path)
    req.add_header("Authorization", f"Bearer {rs.server.token}")
    return urllib.request.urlopen(req, context=rs.server._ssl(), timeout=timeout)


def test_a_watch_that_hangs_and_one_closed_after_n_events(rs: RBACServer, ns: str) -> None:
    _, listing = rs.http("", "GET", f"/api/v1/namespaces/{ns}/configmaps")
    rv = listing["metadata"]["resourceVersion"]
    path = f"/api/v1/namespaces/{ns}/configmaps?watch=1&resourceVersion={rv}"
    timed = _watch(rs, path, timeout=1.5)  # open: headers received
    endless = _watch(rs, path, timeout=None)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(endless.readline()))
    reader.start()
    f = fault(rs, {"match": {"verb": "watch", "namespace": ns}, "action": {"type": "hang"}})
    cm(rs, ns, "w1")
    with pytest.raises(TimeoutError):  # the open stream stalls: no event, no end
        timed.readline()
    timed.close()
    reader.join(1)
    assert reader.is_alive() and not got  # no timeout: waits as long as the fault is set
    rs.http("", "DELETE", f"/debug/kubegc/faults/{f['id']}")
    reader.join(10)
    assert json.loads(got[0])["object"]["metadata"]["name"] == "w1"
    endless.close()
    fault(rs, {"match": {"verb": "watch", "namespace": ns},
               "action": {"type": "closeWatch", "afterEvents": 2}})
    cm(rs, ns, "w2")
    with _watch(rs, path) as r:
        lines = r.read().splitlines()  # the stream ends by itself, after two events
    assert [json.loads(x)["object"]["metadata"]["name"] for x in lines] == ["w1", "w2"]


def test_expire_watch_ends_open_watches_and_old_lists(rs: RBACServer, ns: str) -> None:
    cm(rs, ns, "e1")
    _, listing = rs.http("", "GET", f"/api/v1/namespaces/{ns}/configmaps")
    rv = listing["metadata"]["resourceVersion"]
    got: list[bytes] = []
    r = _watch(rs, f"/api/v1/namespaces/{ns}/configmaps?watch=1&resourceVersion={rv}")

    def read() -> None:
        got.extend(r.read().splitlines())
    reader = threading.Thread(target=read)
    reader.start()
    eventually(lambda: any(k.startswith("/registry/core/configmaps") or "configmaps" in k
                           for k in rs.server.watchers()))
    cm(rs, ns, "e2")
    fault(rs, {"match": {"namespace": ns}, "action": {"type": "expireWatch"}})
    reader.join(10)
    assert not reader.is_alive()
    events = [json.loads(x) for x in got]
    assert events[-1]["type"] == "ERROR"
    assert events[-1]["object"]["code"] == 410 and events[-1]["object"]["reason"] == "Expired"
    status, body = rs.http("", "GET", f"/api/v1/namespaces/{ns}/configmaps?"
                           f"resourceVersion={rv}&resourceVersionMatch=NotOlderThan")
    assert status == 410 and body["reason"] == "Expired"
    status, body = rs.http("", "GET", f"/api/v1/namespaces/{ns}/configmaps")  # relist
    assert status == 200
    fresh = body["metadata"]["resourceVersion"]
    with _watch(rs, f"/api/v1/namespaces/{ns}/configmaps?watch=1&resourceVersion={rv}") as old:
        assert json.loads(old.readline())["type"] == "ERROR"
    fresh_watch = _watch(rs, f"/api/v1/namespaces/{ns}/configmaps?watch=1&"
                             f"resourceVersion={fresh}", timeout=5)
    cm(rs, ns, "e3")
    event = json.loads(fresh_watch.readline())
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "e3")
    fresh_watch.close()


def test_a_paused_controller_does_nothing_and_catches_up_on_resume(
        rs: RBACServer, ns: str) -> None:
    _, body = rs.http("", "GET", "/debug/kubegc/controllers")
    names = {c["name"]: c["paused"] for c in body["items"]}
    assert names["garbagecollector"] is False and "kubelet" in names
    assert rs.http("alice", "POST", "/debug/kubegc/controllers/garbagecollector",
                   {"paused": True})[0] == 403
    assert rs.http("", "POST", "/debug/kubegc/controllers/nope", {"paused": True})[0] == 404
    assert rs.http("", "POST", "/debug/kubegc/controllers/garbagecollector",
                   {"paused": "yes"})[0] == 400
    cm(rs, ns, "owner")
    owner = json.loads(rs.kubectl("", "get", "cm", "owner", "-n", ns, "-o", "json").stdout)
    rs.kubectl("", "apply", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "child", "namespace": ns, "ownerReferences": [{
            "apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
            "uid": owner["metadata"]["uid"]}]}}))
    status, body = rs.http("", "POST", "/debug/kubegc/controllers/garbagecollector",
                           {"paused": True})
    assert (status, body) == (200, {"name": "garbagecollector", "paused": True})
    try:
        rs.kubectl("", "delete", "cm", "owner", "-n", ns)
        rs.server.settle()  # everything else is quiet (a paused controller counts as so)
        assert rs.kubectl("", "get", "cm", "child", "-n", ns, check=False).returncode == 0
    finally:
        rs.http("", "POST", "/debug/kubegc/controllers/garbagecollector", {"paused": False})
    eventually(lambda: rs.kubectl("", "get", "cm", "child", "-n", ns,
                                  check=False).returncode != 0, what="the child collected")


def test_stale_reads_serve_a_lagging_view(rs: RBACServer, ns: str) -> None:
    cm(rs, ns, "s1")
    f = fault(rs, {"match": {"namespace": ns, "userAgent": "^kubectl"},
                   "action": {"type": "staleReads", "seconds": 30}})
    rs.kubectl("", "label", "configmap", "s1", "-n", ns, "fresh=yes")
    cm(rs, ns, "s2")
    # kubectl reads the view of when the fault was set: no label, no s2 ...
    got = json.loads(rs.kubectl("", "get", "configmap", "s1", "-n", ns, "-o", "json").stdout)
    assert "labels" not in got["metadata"]
    done = rs.kubectl("", "get", "configmap", "s2", "-n", ns, check=False)
    assert 'Error from server (NotFound): configmaps "s2" not found' in done.stderr
    names = rs.kubectl("", "get", "configmaps", "-n", ns, "-o", "name").stdout.split()
    assert "configmap/s1" in names and "configmap/s2" not in names
    # ... while another client (not matched) reads the present
    assert rs.http("", "GET", f"/api/v1/namespaces/{ns}/configmaps/s2")[0] == 200
    rs.http("", "DELETE", f"/debug/kubegc/faults/{f['id']}")
    created = int(got["metadata"]["resourceVersion"])
    _, listing = rs.http("", "GET", f"/api/v1/namespaces/{ns}/configmaps")
    # s1 did not exist 1 write before it was created; 100 more, because the server's own
    # writes (leases, DeletionRecords written late) may land between this LIST and the GET
    behind = int(listing["metadata"]["resourceVersion"]) - created + 1 + 100
    fault(rs, {"match": {"namespace": ns}, "action": {"type": "staleReads",
                                                        "revisionsBehind": behind}})
    status, _ = rs.http("", "GET", f"/api/v1/namespaces/{ns}/configmaps/s1")
    assert status == 404  # that many writes ago it did not exist


def test_a_stale_watch_delivers_late(rs: RBACServer, ns: str) -> None:
    _, listing = rs.http("", "GET", f"/api/v1/namespaces/{ns}/configmaps")
    rv = listing["metadata"]["resourceVersion"]
    fault(rs, {"match": {"namespace": ns, "verb": "watch"},
               "action": {"type": "staleReads", "seconds": 1.5}})
    with _watch(rs, f"/api/v1/namespaces/{ns}/configmaps?watch=1&resourceVersion={rv}") as r:
        started = time.monotonic()
        cm(rs, ns, "late")
        event = json.loads(r.readline())
        assert event["object"]["metadata"]["name"] == "late"
        assert time.monotonic() - started >= 1.5
