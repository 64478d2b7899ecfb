"""The setup of the aggregation tests: a ``kubegc serve`` of the test module's own (a
down APIService holds every namespace), the tiny aggregated API server
(``aggregated_api.AggregatedAPI``) on loopback, and its APIService registered through a
Service without selector and its Endpoints. Import the fixtures into a test module."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.aggregated_api import GROUP, VERSION, AggregatedAPI
from tests.e2e.conftest import Server, eventually, free_port, start_server, stop_server

API_SERVICE = f"{VERSION}.{GROUP}"


@pytest.fixture(scope="module")
def agg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = start_server(tmp_path_factory.mktemp("kubegc-agg"))
    yield s
    stop_server(s)


def authentication_config(server: Server) -> dict[str, str]:
    """The data of kube-system/extension-apiserver-authentication, once published."""
    def published() -> dict[str, str] | None:
        done = server.kubectl("get", "configmap", "-n", "kube-system",
                              "extension-apiserver-authentication", "-o", "json", check=False)
        return json.loads(done.stdout)["data"] if done.returncode == 0 else None
    found: dict[str, str] = eventually(published, what="the authentication ConfigMap")
    return found


@pytest.fixture(scope="module")
def backend(agg_server: Server) -> Iterator[AggregatedAPI]:
    """The backend, trusting the front proxy as the ConfigMap says (as a real one)."""
    api = AggregatedAPI(free_port(), trust=authentication_config(agg_server))
    api.start()
    yield api
    api.stop()


def apply(server: Server, *objects: dict[str, Any]) -> None:
    server.kubectl("apply", "-f", "-", input=json.dumps(
        {"apiVersion": "v1", "kind": "List", "items": list(objects)}))


def service_objects(namespace: str, port: int) -> list[dict[str, Any]]:
    return [
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {"name": "metrics-api", "namespace": namespace},
         "spec": {"ports": [{"name": "https", "port": 443, "targetPort": port}]}},
        {"apiVersion": "v1", "kind": "Endpoints",
         "metadata": {"name": "metrics-api", "namespace": namespace},
         "subsets": [{"addresses": [{"ip": "127.0.0.1"}],
                      "ports": [{"name": "https", "port": port}]}]},
    ]


def api_service(namespace: str, ca_bundle: str) -> dict[str, Any]:
    return {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": {"name": API_SERVICE},
            "spec": {"group": GROUP, "version": VERSION, "groupPriorityMinimum": 100,
                     "versionPriority": 100, "caBundle": ca_bundle,
                     "service": {"namespace": namespace, "name": "metrics-api"}}}


def available(server: Server, name: str = API_SERVICE) -> dict[str, Any] | None:
    done = server.kubectl("get", "apiservice", name, "-o", "json", check=False)
    if done.returncode != 0:
        return None
    for condition in json.loads(done.stdout).get("status", {}).get("conditions") or []:
        if condition["type"] == "Available":
            return dict(condition)
    return None


def wait_available(server: Server, status: str, reason: str) -> dict[str, Any]:
    def seen() -> dict[str, Any] | None:
        c = available(server)
        return c if c is not None and (c["status"], c["reason"]) == (status, reason) else None
    found: dict[str, Any] = eventually(seen, timeout=30, what=f"Available {status} {reason}")
    return found


@pytest.fixture(scope="module")
def registered(agg_server: Server, backend: AggregatedAPI) -> Iterator[str]:
    agg_server.kubectl("create", "namespace", "metrics")
    apply(agg_server, *service_objects("metrics", backend.port))
    apply(agg_server, api_service("metrics", backend.ca_bundle))
    wait_available(agg_server, "True", "Passed")
    yield "metrics"
