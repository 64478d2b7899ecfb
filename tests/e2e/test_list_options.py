"""``ValidateListOptions`` on LIST: the 422 ``Invalid`` on ``ListOptions.meta.k8s.io``
that kube-apiserver answers for a bad resourceVersionMatch (client-go's reflector relies on
these rules)."""

from __future__ import annotations

import json
import threading
import time

import pytest

from .conftest import Server

FORBIDDEN_UNLESS = ("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden "
                    "unless resourceVersion is provided")


@pytest.mark.parametrize(("query", "message"), [
    ("resourceVersionMatch=Exact",
     f'ListOptions.meta.k8s.io "" is invalid: {FORBIDDEN_UNLESS}'),
    ("resourceVersion=0&resourceVersionMatch=Exact",
     'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
     'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'),
    ("resourceVersion=1&resourceVersionMatch=Bogus",
     'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: '
     '"Bogus": supported values: "Exact", "NotOlderThan", ""'),
    ("resourceVersionMatch=Bogus",
     f'ListOptions.meta.k8s.io "" is invalid: [{FORBIDDEN_UNLESS}, resourceVersionMatch: '
     'Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""]'),
    ("sendInitialEvents=true",
     'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: '
     'sendInitialEvents is forbidden for list'),
])
def test_bad_list_options_are_invalid(server: Server, ns: str, query: str,
                                      message: str) -> None:
    code, body = server.http("GET", f"/api/v1/namespaces/{ns}/configmaps?{query}")
    status = json.loads(body)
    assert (code, status["reason"], status["message"]) == (422, "Invalid", message)
    assert status["details"]["kind"] == "ListOptions"
    assert status["details"]["group"] == "meta.k8s.io"


def test_good_list_options_still_list(server: Server, ns: str) -> None:
    code, body = server.http("GET", f"/api/v1/namespaces/{ns}/configmaps")
    rv = json.loads(body)["metadata"]["resourceVersion"]
    for query in (f"resourceVersion={rv}&resourceVersionMatch=Exact",
                  "resourceVersion=0&resourceVersionMatch=NotOlderThan", "resourceVersion=0"):
        code, body = server.http("GET", f"/api/v1/namespaces/{ns}/configmaps?{query}")
        assert code == 200, body
        assert json.loads(body)["kind"] == "ConfigMapList"


def _current(server: Server, ns: str) -> int:
    code, body = server.http("GET", f"/api/v1/namespaces/{ns}/configmaps")
    assert code == 200, body
    return int(json.loads(body)["metadata"]["resourceVersion"])


def test_a_read_ahead_of_storage_waits_then_is_too_large(server: Server, ns: str) -> None:
    """As the watch cache's waitUntilFreshAndBlock: 3 s, then 504 with the cause client-go's
    reflector looks for (IsTooLargeResourceVersion)."""
    wanted = _current(server, ns) + 100_000
    for path in (f"/api/v1/namespaces/{ns}/configmaps?resourceVersion={wanted}",
                 f"/api/v1/namespaces/{ns}/configmaps/none?resourceVersion={wanted}"):
        started = time.monotonic()
        code, body = server.http("GET", path)
        waited = time.monotonic() - started
        status = json.loads(body)
        assert (code, status["reason"]) == (504, "Timeout"), body
        assert status["message"].startswith(
            f"Timeout: Too large resource version: {wanted}, current: ")
        assert status["details"]["causes"] == [
            {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}]
        assert status["details"]["retryAfterSeconds"] == 1
        assert waited >= 2.5


def test_a_read_ahead_of_storage_is_answered_once_storage_gets_there(
        server: Server, ns: str) -> None:
    wanted = _current(server, ns) + 1
    result: list[tuple[int, bytes]] = []
    reader = threading.Thread(target=lambda: result.append(server.http(
        "GET", f"/api/v1/namespaces/{ns}/configmaps?resourceVersion={wanted}")))
    reader.start()
    server.kubectl("create", "configmap", "later", "-n", ns)
    reader.join(timeout=10)
    [(code, body)] = result
    assert code == 200, body
    listed = json.loads(body)
    assert int(listed["metadata"]["resourceVersion"]) >= wanted
