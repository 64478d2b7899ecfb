"""kubegc for the tests of other projects: a real API server with the garbage collector in
milliseconds, no Docker, no cluster.

    from kubegc.testing import Cluster

    with Cluster() as cluster:                 # starts on a free port, in a thread
        subprocess.run(["kubectl", "--kubeconfig", cluster.kubeconfig, "get", "ns"])
        cluster.settle()                       # every watch delivered, every GC queue drained

``settle()`` raises ``NotSettledError`` (a ``TimeoutError``) naming what keeps the cluster
busy, and with ``stuck_after=N`` ``StuckError`` as soon as all it does is retry items that
failed N times in a row with one error.

or, in pytest, the ``kubegc_cluster`` fixture (this package's pytest plugin). Inside an
asyncio test, ``async with Cluster() as cluster`` runs on the test's own loop instead.

To run code as a user or a ServiceAccount, ``Cluster(tls=True)`` (fixture
``kubegc_tls_cluster``) writes kubeconfigs of any identity with client certificates:
``cluster.kubeconfig_for("jane", ["dev"])``,
``cluster.kubeconfig_for_service_account("ns", "operator")`` (docs/testing.md).

The package imports nothing heavy until ``Cluster`` is used, so the pytest plugin that
installing kubegc registers costs other projects' test runs nothing (and loads where
kubegc cannot serve, e.g. without ``fcntl``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubegc.testing.kubeconfig import default_kubeconfig

if TYPE_CHECKING:
    from kubegc.component.pending import NotSettledError, StuckError
    from kubegc.testing.cluster import Cluster

__all__ = ["Cluster", "NotSettledError", "StuckError", "default_kubeconfig"]


def __getattr__(name: str) -> Any:
    if name == "Cluster":
        from kubegc.testing.cluster import Cluster

        return Cluster
    if name in ("NotSettledError", "StuckError"):
        from kubegc.component import pending

        return getattr(pending, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
