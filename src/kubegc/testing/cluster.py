"""``kubegc.testing.Cluster``: a kubegc on a free loopback port for a test (in a thread
for synchronous code, or on the running loop); see the package docstring.

Code under test can run as any user or ServiceAccount: on a cluster serving TLS
(``Cluster(tls=True)``), ``kubeconfig_for(user, groups)`` and
``kubeconfig_for_service_account(namespace, name)`` write a kubeconfig of that identity
(a client certificate signed by the cluster's CA), and ``kubernetes_client(path)`` opens
the official client with one; on any cluster, ``client_for`` gives the in-process client
as a user. What the identity may do is the cluster's authorizer's to say, as for any
request. ``admission_webhook(name, handler)`` registers a Python callable as an admission
webhook (``webhooks.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import threading
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from concurrent.futures import Future
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from kubegc.api.auth import (
    ALL_AUTHENTICATED,
    UserInfo,
    service_account_user,
    split_service_account_username,
)
from kubegc.api.clock import Clock, ManualClock, RealClock
from kubegc.api.features import feature_gate
from kubegc.api.resources import GroupVersionResource
from kubegc.api.version import BINARY_VERSION, EffectiveVersion, parse_emulated_version
from kubegc.client.kubeconfig import save_kubeconfig
from kubegc.cluster import Cluster as _Cluster
from kubegc.cluster_config import ClusterConfig
from kubegc.component.config import (
    ControllerManagerConfiguration,
    GarbageCollectorControllerConfiguration,
    KubeletConfiguration,
    LeaderElectionConfiguration,
)
from kubegc.server.faults import FaultRegistry
from kubegc.storage import parse_storage
from kubegc.testing import webhooks
from kubegc.testing.accidents import delete_and_recreate, parse_resource, restart_api_server
from kubegc.testing.faults import Faults, request_items
from kubegc.testing.kubeconfig import default_kubeconfig

T = TypeVar("T")

_GC = GarbageCollectorControllerConfiguration

#: Tests add CRDs and want the GC to see them soon: it rediscovers resources every 5 s
#: instead of ``kubegc serve``'s 30 (``GarbageCollectorControllerConfiguration``).
TEST_GC_SYNC_PERIOD = 5.0


class Cluster:
    """A kubegc API server + controllers on a free loopback port, plain HTTP.

    Use it as a context manager (sync: a background thread runs the event loop; async: the
    running loop). ``kubeconfig`` works for kubectl and the official Python client.

    ``tls=True`` serves HTTPS with a CA of its own, as ``kubegc serve`` does: the admin
    kubeconfig carries a bearer token, users' kubeconfigs client certificates, and an
    uncredentialed request is ``system:anonymous`` (plain HTTP: the cluster's admin).

    ``storage`` takes ``kubegc serve --storage``'s values (``kubegc.storage.parse_storage``;
    ``ValueError`` otherwise): ``memory`` (the default), ``sqlite`` (in ``data_dir``; without
    one nothing persists), ``sqlite:///FILE``, ``etcd://HOST:PORT[/PREFIX]``.

    ``enable_admission_plugins`` (``kubegc serve --enable-admission-plugins``), e.g.
    ``["OwnerReferencesPermissionEnforcement"]``: test an operator's RBAC for the
    ownerReferences it sets (``client_for_service_account``) as a hardened cluster checks it.

    ``emulated_version`` and ``feature_gates`` (``kubegc serve --emulated-version``,
    ``--feature-gates``), e.g. ``emulated_version="1.32"``: test against the behaviour of
    the Kubernetes version production runs (docs/versions.md); ``ValueError`` with
    upstream's messages for a version or gate kubegc cannot emulate."""

    def __init__(self, *, controllers: Sequence[str] = ("*",), clock: Clock | None = None,
                 storage: str = "memory", data_dir: Path | None = None,
                 gc_sync_period: float = TEST_GC_SYNC_PERIOD,
                 concurrent_gc_syncs: int = _GC.concurrent_gc_syncs,
                 nodes: int = KubeletConfiguration.nodes,
                 leader_election: LeaderElectionConfiguration | None = None,
                 tls: bool = False, enable_admission_plugins: Sequence[str] = (),
                 emulated_version: str | None = None,
                 feature_gates: Mapping[str, bool] | None = None) -> None:
        endpoint = parse_storage(storage)  # ValueError before anything is made
        emulation = (parse_emulated_version(emulated_version) if emulated_version
                     else BINARY_VERSION)
        problems = EffectiveVersion(emulation).validate()
        if problems:
            raise ValueError("; ".join(problems))
        gate = feature_gate(emulation, dict(feature_gates or {}))
        self._tmp = tempfile.TemporaryDirectory(prefix="kubegc-")
        root = Path(self._tmp.name)
        self._root = root
        self._kubeconfigs = 0
        if tls and data_dir is None:
            data_dir = root / "data"  # the CA's home; the store stays where ``storage`` says
        self.config = ClusterConfig(
            data_dir=data_dir, storage=endpoint, host="127.0.0.1", port=0, tls=tls,
            kubeconfig=root / "kubeconfig", clock=clock or RealClock(),
            enable_admission_plugins=tuple(enable_admission_plugins), feature_gate=gate,
            controller_manager=ControllerManagerConfiguration(
                controllers=list(controllers),
                leader_election=leader_election or LeaderElectionConfiguration(),
                garbage_collector=GarbageCollectorControllerConfiguration(
                    gc_sync_period=gc_sync_period, concurrent_gc_syncs=concurrent_gc_syncs),
                kubelet=KubeletConfiguration(nodes=nodes)))
        self.cluster = _Cluster(self.config)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # -- properties ----------------------------------------------------------------------

    @property
    def kubeconfig(self) -> Path:
        path = self.cluster.kubeconfig_path
        if path is None:
            raise RuntimeError("cluster not started")
        return path

    @property
    def url(self) -> str:
        if self.cluster.server is None:
            raise RuntimeError("cluster not started")
        return self.cluster.server.url

    @property
    def client(self) -> Any:
        """The in-process ``LocalClient`` (use it on the cluster's loop)."""
        return self.cluster.client

    def admission_webhook(self, name: str, handler: webhooks.Handler) -> dict[str, Any]:
        """Register an in-process admission webhook (``kubegc.testing.webhooks``) and return
        the ``clientConfig`` that names it in a Validating/MutatingWebhookConfiguration;
        registering the same name again replaces the handler."""
        registry = self.cluster.registry
        if registry is None:
            raise RuntimeError("cluster not started")
        registry.admission.webhooks.client.in_process[webhooks.url_of(name)] = (
            webhooks.wrapped(handler))
        return {"url": webhooks.url_of(name)}

    def default_kubeconfig(self, kubeconfig: Path | None = None,
                           ) -> contextlib.AbstractContextManager[None]:
        """While in use, this cluster's kubeconfig (or ``kubeconfig``, another one of this
        cluster's — a user's, once kubegc has users) is the process's default one:
        ``$KUBECONFIG`` and the default path of the official client (and of
        ``kubernetes_asyncio``), which read ``$KUBECONFIG`` only when imported — so a kopf
        operator with its default login, ``kubernetes.config.load_kube_config()``, kubectl,
        kr8s and lightkube find this cluster. The ``kubegc_cluster`` fixture uses it."""
        return default_kubeconfig(kubeconfig or self.kubeconfig)

    def kubernetes_client(self, kubeconfig: Path | None = None) -> Any:
        """An official ``kubernetes.client.ApiClient`` configured for this cluster — as its
        admin, or as the user of ``kubeconfig`` (``kubeconfig_for``)."""
        from kubernetes import client, config

        configuration = client.Configuration()
        config.load_kube_config(  # type: ignore[no-untyped-call]
            config_file=str(kubeconfig or self.kubeconfig), client_configuration=configuration)
        return client.ApiClient(configuration)

    # -- faults, paused controllers, the request log (docs/faults.md) ----------------------

    @property
    def faults(self) -> Faults:
        """The API server's faults: ``with cluster.faults.conflicts(on="configmaps",
        times=3): ...`` (``kubegc.testing.faults``)."""
        return Faults(self._fault_registry, self._on_loop)

    def _fault_registry(self) -> FaultRegistry:
        if self.cluster.server is None:
            raise RuntimeError("cluster not started")
        return self.cluster.server.ctx.faults

    def _on_loop(self, fn: Callable[[], T]) -> T:
        """``fn()`` on the cluster's loop: here when the test runs on it (``async with``),
        else through ``run``."""
        if self._loop is None:
            return fn()

        async def call() -> T:
            return fn()

        return self.run(call())

    def requests(self, user: str | None = None, since: datetime | None = None
                 ) -> list[dict[str, Any]]:
        """The writes HTTP clients made (``GET /debug/kubegc/requests``): ``time``,
        ``user``, ``userAgent``, ``verb``, ``group``, ``resource``, ``subresource``,
        ``namespace``, ``name``, ``fieldManager``, ``code``, ``fault``."""
        return self._on_loop(lambda: request_items(self._fault_registry(), user, since))

    @contextlib.contextmanager
    def paused(self, *names: str) -> Iterator[None]:
        """The controllers ``names`` (``--controllers`` names, ``kubelet`` too) do nothing
        while the block runs; on exit they resume and catch up. ``KeyError`` for a name
        this cluster does not run."""
        manager = self.cluster.controller_manager
        if manager is None:
            raise RuntimeError("cluster not started")
        for name in names:
            if name not in manager.gates:
                raise KeyError(f"no controller {name!r} in this cluster")
        def pause_all(paused: bool) -> None:
            for name in names:
                manager.pause(name, paused)

        self._on_loop(lambda: pause_all(True))
        try:
            yield
        finally:
            self._on_loop(lambda: pause_all(False))

    def delete_and_recreate(self, resource: str | GroupVersionResource, name: str,
                            namespace: str = "") -> dict[str, Any]:
        """The seed's accident: delete the object and create it again under its name
        (a new uid) with the garbage collector held in between; the new object. Its old
        dependents point at a uid that is gone (``kubegc.testing.accidents``)."""
        client = self.cluster.client
        if client is None:
            raise RuntimeError("cluster not started")
        return self._await(delete_and_recreate(client, self.cluster.controller_manager,
                                               parse_resource(resource), name, namespace))

    def restart_api_server(self) -> None:
        """Restart the API server in place: same port, connections (and watches)
        dropped, state kept, faults cleared."""
        server = self.cluster.server
        if server is None:
            raise RuntimeError("cluster not started")
        self._await(restart_api_server(server))

    def _await(self, coro: Coroutine[Any, Any, T]) -> T:
        if self._loop is None:
            coro.close()
            raise RuntimeError("from an asyncio test, await kubegc.testing.accidents' "
                               "functions instead")
        return self.run(coro)

    # -- running as a user ---------------------------------------------------------------

    def kubeconfig_for(self, user: str, groups: Sequence[str] = ()) -> Path:
        """A kubeconfig of this cluster for ``user`` in ``groups`` (in the cluster's
        temporary directory), with a client certificate signed by its CA; the server adds
        ``system:authenticated``. Needs ``Cluster(tls=True)`` (kubectl sends no credential
        over plain HTTP: ``RuntimeError`` otherwise). Raises ``ValueError`` for a name a
        certificate cannot carry (empty, blank-edged, over 64 characters)."""
        doc = self.cluster.user_kubeconfig(user, tuple(groups))
        self._kubeconfigs += 1
        path = self._root / f"user-{self._kubeconfigs}.kubeconfig"
        save_kubeconfig(path, doc)
        return path

    def kubeconfig_for_service_account(self, namespace: str, name: str) -> Path:
        """A kubeconfig of the ServiceAccount ``namespace/name``'s user
        (``system:serviceaccount:NS:NAME`` in ``system:serviceaccounts`` and
        ``system:serviceaccounts:NS``: what RBAC's ServiceAccount subjects match). The
        ServiceAccount need not exist: this is its identity, not one of its tokens."""
        user = _service_account(namespace, name)
        return self.kubeconfig_for(user.name, [g for g in user.groups
                                               if g != ALL_AUTHENTICATED])

    def client_for(self, user: str, groups: Sequence[str] = ()) -> Any:
        """The in-process client (``client``) as ``user`` in ``groups`` (plus
        ``system:authenticated``): each call is authorized as that user's request would
        be, and admission sees that user. Use it on the cluster's loop."""
        if self.cluster.client is None:
            raise RuntimeError("cluster not started")
        return self.cluster.client.as_user(UserInfo(user, groups=(*groups, ALL_AUTHENTICATED)))

    def client_for_service_account(self, namespace: str, name: str) -> Any:
        """``client_for`` the ServiceAccount ``namespace/name``."""
        if self.cluster.client is None:
            raise RuntimeError("cluster not started")
        return self.cluster.client.as_user(_service_account(namespace, name))

    # -- async use -----------------------------------------------------------------------

    async def start(self) -> None:
        await self.cluster.start()

    async def stop(self) -> None:
        await self.cluster.stop()
        self._tmp.cleanup()

    async def __aenter__(self) -> Cluster:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def asettle(self, timeout: float = 30.0, *, stuck_after: int | None = None) -> None:
        """``settle()`` on the test's own loop (``async with Cluster()``)."""
        await self.cluster.settle(timeout, stuck_after=stuck_after)

    # -- sync use (a background thread runs the loop) -------------------------------------

    def __enter__(self) -> Cluster:
        self._loop = asyncio.new_event_loop()
        ready: Future[None] = Future()

        def run() -> None:
            loop = self._loop
            if loop is None:
                return
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self.cluster.start())
            except BaseException as e:
                ready.set_exception(e)
                return
            ready.set_result(None)
            loop.run_forever()

        self._thread = threading.Thread(target=run, name="kubegc-cluster", daemon=True)
        self._thread.start()
        ready.result(timeout=30)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._loop is None:
            return
        try:
            self.run(self.cluster.stop())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            if self._thread is not None:
                self._thread.join(timeout=10)
            self._loop.close()
            self._loop = None
            self._tmp.cleanup()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 60.0) -> T:
        """Run ``coro`` on the cluster's loop from another thread and return its result."""
        if self._loop is None:
            raise RuntimeError("use `with Cluster()` to run coroutines from sync code")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def settle(self, timeout: float = 30.0, *, stuck_after: int | None = None) -> None:
        """Block until every informer caught up and every controller queue is drained.

        After ``timeout`` seconds raise ``NotSettledError`` (a ``TimeoutError``), whose
        message has a line per busy controller: its items, and for each one retrying its
        key and last error (a DELETE of the garbage collector that an admission webhook
        refuses is retried for ever, as upstream). ``stuck_after=N``: raise ``StuckError``
        (a ``NotSettledError``) as soon as all that is left is items retrying, each after
        failing ``N`` times in a row with the same error."""
        self.run(self.cluster.settle(timeout, stuck_after=stuck_after), timeout + 5)

    def advance(self, seconds: float) -> None:
        """Move a ``ManualClock`` (``Cluster(clock=ManualClock())``) forward by ``seconds``,
        on the cluster's loop (a ManualClock is not thread-safe): grace periods, TTLs and
        CronJob schedules that fall due run."""
        clock = self.config.clock
        if not isinstance(clock, ManualClock):
            raise TypeError("advance() needs Cluster(clock=ManualClock())")

        async def advance() -> None:
            clock.advance(seconds)

        self.run(advance())


def _service_account(namespace: str, name: str) -> UserInfo:
    """The ServiceAccount's user; ``ValueError`` when the names cannot be one's."""
    user = service_account_user(namespace, name)
    if split_service_account_username(user.name) != (namespace, name):
        raise ValueError(f"{namespace}/{name} cannot name a ServiceAccount: the namespace "
                         "must be a DNS-1123 label, the name a DNS-1123 subdomain")
    return user
