"""What the controller manager hands each component it runs (cf. kube-controller-manager's
``ControllerContext``, cmd/kube-controller-manager/app/controllermanager.go), and the
interface it drives them through (cf. k8s.io/controller-manager/controller/interfaces.go).

A controller, the kubelet simulator and the scheduler are each built from one
``ControllerContext``: the client, the clock, the shared informer factory, its own section
of the configuration (``kubegc.component.config``) and its event recorder. None of them
sees the manager that built it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Generic, Protocol, TypeVar

from kubegc.api.clock import Clock
from kubegc.api.features import FeatureGate
from kubegc.client.cache import SharedInformerFactory
from kubegc.client.events import EventRecorder
from kubegc.client.interface import Client
from kubegc.component.deletions import DeletionSink

OptionsT = TypeVar("OptionsT", covariant=True)

#: (query parameters) -> (content type, body): a ``/debug/...`` document a controller serves
DebugDocument = Callable[[dict[str, str]], tuple[str, bytes]]


@dataclass(frozen=True)
class ControllerContext(Generic[OptionsT]):
    """One component's view of the controller manager.

    ``component`` is the name its events are recorded under (upstream's
    ``EventSource.Component``, e.g. ``replicaset-controller``); ``recorder`` is made on
    first use and belongs to the component, which starts and stops it.
    """

    client: Client
    clock: Clock
    informer_factory: SharedInformerFactory
    options: OptionsT
    component: str
    #: where a deleting controller sends its ``Deletion``s when the manager keeps them in
    #: memory (the planner's simulation); None: each writes DeletionRecords through the API
    deletions: DeletionSink | None = None
    #: the feature gates at the emulated version (upstream: ``utilfeature.DefaultFeatureGate``)
    features: FeatureGate = field(default_factory=FeatureGate)

    @cached_property
    def recorder(self) -> EventRecorder:
        return self.event_recorder()

    def event_recorder(self, *, host: str = "") -> EventRecorder:
        """A new recorder for this component's events (``host``: the node they come from)."""
        return EventRecorder(self.client, component=self.component, clock=self.clock,
                             host=host)


class Controller(Protocol):
    """What the manager drives: started once its informers are registered, stopped in
    reverse order; ``is_idle`` and ``ready`` feed ``settle()`` and ``/readyz``."""

    name: str

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def is_idle(self) -> bool: ...

    def ready(self) -> bool: ...
