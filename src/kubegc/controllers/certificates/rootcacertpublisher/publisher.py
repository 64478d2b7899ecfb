"""``Publisher`` (cf. pkg/controller/certificates/rootcacertpublisher/publisher.go).

Every namespace gets a ConfigMap ``kube-root-ca.crt`` with ``data: {ca.crt: <root CA>}``
and the ``kubernetes.io/description`` annotation. A namespace is queued when it is added,
when it is updated while ``Active``, and when its ``kube-root-ca.crt`` is updated or
deleted; ``sync_namespace`` creates the ConfigMap, or puts back its data and annotation
(its other annotations, labels and ``binaryData`` are kept). A create refused because the
namespace is gone or terminating is no error, as upstream.

The root CA is the configuration's (``RootCACertPublisherConfiguration.root_ca``), which
the composition root fills with the CA of the API server it serves; with TLS off it is
empty and ``ca.crt`` is ``""``, as upstream publishes when its client config has no CA.
"""

from __future__ import annotations

import copy

from kubegc.api.errors import StatusError, is_not_found
from kubegc.api.meta import name_of, namespace_of
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.cache import DeletedFinalStateUnknown, FuncHandler
from kubegc.component.base_controller import BaseController, tombstone_object
from kubegc.component.config import RootCACertPublisherConfiguration
from kubegc.component.context import ControllerContext
from kubegc.controllers.controller_utils import NAMESPACE_TERMINATING_CAUSE, has_status_cause

NAMESPACES = GroupVersionResource("", "v1", "namespaces")
CONFIGMAPS = GroupVersionResource("", "v1", "configmaps")

ROOT_CA_CERT_CONFIG_MAP_NAME = "kube-root-ca.crt"
DESCRIPTION_ANNOTATION = "kubernetes.io/description"
DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal "
    "endpoints such as the internal service IP or kubernetes.default.svc. No other usage is "
    "guaranteed across distributions of Kubernetes clusters.")


class Publisher(BaseController):
    """Ownership: the queue holds namespace names, drained by one worker (upstream's start
    function runs one)."""

    name = "root-ca-cert-publisher"
    component = "root-ca-cert-publisher"

    def __init__(self, ctx: ControllerContext[RootCACertPublisherConfiguration]) -> None:
        super().__init__(ctx, workers=1)
        self.root_ca = ctx.options.root_ca
        self.namespaces = self.informer_factory.for_resource(NAMESPACES)
        # Only the ConfigMaps it publishes: upstream's shared ConfigMap informer holds
        # every ConfigMap of the cluster, and its handlers drop all but these
        # (``configMapUpdated``); a cache of them all cost ~1.9 KB per ConfigMap here
        # (issue 27). Every read is of one of them (``sync_namespace``).
        self.config_maps = self.informer_factory.for_resource(
            CONFIGMAPS, field_selector=f"metadata.name={ROOT_CA_CERT_CONFIG_MAP_NAME}")
        self.synced_informers = [self.config_maps, self.namespaces]

    def register_handlers(self) -> None:
        self.config_maps.add_event_handler(FuncHandler(
            update=lambda _, new: self.config_map_changed(new),
            delete=self.config_map_changed))
        self.namespaces.add_event_handler(FuncHandler(
            add=lambda obj, _: self.queue.add(name_of(obj)),
            update=lambda _, new: self.namespace_updated(new)))

    def config_map_changed(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        config_map = tombstone_object(obj)
        if name_of(config_map) == ROOT_CA_CERT_CONFIG_MAP_NAME:
            self.queue.add(namespace_of(config_map))

    def namespace_updated(self, namespace: Obj) -> None:
        if (namespace.get("status") or {}).get("phase") == "Active":
            self.queue.add(name_of(namespace))

    async def sync(self, key: str) -> float | None:
        await self.sync_namespace(key)
        return None

    def data(self) -> dict[str, str]:
        return {"ca.crt": self.root_ca}

    async def sync_namespace(self, namespace: str) -> None:
        current = self.config_maps.indexer.get_by_key(
            f"{namespace}/{ROOT_CA_CERT_CONFIG_MAP_NAME}")
        if current is None:
            await self._create(namespace)
            return
        annotations = (current.get("metadata") or {}).get("annotations") or {}
        if current.get("data") == self.data() and annotations.get(DESCRIPTION_ANNOTATION):
            return
        config_map = copy.deepcopy(current)  # never alter the informer's copy
        config_map["data"] = self.data()
        config_map["metadata"].setdefault("annotations", {})[DESCRIPTION_ANNOTATION] = (
            DESCRIPTION)
        await self.client.update(CONFIGMAPS, config_map, namespace=namespace)

    async def _create(self, namespace: str) -> None:
        config_map: Obj = {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": ROOT_CA_CERT_CONFIG_MAP_NAME, "namespace": namespace,
                         "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION}},
            "data": self.data()}
        try:
            await self.client.create(CONFIGMAPS, config_map, namespace=namespace)
        except StatusError as err:
            # don't retry a create if the namespace is gone or terminating (as upstream)
            if not is_not_found(err) and not has_status_cause(err, NAMESPACE_TERMINATING_CAUSE):
                raise
