"""The controller manager ``kubegc serve`` runs (cf. kube-controller-manager): the
controllers, and also the kubelet simulator and the scheduler (``descriptors``).

``--controllers`` selects which components run: ``*`` for all, a name to add one, ``-name``
to drop one (``*,-kubelet``). Each is built from a ``ControllerContext`` of its own and
started once the informers it needs have synced; it talks to the API only through the
``Client`` of that context and never sees the manager.

Leader election (``--leader-elect``, on by default): the components run only while this
server holds the ``kube-system/kube-controller-manager`` Lease (``leaderelection``), so of
several servers on one etcd exactly one runs them. Each term gets new components and a new
informer factory; losing the Lease stops them (upstream's ``OnStoppedLeading`` exits the
process; kubegc's process also serves the API, so it stops its components and stands again
as a candidate). The simulated kubelets and the scheduler are components like the others:
their nodes are run by whichever server leads.

Identities (``descriptors``): on the server's own registry (``IdentityClient``) the manager
acts as ``system:kube-controller-manager`` (its informers, the Lease, its events) and hands
each component a client of the component's identity, after making sure its kube-system
ServiceAccount exists (upstream's ``SAControllerClientBuilder`` creates it the same way), so
RBAC applies to every controller with the bootstrap policy's roles. A remote cluster's
client is used as it is: its credentials are the cluster's business.

Concurrency: everything runs as tasks on the one event loop of the process.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import uuid
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from kubegc.api import errors
from kubegc.api.auth import (
    ALL_AUTHENTICATED,
    KUBE_CONTROLLER_MANAGER,
    UserInfo,
    service_account_user,
)
from kubegc.api.clock import Clock
from kubegc.api.resources import GroupVersionResource
from kubegc.client.cache import CachedList, SharedInformerFactory
from kubegc.client.events import EventRecorder
from kubegc.client.interface import Client
from kubegc.client.leaderelection import LeaderCallbacks, LeaderElector, LeaseLock
from kubegc.component.config import ControllerManagerConfiguration
from kubegc.component.context import Controller, ControllerContext, DebugDocument
from kubegc.component.deletions import InMemoryDeletionSink
from kubegc.component.pending import Pending
from kubegc.controllermanager.descriptors import CONTROLLERS, ControllerDescriptor
from kubegc.controllermanager.pausing import Gate, GatedClient

log = logging.getLogger(__name__)

#: the component the leader-election events are recorded under (upstream's user agent)
COMPONENT = "kube-controller-manager"
@runtime_checkable
class IdentityClient(Protocol):
    """The in-process client (``LocalClient``): the same registry as another user. Only
    the server's own registry is reached this way; a remote cluster's client has no
    ``as_user``."""

    def as_user(self, user: UserInfo) -> Client: ...


#: the manager's own identity (its kubeconfig's user upstream)
CONTROLLER_MANAGER = UserInfo(KUBE_CONTROLLER_MANAGER, groups=(ALL_AUTHENTICATED,))
#: where the controllers' ServiceAccounts live
SERVICE_ACCOUNT_NAMESPACE = "kube-system"
SERVICEACCOUNTS = GroupVersionResource("", "v1", "serviceaccounts")


def selected(all_names: Sequence[str], spec: Sequence[str]) -> list[str]:
    """Resolve a ``--controllers`` list against the known controller names."""
    chosen: list[str] = []
    for item in spec:
        if item == "*":
            chosen.extend(n for n in all_names if n not in chosen)
        elif item.startswith("-") and item[1:] in all_names:
            chosen = [n for n in chosen if n != item[1:]]
        elif item in all_names:
            if item not in chosen:
                chosen.append(item)
        else:
            raise ValueError(f"unknown controller {item.removeprefix('-')!r}; known: "
                             f"{', '.join(all_names)}")
    return chosen


def new_identity() -> str:
    """A candidate's identity as kube-controller-manager makes it: hostname_uuid."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


