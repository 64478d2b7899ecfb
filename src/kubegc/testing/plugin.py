"""pytest plugin: the ``kubegc_cluster`` fixture (a fresh kubegc per test)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kubegc.testing import Cluster


@pytest.fixture
def kubegc_cluster() -> Iterator[Cluster]:
    """A running kubegc (API server + all controllers) on a free port; see
    ``kubegc.testing.Cluster`` for what it offers (``kubeconfig``, ``settle()``, clients)."""
    with Cluster() as cluster:
        yield cluster
