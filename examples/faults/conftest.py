"""One kubegc for the examples' tests (``kubegc.testing``), a namespace per test, and a
controller run in a thread while a test needs it."""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client

from kubegc.testing import Cluster


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    with Cluster() as c:
        yield c


#: the controllers' User-Agent: the faults match it, the tests' own reads go through
AGENT = "copier/1.0"


@pytest.fixture
def api(cluster: Cluster) -> Iterator[client.ApiClient]:
    """The controller's client. urllib3 would retry a 429 or 503 with Retry-After by
    itself: off, so that what the server answers reaches the controller."""
    from kubernetes import config

    configuration = client.Configuration()
    config.load_kube_config(config_file=str(cluster.kubeconfig),
                            client_configuration=configuration)
    configuration.retries = 0
    a = client.ApiClient(configuration)
    a.user_agent = AGENT
    yield a
    a.close()


@pytest.fixture
def core(cluster: Cluster) -> Iterator[client.CoreV1Api]:
    """The test's own client."""
    a = cluster.kubernetes_client()
    yield client.CoreV1Api(a)
    a.close()


def of_controller(ns: str, **match: str) -> dict[str, str]:
    """A fault's match: the controller's requests in ``ns``."""
    return {"namespace": ns, "userAgent": f"^{AGENT}", **match}


@pytest.fixture
def ns(cluster: Cluster, core: client.CoreV1Api) -> Iterator[str]:
    name = f"ex-{uuid.uuid4().hex[:8]}"
    core.create_namespace({"metadata": {"name": name}})
    yield name
    cluster.faults.clear()
    core.delete_namespace(name)


@contextlib.contextmanager
def running(controller: Any) -> Iterator[threading.Thread]:
    stop = threading.Event()
    thread = threading.Thread(target=controller.run, args=(stop,), daemon=True)
    thread.start()
    try:
        yield thread
    finally:
        stop.set()


def eventually(check: Callable[[], Any], timeout: float = 20, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not met within {timeout}s")
        time.sleep(0.05)


def owner(core: client.CoreV1Api, ns: str, name: str, data: dict[str, str]) -> Any:
    return core.create_namespaced_config_map(ns, {
        "metadata": {"name": name, "labels": {"copy": "yes"}}, "data": data})


def copy_data(core: client.CoreV1Api, ns: str, name: str) -> dict[str, str] | None:
    from kubernetes.client.rest import ApiException

    try:
        return dict(core.read_namespaced_config_map(f"{name}-copy", ns).data or {})
    except ApiException as e:
        if e.status == 404:
            return None
        raise