class ControllerManager:
    """Runs the selected components around one shared informer factory, while leading.

    Ownership: ``controllers`` and ``informers`` are replaced only by the leading task
    (``_run_controllers``) and emptied only by ``_stop_controllers``; both run on the
    elector's task, one after the other.
    """

    def __init__(self, client: Client, *, clock: Clock,
                 config: ControllerManagerConfiguration, identity: str = "",
                 election_clock: Clock | None = None,
                 cached_lists: dict[GroupVersionResource, CachedList] | None = None) -> None:
        """``election_clock`` (default ``clock``) times the leader election: a server
        whose cluster clock runs scaled (``--time-scale``) keeps its election on real
        time, where a 10 s renew deadline is not 16 ms at 600x. ``cached_lists``: the
        metadata informers' first LISTs, known already (``client.cache.snapshot``), for
        the first term's informers."""
        #: the manager's client: on the server's registry, as the controller manager
        self.client = (client.as_user(CONTROLLER_MANAGER) if isinstance(client, IdentityClient)
                       else client)
        self.clock = clock
        self.election_clock = election_clock or clock
        self.config = config
        self.names = selected(list(CONTROLLERS), config.controllers)
        self.informers = SharedInformerFactory(self.client, clock=clock)
        self._cached_lists = cached_lists
        #: the metadata informers' caches when the manager stopped (``cached_lists``)
        self.final_lists: dict[GroupVersionResource, CachedList] = {}
        #: the deleting controllers' ``Deletion``s, with ``config.deletions_in_memory``
        self.deletions = InMemoryDeletionSink() if config.deletions_in_memory else None
        self.controllers: list[Controller] = []
        #: one gate per selected component, kept across leader terms (pausing.py)
        self.gates = {name: Gate() for name in self.names}
        self._service_account_uids: dict[str, str] = {}
        self.identity = identity or new_identity()
        self.recorder = EventRecorder(self.client, component=COMPONENT, clock=clock)
        self.elector = self._elector() if self.names else None
        self._election: asyncio.Task[None] | None = None
        self._running = asyncio.Event()  # this term's components are started
        self._changing = False  # components being started or stopped
        self._started = False
        self._stopping = False
        #: told the holder (its identity, "" for none) when this server starts or stops
        #: leading, and when it sees another holder
        self.leader_listeners: list[Callable[[str], None]] = []

    def _elector(self) -> LeaderElector | None:
        election = self.config.leader_election
        if not election.leader_elect:
            return None
        lock = LeaseLock(self.client, namespace=election.resource_namespace,
                         name=election.resource_name, identity=self.identity)
        return LeaderElector(
            lock, clock=self.election_clock, now=self.clock.now,
            lease_duration=election.lease_duration,
            renew_deadline=election.renew_deadline, retry_period=election.retry_period,
            callbacks=LeaderCallbacks(on_started_leading=self._run_controllers,
                                      on_stopped_leading=self._stop_controllers,
                                      on_new_leader=self._on_new_leader),
            # as kube-scheduler: a clean shutdown hands over at once, after the
            # components stopped (LeaderElector.run releases only then)
            release_on_cancel=True, recorder=self.recorder)

    def _build(self, name: str, informers: SharedInformerFactory) -> Controller:
        """The component, from a context of its own (what upstream's start functions
        receive); the component never sees the manager."""
        descriptor = CONTROLLERS[name]
        constructor = descriptor.constructor
        return constructor(ControllerContext(
            client=self._client_for(name, descriptor), clock=self.clock, informer_factory=informers,
            options=descriptor.options(self.config), component=constructor.component,
            deletions=self.deletions, features=self.config.feature_gate))

    def _client_for(self, name: str, descriptor: ControllerDescriptor) -> Client:
        """The component's own client, behind its gate (``pause``)."""
        return GatedClient(self._identity_client(descriptor), self.gates[name])

    def _identity_client(self, descriptor: ControllerDescriptor) -> Client:
        """The component's own identity on the server's registry (``descriptors``); any
        other client as it is."""
        if not isinstance(self.client, IdentityClient):
            return self.client
        if descriptor.service_account:
            uid = self._service_account_uids.get(descriptor.service_account, "")
            return self.client.as_user(service_account_user(
                SERVICE_ACCOUNT_NAMESPACE, descriptor.service_account, uid))
        if descriptor.user is not None:
            return self.client.as_user(descriptor.user)
        return self.client

    async def _ensure_service_accounts(self, names: Sequence[str]) -> None:
        """The controllers' ServiceAccounts, created if missing (as the manager), their uids
        remembered for the identities. A failure is logged: the controller then acts
        without the uid, as upstream's would until its token exists."""
        if not isinstance(self.client, IdentityClient):
            return
        for name in names:
            if not name or name in self._service_account_uids:
                continue
            try:
                try:
                    sa = await self.client.get(SERVICEACCOUNTS, name,
                                               namespace=SERVICE_ACCOUNT_NAMESPACE)
                except errors.StatusError as e:
                    if not errors.is_not_found(e):
                        raise
                    sa = await self.client.create(SERVICEACCOUNTS, {
                        "apiVersion": "v1", "kind": "ServiceAccount",
                        "metadata": {"name": name, "namespace": SERVICE_ACCOUNT_NAMESPACE}},
                        namespace=SERVICE_ACCOUNT_NAMESPACE)
            except errors.StatusError as e:
                if errors.is_already_exists(e):
                    continue  # another server's manager was first; read it next term
                log.warning("ServiceAccount %s/%s: %s", SERVICE_ACCOUNT_NAMESPACE, name, e)
                continue
            self._service_account_uids[name] = str(sa["metadata"].get("uid") or "")

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        """Start: without election, the components at once; with it, stand as a candidate
        and return once the first try has been answered (and, if it won, the components
        started), so a lone server starts as before."""
        if self.elector is None:
            if self.names:
                await self._run_controllers()
        else:
            self.recorder.start()
            self._election = asyncio.create_task(self._elect(self.elector),
                                                 name="leader-election")
            await self._first_answer(self.elector, self._election)
        self._started = True

    async def _first_answer(self, elector: LeaderElector, election: asyncio.Task[None]
                            ) -> None:
        waiter = asyncio.ensure_future(elector.attempted.wait())
        await asyncio.wait({waiter, election}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if election.done():
            election.result()  # the election task failed: raise its error
        if elector.is_leader():
            running = asyncio.ensure_future(self._running.wait())
            await asyncio.wait({running, election}, return_when=asyncio.FIRST_COMPLETED)
            running.cancel()

    @staticmethod
    async def _elect(elector: LeaderElector) -> None:
        """Stand for election until stopped: a lost term ends with the components
        stopped, and the candidate stands again with new ones."""
        while True:
            await elector.run()

    async def _run_controllers(self) -> None:
        """``OnStartedLeading``: new components on a new informer factory."""
        self._changing = True
        try:
            self.informers = informers = SharedInformerFactory(
                self.client, clock=self.clock, initial=self._cached_lists)
            self._cached_lists = None  # a later term lists
            await self._ensure_service_accounts(
                [CONTROLLERS[name].service_account for name in self.names])
            built = [self._build(name, informers) for name in self.names]
            for controller in built:
                self.controllers.append(controller)
                await controller.start()
            informers.start()
            self._running.set()
        finally:
            self._changing = False
        self._notify()

    def running_lists(self) -> dict[GroupVersionResource, CachedList]:
        """The metadata informers' caches now (``SharedInformerFactory.cached_lists``)
        while this manager's controllers run, else none."""
        return self.informers.cached_lists() if self._running.is_set() else {}

    async def _stop_controllers(self) -> None:
        """``OnStoppedLeading``: stop this term's components (in reverse order) and their
        informers; nothing keeps running that the Lease guarded."""
        self._changing = True
        self._running.clear()
        try:
            controllers, self.controllers = self.controllers, []
            for controller in reversed(controllers):
                try:
                    await controller.stop()
                except Exception:
                    log.exception("stopping controller %s", controller.name)
            if self._stopping:
                self.final_lists = self.informers.cached_lists()
            await self.informers.stop()
        finally:
            self._changing = False
        if controllers and not self._stopping:  # lost, not shut down
            self._notify()

    def _on_new_leader(self, identity: str) -> None:
        log.info("new leader elected: %s", identity or "(none)")
        if identity != self.identity:  # this one's term is told once its components run
            self._notify()

    def _notify(self) -> None:
        for listener in list(self.leader_listeners):
            listener(self.leader())

    def describe_leadership(self) -> str:
        """One line on who runs the controllers, for ``kubegc serve``'s output."""
        if self.elector is None:
            return "running the controllers (no leader election)" if self.names else (
                "running no controllers")
        lease = self.elector.lock.describe()
        if self.is_leading():
            return f"leading the controllers (Lease {lease}, identity {self.identity})"
        holder = self.leader()
        if holder == self.identity:
            return f"standing by: the Lease {lease} could not be renewed in time"
        return (f"standing by: {holder} leads the controllers (Lease {lease})" if holder
                else f"standing by: nobody holds the Lease {lease}")

    async def stop(self) -> None:
        self._stopping = True
        if self._election is not None:
            self._election.cancel()  # stops the components, then releases the Lease
            await asyncio.gather(self._election, return_exceptions=True)
            self._election = None
        else:
            await self._stop_controllers()
        await self.recorder.stop()

    # -- state -----------------------------------------------------------------------------

    def is_leading(self) -> bool:
        """This term's components run (always, without leader election)."""
        return self._running.is_set()

    def leader(self) -> str:
        """The holder last observed ("" when election is off or nobody holds it)."""
        return self.elector.get_leader() if self.elector is not None else ""

    def ready(self) -> bool:
        """Leading with every component synced, or standing by behind another leader."""
        if not self._started or self._changing:
            return False
        if self._running.is_set():
            return all(c.ready() for c in self.controllers)
        return self.elector is not None or not self.names

    def is_idle(self) -> bool:
        return (not self._changing and self.recorder.is_idle()
                and all(i.is_idle() for i in self.informers.informers())
                and all(c.is_idle() or self._paused(c) for c in self.controllers))

    def pending(self) -> list[Pending]:
        """What keeps the manager from being idle (``is_idle``), one entry per busy part:
        each component not idle nor paused says what it holds (its ``pending()``, if it
        has one), then the manager's own informers and events."""
        out: list[Pending] = []
        if self._changing:
            out.append(Pending("controller-manager", other=("starting or stopping components",)))
        for c in self.controllers:
            if not c.is_idle() and not self._paused(c):
                pending = getattr(c, "pending", None)
                out.append(pending() if pending is not None else Pending(c.name))
        busy = sorted(str(i.gvr) for i in self.informers.informers() if not i.is_idle())
        if busy:
            out.append(Pending("informers", other=(f"delivering a list of {', '.join(busy)}",)))
        if not self.recorder.is_idle():
            out.append(Pending("controller-manager", other=("events to write",)))
        return out

    def _paused(self, controller: Controller) -> bool:
        gate = self.gates.get(controller.name)
        return gate is not None and gate.paused

    def pause(self, name: str, paused: bool) -> None:
        """Pause or resume the component ``name`` (KeyError: not one of this manager's).
        A paused one counts as idle: ``settle`` does not wait for it."""
        self.gates[name].set_paused(paused)

    def paused(self) -> dict[str, bool]:
        """Every selected component, and whether it is paused."""
        return {name: gate.paused for name, gate in self.gates.items()}

    def on_catalog_change(self) -> None:
        for controller in self.controllers:
            hook = getattr(controller, "on_catalog_change", None)
            if hook is not None:
                hook()

    def debug_documents(self) -> dict[str, DebugDocument]:
        """The documents the running components serve (none on a standby)."""
        out: dict[str, DebugDocument] = {}
        for controller in self.controllers:
            docs = getattr(controller, "debug_documents", None)
            if docs is not None:
                out.update(docs())
        return out

    def get(self, name: str) -> Controller | None:
        for controller in self.controllers:
            if controller.name == name:
                return controller
        return None
