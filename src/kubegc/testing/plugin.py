"""pytest plugin: the ``kubegc_cluster`` and ``kubegc_tls_cluster`` fixtures (a fresh kubegc
per test)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # imported by the fixture: a test run that never asks for it pays nothing
    from kubegc.testing.cluster import Cluster


@pytest.fixture
def kubegc_cluster() -> Iterator[Cluster]:
    """A running kubegc (API server + all controllers) on a free port, for one test; its
    kubeconfig is the process's default one meanwhile (``Cluster.default_kubeconfig``).
    See ``kubegc.testing.Cluster`` for what it offers (``kubeconfig``, ``settle()``,
    clients) and docs/testing.md."""
    from kubegc.testing.cluster import Cluster

    with Cluster() as cluster, cluster.default_kubeconfig():
        yield cluster


@pytest.fixture
def kubegc_tls_cluster() -> Iterator[Cluster]:
    """``kubegc_cluster`` serving TLS (``Cluster(tls=True)``), as ``kubegc serve`` does: the
    default kubeconfig is its admin's (a bearer token, ``system:masters``), and
    ``kubeconfig_for`` / ``kubeconfig_for_service_account`` give kubeconfigs of any user
    or ServiceAccount (client certificates), for code that must run as one."""
    from kubegc.testing.cluster import Cluster

    with Cluster(tls=True) as cluster, cluster.default_kubeconfig():
        yield cluster
