"""``ServiceAccountsController`` (cf. pkg/controller/serviceaccount/
serviceaccounts_controller.go): ensures the ServiceAccounts of its options exist in every
namespace whose ``status.phase`` is ``Active``.

A namespace is queued when it is added or updated (a re-list counts) and when one of its
ServiceAccounts is deleted; ``sync_namespace`` creates the missing ones. A create refused
because the namespace is terminating, or because another writer was first, is no error,
as upstream.
"""

from __future__ import annotations

from kubegc.api.errors import StatusError, is_already_exists
from kubegc.api.meta import name_of, namespace_of
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.cache import DeletedFinalStateUnknown, FuncHandler
from kubegc.component.base_controller import BaseController, tombstone_object
from kubegc.component.config import ServiceAccountControllerConfiguration
from kubegc.component.context import ControllerContext
from kubegc.controllers.controller_utils import (
    NAMESPACE_TERMINATING_CAUSE,
    has_status_cause,
    raise_aggregate,
)

NAMESPACES = GroupVersionResource("", "v1", "namespaces")
SERVICEACCOUNTS = GroupVersionResource("", "v1", "serviceaccounts")


def is_namespace_active(namespace: Obj) -> bool:
    return bool((namespace.get("status") or {}).get("phase") == "Active")


class ServiceAccountsController(BaseController):
    """Ownership: the queue holds namespace names, drained by one worker (upstream's start
    function runs one)."""

    name = "serviceaccount"
    component = "serviceaccount-controller"

    def __init__(self, ctx: ControllerContext[ServiceAccountControllerConfiguration]) -> None:
        super().__init__(ctx, workers=1)
        self.service_accounts_to_ensure = list(ctx.options.service_accounts)
        self.namespaces = self.informer_factory.for_resource(NAMESPACES)
        self.service_accounts = self.informer_factory.for_resource(SERVICEACCOUNTS)
        self.synced_informers = [self.namespaces, self.service_accounts]

    def register_handlers(self) -> None:
        self.service_accounts.add_event_handler(FuncHandler(
            delete=self.service_account_deleted))
        self.namespaces.add_event_handler(FuncHandler(
            add=lambda obj, _: self.queue.add(name_of(obj)),
            update=lambda _, new: self.queue.add(name_of(new))))

    def service_account_deleted(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        self.queue.add(namespace_of(tombstone_object(obj)))

    async def sync(self, key: str) -> float | None:
        await self.sync_namespace(key)
        return None

    async def sync_namespace(self, name: str) -> None:
        namespace = self.namespaces.indexer.get_by_key(name)
        if namespace is None or not is_namespace_active(namespace):
            return  # gone, or terminating: nothing may be created in it
        failures: list[StatusError] = []
        for sa_name in self.service_accounts_to_ensure:
            if self.service_accounts.indexer.get_by_key(f"{name}/{sa_name}") is not None:
                continue
            service_account: Obj = {"apiVersion": "v1", "kind": "ServiceAccount",
                                    "metadata": {"name": sa_name, "namespace": name}}
            try:
                await self.client.create(SERVICEACCOUNTS, service_account, namespace=name)
            except StatusError as err:
                if not is_already_exists(err) and not has_status_cause(
                        err, NAMESPACE_TERMINATING_CAUSE):
                    failures.append(err)
        raise_aggregate(failures)
