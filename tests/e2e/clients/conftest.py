"""Fixtures of the client tests: one ``kubegc serve`` per test module (each client gets a
server of its own, so one client's watches and leftovers cannot touch another's), and a
fresh namespace name per test (the story creates the namespace with the client under
test)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from kubernetes import client, config

from ..conftest import Server, serve

server = pytest.fixture(scope="module", name="server")(serve)


@pytest.fixture(scope="module")
def api(server: Server) -> Iterator[client.ApiClient]:
    """The official client, configured from the module's server's kubeconfig."""
    configuration = client.Configuration()
    config.load_kube_config(config_file=str(server.kubeconfig),
                            client_configuration=configuration)
    with client.ApiClient(configuration) as api:
        yield api


@pytest.fixture
def namespace() -> str:
    return f"story-{uuid.uuid4().hex[:8]}"
