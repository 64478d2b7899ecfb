"""The composition root: builds a running kubegc from a ``ClusterConfig``
(``kubegc.cluster_config``, where every default is written; the components' sections in
``kubegc.component.config``).

``kubegc serve``, ``kubegc.testing`` and the planner all assemble the system here, so
there is one way to wire storage → registry → server → controllers. Beside it: what it
keeps in the data directory (``kubegc.data_dir_state``), the owner-graph page's HTTP
adapter (``kubegc.ui_server``), users' kubeconfigs (``kubegc.user_kubeconfig``), the
debug endpoints it mounts (``kubegc.cluster_endpoints``) and the server parts it builds
from the configuration (``kubegc.cluster_serving``).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO

from kubegc.api.auth import ADMIN
from kubegc.api.clock import Clock, RealClock, ScaledClock
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.authz.ownerreferences import ACCESS_CONFIG_PATH
from kubegc.client.cache import CachedList
from kubegc.client.kubeconfig import write_kubeconfig
from kubegc.client.local import LocalClient
from kubegc.cluster_caches import InformerCaches
from kubegc.cluster_config import (
    ClusterConfig,
)
from kubegc.cluster_endpoints import (
    access_handler,
    documents_handler,
    settle_handler,
    watchers_handler,
)
from kubegc.cluster_serving import build_auditor, front_proxy
from kubegc.component.config import (
    ControllerManagerConfiguration,
    RootCACertPublisherConfiguration,
    ServiceAccountTokenControllerConfiguration,
)
from kubegc.component.pending import Pending, wait_quiet
from kubegc.controllermanager import ControllerManager
from kubegc.data_dir_state import (
    CLOCK_SAVE_PERIOD,
    leader_identity,
    lock_data_dir,
    save_clock,
    saved_clock_lead,
)
from kubegc.registry import Registry
from kubegc.registry.admission import enabled_plugins
from kubegc.registry.groups.core.token import TokenIssuer
from kubegc.registry.groups.rbac.modes import build_authorizer, build_rule_resolver
from kubegc.server import APIServer, ServingOptions, serving_credentials
from kubegc.server.authn import UNSECURED
from kubegc.server.authn.requestheader import request_header_authenticator
from kubegc.server.authn.serviceaccount import service_account_authenticators
from kubegc.server.authn.tokenfile import read_token_file, token_file_authenticator
from kubegc.server.authn.x509 import x509_authenticator
from kubegc.server.fault_endpoints import CONTROLLERS_PATH, controllers_handler
from kubegc.server.tls import (
    CLIENT_CERT_VALIDITY,
    CertificateAuthority,
    load_ca,
    private_directory,
    service_account_key,
)
from kubegc.storage import (
    KV,
    DataDir,
    StorageEndpoint,
    connect_kv,
    run_compactor,
)
from kubegc.storage.sqlite import SqliteKV
from kubegc.tokens import JWTTokenGenerator, ServiceAccountKey
from kubegc.tools.ui import PREFIX, UIApp
from kubegc.ui_server import ui_handler
from kubegc.user_kubeconfig import UserKubeconfigError, signed_kubeconfig

log = logging.getLogger(__name__)


class Cluster:
    """A running kubegc: storage, registry, API server and controllers on this loop."""

    def __init__(self, config: ClusterConfig) -> None:
        self.config = config
        #: the store it opens (``sqlite``: the data directory's) unless ``config.kv`` is one
        self.storage: StorageEndpoint = config.storage.in_data_dir(config.data_dir)
        self.clock: Clock = config.clock if config.clock is not None else self._cluster_clock()
        self.kv: KV | None = None
        self.registry: Registry | None = None
        self.server: APIServer | None = None
        self.client: LocalClient | None = None
        self.kubeconfig_path: Path | None = None
        self.token: str | None = None
        self.ca_pem: bytes | None = None
        self.controller_manager: ControllerManager | None = None
        self.ui: UIApp | None = None  # the owner-graph page, when ``config.ui``
        self.ca: CertificateAuthority | None = None  # the serving CA (TLS only)
        self._started = asyncio.Event()
        self._compactor: asyncio.Task[None] | None = None
        self._clock_keeper: asyncio.Task[None] | None = None
        self._lock: IO[str] | None = None
        self.skipped: list[Obj] = []  # snapshot objects of kinds this kubegc does not serve
        #: the metadata informers' caches in the data directory, and those read at start
        #: (for the first term)
        self._caches: InformerCaches | None = None
        self._cached_lists: dict[GroupVersionResource, CachedList] | None = None
        #: signs and verifies ServiceAccount tokens (``pki/sa.key`` with a data directory)
        self.service_account_key = ServiceAccountKey()

    @property
    def api_audiences(self) -> tuple[str, ...]:
        """kube-apiserver's ``--api-audiences`` default: the ServiceAccount issuer."""
        return (self.config.service_account_issuer,)

    def _service_account_key(self) -> ServiceAccountKey:
        """The data directory's ServiceAccount key (made there once), or one in memory
        (made when first used)."""
        directory = self.config.data_dir
        return ServiceAccountKey() if directory is None else ServiceAccountKey(
            service_account_key(directory))

    def _durable_data_dir(self) -> Path | None:
        """The data directory, when what is stored outlives the process (not memory)."""
        durable = self.storage.durable and self.config.kv is None
        return self.config.data_dir if durable else None

    def _informer_caches(self) -> InformerCaches | None:
        """The metadata informers' caches kept between two runs (``cluster_caches``): in a
        data directory of its own SQLite store only (an etcd is shared with other servers
        and writers)."""
        directory = self._durable_data_dir()
        if directory is None or not isinstance(self.kv, SqliteKV):
            return None
        return InformerCaches(DataDir(directory).informer_caches, self.kv,
                              period=self.config.informer_cache_interval)

    @property
    def clock_file(self) -> Path | None:
        """Where the lead of the cluster's clock over real time is kept, if anywhere."""
        directory = self._durable_data_dir()
        return DataDir(directory).clock if directory is not None else None

    def _cluster_clock(self) -> Clock:
        """Real time, or ``time_scale`` times faster; a durable store's timestamps may be
        ahead of real time after a scaled run, so its clock resumes from that lead and
        never goes back (objects, TTLs and grace periods stay ordered)."""
        scale = self.config.time_scale
        directory = self._durable_data_dir()
        lead = saved_clock_lead(directory) if directory is not None else 0.0
        if scale == 1.0 and lead == 0.0:
            return RealClock()
        return ScaledClock(scale, start=datetime.now(UTC) + timedelta(seconds=lead))

    @property
    def clock_lead(self) -> float:
        """Seconds the cluster's clock is ahead of real time."""
        return max(0.0, (self.clock.now() - datetime.now(UTC)).total_seconds())

    async def _keep_clock(self, directory: Path) -> None:
        """Save the scaled clock's lead every ``CLOCK_SAVE_PERIOD`` real seconds, projected
        to the save after next, so that a crash never resumes the clock behind a timestamp
        it already wrote."""
        scale = self.config.time_scale
        ahead = max(0.0, scale - 1.0) * 2 * CLOCK_SAVE_PERIOD
        real = RealClock()
        while True:
            save_clock(directory, self.clock, scale, ahead=ahead)
            await real.sleep(CLOCK_SAVE_PERIOD)

    async def start(self) -> None:
        config = self.config
        if config.data_dir is not None:
            private_directory(config.data_dir)  # the store and the token live there
            self._lock = lock_data_dir(config.data_dir)
        directory = self._durable_data_dir()
        if directory is not None and config.clock is None and config.time_scale != 1.0:
            self._clock_keeper = asyncio.create_task(self._keep_clock(directory),
                                                     name="clock-keeper")
        self.kv = config.kv or await connect_kv(self.storage, clock=self.clock)
        self._caches = self._informer_caches()
        if config.kv is None and config.compaction_interval > 0:
            self._compactor = asyncio.create_task(run_compactor(
                self.kv, interval=config.compaction_interval, keep=config.compaction_keep,
                clock=self.clock), name="compactor")
        version = config.effective_version.emulation
        self.registry = (Registry(self.kv, clock=self.clock, version=version)
                         if config.watch_cache_capacity is None
                         else Registry(self.kv, clock=self.clock, version=version,
                                       watch_cache_capacity=config.watch_cache_capacity))
        rbac = self.registry.rbac_authorizer
        self.registry.authorizer = build_authorizer(config.authorization_mode, rbac)
        self.registry.rule_resolver = build_rule_resolver(config.authorization_mode, rbac)
        self.registry.admission.enabled = enabled_plugins(config.enable_admission_plugins,
                                                          config.disable_admission_plugins)
        self.service_account_key = self._service_account_key()
        self.registry.token_issuer = TokenIssuer(
            JWTTokenGenerator(config.service_account_issuer, self.service_account_key),
            api_audiences=self.api_audiences, clock=self.clock)
        await self.registry.start(bootstrap=config.snapshot is None)
        if self._caches is not None:  # the watch cache replays the log from its origin
            self._cached_lists = self._caches.read(self.registry.cache.origin)
        if config.snapshot is not None:
            self.skipped = await self.registry.restore(config.snapshot)
            # after the snapshot's own policy, as a kube-apiserver started on its etcd
            await self.registry.ensure_rbac_policy()
        self.client = LocalClient(self.registry,
                                  auditor=build_auditor(config.audit, self.clock)
                                  if config.serve_http else None,
                                  version=config.effective_version)
        if config.serve_http:
            await self._start_server()
        await self._start_controllers()
        self._started.set()

    async def _start_server(self) -> None:
        config = self.config
        if self.registry is None:
            raise RuntimeError("registry not started")
        options = ServingOptions(
            host=config.host, port=config.port, anonymous_auth=config.anonymous_auth,
            api_audiences=self.api_audiences,
            service_account_authenticators=service_account_authenticators(
                self.registry, self.service_account_key,
                issuer=config.service_account_issuer, api_audiences=self.api_audiences,
                clock=self.clock),
            auditor=self.client.auditor if self.client is not None else None,
            version=config.effective_version)
        if config.token_auth_file is not None:
            options.token_authenticators.append(
                token_file_authenticator(read_token_file(config.token_auth_file)))
        if config.tls:
            directory = config.data_dir
            if directory is None:
                raise ValueError("TLS needs a data directory for its CA")
            creds = serving_credentials(directory, [config.host])
            options.ssl_context = creds.ssl_context()
            options.token = creds.token
            options.client_ca_pem = creds.ca_cert_pem
            options.front_proxy = proxy = front_proxy(config.request_header, directory)
            by_header = request_header_authenticator(proxy)
            if by_header is not None and proxy.client_ca_pem is not None:
                options.ssl_context.load_verify_locations(cadata=proxy.client_ca_pem.decode())
                options.request_authenticators.append(by_header)
            options.request_authenticators.append(x509_authenticator(creds.ca_cert_pem))
            self.token, self.ca_pem = creds.token, creds.ca_cert_pem
            self.ca = load_ca(directory)
        self.server = APIServer(self.registry, clock=self.clock, options=options)
        # not ready before ``start`` has finished: the server listens (and answers
        # /readyz) while the rest starts, before the controllers add their own check
        self.server.ctx.readiness_checks.append(self._started.is_set)
        self.server.add_debug_handler(ACCESS_CONFIG_PATH, access_handler(
            self.registry, config.authorization_mode))
        await self.server.start()
        path = config.kubeconfig or (
            DataDir(config.data_dir).kubeconfig if config.data_dir is not None else None)
        if path is not None:
            write_kubeconfig(str(path), server=self.server.url, ca_data=self.ca_pem,
                             token=self.token, insecure=False)
            self.kubeconfig_path = path
        if config.ui and self.client is not None:
            client = self.client
            self.ui = UIApp(client, clock=self.clock, source=f"kubegc {self.server.url}",
                            plan_factory=config.ui_planner, secure=config.tls,
                            client_for=lambda user: client.as_user(user),
                            owner=ADMIN if config.tls else UNSECURED)
            self.ui.base_url = self.server.url
            self.server.mount(PREFIX, ui_handler(self.ui, self.server.authenticate))

    def user_kubeconfig(self, user: str, groups: tuple[str, ...] = (), *,
                        validity: timedelta = CLIENT_CERT_VALIDITY) -> dict[str, object]:
        """A kubeconfig (document) of this cluster for ``user`` in ``groups``, with a client
        certificate signed by the serving CA. Raises ``ClientCertificateError`` for a name
        a certificate cannot carry, and ``UserKubeconfigError`` for a cluster that serves
        plain HTTP: no client certificate reaches it, and client-go (kubectl, Go
        operators) sends no other credential over plain HTTP."""
        if self.server is None:
            raise RuntimeError("the cluster does not serve HTTP")
        if self.ca is None or self.ca_pem is None:
            raise UserKubeconfigError(
                "a user's kubeconfig needs a cluster serving TLS: kubectl and client-go send "
                "no credential over plain HTTP (kubegc.testing: Cluster(tls=True) or the "
                "kubegc_tls_cluster fixture)")
        return signed_kubeconfig(self.ca, self.ca_pem, self.server.url, user, groups,
                                 validity=validity)

    def _controller_manager_config(self) -> ControllerManagerConfiguration:
        """The configuration's, with the serving CA as the root CA to publish unless one
        is set (upstream: ``--root-ca-file``, else its client config's CA), and the
        ServiceAccount key for the tokens controller unless one is set."""
        config = self.config.controller_manager
        root_ca = config.root_ca_cert_publisher.root_ca or (
            self.ca_pem.decode() if self.ca_pem else "")
        tokens = config.service_account_token
        return replace(
            config, feature_gate=self.config.feature_gate,
            root_ca_cert_publisher=RootCACertPublisherConfiguration(root_ca=root_ca),
            service_account_token=ServiceAccountTokenControllerConfiguration(
                key=tokens.key or self.service_account_key,
                root_ca=tokens.root_ca or root_ca))

    async def _start_controllers(self) -> None:
        if self.client is None:
            raise RuntimeError("client not ready")
        manager = ControllerManager(
            self.client, clock=self.clock, config=self._controller_manager_config(),
            identity=leader_identity(self.config.data_dir),
            # an injected clock (tests) drives the election too; a scaled one does not
            election_clock=self.config.clock or RealClock(),
            cached_lists=self._cached_lists)
        self._cached_lists = None
        self.controller_manager = manager
        if self.server is not None:  # not ready until the manager has started
            self.server.ctx.readiness_checks.append(manager.ready)
        await manager.start()
        if self._caches is not None and self.registry is not None:
            window = self.registry.cache.capacity  # and what a compaction keeps
            if self.config.compaction_interval > 0:
                window = min(window, self.config.compaction_keep)
            self._caches.keep(manager.running_lists, window=window)
        if self.server is not None:
            self.server.add_debug_handler("/debug/controllers", documents_handler(manager))
            self.server.add_debug_handler("/debug/kubegc/settle", settle_handler(self.settle))
            self.server.add_debug_handler("/debug/kubegc/watchers",
                                          watchers_handler(self.registry))
            self.server.add_debug_handler(CONTROLLERS_PATH, controllers_handler(
                manager.paused, manager.pause))
        if self.registry is not None:
            self.registry.catalog_listeners.append(manager.on_catalog_change)

    async def stop(self) -> None:
        if self.ui is not None:
            await self.ui.close()
        if self.controller_manager is not None:
            await self.controller_manager.stop()
        if self.server is not None:
            await self.server.stop()
        if self.registry is not None:
            await self.registry.stop()
        if self._compactor is not None:
            self._compactor.cancel()
            await asyncio.gather(self._compactor, return_exceptions=True)
        if self._clock_keeper is not None:
            self._clock_keeper.cancel()
            await asyncio.gather(self._clock_keeper, return_exceptions=True)
            self._clock_keeper = None
            directory = self._durable_data_dir()
            if directory is not None:  # the exact lead, now that the clock stops
                save_clock(directory, self.clock, self.config.time_scale)
        if self._caches is not None:  # every writer has stopped
            manager = self.controller_manager
            await self._caches.stop(manager.final_lists if manager is not None else {})
        if self.kv is not None and self.config.kv is None:
            await self.kv.close()
        if self._lock is not None:
            self._lock.close()  # releases the flock
            self._lock = None

    async def settle(self, timeout: float = 30.0, *, quiet_rounds: int = 3,
                     stuck_after: int | None = None) -> None:
        """Wait until every write is dispatched to every watcher, every informer has
        processed what it received, and every controller queue is drained — ``quiet_rounds``
        times in a row (a controller's write starts a new round). After ``timeout`` real
        seconds raise ``NotSettledError`` (a ``TimeoutError``) naming what keeps the
        cluster busy (``pending``); with ``stuck_after``, raise ``StuckError`` as soon as
        all it does is retry items that failed that many times in a row with one error
        (a DELETE an admission webhook refuses is retried for ever, as upstream)."""
        await wait_quiet(self._is_idle, self.pending, timeout, quiet_rounds=quiet_rounds,
                         stuck_after=stuck_after)

    def _is_idle(self) -> bool:
        idle = self.registry is not None and self.registry.cache.is_idle()
        if self.controller_manager is not None:
            idle = idle and self.controller_manager.is_idle()
        return idle

    def pending(self) -> list[Pending]:
        """What keeps the cluster from settling: one entry per busy part."""
        out = []
        if self.registry is None or not self.registry.cache.is_idle():
            out.append(Pending("watch cache", other=("writes not yet sent to every watcher",)))
        if self.controller_manager is not None:
            out += self.controller_manager.pending()
        return out
